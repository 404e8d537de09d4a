// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <string.h>

#include "findings/findings.h"
#include "lib/json.h"
#include "core/report_parts.h"
#include "output.h"
#include "output_parts.h"

/* "QUEUE" and @t: "QUEUE_us", a column's header with its unit. */
static const char *head(char *buf, size_t len, const char *name,
			const struct ts_tfmt *t)
{
	snprintf(buf, len, "%s_%s", name, ts_tfmt_unit(t));
	return buf;
}

bool ts_out_op_shown(const struct ts_op_figures *o)
{
	return o->ios || o->missed || o->unissued;
}

/* A row's first columns; MRG/s NaN: "-" (not followed, or not merges). */
static void put_row_start(FILE *f, const char *dev, const char *op,
			  double iops, double mrgps, double mibps)
{
	fprintf(f, "%-10s %-7s %10.1f", dev, op, iops);
	if (isnan(mrgps))
		fprintf(f, " %7s", "-");
	else
		fprintf(f, " %7.1f", mrgps);
	fprintf(f, " %8.2f", mibps);
}

/* @light: merges were not followed (--light attaches no merge program). */
static void put_op_row(FILE *f, const struct ts_tfmt *t, const char *dev,
		       const char *op, const struct ts_op_figures *o,
		       bool light)
{
	put_row_start(f, dev, op, o->iops, light ? NAN : o->mrgps, o->mibps);
	if (isnan(o->avg_kb))
		fprintf(f, " %7s", "-");
	else
		fprintf(f, " %7.1f", o->avg_kb);
	ts_tfmt_put(f, t, o->queue_ms, 9);
	ts_tfmt_put(f, t, o->service_ms, 10);
	ts_tfmt_put(f, t, o->total_ms, 9);
}

/*
 * @light: the OS queue was not followed (--light), OS_QD is unknown; a
 * bio-based device has none (its bios go to the driver at Q).
 */
static void put_device_columns(FILE *f, const struct ts_tfmt *t,
			       const struct ts_dev_report *d, bool light)
{
	fprintf(f, " %6.2f %7s%u", d->device.mean,
		d->device.max_exact ? "" : "<=", d->device.max);
	if (light || d->bio_layer)
		fprintf(f, " %6s", "-");
	else
		fprintf(f, " %6.2f", d->os.mean);
	fprintf(f, " %6.1f", d->busy_pct);
	ts_tfmt_put(f, t, d->svctm_ms, 8);
	fputc('\n', f);
}

static void put_blank_device_columns(FILE *f)
{
	fprintf(f, " %6s %9s %6s %6s %8s\n", "-", "-", "-", "-", "-");
}

/* Durable writes: their rate and size, and TOTAL = Q -> end of sequence. */
static void put_sync_row(FILE *f, const struct ts_tfmt *t,
			 const struct ts_dev_report *d)
{
	const struct ts_sync_figures *s = &d->sync;

	put_row_start(f, d->name, "sync", s->iops, NAN, s->mibps);
	if (s->ios)
		fprintf(f, " %7.1f", s->bytes / 1024.0 / s->ios);
	else
		fprintf(f, " %7s", "-");
	ts_tfmt_put(f, t, NAN, 9);
	ts_tfmt_put(f, t, NAN, 10);
	ts_tfmt_put(f, t, s->total_ms, 9);
	put_blank_device_columns(f);
}

static bool has_sync(const struct ts_dev_report *d)
{
	return d->sync.ios || d->sync.missed || d->sync.untracked;
}

/* What the sync row is, and what it could not time. */
static void put_sync_notes(FILE *f, const struct ts_dev_report *d,
			   enum ts_unit units)
{
	const struct ts_sync_figures *s = &d->sync;
	char t[32];

