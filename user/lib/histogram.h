/* SPDX-License-Identifier: GPL-2.0 */
/* Percentiles and display of the log-linear histograms (include/hist.h). */
#ifndef TS_HISTOGRAM_H
#define TS_HISTOGRAM_H

#include <stdio.h>
#include <linux/types.h>

#include "truestat.h"
#include "json.h"

/* Percentiles of one histogram in ms; NaN when it holds no sample. */
struct ts_pct {
	double p50, p90, p99, p999, max;
};

/* Samples in @counts (TS_HIST_SLOTS buckets). */
__u64 ts_hist_count(const __u64 *counts);

/*
 * The value in ns below which a share @q of the samples lie: the bucket
 * holding sample number ceil(q * n), interpolated linearly inside it, so
 * within one bucket width (6.25%) of the exact percentile. q = 1 gives the
 * upper end of the highest bucket used: the max, rounded up.
 */
double ts_hist_quantile(const __u64 *counts, double q);

void ts_hist_pct(const __u64 *counts, struct ts_pct *p);

/* "KEY": {p50, p90, p99, p99_9, max} in ms, as every percentile object. */
void ts_json_pct(struct tj *j, const char *key, const struct ts_pct *p);

/* @dst = @b - @a, bucket by bucket (@a may be NULL: zero). */
void ts_hist_delta(const struct ts_hist *a, const struct ts_hist *b,
		   struct ts_hist *dst);

/* @dst += @src. */
void ts_hist_add(struct ts_hist *dst, const struct ts_hist *src);

/*
 * biolatency's layout: one line per power of two of microseconds (@fine:
 * per bucket that holds samples), count and a bar. @title heads it.
 */
void ts_hist_print(FILE *f, const char *title, const __u64 *counts, int fine);

/* The same for request sizes in KB. */
void ts_size_print(FILE *f, const char *title, const __u64 *counts);

#endif
