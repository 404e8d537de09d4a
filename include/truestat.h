/* SPDX-License-Identifier: GPL-2.0 */
/*
 * truestat: every map layout shared by bpf/truestat.bpf.c and user/.
 *
 * Event names follow blktrace: Q = a bio enters the block layer
 * (block_bio_queue), D = a request is issued to the driver
 * (block_rq_issue), C = it completes (block_rq_complete).
 *
 * queue time = Q -> D, service time = D -> C, total = Q -> C.
 */
#ifndef TRUESTAT_H
#define TRUESTAT_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* the BPF side has these from vmlinux.h */
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#include "hist.h"

/*
 * Disks traced at once. A disk is traced in a slot (dev_state and the maps
 * beside it are indexed by slot; the code calls a slot qid), given at first
 * sight to its request queue's id (q->id) and kept by that id: a disk that
 * takes the id of one gone takes its slot. An id's slot is id % TS_MAX_DEVS
 * when that one is free (an event finds it with one lookup), else the next
 * free one (found through ts_qid_slot). The ids themselves have no limit. A disk that finds no slot left is not traced, and named
 * (untraced), never shown idle.
 */
#define TS_MAX_DEVS 256

/*
 * Queue id -> slot, for the ids not in slot id % TS_MAX_DEVS: ARRAY
 * qid_near for ids below TS_QID_NEAR, HASH qid_far for the others (hosts with thousands of
 * request queues: every disk, partition holder, dm and loop device has
 * one, and ids are reused lowest first).
 */
#define TS_QID_NEAR 4096
#define TS_QID_FAR 8192

struct ts_qid_slot {
	__u64 not_traced; /* the queue last seen with this id and not traced
			   * (no slot: left out by -d or --exclude, no
			   * disk, or refused) */
	__u32 slot;	  /* 1 + its slot, 0: none yet; kept by the id */
	__u32 pad;
};

/* Why a disk is not traced (HASH untraced: its dev_t -> this). */
enum ts_untraced {
	TS_UNTRACED_LIMIT = 1,	 /* TS_MAX_DEVS (or the test limit) in use */
	TS_UNTRACED_QIDS = 2,	 /* qid_far full */
};

#define TS_UNTRACED_MAX 1024

/* Disks --exclude can leave out (HASH dev_exclude: dev_t -> 1). */
#define TS_EXCLUDE_MAX 4096

/*
 * In-flight requests, keyed by request address, open addressing. The
 * loader sizes the table at start: twice the driver tags of the traced
 * disks (their hardware queues' nr_tags summed), a power of two from
 * TS_RQ_SLOTS up to TS_RQ_SLOTS_MAX (64 bytes a slot with its layer
 * record: 64 MiB at most).
 */
#define TS_RQ_BITS 14
#define TS_RQ_SLOTS (1U << TS_RQ_BITS)
#define TS_RQ_BITS_MAX 20
#define TS_RQ_SLOTS_MAX (1U << TS_RQ_BITS_MAX)
/*
 * A request's record is in one of TS_RQ_PROBES slots from its hash, or, on
 * a table so full that those were taken, further on: up to
 * TS_RQ_PROBES_MAX, as far as any record was ever placed (bpf rq_reach),
 * so that lookups stay at TS_RQ_PROBES until a host needs more.
 */
#define TS_RQ_PROBES 4
#define TS_RQ_PROBES_MAX 32

/* Object for kernels before 5.12: locks held at once (bpf/atomics.bpf.h). */
#define TS_WORD_LOCKS 4096

/*
 * Bios between Q and D, keyed by bio address, open addressing. Sized at
 * start like the request table, for four times the driver tags (the
 * requests waiting for a tag or in a scheduler, each holding its bios), a
 * power of two from TS_BIO_SLOTS up to TS_BIO_SLOTS_MAX (24 bytes a slot:
 * 48 MiB at most).
 */
#define TS_BIO_BITS 15
#define TS_BIO_SLOTS (1U << TS_BIO_BITS)
#define TS_BIO_BITS_MAX 21
#define TS_BIO_SLOTS_MAX (1U << TS_BIO_BITS_MAX)
#define TS_BIO_PROBES 2

enum ts_op {
	TS_OP_READ,
	TS_OP_WRITE,
	TS_OP_DISCARD,
	TS_OP_FLUSH,
	TS_OP_OTHER, /* write-zeroes, secure erase, zone and driver ops */
	TS_NR_OPS,
};

