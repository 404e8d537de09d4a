/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a completion adds: a request's figures and histograms, or what a
 * completion without a record was (unissued, a flush, missed, in flight
 * before tracing began).
 */
#ifndef TS_ACCOUNT_BPF_H
#define TS_ACCOUNT_BPF_H

#include "core.bpf.h"
#include "atomics.bpf.h"
#include "compat.bpf.h"
#include "hists.bpf.h"
#include "devices.bpf.h"
#include "bios.bpf.h"

/*
 * When the issue program was attached (the loader stamps it, on
 * bpf_ktime_get_ns' clock; never until then): a request allocated before
 * it was in flight when tracing began, or issued while it attached, so its
 * issue went unseen, and it was never counted in the depth.
 */
__u64 issue_traced_ns = ~0ULL;

/*
 * TRUESTAT_TEST_MISS_EVERY: the completion program ignores one completion
 * of a traced disk in this many, as if the platform had dropped it, so that
 * tests prove the repair path in every run. 0 (always, outside tests): the
 * verifier removes the branch.
 */
const volatile __u32 test_miss_every = 0;

/* TRUESTAT_TEST_MISS_DEV: only this disk's (major << 20 | minor); 0: all */
const volatile __u32 test_miss_dev = 0;

__u64 test_miss_tick;

/* A request completed straight from the OS queue: counted by direction. */
static __always_inline void count_unissued(struct request *rq, u32 qid,
					   bool direct)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);
	u32 cmd_flags;
	u64 op;

	if (!ds)
		return;
	__sync_fetch_and_add(&ds->events[TS_EV_UNISSUED], 1);
	LOAD(direct, cmd_flags, rq->cmd_flags);
	op = op_of(cmd_flags);
	barrier_var(op); /* see hist_count */
	if (op < TS_NR_OPS)
		__sync_fetch_and_add(&ds->op[op].unissued, 1);
}

/*
 * A request allocated after the issue program was attached and before
 * device @st's claim was done had its issue dropped (another CPU held the
 * entry): its first event found the claim under way, or raced the CPU that
 * made it, so it may even be older than the claim. One allocated before
 * was in flight when tracing began or issued while it attached; one
 * allocated after the claim was seen at its issue (or counted there, the
 * table full).
 */
static __always_inline bool issued_while_traced(struct request *rq,
						const struct ts_dev_state *st,
						bool claiming, bool direct)
{
	u64 alloc_ns, done = st->claim_done_ns;

	LOAD(direct, alloc_ns, rq->start_time_ns);
	/* still being claimed: its stamps may be an older claim's, or none
	 * yet (the claiming CPU can be held up between any two of its steps) */
	if (claiming || done < st->claimed_ns)
		done = ~0ULL;
	return alloc_ns && alloc_ns >= issue_traced_ns && alloc_ns <= done;
}

/* A request of a device being claimed elsewhere, missed: counted so. */
static __always_inline void count_issue_unseen(struct request *rq, u32 qid,
					       u32 data_len, bool direct)
{
	u32 cmd_flags;

	LOAD(direct, cmd_flags, rq->cmd_flags);
	count_missed(qid, TS_EV_ISSUE_UNSEEN, op_of(cmd_flags), data_len);
}

/*
 * The completion of @rq ran while another CPU still claimed its device
 * (device_of gave up waiting): dropped, but a request issued while traced
 * is counted missed, so that the counts stay whole, and one in flight when
 * tracing began is counted unmatched. Its issue was dropped too, also when
 * the claim is done by now: the issue came before the completion began, so
 * before the claim was done.
 */
static __always_inline void complete_while_claimed(struct request_queue *q,
						   struct request *rq,
						   u32 nr_bytes, bool direct)
{
	struct ts_dev_state *st;
	u32 qid, data_len;
	bool claiming;

	if (!q)
		return;
	st = state_of(q, direct, &qid);
	if (!st)
		return;
	claiming = st->queue == (u64)q + 1;
	if (!claiming && (st->queue != (u64)q || st->mode != TS_DEV_TRACED))
		return;
	LOAD(direct, data_len, rq->__data_len);
	if (!data_len || nr_bytes < data_len)
		return;
	if (issued_while_traced(rq, st, claiming, direct))
		count_issue_unseen(rq, qid, data_len, direct);
	else /* in flight when tracing began, as in complete_unknown */
		count_event(qid, TS_EV_UNMATCHED);
}

/* A completion with no record of its request: what it was, counted. */
static __always_inline void complete_unknown(struct ts_dev_state *st,
					     struct request *rq, u32 qid,
					     u32 data_len, bool direct, u64 now)
{
	struct bio *bio;

	LOAD(direct, bio, rq->bio);
	if (bio && !light && bio_leave(qid, (u64)bio, now, NULL))
		count_unissued(rq, qid, direct);
	else if (!data_len)
		count_event(qid, TS_EV_FLUSH_SEQ);
	else if (issued_while_traced(rq, st, false, direct))
		count_issue_unseen(rq, qid, data_len, direct);
	else
		count_event(qid, TS_EV_UNMATCHED);
}

