// SPDX-License-Identifier: GPL-2.0
/*
 * truestat: queue time (Q->D), service time (D->C) and time-weighted depth
 * per disk and direction. Each handler exists twice: tp_btf (direct loads)
 * and raw_tp (bpf_probe_read_kernel), chosen by the loader.
 */
#include "core.bpf.h"
#include "atomics.bpf.h"
#include "compat.bpf.h"
#include "devices.bpf.h"
#include "depth.bpf.h"
#include "slow.bpf.h"
#include "pattern.bpf.h"
#include "filter.bpf.h"
#include "partitions.bpf.h"
#include "bios.bpf.h"
#include "records.bpf.h"
#include "account.bpf.h"
#include "layer.bpf.h"
#include "sweep.bpf.h"
#include "durable.bpf.h"
#include "flags.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Makes the verifier reject ts_sweep: tests the load-failure path only. */
const volatile bool test_verifier_failure = false;

/*
 * bench/overhead.sh: every handler returns at once, so that bpf_stats shows
 * what an empty program costs here (the floor of its measurement); with
 * bench_clock, after one clock read (what a tracer that reads the clock at
 * each event pays at least). Frozen in .rodata: when false, the verifier
 * removes the branch.
 */
const volatile bool bench_empty = false;
const volatile bool bench_clock = false;

static __always_inline int bench_return(void)
{
	return bench_clock && bpf_ktime_get_ns() == 0;
}

static __always_inline int on_issue(struct request *rq, bool direct)
{
	struct request_queue *q;
	struct ts_dev_state *st;
	struct ts_rq_slot *s;
	struct bio *bio;
	struct ts_submitter who = {};
	u32 qid, cmd_flags, bytes, at = 0;
	u64 now, queued_ns, sector = 0;
	s64 depth;
	u8 op;

	LOAD(direct, q, rq->q);
	st = device_of(q, rq, NULL, direct, &qid, light);
	if (!st)
		return 0;
	now = bpf_ktime_get_ns();
	LOAD(direct, cmd_flags, rq->cmd_flags);
	LOAD(direct, bytes, rq->__data_len);
	LOAD(direct, bio, rq->bio);
	op = op_of(cmd_flags);
	if (pattern) {
		LOAD(direct, sector, rq->__sector);
		pattern_count(qid, op, sector, bytes);
	}
	s = record_open((u64)rq, now, &at);
	queued_ns = request_queued_ns(rq, bio, qid, op, direct, now, &who);
	if (!s) { /* not tracked: counted untimed, its bios left */
		count_missed(qid, TS_EV_RQ_FULL, op, bytes);
		return 0;
	}
	depth = record_fill(st, qid, s, queued_ns, bytes, op, now);
	if (partitions)
		s->part = part_of_rq(rq, direct);
	if (keep_who) {
		LOAD(direct, sector, rq->__sector);
		rq_extra_set(at, &who, sector, depth);
	}
	record_publish(s, (u64)rq);
	return 0;
}

/*
 * @bio, on its way to a member device, came from sector @from of stacked
 * device @dev (block_bio_remap; a partition's own remap, where the bio is
 * still on the device it names, is not a stack). The stacked bio that
 * starts there is linked to it when it is its first member bio and of its
 * size; any other makes it fanned out. A stacked device that sends the
 * bio itself on (md before 5.14, or with its I/O statistics off), not a
 * clone, leaves no Q on the member (the kernel traces a bio's Q once): the
 * remap is its Q there.
 */
