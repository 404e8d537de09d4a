/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bios waiting in the OS queue (Q to issue): the bio table, a bio's
 * entry and departure, and a request's queue time from its bios.
 */
#ifndef TS_BIOS_BPF_H
#define TS_BIOS_BPF_H

#include "core.bpf.h"
#include "atomics.bpf.h"
#include "depth.bpf.h"
#include "slow.bpf.h"

/* Slots of the bio table in use, minus one (the loader sizes it). */
const volatile __u32 bio_mask = TS_BIO_SLOTS - 1;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_BIO_SLOTS);
	__type(key, u32);
	__type(value, struct ts_bio_slot);
} bio_slots SEC(".maps");

/* Bio table: the record of @bio, or (claim) a free slot for it (in *@at). */
static __always_inline struct ts_bio_slot *bio_slot(u64 bio, bool claim,
						    u32 *at)
{
	struct ts_bio_slot *s;
	u32 h = ts_ptr_hash(addr_lo(bio), TS_BIO_BITS_MAX), idx;
	int i;

	for (i = 0; i < TS_BIO_PROBES; i++) {
		idx = (h ^ i) & bio_mask & (TS_BIO_SLOTS_MAX - 1);
		s = bpf_map_lookup_elem(&bio_slots, &idx);
		if (s && s->bio == bio) {
			*at = idx;
			return s;
		}
	}
	if (!claim)
		return NULL;
	for (i = 0; i < TS_BIO_PROBES; i++) {
		idx = (h ^ i) & bio_mask & (TS_BIO_SLOTS_MAX - 1);
		s = bpf_map_lookup_elem(&bio_slots, &idx);
		if (s && !s->bio &&
		    ts_cmpxchg(&s->bio, 0, bio) == 0) {
			*at = idx;
			return s;
		}
	}
	return NULL;
}

/*
 * The bio of slot @s leaves the OS queue of the device it was counted in,
 * which need not be the device at hand when its departure went unseen and
 * its address came back on another device. @ev, if any, is counted there.
 */
static __always_inline void os_leave(struct ts_bio_slot *s, int ev, u64 now)
{
	u32 qid = s->qid;
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);

	if (ev >= 0)
		count_event(qid, ev);
	if (st)
		os_down(st, qid, now);
}

/*
 * @bio enters the OS queue of @st with Q time @queued_ns, submitted by
 * @who (NULL: the current task).
 */
static __always_inline void bio_enter(struct ts_dev_state *st, u32 qid,
				      u64 bio, u64 queued_ns, u64 now,
				      const struct ts_submitter *who)
{
	u32 at = 0;
	struct ts_bio_slot *s = bio_slot(bio, true, &at);

	if (!s) {
		count_event(qid, TS_EV_BIO_FULL);
		return;
	}
	if (s->queued_ns) /* same address Q'd again: the old bio left unseen */
		os_leave(s, TS_EV_STALE_BIO, now);
	s->queued_ns = queued_ns;
	s->qid = qid;
	bio_who_set(at, who);
	os_up(st, qid, now);
}

/*
 * @bio leaves the OS queue of device @qid: its Q time, or 0 when it was not
 * recorded there (a record from another device is a bio that left unseen).
 */
static __always_inline u64 bio_leave(u32 qid, u64 bio, u64 now,
				     struct ts_submitter *who)
{
	u32 at = 0;
	struct ts_bio_slot *s = bio_slot(bio, false, &at);
	u64 queued_ns;

	if (!s)
		return 0;
	queued_ns = s->qid == qid ? s->queued_ns : 0;
	if (queued_ns)
		bio_who_take(at, who);
	os_leave(s, queued_ns ? -1 : TS_EV_STALE_BIO, now);
	s->queued_ns = 0;
	s->bio = 0;
	return queued_ns;
}

/*
 * The bios of a request being issued, from @bio (its first), leave the OS
 * queue; returns the earliest Q among them. Stops at the first recorded
 * one, unless @all: a front merge puts the new bio first, and its record
 * left at the merge, so the request's own Q is behind it; a discard merge
 * has no event at all, so a discard's bios all leave here. The submitter,
 * if @who, is that of the first bio with a Q.
 */