	if (!has_sync(d))
		return;
	fprintf(f, "  note: %s: sync: %llu durable writes (REQ_PREFLUSH or REQ_FUA: fsync, O_DSYNC, journal commits), TOTAL from Q to the end of their flush sequence",
		d->name, (unsigned long long)s->ios);
	if (!isnan(s->flush_share))
		fprintf(f, "; a flush command (%llu, mean %s) was in the device %.0f%% of their time",
			(unsigned long long)s->flush_ios,
			ts_time_str(t, sizeof(t),
				    isnan(s->flush_ms) ? 0 : s->flush_ms, units),
			100 * s->flush_share);
	fputc('\n', f);
	if (s->missed || s->untracked)
		fprintf(f, "  note: %s: sync: %llu durable writes completed unseen and %llu not followed (table full): not in the sync row\n",
			d->name, (unsigned long long)s->missed,
			(unsigned long long)s->untracked);
}

/* The percentile table, printed (@f) or only looked at (@f NULL). */
struct pct_table {
	FILE *f;
	struct ts_tfmt t;
	double min_ms; /* the smallest figure, when looking */
	int rows;
};

static void put_pct_header(struct pct_table *p)
{
	static const char *const names[] = { "MEAN", "P50", "P90", "P99",
					      "P99.9", "MAX" };
	char buf[16];
	int k;

	fprintf(p->f, "%-10s %-7s %-8s", "DEVICE", "OP", "TIME");
	for (k = 0; k < 6; k++)
		fprintf(p->f, " %9s", head(buf, sizeof(buf), names[k], &p->t));
	fputc('\n', p->f);
}

static void put_pct_row(struct pct_table *p, const char *dev, const char *op,
			const char *what, double mean, const struct ts_pct *q)
{
	const double v[] = { mean, q->p50, q->p90, q->p99, q->p999, q->max };
	int k;

	if (!p->f) {
		for (k = 0; k < 6; k++)
			ts_tmin_see(&p->min_ms, v[k]);
		return;
	}
	if (!p->rows++)
		put_pct_header(p);
	fprintf(p->f, "%-10s %-7s %-8s", dev, op, what);
	for (k = 0; k < 6; k++)
		ts_tfmt_put(p->f, &p->t, v[k], 9);
	fputc('\n', p->f);
}

/* Direction @op's rows: queue (none if bio-based), service, total, layer. */
static void put_pct_rows(struct pct_table *p, const struct ts_dev_report *d,
			 int op)
{
	const struct ts_op_figures *o = &d->op[op];
	const char *name = ts_op_names[op];

	if (o->queued_ios && !d->bio_layer)
		put_pct_row(p, d->name, name, "queue", o->queue_ms, &o->queue_p);
	put_pct_row(p, d->name, name, "service", o->service_ms, &o->service_p);
	if (o->queued_ios)
		put_pct_row(p, d->name, name, "total", o->total_ms, &o->total_p);
	if (o->layer_ios)
		put_pct_row(p, d->name, name, "layer", o->layer_ms, &o->layer_p);
}

static void walk_percentiles(struct pct_table *p, const struct ts_report *r)
{
	int i, op;

	for (i = 0; i < r->ndev; i++) {
		const struct ts_dev_report *d = &r->dev[i];

		if (!d->active)
			continue;
		for (op = 0; op < TS_NR_OPS; op++)
			if (d->op[op].ios && d->op[op].has_hist)
				put_pct_rows(p, d, op);
		if (d->sync.ios && d->sync.has_hist)
			put_pct_row(p, d->name, "sync", "total",
				    d->sync.total_ms, &d->sync.total_p);
	}
}

/*
 * Means and percentiles of queue, service and total time, per direction,
 * and of the durable writes' total time: once to find the table's unit
 * from all its figures, once to print.
 */
static void put_percentiles(FILE *f, const struct ts_report *r)
{
	struct pct_table p = { .min_ms = INFINITY };

	walk_percentiles(&p, r);
	p.t = ts_tfmt_pick(p.min_ms, r->units);
	p.f = f;
	walk_percentiles(&p, r);
}