static __always_inline int on_bio_remap(struct bio *bio, u32 dev, u64 from,
					bool direct)
{
	struct ts_layer_key key = { .dev = dev, .sector = from };
	u8 one = 1;
	struct ts_dev_state *member;
	struct ts_rq_slot *s;
	struct ts_layer_rec *m;
	u64 *upper, addr, member_key;
	u32 bd_dev, bytes, qid;

	bd_dev = bio_devt(bio, direct);
	if (!bd_dev || bd_dev == dev)
		return 0;
	upper = bpf_map_lookup_elem(&layer_index, &key);
	if (!upper) {
		if (!bpf_map_lookup_elem(&stacked, &dev))
			bpf_map_update_elem(&stacked, &dev, &one, BPF_ANY);
		return 0;
	}
	addr = *upper;
	m = member_entry(addr, &s);
	if (!m || !s)
		return 0;
	LOAD(direct, bytes, bio->bi_iter.bi_size);
	if (ts_fetch_add(&m->links, 1) || bytes != s->bytes) {
		m->links = 2;
		return 0;
	}
	m->sub_start_ns = bpf_ktime_get_ns();
	member_key = ptr_value(bio);
	bpf_map_update_elem(&member_links, &member_key, &addr, BPF_ANY);
	member = device_of(bio_queue(bio, direct), NULL, bio, direct, &qid,
			   false);
	if (!member)
		return 0;
	if (!member->has_uppers)
		member->has_uppers = 1;
	if (addr != member_key)
		return 0;
	m->sent_on = 1;
	if (member->layer == TS_LAYER_REQUEST)
		bio_enter(member, qid, member_key, m->sub_start_ns,
			  m->sub_start_ns, NULL);
	return 0;
}

static __always_inline int on_complete(struct request *rq, int error,
				       u32 nr_bytes, bool direct)
{
	struct request_queue *q;
	struct ts_dev_state *st;
	struct ts_rq_extra x = {};
	struct ts_rq_slot *s, rec;
	u32 qid, data_len, at;
	u64 now;

	LOAD(direct, q, rq->q);
	st = device_of(q, rq, NULL, direct, &qid, false);
	if (!st) {
		complete_while_claimed(q, rq, nr_bytes, direct);
		return 0;
	}
	LOAD(direct, data_len, rq->__data_len);
	if (nr_bytes < data_len) {
		count_event(qid, TS_EV_PARTIAL);
		return 0;
	}
	if (error)
		count_event(qid, TS_EV_IO_ERROR);
	now = bpf_ktime_get_ns();
	durable_request_done(rq, direct, now);
	s = rq_find((u64)rq, &at);
	/* another queue's record of this request (a tag set shared between
	 * queues), or an earlier life's: that one's completion went unseen */
	if (s && (s->qid != qid || record_is_older(s, rq, data_len, direct))) {
		forget_held(s, at, (u64)rq, now);
		s = NULL;
	}
	if (!s) {
		complete_unknown(st, rq, qid, data_len, direct, now);
		return 0;
	}
	if (test_drop(st))
		return 0;
	rq_extra_get(at, &x);
	s = record_end((u64)rq, s, at, &rec, NULL);
	if (!s) { /* the sweep ended it meanwhile */
		count_event(qid, TS_EV_UNMATCHED);
		return 0;
	}
	device_down(st, qid, now);
	if (rec.op == TS_OP_FLUSH)
		flush_clock_move(qid, -1, now);
	/* while the record is held: its rq_extra is still its own */
	if (!filtering || (x.who.flags & TS_WHO_MATCH))
		who_account(qid, at, &rec, now);
	record_free(s);
	if (st->has_uppers)
		members_done(rq, direct, now);
	if (filtering && !(x.who.flags & TS_WHO_MATCH)) {
		count_event(qid, TS_EV_FILTER_OTHER);
		return 0;
	}
	request_account(st, qid, &rec, now);
	flags_complete(st, qid, rq, &rec, direct, now);
	slow_report(st, qid, &rec, &x, now);
	part_done(qid, &rec, now);
	return 0;
}

/* The driver gave @rq back: it leaves the device and waits in the OS again. */
static __always_inline int on_requeue(struct request *rq, bool direct)
{
	struct request_queue *q;
	struct ts_dev_state *st;
	struct ts_rq_extra x = {};
	struct ts_rq_slot *s;
	struct bio *bio;
	u64 now, queued_ns;
	u32 qid, at;

	LOAD(direct, q, rq->q);
	st = device_of(q, rq, NULL, direct, &qid, false);
	if (!st)
		return 0;
	s = rq_find((u64)rq, &at);
	if (!s)
		return 0; /* not issued while we traced: still in the OS */
	queued_ns = s->queued_ns;
	rq_extra_get(at, &x);
	if (!rq_take(s, (u64)rq, (u64)rq + 1))
		return 0;
	now = bpf_ktime_get_ns();
	count_event(qid, TS_EV_REQUEUE);
	device_down(st, qid, now);
	if (s->op == TS_OP_FLUSH)
		flush_clock_move(qid, -1, now);
	record_free(s);
	if (light) /* its start_time_ns stays: Q goes on from there */
		return 0;
	LOAD(direct, bio, rq->bio);
	if (bio && queued_ns)
		bio_enter(st, qid, (u64)bio, queued_ns, now, &x.who);
	return 0;
}

