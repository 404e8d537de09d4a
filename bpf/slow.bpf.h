/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --slow=MS: each request whose Q -> C reached MS, with where it was, the
 * depth it was issued at and who submitted it, through a ring buffer.
 * Off: the verifier removes all of it and the maps hold one entry.
 */
#ifndef TS_SLOW_BPF_H
#define TS_SLOW_BPF_H

const volatile bool slow = false;
const volatile __u64 slow_ns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_BIO_SLOTS); /* 1 without --slow */
	__type(key, u32);
	__type(value, struct ts_submitter);
} bio_who SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_RQ_SLOTS); /* 1 without --slow */
	__type(key, u32);
	__type(value, struct ts_rq_extra);
} rq_extra SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* the loader sizes it */
} slow_events SEC(".maps");

static __always_inline void who_now(struct ts_submitter *w)
{
	w->cgroup = bpf_get_current_cgroup_id();
	w->tgid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(w->comm, sizeof(w->comm));
}

/* At Q: the bio in slot @idx is the current task's. */
static __always_inline void bio_who_now(u32 idx)
{
	struct ts_submitter *w;

	if (!slow)
		return;
	w = bpf_map_lookup_elem(&bio_who, &idx);
	if (w)
		who_now(w);
}

/* The submitter of the bio in slot @idx into @out (before it is freed). */
static __always_inline void bio_who_take(u32 idx, struct ts_submitter *out)
{
	struct ts_submitter *w;

	if (!slow || !out)
		return;
	w = bpf_map_lookup_elem(&bio_who, &idx);
	if (w)
		*out = *w;
}

/* At issue (or Q at a bio layer): what a slow request will report. */
static __always_inline void rq_extra_set(u32 at, const struct ts_submitter *w,
					 u64 sector, u32 depth)
{
	struct ts_rq_extra *x;

	if (!slow)
		return;
	x = bpf_map_lookup_elem(&rq_extra, &at);
	if (!x)
		return;
	x->who = *w;
	x->sector = sector;
	x->depth = depth;
}

/* Read before the record is taken: its slot is free for reuse after. */
static __always_inline void rq_extra_get(u32 at, struct ts_rq_extra *out)
{
	struct ts_rq_extra *x;

	if (!slow)
		return;
	x = bpf_map_lookup_elem(&rq_extra, &at);
	if (x)
		*out = *x;
}

static __always_inline void slow_report(const struct ts_dev_state *st,
					u32 qid, const struct ts_rq_slot *rec,
					const struct ts_rq_extra *x, u64 now)
{
	u64 start = rec->queued_ns ? rec->queued_ns : rec->issue_ns;
	struct ts_slow_event *e;

	if (!slow || now - start < slow_ns)
		return;
	e = bpf_ringbuf_reserve(&slow_events, sizeof(*e), 0);
	if (!e) {
		count_event(qid, TS_EV_SLOW_DROPPED);
		return;
	}
	e->end_ns = now;
	e->sector = x->sector;
	e->queue_ns = rec->queued_ns ? rec->issue_ns - rec->queued_ns : 0;
	e->service_ns = now - rec->issue_ns;
	e->total_ns = now - start;
	e->dev = st->dev;
	e->bytes = rec->bytes;
	e->depth = x->depth;
	e->op = rec->op;
	e->layer = st->layer;
	e->pad = 0;
	e->who = x->who;
	bpf_ringbuf_submit(e, 0);
}

#endif