enum ts_dev_mode {
	TS_DEV_UNSEEN,	/* entry not yet claimed, or being reset */
	TS_DEV_TRACED,
	TS_DEV_IGNORED, /* bio-based, or left out by -d or --exclude */
};

/*
 * What a traced device's figures are of. A request queue (disks: vda,
 * nvme0n1, loop0, null_blk): Q -> D -> C, as above. A bio-based device
 * (md, device-mapper, zram: no request queue) has no D and no OS queue:
 * a bio is in its layer from Q (block_bio_queue on it) to C
 * (block_bio_complete on it), and its figures are of that: service = total
 * = Q -> C, queue = 0, in_device = bios in that layer. Where such a bio is
 * sent on as one member bio of the same size (block_bio_remap: dm-linear,
 * dm-crypt, a chunk-aligned raid0 bio), its time in the layer itself, Q ->
 * C minus the member bio's own Q -> C, is the layer time (layer_ns,
 * ts_hist.layer).
 */
enum ts_layer {
	TS_LAYER_REQUEST,
	TS_LAYER_BIO,
};

/* Things that went differently from Q -> D -> C: see events.def */
enum ts_event {
#define TS_EVENT(id, name, help) TS_EV_##id,
#include "events.def"
#undef TS_EVENT
	TS_NR_EVENTS,
};

/* Per direction, summed over CPUs by userspace. Sizes are taken at issue. */
struct ts_op_stats {
	__u64 ios;	  /* completed requests */
	__u64 bytes;	  /* their size at issue */
	__u64 service_ns; /* sum of D -> C */
	__u64 queued_ios; /* completed requests whose Q was seen */
	__u64 queue_ns;	  /* sum of Q -> D over those */
	__u64 total_ns;	  /* sum of Q -> C over those */
	__u64 missed;	  /* completed untimed: unseen (TS_EV_MISSED_C), or
			   * issued with the request table full (TS_EV_RQ_FULL) */
	__u64 missed_bytes; /* their size at issue */
	__u64 unissued;	    /* completed without being issued (TS_EV_UNISSUED:
			     * e.g. an empty write with a preflush), untimed */
	__u64 layer_ios;    /* bio layer: completed bios mapped one-to-one
			     * onto a member bio whose C was seen */
	__u64 layer_ns;	    /* their time in the layer itself */
	__u64 merges;	    /* bios and requests merged into a waiting
			     * request (block_bio_backmerge, _frontmerge,
			     * block_rq_merge): /proc/diskstats' merges */
};

/*
 * Durable writes: write bios that ask for durability, REQ_PREFLUSH (the
 * device's cache flushed before them: fsync, a journal commit) and/or
 * REQ_FUA (written through: O_DSYNC), timed from their Q to their C
 * (block_bio_complete: the end of the whole flush sequence, pre-flush,
 * data, post-flush or FUA). What a database waits for at commit.
 */
struct ts_sync_stats {
	__u64 ios;	 /* completed */
	__u64 bytes;	 /* their data (an fsync's flush has none) */
	__u64 total_ns;	 /* sum of Q -> C */
	__u64 flush_ns;	 /* of that, the time a flush command was in the
			  * device: each one's, merged or not */
	__u64 missed;	 /* completed unseen (found by the sweep): not in ios */
	__u64 untracked; /* not followed (durable_bios full): not in ios */
};

/* PERCPU_ARRAY dev_stats, index = slot. */
struct ts_dev_stats {
	struct ts_op_stats op[TS_NR_OPS];
	__u64 events[TS_NR_EVENTS];
	struct ts_sync_stats sync;
	/*
	 * ns by which changes of the depth in the device (in the OS queue)
	 * were stamped later than their clock read: a change from another
	 * CPU with a later time had landed first (ts_change_time). The
	 * depth x time and the requests' own times summed differ by at
	 * most this.
	 */
	__u64 device_reordered_ns;
	__u64 os_reordered_ns;
	/*
	 * 1 while a completion adds to op[] on this CPU (op_add,
	 * bpf/account.bpf.h): one nested in it adds to nested_stats instead.
	 * Not a figure: the loader's sum clears it.
	 */
	__u64 adding;
};

