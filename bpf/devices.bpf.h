/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which device a request or bio is on, and whether it is traced: a
 * device's entry and histograms are claimed at first sight.
 */
#ifndef TS_DEVICES_BPF_H
#define TS_DEVICES_BPF_H

#include "core.bpf.h"
#include "atomics.bpf.h"
#include "compat.bpf.h"
#include "hists.bpf.h"

/* -d: only the disks in dev_filter are traced. */
const volatile bool filter_devices = false;

/* --exclude: the disks in dev_exclude are not traced. */
const volatile bool exclude_devices = false;

/*
 * Slots handed out at most (TS_MAX_DEVS), and queue ids below this read
 * qid_near (TS_QID_NEAR); tests lower both (TRUESTAT_TEST_MAX_DEVS,
 * TRUESTAT_TEST_QID_NEAR) to reach the limit and qid_far here.
 */
const volatile __u32 max_devs = TS_MAX_DEVS;
const volatile __u32 qid_near_ids = TS_QID_NEAR;

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

/* Whole-disk dev_t values chosen with -d (consulted once per device). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TS_MAX_DEVS);
	__type(key, u32);
	__type(value, u8);
} dev_filter SEC(".maps");

/* Whole-disk dev_t values --exclude matched at the start (likewise). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TS_EXCLUDE_MAX);
	__type(key, u32);
	__type(value, u8);
} dev_exclude SEC(".maps");

/* Whether disk @dev is to be traced, as -d and --exclude chose. */
static __always_inline bool dev_chosen(u32 dev)
{
	if (filter_devices && !bpf_map_lookup_elem(&dev_filter, &dev))
		return false;
	return !exclude_devices || !bpf_map_lookup_elem(&dev_exclude, &dev);
}

/* Kernels before 5.16 kept the disk in the request. */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/* The disk of @q, from the request or bio at hand before 5.16. */
static __always_inline struct gendisk *disk_of(struct request_queue *q,
					       struct request *rq,
					       struct bio *bio, bool direct)
{
	struct gendisk *disk = NULL;

	if (bpf_core_field_exists(q->disk)) {
		LOAD(direct, disk, q->disk);
	} else if (rq) {
		bpf_core_read(&disk, sizeof(disk),
			      &((struct request___old *)rq)->rq_disk);
	} else if (bio) {
		disk = bio_disk(bio, direct);
	}
	return disk;
}

/*
 * Resets entry @st, held by this CPU (its queue is @q + 1), for the disk
 * at @disk_addr (0: none), @dev, and publishes it. @how: the queue id << 1,
 * | 1 when the queue is request-based. Returns the entry's mode.
 */
static __noinline int claim_held(struct ts_dev_state *st,
				 struct request_queue *q, u64 disk_addr,
				 u32 dev, u32 how)
{
	u32 mode = TS_DEV_TRACED;
	u64 stamp;
	int i;

	st->claimed_ns = bpf_ktime_get_ns();
	if (!disk_addr)
		mode = TS_DEV_IGNORED;
	else if (!dev_chosen(dev))
		mode = TS_DEV_IGNORED;
	if (mode == TS_DEV_TRACED)
		claim_hists(st);
	stamp = (bpf_ktime_get_ns() + test_clock_offset) & TS_CLOCK_MASK;
	st->prev_stamp = ts_stamp_since(st->in_os, st->in_device) > 0 ?
				 st->in_device & TS_CLOCK_MASK :
				 st->in_os & TS_CLOCK_MASK;
	st->claims++;
	st->in_device = stamp;
	st->in_os = stamp;
	st->flush_word = stamp;
	st->flush_busy_ns = 0;
	st->device_peak = st->os_peak = 0;
	st->device_peak_taken = st->os_peak_taken = 0;
	st->suspects = 0;
	st->layer = (how & 1) ? TS_LAYER_REQUEST : TS_LAYER_BIO;
	st->has_uppers = 0;
	for (i = 0; i < TS_LEVEL_REGS; i++) {
		st->device_level[i] = 0;
		st->os_level[i] = 0;
		asm volatile("" ::: "memory"); /* a loop, not a memset call */
	}
	st->dev = dev;
	st->queue_id = how >> 1;
	st->mode = mode;
	ts_release(&st->queue, (u64)q + 1, (u64)q);
	/*
	 * Stamped once published: every request whose issue found the claim
	 * under way was allocated before this, however long this CPU was held
	 * up between the two (issued_while_traced).
	 */
	st->claim_done_ns = bpf_ktime_get_ns();
	return mode;
}

