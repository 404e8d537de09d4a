// SPDX-License-Identifier: GPL-2.0
/*
 * witness: how many times each block tracepoint ran a BPF program for one
 * disk, and nothing else: no request table, no timestamps, only per-CPU
 * counters, so that truestat's "missed" can be checked against an
 * independent count (tests/tools/witness.c prints them beside
 * /proc/diskstats).
 *
 * tp_btf programs: the request's fields are read directly.
 *
 * Counters are indexed W_<KIND> * W_NR_GROUPS + group, the groups being
 * the ones /proc/diskstats counts in: read, write (every odd operation),
 * discard, flush. Each counter is written by one program only, and a
 * program never nests inside itself on one CPU (the kernel skips such a
 * run and counts a recursion miss), so plain increments are exact.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

#include "target.bpf.h"

enum w_group { W_READ, W_WRITE, W_DISCARD, W_FLUSH, W_NR_GROUPS };

/* Keep in the order of kind_names[] in witness.c. */
enum w_kind {
	W_ISSUE,	  /* block_rq_issue */
	W_REQUEUE,	  /* block_rq_requeue */
	W_COMPLETE,	  /* block_rq_complete ending a request with data, or a
			   * flush command: what truestat times */
	W_COMPLETE_EMPTY, /* block_rq_complete ending a request of no data
			   * that is no flush command: ends of flush sequences,
			   * empty preflush writes */
	W_PARTIAL,	  /* block_rq_complete with nr_bytes < data_len: the
			   * request goes on (truestat counts no completion) */
	W_BYTES,	  /* nr_bytes of every block_rq_complete, partial or not
			   * (what diskstats adds to its sectors) */
	W_IO_START,	  /* block_io_start: a request enters accounting */
	W_IO_START_EMPTY, /* of those, requests of no data: empty preflush
			   * writes, which are never issued */
	W_IO_DONE,	  /* block_io_done */
	W_NR_KINDS,
};

#define W_NR_COUNTERS (W_NR_KINDS * W_NR_GROUPS)

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, W_NR_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* The diskstats group of @rq's operation (op_stat_group(), flushes apart). */
static __always_inline enum w_group group_of(struct request *rq)
{
	__u32 op = rq->cmd_flags & 0xff;

	if (op == REQ_OP_FLUSH)
		return W_FLUSH;
	if (op == REQ_OP_DISCARD)
		return W_DISCARD;
	return op & 1 ? W_WRITE : W_READ;
}

static __always_inline void add(enum w_kind kind, enum w_group group,
				__u64 n)
{
	__u32 idx = kind * W_NR_GROUPS + group;
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += n;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(w_issue, struct request *rq)
{
	if (on_target(rq))
		add(W_ISSUE, group_of(rq), 1);
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(w_requeue, struct request *rq)
{
	if (on_target(rq))
		add(W_REQUEUE, group_of(rq), 1);
	return 0;
}

/*
 * Partial or not is truestat's rule (bpf/truestat.bpf.c, on_complete): a
 * request ends at the block_rq_complete whose nr_bytes covers what is left
 * of it (nr_bytes >= data_len); one with nr_bytes < data_len is partial.
 */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(w_complete, struct request *rq, blk_status_t error,
	     unsigned int nr_bytes)
{
	enum w_group g;
	__u32 data_len;

	if (!on_target(rq))
		return 0;
	g = group_of(rq);
	data_len = rq->__data_len;
	add(W_BYTES, g, nr_bytes);
	if (nr_bytes < data_len)
		add(W_PARTIAL, g, 1);
	else if (data_len || g == W_FLUSH)
		add(W_COMPLETE, g, 1);
	else
		add(W_COMPLETE_EMPTY, g, 1);
	return 0;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(w_io_start, struct request *rq)
{
	enum w_group g;

	if (!on_target(rq))
		return 0;
	g = group_of(rq);
	add(W_IO_START, g, 1);
	if (!rq->__data_len)
		add(W_IO_START_EMPTY, g, 1);
	return 0;
}

SEC("tp_btf/block_io_done")
int BPF_PROG(w_io_done, struct request *rq)
{
	if (on_target(rq))
		add(W_IO_DONE, group_of(rq), 1);
	return 0;
}