/*
 * ARRAY nested_stats, index = slot, shared by all CPUs and added to
 * atomically: what completions added that ran while another completion's
 * adds to the same device were under way on their CPU (a member's request
 * ending a stacked bio from an interrupt while the stacked device's own C
 * is counted; on kernels before 6.1, the completion program nested in
 * itself). The loader adds them to the per-CPU figures.
 */
struct ts_nested_stats {
	struct ts_op_stats op[TS_NR_OPS];
};

/*
 * Who submitted a request: the task that was running when its first bio
 * entered the block layer (Q), not the one that issued or completed it
 * (a kworker, an interrupt). Kept only for --slow, --by and the filters: ARRAY bio_who beside
 * bio_slots, ARRAY rq_extra beside rq_slots (same indexes).
 */
struct ts_submitter {
	__u64 cgroup; /* cgroup v2 id (the inode of its directory) */
	__u32 tgid;   /* the process; 0: not known (--light, no Q seen) */
	char comm[16];
	__u32 flags; /* TS_WHO_MATCH: of the -c/--pid submitter (at Q) */
};

struct ts_rq_extra {
	struct ts_submitter who;
	__u64 sector; /* where it starts */
	__u32 depth;  /* the device's depth when it was issued, itself included */
	__u32 pad;
};

/* --slow: one per request whose Q -> C reached the threshold (RINGBUF). */
struct ts_slow_event {
	__u64 end_ns; /* completion, CLOCK_MONOTONIC */
	__u64 sector;
	__u64 queue_ns, service_ns, total_ns; /* queue 0: Q not seen */
	__u32 dev;    /* major << 20 | minor */
	__u32 bytes;
	__u32 depth;
	__u8 op;
	__u8 layer; /* enum ts_layer */
	__u16 pad;
	struct ts_submitter who;
};

/*
 * --by=cgroup|process: per device, direction and submitter (its cgroup v2
 * id or its process id; 0: not known), HASH by_who. Full, a request is
 * counted in TS_EV_WHO_FULL instead. Userspace keeps room: past 3/4 full
 * it folds the entries least recently used (idle since its last read) into
 * one of id TS_WHO_FOLDED per device and direction, and deletes them.
 * Each claim of a slot has entries of its own: a disk that takes a gone
 * disk's slot starts from none, and the gone disk keeps its own.
 */
#define TS_WHO_ENTRIES 1024
#define TS_WHO_FOLDED (~0ULL)
#define TS_WHO_SLOTS 64 /* Q -> C: quarter powers of two from 1 us */

enum ts_by { TS_BY_NONE, TS_BY_CGROUP, TS_BY_PROCESS };

struct ts_who_key {
	__u64 id;
	__u64 claimed_ns; /* the slot's claim (ts_dev_state): which disk */
	__u32 dev;	  /* the disk's number (ts_dev_state): its gone
			   * lives are one row in the totals */
	__u16 qid;	  /* below TS_MAX_DEVS; 24 bytes in all: who_count's
			   * frame ends a chain of calls at 5.10's 512 */
	__u8 op;
	__u8 pad;
};

struct ts_who_stats {
	__u64 ios, bytes;
	__u64 queued_ios, queue_ns; /* over those whose Q was seen */
	__u64 service_ns, total_ns;
	__u64 missed; /* its completion never seen (repaired): not in ios */
	char comm[16]; /* of the first request's submitter */
	__u64 total[TS_WHO_SLOTS];
};

/* Bucket of a Q -> C of @ns: [2^10, 2^10 * 1.25) ns is 1, ... */
static __always_inline unsigned int ts_who_bucket(__u64 ns)
{
	unsigned int e, b;

	if (ns < 1024)
		return 0;
	e = ts_log2(ns);
	b = (e - 10) * 4 + (unsigned int)((ns >> (e - 2)) & 3);
	return b < TS_WHO_SLOTS ? b : TS_WHO_SLOTS - 1;
}

/* The smallest Q -> C in bucket @b (0 for bucket 0). */
static inline __u64 ts_who_lower(unsigned int b)
{
	if (!b)
		return 0;
	return (__u64)(4 + b % 4) << (b / 4 + 8);
}

/* A durable write between Q and C: HASH durable_bios, key = bio address. */
#define TS_DURABLE_BIOS 8192
struct ts_durable {
	__u64 queued_ns;
	__u64 flush_at_q; /* the device's flush time (flush_busy_ns) at Q */
	__u32 qid;
	__u32 bytes;
};

