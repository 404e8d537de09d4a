/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The request table: a record per request (or bio of a bio layer) from its
 * issue to its completion, and the protocol that lets exactly one program
 * end each record.
 *
 * A slot's rq word is 0 (free), the address of the request it records
 * (published), or that address + 1 (held: one CPU is writing or ending the
 * record). Every move out of free or published is one compare-and-swap on
 * rq, so two programs never hold one record; a record is published only
 * once filled, so that nobody reads a half-written one.
 *
 *            issue: record_open                issue: record_publish
 *   free (0) ------------------> held (rq + 1) ---------------------> rq
 *      ^      (claim a free slot)   |   ^   ^  (filled, then released)  |
 *      |                            |   |   |                           |
 *      +----------------------------+   |   +---------------------------+
 *       completion, requeue:            |   completion: record_end,
 *       record_free (out of the depth   |   requeue: rq_take; sweep,
 *       first); sweep, forget_held:     |   forget_held: a compare-and-
 *       ended unseen, forgotten         |   swap; re-issue: record_open
 *                                       |
 *       sweep: another life refilled ---+ (released back to rq)
 *
 * A re-issue of a published record means its completion went unseen:
 * record_open takes it, forgets it (forget_slot) and fills it anew.
 */
#ifndef TS_RECORDS_BPF_H
#define TS_RECORDS_BPF_H

#include "core.bpf.h"
#include "atomics.bpf.h"
#include "depth.bpf.h"
#include "slow.bpf.h"
#include "partitions.bpf.h"
#include "flush_clock.bpf.h"

/*
 * Slots of the request table in use, minus one (the loader sizes it; tests
 * shrink it to fill it).
 */
const volatile __u32 rq_mask = TS_RQ_SLOTS - 1;

/*
 * How far from its hash the request table's records may be: TS_RQ_PROBES
 * until a claim had to go further (rq_claim), then as far as it went. Only
 * grows, at most to TS_RQ_PROBES_MAX.
 */
__u32 rq_reach = TS_RQ_PROBES;

/* Mapped by the loader, which reads which slots hold a record (the sweep). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TS_RQ_SLOTS);
	__type(key, u32);
	__type(value, struct ts_rq_slot);
} rq_slots SEC(".maps");

/* A bio layer's record's link to its member bio, by the record's slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_RQ_SLOTS);
	__type(key, u32);
	__type(value, struct ts_layer_rec);
} layer_recs SEC(".maps");

/* Each record ended unseen: the span its completion lies in (ts_repair). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TS_REPAIR_SLOTS);
	__type(key, u32);
	__type(value, struct ts_repair);
} repairs SEC(".maps");

__u64 repair_count;

/*
 * Sets repair record @r's seq to @v, ordered against its other stores both
 * ways: 0 before they are rewritten, n + 1 after, so that the loader's
 * second look at seq (ts_repair_read) finds a copy it made during a rewrite.
 * An exchange is a full barrier in BPF, which has no fence; x86 keeps
 * stores in order (plain moves), and the object for old kernels has no
 * exchange (bpf/atomics.bpf.h): there ts_store_release and a compiler
 * barrier after it.
 */
static __always_inline void repair_seq_set(struct ts_repair *r, u64 v)
{
	ts_store_release(&r->seq, v);
	asm volatile("" ::: "memory");
}

/*
 * Whether record @s is of an earlier claim of its slot: issued before the
 * slot's present disk was claimed (the disk it was of went, and another took
 * its queue id). A record is filled after its disk's claim, so its issue
 * time says which claim it is of.
 */
static __always_inline bool record_stale(const struct ts_rq_slot *s)
{
	u32 qid = s->qid;
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);

	return st && s->issue_ns < st->claimed_ns;
}

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

/*
 * How long, of the time from the issue of record @s to @now, @st's depth
 * was 1, 2, 3 and 4, its step down at @now made: into @low. A stretch
 * another CPU ended but has not yet added is missed; one it ended before
 * the issue and added after counts: one stretch either way.
 */
static __always_inline void low_since_issue(struct ts_dev_state *st,
					    const struct ts_rq_slot *s, u64 now,
					    u64 *low)
{
	u64 d, most = now - s->issue_ns;
	int i;

	for (i = 0; i < TS_LOW_DEPTHS; i++) {
		d = *(volatile u64 *)&st->device_low_ns[i] -
		    s->low_at_issue.ns[i];
		low[i] = (s64)d < 0 ? 0 : d < most ? d : most;
	}
}

