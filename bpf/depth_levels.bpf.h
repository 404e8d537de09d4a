/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a change of a depth word adds to its level registers, in both
 * ways of changing it (bpf/depth.bpf.h, bpf/depth_locked.bpf.h).
 */
#ifndef TS_DEPTH_LEVELS_BPF_H
#define TS_DEPTH_LEVELS_BPF_H

#include "core.bpf.h"

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

/*
 * A change of a depth word from @old at @t: a stretch at a depth of 1 to
 * TS_LOW_DEPTHS it ends goes to @low (NULL: not kept). Only the program
 * that made the change adds it, so each stretch is added once.
 */
static __always_inline void low_add(u64 *low, u64 old, u64 t)
{
	u64 i = (u64)(ts_depth_of(old) - 1); /* depth 0 and below: past 4 */
	s64 ns = ts_stamp_since(old, t);

	if (!low || i >= TS_LOW_DEPTHS || ns <= 0)
		return;
	barrier_var(i);
	__sync_fetch_and_add(&low[i & (TS_LOW_DEPTHS - 1)], ns);
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

#endif
