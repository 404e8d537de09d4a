/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The histograms: a device's slot of them, taken when it is claimed, and
 * what a completion adds to them (service, queue and total time, request
 * size, service time by the depth at issue).
 */
#ifndef TS_HISTS_BPF_H
#define TS_HISTS_BPF_H

#include "core.bpf.h"
#include "atomics.bpf.h"
#include "compat.bpf.h"
#include "pattern.bpf.h"

/* By device slot (its hist_slot - 1) and set (an op, or TS_HIST_SYNC). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TS_HIST_DEVS * TS_HIST_SETS);
	__type(key, u32);
	__type(value, struct ts_hist);
} hists SEC(".maps");

/* Service time by the depth at issue, by device slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TS_HIST_DEVS);
	__type(key, u32);
	__type(value, struct ts_depth_hist);
} depth_hists SEC(".maps");

/* Histogram slots handed out so far (devices beyond TS_HIST_DEVS get none). */
__u32 hist_next;

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
		slot = ts_fetch_add(&hist_next, 1);
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
	size_hists_zero(slot);
}

/*
 * A traced device claimed without histograms while some are left: its
 * claim found hist_next's lock held (the object for old kernels, where
 * ts_fetch_add then adds nothing). The sweep gives it some, so that it is
 * not without them for the run.
 */
static __always_inline void hists_retry(struct ts_dev_state *st)
{
	if (st->mode == TS_DEV_TRACED && !st->hist_slot && !(st->queue & 1) &&
	    TS_ONCE(&hist_next) < TS_HIST_DEVS)
		claim_hists(st);
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

/* Histograms of device slot @slot (1 + index), set @set (an op or
 * TS_HIST_SYNC), or NULL: none. */
static __always_inline struct ts_hist *hist_of(u32 slot, u8 set)
{
	u32 idx = (slot - 1) * TS_HIST_SETS + set;

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

/* Service time by the depth the request was issued at; at depth 1, by op. */
static __always_inline void depth_hist_add(u32 slot, u8 op, u8 depth_class,
					   u64 service_ns)
{
	u32 idx = slot - 1;
	struct ts_depth_hist *h = bpf_map_lookup_elem(&depth_hists, &idx);
	u64 b = ts_hist_bucket(service_ns), c = depth_class, o = op;

	barrier_var(b);
	barrier_var(c);
	barrier_var(o);
	if (!h || c >= TS_DEPTH_CLASSES || b >= TS_HIST_SLOTS)
		return;
	__sync_fetch_and_add(&h->service[c][b], 1);
	if (!c && o < TS_NR_OPS)
		__sync_fetch_and_add(&h->depth1[o][b], 1);
}

#endif
