/* SPDX-License-Identifier: GPL-2.0 */
/* The Prometheus text exposition of a report over the whole run. */
#ifndef TS_PROM_H
#define TS_PROM_H

#include <stddef.h>

#include "report.h"

/*
 * Histogram buckets exported: every quarter of a power of two of ns from
 * 2^10 ns (about 1 us) to 2^38 ns, each edge an edge of the kernel's fine
 * buckets, so each cumulative count is exact; a quantile Prometheus
 * interpolates inside one of them is within its width (19%).
 */
#define TS_PROM_FIRST_EXP 10
#define TS_PROM_PER_OCTAVE 4

/*
 * @r must cover the run from its start (a totals report, with histograms):
 * counters and histograms are cumulative. malloc'd text, length in *len.
 */
char *ts_prom_render(const struct ts_report *r, size_t *len);

#endif