/* -H: the histograms of every active device and direction. */
static void put_histograms(FILE *f, const struct ts_report *r)
{
	static const char *const kinds[] = { "queue time", "service time",
					     "total time", "layer time" };
	char title[160];
	int i, op, k;

	for (i = 0; i < r->ndev; i++) {
		const struct ts_dev_report *d = &r->dev[i];

		if (!d->active || !d->hist)
			continue;
		for (op = 0; op < TS_NR_OPS; op++) {
			const struct ts_hist *h = &d->hist[op];
			const __u64 *by_kind[] = { h->queue, h->service, h->total,
						   h->layer };

			if (!d->op[op].ios)
				continue;
			for (k = 0; k < 4; k++) {
				if (!ts_hist_count(by_kind[k]))
					continue;
				snprintf(title, sizeof(title), "\n%s %s: %s",
					 d->name, ts_op_names[op], kinds[k]);
				ts_hist_print(f, title, by_kind[k],
					      r->show_hist == 2);
			}
			snprintf(title, sizeof(title), "\n%s %s: request size",
				 d->name, ts_op_names[op]);
			ts_size_print(f, title, h->size);
		}
		if (!d->sync.ios)
			continue;
		snprintf(title, sizeof(title),
			 "\n%s sync: total time (Q to the end of the flush sequence)",
			 d->name);
		ts_hist_print(f, title, d->hist[TS_HIST_SYNC].total,
			      r->show_hist == 2);
	}
}

const char *ts_out_depths(const struct ts_curve_row *row, char *buf,
			  size_t len)
{
	if (row->lo == row->hi)
		snprintf(buf, len, "%u", row->lo);
	else if (row->hi >= TS_LEVEL_MAX)
		snprintf(buf, len, "%u+", row->lo);
	else
		snprintf(buf, len, "%u-%u", row->lo, row->hi);
	return buf;
}

/* output_parts.h */
enum ts_curve_limit ts_out_dev_limit(const struct ts_dev_report *d,
				     bool light)
{
	double os = d->bio_layer ? 0 : light ? NAN : d->os.busy_share;

	return ts_curve_limit_of(&d->curve, d->device.excess,
				 d->device.busy_share, os);
}

/* The OS queue's busy time as a share of the device's, in %. */
static double os_wait_pct(const struct ts_dev_report *d)
{
	return d->device.busy_share > 0 ?
		       100 * d->os.busy_share / d->device.busy_share : 0;
}

static void put_limit_unknown(FILE *f, const struct ts_dev_report *d,
			      bool light)
{
	if (ts_curve_deepest(&d->curve) < 0)
		fprintf(f, "  limit: unknown: not enough evidence\n");
	else if (light && !d->bio_layer)
		fprintf(f, "  limit: unknown: the OS queue is not followed under --light\n");
	else
		fprintf(f, "  limit: unknown: the growth into the deepest depths seen does not hold if their requests were filed %u too deep, as the depth counter was too high at times; take a report whose depth is exact\n",
			d->device.excess);
}

static void put_curve_limit(FILE *f, const struct ts_dev_report *d,
			    bool light)
{
	const struct ts_curve *c = &d->curve;
	char a[24];

	switch (ts_out_dev_limit(d, light)) {
	case TS_LIMIT_DEVICE:
		fprintf(f, "  limit: the device: deeper than %s it held more requests and completed hardly more\n",
			ts_out_depths(&c->row[c->parallelism_row], a, sizeof(a)));
		break;
	case TS_LIMIT_OS_QUEUE:
		fprintf(f, "  limit: the OS queue: requests waited in it %.0f%% of the time the device was busy (%.2f on average), so the device was given no more than it held (its queue depth, the I/O scheduler or an I/O controller kept them back); the device's own limit was not reached\n",
			os_wait_pct(d), d->os.mean);
		break;
	case TS_LIMIT_ABOVE:
		fprintf(f, "  limit: above the device: it took every request it was given at once (the OS queue held one %.1f%% of the time the device was busy), so the submitter (its CPUs, its rate, its depth) limited the load; offer more to find the device's limit\n",
			os_wait_pct(d));
		break;
	default:
		put_limit_unknown(f, d, light);
	}
}

static void put_saturation(FILE *f, const struct ts_curve *c,
			   enum ts_unit units)
{
	char a[24], p95[32], p95_1[32];

