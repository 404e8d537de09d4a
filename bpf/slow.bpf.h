/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --slow=MS: each request whose Q -> C reached MS, with where it was, the
 * depth it was issued at and who submitted it, through a ring buffer; and
 * --by: requests summed by their submitter. Off: the verifier removes all
 * of it and the maps hold one entry.
 */
#ifndef TS_SLOW_BPF_H
#define TS_SLOW_BPF_H

#include "core.bpf.h"

const volatile bool slow = false;
const volatile __u64 slow_ns = 0;
/* the submitter is kept from Q to C: for --slow or --by */
const volatile bool keep_who = false;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_BIO_SLOTS); /* 1 without --slow or --by */
	__type(key, u32);
	__type(value, struct ts_submitter);
} bio_who SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_RQ_SLOTS); /* 1 without --slow or --by */
	__type(key, u32);
	__type(value, struct ts_rq_extra);
} rq_extra SEC(".maps");

/*
 * One ring for all CPUs, in completion order. Per-CPU rings pay only when
 * many CPUs complete at once: on a 2-CPU host, ts_complete's ns per call
 * under --slow=0 (bpf_stats, loop over /dev/shm, fio randread 4k, libaio
 * iodepth 32) stays the same from 1 to 4 fio jobs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* the loader sizes it (--slow-buffer) */
} slow_events SEC(".maps");

/*
 * Every byte of *@w set, its flags too: a submitter is copied whole, and the
 * verifiers of 5.13 and 5.15 refuse to read stack never written.
 */
static __always_inline void who_now(struct ts_submitter *w)
{
	w->flags = 0;
	w->cgroup = bpf_get_current_cgroup_id();
	w->tgid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(w->comm, sizeof(w->comm));
}

/*
 * The bio in slot @idx was submitted by @who, or by the current task when
 * @who is NULL (at Q). A bio that enters the OS queue again (its request
 * given back, a split of a bio) keeps its first submitter: the task that
 * runs then is a kworker or an interrupt.
 */
static __always_inline void bio_who_set(u32 idx, const struct ts_submitter *who)
{
	struct ts_submitter *w;

	if (!keep_who)
		return;
	w = bpf_map_lookup_elem(&bio_who, &idx);
	if (!w)
		return;
	if (who)
		*w = *who;
	else
		who_now(w);
}

/* The submitter of the bio in slot @idx into @out (before it is freed). */
static __always_inline void bio_who_take(u32 idx, struct ts_submitter *out)
{
	struct ts_submitter *w;

	if (!keep_who || !out)
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

	if (!keep_who)
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

	if (!keep_who)
		return;
	x = bpf_map_lookup_elem(&rq_extra, &at);
	if (x)
		*out = *x;
}

struct ts_rq_extra extra_zero; /* never written: not kept */

/*
 * Record slot @at's extra, in place: its own while the record is held (a
 * pointer, not a copy, for callers deep in a chain of calls on 5.10's 512
 * bytes of stack); extra_zero when not kept.
 */
static __always_inline const struct ts_rq_extra *rq_extra_held(u32 at)
{
	struct ts_rq_extra *x = keep_who ?
					bpf_map_lookup_elem(&rq_extra, &at) :
					NULL;

	return x ? x : &extra_zero;
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
	/*
	 * No wakeup: the reader drains on its own clock. A wakeup is an
	 * irq_work on this CPU, inside the completion path, whose every
	 * request it delayed by microseconds (52-light: the kernel's own
	 * await grew by 3-4 us over truestat's total with one).
	 */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

const volatile __u32 by = TS_BY_NONE;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TS_WHO_ENTRIES); /* 1 without --by */
	__type(key, struct ts_who_key);
	__type(value, struct ts_who_stats);
} by_who SEC(".maps");

struct ts_who_stats who_zero; /* never written */
struct ts_submitter who_zero_submitter; /* never written: not known */

static __always_inline struct ts_who_stats *
who_entry(const struct ts_who_key *key, const struct ts_submitter *w)
{
	struct ts_who_stats *s;

	s = bpf_map_lookup_elem(&by_who, key);
	if (s)
		return s;
	/* a new entry: zeros (too big for the stack), then its name */
	if (bpf_map_update_elem(&by_who, key, &who_zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&by_who, key))
		return NULL;
	s = bpf_map_lookup_elem(&by_who, key);
	if (s)
		__builtin_memcpy(s->comm, w->comm, sizeof(s->comm));
	return s;
}

/*
 * --by: a request of slot @at, disk @dev of slot @qid under claim
 * @claimed_ns, direction @op: its submitter's entry (captured at Q, in
 * rq_extra), made if new, or NULL when the table is full.
 */
