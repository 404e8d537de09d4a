/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The depth words of the object for kernels before 5.12 (TS_LOCKED_ATOMICS,
 * bpf/atomics.bpf.h), included by bpf/depth.bpf.h: a change is made under
 * the word's lock. A program that finds the lock held (by the program it
 * interrupted on its CPU, or for too long by another CPU) cannot wait: it
 * leaves its change, with its clock read, in the word's deferred counts.
 * Whoever takes the lock next makes the changes left, before its own, at a
 * later time; and each program that changed a word looks once more after
 * letting go, so that none stays left. How late they were made is known
 * from their clock reads, and counted as reordered like any change stamped
 * after its clock read: the depth stays exact.
 *
 * Deferred counts, per word: [0] rises, [1] the sum of their clock reads,
 * [2] falls, [3] theirs, [4] deferrals started, [5] finished. A program
 * adds started, its count and sum, then finished; the holder takes what it
 * read only when no deferral was under way around its reads (else a count
 * could be without its clock reading), leaving them to that deferral,
 * which looks once it has finished. Rises and falls both left, one of
 * each: made in the order of their clock reads; more, made as one move,
 * their order not known (TS_EV_UNORDERED: the peak between may have been
 * higher).
 *
 * The functions taking a slot are global: the verifier checks each once,
 * not at each of the programs' depth changes (inlined there, they took the
 * programs past its million instructions).
 */
#ifndef TS_DEPTH_LOCKED_BPF_H
#define TS_DEPTH_LOCKED_BPF_H

#ifndef TS_LOCKED_ATOMICS
#error "the depth of the object for kernels before 5.12 only"
#endif

#include "core.bpf.h"
#include "atomics.bpf.h"
#include "depth_levels.bpf.h"

/*
 * Level registers of the thresholds in (@lo, @hi] get @delta each. Whether
 * a threshold is in is worked out without a comparison the verifier would
 * follow both ways (it walked the loop once for each range of @lo and @hi).
 */
static __always_inline void levels_cross(u64 *levels, s64 lo, s64 hi,
					 u64 delta)
{
	s64 above_lo, to_hi;
	u64 in;
	int slot;

	if (hi - lo == 1) {
		level_add(levels, hi, delta);
		return;
	}
	for (slot = 0; slot < TS_LEVEL_SLOTS; slot++) {
		above_lo = (s64)ts_slot_level(slot) - lo - 1;
		to_hi = hi - (s64)ts_slot_level(slot);
		barrier_var(above_lo);
		barrier_var(to_hi);
		in = (u64)~(above_lo | to_hi) >> 63; /* both >= 0 */
		if (in)
			__sync_fetch_and_add(&levels[slot], delta);
	}
}

/* low_add, for the depth in the device only (not @os). */
static __always_inline void low_keep(u64 *low, u32 os, u64 old, u64 t)
{
	barrier_var(os);
	if (!os)
		low_add(low, old, t);
}

/*
 * Depth *@word moves by @by at @t, its lock held: the levels it opens or
 * closes get the time (include/truestat.h), and a stretch at a low depth
 * it ends, @low (low_add), unless it is the depth in the OS queue (@os).
 * Returns the new depth.
 */
static __always_inline s64 depth_move(u64 *word, u64 *levels, s64 *peak,
				      u64 *low, bool os, s64 by, u64 t)
{
	u64 old = *word, new;

	new = ((old & ~TS_CLOCK_MASK) + ((u64)by << TS_CLOCK_BITS)) |
	      (t & TS_CLOCK_MASK);
	*(volatile u64 *)word = new;
	above_add(levels, old, new, t);
	low_keep(low, os, old, t);
	if (by > 0) {
		levels_cross(levels, ts_depth_of(old), ts_depth_of(new),
			     TS_LEVEL_BIAS - t);
		if (*peak < ts_depth_of(new))
			*peak = ts_depth_of(new);
	} else {
		levels_cross(levels, ts_depth_of(new), ts_depth_of(old),
			     t - TS_LEVEL_BIAS);
	}
	return ts_depth_of(new);
}

/* Slot @qid's depth word in the OS queue (@os) or the device, and its own. */
struct depth_of_slot {
	u64 *word;
	u64 *levels;
	s64 *peak;
	u64 *deferred;
	u64 *low; /* the device's, for either: a pointer that may be NULL
		   * was made a number by clang's select (5.10: "invalid
		   * mem access"), low_keep goes by os */
};