/*
 * A new queue in entry @st, the slot of its id: decide whether to trace it.
 * The entry is claimed with bit 0 of its queue set, reset, and published
 * last: an event meanwhile on another CPU sees a queue that is not its own,
 * finds the claim under way and is counted (TS_EV_CLAIMING), never applied
 * to a half-reset entry. Returns the entry's mode, or -1 when another CPU
 * is claiming it.
 */
static __noinline int claim_device(struct ts_dev_state *st,
				   struct request_queue *q, u64 disk_addr,
				   u32 dev, u32 how)
{
	u64 old = st->queue;

	/*
	 * Published meanwhile by the CPU that claimed it (device_of stopped
	 * waiting just before): this queue's already. Claiming it again would
	 * reset its depths under the bios and requests they already count,
	 * whose departures would then take them below 0, with no event.
	 */
	if (old == (u64)q)
		return st->mode;
	if ((old & 1) ||
	    ts_cmpxchg(&st->queue, old, (u64)q + 1) != old)
		return -1;
	return claim_held(st, q, disk_addr, dev, how);
}

/* What a claim needs of the disk of @q. */
struct disk_id {
	u64 disk; /* its address, 0: none */
	u32 dev;
	u32 how;  /* as claim_held's */
};

/* The device number of @disk (major << 20 | minor), 0: none. */
static __always_inline u32 disk_dev(struct gendisk *disk)
{
	int major = 0, minor = 0;

	/*
	 * Read, not loaded: before 5.15 the disk comes from rq->rq_disk by
	 * bpf_core_read, a plain number to the verifier.
	 */
	if (disk) {
		bpf_core_read(&major, sizeof(major), &disk->major);
		bpf_core_read(&minor, sizeof(minor), &disk->first_minor);
	}
	return (u32)major << 20 | minor;
}

static __always_inline void disk_id_of(struct request_queue *q,
				       struct request *rq, struct bio *bio,
				       bool direct, u32 id, struct disk_id *d)
{
	struct gendisk *disk = disk_of(q, rq, bio, direct);
	const void *mq_ops;

	LOAD(direct, mq_ops, q->mq_ops);
	d->disk = (u64)disk;
	d->dev = disk_dev(disk);
	d->how = id << 1 | (mq_ops ? 1 : 0);
}

/*
 * The entry of queue id @id: in qid_near, or in qid_far, where it is added
 * when @add; NULL when qid_far is full.
 */
static __always_inline struct ts_qid_slot *qid_entry(u32 id, bool add)
{
	struct ts_qid_slot *e, none = {};

	if (id < qid_near_ids)
		return bpf_map_lookup_elem(&qid_near, &id);
	e = bpf_map_lookup_elem(&qid_far, &id);
	if (e || !add)
		return e;
	bpf_map_update_elem(&qid_far, &id, &none, BPF_NOEXIST);
	return bpf_map_lookup_elem(&qid_far, &id);
}

/*
 * The slot of entry @e, given. Masked although below TS_MAX_DEVS anyway: a
 * slot found through @e then has the bounds of one found with one lookup
 * (device_of), and the verifier checks what follows once, not once each.
 */
static __always_inline u32 qid_of(const struct ts_qid_slot *e)
{
	return (e->slot - 1) & (TS_MAX_DEVS - 1);
}

