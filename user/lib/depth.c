// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "truestat.h"
#include "depth.h"

__s64 ts_level_time(__u64 reg, __u64 now_ns)
{
	/* n = round(reg / BIAS): how many times the level is open right now */
	__s64 n = ((__s64)reg + (__s64)(TS_LEVEL_BIAS / 2)) >> 60;

	return (__s64)(reg - (__u64)n * TS_LEVEL_BIAS + (__u64)n * now_ns);
}

void ts_levels_at(const __u64 *regs, __u64 word, __u64 now_ns,
		  __s64 *at_least)
{
	int slot;

	for (slot = 0; slot < TS_LEVEL_SLOTS; slot++)
		at_least[slot] = ts_level_time(regs[slot], now_ns);
	at_least[TS_LEVEL_ABOVE] =
		(__s64)regs[TS_LEVEL_ABOVE] +
		(__s64)ts_above_exact(ts_depth_of(word)) *
			ts_stamp_since(word, now_ns);
}

/*
 * Make @v (ns at depth >= each level) a possible history again. A request
 * whose completion was never seen leaves the depth at its estimated end,
 * after later requests already opened and closed the levels above it: the
 * registers then hold negative time on some levels and time on levels
 * above others that held less. Moving time between levels keeps their sum,
 * the area under the depth curve, exact; so negatives are carried down to
 * the level below, and the levels sorted so that deeper is never longer.
 * Last, a racing read can put a level slightly outside 0..span.
 */
void ts_depth_repair(__s64 *v, __u64 span_ns)
{
	__s64 x;
	int slot, j;

	for (slot = TS_LEVEL_SLOTS - 1; slot > 0; slot--) {
		if (v[slot] < 0) {
			v[slot - 1] += v[slot];
			v[slot] = 0;
		}
	}
	for (slot = 1; slot < TS_LEVEL_SLOTS; slot++) {
		x = v[slot];
		for (j = slot; j > 0 && v[j - 1] < x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	for (slot = 0; slot < TS_LEVEL_SLOTS; slot++) {
		if (v[slot] < 0)
			v[slot] = 0;
		else if ((__u64)v[slot] > span_ns)
			v[slot] = span_ns;
	}
}

/* Smallest depth D with time(depth > D) <= (1 - q) * span. */
static unsigned int percentile(const __s64 *at_least, __u64 span_ns, double q)
{
	/* not (1 - q) * span: 1 - 0.9 is 0.0999..98, so exactly 90% failed */
	double limit = (double)span_ns - q * (double)span_ns;
	unsigned int below = 0;
	int slot;

	for (slot = 0; slot < TS_LEVEL_SLOTS; slot++) {
		if ((double)at_least[slot] <= limit)
			return slot < TS_LEVEL_EXACT ? ts_slot_level(slot) - 1 : below;
		below = ts_slot_level(slot);
	}
	return below;
}

/*
 * ns x requests in the span from @raw: the levels up to TS_LEVEL_EXACT and
 * the area above, exact at any depth. Negatives are carried down and each
 * level kept within the span, as ts_depth_repair does.
 */
static double depth_area(const __s64 *raw, __u64 span_ns)
{
	__s64 v[TS_LEVEL_EXACT + 1];
	double sum = 0;
	int slot;

	memcpy(v, raw, TS_LEVEL_EXACT * sizeof(*v));
	v[TS_LEVEL_EXACT] = raw[TS_LEVEL_ABOVE];
	for (slot = TS_LEVEL_EXACT; slot > 0; slot--) {
		if (v[slot] < 0) {
			v[slot - 1] += v[slot];
			v[slot] = 0;
		}
	}
	for (slot = 0; slot < TS_LEVEL_EXACT; slot++)
		sum += v[slot] < 0		  ? 0 :
		       (__u64)v[slot] > span_ns ? (double)span_ns :
						  (double)v[slot];
	return sum + v[TS_LEVEL_EXACT];
}

void ts_depth_summarize(const __s64 *raw, __u64 span_ns,
			struct ts_depth_summary *out)
{
	__s64 at_least[TS_LEVEL_SLOTS];
	int slot;

	memset(out, 0, sizeof(*out));
	if (!span_ns)
		return;
	memcpy(at_least, raw, sizeof(at_least));
	ts_depth_repair(at_least, span_ns);
	for (slot = 0; slot < TS_LEVEL_SLOTS && at_least[slot] > 0; slot++) {
		out->max = ts_slot_level(slot);
		out->max_exact = slot < TS_LEVEL_EXACT - 1;
	}
	out->mean = depth_area(raw, span_ns) / (double)span_ns;
	out->busy_share = (double)at_least[0] / (double)span_ns;
	out->p50 = percentile(at_least, span_ns, 0.50);
	out->p90 = percentile(at_least, span_ns, 0.90);
	out->p99 = percentile(at_least, span_ns, 0.99);
}

void ts_depth_range_of(struct ts_depth_range *r, __s64 peak, __u64 over,
		       __u64 under)
{
	if (peak < 0)
		peak = 0;
	r->exact = !over && !under;
	r->excess = over;
	r->unsure_ns = 0;
	r->windows_ns = 0;
	r->uncounted = 0;
	r->hi = peak + (__s64)under;
	r->lo = peak > (__s64)over ? peak - (__s64)over : 0;
}

void ts_depth_range_join(struct ts_depth_range *r,
			 const struct ts_depth_range *other)
{
	if (other->lo > r->lo)
		r->lo = other->lo;
	if (other->hi > r->hi)
		r->hi = other->hi;
	if (other->excess > r->excess)
		r->excess = other->excess;
	if (other->uncounted > r->uncounted)
		r->uncounted = other->uncounted;
	r->unsure_ns += other->unsure_ns; /* spans do not overlap */
	r->windows_ns += other->windows_ns;
	r->exact = r->exact && other->exact;
}

void ts_depth_bound(struct ts_depth_summary *s, const struct ts_depth_range *r)
{
	__s64 hi = r->hi > (__s64)s->max ? r->hi : (__s64)s->max;

	s->exact = r->exact;
	s->max_exact = r->exact;
	s->max = hi;
	s->max_min = r->exact ? hi : r->lo;
	s->excess = r->excess;
	s->uncounted = r->uncounted;
	s->unsure_ms = r->unsure_ns / 1e6;
	s->windows_ms = r->windows_ns / 1e6;
}

static int by_time(const void *a, const void *b)
{
	const __s64 *x = a, *y = b;

	/* by time, then openings (+1) before closings (-1) */
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] < y[1]) - (x[1] > y[1]);
}

