/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records of requests and bios in flight: the request table (one
 * compare-and-swap ends a record), the bios waiting in the OS queue, and a
 * record opened at issue.
 */
#ifndef TS_RECORDS_BPF_H
#define TS_RECORDS_BPF_H

/*
 * Request table. A slot's rq is 0 (free), the request's address, or the
 * address + 1 while a writer holds the record (an issue filling it, a
 * re-issue rewriting it, the sweep checking it). A record is taken away by
 * one compare-and-swap on rq, so exactly one of the completion, a re-issue
 * and the sweep ends it; and it is published (held -> address) only once
 * filled, so that the sweep never reads a half-written record.
 */
/*
 * Lookups go @n slots from a hash from now on: 1 once they do. Each
 * compare-and-swap lost is another CPU's raise (rq_reach only grows, at
 * most TS_RQ_PROBES_MAX times), so only a lock not taken (the object for
 * kernels before 5.12) makes it give up.
 */
__noinline int reach_raise(u32 n)
{
	u32 old;
	int i;

#pragma unroll
	for (i = 0; i <= TS_RQ_PROBES_MAX; i++) {
		old = TS_ONCE(&rq_reach);
		if (old >= n || ts_cmpxchg(&rq_reach, old, n) == old)
			return 1;
	}
	return 0;
}

/*
 * Past a request's first TS_RQ_PROBES slots from its hash @h, where only a
 * table that full put records: the slot of @rq's record up to rq_reach,
 * or (claim) a free one further on, held, or -1. Global functions,
 * verified once, not at every call site: inlined at each, truestat
 * did not finish loading in the 5.10 guest within its 360 s.
 */
__noinline int rq_find_far(u64 rq, u32 h, u32 reach)
{
	struct ts_rq_slot *s;
	u32 idx;
	int i;

#pragma unroll
	for (i = TS_RQ_PROBES; i < TS_RQ_PROBES_MAX; i++) {
		if (i >= reach)
			continue;
		idx = (h + i) & rq_mask & (TS_RQ_SLOTS_MAX - 1);
		s = bpf_map_lookup_elem(&rq_slots, &idx);
		if (s && (s->rq == rq || s->rq == rq + 1))
			return idx;
	}
	return -1;
}

__noinline int rq_claim_far(u64 rq, u32 h)
{
	struct ts_rq_slot *s;
	u32 idx;
	int i;

#pragma unroll
	for (i = TS_RQ_PROBES; i < TS_RQ_PROBES_MAX; i++) {
		idx = (h + i) & rq_mask & (TS_RQ_SLOTS_MAX - 1);
		s = bpf_map_lookup_elem(&rq_slots, &idx);
		if (!s || s->rq || ts_cmpxchg(&s->rq, 0, rq + 1) != 0)
			continue;
		if (reach_raise(i + 1))
			return idx;
		ts_store_release(&s->rq, 0);
		return -1;
	}
	return -1;
}

/* Slot @idx of the request table (@idx < 0: none), its index in *@at. */
static __always_inline struct ts_rq_slot *rq_slot_at(int idx, u32 *at)
{
	u32 key = idx;

	if (idx < 0)
		return NULL;
	*at = key;
	return bpf_map_lookup_elem(&rq_slots, &key);
}

/*
 * The record of @rq (its index in *@at), or NULL; with @free, the first
 * free slot among its first TS_RQ_PROBES too (its index in *@free_at),
 * for a claim that needs no second search.
 */
static __always_inline struct ts_rq_slot *
rq_probe(u64 rq, u32 *at, struct ts_rq_slot **free, u32 *free_at)
{
	struct ts_rq_slot *s;
	u32 h = ts_ptr_hash(addr_lo(rq), TS_RQ_BITS_MAX), idx;
	u32 reach = TS_ONCE(&rq_reach);
	int i;

#pragma unroll /* written out: no loop for an old verifier to judge */
	for (i = 0; i < TS_RQ_PROBES; i++) {
		idx = (h + i) & rq_mask & (TS_RQ_SLOTS_MAX - 1);
		s = bpf_map_lookup_elem(&rq_slots, &idx);
		if (!s)
			continue;
		if (s->rq == rq || s->rq == rq + 1) {
			*at = idx;
			return s;
		}
		if (free && !*free && !s->rq) {
			*free = s;
			*free_at = idx;
		}
	}
	if (reach <= TS_RQ_PROBES)
		return NULL;
	/* a global function takes scalars: @rq may be a pointer to the verifier */
	return rq_slot_at(rq_find_far(ptr_value((void *)rq), h, reach), at);
}

static __always_inline struct ts_rq_slot *rq_find(u64 rq, u32 *at)
{
	return rq_probe(rq, at, NULL, NULL);
}

/*
 * Swaps @s's rq from @rq to @to: true when this CPU won the record. While
 * the sweep holds it (a few instructions), wait for it.
 */