	ts_time_str(p95_1, sizeof(p95_1), c->row[0].p95_ms, units);
	if (c->saturation_row == -2)
		fprintf(f, "  saturation: not enough evidence at depth 1 to compare with\n");
	else if (c->saturation_row < 0)
		fprintf(f, "  saturation: none seen (no depth's p95 service above %.0fx depth 1's %s)\n",
			TS_CURVE_SATURATION, p95_1);
	else
		fprintf(f, "  saturation: from depth %s: p95 service %s > %.0fx depth 1's %s\n",
			ts_out_depths(&c->row[c->saturation_row], a, sizeof(a)),
			ts_time_str(p95, sizeof(p95),
				    c->row[c->saturation_row].p95_ms, units),
			TS_CURVE_SATURATION, p95_1);
}

static void put_curve_verdict(FILE *f, const struct ts_dev_report *d,
			      const struct ts_report *r)
{
	const struct ts_curve *c = &d->curve;
	bool light = r->light;
	char a[24], b[24];

	if (c->parallelism_row < 0)
		fprintf(f, "  effective parallelism: not enough evidence (needs two depth classes with >= %.0f%% of the time and >= %d completions)\n",
			100 * TS_CURVE_MIN_SHARE, TS_CURVE_MIN_COMPLETIONS);
	else if (c->still_growing)
		fprintf(f, "  effective parallelism: at least %s: throughput still grows at the deepest depth seen (%.1f IOPS)\n",
			ts_out_depths(&c->row[c->parallelism_row], a, sizeof(a)),
			c->row[c->parallelism_row].iops);
	else
		fprintf(f, "  effective parallelism: %u: beyond depth %s throughput grows less than +%.0f%% per doubling; %.1f IOPS there\n",
			c->row[c->parallelism_row].hi,
			ts_out_depths(&c->row[c->parallelism_row], a, sizeof(a)),
			100 * (TS_CURVE_GROWTH - 1), c->row[c->parallelism_row].iops);
	put_curve_limit(f, d, light);
	put_saturation(f, c, r->units);
	if (c->best_row < 0)
		fprintf(f, "  headroom: unknown: no deeper depth than now (%s) was observed long enough\n",
			ts_out_depths(&c->row[c->now_row], a, sizeof(a)));
	else
		fprintf(f, "  headroom: %.2fx: %.1f IOPS now (while busy, mean depth in %s), %.1f IOPS seen at depth %s (over %.2f s)\n",
			c->headroom, c->now_iops,
			ts_out_depths(&c->row[c->now_row], a, sizeof(a)),
			c->row[c->best_row].iops,
			ts_out_depths(&c->row[c->best_row], b, sizeof(b)),
			c->row[c->best_row].time_s);
}

/* The format of @c's table, from the percentiles it prints. */
static struct ts_tfmt curve_fmt(const struct ts_curve *c, enum ts_unit units)
{
	double min = INFINITY;
	int k;

	for (k = 0; k < c->nrows; k++) {
		ts_tmin_see(&min, c->row[k].p50_ms);
		ts_tmin_see(&min, c->row[k].p95_ms);
		ts_tmin_see(&min, c->row[k].p99_ms);
	}
	return ts_tfmt_pick(min, units);
}

static void put_curve_header(FILE *f, const struct ts_tfmt *t)
{
	char p50[16], p95[16], p99[16];

	fprintf(f, "%-10s %7s %7s %8s %12s %10s %10s %10s\n", "DEPTH",
		"TIME%", "MEAN", "IOS", "IOPS", head(p50, sizeof(p50), "P50", t),
		head(p95, sizeof(p95), "P95", t),
		head(p99, sizeof(p99), "P99", t));
}