/*
 * Whether record @s is of an earlier life of @rq, completing now without
 * having been issued since (an empty preflush write, ended by the flush
 * machinery): the record's own completion went unseen. The request was
 * allocated after the record's issue, or it ends with no data where the
 * record had some.
 */
static __always_inline bool record_is_older(struct ts_rq_slot *s,
					    struct request *rq, u32 data_len,
					    bool direct)
{
	u64 alloc_ns = 0;

	LOAD(direct, alloc_ns, rq->start_time_ns);
	return alloc_ns > s->issue_ns || (!data_len && s->bytes);
}

/* TRUESTAT_TEST_MISS_EVERY: true for the completions of @st to drop. */
static __always_inline bool test_drop(const struct ts_dev_state *st)
{
	if (!test_miss_every || (test_miss_dev && st->dev != test_miss_dev))
		return false;
	return ts_fetch_add(&test_miss_tick, 1) % test_miss_every == 0;
}

/* What completions added while another one's adds were under way. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_MAX_DEVS);
	__type(key, u32);
	__type(value, struct ts_nested_stats);
} nested_stats SEC(".maps");

static __always_inline void op_add_plain(struct ts_op_stats *os,
					 const struct ts_op_stats *v)
{
	os->ios += v->ios;
	os->bytes += v->bytes;
	os->service_ns += v->service_ns;
	os->queued_ios += v->queued_ios;
	os->queue_ns += v->queue_ns;
	os->total_ns += v->total_ns;
	os->layer_ios += v->layer_ios;
	os->layer_ns += v->layer_ns;
}

/*
 * One add to a shared counter, skipped when 0: LLVM makes an atomic add of
 * 0 an atomic OR, which kernels before 5.12 reject ("BPF_STX uses reserved
 * fields": only the add was there).
 */
#define SHARED_ADD(os, v, field)                                   \
	do {                                                       \
		if ((v)->field)                                    \
			__sync_fetch_and_add(&(os)->field, (v)->field); \
	} while (0)

static __always_inline void op_add_shared(u32 qid, u8 op,
					  const struct ts_op_stats *v)
{
	struct ts_nested_stats *n = bpf_map_lookup_elem(&nested_stats, &qid);
	u64 i = op;
	struct ts_op_stats *os;

	barrier_var(i); /* see op_stats */
	if (!n || i >= TS_NR_OPS)
		return;
	os = &n->op[i];
	SHARED_ADD(os, v, ios);
	SHARED_ADD(os, v, bytes);
	SHARED_ADD(os, v, service_ns);
	SHARED_ADD(os, v, queued_ios);
	SHARED_ADD(os, v, queue_ns);
	SHARED_ADD(os, v, total_ns);
	SHARED_ADD(os, v, layer_ios);
	SHARED_ADD(os, v, layer_ns);
}

/*
 * Adds @v to device @qid's figures of direction @op (@ds: this CPU's).
 * Plain adds are a load, an add and a store: a completion that runs on
 * this CPU between the two (a member's request ending a stacked bio from
 * an interrupt while the stacked device's own C is counted; before 6.1,
 * this program nested in itself) would have its adds overwritten. So the
 * adds mark @ds busy, and one that finds it busy adds to the shared
 * nested_stats atomically. On one CPU a nested program runs to its end
 * before the one it interrupted goes on: the mark needs no atomics.
 */
static __always_inline void op_add(struct ts_dev_stats *ds, u32 qid, u8 op,
				   const struct ts_op_stats *v)
{
	struct ts_op_stats *os = op_stats(ds, op);

	if (!os)
		return;
	if (ds->adding) {
		op_add_shared(qid, op, v);
		return;
	}
	ds->adding = 1;
	barrier();
	op_add_plain(os, v);
	barrier();
	ds->adding = 0;
}

/* A request's figures for one completion (its record already ended). */
static __always_inline void request_account(struct ts_dev_state *st, u32 qid,
					    const struct ts_rq_slot *rec,
					    u64 now)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);
	u64 issue_ns = rec->issue_ns, queued_ns = rec->queued_ns;
	struct ts_op_stats v = {
		.ios = 1,
		.bytes = rec->bytes,
		.service_ns = now - issue_ns,
	};
	u8 op = rec->op;

	if (!ds)
		return;
	if (queued_ns) {
		v.queued_ios = 1;
		v.queue_ns = issue_ns - queued_ns;
		v.total_ns = now - queued_ns;
	}
	op_add(ds, qid, op, &v);
	if (!hist_add(st->hist_slot, op, issue_ns, queued_ns, now, rec->bytes))
		count_event(qid, TS_EV_NO_HIST);
	else
		depth_hist_add(st->hist_slot, op, rec->depth_class,
			       now - issue_ns);
	if (pattern && op < TS_PATTERN_OPS)
		pattern_service(st->hist_slot, op, rec->bytes, now - issue_ns);
}

#endif