static __always_inline bool rq_take(struct ts_rq_slot *s, u64 rq, u64 to)
{
	int i;

	for (i = 0; i < 8; i++) {
		if (ts_cmpxchg(&s->rq, rq, to) == rq)
			return true;
		if (s->rq != rq + 1)
			return false;
	}
	return false;
}

/*
 * A free slot for @rq (its index in *@at), held, or NULL: none within
 * TS_RQ_PROBES_MAX of its hash.
 */
static __always_inline struct ts_rq_slot *rq_claim(u64 rq, u32 *at)
{
	struct ts_rq_slot *s;
	u32 h = ts_ptr_hash(addr_lo(rq), TS_RQ_BITS_MAX), idx;
	int i;

	/* free slots in probe order; one taken meanwhile by another CPU: next */
#pragma unroll
	for (i = 0; i < TS_RQ_PROBES; i++) {
		idx = (h + i) & rq_mask & (TS_RQ_SLOTS_MAX - 1);
		s = bpf_map_lookup_elem(&rq_slots, &idx);
		if (s && !s->rq &&
		    ts_cmpxchg(&s->rq, 0, rq + 1) == 0) {
			*at = idx;
			return s;
		}
	}
	return rq_slot_at(rq_claim_far(ptr_value((void *)rq), h), at);
}

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
 * has no event at all, so a discard's bios all leave here.
 */
#define TS_BIO_WALK 8

static __always_inline u64 bios_leave(u32 qid, struct bio *bio, bool all,
				      bool direct, u64 now,
				      struct ts_submitter *who)
{
	u64 queued_ns = 0, q;
	u64 i; /* 64 bits: a 32-bit spill lost its value before 5.16's verifier */

	/* the submitter is that of the first bio with a Q */
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
 * The record in @s ended unseen: its request leaves the depth of the
 * device it was issued on (with a tag set shared between queues, the same
 * request can come back on another) at its estimated end, and is counted
 * there.
 */
static __always_inline void forget_request(struct ts_rq_slot *s, u64 now)
{
	u32 qid = s->qid, idx;
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);
	struct ts_repair *r;
	u64 n;

	if (record_stale(s)) { /* of a disk gone: not the new one's */
		count_event(qid, TS_EV_STALE_RECORD);
		return;
	}
	n = ts_fetch_add(&repair_count, 1); /* ~0: not recorded */
	idx = n & (TS_REPAIR_SLOTS - 1);
	r = n != ~0ULL ? bpf_map_lookup_elem(&repairs, &idx) : NULL;
	if (r) {
		r->issue_ns = s->issue_ns;
		r->found_ns = now;
		r->qid = qid;
		ts_store_release(&r->seq, n + 1);
	}
	count_missed(qid, TS_EV_MISSED_C, s->op, s->bytes);
	if (st)
		device_down(st, qid, estimated_end(qid, s->issue_ns, now), true);
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
		queued_ns = bios_leave(qid, bio, op == TS_OP_DISCARD, direct,
				       now, who);
	if (!queued_ns)
		count_event(qid, TS_EV_NO_QUEUE_TIME);
	return queued_ns;
}

/*
 * A record for @addr (a request, or a bio of a bio layer) being issued,
 * held: its old one when its last completion went unseen (repaired here),
 * else a free slot; NULL when the table has none.
 */
static __always_inline struct ts_rq_slot *record_open(u64 addr, u64 now,
						      u32 *at)
{
	struct ts_rq_slot *free = NULL;
	u32 free_at = 0;
	struct ts_rq_slot *s = rq_probe(addr, at, &free, &free_at);

	if (s && rq_take(s, addr, addr + 1)) {
		forget_request(s, now);
		return s;
	}
	if (!s && free &&
	    ts_cmpxchg(&free->rq, 0, addr + 1) == 0) {
		*at = free_at;
		return free;
	}
	return rq_claim(addr, at); /* taken meanwhile: search again */
}

/*
 * Publishes record @s of @addr, held by this CPU and filled: the sweep
 * reads it only once published, and must see it filled.
 */
static __always_inline void record_publish(struct ts_rq_slot *s, u64 addr)
{
	ts_store_release(&s->rq, addr);
}

/*
 * Fills held record @s and puts it in @st's depth: the depth, the request
 * included. A depth below 1 counted a departure twice: the request is filed
 * at depth 1 and counted (TS_EV_DEPTH_BELOW), which makes the report say
 * its depth is not exact. The caller publishes it (record_publish) after
 * its extra (rq_extra_set): a completion that finds the record reads both.
 */
static __always_inline s64 record_fill(struct ts_dev_state *st, u32 qid,
				       struct ts_rq_slot *s, u64 queued_ns,
				       u32 bytes, u8 op, u64 now)
{
	s64 depth;

	s->queued_ns = queued_ns;
	s->issue_ns = now;
	s->bytes = bytes;
	s->qid = qid;
	s->op = op;
	depth = device_up(st, qid, now);
	if (depth < 1)
		count_event(qid, TS_EV_DEPTH_BELOW);
	s->depth_class = ts_depth_class(depth < 1 ? 1 : depth);
	return depth;
}

#endif
