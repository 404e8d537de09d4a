/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --flags: completions by the request flags the device saw (biolatency
 * -F), read from rq->cmd_flags at C, counted per flag combination.
 */
#ifndef TS_FLAGS_BPF_H
#define TS_FLAGS_BPF_H

#include "core.bpf.h"
#include "atomics.bpf.h"
#include "compat.bpf.h"
#include "hists.bpf.h"

/* Set by the loader for --flags; false: the verifier drops the code. */
const volatile bool flag_classes = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TS_FLAGS_ENTRIES); /* 1 without --flags */
	__type(key, struct ts_flags_key);
	__type(value, struct ts_flags_stats);
} flag_stats SEC(".maps");

/* Zeros: a new entry's value (too large for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct ts_flags_stats);
} flag_zero SEC(".maps");

/* 1 << @class when @cmd_flags has bit @bit (enum req_flag_bits). */
static __always_inline u32 flag_class_of(u32 cmd_flags, u32 bit, u32 class)
{
	return cmd_flags & (1U << bit) ? 1U << class : 0;
}

/* The classes of @cmd_flags, as bits of enum ts_flag_class. */
#define FLAG_CLASS(bit, class)                                              \
	flag_class_of(cmd_flags, bpf_core_enum_value(enum req_flag_bits, bit), \
		      class)

static __always_inline u32 flag_bits(u32 cmd_flags)
{
	return FLAG_CLASS(__REQ_SYNC, TS_FLAG_SYNC) |
	       FLAG_CLASS(__REQ_META, TS_FLAG_META) |
	       FLAG_CLASS(__REQ_PRIO, TS_FLAG_PRIO) |
	       FLAG_CLASS(__REQ_RAHEAD, TS_FLAG_READAHEAD) |
	       FLAG_CLASS(__REQ_BACKGROUND, TS_FLAG_BACKGROUND) |
	       FLAG_CLASS(__REQ_FUA, TS_FLAG_FUA) |
	       FLAG_CLASS(__REQ_PREFLUSH, TS_FLAG_PREFLUSH);
}

/* The entry of @key, made when new; NULL: the table is full. */
static __always_inline struct ts_flags_stats *flags_entry(struct ts_flags_key *key)
{
	struct ts_flags_stats *v = bpf_map_lookup_elem(&flag_stats, key);
	u32 zero = 0;
	void *z;

	if (v)
		return v;
	z = bpf_map_lookup_elem(&flag_zero, &zero);
	if (!z)
		return NULL;
	bpf_map_update_elem(&flag_stats, key, z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&flag_stats, key);
}

/*
 * A completion of the disk of slot qid under claim @claimed_ns: @how = op |
 * classes << 8 | queued << 16 | qid << 24 (below TS_MAX_DEVS); @size_dev =
 * bytes | the disk's number << 32. Out of line, scalars only (5 at most):
 * the completion program's size on 5.13.
 */
__noinline int flags_account(u32 how, u64 claimed_ns, u64 queue_ns,
			     u64 service_ns, u64 size_dev)
{
	u32 qid = how >> 24, bytes = (u32)size_dev;
	struct ts_flags_key key = {
		.qid = qid, .op = how & 0xff, .bits = (how >> 8) & 0xff,
		.claimed_ns = claimed_ns, .dev = size_dev >> 32,
	};
	struct ts_flags_stats *v = flags_entry(&key);

	if (!v) {
		count_event(qid, TS_EV_FLAGS_FULL);
		return 0;
	}
	__sync_fetch_and_add(&v->ios, 1);
	if (bytes)
		__sync_fetch_and_add(&v->bytes, bytes);
	if (service_ns)
		__sync_fetch_and_add(&v->service_ns, service_ns);
	hist_count(v->service, service_ns);
	if (!((how >> 16) & 1))
		return 0;
	__sync_fetch_and_add(&v->queued_ios, 1);
	if (queue_ns)
		__sync_fetch_and_add(&v->queue_ns, queue_ns);
	if (queue_ns + service_ns)
		__sync_fetch_and_add(&v->total_ns, queue_ns + service_ns);
	hist_count(v->queue, queue_ns);
	hist_count(v->total, queue_ns + service_ns);
	return 0;
}

/* Request @rq of device @st, slot @qid, completed (@rec: its record). */
static __always_inline void flags_complete(const struct ts_dev_state *st,
					   u32 qid, struct request *rq,
					   const struct ts_rq_slot *rec,
					   bool direct, u64 now)
{
	u32 cmd_flags, how;
	u64 queued_ns = rec->queued_ns, issue_ns = rec->issue_ns;

	if (!flag_classes)
		return;
	LOAD(direct, cmd_flags, rq->cmd_flags);
	how = rec->op | flag_bits(cmd_flags) << 8 | (queued_ns ? 1U << 16 : 0) |
	      (qid & (TS_MAX_DEVS - 1)) << 24;
	flags_account(how, st->claimed_ns, queued_ns ? issue_ns - queued_ns : 0,
		      now - issue_ns, rec->bytes | (u64)st->dev << 32);
}

#endif
