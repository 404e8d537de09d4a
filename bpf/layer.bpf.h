/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bio layer of md, dm and zram: a bio from Q to C at its own device,
 * linked to its member bio for the time spent in the layer itself.
 */
#ifndef TS_LAYER_BPF_H
#define TS_LAYER_BPF_H

#include "core.bpf.h"
#include "atomics.bpf.h"
#include "depth.bpf.h"
#include "hists.bpf.h"
#include "slow.bpf.h"
#include "pattern.bpf.h"
#include "bios.bpf.h"
#include "records.bpf.h"
#include "account.bpf.h"

/* Bio layer links (include/truestat.h, struct ts_layer_key). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TS_LINK_SLOTS);
	__type(key, struct ts_layer_key);
	__type(value, u64);
} layer_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TS_LINK_SLOTS);
	__type(key, u64);
	__type(value, u64);
} member_links SEC(".maps");

/*
 * dev_t of the stacked devices a remap came from: only their bios go in
 * layer_index (an LRU update costs a bio layer such as zram, which sends
 * nothing on, about 2/3 of its BPF time). A stack's first bios have no
 * layer time.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TS_MAX_DEVS);
	__type(key, u32);
	__type(value, u8);
} stacked SEC(".maps");

/*
 * Bio layer (md, dm, zram). A bio is in the layer from Q to C: its record
 * is kept in the request table under the bio's address, with Q as both
 * its queue and issue time. layer_index finds it by where it starts, for
 * the remap of its member bio.
 */
static __always_inline void layer_enter(struct ts_dev_state *st, u32 qid,
					struct bio *bio, bool direct, u64 now)
{
	struct ts_layer_key key = { .dev = st->dev };
	struct ts_layer_rec *m;
	struct ts_rq_slot *s;
	void *end_io;
	u32 opf, bytes, at = 0;
	u64 addr = (u64)bio;
	s64 depth;
	u8 op;

	LOAD(direct, opf, bio->bi_opf);
	LOAD(direct, bytes, bio->bi_iter.bi_size);
	LOAD(direct, key.sector, bio->bi_iter.bi_sector);
	op = op_of(opf);
	pattern_count(qid, op, key.sector, bytes);
	s = record_open(addr, now, &at);
	if (!s) {
		count_missed(qid, TS_EV_RQ_FULL, op, bytes);
		return;
	}
	m = bpf_map_lookup_elem(&layer_recs, &at);
	if (m) {
		LOAD(direct, end_io, bio->bi_end_io);
		m->end_io = (u64)end_io;
		m->links = 0;
		m->sent_on = 0;
		m->sub_start_ns = 0;
		m->sub_end_ns = 0;
	}
	depth = record_fill(st, qid, s, now, bytes, op, now);
	if (keep_who) {
		struct ts_submitter w;

		who_now(&w);
		rq_extra_set(at, &w, key.sector, depth);
	}
	record_publish(s, addr);
	if (bpf_map_lookup_elem(&stacked, &key.dev)) {
		addr = ptr_value(bio);
		bpf_map_update_elem(&layer_index, &key, &addr, BPF_ANY);
	}
}

/* The layer_recs entry of the stacked bio at @addr, or NULL. */
static __always_inline struct ts_layer_rec *member_entry(u64 addr,
						      struct ts_rq_slot **s)
{
	u32 at = 0;

	*s = rq_find(addr, &at);
	if (!*s || (*s)->rq != addr)
		return NULL;
	return bpf_map_lookup_elem(&layer_recs, &at);
}

/*
 * Member bio @bio completed: its stacked bio's record notes when. True when
 * the stacked bio is @bio itself, sent on (on_bio_remap).
 */
static __always_inline bool member_done(u64 bio, u64 now)
{
	u64 key = ptr_value((void *)bio);
	u64 *upper = bpf_map_lookup_elem(&member_links, &key);
	struct ts_rq_slot *s;
	struct ts_layer_rec *m;
	u64 addr;

	if (!upper)
		return false;
	addr = *upper;
	bpf_map_delete_elem(&member_links, &key);
	m = member_entry(addr, &s);
	if (m)
		m->sub_end_ns = now;
	return addr == key;
}

__noinline int upper_done(u64 bio, u64 now);

/*
 * The bios of member request @rq completed. One that a stacked device sent
 * on itself ends there too: the kernel traces a bio's C once, and a
 * request's bios not at all (its block_rq_complete stands for them).
 */
