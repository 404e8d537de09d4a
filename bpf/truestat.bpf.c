// SPDX-License-Identifier: GPL-2.0
/*
 * truestat: queue time (Q->D), service time (D->C) and time-weighted depth
 * per disk and direction. Each handler exists twice: tp_btf (direct loads)
 * and raw_tp (bpf_probe_read_kernel), chosen by the loader.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "truestat.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool filter_devices = false;
/* Makes the verifier reject ts_sweep: tests the load-failure path only. */
const volatile bool test_verifier_failure = false;
/*
 * bench/overhead.sh: every handler returns at once, so that bpf_stats shows
 * what an empty program costs here (the floor of its measurement). Frozen
 * in .rodata: when false, the verifier removes the branch.
 */
const volatile bool bench_empty = false;
/*
 * --light: the block_bio_* programs are not attached; Q is the request's
 * allocation time (rq->start_time_ns), so waits for a tag before the
 * request existed are not in the queue time, and the OS queue is not seen.
 */
const volatile bool light = false;
/* Slots of the request table in use, minus one: tests shrink it to fill it. */
const volatile __u32 rq_mask = TS_RQ_SLOTS - 1;

#define REQ_OP_BITS_ 8
#define REQ_OP_MASK_ ((1U << REQ_OP_BITS_) - 1)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TS_MAX_QUEUES);
	__type(key, u32);
	__type(value, struct ts_dev_state);
} dev_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TS_MAX_QUEUES);
	__type(key, u32);
	__type(value, struct ts_dev_stats);
} dev_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TS_HIST_DEVS * TS_NR_OPS);
	__type(key, u32);
	__type(value, struct ts_hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TS_HIST_DEVS);
	__type(key, u32);
	__type(value, struct ts_depth_hist);
} depth_hists SEC(".maps");

/* Histogram slots handed out so far (devices beyond TS_HIST_DEVS get none). */
__u32 hist_next;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_RQ_SLOTS);
	__type(key, u32);
	__type(value, struct ts_rq_slot);
} rq_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_BIO_SLOTS);
	__type(key, u32);
	__type(value, struct ts_bio_slot);
} bio_slots SEC(".maps");

/*
 * Recent mean service time per device, written by the loader: a request
 * whose completion was never seen is taken out of the depth at its issue
 * time plus this, not at the (later) moment it is found.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_MAX_QUEUES);
	__type(key, u32);
	__type(value, u64);
} service_hint SEC(".maps");

/*
 * Per device, the issue time of the oldest request seen in flight by the
 * last sweep (U64_MAX: none), so that stuck I/O shows with its age.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_MAX_QUEUES);
	__type(key, u32);
	__type(value, u64);
} oldest_issue SEC(".maps");

/* Whole-disk dev_t values chosen with -d (consulted once per device). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TS_MAX_QUEUES);
	__type(key, u32);
	__type(value, u8);
} dev_filter SEC(".maps");

/* Kernels before 5.16 kept the disk in the request. */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/* One hop of a pointer chain: a direct load in tp_btf, a probe read else. */
#define LOAD(direct, dst, src)                                         \
	do {                                                           \
		if (direct)                                            \
			(dst) = (src);                                 \
		else                                                   \
			bpf_core_read(&(dst), sizeof(dst), &(src));    \
	} while (0)

/*
 * Low 32 bits of a kernel address as a plain number: a 32-bit move is the
 * one way the verifier lets a (privileged) program turn a typed pointer
 * into a scalar it can hash.
 */
static __always_inline u32 addr_lo(u64 addr)
{
	u32 lo;

	asm volatile("%[lo] = %[addr]" : [lo] "=w"(lo) : [addr] "w"((u32)addr));
	return lo;
}

static __always_inline void count_event(u32 qid, enum ts_event ev)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);

	if (ds)
		ds->events[ev]++;
}

