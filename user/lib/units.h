/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unit and decimals of printed times (--units). A table's times share
 * one unit, named in its header: ms, or us when the table's smallest
 * non-zero figure is below 0.1 ms; decimals as few as give that smallest
 * figure three significant digits (ms: 3 to 6, us: 1 to 3, 1 ns at most).
 * --units=us|ms fixes the unit; the decimals follow the same rule.
 */
#ifndef TS_UNITS_H
#define TS_UNITS_H

#include <stddef.h>
#include <stdio.h>

enum ts_unit {
	TS_UNIT_AUTO, /* per table, by its smallest figure */
	TS_UNIT_US,
	TS_UNIT_MS,
};

/* How one table prints its times. */
struct ts_tfmt {
	enum ts_unit unit; /* TS_UNIT_US or TS_UNIT_MS */
	int decimals;
};

/*
 * Sizes are binary throughout, as iostat's: MiB/s (2^20 bytes) and KiB,
 * named so in the tables' headers and the JSON's keys.
 */
#define TS_MIB 1048576.0

/* @bytes over @span_s seconds in MiB/s; 0 for an empty span. */
static inline double ts_mib_per_s(double bytes, double span_s)
{
	return span_s > 0 ? bytes / span_s / TS_MIB : 0;
}

/* "us" or "ms": 0 and the unit in @out, or -1 for anything else. */
int ts_units_parse(const char *s, enum ts_unit *out);

/* Lowers *@min_ms to @ms when @ms is finite and above zero. */
void ts_tmin_see(double *min_ms, double ms);

/*
 * The format of a table whose smallest non-zero figure is @min_ms
 * (INFINITY: none), in unit @fixed unless TS_UNIT_AUTO.
 */
struct ts_tfmt ts_tfmt_pick(double min_ms, enum ts_unit fixed);

/* "us" or "ms", for headers ("QUEUE_us"). */
const char *ts_tfmt_unit(const struct ts_tfmt *t);

/* " %*.*f" of @ms in @t's unit, or " -" right-aligned for NaN. */
void ts_tfmt_put(FILE *f, const struct ts_tfmt *t, double ms, int width);

/* One figure in running text: "12.3 us", "0.500 ms", "-" for NaN. */
const char *ts_time_str(char *buf, size_t len, double ms, enum ts_unit fixed);

#endif
