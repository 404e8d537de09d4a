// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <string.h>

#include "curve.h"
#include "lib/depth.h"
#include "lib/histogram.h"

void ts_depth_counts_delta(const struct ts_depth_counts *a,
			   const struct ts_depth_counts *b,
			   struct ts_depth_counts *out)
{
	int c, s;

	for (c = 0; c < TS_DEPTH_CLASSES; c++)
		for (s = 0; s < TS_HIST_SLOTS; s++)
			out->service[c][s] = b->service[c][s] -
					     (a ? a->service[c][s] : 0);
	for (c = 0; c < TS_NR_OPS; c++)
		for (s = 0; s < TS_HIST_SLOTS; s++)
			out->depth1[c][s] = b->depth1[c][s] -
					    (a ? a->depth1[c][s] : 0);
}

void ts_depth_widen(struct ts_depth_counts *total, struct ts_depth_hist *seen,
		    const struct ts_depth_hist *now)
{
	__u32 v;
	int c, s;

	for (c = 0; c < TS_DEPTH_CLASSES; c++)
		for (s = 0; s < TS_HIST_SLOTS; s++) {
			v = now->service[c][s];
			total->service[c][s] += (__u32)(v - seen->service[c][s]);
			seen->service[c][s] = v;
		}
	for (c = 0; c < TS_NR_OPS; c++)
		for (s = 0; s < TS_HIST_SLOTS; s++) {
			v = now->depth1[c][s];
			total->depth1[c][s] += (__u32)(v - seen->depth1[c][s]);
			seen->depth1[c][s] = v;
		}
}

static void class_depths(int c, unsigned int *lo, unsigned int *hi)
{
	*lo = c ? (1U << (c - 1)) + 1 : 1;
	*hi = c < TS_DEPTH_CLASSES - 1 ? 1U << c : TS_LEVEL_MAX;
}

/* ns at depth >= @level, 0 above the deepest level kept or reached (@top) */
static double at_least_ns(const __s64 *at_least, __u32 level, __s64 top)
{
	return level <= TS_LEVEL_MAX ? ts_depth_at_least(at_least, level, top) :
				       0;
}

/*
 * Time-weighted depth while at lo..hi: with A(d) the time at depth >= d,
 * the sum of d (A(d) - A(d + 1)) is lo A(lo) + A(lo + 1) + ... + A(hi)
 * - hi A(hi + 1).
 */
static double mean_depth(const __s64 *at_least, __s64 top, unsigned int lo,
			 unsigned int hi, double ns)
{
	double sum = lo * at_least_ns(at_least, lo, top) -
		     hi * at_least_ns(at_least, hi + 1, top), a;
	unsigned int d;

	/* A never grows with d (ts_depth_repair): past its first 0, all are */
	for (d = lo + 1; d <= hi && d <= TS_LEVEL_MAX; d++) {
		a = at_least_ns(at_least, d, top);
		if (a <= 0)
			break;
		sum += a;
	}
	return ns > 0 ? sum / ns : NAN;
}

/* Mean of the samples in @counts, each at its bucket's middle (ns). */
static double hist_mean(const __u64 *counts)
{
	double sum = 0, n = 0, lo, hi;
	int b;

	for (b = 0; b < TS_HIST_SLOTS; b++) {
		if (!counts[b])
			continue;
		lo = ts_hist_lower(b);
		hi = b + 1 < TS_HIST_SLOTS ? ts_hist_lower(b + 1) : lo;
		sum += counts[b] * (lo + hi) / 2;
		n += counts[b];
	}
	return n ? sum / n : NAN;
}

static void fill_row(const struct ts_depth_counts *h, const __s64 *at_least,
		     __s64 top, __u64 span_ns, int c, struct ts_curve_row *r)
{
	static __u64 counts[TS_HIST_SLOTS];
	double ns;
	int b;

	class_depths(c, &r->lo, &r->hi);
	ns = at_least_ns(at_least, r->lo, top) -
	     at_least_ns(at_least, r->hi + 1, top);
	r->time_s = ns > 0 ? ns / 1e9 : 0;
	r->share = r->time_s * 1e9 / span_ns;
	r->mean_depth = mean_depth(at_least, top, r->lo, r->hi, ns);
	r->completions = 0;
	for (b = 0; b < TS_HIST_SLOTS; b++) {
		counts[b] = h->service[c][b];
		r->completions += counts[b];
	}
	r->service_ms = hist_mean(counts) / 1e6;
	r->iops = r->time_s > 0 && r->service_ms > 0 ?
			  r->mean_depth / (r->service_ms / 1e3) : NAN;
	r->p50_ms = ts_hist_quantile(counts, 0.50) / 1e6;
	r->p95_ms = ts_hist_quantile(counts, 0.95) / 1e6;
	r->p99_ms = ts_hist_quantile(counts, 0.99) / 1e6;
	r->evidence = r->share >= TS_CURVE_MIN_SHARE &&
		      r->completions >= TS_CURVE_MIN_COMPLETIONS;
}

