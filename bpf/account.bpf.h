/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a completion adds: the histograms, the requests that completed
 * untimed, a record taken at its end, and a request's figures.
 */
#ifndef TS_ACCOUNT_BPF_H
#define TS_ACCOUNT_BPF_H

/*
 * Array indexes: left alone, clang checks one copy of a bucket number and
 * indexes with another, made by a 32-bit move; the 6.1 verifier (tests/vm)
 * does not carry the bound across that move and rejects the program.
 * barrier_var() makes the index a 64-bit value of unknown range that is
 * checked and used as such.
 */
static __always_inline void hist_count(u64 *counts, u64 ns)
{
	u64 b = ts_hist_bucket(ns);

	barrier_var(b);
	if (b < TS_HIST_SLOTS)
		__sync_fetch_and_add(&counts[b], 1);
}

/* Histograms of device slot @slot (1 + index), set @set (an op or
 * TS_HIST_SYNC), or NULL: none. */
static __always_inline struct ts_hist *hist_of(u32 slot, u8 set)
{
	u32 idx = (slot - 1) * TS_HIST_SETS + set;

	if (!slot)
		return NULL;
	return bpf_map_lookup_elem(&hists, &idx);
}

static __always_inline void size_count(struct ts_hist *h, u32 bytes)
{
	u64 b = ts_size_bucket(bytes);

	barrier_var(b);
	if (b < TS_SIZE_SLOTS)
		__sync_fetch_and_add(&h->size[b], 1);
}

/* One completion into its device's histograms; false when it has none. */
static __always_inline bool hist_add(u32 slot, u8 op, u64 issue_ns,
				     u64 queued_ns, u64 now, u32 bytes)
{
	struct ts_hist *h = hist_of(slot, op);

	if (!h)
		return false;
	hist_count(h->service, now - issue_ns);
	if (queued_ns) {
		hist_count(h->queue, issue_ns - queued_ns);
		hist_count(h->total, now - queued_ns);
	}
	size_count(h, bytes);
	return true;
}

/* Service time by the depth the request was issued at. */
static __always_inline void depth_hist_add(u32 slot, u8 depth_class,
					   u64 service_ns)
{
	u32 idx = slot - 1;
	struct ts_depth_hist *h = bpf_map_lookup_elem(&depth_hists, &idx);
	u64 b = ts_hist_bucket(service_ns), c = depth_class;

	barrier_var(b);
	barrier_var(c);
	if (!h || c >= TS_DEPTH_CLASSES || b >= TS_HIST_SLOTS)
		return;
	__sync_fetch_and_add(&h->service[c][b], 1);
}

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
 * A request allocated after tracing began and before device @st's claim
 * was done had its issue dropped (another CPU held the entry): its first
 * event found the claim under way, or raced the CPU that made it, so it may
 * even be older than the claim. One allocated before tracing began was in
 * flight then; one allocated after the claim was seen at its issue (or
 * counted there, the table full).
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
	return alloc_ns && alloc_ns >= trace_start_ns && alloc_ns <= done;
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

/* Record @s of @rq ended unseen: held, forgotten, freed. */
static __always_inline void forget_held(struct ts_rq_slot *s, u64 rq, u64 now)
{
	if (!rq_take(s, rq, rq + 1))
		return;
	forget_request(s, now);
	ts_release(&s->rq, rq + 1, 0);
}

/* TRUESTAT_TEST_MISS_EVERY: true for the completions of @st to drop. */
static __always_inline bool test_drop(const struct ts_dev_state *st)
{
	if (!test_miss_every || (test_miss_dev && st->dev != test_miss_dev))
		return false;
	return ts_fetch_add(&test_miss_tick, 1) % test_miss_every == 0;
}

static __always_inline struct request_queue *queue_of_bio(struct bio *bio,
							  bool direct)
{
	return bio_queue(bio, direct);
}

/*
 * Copies record @s (index @at) to @rec, and its layer_recs entry to @mem
 * when not NULL (a bio layer's), then takes it for @addr's completion.
 */
static __always_inline bool record_copy_take(u64 addr, struct ts_rq_slot *s,
					     u32 at, struct ts_rq_slot *rec,
					     struct ts_layer_rec *mem)
{
	struct ts_layer_rec *m;

	*rec = *s;
	m = mem ? bpf_map_lookup_elem(&layer_recs, &at) : NULL;
	if (m)
		*mem = *m;
	return rq_take(s, addr, addr + 1);
}

/*
 * Takes the record of @addr, found at slot @s (index @at), for its
 * completion (record_copy_take): its slot, held until the caller took the
 * request out of the depth (record_free), so that no other request can
 * fill the slot and enter the depth first; NULL when there is none. A
 * record that the sweep held and ended meanwhile was of an older life;
 * this one's may be in another slot (its issue found that one held):
 * looked for once more. Written out, not a loop of two: clang made that a
 * flag spilled as 32 bits, which 5.13's verifier does not follow (an
 * "infinite loop").
 */
static __always_inline struct ts_rq_slot *
record_end(u64 addr, struct ts_rq_slot *s, u32 at, struct ts_rq_slot *rec,
	   struct ts_layer_rec *mem)
{
	if (!s)
		return NULL;
	if (record_copy_take(addr, s, at, rec, mem))
		return s;
	s = rq_find(addr, &at);
	if (s && record_copy_take(addr, s, at, rec, mem))
		return s;
	return NULL;
}

/* Frees slot @s, held by record_end or a requeue. */
static __always_inline void record_free(struct ts_rq_slot *s)
{
	*(volatile u64 *)&s->rq = 0;
}

/* Direction @op's figures in @ds, or NULL (no @ds, or no such op). */
static __always_inline struct ts_op_stats *op_stats(struct ts_dev_stats *ds,
						    u8 op)
{
	u64 i = op;

	/* one register checked and used: see hist_count */
	barrier_var(i);
	if (!ds || i >= TS_NR_OPS)
		return NULL;
	return &ds->op[i];
}

/*
 * A request's figures for one completion (its record already ended). Only
 * the completion program adds to these, and the kernel never runs a
 * program nested in itself on one CPU: plain adds are exact.
 */
static __always_inline void request_account(struct ts_dev_state *st, u32 qid,
					    const struct ts_rq_slot *rec,
					    u64 now)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);
	u64 issue_ns = rec->issue_ns, queued_ns = rec->queued_ns;
	struct ts_op_stats *os = op_stats(ds, rec->op);
	u8 op = rec->op;

	if (!ds || !os)
		return;
	os->ios++;
	os->bytes += rec->bytes;
	os->service_ns += now - issue_ns;
	if (queued_ns) {
		os->queued_ios++;
		os->queue_ns += issue_ns - queued_ns;
		os->total_ns += now - queued_ns;
	}
	if (!hist_add(st->hist_slot, op, issue_ns, queued_ns, now, rec->bytes))
		count_event(qid, TS_EV_NO_HIST);
	else
		depth_hist_add(st->hist_slot, rec->depth_class, now - issue_ns);
}

#endif