/* Disk @dev is not traced, for @why (enum ts_untraced): said once. */
static __always_inline void refuse(u32 dev, u32 why)
{
	if (bpf_map_update_elem(&untraced, &dev, &why, BPF_NOEXIST) == -7 /* E2BIG */)
		__sync_fetch_and_add(&untraced_lost, 1);
}

/*
 * A slot of its own for queue id @id: its index, or -1 when all max_devs
 * are given. Slot id % TS_MAX_DEVS first, so that device_of finds an id
 * below TS_MAX_DEVS with one lookup; else the next one free. A slot stays
 * with its queue id (a disk that takes the id later takes it too). Global:
 * the verifier checks its loop once, not in every program that calls it.
 */
__noinline int slot_give(u32 id)
{
	struct ts_dev_state *st;
	u32 slot;
	int i;

	/* one path into the next round, so the verifier's work stays linear */
	for (i = 0; i < TS_MAX_DEVS; i++) {
		slot = (id + i) & (TS_MAX_DEVS - 1);
		if (slot >= max_devs)
			continue;
		st = bpf_map_lookup_elem(&dev_state, &slot);
		if (!st)
			break;
		if (ts_cmpxchg(&st->given_to, 0, id + 1) == 0)
			return slot;
	}
	return -1;
}

/*
 * First sight of queue id @id (entry @e, NULL: qid_far full) with no slot
 * yet, on queue @q of disk @d: a slot when the disk is traced and one is
 * free; else the entry remembers @q as not traced, and a disk refused for
 * want of room is named in untraced. Two CPUs at once: the one that gives
 * the id its slot claims it, the other gives its slot back. Returns the
 * slot's entry (its index in *@qid) once claimed, or NULL.
 */
static __noinline struct ts_dev_state *first_sight(struct ts_qid_slot *e,
						   struct request_queue *q,
						   struct disk_id *d, u32 *qid)
{
	struct ts_dev_state *st = NULL;
	int slot;

	if (!e) {
		refuse(d->dev, TS_UNTRACED_QIDS);
		return NULL;
	}
	if (!d->disk || !dev_chosen(d->dev)) {
		e->not_traced = (u64)q;
		return NULL;
	}
	slot = slot_give(d->how >> 1);
	*qid = slot & (TS_MAX_DEVS - 1); /* see qid_of */
	if (slot >= 0)
		st = bpf_map_lookup_elem(&dev_state, qid);
	if (!st) {
		e->not_traced = (u64)q;
		refuse(d->dev, TS_UNTRACED_LIMIT);
		return NULL;
	}
	st->queue = (u64)q + 1;
	if (ts_cmpxchg(&e->slot, 0, slot + 1) != 0) {
		/* another CPU gave the id its slot: claiming; this one's
		 * slot goes back (a race at a disk's first sight) */
		st->queue = 0;
		*(volatile u32 *)&st->given_to = 0;
		*qid = qid_of(e);
		count_event(*qid, TS_EV_CLAIMING);
		return NULL;
	}
	return claim_held(st, q, d->disk, d->dev, d->how) == TS_DEV_TRACED ?
		       st : NULL;
}

/*
 * The slot's entry of the queue id of @q (its index in *@qid), claimed or
 * not, or NULL: the id has none.
 */
static __always_inline struct ts_dev_state *
state_of(struct request_queue *q, bool direct, u32 *qid)
{
	struct ts_qid_slot *e;
	int id;

	LOAD(direct, id, q->id);
	e = qid_entry(id, false);
	if (!e || !e->slot)
		return NULL;
	*qid = qid_of(e);
	return bpf_map_lookup_elem(&dev_state, qid);
}

/*
 * The device number of the disk of @q: loaded through q->disk where the
 * tracepoints' arguments are typed (5.16 and later, tp_btf), else read.
 */
