/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sweep's parts: which records ended unseen, repaired at each
 * snapshot by ts_sweep (truestat.bpf.c).
 */
#ifndef TS_SWEEP_BPF_H
#define TS_SWEEP_BPF_H

#include "core.bpf.h"
#include "atomics.bpf.h"
#include "compat.bpf.h"
#include "depth.bpf.h"
#include "hists.bpf.h"
#include "records.bpf.h"

/*
 * Per device, the issue time of the oldest request seen in flight by the
 * last sweep (U64_MAX: none), so that stuck I/O shows with its age.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_MAX_DEVS);
	__type(key, u32);
	__type(value, u64);
} oldest_issue SEC(".maps");

/*
 * The sweep: run by the loader at every snapshot (BPF_PROG_TEST_RUN), never
 * attached. A tracked request whose struct request is idle again completed
 * without our completion program running (on 6.18 about 0.1-0.5% of
 * completion tracepoint calls reach no BPF program, recursion_misses 0).
 * Idle and issued over TS_SWEEP_MIN_AGE_NS ago, it is taken (held, then
 * checked again, so that a re-issue meanwhile is never taken for it),
 * leaves the depth at its estimated end (issue + recent mean service) and
 * is counted. Idle and younger, it may be inside the issue path, between
 * our program and the kernel marking it in flight: it is a suspect, left
 * for the next sweep and counted, so that the report says its depth is not
 * exact. On the way, the sweep notes each device's oldest request in flight
 * and, after the repairs, takes each device's peak depths.
 */
struct sweep_ctx {
	u64 now;
};

static __always_inline bool rq_idle(u64 rq)
{
	enum mq_rq_state state;

	if (bpf_core_read(&state, sizeof(state), &((struct request *)rq)->state))
		return false;
	return state == MQ_RQ_IDLE;
}

/*
 * Whether bio @bio of device @st (its record at @idx) is done: traced to
 * its C (BIO_TRACE_COMPLETION clear), or no longer that bio at all: its
 * device (unless it was itself sent on to a member) or its bi_end_io is
 * not the one it had at Q, or its memory is
 * gone (a synchronous direct read's bio lives on its task's stack, which
 * other calls overwrite once it ended, and which is freed with the task).
 */
static __always_inline bool bio_idle(u64 bio, struct ts_dev_state *st,
				     u32 idx)
{
	struct ts_layer_rec *m = bpf_map_lookup_elem(&layer_recs, &idx);
	struct bio *b = (struct bio *)bio;
	struct request_queue *q;
	unsigned short flags;
	void *end_io;

	if (bio_traced_bit >= 16)
		return false;
	/* unreadable: the stack it lived on was freed with its task */
	if (bpf_core_read(&flags, sizeof(flags), &b->bi_flags) ||
	    !(flags & (1U << (bio_traced_bit & 15))))
		return true;
	if (bio_queue_read(b, &q) ||
	    bpf_core_read(&end_io, sizeof(end_io), &b->bi_end_io))
		return true;
	return ((u64)q != st->queue && !(m && m->sent_on)) ||
	       (m && (u64)end_io != m->end_io);
}

/* Whether the request or bio of record @s (at @idx) is done: C maybe unseen. */
static __always_inline bool record_idle(struct ts_rq_slot *s, u32 idx,
					u64 addr)
{
	u32 qid = s->qid;
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);

	if (st && st->layer == TS_LAYER_BIO)
		return bio_idle(addr, st, idx);
	return rq_idle(addr);
}

static __always_inline void note_in_flight(struct ts_rq_slot *s)
{
	u32 qid = s->qid;
	u64 *oldest = bpf_map_lookup_elem(&oldest_issue, &qid);
	u64 issue_ns = s->issue_ns;

	if (oldest && issue_ns < *oldest)
		*oldest = issue_ns;
}

static __always_inline void note_suspect(struct ts_rq_slot *s)
{
	u32 qid = s->qid;
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);

	if (st)
		__sync_fetch_and_add(&st->suspects, 1);
}

static long sweep_slot(u32 idx, struct sweep_ctx *ctx)
{
	struct ts_rq_slot *s = bpf_map_lookup_elem(&rq_slots, &idx);
	u64 rq, issue_ns;
	bool stale;

	if (!s || !(rq = s->rq) || (rq & 1))
		return 0;
	issue_ns = s->issue_ns;
	stale = record_stale(s); /* its disk gone: ended, whatever rq is now */
	if (!stale && !record_idle(s, idx, rq)) {
		note_in_flight(s);
		return 0;
	}
	if (!stale && (s64)(ctx->now - issue_ns) < (s64)TS_SWEEP_MIN_AGE_NS) {
		note_suspect(s);
		return 0;
	}
	if (ts_cmpxchg(&s->rq, rq, rq + 1) != rq)
		return 0;
	/*
	 * Idle and old, its life ended unseen: whatever the request or bio
	 * does now is a new life, recorded in another slot (its issue found
	 * this one held) unless it refilled this one before the hold.
	 */
	if (s->issue_ns != issue_ns) {
		ts_release(&s->rq, rq + 1, rq);
		return 0;
	}
	forget_slot(idx, ctx->now);
	ts_release(&s->rq, rq + 1, 0);
	return 0;
}

static long sweep_begin(u32 qid, void *unused)
{
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);
	u64 *oldest = bpf_map_lookup_elem(&oldest_issue, &qid);

	if (oldest)
		*oldest = ~0ULL;
	if (st)
		st->suspects = 0;
	return 0;
}

/*
 * A device's depth words restamped (TS_RESTAMP_NS: no stamp grows old
 * enough to be misread), after every sweep and between sweeps. Global:
 * the verifier checks it once, not once per device of the sweep's loop.
 */
__noinline int sweep_restamp(u32 qid, u64 now)
{
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);

	if (!st || !st->queue || (st->queue & 1))
		return 0;
	depth_restamp_both(st, qid, now);
	return 0;
}

/*
 * Each device's peaks since the last sweep; the next ones start from now;
 * histograms for one claimed without them (hists_retry). Object for old
 * kernels: first the changes left in its depths (none stay left when the
 * device goes quiet).
 */
static long sweep_end(u32 qid, void *unused)
{
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);

	if (!st || !st->queue)
		return 0;
	hists_retry(st);
#ifdef TS_LOCKED_ATOMICS
	deferred_apply_slot(qid, 0);
	deferred_apply_slot(qid, 1);
#endif
	st->device_peak_taken = peak_take(&st->in_device, &st->device_peak,
					  qid);
	st->os_peak_taken = peak_take(&st->in_os, &st->os_peak, qid);
	return 0;
}

#endif
