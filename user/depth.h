/* SPDX-License-Identifier: GPL-2.0 */
/* Time-weighted depth from the level registers of struct ts_dev_state. */
#ifndef TS_DEPTH_H
#define TS_DEPTH_H

#include <stdbool.h>
#include <linux/types.h>

struct ts_depth_summary {
	double mean;	   /* time-weighted mean depth */
	double busy_share; /* share of time with depth >= 1: iostat's %util */
	unsigned int max;  /* deepest level reached */
	bool max_exact;	   /* false above 64: max is in [max, next threshold) */
	unsigned int p50, p90, p99; /* time-weighted percentiles */
};

/* Time in ns with depth >= the register's level, as of @now_ns. */
__s64 ts_level_time(__u64 reg, __u64 now_ns);

/*
 * @at_least[slot]: ns spent at depth >= ts_slot_level(slot) during a span
 * of @span_ns. Exact up to depth 64; between the thresholds above, the
 * mean interpolates linearly and percentiles and max round down.
 */
void ts_depth_summarize(const __s64 *at_least, __u64 span_ns,
			struct ts_depth_summary *out);

/*
 * Make @at_least (ns at depth >= each slot's level) a possible history
 * again after late corrections (README: completions never seen), keeping
 * the area; clamps to 0..span. ts_depth_summarize does this on a copy.
 */
void ts_depth_repair(__s64 *at_least, __u64 span_ns);

/*
 * ns at depth >= @level from repaired @at_least: exact up to 64 and on the
 * thresholds above, interpolated linearly between them.
 */
double ts_depth_at_least(const __s64 *at_least, __u32 level);

#endif