/*
 * Time-weighted depth: one register per threshold level L holds the time
 * during which depth >= L. Levels 1..64 are all thresholds; above 64 there
 * are four per power of two up to 65536. Level L opens (depth goes L-1 -> L)
 * with R += BIAS - now and closes with R += now - BIAS, one atomic add each,
 * so every read of a register is consistent: n = round(R / BIAS) levels are
 * open and the time at depth >= L is R - n * BIAS + n * now.
 */
#define TS_LEVEL_EXACT 64
#define TS_LEVEL_MAX 65536
#define TS_LEVEL_SLOTS 104
#define TS_LEVEL_BIAS (1ULL << 60)

/*
 * One more register after the levels: the area above TS_LEVEL_EXACT, ns x
 * requests beyond the 64th, so that the mean depth is exact at any depth
 * (the thresholds above 64 alone would leave it to interpolation). The
 * change that moves the depth word from stamp s to time t adds the segment
 * it closes, (depth above 64 before) x (t - s); a change that keeps the
 * stamp (a contended change) adds (above before - above after) x
 * (t - s). At time now the area is the register + (depth above 64 now) x
 * (now - the word's stamp).
 */
#define TS_LEVEL_ABOVE TS_LEVEL_SLOTS
#define TS_LEVEL_REGS (TS_LEVEL_SLOTS + 1)

/*
 * Latency and size histograms, for the first TS_HIST_DEVS devices traced:
 * a set per op, and one (TS_HIST_SYNC) of the durable writes, in which
 * total is Q -> the end of their flush sequence and size their data.
 * ARRAY hists (mmapable), index = (ts_dev_state.hist_slot - 1) *
 * TS_HIST_SETS + set, shared by all CPUs (atomic adds): its size does not
 * grow with the number of CPUs. 17.8 KB a set, 3.3 MB in all.
 */
#define TS_HIST_DEVS 32
#define TS_HIST_SYNC TS_NR_OPS
#define TS_HIST_SETS (TS_NR_OPS + 1)

struct ts_hist {
	__u64 queue[TS_HIST_SLOTS];   /* Q -> D, ns buckets (include/hist.h) */
	__u64 service[TS_HIST_SLOTS]; /* D -> C */
	__u64 total[TS_HIST_SLOTS];   /* Q -> C */
	__u64 size[TS_SIZE_SLOTS];    /* bytes at issue, log2 buckets */
	__u64 layer[TS_HIST_SLOTS];   /* bio layer: time in the layer itself */
};

#define TS_HIST_U64S (sizeof(struct ts_hist) / sizeof(__u64))

/*
 * Service time by the in-device depth at issue: the parallelism curve.
 * Classes 1, 2, 3-4, 5-8, ... 1025-2048 and deeper (ts_depth_class).
 * ARRAY depth_hists (mmapable), index = ts_dev_state.hist_slot - 1.
 * Counters are 32 bits (27 KB a disk): the loader widens them to 64 bits
 * at every snapshot (ts_depth_widen, user/features/curve.h), right while fewer
 * than 4 billion land in one bucket between two snapshots.
 * The completions of a class are the sum of its buckets (one atomic add
 * per I/O fewer).
 */
#define TS_DEPTH_CLASSES 12

struct ts_depth_hist {
	__u32 service[TS_DEPTH_CLASSES][TS_HIST_SLOTS];
	/*
	 * Those issued at depth 1 (alone in the device) again, by op: each
	 * class's own service with nothing else in the device, the baseline
	 * a class is compared with at one depth
	 */
	__u32 depth1[TS_NR_OPS][TS_HIST_SLOTS];
};

/* Class of depth @d (the request itself included): ceil(log2(d)). */
static __always_inline unsigned int ts_depth_class(__u64 d)
{
	unsigned int c = d > 1 ? ts_log2(d - 1) + 1 : 0;

	return c < TS_DEPTH_CLASSES ? c : TS_DEPTH_CLASSES - 1;
}

/*
 * A depth and the time of its last change in one word, changed by one
 * compare-and-swap: the depth in the top TS_DEPTH_BITS (signed), the low
 * TS_CLOCK_BITS of the change's time below. An event's time is never
 * before the last change's, so the changes happen in one order with
 * times that never go back, and the level registers always hold a
 * history that could have happened (reading the clock, then adding to a
 * separate depth, lets two CPUs apply changes in the opposite order to
 * their times).
 */