static __always_inline u32 queue_dev(struct request_queue *q,
				     struct request *rq, struct bio *bio,
				     bool direct)
{
	struct gendisk *disk;
	int major, minor;

	if (!direct || !bpf_core_field_exists(q->disk))
		return disk_dev(disk_of(q, rq, bio, direct));
	LOAD(direct, disk, q->disk);
	if (!disk)
		return 0;
	LOAD(direct, major, disk->major);
	LOAD(direct, minor, disk->first_minor);
	return (u32)major << 20 | minor;
}

/*
 * Entry @st holds @q, but at an I/O's first event (@first_io: its Q, or
 * its issue under --light) the disk may not be the one it was claimed
 * for: a disk removed and another added can get the gone one's queue id
 * and its queue's address back (the allocator reuses it), and then only
 * the device number tells them apart. A new number: the entry is claimed
 * again for it, its depths and histograms start empty and the gone disk's
 * records are stale. The number is read from the disk only when the bio's
 * block device is not the disk itself (bio_on_disk): a partition, a
 * request under --light. Returns the entry's mode, -1 when
 * another CPU is claiming it.
 */
static __always_inline int same_queue_mode(struct ts_dev_state *st,
					   struct request_queue *q,
					   struct request *rq, struct bio *bio,
					   bool direct, u32 id, bool first_io)
{
	struct disk_id d;
	u32 dev;

	if (!first_io || (bio && bio_on_disk(bio, st->dev, direct)))
		return st->mode;
	dev = queue_dev(q, rq, bio, direct);
	if (!dev || dev == st->dev) /* 0: no disk to tell by (passthrough) */
		return st->mode;
	if (ts_cmpxchg(&st->queue, (u64)q, (u64)q + 1) != (u64)q)
		return -1;
	disk_id_of(q, rq, bio, direct, id, &d);
	return claim_held(st, q, d.disk, d.dev, d.how);
}

/*
 * The traced device owning @q (of @rq or @bio), or NULL. @first_io: the
 * event begins an I/O there, where a disk that took a gone one's queue is
 * told apart (same_queue_mode).
 */
static __always_inline struct ts_dev_state *
device_of(struct request_queue *q, struct request *rq, struct bio *bio,
	  bool direct, u32 *qid, bool first_io)
{
	struct ts_qid_slot *e;
	struct ts_dev_state *st;
	struct disk_id d;
	int id, mode, i;

	if (!q)
		return NULL;
	LOAD(direct, id, q->id);
	/* its usual slot (slot_give): one lookup */
	*qid = id & (TS_MAX_DEVS - 1);
	st = bpf_map_lookup_elem(&dev_state, qid);
	if (st && st->queue == (u64)q && st->queue_id == id) {
		mode = same_queue_mode(st, q, rq, bio, direct, id, first_io);
		goto found;
	}
	e = qid_entry(id, false);
	if (!e || !e->slot) {
		if (e && e->not_traced == (u64)q)
			return NULL;
		disk_id_of(q, rq, bio, direct, id, &d);
		return first_sight(qid_entry(id, true), q, &d, qid);
	}
	*qid = qid_of(e);
	st = bpf_map_lookup_elem(&dev_state, qid);
	if (!st)
		return NULL;
	/* another CPU claiming it: a few hundred reads of its queue, then
	 * give up (it may have been preempted) */
	for (i = 0; i < 256 && *(volatile u64 *)&st->queue == (u64)q + 1; i++)
		;
	if (st->queue == (u64)q) {
		mode = same_queue_mode(st, q, rq, bio, direct, id, first_io);
		goto found;
	}
	disk_id_of(q, rq, bio, direct, id, &d);
	if (!d.disk)
		return NULL;
	mode = claim_device(st, q, d.disk, d.dev, d.how);
found:
	if (mode < 0)
		count_event(*qid, TS_EV_CLAIMING);
	return mode == TS_DEV_TRACED ? st : NULL;
}

#endif
