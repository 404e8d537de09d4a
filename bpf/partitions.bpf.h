/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -p, --partitions: each request, merge and missed completion counted
 * under the partition the kernel itself counts it under (req->part, as
 * /proc/diskstats does). Off: the verifier removes all of it and the map
 * holds one entry.
 */
#ifndef TS_PARTITIONS_BPF_H
#define TS_PARTITIONS_BPF_H

#include "core.bpf.h"
#include "compat.bpf.h"

const volatile bool partitions = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TS_PART_MAX); /* 1 without -p */
	__type(key, struct ts_part_key);
	__type(value, struct ts_part_stats);
} part_stats SEC(".maps");

struct ts_part_stats part_zero; /* never written */

/* 5.10: rq->part is a struct hd_struct, numbered by partno */
struct hd_struct___old {
	int partno;
} __attribute__((preserve_access_index));

/* up to 6.9 */
struct block_device___partno {
	u8 bd_partno;
} __attribute__((preserve_access_index));

/* from 6.10: the low 8 bits of __bd_flags (bdev_partno()) */
struct block_device___flags {
	atomic_t __bd_flags;
} __attribute__((preserve_access_index));

/* The number of partition @part (rq->part or bio->bi_bdev), 0: the disk. */
static __always_inline u8 partno_of(void *part, bool direct)
{
	int n = 0;
	u8 p = 0;

	if (!part)
		return 0;
	if (bpf_core_type_exists(struct hd_struct___old)) {
		LOAD(direct, n, ((struct hd_struct___old *)part)->partno);
		return n;
	}
	if (bpf_core_field_exists(((struct block_device___partno *)part)->bd_partno)) {
		LOAD(direct, p, ((struct block_device___partno *)part)->bd_partno);
		return p;
	}
	LOAD(direct, n, ((struct block_device___flags *)part)->__bd_flags.counter);
	return n & 0xff;
}

/* The partition the kernel counts @rq under (NULL part: the disk). */
static __always_inline u8 part_of_rq(struct request *rq, bool direct)
{
	void *part = NULL;

	LOAD(direct, part, rq->part);
	return partno_of(part, direct);
}

/*
 * The partition a merge of @bio counts under: the request's (@rq, the
 * 5.10 tracepoints pass it), else @bio's block_device (5.12 on: the same
 * but at a boundary of two partitions that touch). -1: unknown (5.11).
 */
static __always_inline int part_of_merge(struct request *rq, struct bio *bio,
					 bool direct)
{
	void *bdev = NULL;

	if (rq)
		return part_of_rq(rq, direct);
	/* no request and no bio: the verifier sees this path too (a
	 * tracepoint's argument may be NULL), so no load through NULL */
	if (!bio || !bpf_core_field_exists(bio->bi_bdev))
		return -1;
	LOAD(direct, bdev, bio->bi_bdev);
	return partno_of(bdev, direct);
}

/*
 * Partition entry @slot_part of claim @claim, made zeroed when new; NULL:
 * the table is full.
 */
static __always_inline struct ts_part_stats *part_entry(u32 slot_part,
							u64 claim)
{
	struct ts_part_key key = { .slot_part = slot_part, .claimed_ns = claim };
	struct ts_part_stats *s = bpf_map_lookup_elem(&part_stats, &key);

	if (s)
		return s;
	bpf_map_update_elem(&part_stats, &key, &part_zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&part_stats, &key);
}

/*
 * Direction @op's figures of partition entry @key, of its disk's present
 * claim of the slot, or NULL (counted). The claim is looked up here, not
 * passed down: a device entry kept live through the callers for it cost
 * 5.10's bio queue program 16 bytes of stack, past its 512.
 */