static __always_inline bool depth_of_slot(u32 qid, u32 os,
					  struct depth_of_slot *d)
{
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);

	if (!st)
		return false;
	d->word = os ? &st->in_os : &st->in_device;
	d->levels = os ? st->os_level : st->device_level;
	d->peak = os ? &st->os_peak : &st->device_peak;
	d->deferred = os ? st->os_deferred : st->device_deferred;
	d->low = st->device_low_ns;
	return true;
}

/*
 * Slot @qid's depth (in the OS queue: @os) moves by @by at @t, the lock
 * held: @n changes left with clock reads summing to @sum. @where is
 * (@qid << 1 | @os): a BPF function takes five arguments.
 */
__noinline int deferred_make_slot(u32 where, s64 by, u64 n, u64 sum, u64 t)
{
	u32 qid = where >> 1, os = where & 1;
	struct depth_of_slot d;

	if (!depth_of_slot(qid, os, &d))
		return 0;
	depth_move(d.word, d.levels, d.peak, d.low, os, by, t);
	if (n * t > sum)
		count_reordered(qid, os, n * t - sum);
	return 0;
}

/*
 * The rises or falls left in @count and @sum (*@n, *@at) as read, taken
 * away: the caller saw no deferral under way around the reads.
 */
static __always_inline void deferred_take(u64 *count, u64 *sum, u64 *n,
					  u64 *at)
{
	if (!*n)
		return;
	__sync_fetch_and_add(count, -*n);
	__sync_fetch_and_add(sum, -*at);
}

/*
 * Reads the deferred counts into @c[4]; false when a deferral was under
 * way (started, not finished) before the reads or began during them:
 * what was read may be a count without its clock reading, left for later
 * (that deferral looks again once finished).
 */
static __always_inline bool deferred_read(u64 *deferred, u64 *c)
{
	u64 finished = *(volatile u64 *)&deferred[5];
	u64 started = *(volatile u64 *)&deferred[4];

	if (started != finished)
		return false;
	c[0] = *(volatile u64 *)&deferred[0];
	c[1] = *(volatile u64 *)&deferred[1];
	c[2] = *(volatile u64 *)&deferred[2];
	c[3] = *(volatile u64 *)&deferred[3];
	return *(volatile u64 *)&deferred[4] == started;
}

/* Leaves a change (@falls: a fall) made at @now for the lock's holder. */
static __always_inline void deferred_leave(u64 *deferred, bool falls, u64 now)
{
	__sync_fetch_and_add(&deferred[4], 1);
	__sync_fetch_and_add(&deferred[falls ? 2 : 0], 1);
	__sync_fetch_and_add(&deferred[falls ? 3 : 1], now);
	__sync_fetch_and_add(&deferred[5], 1);
}

/*
 * The changes left in slot @qid's deferred counts, made now, the lock
 * held (a clock read after every change taken: a holder's own was read
 * before it took the lock). One rise and one fall: in the order of their
 * clock reads. More of both: their order is not known, and they are made
 * as one move; the peak between may have been higher by as many as the
 * fewer of them, counted (TS_EV_UNORDERED), so that the report bounds it.
 */
static __always_inline void deferred_make(u64 *word, u64 *deferred, u32 qid,
					  u32 os)
{
	u64 t, rises, rise_at, falls, fall_at, c[4] = {};
	u32 where = qid << 1 | os;

	if ((!deferred[0] && !deferred[2]) || !deferred_read(deferred, c))
		return;
	rises = c[0], rise_at = c[1], falls = c[2], fall_at = c[3];
	deferred_take(&deferred[0], &deferred[1], &rises, &rise_at);
	deferred_take(&deferred[2], &deferred[3], &falls, &fall_at);
	t = ts_change_time(*word, bpf_ktime_get_ns() + test_clock_offset);
	if (rises == 1 && falls == 1 && fall_at < rise_at) {
		deferred_make_slot(where, -1, 1, fall_at, t);
		deferred_make_slot(where, 1, 1, rise_at, t);
	} else if (rises && falls && rises + falls > 2) {
		deferred_make_slot(where, (s64)rises - (s64)falls, rises + falls,
				   rise_at + fall_at, t);
		count_events(qid, TS_EV_UNORDERED, rises < falls ? rises : falls);
	} else {
		if (rises)
			deferred_make_slot(where, rises, rises, rise_at, t);
		if (falls)
			deferred_make_slot(where, -(s64)falls, falls, fall_at, t);
	}
}