/* --depth: per disk, the parallelism curve and what follows from it. */
static void put_curves(FILE *f, const struct ts_report *r)
{
	struct ts_tfmt t;
	char buf[24];
	int i, k;

	for (i = 0; i < r->ndev; i++) {
		const struct ts_dev_report *d = &r->dev[i];
		const struct ts_curve *c = &d->curve;

		if (!d->active || !d->has_curve || !c->nrows)
			continue;
		fprintf(f, "\n%s: service time by the device's depth at issue\n", d->name);
		t = curve_fmt(c, r->units);
		put_curve_header(f, &t);
		for (k = 0; k < c->nrows; k++) {
			const struct ts_curve_row *row = &c->row[k];

			fprintf(f, "%-10s %7.1f %7.2f %8llu %12.1f",
				ts_out_depths(row, buf, sizeof(buf)), 100 * row->share,
				isnan(row->mean_depth) ? 0 : row->mean_depth,
				(unsigned long long)row->completions,
				isnan(row->iops) ? 0 : row->iops);
			ts_tfmt_put(f, &t, row->p50_ms, 10);
			ts_tfmt_put(f, &t, row->p95_ms, 10);
			ts_tfmt_put(f, &t, row->p99_ms, 10);
			fputs(row->evidence ? "\n" : "  (little evidence)\n", f);
		}
		if (!d->device.exact)
			fprintf(f, "  not exact: while completions went unseen the depth counter was up to %u too high, so some requests sit in deeper classes than they were\n",
				d->device.excess);
		put_curve_verdict(f, d, r);
	}
}

/* A request in the device this long is reported as stuck. */
#define TS_STUCK_S 1.0

/* Requests stuck in the device: how many, and the oldest one's age. */
static void put_stuck(FILE *f, const struct ts_report *r)
{
	int i;

	for (i = 0; i < r->ndev; i++) {
		const struct ts_dev_report *d = &r->dev[i];

		if (d->oldest_age_s >= TS_STUCK_S)
			fprintf(f, "  warning: %s: %lld requests in the device, the oldest issued %.1f s ago\n",
				d->name, (long long)d->in_device_now,
				d->oldest_age_s);
	}
}

/* Devices whose depth counter did not follow every request in the span. */
static void put_inexact(FILE *f, const struct ts_report *r)
{
	int i;

	for (i = 0; i < r->ndev; i++) {
		const struct ts_depth_summary *s = &r->dev[i].device;

		if (!r->dev[i].active || s->exact)
			continue;
		if (s->max_min == s->max)
			fprintf(f, "  warning: %s: depth not exact (see the notes), though its maximum, %u, is; CONC and the -D classes are estimates\n",
				r->dev[i].name, s->max);
		else
			fprintf(f, "  warning: %s: depth not exact (see the notes): the device held between %u and %u at most; CONC and the -D classes are estimates\n",
				r->dev[i].name, s->max_min, s->max);
	}
	for (i = 0; i < r->ndev; i++)
		if (r->dev[i].active && r->dev[i].in_os_now < 0)
			fprintf(f, "  warning: %s: the OS queue's depth counter is at %lld: a departure was counted twice; OS_QD is an estimate\n",
				r->dev[i].name, (long long)r->dev[i].in_os_now);
}

/* The figures in @r of member @m (its whole disk's), or NULL. */
static const struct ts_dev_report *member_report(const struct ts_report *r,
						 const struct ts_member *m)
{
	int i;

	for (i = 0; i < r->ndev; i++)
		if (r->dev[i].major == m->major && r->dev[i].minor == m->minor)
			return &r->dev[i];
	return NULL;
}

/* "; layer time 0.012 ms mean, 0.020 ms p99 over 812 bios" */
static void put_layer_time(FILE *f, const struct ts_op_figures *all,
			   enum ts_unit units)
{
	char t[32];

	if (!all->layer_ios) {
		fputs("; layer time unknown (bios not mapped one-to-one)", f);
		return;
	}
	fprintf(f, "; layer time %s mean",
		ts_time_str(t, sizeof(t), all->layer_ms, units));
	if (all->has_hist && !isnan(all->layer_p.p99))
		fprintf(f, ", %s p99",
			ts_time_str(t, sizeof(t), all->layer_p.p99, units));
	fprintf(f, " over %llu bios", (unsigned long long)all->layer_ios);
}

