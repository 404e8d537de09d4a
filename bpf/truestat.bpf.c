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

/* struct bvec_iter is packed; the reads of its fields are of whole fields */
#pragma clang diagnostic ignored "-Waddress-of-packed-member"

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
/*
 * TRUESTAT_TEST_MISS_EVERY: the completion program ignores one completion
 * of a traced disk in this many, as if the platform had dropped it, so that
 * tests prove the repair path in every run. 0 (always, outside tests): the
 * verifier removes the branch.
 */
const volatile __u32 test_miss_every = 0;
__u64 test_miss_tick;
/*
 * The bit of bio->bi_flags that the kernel sets at Q and clears when it
 * traces the bio's C (BIO_TRACE_COMPLETION: its value differs between
 * kernels, so the loader reads it from the kernel's BTF). The sweep takes a
 * bio-layer record whose bio has it clear for a completion it did not see.
 * 0xff: unknown, never repaired that way.
 */
const volatile __u32 bio_traced_bit = 0xff;

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
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TS_REPAIR_SLOTS);
	__type(key, u32);
	__type(value, struct ts_repair);
} repairs SEC(".maps");

__u64 repair_count;

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

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_RQ_SLOTS);
	__type(key, u32);
	__type(value, struct ts_layer_rec);
} layer_recs SEC(".maps");

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
	__uint(max_entries, TS_MAX_QUEUES);
	__type(key, u32);
	__type(value, u8);
} stacked SEC(".maps");

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

/*
 * @ptr as a plain number that a helper may read as a map key or value: a
 * pointer copied to the stack and handed to a map helper is not one for
 * the verifier of 6.1 and 6.12 (it loses the pointer's type there, and the
 * program is rejected). A copy through bpf_probe_read_kernel is a number.
 */
static __always_inline u64 ptr_value(const void *ptr)
{
	u64 tmp = (u64)ptr, v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &tmp);
	return v;
}

static __always_inline void count_event(u32 qid, enum ts_event ev)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);

	if (ds)
		ds->events[ev]++;
}

/*
 * A request that completed untimed, by direction: its completion was never
 * seen (TS_EV_MISSED_C), or the request table had no slot for it.
 */
static __always_inline void count_missed(u32 qid, enum ts_event ev, u8 op,
					 u32 bytes)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);
	u64 i = op;

	if (!ds)
		return;
	ds->events[ev]++;
	barrier_var(i); /* see hist_count */
	if (i >= TS_NR_OPS)
		return;
	ds->op[i].missed++;
	ds->op[i].missed_bytes += bytes;
}

static __always_inline void level_add(u64 *levels, s64 depth, u64 delta)
{
	int slot = ts_level_slot(depth < 0 ? 0 : (u32)depth);

	if (slot < 0 || slot >= TS_LEVEL_SLOTS)
		return;
	__sync_fetch_and_add(&levels[slot], delta);
}

/* Raises *@peak to @d unless it is already as high. */
static __always_inline void peak_raise(s64 *peak, s64 d)
{
	s64 old;
	int i;

	for (i = 0; i < 4; i++) {
		old = *(volatile s64 *)peak;
		if (old >= d || __sync_val_compare_and_swap(peak, old, d) == old)
			return;
	}
}

/*
 * Depth *@word goes up (@step 1) or down (-1) at @now, or at the last
 * change's time if that is later: the level it opens or leaves gets the
 * time. Returns the new depth. A change that loses its race 16 times is
 * made with the clock as read and counted (@qid, TS_EV_CONTENDED).
 * @backdate: a repair closing a level at an estimated, earlier @now; the
 * stamp stays (the report says its depth is not exact).
 */