#define TS_CLOCK_BITS 44
#define TS_CLOCK_MASK ((1ULL << TS_CLOCK_BITS) - 1)

static __always_inline __s64 ts_depth_of(__u64 word)
{
	return (__s64)word >> TS_CLOCK_BITS;
}

/* @now - the time stamped in depth word @word, signed (44-bit stamps). */
static __always_inline __s64 ts_stamp_since(__u64 word, __u64 now)
{
	return (__s64)((now - word) << (64 - TS_CLOCK_BITS)) >>
	       (64 - TS_CLOCK_BITS);
}

/*
 * Time of a change at @now after the last one, stamped in @word: @now, or
 * the last change's time if @now is before it (the clock was read before
 * the last change won its race). A gap of a second or more is the stamp
 * wrapping after a long idle time, not a race: then @now.
 */
static __always_inline __u64 ts_change_time(__u64 word, __u64 now)
{
	__s64 back = ts_stamp_since(word, now);

	return back < 0 && back > -1000000000LL ? now - back : now;
}

/*
 * @word with its depth kept and its stamp moved to the time of a change at
 * @now (a restamp: the loader's, at every sweep and every TS_RESTAMP_NS).
 */
static __always_inline __u64 ts_restamp(__u64 word, __u64 now)
{
	return (word & ~TS_CLOCK_MASK) |
	       (ts_change_time(word, now) & TS_CLOCK_MASK);
}

/*
 * The longest the loader lets a depth word go without a restamp. A stamp
 * is read as a signed 44-bit difference: older than 2^43 ns (2.4 h), the
 * area above depth 64 held since it would be added as negative; within a
 * second of 2^44 ns (4.9 h), ts_change_time would take it for a change a
 * second ahead. A minute keeps every stamp far from both (and one restamp
 * a minute costs nothing), with hours to spare for a loader held up.
 */
#define TS_RESTAMP_NS (60 * 1000000000ULL)

/* Requests counted beyond level TS_LEVEL_EXACT at depth @depth. */
static __always_inline __u64 ts_above_exact(__s64 depth)
{
	return depth > TS_LEVEL_EXACT ? depth - TS_LEVEL_EXACT : 0;
}

/*
 * The depths in the device whose time each request keeps from its issue
 * (ts_rq_slot.low_at_issue: the device's device_low_ns then), so that a
 * repair knows how long, while its request stayed counted, the depth was
 * 1, 2, 3 and 4 (ts_repair.low_ns): busy time depends on when it really
 * ended only at depths no higher than the requests counted that could
 * have ended (user/lib/bounds.c).
 */
#define TS_LOW_DEPTHS 4

struct ts_low_time {
	__u64 ns[TS_LOW_DEPTHS];
};

/*
 * ARRAY dev_state (mmapable), index = slot: shared by all CPUs. Laid out by
 * cache line (64 bytes): the first holds what every event reads and only a
 * claim or the sweep writes; each depth word has a line of its own with its
 * peak, written by the events that change it; the level registers follow.
 * An event on one CPU then does not take from another CPU the line of a
 * word it does not change.
 */
