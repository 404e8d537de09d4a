/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Durable writes (fsync, O_DSYNC, journal commits): a write bio with
 * REQ_PREFLUSH or REQ_FUA, from its Q to its C, the end of its flush
 * sequence. On by default: every other bio pays one flag test at Q and C.
 */
#ifndef TS_DURABLE_BPF_H
#define TS_DURABLE_BPF_H

#include "core.bpf.h"
#include "atomics.bpf.h"
#include "compat.bpf.h"
#include "hists.bpf.h"
#include "flush_clock.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TS_DURABLE_BIOS);
	__type(key, u64);
	__type(value, struct ts_durable);
} durable_bios SEC(".maps");

/* Whether @opf is a write that asks for durability. */
static __always_inline bool is_durable(u32 opf)
{
	u32 flags = (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)) |
		    (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH));

	return (opf & REQ_OP_MASK_) == REQ_OP_WRITE && (opf & flags);
}

static __always_inline struct ts_sync_stats *sync_stats(u32 qid)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);

	return ds ? &ds->sync : NULL;
}

/*
 * Q of @bio on device @qid. A record still there under its address is of
 * a durable bio whose C went unseen, the memory since reused: missed.
 */
static __always_inline void durable_enter(u32 qid, struct bio *bio,
					  bool direct, u64 now)
{
	struct ts_durable d = { .queued_ns = now, .qid = qid };
	struct ts_dev_state *st;
	struct ts_sync_stats *ss;
	u64 key;
	u32 opf;

	/* every bio passes here: nothing before this test but one load */
	LOAD(direct, opf, bio->bi_opf);
	if (!is_durable(opf))
		return;
	key = ptr_value(bio);
	LOAD(direct, d.bytes, bio->bi_iter.bi_size);
	st = bpf_map_lookup_elem(&dev_state, &qid);
	if (st)
		d.flush_at_q = flush_clock_at(st, now);
	if (!bpf_map_delete_elem(&durable_bios, &key) && (ss = sync_stats(qid)))
		__sync_fetch_and_add(&ss->missed, 1);
	if (bpf_map_update_elem(&durable_bios, &key, &d, BPF_NOEXIST) &&
	    (ss = sync_stats(qid)))
		__sync_fetch_and_add(&ss->untracked, 1);
}

/* Into the histograms of device @qid, when it has them. */
static __always_inline void durable_hist_add(u32 qid, u64 total_ns, u64 bytes)
{
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);
	struct ts_hist *h;

	if (!st || !(h = hist_of(st->hist_slot, TS_HIST_SYNC)))
		return;
	hist_count(h->total, total_ns);
	size_count(h, bytes);
}

/*
 * Of durable write @rec's time up to @now, the part a flush command was in
 * its device: at most all of it (a move and a read can cross).
 */
static __always_inline u64 durable_flush_ns(const struct ts_durable *rec,
					    u64 now)
{
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &rec->qid);
	u64 took = now - rec->queued_ns, in_flush;

	if (!st)
		return 0;
	in_flush = flush_clock_at(st, now) - rec->flush_at_q;
	if ((s64)in_flush < 0)
		return 0;
	return in_flush < took ? in_flush : took;
}

/* The end of the durable write at @key: taken (one delete decides). */
static __always_inline void durable_end(u64 key, u64 now)
{
	struct ts_sync_stats *ss;
	struct ts_durable *d, rec;

	d = bpf_map_lookup_elem(&durable_bios, &key);
	if (!d)
		return;
	rec = *d;
	if (bpf_map_delete_elem(&durable_bios, &key))
		return;
	ss = sync_stats(rec.qid);
	if (!ss)
		return;
	/* the completion and the bio layer's C can nest on one CPU */
	__sync_fetch_and_add(&ss->ios, 1);
	__sync_fetch_and_add(&ss->bytes, rec.bytes);
	__sync_fetch_and_add(&ss->total_ns, now - rec.queued_ns);
	__sync_fetch_and_add(&ss->flush_ns, durable_flush_ns(&rec, now));
	durable_hist_add(rec.qid, now - rec.queued_ns, rec.bytes);
}

/* C of @bio at a bio layer (block_bio_complete): its end. */
static __always_inline void durable_complete(struct bio *bio, bool direct,
					     u64 now)
{
	u32 opf;

	LOAD(direct, opf, bio->bi_opf);
	if (is_durable(opf))
		durable_end(ptr_value(bio), now);
}

/* 1 << RQF_FLUSH_SEQ: a macro (bit 4) before the flags became an enum. */
static __always_inline u32 rqf_flush_seq(void)
{
	if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_FLUSH_SEQ))
		return 1U << bpf_core_enum_value(enum rqf_flags, __RQF_FLUSH_SEQ);
	return 1U << 4;
}

/*
 * A request completed in full. On a request queue the bios' completion is
 * not traced (blk_update_request clears it: block_rq_complete stands for
 * it), so a durable write ends here: at the completion of its request
 * that is not in a flush sequence any more. A preflush+data write
 * completes twice, its data first (RQF_FLUSH_SEQ set), then at the end of
 * the sequence with no data left and rq->bio its bio again.
 */
static __always_inline void durable_request_done(struct request *rq,
						 bool direct, u64 now)
{
	struct bio *bio;
	u32 flags, opf;

	LOAD(direct, bio, rq->bio);
	if (!bio)
		return;
	LOAD(direct, opf, bio->bi_opf);
	if (!is_durable(opf))
		return;
	LOAD(direct, flags, rq->rq_flags);
	if (!(flags & rqf_flush_seq()))
		durable_end(ptr_value(bio), now);
}

/*
 * The sweep: a durable bio is done, its end unseen, when its memory is
 * unreadable or no longer a durable write on that queue (freed, reused),
 * or, at a bio layer, when its completion bit is clear (cleared after
 * block_bio_complete). Not on a request queue: there the bit is cleared
 * when its data completes, before a post-flush.
 */
static __always_inline bool durable_idle(u64 addr, const struct ts_durable *d)
{
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &d->qid);
	struct bio *b = (struct bio *)addr;
	struct request_queue *q;
	unsigned short flags;
	u32 opf;

	if (!st || bio_traced_bit >= 16)
		return false;
	if (bpf_core_read(&flags, sizeof(flags), &b->bi_flags) ||
	    bpf_core_read(&opf, sizeof(opf), &b->bi_opf) ||
	    bio_queue_read(b, &q))
		return true;
	if (!is_durable(opf) || (u64)q != st->queue)
		return true;
	return st->layer == TS_LAYER_BIO &&
	       !(flags & (1U << (bio_traced_bit & 15)));
}

static long durable_sweep_one(struct bpf_map *map, u64 *key,
			      struct ts_durable *d, u64 *now)
{
	struct ts_sync_stats *ss;

	if (*now - d->queued_ns < TS_SWEEP_MIN_AGE_NS || !durable_idle(*key, d))
		return 0;
	if (!bpf_map_delete_elem(&durable_bios, key) && (ss = sync_stats(d->qid)))
		__sync_fetch_and_add(&ss->missed, 1);
	return 0;
}

#endif