static __always_inline int on_bio_queue(struct bio *bio, bool direct)
{
	struct ts_submitter who = {};
	struct ts_dev_state *st;
	u32 qid;
	u64 now;

	st = device_of(bio_queue(bio, direct), NULL, bio, direct, &qid, true);
	if (!st)
		return 0;
	if (filtering) {
		who_now(&who);
		if (filter_match(bio)) {
			who.flags = TS_WHO_MATCH;
			filter_count_bio(qid, bio, true);
		}
	}
	now = bpf_ktime_get_ns();
	if (!filtering || who.flags) /* the sync row: the submitter's too */
		durable_enter(qid, bio, direct, now);
	if (st->layer == TS_LAYER_BIO)
		layer_enter(st, qid, bio, direct, now);
	else
		bio_enter(st, qid, (u64)bio, now, now,
			  filtering ? &who : NULL);
	return 0;
}

/*
 * C of a bio: at a bio layer, its end there; on a request queue, a bio
 * that ended without an issued request carrying it (the others' ends are
 * traced as their requests' completion), which leaves the OS queue.
 */
static __always_inline int on_bio_complete(struct bio *bio, bool direct)
{
	struct ts_dev_state *st;
	u8 status;
	u32 qid;
	u64 now;

	st = device_of(bio_queue(bio, direct), NULL, bio, direct, &qid, false);
	if (!st)
		return 0;
	now = bpf_ktime_get_ns();
	durable_complete(bio, direct, now);
	if (st->layer == TS_LAYER_BIO) {
		LOAD(direct, status, bio->bi_status);
		if (status)
			count_event(qid, TS_EV_IO_ERROR);
		layer_complete(st, qid, (u64)bio, now, false);
	} else
		bio_leave(qid, (u64)bio, now, NULL);
	return 0;
}

/*
 * A bio merged into a waiting request leaves with that request, and counts
 * as a merge of its direction (the kernel counts it in /proc/diskstats
 * right after this tracepoint).
 */
static __always_inline int on_bio_merge(struct bio *bio,
					struct request *rq, bool direct)
{
	struct ts_dev_state *st;
	u32 qid, opf;

	st = device_of(bio_queue(bio, direct), NULL, bio, direct, &qid, false);
	if (!st)
		return 0;
	LOAD(direct, opf, bio->bi_opf);
	count_merge(qid, op_of(opf));
	part_merge(qid, op_of(opf), rq, bio, direct);
	bio_leave(qid, (u64)bio, bpf_ktime_get_ns(), NULL);
	return 0;
}

/*
 * The scheduler merged request @next into another one: its bios go with
 * that request, which is issued with its own first bio's Q; @next's first
 * recorded bio leaves the OS queue here, as a merged bio does. A merge of
 * @next's direction.
 */
static __always_inline int on_rq_merge(struct request *next, bool direct)
{
	struct request_queue *q;
	struct ts_dev_state *st;
	struct bio *bio;
	u32 qid, cmd_flags;

	LOAD(direct, q, next->q);
	st = device_of(q, next, NULL, direct, &qid, false);
	if (!st)
		return 0;
	LOAD(direct, cmd_flags, next->cmd_flags);
	count_merge(qid, op_of(cmd_flags));
	part_merge(qid, op_of(cmd_flags), next, NULL, direct);
	LOAD(direct, bio, next->bio);
	if (bio)
		bios_leave(qid, bio, false, direct, bpf_ktime_get_ns(), NULL);
	return 0;
}

