/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the loader sets before loading (.rodata), the maps it reads, and
 * the one old kernel layout truestat reads through.
 */
#ifndef TS_MAPS_BPF_H
#define TS_MAPS_BPF_H

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
/* Slots of the request table in use, minus one (the loader sizes it; tests
 * shrink it to fill it). */
const volatile __u32 rq_mask = TS_RQ_SLOTS - 1;
/*
 * How far from its hash the request table's records may be: TS_RQ_PROBES
 * until a claim had to go further (rq_claim), then as far as it went. Only
 * grows, at most to TS_RQ_PROBES_MAX.
 */
__u32 rq_reach = TS_RQ_PROBES;
/* The same for the bio table. */
const volatile __u32 bio_mask = TS_BIO_SLOTS - 1;
/* When the loader began attaching (bpf_ktime_get_ns' clock): a request
 * allocated before was in flight when tracing began. */
__u64 trace_start_ns;
/*
 * TRUESTAT_TEST_MISS_EVERY: the completion program ignores one completion
 * of a traced disk in this many, as if the platform had dropped it, so that
 * tests prove the repair path in every run. 0 (always, outside tests): the
 * verifier removes the branch.
 */
const volatile __u32 test_miss_every = 0;
/* TRUESTAT_TEST_MISS_DEV: only this disk's (major << 20 | minor); 0: all */
const volatile __u32 test_miss_dev = 0;
/*
 * TRUESTAT_TEST_CLOCK_WRAP: added to the clock of the depth words and level
 * registers, so that their 44-bit stamps wrap seconds into a test instead
 * of every 4.9 hours. 0 outside tests.
 */
const volatile __u64 test_clock_offset = 0;
__u64 test_miss_tick;
/*
 * The bit of bio->bi_flags that the kernel sets at Q and clears when it
 * traces the bio's C (BIO_TRACE_COMPLETION: its value differs between
 * kernels, so the loader reads it from the kernel's BTF). The sweep takes a
 * bio-layer record whose bio has it clear for a completion it did not see.
 * 0xff: unknown, never repaired that way.
 */
const volatile __u32 bio_traced_bit = 0xff;

/*
 * Slots handed out at most (TS_MAX_DEVS), and queue ids below this read
 * qid_near (TS_QID_NEAR); tests lower both (TRUESTAT_TEST_MAX_DEVS,
 * TRUESTAT_TEST_QID_NEAR) to reach the limit and qid_far here.
 */
const volatile __u32 max_devs = TS_MAX_DEVS;
const volatile __u32 qid_near_ids = TS_QID_NEAR;

#define REQ_OP_BITS_ 8
#define REQ_OP_MASK_ ((1U << REQ_OP_BITS_) - 1)

/* Queue id -> slot (include/truestat.h, struct ts_qid_slot). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_QID_NEAR);
	__type(key, u32);
	__type(value, struct ts_qid_slot);
} qid_near SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TS_QID_FAR);
	__type(key, u32);
	__type(value, struct ts_qid_slot);
} qid_far SEC(".maps");

/* Disks not traced for want of room: dev_t -> enum ts_untraced. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TS_UNTRACED_MAX);
	__type(key, u32);
	__type(value, u32);
} untraced SEC(".maps");

/* Disks refused beyond those untraced holds. */
__u64 untraced_lost;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TS_MAX_DEVS);
	__type(key, u32);
	__type(value, struct ts_dev_state);
} dev_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TS_MAX_DEVS);
	__type(key, u32);
	__type(value, struct ts_dev_stats);
} dev_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TS_HIST_DEVS * TS_HIST_SETS);
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
	__uint(max_entries, TS_MAX_DEVS);
	__type(key, u32);
	__type(value, u64);
} service_hint SEC(".maps");

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
	__uint(max_entries, TS_MAX_DEVS);
	__type(key, u32);
	__type(value, u8);
} stacked SEC(".maps");

/* Whole-disk dev_t values chosen with -d (consulted once per device). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TS_MAX_DEVS);
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

#endif