/* A tracked request's completion was never seen: count it by direction. */
static __always_inline void count_missed(u32 qid, u8 op)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);

	if (!ds)
		return;
	ds->events[TS_EV_MISSED_C]++;
	if (op < TS_NR_OPS)
		ds->op[op].missed++;
}

/* A request the request table had no slot for: counted, not timed. */
static __always_inline void count_untracked(u32 qid, u8 op)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);

	if (!ds)
		return;
	ds->events[TS_EV_RQ_FULL]++;
	if (op < TS_NR_OPS)
		ds->op[op].missed++;
}

static __always_inline void level_add(u64 *levels, s64 depth, u64 delta)
{
	int slot = ts_level_slot(depth < 0 ? 0 : (u32)depth);

	if (slot < 0 || slot >= TS_LEVEL_SLOTS)
		return;
	__sync_fetch_and_add(&levels[slot], delta);
}

/* Depth goes up by one at @now: the new level opens. Returns the depth. */
static __always_inline s64 depth_up(s64 *depth, u64 *levels, u64 now)
{
	s64 d = __sync_fetch_and_add(depth, 1) + 1;

	level_add(levels, d, TS_LEVEL_BIAS - now);
	return d;
}

/* Depth goes down by one at @now: the level it leaves closes. */
static __always_inline void depth_down(s64 *depth, u64 *levels, u64 now)
{
	s64 d = __sync_fetch_and_add(depth, -1);

	level_add(levels, d, now - TS_LEVEL_BIAS);
}

/* When a request issued at @issue_ns probably completed, as of @now. */
static __always_inline u64 estimated_end(u32 qid, u64 issue_ns, u64 now)
{
	u64 *hint = bpf_map_lookup_elem(&service_hint, &qid);
	u64 end = issue_ns + (hint ? *hint : 0);

	return end < now ? end : now;
}

static __always_inline struct gendisk *disk_of(struct request_queue *q,
					       struct request *rq, bool direct)
{
	struct gendisk *disk = NULL;

	if (bpf_core_field_exists(q->disk))
		LOAD(direct, disk, q->disk);
	else if (rq)
		bpf_core_read(&disk, sizeof(disk),
			      &((struct request___old *)rq)->rq_disk);
	return disk;
}

static long zero_hist_word(u32 word, struct ts_hist **h)
{
	if (word >= TS_HIST_U64S)
		return 1;
	((u64 *)*h)[word] = 0;
	return 0;
}

static long zero_depth_word(u32 word, struct ts_depth_hist **h)
{
	if (word >= sizeof(**h) / sizeof(u64))
		return 1;
	((u64 *)*h)[word] = 0;
	return 0;
}

/*
 * Histograms for a device just claimed: the entry's old slot, emptied (the
 * queue id was reused), or a new one while there are any left.
 */
static __always_inline void claim_hists(struct ts_dev_state *st)
{
	u32 slot = st->hist_slot, idx;
	struct ts_depth_hist *dh;
	struct ts_hist *h;
	int op;

	if (!slot) {
		slot = __sync_fetch_and_add(&hist_next, 1);
		if (slot < TS_HIST_DEVS)
			st->hist_slot = slot + 1;
		return;
	}
	for (op = 0; op < TS_NR_OPS; op++) {
		idx = (slot - 1) * TS_NR_OPS + op;
		h = bpf_map_lookup_elem(&hists, &idx);
		if (h)
			bpf_loop(TS_HIST_U64S, zero_hist_word, &h, 0);
	}
	idx = slot - 1;
	dh = bpf_map_lookup_elem(&depth_hists, &idx);
	if (dh)
		bpf_loop(sizeof(*dh) / sizeof(u64), zero_depth_word, &dh, 0);
}

