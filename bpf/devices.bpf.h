/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which device a request or bio is on, and whether it is traced: a
 * device's entry and histograms are claimed at first sight.
 */
#ifndef TS_DEVICES_BPF_H
#define TS_DEVICES_BPF_H

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
 * Histograms for a device just claimed: the entry's old slot, emptied (the
 * queue id was reused), or a new one while there are any left.
 */
static __always_inline void claim_hists(struct ts_dev_state *st)
{
	u32 slot = st->hist_slot, idx;
	struct ts_depth_hist *dh;
	struct ts_hist *h;
	int set;

	if (!slot) {
		slot = __sync_fetch_and_add(&hist_next, 1);
		if (slot < TS_HIST_DEVS)
			st->hist_slot = slot + 1;
		return;
	}
	for (set = 0; set < TS_HIST_SETS; set++) {
		idx = (slot - 1) * TS_HIST_SETS + set;
		h = bpf_map_lookup_elem(&hists, &idx);
		if (h)
			zero_value(h, sizeof(*h));
	}
	idx = slot - 1;
	dh = bpf_map_lookup_elem(&depth_hists, &idx);
	if (dh)
		zero_value(dh, sizeof(*dh));
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
	st->claimed_ns = bpf_ktime_get_ns();
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
	for (i = 0; i < TS_LEVEL_REGS; i++) {
		st->device_level[i] = 0;
		st->os_level[i] = 0;
		asm volatile("" ::: "memory"); /* a loop, not a memset call */
	}
	st->dev = dev;
	st->mode = mode;
	st->claim_done_ns = bpf_ktime_get_ns();
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
	int id, major, minor, mode, i;

	if (!q)
		return NULL;
	LOAD(direct, id, q->id);
	*qid = id;
	st = bpf_map_lookup_elem(&dev_state, qid);
	if (!st)
		return NULL;
	/* another CPU claiming it: a few hundred reads of its queue, then
	 * give up (it may have been preempted) */
	for (i = 0; i < 256 && *(volatile u64 *)&st->queue == (u64)q + 1; i++)
		;
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

#endif