static __always_inline s64 depth_step(u64 *word, u64 *levels, s64 *peak,
				      s64 step, u64 now, u32 qid, bool backdate)
{
	u64 old = 0, new = 0, t = now;
	int i;

	for (i = 0; i < 16; i++) {
		old = *(volatile u64 *)word;
		t = backdate ? now : ts_change_time(old, now);
		new = ((old & ~TS_CLOCK_MASK) + ((u64)step << TS_CLOCK_BITS)) |
		      ((backdate ? old : t) & TS_CLOCK_MASK);
		if (__sync_val_compare_and_swap(word, old, new) == old)
			break;
	}
	if (i == 16) {
		count_event(qid, TS_EV_CONTENDED);
		t = now;
		new = __sync_fetch_and_add(word, (u64)step << TS_CLOCK_BITS) +
		      ((u64)step << TS_CLOCK_BITS);
		old = new - ((u64)step << TS_CLOCK_BITS);
	}
	if (step > 0) {
		level_add(levels, ts_depth_of(new), TS_LEVEL_BIAS - t);
		peak_raise(peak, ts_depth_of(new));
	} else {
		level_add(levels, ts_depth_of(old), t - TS_LEVEL_BIAS);
	}
	return ts_depth_of(new);
}

static __always_inline s64 device_up(struct ts_dev_state *st, u32 qid, u64 now)
{
	return depth_step(&st->in_device, st->device_level, &st->device_peak,
			  1, now, qid, false);
}

static __always_inline void device_down(struct ts_dev_state *st, u32 qid,
					u64 now, bool backdate)
{
	depth_step(&st->in_device, st->device_level, &st->device_peak, -1, now,
		   qid, backdate);
}

static __always_inline void os_up(struct ts_dev_state *st, u32 qid, u64 now)
{
	depth_step(&st->in_os, st->os_level, &st->os_peak, 1, now, qid, false);
}

static __always_inline void os_down(struct ts_dev_state *st, u32 qid, u64 now)
{
	depth_step(&st->in_os, st->os_level, &st->os_peak, -1, now, qid, false);
}

/* When a request issued at @issue_ns probably completed, as of @now. */
static __always_inline u64 estimated_end(u32 qid, u64 issue_ns, u64 now)
{
	u64 *hint = bpf_map_lookup_elem(&service_hint, &qid);
	u64 end = issue_ns + (hint ? *hint : 0);

	return end < now ? end : now;
}

/* The disk of @q, from the request or bio at hand before 5.16. */
static __always_inline struct gendisk *disk_of(struct request_queue *q,
					       struct request *rq,
					       struct bio *bio, bool direct)
{
	struct gendisk *disk = NULL;
	struct block_device *bdev;

