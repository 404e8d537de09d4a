/* SPDX-License-Identifier: GPL-2.0 */
/* Time-weighted depth from the level registers of struct ts_dev_state. */
#ifndef TS_DEPTH_H
#define TS_DEPTH_H

#include <stdbool.h>
#include <linux/types.h>

#include "truestat.h"

struct ts_depth_summary {
	double mean;	   /* time-weighted mean depth */
	double busy_share; /* share of time with depth >= 1: iostat's %util */
	unsigned int max;  /* deepest level reached; an upper bound if !exact */
	unsigned int max_min; /* the true max is at least this (== max if exact) */
	unsigned int excess; /* most requests counted at once after they left */
	/* requests refused a record in an earlier span, in the device when
	 * this one began, uncounted (ts_depth_range) */
	unsigned int uncounted;
	bool max_exact;	   /* max is the true one */
	bool exact;	   /* the counter followed every request in the span */
	unsigned int p50, p90, p99; /* time-weighted percentiles */
	double unsure_ms; /* busy_share x span may be off by at most this:
			   * the time repaired requests were counted alone
			   * (ts_windows) */
	double windows_ms; /* time in which repaired requests may have been
			    * counted after they left: the depth x time may
			    * be off by at most excess x this */
	double reordered_ms; /* changes stamped after their clock read, summed
			      * (ts_dev_stats): the depth x time and the
			      * requests' own times differ by at most this */
};

/* Time in ns with depth >= the register's level, as of @now_ns. */
__s64 ts_level_time(__u64 reg, __u64 now_ns);

/*
 * Registers @regs (TS_LEVEL_REGS) of depth word @word as of @now_ns:
 * @at_least[slot], ns at depth >= each level, and @at_least[TS_LEVEL_ABOVE],
 * ns x requests beyond level TS_LEVEL_EXACT.
 */
void ts_levels_at(const __u64 *regs, __u64 word, __u64 now_ns,
		  __s64 *at_least);

/*
 * @at_least (TS_LEVEL_REGS): ns spent at depth >= ts_slot_level(slot)
 * during a span of @span_ns, then the area above 64 (ts_levels_at). The
 * mean is exact at any depth; above 64, percentiles and max round down to
 * the thresholds.
 */
void ts_depth_summarize(const __s64 *at_least, __u64 span_ns,
			struct ts_depth_summary *out);

/* Bounds of the true maximum depth over a span. */
struct ts_depth_range {
	__s64 lo, hi;
	__u64 excess; /* most requests counted at once after they had left */
	__u64 unsure_ns;  /* busy time off by at most this (ts_windows) */
	__u64 windows_ns; /* time in which some may have been (ts_windows) */
	__u64 uncounted; /* of the under-count, requests refused a record
			  * before the span and in the device at its start */
	bool exact;   /* the counter followed every request: lo == hi */
};

/*
 * The range of the true maximum when the depth counter reached @peak, with
 * at most @over requests at once counted after they had left (completions
 * found late) and @under requests in the device it never counted.
 */
void ts_depth_range_of(struct ts_depth_range *r, __s64 peak, __u64 over,
		       __u64 under);

/* Both spans' range: the true maximum of the two. */
void ts_depth_range_join(struct ts_depth_range *r,
			 const struct ts_depth_range *other);

/*
 * Puts @r in @s (max, max_min, max_exact, exact): all the depth figures of
 * @s are estimates unless @r is exact. A range with hi below the levels'
 * max (no peaks were read: tests) is widened to it.
 */
void ts_depth_bound(struct ts_depth_summary *s, const struct ts_depth_range *r);

/*
 * A request counted in the depth from @from that had left by @to; of that
 * time, the depth was 1, 2, 3 and 4 for @low_ns (struct ts_low_time).
 */
struct ts_miss_window {
	__u64 from, to;
	__u64 low_ns[TS_LOW_DEPTHS];
};

/* Windows within [@start, @end] (ts_windows_scan). */
struct ts_windows {
	unsigned int most; /* the most open at one moment (touching windows
			    * count as overlapping: an upper bound) */
	__u64 covered_ns;  /* the time at least one is open */
	__u64 unsure_ns;   /* busy time off by at most this: per window, the
			    * time the depth was no higher than the most
			    * windows open at once while it was (those
			    * requests could all have left), summed */
};

void ts_windows_scan(struct ts_miss_window *w, unsigned int n, __u64 start,
		     __u64 end, struct ts_windows *out);

/*
 * Make @at_least (ns at depth >= each slot's level) a possible history
 * again after late corrections (README: completions never seen), keeping
 * the area; clamps to 0..span. ts_depth_summarize does this on a copy.
 */
void ts_depth_repair(__s64 *at_least, __u64 span_ns);

/*
 * ns at depth >= @level from repaired @at_least: exact up to 64 and on the
 * thresholds above, interpolated linearly between them; 0 above @top, the
 * highest depth reached (0: not known), as in ts_depth_summarize.
 */
double ts_depth_at_least(const __s64 *at_least, __u32 level, __s64 top);

#endif