/*
 * The time a repair at @now takes out of @st's levels, the request issued
 * at @issue_ns having left the depth at @now (from @was) and been counted
 * alone @alone of it: the depth kept it from its estimated end to @now.
 * Of that time, what it spent alone is the device's idle time, the rest
 * other requests' time at one level lower. How much of its time alone
 * came after its end is not known: idle is what its estimated service
 * cannot hold (alone all its service, as a request mostly is on a device
 * that serves one at a time; on one that serves many, a request is
 * hardly ever alone before or after its end). The rest comes off level
 * @was: exact when the depth stayed there. Another request counted after
 * it left, beside it, hides idle time at depth 2: unsure_ms covers that.
 */
static __always_inline void repair_levels(struct ts_dev_state *st, u32 qid,
					  u64 issue_ns, u64 now, s64 was,
					  u64 alone)
{
	u64 end = estimated_end(qid, issue_ns, now);
	u64 served = end - issue_ns, idle = alone > served ? alone - served : 0;

	if (idle)
		level_add(st->device_level, 1, -idle);
	if (now - end <= idle)
		return;
	/* beyond level 64 the mean is the area's (TS_LEVEL_ABOVE), not the
	 * levels', and most depths there have no level of their own */
	if (was > TS_LEVEL_EXACT)
		__sync_fetch_and_add(&st->device_level[TS_LEVEL_ABOVE],
				     -(now - end - idle));
	level_add(st->device_level, was > 1 ? was : 2, -(now - end - idle));
}

/*
 * The record in @s (slot @at) ended unseen: its request leaves the depth of
 * the device it was issued on (with a tag set shared between queues, the
 * same request can come back on another) at its estimated end, and is
 * counted there, and in its submitter's row (--by).
 */
static __always_inline void forget_request(struct ts_rq_slot *s, u32 at,
					   u64 now)
{
	u32 qid = s->qid, idx;
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);
	u64 n, low[TS_LOW_DEPTHS] = {};
	struct ts_repair *r;
	int i;

	if (record_stale(s)) { /* of a disk gone: not the new one's */
		count_event(qid, TS_EV_STALE_RECORD);
		return;
	}
	if (st) {
		s64 was;

		/* before the depth changes: a snapshot that reads the levels
		 * after this and the counters before knows (tracer.c) */
		__sync_fetch_and_add(&st->repairs_begun, 1);
		was = device_down(st, qid, now) + 1;

		if (s->op == TS_OP_FLUSH)
			flush_clock_move(qid, -1, now);
		low_since_issue(st, s, now, low);
		repair_levels(st, qid, s->issue_ns, now, was, low[0]);
	}
	n = ts_fetch_add(&repair_count, 1); /* ~0: not recorded */
	idx = n & (TS_REPAIR_SLOTS - 1);
	r = n != ~0ULL ? bpf_map_lookup_elem(&repairs, &idx) : NULL;
	if (r) {
		repair_seq_set(r, 0);
		r->issue_ns = s->issue_ns;
		r->found_ns = now;
		r->addr = s->rq & ~1ULL;
		for (i = 0; i < TS_LOW_DEPTHS; i++)
			r->low_ns[i] = low[i];
		r->qid = qid;
		repair_seq_set(r, n + 1);
	}
	count_missed(qid, TS_EV_MISSED_C, s->op, s->bytes);
	who_missed(qid, at, s->op);
	part_missed(qid, s);
}

/*
 * forget_request on the record in slot @at, held by the caller: a global
 * function, which the verifier checks once rather than inside each
 * program that repairs (inlined, the issue program passed 5.13's million
 * instructions). Inlined in the object for old kernels, whose depth is
 * made in global functions already: 5.10 took longer than its guest's
 * 100 s to load the repair as a global function of its own.
 */
#ifdef TS_LOCKED_ATOMICS
static __always_inline int forget_slot(u32 at, u64 now)
#else
__noinline int forget_slot(u32 at, u64 now)
#endif
{
	struct ts_rq_slot *s = bpf_map_lookup_elem(&rq_slots, &at);

	if (s)
		forget_request(s, at, now);
	return 0;
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
		forget_slot(*at, now);
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
	if (partitions)
		s->part = 0; /* on_issue reads the request's */
	s->op = op;
	depth = device_up(st, qid, now);
	if (op == TS_OP_FLUSH)
		flush_clock_move(qid, 1, now);
	s->low_at_issue = *(volatile struct ts_low_time *)st->device_low_ns;
	if (depth < 1)
		count_event(qid, TS_EV_DEPTH_BELOW);
	s->depth_class = ts_depth_class(depth < 1 ? 1 : depth);
	return depth;
}

/* Record @s (slot @at) of @rq ended unseen: held, forgotten, freed. */
static __always_inline void forget_held(struct ts_rq_slot *s, u32 at, u64 rq,
					u64 now)
{
	if (!rq_take(s, rq, rq + 1))
		return;
	forget_slot(at, now);
	ts_release(&s->rq, rq + 1, 0);
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

#endif
