/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every part of truestat's programs uses: the kernel's types, the
 * contract with userspace (include/truestat.h), one hop of a pointer chain
 * (LOAD), a device's entry and its per-CPU figures, and the counters of
 * events. Each header includes it first.
 */
#ifndef TS_CORE_BPF_H
#define TS_CORE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "truestat.h"

/* struct bvec_iter is packed; the reads of its fields are of whole fields */
#pragma clang diagnostic ignored "-Waddress-of-packed-member"

/*
 * --light: the block_bio_* programs are not attached; Q is the request's
 * allocation time (rq->start_time_ns), so waits for a tag before the
 * request existed are not in the queue time, and the OS queue is not seen.
 */
const volatile bool light = false;

/*
 * TRUESTAT_TEST_CLOCK_WRAP: added to the clock of the depth words and level
 * registers, so that their 44-bit stamps wrap seconds into a test instead
 * of every 4.9 hours. 0 outside tests.
 */
const volatile __u64 test_clock_offset = 0;

#define REQ_OP_BITS_ 8
#define REQ_OP_MASK_ ((1U << REQ_OP_BITS_) - 1)

/*
 * A device's entry, by slot (include/truestat.h): its claim, its depth words
 * and level registers, written by every CPU; the loader reads it mapped.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TS_MAX_DEVS);
	__type(key, u32);
	__type(value, struct ts_dev_state);
} dev_state SEC(".maps");

/* A device's figures and event counters, by slot, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TS_MAX_DEVS);
	__type(key, u32);
	__type(value, struct ts_dev_stats);
} dev_stats SEC(".maps");

/* One hop of a pointer chain: a direct load in tp_btf, a probe read else. */
#define LOAD(direct, dst, src)                                         \
	do {                                                           \
		if (direct)                                            \
			(dst) = (src);                                 \
		else                                                   \
			bpf_core_read(&(dst), sizeof(dst), &(src));    \
	} while (0)

/* The direction of a request (enum ts_op) from its cmd_flags. */
static __always_inline u8 op_of(u32 cmd_flags)
{
	switch (cmd_flags & REQ_OP_MASK_) {
	case REQ_OP_READ:
		return TS_OP_READ;
	case REQ_OP_WRITE:
		return TS_OP_WRITE;
	case REQ_OP_DISCARD:
		return TS_OP_DISCARD;
	case REQ_OP_FLUSH:
		return TS_OP_FLUSH;
	}
	return TS_OP_OTHER;
}

/*
 * Counters that more than one program updates (an issue interrupted by a
 * completion on the same CPU, the sweep) are added to atomically, per-CPU
 * or not: a read-modify-write interrupted there would lose an update.
 */
static __always_inline void count_events(u32 qid, enum ts_event ev, u64 n)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);

	if (ds)
		__sync_fetch_and_add(&ds->events[ev], n);
}

static __always_inline void count_event(u32 qid, enum ts_event ev)
{
	count_events(qid, ev, 1);
}

/*
 * A request that completed untimed, by direction: its completion was never
 * seen (TS_EV_MISSED_C), or the request table had no slot for it.
 */
static __always_inline void count_missed(u32 qid, enum ts_event ev, u8 op,
					 u32 bytes)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);
	u64 i = op;

	if (!ds)
		return;
	__sync_fetch_and_add(&ds->events[ev], 1);
	barrier_var(i); /* see hist_count, bpf/hists.bpf.h */
	if (i >= TS_NR_OPS)
		return;
	__sync_fetch_and_add(&ds->op[i].missed, 1);
	__sync_fetch_and_add(&ds->op[i].missed_bytes, bytes);
}

/* Direction @op's figures in @ds, or NULL (no @ds, or no such op). */
static __always_inline struct ts_op_stats *op_stats(struct ts_dev_stats *ds,
						    u8 op)
{
	u64 i = op;

	/* one register checked and used: see hist_count, bpf/hists.bpf.h */
	barrier_var(i);
	if (!ds || i >= TS_NR_OPS)
		return NULL;
	return &ds->op[i];
}

/*
 * A bio or request of direction @op merged into a waiting request of
 * device @qid: one atomic add, at the merge tracepoints only.
 */
static __always_inline void count_merge(u32 qid, u8 op)
{
	struct ts_op_stats *os = op_stats(bpf_map_lookup_elem(&dev_stats, &qid),
					  op);

	if (os)
		__sync_fetch_and_add(&os->merges, 1);
}

#endif