/* deferred_make on slot @qid's depth, its lock taken if free. */
__noinline int deferred_apply_slot(u32 qid, u32 os)
{
	struct depth_of_slot d;
	u64 key;

	if (!depth_of_slot(qid, os, &d) ||
	    (!d.deferred[0] && !d.deferred[2]))
		return 0;
	key = ptr_value(d.word);
	if (!word_lock(key))
		return 0;
	deferred_make(d.word, d.deferred, qid, os);
	word_unlock(key);
	return 0;
}

/*
 * Depth *@word goes up (@step 1) or down (-1) at @now, or at the last
 * change's time if that is later (counted: count_reordered), under its
 * lock, after the changes others left; or, the lock held, left for its
 * holder. Returns the new depth (as far as this program knows, when left).
 * @low, @os: as in bpf/depth.bpf.h.
 */
static __always_inline s64 depth_step(u64 *word, u64 *levels, s64 *peak,
				      u64 *deferred, u64 *low, s64 step,
				      u64 now, u32 qid, bool os)
{
	u64 key = ptr_value(word), t;
	s64 depth;

	now += test_clock_offset;
	if (word_lock(key)) {
		deferred_make(word, deferred, qid, os);
		t = ts_change_time(*word, now);
		depth = depth_move(word, levels, peak, low, os, step, t);
		word_unlock(key);
		if (t > now)
			count_reordered(qid, os, t - now);
	} else {
		deferred_leave(deferred, step < 0, now);
		depth = ts_depth_of(*(volatile u64 *)word) + step;
	}
	deferred_apply_slot(qid, os);
	return depth;
}

/*
 * The depth in the device of @st (slot @qid) falls at @now, left for the
 * next change there, or the sweep: as if its lock were held.
 */
static __always_inline void device_down_later(struct ts_dev_state *st,
					      u32 qid, u64 now)
{
	deferred_leave(st->device_deferred, true, now + test_clock_offset);
}

/* The peak of *@peak since the last take, the next one from *@word. */
static __always_inline s64 peak_take(u64 *word, s64 *peak, u32 qid)
{
	u64 key = ptr_value(word);
	bool ok = word_lock(key);
	s64 taken = *peak;

	*peak = ts_depth_of(*word);
	if (ok)
		word_unlock(key);
	else
		count_event(qid, TS_EV_CONTENDED);
	return taken;
}

/* depth_step on slot @qid's depth: a global function. */
__noinline s64 depth_step_locked(u32 qid, u32 os, s64 step, u64 now)
{
	struct depth_of_slot d;

	if (!depth_of_slot(qid, os, &d))
		return 0;
	return depth_step(d.word, d.levels, d.peak, d.deferred, d.low, step,
			  now, qid, os);
}

/*
 * Slot @qid's depth (in the OS queue: @os) restamped at @now under its
 * lock, after the changes left (ts_restamp). A lock held: its holder is
 * changing the word, which stamps it.
 */
__noinline int depth_restamp_slot(u32 qid, u32 os, u64 now)
{
	struct depth_of_slot d;
	u64 key, old, new;

	deferred_apply_slot(qid, os); /* a call: inlined, the sweep was too big */
	if (!depth_of_slot(qid, os, &d))
		return 0;
	key = ptr_value(d.word);
	if (!word_lock(key))
		return 0;
	now += test_clock_offset;
	old = *d.word;
	new = ts_restamp(old, now);
	*(volatile u64 *)d.word = new;
	above_add(d.levels, old, new, ts_change_time(old, now));
	low_keep(d.low, os, old, ts_change_time(old, now));
	word_unlock(key);
	return 0;
}

#define depth_restamp(word, levels, low, qid, os, now) \
	depth_restamp_slot(qid, os, now)

#define depth_step(word, levels, peak, deferred, low, step, now, qid, os) \
	depth_step_locked(qid, os, step, now)

#endif