/*
 * After a stacked device's rows, one line with its members' CONC and
 * SERVICE ("-" where a member has none) and its own layer time.
 */
static void put_stack(FILE *f, const struct ts_tfmt *t,
		      const struct ts_report *r, const struct ts_dev_report *d)
{
	const struct ts_stack *s = &d->stack;
	const struct ts_dev_report *m;
	int k;

	fprintf(f, "  %s: %s-based, members", d->name,
		d->bio_layer ? "bio" : "request");
	for (k = 0; k < s->nmembers; k++)
		fprintf(f, " %s", s->member[k].name);
	fputs(" (CONC", f);
	for (k = 0; k < s->nmembers; k++)
		if ((m = member_report(r, &s->member[k])))
			fprintf(f, " %.2f", m->device.mean);
		else
			fputs(" -", f);
	fputs(", SERVICE", f);
	for (k = 0; k < s->nmembers; k++) {
		m = member_report(r, &s->member[k]);
		ts_tfmt_put(f, t, m ? m->all.service_ms : NAN, 0);
	}
	fprintf(f, " %s)", ts_tfmt_unit(t));
	if (d->bio_layer)
		put_layer_time(f, &d->all, r->units);
	fputc('\n', f);
}

/*
 * Whether @d's discard merges are all counted: a disk whose discards take
 * several ranges merges discard bios without a tracepoint (only shown
 * where it discarded).
 */
static bool discard_merges_exact(const struct ts_dev_report *d)
{
	const struct ts_op_figures *o = &d->op[TS_OP_DISCARD];

	return !d->active || d->discard_ranges <= 1 || !ts_out_op_shown(o);
}

/* What --exclude left out, and its globs that matched no disk. */
static void put_exclude_notes(FILE *f, const struct ts_report *r)
{
	if (r->nexcluded)
		fprintf(f, "  note: not traced, --exclude: %d disk%s: %s\n",
			r->nexcluded, r->nexcluded == 1 ? "" : "s", r->excluded);
	if (r->exclude_unmatched && r->exclude_unmatched[0])
		fprintf(f, "  note: --exclude matches no disk: %s\n",
			r->exclude_unmatched);
}

static void put_notes(FILE *f, const struct ts_report *r)
{
	int i, e;

	put_exclude_notes(f, r);
	if (r->filter)
		fprintf(f, "  note: %s: the rows count its requests only; CONC, OS_QD, BUSY%% and %%util are the device's, of every submitter (SVCTM divides that busy time by these requests)\n",
			r->filter);
	if (r->not_traced && r->not_traced[0])
		fprintf(f, "  note: not traced, bio-based (--light does not follow bios): %s\n",
			r->not_traced);
	if (r->no_room && r->no_room[0])
		fprintf(f, "  note: NOT TRACED, no room (%u disks traced at once at most): %s\n",
			r->max_devs, r->no_room);
	put_inexact(f, r);
	for (i = 0; i < r->ndev; i++)
		if (r->dev[i].active)
			put_sync_notes(f, &r->dev[i], r->units);
	for (i = 0; i < r->ndev; i++)
		if (r->dev[i].counts_shared)
			fprintf(f, "  note: %s: its counts may hold another disk's: its slot's disk before it changed after truestat last read it, or a disk came and went between two reads\n",
				r->dev[i].name);
	for (i = 0; i < r->ndev; i++)
		if (!discard_merges_exact(&r->dev[i]) && !r->light)
			fprintf(f, "  note: %s: discard MRG/s is a lower bound: a discard takes up to %u ranges here, and a discard bio merged into one has no tracepoint\n",
				r->dev[i].name, r->dev[i].discard_ranges);
	for (i = 0; i < r->ndev; i++)
		for (e = 0; e < TS_NR_EVENTS; e++)
			if (r->dev[i].events[e])
				fprintf(f, "  note: %s: %llu %s\n", r->dev[i].name,
					(unsigned long long)r->dev[i].events[e],
					ts_event_help[e]);
	for (i = 0; i < r->ndev && r->totals && r->slow; i++)
		if (r->dev[i].active)
			ts_slow_put_counts(f, r->slow, r->dev[i].name,
					   r->dev[i].major, r->dev[i].minor,
					   r->dev[i].events[TS_EV_SLOW_DROPPED],
					   r->dev[i].all.missed);
	if (r->lost_events)
		fprintf(f,
			"  warning: %llu events lost to BPF recursion "
			"(recursion_misses): counts may be short\n",
			(unsigned long long)r->lost_events);
}