/* First sight of a queue in entry @st: decide whether to trace it. */
static __noinline bool claim_device(struct ts_dev_state *st,
				    struct request_queue *q, u64 disk_addr,
				    u32 dev, bool request_based)
{
	u64 old = st->queue;
	u32 mode = TS_DEV_TRACED;
	int i;

	if (!disk_addr || !request_based)
		mode = TS_DEV_IGNORED;
	else if (filter_devices && !bpf_map_lookup_elem(&dev_filter, &dev))
		mode = TS_DEV_IGNORED;
	if (__sync_val_compare_and_swap(&st->queue, old, (u64)q) != old)
		return false;
	st->mode = TS_DEV_UNSEEN;
	if (mode == TS_DEV_TRACED)
		claim_hists(st);
	st->in_device = 0;
	st->in_os = 0;
	for (i = 0; i < TS_LEVEL_SLOTS; i++) {
		st->device_level[i] = 0;
		st->os_level[i] = 0;
		asm volatile("" ::: "memory"); /* a loop, not a memset call */
	}
	st->dev = dev;
	st->mode = mode;
	return mode == TS_DEV_TRACED;
}

/* The traced device owning @q, or NULL. */
static __always_inline struct ts_dev_state *
device_of(struct request_queue *q, struct request *rq, bool direct, u32 *qid)
{
	struct ts_dev_state *st;
	struct gendisk *disk;
	const void *mq_ops;
	int id, major, minor;

	if (!q)
		return NULL;
	LOAD(direct, id, q->id);
	*qid = id;
	st = bpf_map_lookup_elem(&dev_state, qid);
	if (!st)
		return NULL;
	if (st->queue == (u64)q)
		return st->mode == TS_DEV_TRACED ? st : NULL;
	disk = disk_of(q, rq, direct);
	if (!disk)
		return NULL;
	LOAD(direct, major, disk->major);
	LOAD(direct, minor, disk->first_minor);
	LOAD(direct, mq_ops, q->mq_ops);
	if (!claim_device(st, q, (u64)disk, (u32)major << 20 | minor, mq_ops))
		return NULL;
	return st;
}

/*
 * Request table. The record of @rq, or a free slot claimed for it. *stale
 * is set when a record of @rq already existed: its completion was missed.
 */
static __always_inline struct ts_rq_slot *rq_slot(u64 rq, bool claim,
						  bool *stale)
{
	struct ts_rq_slot *s;
	u32 h = ts_ptr_hash(addr_lo(rq), TS_RQ_BITS), idx;
	int i;

	for (i = 0; i < TS_RQ_PROBES; i++) {
		idx = (h + i) & rq_mask & (TS_RQ_SLOTS - 1);
		s = bpf_map_lookup_elem(&rq_slots, &idx);
		if (s && s->rq == rq) {
			*stale = claim;
			return s;
		}
	}
	if (!claim)
		return NULL;
	/* free slots in probe order; one taken meanwhile by another CPU: next */
	for (i = 0; i < TS_RQ_PROBES; i++) {
		idx = (h + i) & rq_mask & (TS_RQ_SLOTS - 1);
		s = bpf_map_lookup_elem(&rq_slots, &idx);
		if (s && !s->rq && __sync_val_compare_and_swap(&s->rq, 0, rq) == 0)
			return s;
	}
	return NULL;
}

