/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --heatmap: latency over time as an SVG heat map. Each interval report adds
 * one column per disk, direction and kind (service, queue); at exit the
 * whole run is written as one self-contained SVG.
 */
#ifndef TS_HEATMAP_H
#define TS_HEATMAP_H

#include <stdio.h>
#include <time.h>
#include <linux/types.h>

#include "core/report.h"

/*
 * Rows: the fine buckets of include/hist.h folded to 4 per power of two.
 * Below 4 ns one row per nanosecond; row r >= 4 holds
 * [(4 + r % 4) << (r / 4 - 1), (5 + r % 4) << (r / 4 - 1)) ns. Every fine
 * bucket lies inside one row; the last row is open-ended, like the last
 * fine bucket (2^38 ns and more).
 */
#define TS_HM_SUB 4
#define TS_HM_ROWS (4 * TS_HIST_MAX_EXP + 1)

/* Columns kept by default: older ones are folded pairwise beyond that. */
#define TS_HM_MAX_COLS 3600

/* Row of a latency of @ns nanoseconds. */
int ts_hm_row(__u64 ns);
/* Smallest latency in row @r; ts_hm_row_upper(r): the first one above it
 * (UINT64_MAX for the last, open-ended row). */
__u64 ts_hm_row_lower(int r);
__u64 ts_hm_row_upper(int r);

/* Folds the TS_HIST_SLOTS fine buckets of @fine into TS_HM_ROWS rows. */
void ts_hm_fold(const __u64 *fine, __u64 *rows);

/*
 * The colour of @count in a panel whose largest cell holds @max: a
 * sequential scale (pale yellow .. dark red) on log(count) / log(max).
 * Writes "#rrggbb" to @buf; @count 0 gets no colour (returns -1).
 */
int ts_hm_colour(__u64 count, __u64 max, char buf[8]);

struct ts_heatmap;

/* @interval_s: the report interval; @max_cols: even, >= 2 (TS_HM_MAX_COLS). */
struct ts_heatmap *ts_heatmap_new(double interval_s, int max_cols,
				  time_t start);
void ts_heatmap_free(struct ts_heatmap *h);

/* Adds one interval report (its histograms; disks without any are left out). */
int ts_heatmap_add(struct ts_heatmap *h, const struct ts_report *r);

/* How many intervals one column holds now (1, then 2, 4, ... once folded). */
int ts_heatmap_per_col(const struct ts_heatmap *h);
int ts_heatmap_ncols(const struct ts_heatmap *h);

/* heatmap_svg.c: the SVG; -1 when writing to @f failed. */
int ts_heatmap_write(const struct ts_heatmap *h, FILE *f);

/*
 * --heatmap=@path: creates the file at once (a bad path fails at start, not
 * at the end of a long run). NULL with a one-line message in @err.
 */
struct ts_heatmap *ts_heatmap_open(const char *path, double interval_s,
				   char *err, size_t len);

/* Writes the SVG into that file, closes it and frees @h; -1 with @err. */
int ts_heatmap_close(struct ts_heatmap *h, char *err, size_t len);

#endif
