/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a device slot (struct ts_dev_state) that a BPF program may claim
 * for another disk meanwhile: the claim sets bit 0 of the slot's queue,
 * resets the slot and publishes the new queue last (bpf/devices.bpf.h).
 * A reader takes the claim it sees once any claim under way has ended,
 * reads the slot, and reads it again if the claim changed in between, as
 * with a sequence lock: a report never leaves a traced disk out for being
 * claimed at that moment, nor mixes two claims in one row.
 */
#ifndef TS_CLAIM_H
#define TS_CLAIM_H

#include <stdbool.h>
#include <linux/types.h>

#include "truestat.h"

/* A claim of a slot: its queue (0: never claimed) and when it began. */
struct ts_claim {
	__u64 queue;
	__u64 claimed_ns;
};

/*
 * A claim of a BPF program is a few hundred instructions; one still under
 * way after this long was cut off by something else entirely.
 */
#define TS_CLAIM_WAIT_US 1000000

/*
 * The published claim of @st into @c, once one under way has ended: false
 * when none ended within @wait_us microseconds.
 */
bool ts_claim_settled(const volatile struct ts_dev_state *st,
		      struct ts_claim *c, unsigned int wait_us);

/* Whether @st still holds claim @c (read after what was read of it). */
bool ts_claim_held(const volatile struct ts_dev_state *st,
		   const struct ts_claim *c);

/*
 * A slot's counters (per-CPU figures, the access pattern) go on from one
 * disk to the next: a claim resets the slot's depth, not its counters. A
 * disk's own counts are the slot's less where they stood when it claimed
 * the slot, which the loader knows as they stood when it last read the
 * slot: exact unless the old disk did I/O after that read (a disk that
 * came and went between two reads is counted in the next one's). A disk
 * not traced counts nothing: its slot's counters are the disk's before
 * it, which keeps its start.
 */
struct ts_claim_counters {
	struct ts_dev_stats stats;
	struct ts_pattern pattern; /* its last_end is no counter */
};

struct ts_claim_base {
	__u64 claimed_ns; /* the claim the counts are of, 0: none yet */
	__u64 claims;	  /* the slot's claims at the last read */
	__u64 read_stamp; /* the last read's time, as a depth word's stamp */
	bool shared; /* the counts of this claim may hold another disk's */
	struct ts_claim_counters start; /* the slot's counters at its claim */
	struct ts_claim_counters last;	/* at the last read */
};

/*
 * Whether the counts of claim @claimed_ns may hold another disk's (into
 * @b->shared, until the next claim): a disk that came and went between
 * two reads (@claims, the slot's claims so far, two or more past the last
 * read's), or the disk before it changing its depth after its last read
 * (@prev_stamp, bpf/devices.bpf.h, after @b->read_stamp; a restamp with
 * no event, once a minute without a read, counts as a change). Called at
 * each read before ts_claim_counts; @now_stamp: this read's time.
 */
void ts_claim_shared(struct ts_claim_base *b, __u64 claimed_ns, __u64 claims,
		     __u64 prev_stamp, __u64 now_stamp);

/*
 * A slot's counters @c, read now under claim @claimed_ns (of a disk
 * @traced or not), become that disk's own; @b follows the slot's claims.
 */
void ts_claim_counts(struct ts_claim_base *b, __u64 claimed_ns, bool traced,
		     struct ts_claim_counters *c);

#endif
