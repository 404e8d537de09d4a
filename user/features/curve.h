/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parallelism curve: service time, throughput and time spent by the
 * in-device depth at which requests were issued, and what follows from it.
 */
#ifndef TS_CURVE_H
#define TS_CURVE_H

#include <stdbool.h>
#include <linux/types.h>

#include "truestat.h"

/* A depth class is used for conclusions from this much evidence on. */
#define TS_CURVE_MIN_SHARE 0.01	 /* of the span spent at those depths */
#define TS_CURVE_MIN_COMPLETIONS 50
/* Throughput "stops growing": less than +20% per doubling of depth. */
#define TS_CURVE_GROWTH 1.20
/* Saturated: p95 service above 3x that at depth 1. */
#define TS_CURVE_SATURATION 3.0

/*
 * A disk's depth histograms as 64-bit counts (ts_depth_widen): what the
 * kernel's 32-bit buckets (struct ts_depth_hist) have counted since the
 * histograms were claimed, whatever number of times they wrapped.
 */
struct ts_depth_counts {
	__u64 service[TS_DEPTH_CLASSES][TS_HIST_SLOTS];
	__u64 depth1[TS_NR_OPS][TS_HIST_SLOTS]; /* ts_depth_hist's */
};

struct ts_curve_row {
	unsigned int lo, hi; /* depths of this class, the request included */
	double time_s, share; /* time the device spent at these depths */
	double mean_depth;    /* time-weighted, while at these depths */
	__u64 completions;    /* requests issued at these depths, completed */
	double service_ms;    /* their mean service time (from the buckets) */
	double p50_ms, p95_ms, p99_ms;
	/*
	 * Throughput while at these depths, by Little's law: mean depth there
	 * / mean service of the requests issued there. Not completions / time:
	 * a device that completes a batch at once passes through every depth
	 * in an instant, and its requests are issued at every depth.
	 */
	double iops;
	bool evidence;	      /* enough time and completions to conclude */
};

/* The requests of one op issued at depth 1: its own service, alone. */
struct ts_curve_alone {
	__u64 completions;
	double service_ms; /* mean, from the buckets; NaN: none */
	double p50_ms, p99_ms;
};

struct ts_curve {
	int nrows; /* classes up to the deepest with time or completions */
	struct ts_curve_row row[TS_DEPTH_CLASSES];
	struct ts_curve_alone alone[TS_NR_OPS]; /* depth 1's, by op */
	/* row beyond which throughput stops growing; -1: no two rows to say */
	int parallelism_row;
	bool still_growing; /* throughput grew up to the deepest row seen */
	int saturation_row; /* -1: none saturated; -2: no depth-1 evidence */
	int now_row;	    /* class of the mean depth of the span */
	int best_row;	    /* deeper row with the best throughput, or -1 */
	double now_iops; /* the span's throughput while busy */
	double headroom; /* best / now, NaN when best_row < 0 */
};

/* What kept the device at the depths it reached (ts_curve_limit_of). */
enum ts_curve_limit {
	TS_LIMIT_UNKNOWN,  /* no evidence, no OS queue, doubtful growth */
	TS_LIMIT_DEVICE,   /* it held more and completed no more */
	TS_LIMIT_OS_QUEUE, /* requests waited in the OS queue for it */
	TS_LIMIT_ABOVE,	   /* it took all it was given: the submitter */
};

/*
 * Requests waited in the OS for the device when its OS queue held one for
 * at least this share of the time the device was busy: at the median
 * moment of the device's work (see doc/curve-and-knee.md).
 */
#define TS_CURVE_OS_WAIT 0.5

/*
 * From one span's depth histograms (@delta, already differenced), the
 * device's repaired time at depth >= each level (@at_least, see depth.h),
 * the highest depth it reached (@top, 0: not known), the span, its
 * throughput and its mean depth.
 */
void ts_curve_build(const struct ts_depth_counts *delta, const __s64 *at_least,
		    __s64 top, __u64 span_ns, double now_iops,
		    double mean_depth, struct ts_curve *c);

/* The deepest row with evidence, or -1. */
int ts_curve_deepest(const struct ts_curve *c);

/*
 * What limited the load of @c's span: the device, when throughput stopped
 * growing while it held more; else, with throughput still growing at the
 * deepest evidenced depth (or one depth only), what kept it from deeper:
 * the OS queue if it held a request at least TS_CURVE_OS_WAIT of
 * @device_busy (the share of the span the device held one), else what is
 * above the device. @os_busy: the OS queue's share likewise, NaN when it
 * is not followed (--light). Unknown too when the growth into the deepest
 * evidenced row, which rules out the device, may be misfiling by a depth
 * counter up to @excess too high at times.
 */
enum ts_curve_limit ts_curve_limit_of(const struct ts_curve *c,
				      unsigned int excess, double device_busy,
				      double os_busy);

/* @out = @b - @a; @a NULL: zero. */
void ts_depth_counts_delta(const struct ts_depth_counts *a,
			   const struct ts_depth_counts *b,
			   struct ts_depth_counts *out);

/*
 * Adds to @total what each 32-bit bucket of @now rose since @seen, modulo
 * 2^32, and makes @seen @now: exact while each bucket gains fewer than
 * 2^32 between two calls (over an hour at a million I/Os a second into
 * one bucket; the loader calls it at every snapshot).
 */
void ts_depth_widen(struct ts_depth_counts *total, struct ts_depth_hist *seen,
		    const struct ts_depth_hist *now);

#endif