/* A split's front part is a new bio that inherits its parent's Q time. */
static __always_inline int on_bio_split(struct bio *split, bool direct)
{
	struct ts_bio_slot *parent_slot;
	struct ts_submitter who = {};
	struct ts_dev_state *st;
	void *parent;
	u64 now, queued_ns;
	u32 qid, at = 0;

	st = device_of(bio_queue(split, direct), NULL, split, direct, &qid,
		       false);
	if (!st)
		return 0;
	/* io.stat counts the remainder's submission */
	if (filtering && filter_match(split))
		filter_count_bio(qid, split, false);
	if (st->layer == TS_LAYER_BIO) /* one Q and C for all parts */
		return 0;
	LOAD(direct, parent, split->bi_private);
	parent_slot = bio_slot((u64)parent, false, &at);
	if (!parent_slot)
		return 0;
	queued_ns = parent_slot->queued_ns;
	bio_who_take(at, &who);
	now = bpf_ktime_get_ns();
	if (queued_ns)
		bio_enter(st, qid, (u64)split, queued_ns, now, &who);
	return 0;
}

/*
 * Written by the loader: the request slots holding a record for
 * TS_SWEEP_SLOTS (it reads the table's memory), the durable bios' keys for
 * TS_SWEEP_DURABLE.
 */
__u64 sweep_keys[TS_SWEEP_KEYS];

/* One slot's sweep: global, so verified once, not once per loop turn. */
__noinline int ts_sweep_slot(u32 idx, u64 now)
{
	struct sweep_ctx sweep = { .now = now };

	return sweep_slot(idx, &sweep);
}

/* One durable bio's sweep (sweep_keys[@i]). */
__noinline int ts_sweep_durable(u32 i, u64 now)
{
	struct ts_durable *d;
	u64 key;

	if (i >= TS_SWEEP_KEYS)
		return 0;
	key = sweep_keys[i];
	d = bpf_map_lookup_elem(&durable_bios, &key);
	if (d)
		durable_sweep_one(NULL, &key, d, &now);
	return 0;
}

/* How long the last part of the sweep ran (-v, bench/overhead.sh). */
__u64 sweep_part_ns;

/*
 * One part of the sweep (enum ts_sweep_part in @ctx's first argument, the
 * number of slots or keys in sweep_keys in the second), run by the loader:
 * bounded loops, which every kernel since 5.3 verifies.
 */

SEC("raw_tp")
int ts_sweep(u64 *ctx)
{
	u32 part = ctx[0], n = ctx[1], i;
	u64 now = bpf_ktime_get_ns();

	if (test_verifier_failure)
		return *(volatile int *)now; /* not a pointer: rejected */
	if (part == TS_SWEEP_BEGIN || part == TS_SWEEP_END) {
		for (i = 0; i < TS_MAX_DEVS; i++)
			if (part == TS_SWEEP_BEGIN)
				sweep_begin(i, NULL);
			else
				sweep_end(i, NULL);
	} else if (part == TS_SWEEP_RESTAMP) {
		for (i = 0; i < TS_MAX_DEVS; i++)
			sweep_restamp(i, now);
	} else if (part == TS_SWEEP_SLOTS) {
		for (i = 0; i < TS_SWEEP_KEYS && i < n; i++)
			ts_sweep_slot(sweep_keys[i], now);
	} else if (part == TS_SWEEP_DURABLE) {
		for (i = 0; i < TS_SWEEP_KEYS && i < n; i++)
			ts_sweep_durable(i, now);
	}
	sweep_part_ns = bpf_ktime_get_ns() - now;
	return 0;
}

/*
 * One set of programs per attach kind (tp_btf, raw_tp); the loader picks
 * one. A program is of the hook its section names, one of
 * include/hooks.def's (80-conventions checks both lists). TS_ARG finds
 * each argument where the running kernel passes it.
 */
/* The request or bio of hook @tp, at argument @i since 5.11. */
/* The request a bio merges into (hook @tp), passed before 5.11 only. */
#define MERGE_RQ(tp) \
	(tp_shift[tp] == 2 ? (struct request *)CTX_ARG(ctx, 1) : NULL)