struct ts_dev_state {
	__u64 queue;	 /* address of the request_queue owning this entry,
			  * with bit 0 set while it is being claimed */
	__u32 dev;	 /* kernel dev_t of the whole disk: major << 20 | minor */
	__u16 mode;	 /* enum ts_dev_mode */
	__u8 layer;	 /* enum ts_layer */
	__u8 has_uppers; /* a member of a stacked device: its completions
			  * end member bios (block_bio_remap seen to it) */
	__u32 hist_slot; /* 1 + its histograms' index in hists, 0: none */
	__u32 suspects;	 /* last sweep: idle requests too young to repair */
	__u64 claimed_ns;    /* when the claim began, and ended: a request */
	__u64 claim_done_ns; /* allocated between was issued while claiming */
	__u32 queue_id;	     /* the kernel's q->id of the disk */
	__u32 given_to;	     /* 1 + the queue id this slot was given to */
	__s64 device_peak_taken; /* the last sweep's take of device_peak */
	__s64 os_peak_taken;
	__u64 in_device __attribute__((aligned(64))); /* issued, not completed
						       * (ts_depth_of) */
	__s64 device_peak; /* highest in_device since the last sweep */
	__u64 device_low_ns[TS_LOW_DEPTHS]; /* time with in_device 1, 2, 3,
					     * 4, summed as each stretch
					     * there ends (ts_low_time) */
	__u64 repairs_begun; /* repairs that began taking a request out of
			      * in_device, before they count it missed */
	__u64 in_os __attribute__((aligned(64))); /* entered (Q), not yet
						   * issued (ts_depth_of) */
	__s64 os_peak;
	__u64 os_deferred[6];
	__u64 device_level[TS_LEVEL_REGS] __attribute__((aligned(64)));
	__u64 os_level[TS_LEVEL_REGS]; /* TS_LEVEL_ABOVE last in each */
	__u64 device_deferred[6]; /* object for old kernels: changes of
				   * in_device left while its lock was held:
				   * rises and the sum of their clock reads,
				   * falls and theirs, deferrals started and
				   * finished (bpf/depth_locked.bpf.h) */
	/* flush commands in the device: how many << TS_CLOCK_BITS | the
	 * time of the last change, and the time any was, summed as each
	 * stretch ends (bpf/durable.bpf.h, flush_clock_move) */
	__u64 flush_word __attribute__((aligned(64)));
	__u64 flush_busy_ns;
	/* the slot's claims so far; at the last one, the latest stamp of the
	 * depth words it reset: the disk before's last change (lib/claim.h) */
	__u64 claims;
	__u64 prev_stamp;
};


/*
 * Sweep: a tracked request found idle in the kernel is repaired once it
 * was issued this long ago; younger ones may still be inside the issue
 * path (idle until the kernel marks them in flight) and are counted as
 * suspects: the loader looks again once they are old enough (user/core/tracer.c:
 * settle); those still young at its last look make the report say its
 * depth is not exact.
 */
#define TS_SWEEP_MIN_AGE_NS (10 * 1000 * 1000ULL)

/*
 * -p, --partitions: per partition of a traced disk and direction, the
 * requests the kernel counts under that partition (req->part, as
 * /proc/diskstats does). HASH part_stats, key struct ts_part_key: the
 * slot and partition, and the slot's claim (ts_dev_state claimed_ns), so
 * that a disk taking a gone one's slot starts rows of its own; shared by
 * all CPUs (atomic adds); TS_PART_MAX entries, 1 without -p.
 */
#define TS_PART_MAX 1024

struct ts_part_op {
	__u64 ios, bytes, merges;
	__u64 missed, missed_bytes; /* ended unseen (repaired): not in ios */
	__u64 queued_ios, queue_ns; /* over those whose Q was seen */
	__u64 service_ns, total_ns;
};

struct ts_part_stats {
	struct ts_part_op op[TS_NR_OPS];
};

static __always_inline __u32 ts_part_key(__u32 qid, __u32 partno)
{
	return qid << 8 | (partno & 0xff);
}

struct ts_part_key {
	__u32 slot_part; /* ts_part_key(slot, partno) */
	__u32 pad;	 /* 0 */
	__u64 claimed_ns; /* the claim of the slot by the disk (ts_dev_state) */
};

struct ts_rq_slot {
	__u64 rq; /* request address, 0 = free, bit 0: being changed */
	__u64 issue_ns;
	__u64 queued_ns;  /* Q of its first bio, 0 = not seen */
	__u32 bytes;
	__u8 qid;	  /* below TS_MAX_DEVS */
	__u8 part;	  /* -p: the partition the kernel counts it under, 0: the disk */
	__u8 op;
	__u8 depth_class; /* ts_depth_class() of the depth it was issued at */
	struct ts_low_time low_at_issue; /* its device's device_low_ns then */
};

/*
 * ARRAY layer_recs, beside rq_slots (same index), for the records of a bio
 * layer only: what tells its bio from memory that no longer is one, and
 * the member bio it was sent on as (block_bio_remap). Apart, so that a
 * request's record stays one cache line.
 */
struct ts_layer_rec {
	__u64 end_io;	    /* the bio's bi_end_io at Q */
	__u32 links;	    /* member bios seen; 2: not one-to-one */
	__u32 sent_on;	    /* 1: the bio itself went on to the member (its
			     * device is the member's from then on) */
	__u64 sub_start_ns; /* the member bio's Q (its remap) */
	__u64 sub_end_ns;   /* the member bio's C, 0: not yet */
};