static __always_inline struct ts_who_stats *
who_entry_of(u32 at, u32 dev, u32 qid, u8 op, u64 claimed_ns,
	     struct ts_who_key *key)
{
	struct ts_rq_extra *x = keep_who ? bpf_map_lookup_elem(&rq_extra, &at) :
					   NULL;

	*key = (struct ts_who_key){ .claimed_ns = claimed_ns, .dev = dev,
				    .qid = qid, .op = op };
	if (!x)
		return who_entry(key, &who_zero_submitter);
	if (x->who.tgid)
		key->id = by == TS_BY_CGROUP ? x->who.cgroup : x->who.tgid;
	return who_entry(key, &x->who);
}

/*
 * --by: request of record slot @at (held: rq_extra's copy is its own),
 * with @where = at << 12 | slot << 4 | op, of the disk that holds the
 * slot now (its number and claim looked up here: a device entry passed
 * down stays live in the callers, on 5.10's 512 bytes of stack): counted
 * in its submitter's row; @bytes ~0, it ended
 * unseen (repaired): in its missed. @queued: 1 + its queue time, 0 when
 * its Q was not seen. Returns 0, or WHO_FULL or WHO_RACED for the caller
 * to count. A global function of scalars: the key in its own frame, off
 * the completion programs' stack (5.10: 512 bytes over a chain of calls,
 * this frame at the end of one), checked once (5.13's instruction limit).
 */
#define WHO_FULL 1
#define WHO_RACED 2
__noinline int who_count(u64 where, u64 service_ns, u64 queued, u64 bytes)
{
	u32 qid = (where >> 4) & (TS_MAX_DEVS - 1);
	struct ts_dev_state *st;
	struct ts_who_key key;
	struct ts_who_stats *s;
	u64 total, b;

	st = bpf_map_lookup_elem(&dev_state, &qid);
	if (!st)
		return 0;
	s = who_entry_of((where >> 12) & (TS_RQ_SLOTS_MAX - 1), st->dev, qid,
			 where & 7, st->claimed_ns, &key);
	if (!s)
		return WHO_FULL;
	if (bytes == ~0ULL) {
		__sync_fetch_and_add(&s->missed, 1);
		return 0;
	}
	total = service_ns + (queued ? queued - 1 : 0);
	__sync_fetch_and_add(&s->ios, 1);
	__sync_fetch_and_add(&s->bytes, bytes);
	__sync_fetch_and_add(&s->service_ns, service_ns);
	__sync_fetch_and_add(&s->total_ns, total);
	if (queued) {
		__sync_fetch_and_add(&s->queued_ios, 1);
		__sync_fetch_and_add(&s->queue_ns, queued - 1);
	}
	b = ts_who_bucket(total);
	barrier_var(b); /* see hist_count */
	if (b < TS_WHO_SLOTS)
		__sync_fetch_and_add(&s->total[b], 1);
	/* userspace folded and deleted the entry meanwhile (its last copy
	 * may miss these adds; a new entry may have taken its memory) */
	return bpf_map_lookup_elem(&by_who, &key) != s ? WHO_RACED : 0;
}

/* who_count's answer counted in slot @qid's events. */
static __always_inline void who_counted(u32 qid, int rc)
{
	if (rc)
		count_event(qid, rc == WHO_FULL ? TS_EV_WHO_FULL :
						  TS_EV_WHO_RACED);
}

/* who_count's @where: record slot @at, device slot @qid, direction @op. */
static __always_inline u64 who_where(u32 qid, u32 at, u8 op)
{
	return (u64)(at & (TS_RQ_SLOTS_MAX - 1)) << 12 |
	       (qid & (TS_MAX_DEVS - 1)) << 4 | (op & 7);
}

/*
 * --by: the request of record slot @at (held), direction @op, of device
 * slot @qid, ended unseen (repaired): missed in its submitter's row, as in
 * the device's.
 */
static __always_inline void who_missed(u32 qid, u32 at, u8 op)
{
	if (by == TS_BY_NONE)
		return;
	who_counted(qid, who_count(who_where(qid, at, op), 0, 0, ~0ULL));
}

/*
 * --by: request @rec of device slot @qid, record slot @at (still held:
 * its rq_extra not yet another's), completed at @now.
 */
static __always_inline void who_account(u32 qid, u32 at,
					const struct ts_rq_slot *rec, u64 now)
{
	if (by == TS_BY_NONE)
		return;
	who_counted(qid, who_count(who_where(qid, at, rec->op),
				   now - rec->issue_ns,
				   rec->queued_ns ?
					   rec->issue_ns - rec->queued_ns + 1 :
					   0,
				   rec->bytes));
}

#endif