	if (bpf_core_field_exists(q->disk)) {
		LOAD(direct, disk, q->disk);
	} else if (rq) {
		bpf_core_read(&disk, sizeof(disk),
			      &((struct request___old *)rq)->rq_disk);
	} else if (bio) {
		LOAD(direct, bdev, bio->bi_bdev);
		if (bdev)
			LOAD(direct, disk, bdev->bd_disk);
	}
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

/*
 * First sight of a queue in entry @st: decide whether to trace it. The
 * entry is claimed with bit 0 of its queue set, reset, and published last:
 * an event meanwhile on another CPU sees a queue that is not its own, finds
 * the claim under way and is counted (TS_EV_CLAIMING), never applied to a
 * half-reset entry. Returns the entry's mode, or -1 when another CPU is
 * claiming it.
 */
static __noinline int claim_device(struct ts_dev_state *st,
				   struct request_queue *q, u64 disk_addr,
				   u32 dev, bool request_based)
{
	u64 old = st->queue, stamp;
	u32 mode = TS_DEV_TRACED;
	int i;

	if ((old & 1) ||
	    __sync_val_compare_and_swap(&st->queue, old, (u64)q + 1) != old)
		return -1;
	if (!disk_addr)
		mode = TS_DEV_IGNORED;
	else if (filter_devices && !bpf_map_lookup_elem(&dev_filter, &dev))
		mode = TS_DEV_IGNORED;
	if (mode == TS_DEV_TRACED)
		claim_hists(st);
	stamp = bpf_ktime_get_ns() & TS_CLOCK_MASK;
	st->in_device = stamp;
	st->in_os = stamp;
	st->device_peak = st->os_peak = 0;
	st->device_peak_taken = st->os_peak_taken = 0;
	st->suspects = 0;
	st->layer = request_based ? TS_LAYER_REQUEST : TS_LAYER_BIO;
	st->has_uppers = 0;
	for (i = 0; i < TS_LEVEL_SLOTS; i++) {
		st->device_level[i] = 0;
		st->os_level[i] = 0;
		asm volatile("" ::: "memory"); /* a loop, not a memset call */
	}
	st->dev = dev;
	st->mode = mode;
	__sync_val_compare_and_swap(&st->queue, (u64)q + 1, (u64)q);
	return mode;
}

/* The traced device owning @q (of @rq or @bio), or NULL. */
static __always_inline struct ts_dev_state *
device_of(struct request_queue *q, struct request *rq, struct bio *bio,
	  bool direct, u32 *qid)
{
	struct ts_dev_state *st;
	struct gendisk *disk;
	const void *mq_ops;
	int id, major, minor, mode;

	if (!q)
		return NULL;
	LOAD(direct, id, q->id);
	*qid = id;
	st = bpf_map_lookup_elem(&dev_state, qid);
	if (!st)
		return NULL;
	if (st->queue == (u64)q)
		return st->mode == TS_DEV_TRACED ? st : NULL;
	disk = disk_of(q, rq, bio, direct);
	if (!disk)
		return NULL;
	LOAD(direct, major, disk->major);
	LOAD(direct, minor, disk->first_minor);
	LOAD(direct, mq_ops, q->mq_ops);
	mode = claim_device(st, q, (u64)disk, (u32)major << 20 | minor, mq_ops);
	if (mode < 0)
		count_event(id, TS_EV_CLAIMING);
	return mode == TS_DEV_TRACED ? st : NULL;
}

/*
 * Request table. A slot's rq is 0 (free), the request's address, or the
 * address + 1 while a writer holds the record (a re-issue rewriting it, the
 * sweep checking it). A record is taken away by one compare-and-swap on rq,
 * so exactly one of the completion, a re-issue and the sweep ends it.
 */
static __always_inline struct ts_rq_slot *rq_find(u64 rq, u32 *at)
{
	struct ts_rq_slot *s;
	u32 h = ts_ptr_hash(addr_lo(rq), TS_RQ_BITS), idx;
	int i;

	for (i = 0; i < TS_RQ_PROBES; i++) {
		idx = (h + i) & rq_mask & (TS_RQ_SLOTS - 1);
		s = bpf_map_lookup_elem(&rq_slots, &idx);
		if (s && (s->rq == rq || s->rq == rq + 1)) {
			*at = idx;
			return s;
		}
	}
	return NULL;
}

/*
 * Swaps @s's rq from @rq to @to: true when this CPU won the record. While
 * the sweep holds it (a few instructions), wait for it.
 */
static __always_inline bool rq_take(struct ts_rq_slot *s, u64 rq, u64 to)
{
	int i;

	for (i = 0; i < 8; i++) {
		if (__sync_val_compare_and_swap(&s->rq, rq, to) == rq)
			return true;
		if (s->rq != rq + 1)
			return false;
	}
	return false;
}

/* A free slot for @rq (its index in *@at), or NULL: its probes all taken. */
static __always_inline struct ts_rq_slot *rq_claim(u64 rq, u32 *at)
{
	struct ts_rq_slot *s;
	u32 h = ts_ptr_hash(addr_lo(rq), TS_RQ_BITS), idx;
	int i;

	/* free slots in probe order; one taken meanwhile by another CPU: next */
	for (i = 0; i < TS_RQ_PROBES; i++) {
		idx = (h + i) & rq_mask & (TS_RQ_SLOTS - 1);
		s = bpf_map_lookup_elem(&rq_slots, &idx);
		if (s && !s->rq &&
		    __sync_val_compare_and_swap(&s->rq, 0, rq) == 0) {
			*at = idx;
			return s;
		}
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
		os_down(st, qid, now);
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
	os_up(st, qid, now);
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

/*
 * The bios of a request being issued, from @bio (its first), leave the OS
 * queue; returns the earliest Q among them. Stops at the first recorded
 * one, unless @all: a front merge puts the new bio first, and its record
 * left at the merge, so the request's own Q is behind it; a discard merge
 * has no event at all, so a discard's bios all leave here.
 */
#define TS_BIO_WALK 8

static __always_inline u64 bios_leave(u32 qid, struct bio *bio, bool all,
				      bool direct, u64 now)
{
	u64 queued_ns = 0, q;
	int i;

	for (i = 0; i < TS_BIO_WALK && bio; i++) {
		q = bio_leave(qid, (u64)bio, now);
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
	u32 qid = s->qid;
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);
	u64 n = __sync_fetch_and_add(&repair_count, 1);
	u32 idx = n & (TS_REPAIR_SLOTS - 1);
	struct ts_repair *r = bpf_map_lookup_elem(&repairs, &idx);

	if (r) {
		r->issue_ns = s->issue_ns;
		r->found_ns = now;
		r->qid = qid;
		__sync_lock_test_and_set(&r->seq, n + 1);
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
					     bool direct, u64 now)
{
	u64 queued_ns;

	if (light)
		queued_ns = queued_at_alloc(rq, direct, now);
	else if (!bio) /* flush commands carry no bio: they never had a Q */
		return 0;
	else
		queued_ns = bios_leave(qid, bio, op == TS_OP_DISCARD, direct,
				       now);
	if (!queued_ns)
		count_event(qid, TS_EV_NO_QUEUE_TIME);
	return queued_ns;
}

/*
 * A record for @addr (a request, or a bio of a bio layer) being issued:
 * its old one, held, when its last completion went unseen (repaired
 * here), else a free slot; NULL when the table has none.
 */
static __always_inline struct ts_rq_slot *record_open(u64 addr, u64 now,
						      bool *held, u32 *at)
{
	struct ts_rq_slot *s = rq_find(addr, at);

	*held = s && rq_take(s, addr, addr + 1);
	if (!*held)
		return rq_claim(addr, at);
	forget_request(s, now);
	return s;
}

/* Fills record @s of @addr and puts it in @st's depth. */
static __always_inline void record_fill(struct ts_dev_state *st, u32 qid,
					struct ts_rq_slot *s, u64 addr,
					bool held, u64 queued_ns, u32 bytes,
					u8 op, u64 now)
{
	s->queued_ns = queued_ns;
	s->issue_ns = now;
	s->bytes = bytes;
	s->qid = qid;
	s->op = op;
	s->depth_class = ts_depth_class(device_up(st, qid, now));
	if (held)
		__sync_val_compare_and_swap(&s->rq, addr + 1, addr);
}

static __always_inline int on_issue(struct request *rq, bool direct)
{
	struct request_queue *q;
	struct ts_dev_state *st;
	struct ts_rq_slot *s;
	struct bio *bio;
	u32 qid, cmd_flags, bytes, at;
	u64 now, queued_ns;
	bool held;
	u8 op;

	LOAD(direct, q, rq->q);
	st = device_of(q, rq, NULL, direct, &qid);
	if (!st)
		return 0;
	now = bpf_ktime_get_ns();
	LOAD(direct, cmd_flags, rq->cmd_flags);
	LOAD(direct, bytes, rq->__data_len);
	LOAD(direct, bio, rq->bio);
	op = op_of(cmd_flags);
	s = record_open((u64)rq, now, &held, &at);
	queued_ns = request_queued_ns(rq, bio, qid, op, direct, now);
	if (!s) { /* not tracked: counted untimed, its bios left */
		count_missed(qid, TS_EV_RQ_FULL, op, bytes);
		return 0;
	}
	record_fill(st, qid, s, (u64)rq, held, queued_ns, bytes, op, now);
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

/* Histograms of device slot @slot (1 + index) for @op, or NULL: none. */
static __always_inline struct ts_hist *hist_of(u32 slot, u8 op)
{
	u32 idx = (slot - 1) * TS_NR_OPS + op;

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
	ds->events[TS_EV_UNISSUED]++;
	LOAD(direct, cmd_flags, rq->cmd_flags);
	op = op_of(cmd_flags);
	barrier_var(op); /* see hist_count */
	if (op < TS_NR_OPS)
		ds->op[op].unissued++;
}

/* A completion with no record of its request: what it was, counted. */
static __always_inline void complete_unknown(struct request *rq, u32 qid,
					     u32 data_len, bool direct, u64 now)
{
	struct bio *bio;

	LOAD(direct, bio, rq->bio);
	if (bio && !light && bio_leave(qid, (u64)bio, now))
		count_unissued(rq, qid, direct);
	else if (!data_len)
		count_event(qid, TS_EV_FLUSH_SEQ);
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
	__sync_val_compare_and_swap(&s->rq, rq + 1, 0);
}

/* TRUESTAT_TEST_MISS_EVERY: true for the completions to drop. */
static __always_inline bool test_drop(void)
{
	return test_miss_every &&
	       __sync_fetch_and_add(&test_miss_tick, 1) % test_miss_every == 0;
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

/*
 * Takes the record of @addr for its completion, copied to @rec first, and
 * its layer_recs entry to @mem when not NULL (a bio layer's): false when
 * there is none. A record that the sweep held and ended meanwhile was of an
 * older life; this one's may be in another slot (its issue found that one
 * held): looked for once more.
 */
static __always_inline bool record_end(u64 addr, struct ts_rq_slot *rec,
				       struct ts_layer_rec *mem)
{
	struct ts_layer_rec *m;
	struct ts_rq_slot *s;
	u32 at = 0;
	int i;

	for (i = 0; i < 2; i++) {
		s = rq_find(addr, &at);
		if (!s)
			return false;
		*rec = *s;
		m = mem ? bpf_map_lookup_elem(&layer_recs, &at) : NULL;
		if (m)
			*mem = *m;
		if (rq_take(s, addr, 0))
			return true;
	}
	return false;
}

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
	bool held;
	u8 op;

	LOAD(direct, opf, bio->bi_opf);
	LOAD(direct, bytes, bio->bi_iter.bi_size);
	LOAD(direct, key.sector, bio->bi_iter.bi_sector);
	op = op_of(opf);
	s = record_open(addr, now, &held, &at);
	if (!s) {
		count_missed(qid, TS_EV_RQ_FULL, op, bytes);
		return;
	}
	m = bpf_map_lookup_elem(&layer_recs, &at);
	if (m) {
		LOAD(direct, end_io, bio->bi_end_io);
		m->end_io = (u64)end_io;
		m->links = 0;
		m->sub_start_ns = 0;
		m->sub_end_ns = 0;
	}
	record_fill(st, qid, s, addr, held, now, bytes, op, now);
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

/* Member bio @bio completed: its stacked bio's record notes when. */
static __always_inline void member_done(u64 bio, u64 now)
{
	u64 key = ptr_value((void *)bio);
	u64 *upper = bpf_map_lookup_elem(&member_links, &key);
	struct ts_rq_slot *s;
	struct ts_layer_rec *m;
	u64 addr;

	if (!upper)
		return;
	addr = *upper;
	bpf_map_delete_elem(&member_links, &key);
	m = member_entry(addr, &s);
	if (m)
		m->sub_end_ns = now;
}

/* The bios of member request @rq completed. */
static __always_inline void members_done(struct request *rq, bool direct,
					 u64 now)
{
	struct bio *bio;
	int i;

	LOAD(direct, bio, rq->bio);
	for (i = 0; i < TS_BIO_WALK && bio; i++) {
		member_done((u64)bio, now);
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
	struct ts_op_stats *os;
	struct ts_hist *h;

	if (!ds || op >= TS_NR_OPS)
		return;
	os = &ds->op[op];
	os->ios++;
	os->bytes += bytes;
	os->service_ns += q_to_c;
	os->queued_ios++;
	os->total_ns += q_to_c;
	if (layer_ns) { /* 1 ns over, so that 0 means none */
		os->layer_ios++;
		os->layer_ns += layer_ns - 1;
	}
	h = hist_of(st->hist_slot, op);
	if (!h) {
		ds->events[TS_EV_NO_HIST]++;
		return;
	}
	hist_count(h->service, q_to_c);
	hist_count(h->total, q_to_c);
	if (layer_ns)
		hist_count(h->layer, layer_ns - 1);
	size_count(h, bytes);
	depth_hist_add(st->hist_slot, depth_class, q_to_c);
}

static __always_inline void layer_complete(struct ts_dev_state *st, u32 qid,
					   u64 bio, u64 now)
{
	struct ts_layer_rec mem = {};
	struct ts_rq_slot rec;
	u32 at;

	if (st->has_uppers)
		member_done(bio, now);
	if (!rq_find(bio, &at)) {
		count_event(qid, TS_EV_UNMATCHED);
		return;
	}
	if (test_drop())
		return;
	if (!record_end(bio, &rec, &mem)) { /* the sweep ended it meanwhile */
		count_event(qid, TS_EV_UNMATCHED);
		return;
	}
	device_down(st, qid, now, false);
	layer_account(st, qid, rec.op, rec.bytes, now - rec.issue_ns,
		      layer_time(&rec, &mem, qid, now), rec.depth_class);
}

/*
 * @bio, on its way to a member device, came from sector @from of stacked
 * device @dev (block_bio_remap; a partition's own remap, where the bio is
 * still on the device it names, is not a stack). The stacked bio that
 * starts there is linked to it when it is its first member bio and of its
 * size; any other makes it fanned out.
 */
static __always_inline int on_bio_remap(struct bio *bio, u32 dev, u64 from,
					bool direct)
{
	struct ts_layer_key key = { .dev = dev, .sector = from };
	struct block_device *bdev;
	u8 one = 1;
	struct ts_dev_state *member;
	struct ts_rq_slot *s;
	struct ts_layer_rec *m;
	u64 *upper, addr, member_key;
	u32 bd_dev, bytes, qid;

	LOAD(direct, bdev, bio->bi_bdev);
	if (!bdev)
		return 0;
	LOAD(direct, bd_dev, bdev->bd_dev);
	if (bd_dev == dev)
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
	if (__sync_fetch_and_add(&m->links, 1) || bytes != s->bytes) {
		m->links = 2;
		return 0;
	}
	m->sub_start_ns = bpf_ktime_get_ns();
	member_key = ptr_value(bio);
	bpf_map_update_elem(&member_links, &member_key, &addr, BPF_ANY);
	member = device_of(queue_of_bio(bio, direct), NULL, bio, direct, &qid);
	if (member && !member->has_uppers)
		member->has_uppers = 1;
	return 0;
}

/* A request's figures for one completion (its record already ended). */
static __always_inline void request_account(struct ts_dev_state *st, u32 qid,
					    const struct ts_rq_slot *rec,
					    u64 now)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);
	u64 issue_ns = rec->issue_ns, queued_ns = rec->queued_ns;
	struct ts_op_stats *os;
	u8 op = rec->op;

	if (!ds || op >= TS_NR_OPS)
		return;
	os = &ds->op[op];
	os->ios++;
	os->bytes += rec->bytes;
	os->service_ns += now - issue_ns;
	if (queued_ns) {
		os->queued_ios++;
		os->queue_ns += issue_ns - queued_ns;
		os->total_ns += now - queued_ns;
	}
	if (!hist_add(st->hist_slot, op, issue_ns, queued_ns, now, rec->bytes))
		ds->events[TS_EV_NO_HIST]++;
	else
		depth_hist_add(st->hist_slot, rec->depth_class, now - issue_ns);
}

static __always_inline int on_complete(struct request *rq, u32 nr_bytes,
				       bool direct)
{
	struct request_queue *q;
	struct ts_dev_state *st;
	struct ts_rq_slot *s, rec;
	u32 qid, data_len, at;
	u64 now;

	LOAD(direct, q, rq->q);
	st = device_of(q, rq, NULL, direct, &qid);
	if (!st)
		return 0;
	LOAD(direct, data_len, rq->__data_len);
	if (nr_bytes < data_len) {
		count_event(qid, TS_EV_PARTIAL);
		return 0;
	}
	now = bpf_ktime_get_ns();
	s = rq_find((u64)rq, &at);
	if (s && record_is_older(s, rq, data_len, direct)) {
		forget_held(s, (u64)rq, now);
		s = NULL;
	}
	if (!s) {
		complete_unknown(rq, qid, data_len, direct, now);
		return 0;
	}
	if (test_drop())
		return 0;
	if (!record_end((u64)rq, &rec, NULL)) { /* the sweep ended it meanwhile */
		count_event(qid, TS_EV_UNMATCHED);
		return 0;
	}
	device_down(st, qid, now, false);
	if (st->has_uppers)
		members_done(rq, direct, now);
	request_account(st, qid, &rec, now);
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
	u32 qid, at;

	LOAD(direct, q, rq->q);
	st = device_of(q, rq, NULL, direct, &qid);
	if (!st)
		return 0;
	s = rq_find((u64)rq, &at);
	if (!s)
		return 0; /* not issued while we traced: still in the OS */
	queued_ns = s->queued_ns;
	if (!rq_take(s, (u64)rq, 0))
		return 0;
	now = bpf_ktime_get_ns();
	count_event(qid, TS_EV_REQUEUE);
	device_down(st, qid, now, false);
	if (light) /* its start_time_ns stays: Q goes on from there */
		return 0;
	LOAD(direct, bio, rq->bio);
	if (bio && queued_ns)
		bio_enter(st, qid, (u64)bio, queued_ns, now);
	return 0;
}

static __always_inline int on_bio_queue(struct bio *bio, bool direct)
{
	struct ts_dev_state *st;
	u32 qid;
	u64 now;

	st = device_of(queue_of_bio(bio, direct), NULL, bio, direct, &qid);
	if (!st)
		return 0;
	now = bpf_ktime_get_ns();
	if (st->layer == TS_LAYER_BIO)
		layer_enter(st, qid, bio, direct, now);
	else
		bio_enter(st, qid, (u64)bio, now, now);
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
	u32 qid;

	st = device_of(queue_of_bio(bio, direct), NULL, bio, direct, &qid);
	if (!st)
		return 0;
	if (st->layer == TS_LAYER_BIO)
		layer_complete(st, qid, (u64)bio, bpf_ktime_get_ns());
	else
		bio_leave(qid, (u64)bio, bpf_ktime_get_ns());
	return 0;
}

/* A bio merged into a waiting request leaves with that request. */
static __always_inline int on_bio_merge(struct bio *bio, bool direct)
{
	struct ts_dev_state *st;
	u32 qid;

	st = device_of(queue_of_bio(bio, direct), NULL, bio, direct, &qid);
	if (st)
		bio_leave(qid, (u64)bio, bpf_ktime_get_ns());
	return 0;
}

/*
 * The scheduler merged request @next into another one: its bios go with
 * that request, which is issued with its own first bio's Q; @next's first
 * recorded bio leaves the OS queue here, as a merged bio does.
 */
static __always_inline int on_rq_merge(struct request *next, bool direct)
{
	struct request_queue *q;
	struct ts_dev_state *st;
	struct bio *bio;
	u32 qid;

	LOAD(direct, q, next->q);
	st = device_of(q, next, NULL, direct, &qid);
	if (!st)
		return 0;
	LOAD(direct, bio, next->bio);
	if (bio)
		bios_leave(qid, bio, false, direct, bpf_ktime_get_ns());
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

	st = device_of(queue_of_bio(split, direct), NULL, split, direct, &qid);
	if (!st || st->layer == TS_LAYER_BIO) /* one Q and C for all parts */
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
 * device or its bi_end_io is not the one it had at Q, or its memory is
 * gone (a synchronous direct read's bio lives on its task's stack, which
 * other calls overwrite once it ended, and which is freed with the task).
 */
static __always_inline bool bio_idle(u64 bio, struct ts_dev_state *st,
				     u32 idx)
{
	struct ts_layer_rec *m = bpf_map_lookup_elem(&layer_recs, &idx);
	struct bio *b = (struct bio *)bio;
	struct block_device *bdev;
	struct request_queue *q;
	unsigned short flags;
	void *end_io;

	if (bio_traced_bit >= 16)
		return false;
	/* unreadable: the stack it lived on was freed with its task */
	if (bpf_core_read(&flags, sizeof(flags), &b->bi_flags) ||
	    !(flags & (1U << (bio_traced_bit & 15))))
		return true;
	if (bpf_core_read(&bdev, sizeof(bdev), &b->bi_bdev) ||
	    bpf_core_read(&q, sizeof(q), &bdev->bd_queue) ||
	    bpf_core_read(&end_io, sizeof(end_io), &b->bi_end_io))
		return true;
	return (u64)q != st->queue || (m && (u64)end_io != m->end_io);
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

	if (!s || !(rq = s->rq) || (rq & 1))
		return 0;
	issue_ns = s->issue_ns;
	if (!record_idle(s, idx, rq)) {
		note_in_flight(s);
		return 0;
	}
	if ((s64)(ctx->now - issue_ns) < (s64)TS_SWEEP_MIN_AGE_NS) {
		note_suspect(s);
		return 0;
	}
	if (__sync_val_compare_and_swap(&s->rq, rq, rq + 1) != rq)
		return 0;
	/*
	 * Idle and old, its life ended unseen: whatever the request or bio
	 * does now is a new life, recorded in another slot (its issue found
	 * this one held) unless it refilled this one before the hold.
	 */
	if (s->issue_ns != issue_ns) {
		__sync_val_compare_and_swap(&s->rq, rq + 1, rq);
		return 0;
	}
	forget_request(s, ctx->now);
	__sync_val_compare_and_swap(&s->rq, rq + 1, 0);
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

/* Each device's peaks since the last sweep; the next ones start from now. */
static long sweep_end(u32 qid, void *unused)
{
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);

	if (!st || !st->queue)
		return 0;
	st->device_peak_taken = __sync_lock_test_and_set(
		&st->device_peak, ts_depth_of(st->in_device));
	st->os_peak_taken = __sync_lock_test_and_set(&st->os_peak,
						     ts_depth_of(st->in_os));
	return 0;
}

SEC("raw_tp")
int ts_sweep(void *ctx)
{
	struct sweep_ctx sweep = { .now = bpf_ktime_get_ns() };

	if (test_verifier_failure)
		return *(volatile int *)sweep.now; /* not a pointer: rejected */
	bpf_loop(TS_MAX_QUEUES, sweep_begin, NULL, 0);
	bpf_loop(TS_RQ_SLOTS, sweep_slot, &sweep, 0);
	bpf_loop(TS_MAX_QUEUES, sweep_end, NULL, 0);
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
 * For tests/tools/depth-race: depth_check_rounds up-and-down pairs on one
 * test entry through depth_step, run on every CPU at once. Never loaded by
 * truestat itself.
 */
struct ts_dev_state depth_check_state;
__u32 depth_check_rounds;

static long depth_check_one(u32 i, void *unused)
{
	struct ts_dev_state *st = &depth_check_state;

	device_up(st, 0, bpf_ktime_get_ns());
	device_down(st, 0, bpf_ktime_get_ns(), false);
	return 0;
}

SEC("raw_tp")
int ts_depth_check(void *ctx)
{
	bpf_loop(depth_check_rounds, depth_check_one, NULL, 0);
	return 0;
}

/*
 * One set of programs per attach kind (tp_btf, raw_tp); the loader picks
 * one. A is the argument that holds the request or bio (0 since 5.11; the
 * loader refuses older kernels).
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
	SEC(#kind "/block_rq_merge")                                        \
	int ts_rq_merge_##name(u64 *ctx)                                    \
	{                                                                   \
		if (bench_empty)                                            \
			return 0;                                           \
		return on_rq_merge((struct request *)ctx[A], direct);       \
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
		return on_bio_complete((struct bio *)ctx[1], direct);       \
	}                                                                   \
	SEC(#kind "/block_bio_remap")                                       \
	int ts_remap_##name(u64 *ctx)                                       \
	{                                                                   \
		if (bench_empty)                                            \
			return 0;                                           \
		return on_bio_remap((struct bio *)ctx[0], (u32)ctx[1],      \
				    ctx[2], direct);                        \
	}

TS_PROGS(tp_btf, true, btf, 0)
TS_PROGS(raw_tp, false, raw, 0)
