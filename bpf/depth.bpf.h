/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Event counters, and the time-weighted depth: one word per device changed
 * by compare-and-swap (under a lock in the object for old kernels), with a
 * register per level.
 */
#ifndef TS_DEPTH_BPF_H
#define TS_DEPTH_BPF_H

/*
 * Counters that more than one program updates (an issue interrupted by a
 * completion on the same CPU, the sweep) are added to atomically, per-CPU
 * or not: a read-modify-write interrupted there would lose an update.
 */
static __always_inline void count_events(u32 qid, enum ts_event ev, u64 n)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);

	if (ds)
		__sync_fetch_and_add(&ds->events[ev], n);
}

static __always_inline void count_event(u32 qid, enum ts_event ev)
{
	count_events(qid, ev, 1);
}

/*
 * A request that completed untimed, by direction: its completion was never
 * seen (TS_EV_MISSED_C), or the request table had no slot for it.
 */
static __always_inline void count_missed(u32 qid, enum ts_event ev, u8 op,
					 u32 bytes)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);
	u64 i = op;

	if (!ds)
		return;
	__sync_fetch_and_add(&ds->events[ev], 1);
	barrier_var(i); /* see hist_count */
	if (i >= TS_NR_OPS)
		return;
	__sync_fetch_and_add(&ds->op[i].missed, 1);
	__sync_fetch_and_add(&ds->op[i].missed_bytes, bytes);
}

static __always_inline void level_add(u64 *levels, s64 depth, u64 delta)
{
	int slot = ts_level_slot(depth < 0 ? 0 : (u32)depth);

	if (slot < 0 || slot >= TS_LEVEL_SLOTS)
		return;
	__sync_fetch_and_add(&levels[slot], delta);
}

/*
 * The area above TS_LEVEL_EXACT (levels[TS_LEVEL_ABOVE]) for the change of
 * the depth word from @old to @new at @t (include/truestat.h).
 */
static __always_inline void above_add(u64 *levels, u64 old, u64 new, u64 t)
{
	u64 a_old = ts_above_exact(ts_depth_of(old));
	u64 a_new = ts_above_exact(ts_depth_of(new));

	if (!a_old && !a_new)
		return;
	__sync_fetch_and_add(&levels[TS_LEVEL_ABOVE],
			     a_old * ts_stamp_since(old, t) -
				     a_new * ts_stamp_since(new, t));
}

/* Change of depth @os (else in the device) of @qid stamped @ns late. */
static __always_inline void count_reordered(u32 qid, bool os, u64 ns)
{
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);

	if (!ds)
		return;
	if (os)
		__sync_fetch_and_add(&ds->os_reordered_ns, ns);
	else
		__sync_fetch_and_add(&ds->device_reordered_ns, ns);
}

#ifdef TS_LOCKED_ATOMICS
#include "depth_locked.bpf.h"
#else /* the instructions, Linux 5.12 and later */
/*
 * Raises *@peak to @d unless it is already as high. Each lost race is a
 * raise by another CPU; after 16 the peak may be below a depth reached:
 * counted (@qid, TS_EV_CONTENDED), which makes the maximum not exact.
 */
static __always_inline void peak_raise(s64 *peak, s64 d, u32 qid)
{
	s64 old;
	int i;

	for (i = 0; i < 16; i++) {
		old = *(volatile s64 *)peak;
		if (old >= d || __sync_val_compare_and_swap(peak, old, d) == old)
			return;
	}
	count_event(qid, TS_EV_CONTENDED);
}

/*
 * Depth *@word goes up (@step 1) or down (-1) at @now, or at the last
 * change's time if that is later (counted: count_reordered): the level it
 * opens or leaves gets the time. Returns the new depth. A change that
 * loses its race 16 times is made with the clock as read and counted
 * (@qid, TS_EV_CONTENDED). @backdate: a repair closing a level at an
 * estimated, earlier @now; the stamp stays (the report says its depth is
 * not exact). @os: the depth in the OS queue, else in the device.
 */
static __always_inline s64 depth_step(u64 *word, u64 *levels, s64 *peak,
				      u64 *deferred, s64 step, u64 now,
				      u32 qid, bool backdate, bool os)
{
	u64 old = 0, new = 0, t;
	int i;

	now += test_clock_offset;
	t = now;
	for (i = 0; i < 16; i++) {
		old = *(volatile u64 *)word;
		t = backdate ? now : ts_change_time(old, now);
		new = ((old & ~TS_CLOCK_MASK) + ((u64)step << TS_CLOCK_BITS)) |
		      ((backdate ? old : t) & TS_CLOCK_MASK);
		if (__sync_val_compare_and_swap(word, old, new) == old)
			break;
	}
	if (i == 16) {
		count_event(qid, TS_EV_CONTENDED);
		t = now;
		new = __sync_fetch_and_add(word, (u64)step << TS_CLOCK_BITS) +
		      ((u64)step << TS_CLOCK_BITS);
		old = new - ((u64)step << TS_CLOCK_BITS);
	}
	if (t > now)
		count_reordered(qid, os, t - now);
	above_add(levels, old, new, t);
	if (step > 0) {
		level_add(levels, ts_depth_of(new), TS_LEVEL_BIAS - t);
		peak_raise(peak, ts_depth_of(new), qid);
	} else {
		level_add(levels, ts_depth_of(old), t - TS_LEVEL_BIAS);
	}
	return ts_depth_of(new);
}


/* The peak of *@peak since the last take, the next one from *@word. */
static __always_inline s64 peak_take(u64 *word, s64 *peak, u32 qid)
{
	return __sync_lock_test_and_set(peak, ts_depth_of(*word));
}

#endif


#ifndef TS_LOCKED_ATOMICS
#define device_down_later(st, qid, now) device_down(st, qid, now, false)
#endif

static __always_inline s64 device_up(struct ts_dev_state *st, u32 qid, u64 now)
{
	return depth_step(&st->in_device, st->device_level, &st->device_peak,
			  st->device_deferred, 1, now, qid, false, false);
}

static __always_inline void device_down(struct ts_dev_state *st, u32 qid,
					u64 now, bool backdate)
{
	depth_step(&st->in_device, st->device_level, &st->device_peak,
		   st->device_deferred, -1, now, qid, backdate, false);
}

static __always_inline void os_up(struct ts_dev_state *st, u32 qid, u64 now)
{
	depth_step(&st->in_os, st->os_level, &st->os_peak, st->os_deferred, 1,
		   now, qid, false, true);
}

static __always_inline void os_down(struct ts_dev_state *st, u32 qid, u64 now)
{
	depth_step(&st->in_os, st->os_level, &st->os_peak, st->os_deferred, -1,
		   now, qid, false, true);
}

/* When a request issued at @issue_ns probably completed, as of @now. */
static __always_inline u64 estimated_end(u32 qid, u64 issue_ns, u64 now)
{
	u64 *hint = bpf_map_lookup_elem(&service_hint, &qid);
	u64 end = issue_ns + (hint ? *hint : 0);

	return end < now ? end : now;
}

#endif