/*
 * Bio layer links (LRU_HASH, so that a link whose end went unseen ages
 * out). layer_index: a stacked device's bio by where it starts, so that a
 * remap (which names the device and sector it came from) finds it;
 * member_links: the member bio -> the stacked device's bio.
 */
#define TS_LINK_SLOTS 16384

struct ts_layer_key {
	__u32 dev; /* dev_t of the stacked device (major << 20 | minor) */
	__u32 pad;
	__u64 sector;
};

/*
 * Repairs, in order (ARRAY repairs, mmapable, index = n % TS_REPAIR_SLOTS
 * for the n-th repair; repair_count in .bss counts them): the request (or
 * bio) at addr was in the depth from issue_ns and found ended at found_ns,
 * so its unseen completion lies in between; low_ns: how long of that time
 * the depth was 1, 2, 3 and 4 (struct ts_low_time). seq is n + 1 once the
 * record is whole, 0 while it is being rewritten (user/lib/bounds.c:
 * ts_repair_read).
 */
#define TS_REPAIR_SLOTS 4096

struct ts_repair {
	__u64 seq;
	__u64 issue_ns;
	__u64 found_ns;
	__u64 addr;
	__u64 low_ns[TS_LOW_DEPTHS];
	__u32 qid;
	__u32 pad;
};

struct ts_bio_slot {
	__u64 bio; /* bio address, 0 = free */
	__u64 queued_ns;
	__u32 qid; /* the device whose OS queue it is counted in */
	__u32 pad;
};

/* Slot index of depth level @depth, or -1 when it is not a threshold. */
static __always_inline int ts_level_slot(__u32 depth)
{
	__u32 e, step;

	if (depth == 0 || depth > TS_LEVEL_MAX)
		return -1;
	if (depth <= TS_LEVEL_EXACT)
		return depth - 1;
	e = ts_log2(depth);
	step = 1U << (e - 2);
	if (depth & (step - 1))
		return -1;
	return TS_LEVEL_EXACT - 1 + (e - 6) * 4 + (depth >> (e - 2)) - 4;
}

/* Depth level of slot @slot (inverse of ts_level_slot). */
static inline __u32 ts_slot_level(int slot)
{
	int above, e;

	if (slot < TS_LEVEL_EXACT)
		return slot + 1;
	above = slot - TS_LEVEL_EXACT + 1; /* 80 is 1, 96 is 2, ... */
	e = 6 + above / 4;
	return (1U << e) + (above % 4) * (1U << (e - 2));
}

/*
 * --pattern: where each request starts against where the device's previous
 * one ended, in the order the device was given them (issue; Q at a bio
 * layer), for reads and writes. ARRAY patterns, index = slot, shared
 * by all CPUs (atomic adds, an exchange for last_end); one entry when
 * --pattern is off.
 */
#define TS_PATTERN_OPS 2 /* TS_OP_READ, TS_OP_WRITE */
#define TS_SEEK_SLOTS 32 /* |distance| in sectors: 0, then [2^(k-1), 2^k) */

/*
 * Streams: besides the request just before, each request is compared with
 * the ends of the device's last TS_STREAMS streams in its direction (a
 * stream: requests each starting where the one before it in the stream
 * ended), as readahead and btt's seek analysis keep them, so that several
 * sequential readers at once count as sequential. A request that starts
 * at none of them begins a stream, in the place of the one begun longest
 * ago. Races between CPUs may lose a head's update: a request then counts
 * as beginning a stream (in_stream an under-count).
 */
#define TS_STREAMS 8

struct ts_pattern_op {
	__u64 seek[TS_SEEK_SLOTS];	 /* requests with a previous one, by distance */
	__u64 backward;			 /* of those, starting before it ended */
	__u64 size_ios[TS_SIZE_SLOTS];	 /* all requests, by ts_size_bucket */
	__u64 size_bytes[TS_SIZE_SLOTS]; /* and their bytes */
	__u64 in_stream;		 /* requests that went on a stream */
	__u64 stream_ios[TS_STREAMS];	 /* of those, by stream place */
};

struct ts_stream_heads {
	__u64 end[TS_STREAMS]; /* 1 + where each stream ended, 0: none */
	__u32 next;	       /* the place a new stream takes */
	__u32 pad;
};

