// SPDX-License-Identifier: GPL-2.0
/*
 * spans: each block_io_start, block_rq_issue, block_rq_requeue, ending
 * block_rq_complete and block_io_done of one disk, with its time and its
 * request, into a ring buffer (spans.c prints them). No request table, no
 * sums: the spans and their unions are made from the lines, outside BPF,
 * so that they are a second count of what truestat sums in its maps.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

#include "target.bpf.h"

/* Keep in the order of kind_letters[] in spans.c. */
enum s_kind { S_IO_START, S_ISSUE, S_REQUEUE, S_COMPLETE, S_IO_DONE };

struct span_event {
	__u64 ns;
	__u64 rq;
	__u32 kind;
	__u32 cpu;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 20);
} events SEC(".maps");

/* Events the ring buffer had no room for: spans.c prints the count. */
__u64 dropped = 0;

static __always_inline void put(struct request *rq, enum s_kind kind)
{
	__u64 now = bpf_ktime_get_ns();	/* before anything that may wait */
	struct span_event *e;

	if (!on_target(rq))
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&dropped, 1);
		return;
	}
	e->ns = now;
	e->rq = (__u64)rq;
	e->kind = kind;
	e->cpu = bpf_get_smp_processor_id();
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/block_io_start")
int BPF_PROG(s_io_start, struct request *rq)
{
	put(rq, S_IO_START);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(s_issue, struct request *rq)
{
	put(rq, S_ISSUE);
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(s_requeue, struct request *rq)
{
	put(rq, S_REQUEUE);
	return 0;
}

/* A request ends at the completion that covers what is left of it
 * (truestat's rule); partial completions are not spans' ends. */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(s_complete, struct request *rq, blk_status_t error,
	     unsigned int nr_bytes)
{
	if (nr_bytes >= rq->__data_len)
		put(rq, S_COMPLETE);
	return 0;
}

SEC("tp_btf/block_io_done")
int BPF_PROG(s_io_done, struct request *rq)
{
	put(rq, S_IO_DONE);
	return 0;
}
