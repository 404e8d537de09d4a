/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How far the depth counters may be from the truth: from the peaks the
 * sweep takes, the repairs it and re-issues log (a request counted in the
 * depth from its issue until found ended) and the requests never counted,
 * the range of each device's true maximum over a span and over the run.
 */
#ifndef TS_BOUNDS_H
#define TS_BOUNDS_H

#include <stdbool.h>
#include <linux/types.h>

#include "truestat.h"
#include "depth.h"

struct ts_bounds_dev {
	__u64 queue, claimed_ns; /* the disk this entry is of: its claim */
	__s64 peak;	 /* device depth peak in the span so far */
	__s64 os_peak, os_peak_run;
	__u64 under_start;  /* requests never counted, when the span began */
	__u64 open_start;   /* of them still in the device then, at most */
	__u64 missed_start; /* repairs, when the span began */
	struct ts_depth_range run; /* over the spans ended so far */
	bool has_run;
	/* the last read, taken over when the span ends */
	bool seen;
	struct ts_depth_range last_run;
	__u64 last_under, last_missed, last_open;
};

/*
 * The repair windows a span holds at most: 48 bytes each, 12 MiB at most
 * (a 10 s interval at 26,000 repairs a second); past them the span's
 * repairs are all at once, all the span long (ts_bounds_lost).
 */
#define TS_REPAIR_WINDOWS_MAX (1U << 18)

struct ts_repair_window {
	unsigned int qid;
	struct ts_miss_window w;
};

struct ts_bounds {
	__u64 span_start_ns;
	unsigned int nwin, cap; /* win[]: in use, allocated (it grows) */
	bool overflow; /* some repairs of the span are not in win[] */
	struct ts_repair_window *win;
	struct ts_bounds_dev dev[TS_MAX_DEVS];
};

/* What one snapshot read of a device, for ts_bounds_device. */
struct ts_bounds_read {
	unsigned int qid;
	__u64 queue, claimed_ns; /* its claim of the slot */
	__s64 device_peak_taken, os_peak_taken; /* the sweep's takes */
	unsigned int suspects;
	__u64 under;  /* requests in the device never counted, since its claim */
	/*
	 * of them, those that may still be in the device: refused a record at
	 * issue (table full) and not yet completed unseen; a span that starts
	 * with some is under by as many, for all of it
	 */
	__u64 open;
	__u64 missed; /* repairs since its claim */
	__u64 contended; /* depth updates made with the clock as read */
};

/* The figures of one device at a snapshot. */
struct ts_bounds_out {
	struct ts_depth_range span, run;
	__s64 os_peak, os_peak_run;
};

/* Empties @b; the first span starts at @now_ns. */
void ts_bounds_init(struct ts_bounds *b, __u64 now_ns);
void ts_bounds_free(struct ts_bounds *b);

/* One logged repair (@r); ts_bounds_lost when the log had lost some. */
void ts_bounds_repair(struct ts_bounds *b, const struct ts_repair *r);
void ts_bounds_lost(struct ts_bounds *b);

/*
 * Copies repair record @r (the BPF side may be rewriting it) into @out;
 * false when it does not hold repair @n, whole: see ts_bounds_lost.
 */
bool ts_repair_read(const volatile struct ts_repair *r, __u64 n,
		    struct ts_repair *out);

/* Folds @in (read at @now_ns) into @b and gives the device's ranges. */
void ts_bounds_device(struct ts_bounds *b, const struct ts_bounds_read *in,
		      __u64 now_ns, struct ts_bounds_out *out);

/* The span ends at @now_ns: every device read since starts the next one. */
void ts_bounds_end_span(struct ts_bounds *b, __u64 now_ns);

#endif