struct ts_pattern {
	__u64 last_end; /* 1 + the end sector of the last request, 0: none */
	struct ts_pattern_op op[TS_PATTERN_OPS];
	struct ts_stream_heads heads[TS_PATTERN_OPS];
};

/*
 * --pattern: service time (D -> C; Q -> C at a bio layer) by the request's
 * size at issue, for the first TS_HIST_DEVS devices. ARRAY size_hists
 * (mmapable), index = (ts_dev_state.hist_slot - 1) * TS_PATTERN_OPS + op;
 * one entry when --pattern is off. Classes: below 1 KiB, 1 KiB, 2 KiB, ...
 * 2 MiB, 4 MiB and more (ts_size_class). 32-bit counters (31 KB an op),
 * widened by the loader at every snapshot as ts_depth_hist's are.
 */
#define TS_SIZE_CLASSES 14
#define TS_SIZE_CLASS_LOW 9 /* ts_size_bucket of 512 bytes: class 0 */

struct ts_size_hist {
	__u32 service[TS_SIZE_CLASSES][TS_HIST_SLOTS];
};

/* Class of size bucket @b (ts_size_bucket). */
static __always_inline unsigned int ts_size_class(unsigned int b)
{
	if (b <= TS_SIZE_CLASS_LOW)
		return 0;
	b -= TS_SIZE_CLASS_LOW;
	return b < TS_SIZE_CLASSES ? b : TS_SIZE_CLASSES - 1;
}

/* Bucket of a seek of @sectors: 0 when sequential, else log2 + 1. */
static __always_inline unsigned int ts_seek_bucket(__u64 sectors)
{
	unsigned int e;

	if (!sectors)
		return 0;
	e = ts_log2(sectors) + 1;
	return e < TS_SEEK_SLOTS ? e : TS_SEEK_SLOTS - 1;
}

/*
 * --flags: completions by the request flags the device saw (rq->cmd_flags
 * at C), per device and op. HASH flag_stats, one entry per combination of
 * the bits below (as biolatency -F), shared by all CPUs (atomic adds);
 * userspace sums the combinations into one row per class. A request
 * carries several flags: it counts in each class whose bit it has, in
 * "none" when it has none of them. One entry when --flags is off.
 * Each claim of a slot has entries of its own: a disk that takes a gone
 * disk's slot starts from none, and the gone disk keeps its own.
 */
#define TS_FLAGS_ENTRIES 256

enum ts_flag_class {
	TS_FLAG_SYNC,	    /* REQ_SYNC */
	TS_FLAG_META,	    /* REQ_META */
	TS_FLAG_PRIO,	    /* REQ_PRIO */
	TS_FLAG_READAHEAD,  /* REQ_RAHEAD */
	TS_FLAG_BACKGROUND, /* REQ_BACKGROUND */
	TS_FLAG_FUA,	    /* REQ_FUA */
	TS_FLAG_PREFLUSH,   /* REQ_PREFLUSH */
	TS_FLAG_NONE,	    /* none of the above: not a bit */
	TS_NR_FLAG_CLASSES,
};

struct ts_flags_key {
	__u32 qid;
	__u8 op;   /* enum ts_op */
	__u8 bits; /* 1 << each enum ts_flag_class the request has */
	__u16 pad;
	__u64 claimed_ns; /* the slot's claim (ts_dev_state): which disk */
	__u32 dev;	  /* the disk's number (ts_dev_state): its gone
			   * lives are one row in the totals */
	__u32 pad2;
};

struct ts_flags_stats {
	__u64 ios, bytes;		/* bytes: at issue */
	__u64 service_ns;		/* sum of D -> C */
	__u64 queued_ios;		/* those whose Q was seen */
	__u64 queue_ns, total_ns;	/* sums over those */
	__u64 queue[TS_HIST_SLOTS];	/* Q -> D, as ts_hist */
	__u64 service[TS_HIST_SLOTS];	/* D -> C */
	__u64 total[TS_HIST_SLOTS];	/* Q -> C */
};

/*
 * Table index from the low 32 bits of an address (Fibonacci hashing). Only
 * the low half: the BPF verifier lets a privileged program copy 32 bits of
 * a pointer into a scalar, but no arithmetic on the pointer itself.
 */
static __always_inline __u32 ts_ptr_hash(__u32 addr_lo, unsigned int bits)
{
	return (__u32)(((__u64)addr_lo * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
}

#endif /* TRUESTAT_H */
