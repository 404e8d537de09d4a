/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --pattern: the access pattern a device sees (scattered small reads
 * against sequential large ones, as in "mysql I/O performance analysis
 * with iostat"), counted as requests are issued.
 */
#ifndef TS_PATTERN_BPF_H
#define TS_PATTERN_BPF_H

#include "core.bpf.h"
#include "atomics.bpf.h"
#include "compat.bpf.h"

/* Set by the loader for --pattern; false: the verifier drops the code. */
const volatile bool pattern = false;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_MAX_DEVS); /* 1 without --pattern */
	__type(key, u32);
	__type(value, struct ts_pattern);
} patterns SEC(".maps");

/* Service time by size, by histogram slot and op (include/truestat.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TS_HIST_DEVS * TS_PATTERN_OPS); /* 1 without --pattern */
	__type(key, u32);
	__type(value, struct ts_size_hist);
} size_hists SEC(".maps");

static __always_inline void count_at(u64 *counts, u64 i, u64 slots, u64 n)
{
	barrier_var(i); /* see hist_count */
	if (i < slots)
		__sync_fetch_and_add(&counts[i], n);
}

/*
 * Whether a request from @sector to @end1 - 1 goes on one of @h's streams
 * (counted in @o): that stream now ends at @end1; else it begins one, in
 * the place of the one begun longest ago. Plain stores: a race loses a
 * head's update (include/truestat.h).
 */
static __always_inline void stream_count(struct ts_stream_heads *h,
					 struct ts_pattern_op *o, u64 sector,
					 u64 end1)
{
	u32 i, at;

#pragma unroll
	for (i = 0; i < TS_STREAMS; i++) {
		if (h->end[i] != sector + 1)
			continue;
		h->end[i] = end1;
		__sync_fetch_and_add(&o->in_stream, 1);
		__sync_fetch_and_add(&o->stream_ios[i], 1);
		return;
	}
	at = h->next++ % TS_STREAMS;
	barrier_var(at); /* see hist_count */
	if (at < TS_STREAMS)
		h->end[at] = end1;
}

/*
 * A request of @bytes at @sector, given to device @qid. The device's last
 * end is swapped in one exchange, so each request is compared with the
 * one given to the device just before it, whichever CPU issued that.
 */
static __always_inline void pattern_count(u32 qid, u8 op, u64 sector,
					  u32 bytes)
{
	struct ts_stream_heads *h;
	struct ts_pattern_op *o;
	struct ts_pattern *p;
	u64 prev, size;
	bool lost; /* another CPU's I/O in between: an order as likely */

	if (!pattern || (op != TS_OP_READ && op != TS_OP_WRITE))
		return;
	p = bpf_map_lookup_elem(&patterns, &qid);
	if (!p)
		return;
	/* constant offsets: the verifier does not carry op's bound here */
	o = op == TS_OP_READ ? &p->op[TS_OP_READ] : &p->op[TS_OP_WRITE];
	h = op == TS_OP_READ ? &p->heads[TS_OP_READ] : &p->heads[TS_OP_WRITE];
	stream_count(h, o, sector, sector + (bytes >> 9) + 1);
	prev = ts_xchg(&p->last_end, sector + (bytes >> 9) + 1, &lost);
	size = ts_size_bucket(bytes);
	count_at(o->size_ios, size, TS_SIZE_SLOTS, 1);
	count_at(o->size_bytes, size, TS_SIZE_SLOTS, bytes);
	if (!prev--)
		return;
	if (sector < prev)
		__sync_fetch_and_add(&o->backward, 1);
	count_at(o->seek, ts_seek_bucket(sector < prev ? prev - sector :
							 sector - prev),
		 TS_SEEK_SLOTS, 1);
}

/* Histogram slot @slot's size histograms emptied (its device is new). */
static __always_inline void size_hists_zero(u32 slot)
{
	struct ts_size_hist *h;
	u32 idx;
	int op;

	if (!pattern)
		return;
	for (op = 0; op < TS_PATTERN_OPS; op++) {
		idx = (slot - 1) * TS_PATTERN_OPS + op;
		h = bpf_map_lookup_elem(&size_hists, &idx);
		if (h)
			zero_value(h, sizeof(*h));
	}
}

/*
 * A completion of @bytes (size at issue) served in @service_ns, into
 * histogram slot @slot's op @op. A function of its own, checked once by
 * the verifier whatever its callers.
 */
__noinline int pattern_service(u32 slot, u32 op, u32 bytes, u64 service_ns)
{
	u32 idx = (slot - 1) * TS_PATTERN_OPS + op;
	u64 c = ts_size_class(ts_size_bucket(bytes));
	u64 b = ts_hist_bucket(service_ns);
	struct ts_size_hist *h;

	if (!slot || op >= TS_PATTERN_OPS)
		return 0;
	h = bpf_map_lookup_elem(&size_hists, &idx);
	barrier_var(c); /* see hist_count */
	barrier_var(b);
	if (h && c < TS_SIZE_CLASSES && b < TS_HIST_SLOTS)
		__sync_fetch_and_add(&h->service[c][b], 1);
	return 0;
}

#endif