/* Said once a run, at the first idle interval: what to do about it. */
static void put_idle_hint(FILE *f, const struct ts_report *r)
{
	static bool said;

	if (said || r->totals)
		return;
	said = true;
	fprintf(f, "  (waiting for I/O: run some, e.g. fio --name=try "
		   "--filename=/var/tmp/truestat.try --size=256M --rw=randread "
		   "--direct=1 --runtime=30 --time_based; or, in truestat's "
		   "source tree, make demo: a simulated disk against iostat)\n");
}

static void see_op(double *min, const struct ts_op_figures *o)
{
	ts_tmin_see(min, o->queue_ms);
	ts_tmin_see(min, o->service_ms);
	ts_tmin_see(min, o->total_ms);
}

/* The main table's format, from every time its rows and stack lines show. */
static struct ts_tfmt main_fmt(const struct ts_report *r)
{
	const struct ts_dev_report *d, *m;
	double min = INFINITY;
	int i, op, k;

	for (i = 0; i < r->ndev; i++) {
		d = &r->dev[i];
		if (!d->active)
			continue;
		for (op = 0; op < TS_NR_OPS; op++)
			if (ts_out_op_shown(&d->op[op]))
				see_op(&min, &d->op[op]);
		if (d->nops_active != 1)
			see_op(&min, &d->all);
		ts_tmin_see(&min, d->svctm_ms);
		if (has_sync(d))
			ts_tmin_see(&min, d->sync.total_ms);
		for (k = 0; k < d->stack.nmembers; k++)
			if ((m = member_report(r, &d->stack.member[k])))
				ts_tmin_see(&min, m->all.service_ms);
	}
	return ts_tfmt_pick(min, r->units);
}

static void put_main_header(FILE *f, const struct ts_tfmt *t)
{
	char q[16], s[16], to[16], sv[16];

	fprintf(f, "\n%-10s %-7s %10s %7s %8s %7s %9s %10s %9s %6s %9s %6s %6s %8s\n",
		"DEVICE", "OP", "IOPS", "MRG/s", "MiB/s", "AVG_KiB",
		head(q, sizeof(q), "QUEUE", t), head(s, sizeof(s), "SERVICE", t),
		head(to, sizeof(to), "TOTAL", t), "CONC", "CONC_MAX", "OS_QD",
		"BUSY%", head(sv, sizeof(sv), "SVCTM", t));
}

/*
 * -p: device @d's partitions, a row per direction with I/O and "all" when
 * more than one; depth and busy time are not kept per partition: "-". A
 * row short of requests (the table full) says so below it.
 */
static void put_partition_rows(FILE *f, const struct ts_tfmt *t,
			       const struct ts_report *r,
			       const struct ts_dev_report *d)
{
	const struct ts_part_row *p;
	int i, op;

	for (i = 0; r->parts && i < r->parts->n; i++) {
		p = &r->parts->row[i];
		if (p->qid != d->qid || p->claimed_ns != d->claimed_ns)
			continue;
		for (op = 0; op < TS_NR_OPS; op++) {
			if (!ts_out_op_shown(&p->op[op]))
				continue;
			put_op_row(f, t, p->name, ts_op_names[op], &p->op[op],
				   r->light);
			put_blank_device_columns(f);
		}
		if (p->nops_active > 1) {
			put_op_row(f, t, p->name, "all", &p->all, r->light);
			put_blank_device_columns(f);
		}
		if (p->incomplete)
			fprintf(f, "  note: %s: NOT COMPLETE, lower bounds: %llu requests of %s not counted in their partition's row, the partition table full\n",
				p->name,
				(unsigned long long)d->events[TS_EV_PART_FULL],
				d->name);
	}
}