/* Every window at once, all the time: still a bound (no memory to sort). */
static void windows_all(unsigned int n, __u64 start, __u64 end,
			struct ts_windows *out)
{
	out->most = n;
	out->covered_ns = n && end > start ? end - start : 0;
	out->unsure_ns = out->covered_ns;
}

/*
 * Windows @w as (time, +1/-1, index) triples in @ev, clipped to
 * [@start, @end]; their number.
 */
static unsigned int windows_events(const struct ts_miss_window *w,
				   unsigned int n, __u64 start, __u64 end,
				   __s64 (*ev)[3])
{
	unsigned int i, k = 0;

	for (i = 0; i < n; i++) {
		__u64 from = w[i].from > start ? w[i].from : start;
		__u64 to = w[i].to < end ? w[i].to : end;

		if (from > to)
			continue;
		ev[k][0] = from, ev[k][1] = 1, ev[k++][2] = i;
		ev[k][0] = to, ev[k][1] = -1, ev[k++][2] = i;
	}
	qsort(ev, k, sizeof(*ev), by_time);
	return k;
}

/*
 * Busy time is sure wherever the depth was above the windows open, since
 * those requests alone could have left: per window, the time it was no
 * higher than the most open at once while it was (@peak; the whole window
 * when that is deeper than TS_LOW_DEPTHS), at most @open_ns, the time any
 * window was open (overlapping windows' times add up past it).
 */
static __u64 windows_unsure(const struct ts_miss_window *w, unsigned int n,
			    const unsigned int *peak, __u64 open_ns)
{
	__u64 sum = 0;
	unsigned int i, k;

	for (i = 0; i < n; i++) {
		if (peak[i] > TS_LOW_DEPTHS) {
			sum += w[i].to - w[i].from;
			continue;
		}
		for (k = 0; k < peak[i]; k++)
			sum += w[i].low_ns[k];
	}
	return sum < open_ns ? sum : open_ns;
}

/* Window @i opens, @open[@*nopen] the others open: every one's peak. */
static void window_opens(unsigned int i, unsigned int *open,
			 unsigned int *nopen, unsigned int *peak)
{
	unsigned int k;

	open[(*nopen)++] = i;
	for (k = 0; k < *nopen; k++)
		if (peak[open[k]] < *nopen)
			peak[open[k]] = *nopen;
}

static void window_closes(unsigned int i, unsigned int *open,
			  unsigned int *nopen)
{
	unsigned int k;

	for (k = 0; k < *nopen; k++)
		if (open[k] == i) {
			open[k] = open[--(*nopen)];
			return;
		}
}

void ts_windows_scan(struct ts_miss_window *w, unsigned int n, __u64 start,
		     __u64 end, struct ts_windows *out)
{
	__s64(*ev)[3] = calloc(2 * (size_t)n + 1, sizeof(*ev));
	unsigned int *peak = calloc(n + 1, sizeof(*peak));
	unsigned int *open = calloc(n + 1, sizeof(*open));
	unsigned int i, k, nopen = 0;

	if (!ev || !peak || !open) {
		windows_all(n, start, end, out);
		goto done;
	}
	memset(out, 0, sizeof(*out));
	k = windows_events(w, n, start, end, ev);
	for (i = 0; i < k; i++) {
		if (nopen)
			out->covered_ns += ev[i][0] - ev[i - 1][0];
		if (ev[i][1] > 0)
			window_opens(ev[i][2], open, &nopen, peak);
		else
			window_closes(ev[i][2], open, &nopen);
		if (nopen > out->most)
			out->most = nopen;
	}
	/* busy time is unsure only while some window is open */
	out->unsure_ns = windows_unsure(w, n, peak, out->covered_ns);
done:
	free(ev), free(peak), free(open);
}

double ts_depth_at_least(const __s64 *at_least, __u32 level, __s64 top)
{
	int slot;
	__u32 lo, hi;

	if (level == 0)
		return NAN;
	if (level > TS_LEVEL_MAX || (top > 0 && level > top))
		return 0;
	slot = ts_level_slot(level);
	if (slot >= 0)
		return at_least[slot];
	/* between two thresholds: the same interpolation as the mean */
	for (slot = TS_LEVEL_EXACT; ts_slot_level(slot) < level; slot++)
		;
	lo = ts_slot_level(slot - 1), hi = ts_slot_level(slot);
	return at_least[slot - 1] + (double)(level - lo) / (hi - lo) *
					    (at_least[slot] - at_least[slot - 1]);
}
