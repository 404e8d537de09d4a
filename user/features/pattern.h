/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --pattern: what a device was given, per direction: the share of requests
 * that start where the device's previous request ended, how far the
 * others seek, and I/Os and throughput by request size.
 */
#ifndef TS_PATTERN_H
#define TS_PATTERN_H

#include <stdbool.h>
#include <stdio.h>

#include "lib/json.h"
#include "lib/units.h"
#include "truestat.h"

/*
 * A disk's service by size (struct ts_size_hist, one an op) as 64-bit
 * counts, widened at every snapshot as struct ts_depth_counts are.
 */
struct ts_size_counts {
	__u64 service[TS_PATTERN_OPS][TS_SIZE_CLASSES][TS_HIST_SLOTS];
};

/* A size class's completions in a span and their service percentiles. */
struct ts_size_service {
	__u64 completed;
	double p50_ms, p95_ms, p99_ms; /* NaN: none completed */
};

/* One span's pattern of a device: counts, and the span they are over. */
struct ts_pattern_span {
	struct ts_pattern_op op[TS_PATTERN_OPS];
	double span_s;
	bool has_service; /* service[] known: the disk has histograms */
	struct ts_size_service service[TS_PATTERN_OPS][TS_SIZE_CLASSES];
};

struct ts_pattern_figures {
	__u64 ios;	 /* requests given to the device */
	__u64 compared;	 /* of those, with a previous request to compare */
	__u64 sequential; /* started where it ended */
	__u64 in_stream;  /* went on one of the last TS_STREAMS streams */
	int streams;	  /* the stream places that were gone on */
	__u64 backward;	  /* started before where it ended */
	__u64 seek_p50_lt, seek_p90_lt; /* bytes: the seeks' p50 and p90 are
					 * below these (0: sequential) */
};

/* @out = @b - @a, the span @span_s; @a NULL: zero. */
void ts_pattern_delta(const struct ts_pattern *a, const struct ts_pattern *b,
		      double span_s, struct ts_pattern_span *out);

/* @total += what @now counted since @seen (one an op); @seen = @now. */
void ts_size_widen(struct ts_size_counts *total, struct ts_size_hist *seen,
		   const struct ts_size_hist *now);

/* @p's service by size: from @b - @a (@a NULL: zero). */
void ts_pattern_service(const struct ts_size_counts *a,
			const struct ts_size_counts *b,
			struct ts_pattern_span *p);

void ts_pattern_figures(const struct ts_pattern_op *o,
			struct ts_pattern_figures *f);

/* The text section of device @name (nothing when it was given nothing),
 * times in @units. */
void ts_pattern_print(FILE *f, const char *name,
		      const struct ts_pattern_span *p, enum ts_unit units);

/* The "pattern" object of a device in the JSON output. */
void ts_pattern_json(struct tj *j, const struct ts_pattern_span *p);

#endif