/* Depth 1's requests of each op, from @h's depth1 buckets. */
static void fill_alone(const struct ts_depth_counts *h, struct ts_curve *c)
{
	struct ts_curve_alone *a;
	int op, b;

	for (op = 0; op < TS_NR_OPS; op++) {
		a = &c->alone[op];
		for (b = 0; b < TS_HIST_SLOTS; b++)
			a->completions += h->depth1[op][b];
		a->service_ms = hist_mean(h->depth1[op]) / 1e6;
		a->p50_ms = ts_hist_quantile(h->depth1[op], 0.50) / 1e6;
		a->p99_ms = ts_hist_quantile(h->depth1[op], 0.99) / 1e6;
	}
}

/* The first evidenced row after which throughput grows < 20% a doubling. */
static void find_parallelism(struct ts_curve *c)
{
	int i, prev = -1;
	double growth;

	c->parallelism_row = -1;
	for (i = 0; i < c->nrows; i++) {
		if (!c->row[i].evidence)
			continue;
		if (prev >= 0) {
			/* rows are a doubling apart; skipped rows: per doubling */
			growth = pow(c->row[i].iops / c->row[prev].iops,
				     1.0 / (i - prev));
			if (growth < TS_CURVE_GROWTH) {
				c->parallelism_row = prev;
				return;
			}
			c->parallelism_row = i;
		}
		prev = i;
	}
	c->still_growing = c->parallelism_row >= 0;
}

int ts_curve_deepest(const struct ts_curve *c)
{
	int i;

	for (i = c->nrows - 1; i >= 0; i--)
		if (c->row[i].evidence)
			return i;
	return -1;
}

/*
 * A counter up to @excess too high files a request issued at depth d as
 * deep as d + @excess, and counts the time there likewise. The growth into
 * the deepest evidenced row holds only if it holds with every request of
 * that row as much shallower: its mean depth less @excess, over the same
 * service (Little). One row only shows no growth to doubt.
 */
static bool growth_doubtful(const struct ts_curve *c, int deepest,
			    unsigned int excess)
{
	const struct ts_curve_row *r = &c->row[deepest];
	double iops, growth;
	int prev;

	for (prev = deepest - 1; prev >= 0; prev--) {
		if (!c->row[prev].evidence)
			continue;
		iops = (r->mean_depth - excess) / (r->service_ms / 1e3);
		growth = pow(iops / c->row[prev].iops, 1.0 / (deepest - prev));
		return !(growth >= TS_CURVE_GROWTH); /* NaN: doubtful */
	}
	return false;
}

enum ts_curve_limit ts_curve_limit_of(const struct ts_curve *c,
				      unsigned int excess, double device_busy,
				      double os_busy)
{
	int deepest = ts_curve_deepest(c);

	if (c->parallelism_row >= 0 && !c->still_growing)
		return TS_LIMIT_DEVICE;
	if (deepest < 0 || growth_doubtful(c, deepest, excess) ||
	    isnan(os_busy))
		return TS_LIMIT_UNKNOWN;
	if (os_busy > 0 && os_busy >= TS_CURVE_OS_WAIT * device_busy)
		return TS_LIMIT_OS_QUEUE;
	return TS_LIMIT_ABOVE;
}

static void find_saturation(struct ts_curve *c)
{
	int i;

	c->saturation_row = -2;
	if (!c->nrows || !c->row[0].evidence)
		return;
	c->saturation_row = -1;
	for (i = 1; i < c->nrows; i++) {
		if (c->row[i].evidence &&
		    c->row[i].p95_ms > TS_CURVE_SATURATION * c->row[0].p95_ms) {
			c->saturation_row = i;
			return;
		}
	}
}

static void find_headroom(struct ts_curve *c, double mean_depth)
{
	int i;

	c->now_row = mean_depth > 0 ? ts_depth_class(ceil(mean_depth)) : 0;
	c->best_row = -1;
	c->headroom = NAN;
	for (i = c->now_row + 1; i < c->nrows; i++) {
		if (!c->row[i].evidence)
			continue;
		if (c->best_row < 0 || c->row[i].iops > c->row[c->best_row].iops)
			c->best_row = i;
	}
	if (c->best_row >= 0 && c->now_iops > 0)
		c->headroom = c->row[c->best_row].iops / c->now_iops;
}

void ts_curve_build(const struct ts_depth_counts *delta, const __s64 *at_least,
		    __s64 top, __u64 span_ns, double now_iops,
		    double mean_depth, struct ts_curve *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->now_iops = now_iops;
	for (i = 0; i < TS_DEPTH_CLASSES && span_ns; i++) {
		fill_row(delta, at_least, top, span_ns, i, &c->row[i]);
		if (c->row[i].time_s > 0 || c->row[i].completions)
			c->nrows = i + 1;
	}
	if (span_ns)
		fill_alone(delta, c);
	find_parallelism(c);
	find_saturation(c);
	find_headroom(c, mean_depth);
}
