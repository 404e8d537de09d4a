/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The time-weighted depth, in the device and in the OS queue: one word per
 * device changed by compare-and-swap (under a lock in the object for old
 * kernels, bpf/depth_locked.bpf.h), with a register per level
 * (bpf/depth_levels.bpf.h).
 */
#ifndef TS_DEPTH_BPF_H
#define TS_DEPTH_BPF_H

#include "core.bpf.h"
#include "depth_levels.bpf.h"

/*
 * Recent mean service time per device, written by the loader: a request
 * whose completion was never seen is taken out of the depth at its issue
 * time plus this, not at the (later) moment it is found.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TS_MAX_DEVS);
	__type(key, u32);
	__type(value, u64);
} service_hint SEC(".maps");

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
 * opens or leaves gets the time, and a stretch at a low depth that it
 * ends, @low (low_add; NULL: not kept). Returns the new depth. A change
 * that loses its race 16 times is made with the clock as read and counted
 * (@qid, TS_EV_CONTENDED). @os: the depth in the OS queue, else in the
 * device.
 */
static __always_inline s64 depth_step(u64 *word, u64 *levels, s64 *peak,
				      u64 *deferred, u64 *low, s64 step,
				      u64 now, u32 qid, bool os)
{
	u64 old = 0, new = 0, t;
	int i;

	now += test_clock_offset;
	t = now;
	for (i = 0; i < 16; i++) {
		old = *(volatile u64 *)word;
		t = ts_change_time(old, now);
		new = ((old & ~TS_CLOCK_MASK) + ((u64)step << TS_CLOCK_BITS)) |
		      (t & TS_CLOCK_MASK);
		if (__sync_val_compare_and_swap(word, old, new) == old)
			break;
	}
	if (i == 16) {
		count_event(qid, TS_EV_CONTENDED);
		t = now;
		new = __sync_fetch_and_add(word, (u64)step << TS_CLOCK_BITS) +
		      ((u64)step << TS_CLOCK_BITS);
		old = new - ((u64)step << TS_CLOCK_BITS);
	} else {
		low_add(low, old, t);
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

/*
 * Depth *@word restamped at @now (ts_restamp), the area above
 * TS_LEVEL_EXACT and a stretch at a low depth up to then added. 16 lost
 * races: 16 changes stamped it.
 */
static __always_inline void depth_restamp(u64 *word, u64 *levels,
					  u64 *low, u32 qid, bool os,
					  u64 now)
{
	u64 old, new;
	int i;

	now += test_clock_offset;
	for (i = 0; i < 16; i++) {
		old = *(volatile u64 *)word;
		new = ts_restamp(old, now);
		if (__sync_val_compare_and_swap(word, old, new) == old) {
			above_add(levels, old, new, ts_change_time(old, now));
			low_add(low, old, ts_change_time(old, now));
			return;
		}
	}
}

#endif


#ifndef TS_LOCKED_ATOMICS
#define device_down_later(st, qid, now) device_down(st, qid, now)
#endif

static __always_inline s64 device_up(struct ts_dev_state *st, u32 qid, u64 now)
{
	return depth_step(&st->in_device, st->device_level, &st->device_peak,
			  st->device_deferred, st->device_low_ns, 1, now,
			  qid, false);
}

static __always_inline s64 device_down(struct ts_dev_state *st, u32 qid,
				       u64 now)
{
	return depth_step(&st->in_device, st->device_level, &st->device_peak,
			  st->device_deferred, st->device_low_ns, -1, now,
			  qid, false);
}

static __always_inline void os_up(struct ts_dev_state *st, u32 qid, u64 now)
{
	depth_step(&st->in_os, st->os_level, &st->os_peak, st->os_deferred,
		   NULL, 1, now, qid, true);
}

static __always_inline void os_down(struct ts_dev_state *st, u32 qid, u64 now)
{
	depth_step(&st->in_os, st->os_level, &st->os_peak, st->os_deferred,
		   NULL, -1, now, qid, true);
}

/* Both depth words of @st (slot @qid) restamped at @now (TS_RESTAMP_NS). */
static __always_inline void depth_restamp_both(struct ts_dev_state *st,
					       u32 qid, u64 now)
{
	depth_restamp(&st->in_device, st->device_level, st->device_low_ns,
		      qid, false, now);
	depth_restamp(&st->in_os, st->os_level, NULL, qid, true, now);
}

/* When a request issued at @issue_ns probably completed, as of @now. */
static __always_inline u64 estimated_end(u32 qid, u64 issue_ns, u64 now)
{
	u64 *hint = bpf_map_lookup_elem(&service_hint, &qid);
	u64 end = issue_ns + (hint ? *hint : 0);

	return end < now ? end : now;
}

#endif