static __always_inline struct ts_part_op *part_op(u32 key, u32 op)
{
	struct ts_dev_state *st;
	struct ts_part_stats *s;
	u32 qid = key >> 8;
	u64 i = op;

	barrier_var(i); /* see hist_count */
	if (i >= TS_NR_OPS)
		return NULL;
	st = bpf_map_lookup_elem(&dev_state, &qid);
	if (!st)
		return NULL;
	s = part_entry(key, st->claimed_ns);
	if (!s) {
		count_event(key >> 8, TS_EV_PART_FULL);
		return NULL;
	}
	return &s->op[i];
}

enum ts_part_count {
	TS_PART_MERGE,
	TS_PART_MISSED,
};

/*
 * Partition @key (ts_part_key), direction @op and @bytes as one scalar for
 * the __noinline functions below (five arguments at most).
 */
static __always_inline u64 part_key_op_bytes(u32 key, u8 op, u32 bytes)
{
	return (u64)key << 40 | (u64)op << 32 | bytes;
}

/*
 * A merge or a missed completion (@what) under partition key, direction
 * and size @kob (part_key_op_bytes).
 */
__noinline int ts_part_count(u64 kob, u32 what)
{
	struct ts_part_op *o;
	u32 bytes = (u32)kob, key = kob >> 40;

	if (!(key & 0xff))
		return 0; /* the disk itself: its own row has it */
	o = part_op(key, (kob >> 32) & 0xff);
	if (!o)
		return 0;
	if (what == TS_PART_MERGE) {
		__sync_fetch_and_add(&o->merges, 1);
		return 0;
	}
	__sync_fetch_and_add(&o->missed, 1);
	if (bytes)
		__sync_fetch_and_add(&o->missed_bytes, bytes);
	return 0;
}

/*
 * A request under partition key, direction and size @kob
 * (part_key_op_bytes), issued at @issue_ns, its Q at @queued_ns (0:
 * unseen), completed at @now. Scalars only: verified once, whatever calls
 * it.
 */
__noinline int ts_part_account(u64 kob, u64 issue_ns, u64 queued_ns,
			       u64 now)
{
	struct ts_part_op *o;
	u32 bytes = (u32)kob, key = kob >> 40;

	if (!(key & 0xff))
		return 0;
	o = part_op(key, (kob >> 32) & 0xff);
	if (!o)
		return 0;
	__sync_fetch_and_add(&o->ios, 1);
	if (bytes)
		__sync_fetch_and_add(&o->bytes, bytes);
	if (now > issue_ns)
		__sync_fetch_and_add(&o->service_ns, now - issue_ns);
	if (!queued_ns)
		return 0;
	__sync_fetch_and_add(&o->queued_ios, 1);
	if (issue_ns > queued_ns)
		__sync_fetch_and_add(&o->queue_ns, issue_ns - queued_ns);
	if (now > queued_ns)
		__sync_fetch_and_add(&o->total_ns, now - queued_ns);
	return 0;
}

/* Request record @rec of device @qid completed at @now. */
static __always_inline void part_done(u32 qid, const struct ts_rq_slot *rec,
				      u64 now)
{
	if (partitions && rec->part)
		ts_part_account(part_key_op_bytes(ts_part_key(qid, rec->part),
						  rec->op, rec->bytes),
				rec->issue_ns, rec->queued_ns, now);
}

/* A merge of direction @op into a request of device @qid. */
static __always_inline void part_merge(u32 qid, u8 op, struct request *rq,
				       struct bio *bio, bool direct)
{
	int part;

	if (!partitions)
		return;
	part = part_of_merge(rq, bio, direct);
	if (part > 0)
		ts_part_count(part_key_op_bytes(ts_part_key(qid, part), op, 0),
			      TS_PART_MERGE);
}

/*
 * Record @s of device @qid ended unseen, of its present claim (a record of
 * an older one is stale, not counted by the callers): missed in its
 * partition's row.
 */
static __always_inline void part_missed(u32 qid, const struct ts_rq_slot *s)
{
	if (partitions && s->part)
		ts_part_count(part_key_op_bytes(ts_part_key(qid, s->part),
						s->op, s->bytes),
			      TS_PART_MISSED);
}

#endif