/* Device @d's rows: each direction with I/O, "all" when more than one. */
static void put_device_rows(FILE *f, const struct ts_tfmt *t,
			    const struct ts_report *r,
			    const struct ts_dev_report *d)
{
	int op;

	for (op = 0; op < TS_NR_OPS; op++) {
		if (!ts_out_op_shown(&d->op[op]))
			continue;
		put_op_row(f, t, d->name, ts_op_names[op], &d->op[op],
			   r->light);
		if (d->nops_active == 1) {
			put_device_columns(f, t, d, r->light);
			break;
		}
		put_blank_device_columns(f);
	}
	if (d->nops_active != 1) {
		put_op_row(f, t, d->name, "all", &d->all, r->light);
		put_device_columns(f, t, d, r->light);
	}
	if (has_sync(d))
		put_sync_row(f, t, d);
	put_partition_rows(f, t, r, d);
	if (d->stack.nmembers)
		put_stack(f, t, r, d);
}

/* What follows the table: the options' sections, per device. */
static void put_sections(FILE *f, const struct ts_report *r)
{
	int i;

	put_stuck(f, r);
	put_percentiles(f, r);
	if (r->show_hist)
		put_histograms(f, r);
	if (r->show_curve)
		put_curves(f, r);
	for (i = 0; r->show_pattern && i < r->ndev; i++)
		if (r->dev[i].active)
			ts_pattern_print(f, r->dev[i].name, &r->dev[i].pattern,
					 r->units);
	for (i = 0; r->flags && i < r->ndev; i++)
		if (r->dev[i].active || r->dev[i].events[TS_EV_FLAGS_FULL])
			ts_flags_print(f, r->flags, r->units,
				       ts_report_disk(&r->dev[i]), r->dev[i].name,
				       r->dev[i].events[TS_EV_FLAGS_FULL]);
	for (i = 0; r->who && i < r->ndev; i++)
		if (r->dev[i].active)
			ts_who_print(f, r->who, r->units, ts_report_disk(&r->dev[i]),
				     r->dev[i].name,
				     r->dev[i].events[TS_EV_WHO_FULL]);
}

/*
 * What the figures mean, ranked: nothing when nothing is found. A note
 * is said once a device, and again in the totals (ts_notes_said).
 */
static void put_findings(FILE *f, const struct ts_report *r)
{
	static struct ts_findings fs;
	static struct ts_notes_said said;

	ts_findings_build(r, &fs);
	ts_findings_print(f, &fs, &said, r->totals);
}

void ts_print_table(FILE *f, const struct ts_report *r, time_t when)
{
	struct ts_tfmt t;
	char stamp[32];
	int i, shown = 0;

	strftime(stamp, sizeof(stamp), r->date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S",
		 localtime(&when));
	for (i = 0; i < r->ndev; i++)
		shown += r->dev[i].active;
	fprintf(f, "%s  %s %.2f s", stamp, r->totals ? "totals over" : "interval",
		r->span_s);
	if (r->light)
		fprintf(f, "  (--light: QUEUE from request allocation)");
	if (!shown && r->none_left) {
		fprintf(f, "  nothing traced: --exclude leaves no disk\n");
		put_notes(f, r);
		return;
	}
	if (!shown && r->no_room && r->no_room[0]) {
		fprintf(f, "  no I/O on the traced disks; not traced: %s\n",
			r->no_room);
		put_notes(f, r);
		return;
	}
	if (!shown) {
		fprintf(f, "  no I/O on the traced disks\n");
		put_idle_hint(f, r);
		put_notes(f, r);
		return;
	}
	t = main_fmt(r);
	put_main_header(f, &t);
	for (i = 0; i < r->ndev; i++)
		if (r->dev[i].active)
			put_device_rows(f, &t, r, &r->dev[i]);
	put_sections(f, r);
	put_findings(f, r);
	put_notes(f, r);
}