#define RQ_ARG(tp) ((struct request *)TS_ARG(ctx, 0, tp))
#define BIO_ARG(i, tp) ((struct bio *)TS_ARG(ctx, i, tp))

#define TS_PROGS(kind, direct, name)                                     \
	SEC(#kind "/block_rq_issue")                                        \
	int ts_issue_##name(u64 *ctx)                                       \
	{                                                                   \
		if (bench_empty)                                            \
			return bench_return();                              \
		return on_issue(RQ_ARG(TS_TP_ISSUE), direct);               \
	}                                                                   \
	SEC(#kind "/block_rq_complete")                                     \
	int ts_complete_##name(u64 *ctx)                                    \
	{                                                                   \
		if (bench_empty)                                            \
			return bench_return();                              \
		return on_complete(                                         \
			RQ_ARG(TS_TP_COMPLETE),                             \
			(int)TS_ARG(ctx, 1, TS_TP_COMPLETE),                \
			(u32)TS_ARG(ctx, 2, TS_TP_COMPLETE), direct);       \
	}                                                                   \
	SEC(#kind "/block_rq_requeue")                                      \
	int ts_requeue_##name(u64 *ctx)                                     \
	{                                                                   \
		if (bench_empty)                                            \
			return bench_return();                              \
		return on_requeue(RQ_ARG(TS_TP_REQUEUE), direct);           \
	}                                                                   \
	SEC(#kind "/block_bio_queue")                                       \
	int ts_bio_queue_##name(u64 *ctx)                                   \
	{                                                                   \
		if (bench_empty)                                            \
			return bench_return();                              \
		return on_bio_queue(BIO_ARG(0, TS_TP_BIO_QUEUE), direct);   \
	}                                                                   \
	SEC(#kind "/block_bio_backmerge")                                   \
	int ts_backmerge_##name(u64 *ctx)                                   \
	{                                                                   \
		if (bench_empty)                                            \
			return bench_return();                              \
		return on_bio_merge(BIO_ARG(0, TS_TP_BACKMERGE),           \
				    MERGE_RQ(TS_TP_BACKMERGE), direct);        \
	}                                                                   \
	SEC(#kind "/block_bio_frontmerge")                                  \
	int ts_frontmerge_##name(u64 *ctx)                                  \
	{                                                                   \
		if (bench_empty)                                            \
			return bench_return();                              \
		return on_bio_merge(BIO_ARG(0, TS_TP_FRONTMERGE),          \
				    MERGE_RQ(TS_TP_FRONTMERGE), direct);       \
	}                                                                   \
	SEC(#kind "/block_rq_merge")                                        \
	int ts_rq_merge_##name(u64 *ctx)                                    \
	{                                                                   \
		if (bench_empty)                                            \
			return bench_return();                              \
		return on_rq_merge(RQ_ARG(TS_TP_RQ_MERGE), direct);         \
	}                                                                   \
	SEC(#kind "/block_split")                                           \
	int ts_split_##name(u64 *ctx)                                       \
	{                                                                   \
		if (bench_empty)                                            \
			return bench_return();                              \
		return on_bio_split(BIO_ARG(0, TS_TP_SPLIT), direct);       \
	}                                                                   \
	SEC(#kind "/block_bio_complete")                                    \
	int ts_bio_complete_##name(u64 *ctx)                                \
	{                                                                   \
		if (bench_empty)                                            \
			return bench_return();                              \
		return on_bio_complete(BIO_ARG(1, TS_TP_BIO_COMPLETE), direct); \
	}                                                                   \
	SEC(#kind "/block_bio_remap")                                       \
	int ts_remap_##name(u64 *ctx)                                       \
	{                                                                   \
		if (bench_empty)                                            \
			return bench_return();                              \
		return on_bio_remap(                                        \
			BIO_ARG(0, TS_TP_REMAP),                            \
			(u32)TS_ARG(ctx, 1, TS_TP_REMAP),                   \
			TS_ARG(ctx, 2, TS_TP_REMAP), direct);               \
	}

TS_PROGS(tp_btf, true, btf)
TS_PROGS(raw_tp, false, raw)