static __always_inline void members_done(struct request *rq, bool direct,
					 u64 now)
{
	struct bio *bio;
	u64 i; /* 64 bits: spilled, 5.13's verifier still tells the turns apart */

	LOAD(direct, bio, rq->bio);
	for (i = 0; i < TS_BIO_WALK && bio; i++) {
		if (member_done((u64)bio, now))
			upper_done(ptr_value(bio), now);
		LOAD(direct, bio, bio->bi_next);
	}
}

/*
 * Time of record @s's bio in its layer itself (@m: its member), ending at
 * @now, + 1; 0 when it is not known: not sent on as exactly one member bio
 * of its size (counted), or the member's C not seen.
 */
static __always_inline u64 layer_time(const struct ts_rq_slot *s,
				      const struct ts_layer_rec *m, u32 qid,
				      u64 now)
{
	u64 start = m->sub_start_ns, end = m->sub_end_ns;

	if (m->links > 1)
		count_event(qid, TS_EV_FANOUT);
	if (m->links != 1 || !end || start < s->issue_ns || end < start ||
	    end > now)
		return 0;
	return (start - s->issue_ns) + (now - end) + 1;
}

/* A bio layer's figures for one completion (its record already ended). */
static __always_inline void layer_account(struct ts_dev_state *st, u32 qid,
					  u8 op, u32 bytes, u64 q_to_c,
					  u64 layer_ns, u8 depth_class)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);
	struct ts_op_stats v = {
		.ios = 1,
		.bytes = bytes,
		.service_ns = q_to_c,
		.queued_ios = 1,
		.total_ns = q_to_c,
	};
	struct ts_hist *h;

	if (!ds)
		return;
	if (layer_ns) { /* 1 ns over, so that 0 means none */
		v.layer_ios = 1;
		v.layer_ns = layer_ns - 1;
	}
	op_add(ds, qid, op, &v);
	h = hist_of(st->hist_slot, op);
	if (!h) {
		count_event(qid, TS_EV_NO_HIST);
		return;
	}
	hist_count(h->service, q_to_c);
	hist_count(h->total, q_to_c);
	if (layer_ns)
		hist_count(h->layer, layer_ns - 1);
	size_count(h, bytes);
	depth_hist_add(st->hist_slot, op, depth_class, q_to_c);
	if (pattern && op < TS_PATTERN_OPS)
		pattern_service(st->hist_slot, op, bytes, q_to_c);
}

/*
 * Bio @bio of bio layer @st (slot @qid) ends at @now. @later: its fall in
 * depth left for the next change there (device_down_later).
 */
static __always_inline void layer_complete(struct ts_dev_state *st, u32 qid,
					   u64 bio, u64 now, bool later)
{
	struct ts_layer_rec mem = {};
	struct ts_rq_slot rec, *s;
	u32 at;

	if (st->has_uppers)
		member_done(bio, now);
	s = rq_find(bio, &at);
	if (!s) {
		count_event(qid, TS_EV_UNMATCHED);
		return;
	}
	if (test_drop(st))
		return;
	s = record_end(bio, s, at, &rec, &mem);
	if (!s) { /* the sweep ended it meanwhile */
		count_event(qid, TS_EV_UNMATCHED);
		return;
	}
	if (later)
		device_down_later(st, qid, now);
	else
		device_down(st, qid, now);
	/* held: its rq_extra is its own (read in place, not copied) */
	who_account(qid, at, &rec, now);
	slow_report(st, qid, &rec, rq_extra_held(at), now);
	record_free(s);
	layer_account(st, qid, rec.op, rec.bytes, now - rec.issue_ns,
		      layer_time(&rec, &mem, qid, now), rec.depth_class);
}

/*
 * The stacked bio @bio, sent on itself to a member device whose request
 * carrying it completed: its record ends. A global function: the verifier
 * checks it once, not in each turn of members_done's loop. Called from the
 * completion program, it has no stack left for the depth lock's functions
 * (5.10 allows 512 bytes over a chain of calls): its fall is left.
 */
__noinline int upper_done(u64 bio, u64 now)
{
	struct ts_dev_state *upper;
	struct ts_rq_slot *s;
	u32 at, qid;

	s = rq_find(bio, &at);
	if (!s || s->rq != bio)
		return 0;
	qid = s->qid;
	upper = bpf_map_lookup_elem(&dev_state, &qid);
	if (upper && upper->layer == TS_LAYER_BIO)
		layer_complete(upper, qid, bio, now, true);
	return 0;
}

#endif