#define TS_BIO_WALK 8

static __always_inline u64 bios_leave(u32 qid, struct bio *bio, bool all,
				      bool direct, u64 now,
				      struct ts_submitter *who)
{
	u64 queued_ns = 0, q;
	u64 i; /* 64 bits: a 32-bit spill lost its value before 5.16's verifier */

	for (i = 0; i < TS_BIO_WALK && bio; i++) {
		q = bio_leave(qid, (u64)bio, now, queued_ns ? NULL : who);
		if (q && (!queued_ns || q < queued_ns))
			queued_ns = q;
		if (queued_ns && !all)
			break;
		LOAD(direct, bio, bio->bi_next);
	}
	return queued_ns;
}

/*
 * bios_leave after the first bio, from @first (read as a number), without
 * the submitter: verified once, as a function of its own. Inside the issue
 * program the walk multiplied the states the verifier checks (half a
 * second of every start); the first bio, mostly the only one to leave,
 * stays there.
 */
__noinline u64 bios_leave_rest(u32 qid, u64 first, u32 all, u64 now,
			       u64 queued_ns)
{
	u64 bio = 0, q;
	u64 i; /* 64 bits: a 32-bit spill lost its value before 5.16's verifier */

	bpf_core_read(&bio, sizeof(bio), &((struct bio *)first)->bi_next);
	for (i = 1; i < TS_BIO_WALK && bio; i++) {
		q = bio_leave(qid, bio, now, NULL);
		if (q && (!queued_ns || q < queued_ns))
			queued_ns = q;
		if (queued_ns && !all)
			break;
		bpf_core_read(&bio, sizeof(bio), &((struct bio *)bio)->bi_next);
	}
	return queued_ns;
}

/*
 * bios_leave, the walk past the first bio in bios_leave_rest; inline where
 * the submitter is wanted (it carries it out), and in the object for
 * kernels before 5.12, whose depth changes nest three calls deep already:
 * a frame more passes the 512 bytes of stack a chain of calls may use
 * there (544 in ts_issue_raw on 5.10).
 */
#ifdef TS_LOCKED_ATOMICS
#define bios_walk_inline true
#else
#define bios_walk_inline keep_who
#endif

static __always_inline u64 bios_leave_untold(u32 qid, struct bio *bio,
					     bool all, bool direct, u64 now)
{
	u64 queued_ns = bio_leave(qid, (u64)bio, now, NULL);

	if (queued_ns && !all)
		return queued_ns;
	return bios_leave_rest(qid, direct ? ptr_value(bio) : (u64)bio, all,
			       now, queued_ns);
}

/*
 * --light: the kernel's own Q, when the request was allocated (after its
 * tag). 0 when the kernel did not stamp it (no I/O accounting, no
 * scheduler), or when it is not a time before @now.
 */
static __always_inline u64 queued_at_alloc(struct request *rq, bool direct,
					   u64 now)
{
	u64 start_ns = 0;

	LOAD(direct, start_ns, rq->start_time_ns);
	return start_ns <= now ? start_ns : 0;
}

/* Q of a request being issued; its bios leave the OS queue. */
static __always_inline u64 request_queued_ns(struct request *rq,
					     struct bio *bio, u32 qid, u8 op,
					     bool direct, u64 now,
					     struct ts_submitter *who)
{
	u64 queued_ns;

	if (light)
		queued_ns = queued_at_alloc(rq, direct, now);
	else if (!bio) /* flush commands carry no bio: they never had a Q */
		return 0;
	else
		queued_ns = bios_walk_inline ?
			bios_leave(qid, bio, op == TS_OP_DISCARD, direct, now,
				   who) :
			bios_leave_untold(qid, bio, op == TS_OP_DISCARD,
					  direct, now);
	if (!queued_ns)
		count_event(qid, TS_EV_NO_QUEUE_TIME);
	return queued_ns;
}

#endif
