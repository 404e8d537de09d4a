// SPDX-License-Identifier: GPL-2.0
/*
 * busy-not-full: %util near 100% while the device ran fewer requests at
 * once than it has shown it completes more with: the throughput left.
 */
#include <math.h>

#include "findings.h"

/* Busy, but never seen deeper than now: its parallelism is not known. */
static void cannot_tell(const struct ts_finding_ctx *c, const char *op)
{
	const struct ts_dev_report *d = c->d;
	struct ts_finding *f;
	char now[24];

	f = ts_finding_add(c, "busy-not-full", op, TS_SEV_NOTE, TS_RESTS_DEPTH,
			   "%s %s: %%util says %.0f%% busy, but the device was never seen long enough at more requests at once than now (depth %s, %.1f on average): whether it does more at once is not known; offer more at once (a load step) or run scripts/knee.sh %s to find its parallelism",
			   d->name, ts_finding_op_words(op), d->busy_pct,
			   ts_finding_depths(&d->curve, d->curve.now_row, now,
					     sizeof(now)),
			   d->device.mean, d->name);
	ts_finding_figure(f, "busy_pct", d->busy_pct, "percent");
	ts_finding_figure(f, "concurrency", d->device.mean, "requests");
}

/* Busy, its requests of classes the curve sums: nothing follows from it. */
static void mixed(const struct ts_finding_ctx *c, const char *op)
{
	const struct ts_dev_report *d = c->d;
	struct ts_finding *f;

	f = ts_finding_add(c, "busy-not-full", op, TS_SEV_NOTE, TS_RESTS_DEPTH,
			   "%s %s: %%util says %.0f%% busy, but its requests mix classes the depth curve cannot compare (%s), which it sums: from one depth to another it may compare different work, so whether the device does more at once, or is at its limit, is not known from this load; a load of one kind (scripts/knee.sh %s) finds its parallelism",
			   d->name, ts_finding_op_words(op), d->busy_pct,
			   c->mixed, d->name);
	ts_finding_figure(f, "busy_pct", d->busy_pct, "percent");
	ts_finding_figure(f, "concurrency", d->device.mean, "requests");
}

/* Whether the curve has evidence deeper than the depth the span ran at. */
static bool seen_deeper(const struct ts_curve *k)
{
	int i;

	for (i = k->now_row + 1; i < k->nrows; i++)
		if (k->row[i].evidence)
			return true;
	return false;
}

void ts_rule_busy_not_full(const struct ts_finding_ctx *c)
{
	const struct ts_dev_report *d = c->d;
	const struct ts_curve *k = &d->curve;
	const char *op = ts_finding_dev_op(d);
	int knee = ts_finding_knee(d, c->r->light);
	const struct ts_curve_row *best;
	struct ts_finding *f;
	double bound_ms;
	char at[24];

	if (d->device.busy_share < TS_FIND_BUSY || !d->has_curve)
		return;
	if (c->mixed[0]) {
		mixed(c, op);
		return;
	}
	/* at or past the knee: the device is full, not merely busy */
	if (knee >= 0 && d->device.mean >= k->row[knee].hi)
		return;
	/*
	 * a plateau beyond the knee: capped-volume's verdict, which rests on
	 * two depth classes or more where this rests on one, and says the
	 * throughput now when it is short of the limit
	 */
	if (ts_finding_capped(d, c->r->light, NULL, NULL))
		return;
	/*
	 * whether it does more at once was never seen; reads that waited in
	 * it by physics: waiting-in-device's, which says so
	 */
	if (k->parallelism_row < 0 || !seen_deeper(k)) {
		if (!ts_finding_waits_by_physics(d, &bound_ms))
			cannot_tell(c, op);
		return;
	}
	/* deeper depths gave no more by the curve's own rule (+20%) */
	if (k->best_row < 0 || !(k->headroom >= TS_CURVE_GROWTH))
		return;
	best = &k->row[k->best_row];
	f = ts_finding_add(c, "busy-not-full", op, TS_SEV_MEDIUM,
			   TS_RESTS_DEPTH,
			   "%s %s: %%util says %.0f%% busy, but the device ran %.1f requests at once where it has shown %.1f: %s %.1fx the throughput is left (%.0f IOPS now while busy, %.0f at depth %s)",
			   d->name, ts_finding_op_words(op), d->busy_pct,
			   d->device.mean, best->mean_depth,
			   knee < 0 ? "at least" : "about", k->headroom,
			   k->now_iops, best->iops,
			   ts_finding_depths(k, k->best_row, at, sizeof(at)));
	ts_finding_figure(f, "busy_pct", d->busy_pct, "percent");
	ts_finding_figure(f, "concurrency", d->device.mean, "requests");
	ts_finding_figure(f, "best_depth", best->mean_depth, "requests");
	ts_finding_figure(f, "iops_now", k->now_iops, "iops");
	ts_finding_figure(f, "iops_best", best->iops, "iops");
	ts_finding_figure(f, "headroom", k->headroom, "ratio");
}