/* Bio table: the record of @bio, or (claim) a free slot for it. */
static __always_inline struct ts_bio_slot *bio_slot(u64 bio, bool claim)
{
	struct ts_bio_slot *s;
	u32 h = ts_ptr_hash(addr_lo(bio), TS_BIO_BITS), idx;
	int i;

	for (i = 0; i < TS_BIO_PROBES; i++) {
		idx = (h ^ i) & (TS_BIO_SLOTS - 1);
		s = bpf_map_lookup_elem(&bio_slots, &idx);
		if (s && s->bio == bio)
			return s;
	}
	if (!claim)
		return NULL;
	for (i = 0; i < TS_BIO_PROBES; i++) {
		idx = (h ^ i) & (TS_BIO_SLOTS - 1);
		s = bpf_map_lookup_elem(&bio_slots, &idx);
		if (s && !s->bio && __sync_val_compare_and_swap(&s->bio, 0, bio) == 0)
			return s;
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
		depth_down(&st->in_os, st->os_level, now);
}

/* @bio enters the OS queue of @st with Q time @queued_ns. */
static __always_inline void bio_enter(struct ts_dev_state *st, u32 qid,
				      u64 bio, u64 queued_ns, u64 now)
{
	struct ts_bio_slot *s = bio_slot(bio, true);

	if (!s) {
		count_event(qid, TS_EV_BIO_FULL);
		return;
	}
	if (s->queued_ns) /* same address Q'd again: the old bio left unseen */
		os_leave(s, TS_EV_STALE_BIO, now);
	s->queued_ns = queued_ns;
	s->qid = qid;
	depth_up(&st->in_os, st->os_level, now);
}

/*
 * @bio leaves the OS queue of device @qid: its Q time, or 0 when it was not
 * recorded there (a record from another device is a bio that left unseen).
 */
static __always_inline u64 bio_leave(u32 qid, u64 bio, u64 now)
{
	struct ts_bio_slot *s = bio_slot(bio, false);
	u64 queued_ns;

	if (!s)
		return 0;
	queued_ns = s->qid == qid ? s->queued_ns : 0;
	os_leave(s, queued_ns ? -1 : TS_EV_STALE_BIO, now);
	s->queued_ns = 0;
	s->bio = 0;
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
 * A tracked request completed unseen: it leaves the depth of the device it
 * was issued on (with a tag set shared between queues, the same request can
 * come back on another) at its estimated end, and is counted there.
 */
static __always_inline void forget_request(u32 qid, u8 op, u64 issue_ns,
					   u64 now)
{
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);

	count_missed(qid, op);
	if (st)
		depth_down(&st->in_device, st->device_level,
			   estimated_end(qid, issue_ns, now));
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

static __always_inline int on_issue(struct request *rq, bool direct)
{
	struct request_queue *q;
	struct ts_dev_state *st;
	struct ts_rq_slot *s;
	struct bio *bio;
	bool stale = false;
	u32 qid, cmd_flags, bytes;
	u64 now;

	LOAD(direct, q, rq->q);
	st = device_of(q, rq, direct, &qid);
	if (!st)
		return 0;
	now = bpf_ktime_get_ns();
	s = rq_slot((u64)rq, true, &stale);
	if (!s) {
		/*
		 * Not tracked: counted with the requests whose completion is
		 * not timed, by direction; its bio leaves the OS queue.
		 */
		LOAD(direct, cmd_flags, rq->cmd_flags);
		count_untracked(qid, op_of(cmd_flags));
		LOAD(direct, bio, rq->bio);
		if (bio && !light)
			bio_leave(qid, (u64)bio, now);
		return 0;
	}
	if (stale) /* its last completion went unseen */
		forget_request(s->qid, s->op, s->issue_ns, now);
	LOAD(direct, cmd_flags, rq->cmd_flags);
	LOAD(direct, bytes, rq->__data_len);
	LOAD(direct, bio, rq->bio);
	s->queued_ns = 0;
	if (light) {
		s->queued_ns = queued_at_alloc(rq, direct, now);
		if (!s->queued_ns)
			count_event(qid, TS_EV_NO_QUEUE_TIME);
	} else if (bio) { /* flush commands carry no bio: they never had a Q */
		s->queued_ns = bio_leave(qid, (u64)bio, now);
		if (!s->queued_ns)
			count_event(qid, TS_EV_NO_QUEUE_TIME);
	}
	s->issue_ns = now;
	s->bytes = bytes;
	s->qid = qid;
	s->op = op_of(cmd_flags);
	s->depth_class = ts_depth_class(depth_up(&st->in_device,
						 st->device_level, now));
	return 0;
}

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

/* One completion into its device's histograms; false when it has none. */
static __always_inline bool hist_add(u32 slot, u8 op, u64 issue_ns,
				     u64 queued_ns, u64 now, u32 bytes)
{
	u32 idx = (slot - 1) * TS_NR_OPS + op;
	struct ts_hist *h;
	u64 b;

	if (!slot)
		return false;
	h = bpf_map_lookup_elem(&hists, &idx);
	if (!h)
		return false;
	hist_count(h->service, now - issue_ns);
	if (queued_ns) {
		hist_count(h->queue, issue_ns - queued_ns);
		hist_count(h->total, now - queued_ns);
	}
	b = ts_size_bucket(bytes);
	barrier_var(b);
	if (b < TS_SIZE_SLOTS)
		__sync_fetch_and_add(&h->size[b], 1);
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

static __always_inline int on_complete(struct request *rq, u32 nr_bytes,
				       bool direct)
{
	struct ts_op_stats *os;
	struct ts_dev_stats *ds;
	struct request_queue *q;
	struct ts_dev_state *st;
	struct ts_rq_slot *s;
	struct bio *bio;
	u64 now, issue_ns, queued_ns;
	u32 qid, data_len, bytes;
	u8 op, depth_class;
	bool stale;

	LOAD(direct, q, rq->q);
	st = device_of(q, rq, direct, &qid);
	if (!st)
		return 0;
	LOAD(direct, data_len, rq->__data_len);
	if (nr_bytes < data_len) {
		count_event(qid, TS_EV_PARTIAL);
		return 0;
	}
	now = bpf_ktime_get_ns();
	s = rq_slot((u64)rq, false, &stale);
	if (!s) {
		LOAD(direct, bio, rq->bio);
		if (bio && !light && bio_leave(qid, (u64)bio, now))
			count_event(qid, TS_EV_UNISSUED);
		else if (!data_len)
			count_event(qid, TS_EV_FLUSH_SEQ);
		else
			count_event(qid, TS_EV_UNMATCHED);
		return 0;
	}
	issue_ns = s->issue_ns;
	queued_ns = s->queued_ns;
	bytes = s->bytes;
	op = s->op;
	depth_class = s->depth_class;
	s->rq = 0;
	depth_down(&st->in_device, st->device_level, now);

	ds = bpf_map_lookup_elem(&dev_stats, &qid);
	if (!ds || op >= TS_NR_OPS)
		return 0;
	os = &ds->op[op];
	os->ios++;
	os->bytes += bytes;
	os->service_ns += now - issue_ns;
	if (queued_ns) {
		os->queued_ios++;
		os->queue_ns += issue_ns - queued_ns;
		os->total_ns += now - queued_ns;
	}
	if (!hist_add(st->hist_slot, op, issue_ns, queued_ns, now, bytes))
		ds->events[TS_EV_NO_HIST]++;
	else
		depth_hist_add(st->hist_slot, depth_class, now - issue_ns);
	return 0;
}

/* The driver gave @rq back: it leaves the device and waits in the OS again. */
static __always_inline int on_requeue(struct request *rq, bool direct)
{
	struct request_queue *q;
	struct ts_dev_state *st;
	struct ts_rq_slot *s;
	struct bio *bio;
	u64 now, queued_ns;
	bool stale;
	u32 qid;

	LOAD(direct, q, rq->q);
	st = device_of(q, rq, direct, &qid);
	if (!st)
		return 0;
	s = rq_slot((u64)rq, false, &stale);
	if (!s)
		return 0; /* not issued while we traced: still in the OS */
	now = bpf_ktime_get_ns();
	count_event(qid, TS_EV_REQUEUE);
	queued_ns = s->queued_ns;
	s->rq = 0;
	depth_down(&st->in_device, st->device_level, now);
	if (light) /* its start_time_ns stays: Q goes on from there */
		return 0;
	LOAD(direct, bio, rq->bio);
	if (bio && queued_ns)
		bio_enter(st, qid, (u64)bio, queued_ns, now);
	return 0;
}

static __always_inline struct request_queue *queue_of_bio(struct bio *bio,
							  bool direct)
{
	struct block_device *bdev;
	struct request_queue *q = NULL;

	LOAD(direct, bdev, bio->bi_bdev);
	if (bdev)
		LOAD(direct, q, bdev->bd_queue);
	return q;
}

static __always_inline int on_bio_queue(struct bio *bio, bool direct)
{
	struct ts_dev_state *st;
	u32 qid;
	u64 now;

	st = device_of(queue_of_bio(bio, direct), NULL, direct, &qid);
	if (!st)
		return 0;
	now = bpf_ktime_get_ns();
	bio_enter(st, qid, (u64)bio, now, now);
	return 0;
}

/*
 * A bio merged into a waiting request leaves with that request; block_bio_complete
 * fires only for bios that end without an issued request carrying them.
 */
static __always_inline int on_bio_merge(struct bio *bio, bool direct)
{
	struct ts_dev_state *st;
	u32 qid;

	st = device_of(queue_of_bio(bio, direct), NULL, direct, &qid);
	if (st)
		bio_leave(qid, (u64)bio, bpf_ktime_get_ns());
	return 0;
}

/* A split's front part is a new bio that inherits its parent's Q time. */
static __always_inline int on_bio_split(struct bio *split, bool direct)
{
	struct ts_bio_slot *parent_slot;
	struct ts_dev_state *st;
	void *parent;
	u64 now, queued_ns;
	u32 qid;

	st = device_of(queue_of_bio(split, direct), NULL, direct, &qid);
	if (!st)
		return 0;
	LOAD(direct, parent, split->bi_private);
	parent_slot = bio_slot((u64)parent, false);
	if (!parent_slot)
		return 0;
	queued_ns = parent_slot->queued_ns;
	now = bpf_ktime_get_ns();
	if (queued_ns)
		bio_enter(st, qid, (u64)split, queued_ns, now);
	return 0;
}

/*
 * The sweep: run by the loader once per interval (BPF_PROG_TEST_RUN), never
 * attached. A tracked request whose struct request is idle again was
 * completed without our completion program running (seen on 6.18 at high
 * IOPS: the tracepoint fired, the program did not, recursion_misses 0).
 * It must be seen idle by two sweeps (10 ms apart) with the same issue
 * time, so that a request caught between our issue handler and the kernel
 * marking it in flight is never taken for one. It leaves the depth at its
 * estimated end (issue + recent mean service) and is counted. On the way,
 * the sweep notes each device's oldest request still in flight.
 */
struct sweep_ctx {
	u64 now;
};

static long sweep_slot(u32 idx, struct sweep_ctx *ctx)
{
	struct ts_rq_slot *s;
	u64 *oldest;
	enum mq_rq_state state;
	u64 rq, issue_ns;
	u32 qid;
	u8 op;

	s = bpf_map_lookup_elem(&rq_slots, &idx);
	if (!s || !(rq = s->rq))
		return 0;
	if (bpf_core_read(&state, sizeof(state), &((struct request *)rq)->state))
		return 0;
	issue_ns = s->issue_ns;
	if (state != MQ_RQ_IDLE) {
		s->suspect_ns = 0;
		qid = s->qid;
		oldest = bpf_map_lookup_elem(&oldest_issue, &qid);
		if (oldest && issue_ns < *oldest)
			*oldest = issue_ns;
		return 0;
	}
	if (s->suspect_ns != issue_ns) {
		s->suspect_ns = issue_ns;
		return 0;
	}
	qid = s->qid;
	op = s->op;
	if (__sync_val_compare_and_swap(&s->rq, rq, 0) != rq)
		return 0;
	forget_request(qid, op, issue_ns, ctx->now);
	return 0;
}

static long forget_oldest(u32 qid, void *unused)
{
	u64 *oldest = bpf_map_lookup_elem(&oldest_issue, &qid);

	if (oldest)
		*oldest = ~0ULL;
	return 0;
}

SEC("raw_tp")
int ts_sweep(void *ctx)
{
	struct sweep_ctx sweep = { .now = bpf_ktime_get_ns() };

	if (test_verifier_failure)
		return *(volatile int *)sweep.now; /* not a pointer: rejected */
	bpf_loop(TS_MAX_QUEUES, forget_oldest, NULL, 0);
	bpf_loop(TS_RQ_SLOTS, sweep_slot, &sweep, 0);
	return 0;
}

/*
 * For tests/tools/hist-check: the bucket functions of include/hist.h as the
 * BPF compiler built them, run (BPF_PROG_TEST_RUN) over hist_check_in.
 * Never loaded by truestat itself.
 */
__u64 hist_check_in[TS_HIST_CHECK_N];
__u32 hist_check_bucket[TS_HIST_CHECK_N];
__u32 hist_check_size[TS_HIST_CHECK_N];

static long hist_check_one(u32 i, void *unused)
{
	if (i >= TS_HIST_CHECK_N)
		return 1;
	hist_check_bucket[i] = ts_hist_bucket(hist_check_in[i]);
	hist_check_size[i] = ts_size_bucket(hist_check_in[i]);
	return 0;
}

SEC("raw_tp")
int ts_hist_check(void *ctx)
{
	bpf_loop(TS_HIST_CHECK_N, hist_check_one, NULL, 0);
	return 0;
}

/*
 * One set of programs per attach kind (tp_btf, raw_tp) and argument layout:
 * before 5.11 the block_rq_* and block_bio_* tracepoints took the
 * request_queue first (A = 1). The loader picks the set from BTF.
 */
#define TS_PROGS(kind, direct, name, A)                                     \
	SEC(#kind "/block_rq_issue")                                        \
	int ts_issue_##name(u64 *ctx)                                       \
	{                                                                   \
		if (bench_empty)                                            \
			return 0;                                           \
		return on_issue((struct request *)ctx[A], direct);          \
	}                                                                   \
	SEC(#kind "/block_rq_complete")                                     \
	int ts_complete_##name(u64 *ctx)                                    \
	{                                                                   \
		if (bench_empty)                                            \
			return 0;                                           \
		return on_complete((struct request *)ctx[0], (u32)ctx[2],   \
				   direct);                                 \
	}                                                                   \
	SEC(#kind "/block_rq_requeue")                                      \
	int ts_requeue_##name(u64 *ctx)                                     \
	{                                                                   \
		if (bench_empty)                                            \
			return 0;                                           \
		return on_requeue((struct request *)ctx[A], direct);        \
	}                                                                   \
	SEC(#kind "/block_bio_queue")                                       \
	int ts_bio_queue_##name(u64 *ctx)                                   \
	{                                                                   \
		if (bench_empty)                                            \
			return 0;                                           \
		return on_bio_queue((struct bio *)ctx[A], direct);          \
	}                                                                   \
	SEC(#kind "/block_bio_backmerge")                                   \
	int ts_backmerge_##name(u64 *ctx)                                   \
	{                                                                   \
		if (bench_empty)                                            \
			return 0;                                           \
		return on_bio_merge((struct bio *)ctx[A], direct);          \
	}                                                                   \
	SEC(#kind "/block_bio_frontmerge")                                  \
	int ts_frontmerge_##name(u64 *ctx)                                  \
	{                                                                   \
		if (bench_empty)                                            \
			return 0;                                           \
		return on_bio_merge((struct bio *)ctx[A], direct);          \
	}                                                                   \
	SEC(#kind "/block_split")                                           \
	int ts_split_##name(u64 *ctx)                                       \
	{                                                                   \
		if (bench_empty)                                            \
			return 0;                                           \
		return on_bio_split((struct bio *)ctx[A], direct);          \
	}                                                                   \
	SEC(#kind "/block_bio_complete")                                    \
	int ts_bio_complete_##name(u64 *ctx)                                \
	{                                                                   \
		if (bench_empty)                                            \
			return 0;                                           \
		return on_bio_merge((struct bio *)ctx[1], direct);          \
	}

TS_PROGS(tp_btf, true, btf, 0)
TS_PROGS(raw_tp, false, raw, 0)
TS_PROGS(tp_btf, true, btf_q, 1)
TS_PROGS(raw_tp, false, raw_q, 1)
