/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flush clock of a device: the time a flush command was in it, summed.
 * A durable write takes it at its Q and at its end: the difference is the
 * part of its time a flush was in the device, whether that flush was its
 * own or served several (blk-flush merges the preflushes pending at once
 * into one), so that commit time is attributed to the flushes that served
 * it. Only flush commands move it: other requests pay one test of their op.
 */
#ifndef TS_FLUSH_CLOCK_BPF_H
#define TS_FLUSH_CLOCK_BPF_H

#include "core.bpf.h"
#include "atomics.bpf.h"

/* ns from stamp @from to @now; 0 when @now reads before it (reordered). */
static __always_inline u64 flush_stretch(u64 from, u64 now)
{
	u64 d = (now - from) & TS_CLOCK_MASK;

	return d >> (TS_CLOCK_BITS - 1) ? 0 : d;
}

/*
 * A flush command of slot @qid entered (@delta 1) or left (-1) the device
 * at @now: the stretch since the last change is added to the busy time
 * when one was in it. A leave with none counted (its issue before the
 * claim) changes nothing. A global function, checked once by the verifier
 * rather than inside each program that issues or ends a request; inlined
 * in the object for old kernels (forget_slot's reason), where a change is
 * made under the word's lock and lost only to a lock not taken.
 */
#ifdef TS_LOCKED_ATOMICS
#define TS_FLUSH_TRIES 2
static __always_inline int flush_clock_move(u32 qid, s64 delta, u64 now)
#else
#define TS_FLUSH_TRIES 16
__noinline int flush_clock_move(u32 qid, s64 delta, u64 now)
#endif
{
	struct ts_dev_state *st = bpf_map_lookup_elem(&dev_state, &qid);
	u64 old, new, n;
	int i;

	if (!st)
		return 0;
	for (i = 0; i < TS_FLUSH_TRIES; i++) {
		old = *(volatile u64 *)&st->flush_word;
		n = old >> TS_CLOCK_BITS;
		if (delta < 0 && !n)
			return 0;
		new = ((n + delta) << TS_CLOCK_BITS) | (now & TS_CLOCK_MASK);
		if (ts_cmpxchg(&st->flush_word, old, new) != old)
			continue;
		if (n)
			__sync_fetch_and_add(&st->flush_busy_ns,
					     flush_stretch(old, now));
		return 0;
	}
	count_event(qid, TS_EV_CONTENDED);
	return 0;
}

/*
 * The busy time as of @now: the sum so far and the stretch under way. A
 * change between the reads moves the word: read again, a few times.
 */
static __always_inline u64 flush_clock_at(const struct ts_dev_state *st,
					  u64 now)
{
	u64 word, busy = 0;
	int i;

	for (i = 0; i < 4; i++) {
		word = *(volatile u64 *)&st->flush_word;
		busy = *(volatile u64 *)&st->flush_busy_ns;
		if (*(volatile u64 *)&st->flush_word != word)
			continue;
		if (word >> TS_CLOCK_BITS)
			busy += flush_stretch(word, now);
		break;
	}
	return busy;
}

#endif
