// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"
#include "prom.h"
#include "prom_parts.h"

static void help(const struct ts_expo *x, const char *name, const char *type,
		 const char *text)
{
	x->ops->family(x->ctx, name, type, text);
}

/* Series @name of device @d (and direction @op when not NULL). */
static struct ts_expo_series series(const char *name,
				    const struct ts_dev_report *d,
				    const char *op)
{
	struct ts_expo_series s = {
		.name = name, .n = 2,
		.l = { { "device", d->name },
		       { "layer", d->bio_layer ? "bio" : "request" } },
	};

	if (op)
		s.l[s.n++] = (struct ts_expo_label){ "op", op };
	return s;
}

/* @s with one more label, @name="@value". */
static struct ts_expo_series with(struct ts_expo_series s, const char *name,
				  const char *value)
{
	if (s.n < TS_EXPO_LABELS)
		s.l[s.n++] = (struct ts_expo_label){ name, value };
	return s;
}

static void sample(const struct ts_expo *x, struct ts_expo_series s, double v,
		   enum ts_expo_fmt fmt)
{
	x->ops->sample(x->ctx, &s, v, fmt);
}

/* A histogram's _sum: the counted ns, in seconds. */
static double sum_s(__u64 ns)
{
	return ns / 1e9;
}

/* The full set's edge nearest @ns (at or above 2^TS_PROM_FIRST_EXP). */
static __u64 nearest_edge(double ns)
{
	int e = (int)floor(log2(ns));
	__u64 step = (1ULL << e) / TS_PROM_PER_OCTAVE, lo;

	lo = (1ULL << e) + (__u64)((ns - (double)(1ULL << e)) / step) * step;
	return ns - lo <= lo + step - ns ? lo : lo + step;
}

int ts_prom_edges(bool full, __u64 *edges)
{
	int n = 0, e, q;

	if (!full) {
		for (q = 0; q < TS_PROM_SHORT_EDGES; q++)
			edges[n++] = nearest_edge(1e4 * pow(10, q / 2.0));
		return n;
	}
	for (e = TS_PROM_FIRST_EXP; e <= TS_HIST_MAX_EXP + 1; e++)
		for (q = 0; q < TS_PROM_PER_OCTAVE; q++) {
			if (e > TS_HIST_MAX_EXP && q)
				break;
			edges[n++] = (1ULL << e) + q * (1ULL << e) / TS_PROM_PER_OCTAVE;
		}
	return n;
}

/* One histogram series: cumulative counts at the exported edges. */
static void histogram(const struct ts_expo *x, const struct ts_prom *p,
		      const char *name, const struct ts_dev_report *d,
		      const char *op, const __u64 *counts, double sum)
{
	__u64 edges[TS_PROM_FULL_EDGES], cum[TS_PROM_FULL_EDGES], all = 0;
	int n = ts_prom_edges(p->full_buckets, edges), b = 0, i;
	struct ts_expo_series s = series(name, d, op);
	struct ts_expo_hist h = {
		.counts = counts, .edges = edges, .cum = cum, .nedges = n,
		.sum_s = sum,
	};

	for (i = 0; i < n; i++) {
		/* every fine bucket below the edge */
		for (; b < TS_HIST_SLOTS && ts_hist_lower(b) < edges[i]; b++)
			all += counts[b];
		cum[i] = all;
	}
	for (; b < TS_HIST_SLOTS; b++)
		all += counts[b];
	h.count = all;
	x->ops->histogram(x->ctx, &s, &h);
}

/* A gauge per device, of those for which @cond holds (d: the device). */
#define PER_DEV_KIND(x, r, name, kind, text, cond, expr)                      \
	do {                                                                 \
		int i_;                                                      \
		help(x, name, kind, text);                                   \
		for (i_ = 0; i_ < (r)->ndev; i_++) {                         \
			const struct ts_dev_report *d = &(r)->dev[i_];       \
			if (!(cond))                                         \
				continue;                                    \
			sample(x, series(name, d, NULL), (double)(expr),     \
			       TS_EXPO_G17);                                 \
		}                                                            \
	} while (0)

#define PER_DEV_IF(x, r, name, text, cond, expr)                             \
	PER_DEV_KIND(x, r, name, "gauge", text, cond, expr)
#define PER_DEV(x, r, name, text, expr) PER_DEV_IF(x, r, name, text, 1, expr)

/*
 * Durable writes (the sync row), since the start: the report is of the
 * whole run and these counters are never repaired, so never go down.
 * Not with --light: their Q is not followed.
 */
bool ts_prom_named(const void *ctx, const struct ts_who_key *k)
{
	const struct ts_prom *p = ctx;
	int i;

	for (i = 0; i < p->nnamed; i++)
		if (p->named[i].qid == k->qid && p->named[i].id == k->id)
			return true;
	return false;
}

/* Whether submitter @e has series of its own; named from now on if it may. */
static bool named(struct ts_prom *p, const struct ts_who_entry *e, int top)
{
	int i, n = 0;

	if (e->key.id == TS_WHO_FOLDED) /* submitters folded: in "other" */
		return false;
	if (ts_prom_named(p, &e->key))
		return true;
	for (i = 0; i < p->nnamed; i++)
		n += p->named[i].qid == e->key.qid;
	if (n >= top || p->nnamed == TS_WHO_ENTRIES)
		return false;
	p->named[p->nnamed++] = (struct ts_prom_named){ e->key.id, e->key.qid };
	return true;
}

enum by_figure { BY_IOS, BY_BYTES, BY_TOTAL_S };

static double by_figure(const struct ts_who_stats *s, enum by_figure k)
{
	return k == BY_IOS ? s->ios : k == BY_BYTES ? s->bytes : s->total_ns / 1e9;
}

/* One --by series: each named submitter, then "other" per device and op. */
static void by_series(const struct ts_expo *x, struct ts_prom *p,
		      const struct ts_report *r, const char *name,
		      const char *text, enum by_figure k)
{
	const struct ts_who_span *w = r->who;
	const char *label = w->by == TS_BY_CGROUP ? "cgroup" : "process";
	double other[TS_MAX_DEVS][TS_NR_OPS] = { { 0 } };
	bool any[TS_MAX_DEVS][TS_NR_OPS] = { { false } };
	const struct ts_dev_report *d;
	char buf[300];
	int i, op;

	help(x, name, "counter", text);
	for (i = 0; i < w->n; i++) {
		const struct ts_who_entry *e = &w->e[i];

		d = ts_report_dev(r, e->key.qid);
		/* another claim of the slot: a gone disk's, not this one's */
		if (!d || e->key.op >= TS_NR_OPS ||
		    !ts_who_of(&e->key, ts_report_disk(d)))
			continue;
		if (!named(p, e, w->top)) {
			other[e->key.qid][e->key.op] += by_figure(&e->s, k);
			any[e->key.qid][e->key.op] = true;
			continue;
		}
		sample(x,
		       with(series(name, d, ts_op_names[e->key.op]), label,
			    ts_who_name(w, e, buf, sizeof(buf))),
		       by_figure(&e->s, k), TS_EXPO_G17);
	}
	for (i = 0; i < r->ndev; i++)
		for (op = 0; op < TS_NR_OPS; op++) {
			if (!any[r->dev[i].qid][op])
				continue;
			sample(x,
			       with(series(name, &r->dev[i], ts_op_names[op]),
				    label, "other"),
			       other[r->dev[i].qid][op], TS_EXPO_G17);
		}
}

/*
 * --by with --prometheus: per submitter, its requests, bytes and Q->C
 * summed, since the start; the first --top of each device by name, the
 * rest in "other" (cardinality: at most (top + 1) x directions a device).
 */
static void by_counters(const struct ts_expo *x, struct ts_prom *p,
			const struct ts_report *r)
{
	if (!r->who)
		return;
	by_series(x, p, r, "truestat_by_requests_total",
		  "Requests completed, by their submitter (captured at Q)", BY_IOS);
	by_series(x, p, r, "truestat_by_bytes_total",
		  "Their bytes", BY_BYTES);
	by_series(x, p, r, "truestat_by_total_seconds_total",
		  "Their Q->C summed", BY_TOTAL_S);
}

static void sync_counters(const struct ts_expo *x, const struct ts_report *r)
{
	if (r->light)
		return;
	PER_DEV_KIND(x, r, "truestat_sync_requests_total", "counter",
		     "Durable writes completed (REQ_PREFLUSH or REQ_FUA: fsync, O_DSYNC, journal commits)",
		     1, d->sync.ios);
	PER_DEV_KIND(x, r, "truestat_sync_seconds_total", "counter",
		     "Their time from Q to the end of their flush sequence, summed",
		     1, d->sync.total_ns / 1e9);
	PER_DEV_KIND(x, r, "truestat_sync_bytes_total", "counter",
		     "Their data (an fsync's flush has none)", 1, d->sync.bytes);
	PER_DEV_KIND(x, r, "truestat_sync_missed_total", "counter",
		     "Durable writes whose end went unseen (not in sync_requests)",
		     1, d->sync.missed);
}

/* Their time as a histogram, on the disks that have histograms. */
static void sync_histogram(const struct ts_expo *x, const struct ts_prom *p,
			   const struct ts_report *r)
{
	static const char name[] = "truestat_sync_time_seconds";
	int i;

	if (r->light)
		return;
	help(x, name, "histogram",
	     "Durable writes: Q to the end of their flush sequence (disks with histograms)");
	for (i = 0; i < r->ndev; i++) {
		const struct ts_dev_report *d = &r->dev[i];

		if (d->hist && d->sync.ios)
			histogram(x, p, name, d, "write",
				  d->hist[TS_HIST_SYNC].total,
				  sum_s(d->sync.total_ns));
	}
}

/* A counter per device and direction: total[@first + op]. */
static void per_op_counter(const struct ts_expo *x, const struct ts_report *r,
			   const struct ts_prom *p, const char *name,
			   const char *text, int first)
{
	int i, op;

	help(x, name, "counter", text);
	for (i = 0; i < r->ndev; i++)
		for (op = 0; op < TS_NR_OPS; op++) {
			const struct ts_op_figures *o = &r->dev[i].op[op];

			if (!o->ios && !o->missed)
				continue;
			sample(x, series(name, &r->dev[i], ts_op_names[op]),
			       p->dev[i].total[first + op], TS_EXPO_G17);
		}
}

/*
 * A counter per device: total[@which]; @os_queue: only of devices with an
 * OS queue (a bio-based one has none).
 */
static void per_dev_counter(const struct ts_expo *x, const struct ts_report *r,
			    const struct ts_prom *p, const char *name,
			    const char *text, int which, bool os_queue)
{
	int i;

	help(x, name, "counter", text);
	for (i = 0; i < r->ndev; i++) {
		if (os_queue && r->dev[i].bio_layer)
			continue;
		sample(x, series(name, &r->dev[i], NULL),
		       p->dev[i].total[which], TS_EXPO_G17);
	}
}

enum hist_kind { QUEUE_HIST, SERVICE_HIST, TOTAL_HIST, LAYER_HIST };

/*
 * The histogram @kind of @d's direction @op and its sum in seconds; NULL
 * when @d has none: no queue on a bio-based device, layer time only on a
 * stacked one (zram has no layer above a member).
 */
static const __u64 *hist_of(const struct ts_dev_report *d, int op,
			    enum hist_kind kind, double *sum)
{
	const struct ts_op_figures *o = &d->op[op];
	const struct ts_hist *h = &d->hist[op];

	switch (kind) {
	case QUEUE_HIST:
		*sum = sum_s(o->queue_ns);
		return d->bio_layer ? NULL : h->queue;
	case SERVICE_HIST:
		*sum = sum_s(o->service_ns);
		return h->service;
	case TOTAL_HIST:
		*sum = sum_s(o->total_ns);
		return h->total;
	default:
		*sum = sum_s(o->layer_ns);
		return d->bio_layer && d->stack.nmembers ? h->layer : NULL;
	}
}

static void histograms(const struct ts_expo *x, const struct ts_prom *p,
		       const struct ts_report *r, enum hist_kind kind,
		       const char *name, const char *text)
{
	const __u64 *counts;
	double sum;
	int i, op;

	help(x, name, "histogram", text);
	for (i = 0; i < r->ndev; i++) {
		const struct ts_dev_report *d = &r->dev[i];

		if (!d->hist)
			continue;
		for (op = 0; op < TS_NR_OPS; op++) {
			if (!d->op[op].ios)
				continue;
			counts = hist_of(d, op, kind, &sum);
			if (counts)
				histogram(x, p, name, d, ts_op_names[op],
					  counts, sum);
		}
	}
}

static void events(const struct ts_expo *x, const struct ts_report *r,
		   const struct ts_prom *p)
{
	int i, e;

	help(x, "truestat_events_total", "counter",
	     "Things that went differently from Q->D->C (README: events), once they happened");
	for (i = 0; i < r->ndev; i++)
		for (e = 0; e < TS_NR_EVENTS; e++) {
			if (!p->dev[i].total[TS_PROM_EVENTS + e])
				continue; /* 22 a disk, most never */
			sample(x,
			       with(series("truestat_events_total", &r->dev[i],
					   NULL),
				    "event", ts_event_names[e]),
			       p->dev[i].total[TS_PROM_EVENTS + e],
			       TS_EXPO_G17);
		}
}

/*
 * The in-device depth since the previous scrape: its most requests at
 * once, and whether the depth counter followed every request; the time
 * it did not, over the run (README: exact or flagged). And the run's
 * deepest, between two bounds.
 */
static void concurrency_bounds(const struct ts_expo *x,
			       const struct ts_prom *p,
			       const struct ts_report *r)
{
	PER_DEV_IF(x, r, "truestat_device_concurrency_window_exact",
		   "1: the in-device depth followed every request since the previous scrape (from the start of the span under way then: a second, or the interval); 0: the window's figures are estimates",
		   ts_prom_window_of(p, d), ts_prom_window_of(p, d)->seen.exact);
	PER_DEV_IF(x, r, "truestat_device_concurrency_window_max",
		   "Most requests inside the device at once in that window; an upper bound when not exact",
		   ts_prom_window_of(p, d), ts_prom_window_of(p, d)->seen.hi);
	PER_DEV_IF(x, r, "truestat_device_concurrency_window_max_min",
		   "The window's most requests inside the device at once is at least this (the max when exact)",
		   ts_prom_window_of(p, d), ts_prom_window_of(p, d)->seen.lo);
	PER_DEV_KIND(x, r, "truestat_device_concurrency_inexact_seconds_total",
		     "counter",
		     "Time in spans (a second, or the interval) whose in-device depth did not follow every request, counted as each ends",
		     ts_prom_window_of(p, d), ts_prom_window_of(p, d)->inexact_s);
	PER_DEV(x, r, "truestat_device_concurrency_max",
		"Most requests inside the device at once over the run; an upper bound unless it equals truestat_device_concurrency_max_min",
		d->device.max);
	PER_DEV(x, r, "truestat_device_concurrency_max_min",
		"The run's most requests inside the device at once is at least this",
		d->device.max_min);
}

#define MONOTONIC "; never goes down: a late repair is absorbed as it catches up"

/* What to print of class @c of @x: NULL when the device never reached it. */
static const char *depth_label(const struct ts_dev_report *d,
			       const struct ts_prom_depth *x, int c, char *buf,
			       size_t len)
{
	const struct ts_curve_row *row = &d->curve.row[c];
	int n;

	if (!d->has_curve || (!x->issued && !x->time_s))
		return NULL;
	n = snprintf(buf, len, "%u", row->lo);
	if (row->hi >= TS_LEVEL_MAX)
		snprintf(buf + n, len - n, "+");
	else if (row->hi > row->lo)
		snprintf(buf + n, len - n, "-%u", row->hi);
	return buf;
}

enum depth_figure { DEPTH_ISSUED, DEPTH_SERVICE_S, DEPTH_TIME_S };

struct depth_series {
	const char *name, *text;
	enum depth_figure figure;
};

static double depth_figure(const struct ts_prom_depth *x, enum depth_figure k)
{
	return k == DEPTH_ISSUED ? x->issued :
	       k == DEPTH_SERVICE_S ? x->service_s : x->time_s;
}

/* A counter per device and depth class it reached: @s's figure. */
static void per_depth_counter(const struct ts_expo *x,
			      const struct ts_report *r,
			      const struct ts_prom *p,
			      const struct depth_series *s)
{
	const struct ts_prom_depth *at;
	char buf[32];
	int i, c;

	help(x, s->name, "counter", s->text);
	for (i = 0; i < r->ndev; i++)
		for (c = 0; c < TS_DEPTH_CLASSES; c++) {
			at = &p->dev[i].depth[c];
			if (!depth_label(&r->dev[i], at, c, buf, sizeof(buf)))
				continue;
			sample(x,
			       with(series(s->name, &r->dev[i], NULL), "depth",
				    buf),
			       depth_figure(at, s->figure), TS_EXPO_G17);
		}
}

/* The -D curve's raw material, by the in-device depth at issue. */
static const struct depth_series depth_series[] = {
	{ "truestat_issued_at_depth_total",
	  "Requests completed, by the in-device depth at their issue (they included): 1, 2, 3-4, 5-8, ... (the -D curve's rows)",
	  DEPTH_ISSUED },
	{ "truestat_issued_at_depth_service_seconds_total",
	  "Service time (D->C; Q->C on a bio-based device) of those requests, from the middles of their histogram buckets (within 3.2%)",
	  DEPTH_SERVICE_S },
	{ "truestat_device_at_depth_seconds_total",
	  "Time the device held a number of requests in this depth class" MONOTONIC,
	  DEPTH_TIME_S },
};

/* A finding's series, with @extra ("name" and its value) when not NULL. */
static struct ts_expo_series finding_series(const char *name,
					    const struct ts_finding *f,
					    const char *extra,
					    const char *value)
{
	struct ts_expo_series s = {
		.name = name, .n = 3,
		.l = { { "device", f->device }, { "op", f->op },
		       { "finding", f->id } },
	};

	return extra ? with(s, extra, value) : s;
}

/* A series with no label. */
static struct ts_expo_series bare(const char *name)
{
	return (struct ts_expo_series){ .name = name };
}

/*
 * What truestat concluded over the last window (doc/diagnosis.md): a
 * series per finding stated, gone when it no longer is, as Prometheus'
 * own ALERTS series; declared also when none is. Exactness is a series of
 * its own: as a label, each change would start a new series.
 */
static void findings(const struct ts_expo *x, const struct ts_findings *fs,
		     __u64 windows)
{
	const struct ts_finding *f;
	int i, k;

	help(x, "truestat_findings_windows_total", "counter",
	     "Windows truestat drew findings from so far: the last one's number");
	sample(x, bare("truestat_findings_windows_total"), windows,
	       TS_EXPO_U64);
	help(x, "truestat_findings_window_seconds", "gauge",
	     "Span of the report the truestat_finding series were drawn from: the interval, else a minute (0: none ended yet)");
	sample(x, bare("truestat_findings_window_seconds"), fs ? fs->span_s : 0,
	       TS_EXPO_G17);
	help(x, "truestat_finding", "gauge",
	     "1 for each finding truestat stated over the last window (doc/diagnosis.md), by severity: high, medium, low, cannot_tell");
	for (i = 0; fs && i < fs->n; i++) {
		f = &fs->f[i];
		sample(x,
		       finding_series("truestat_finding", f, "severity",
				      ts_severity_name(f->severity)),
		       1, TS_EXPO_U64);
	}
	help(x, "truestat_finding_exact", "gauge",
	     "1 when every figure a finding rests on was exact, 0 when its sentence says they were estimates");
	for (i = 0; fs && i < fs->n; i++)
		sample(x,
		       finding_series("truestat_finding_exact", &fs->f[i],
				      NULL, NULL),
		       fs->f[i].exact, TS_EXPO_U64);
	help(x, "truestat_finding_figure", "gauge",
	     "The figures a finding rests on, by name; the name says the unit (doc/diagnosis.md)");
	for (i = 0; fs && i < fs->n; i++)
		for (k = 0; k < fs->f[i].nfigures; k++)
			sample(x,
			       finding_series("truestat_finding_figure",
					      &fs->f[i], "figure",
					      fs->f[i].figure[k].name),
			       fs->f[i].figure[k].value, TS_EXPO_G17);
}

/* Which truestat serves the metrics, on which kernel: always 1. */
static void build_info(const struct ts_expo *x, const struct ts_prom *p)
{
	struct ts_expo_series s = {
		.name = "truestat_build_info", .n = 3,
		.l = { { "version", p->version ?: "unknown" },
		       { "commit", p->commit ?: "unknown" },
		       { "kernel", p->kernel ?: "unknown" } },
	};

	help(x, "truestat_build_info", "gauge",
	     "1; its labels: truestat's version and commit, the running kernel's release (uname -r)");
	sample(x, s, 1, TS_EXPO_U64);
}

enum prog_figure { PROG_SECONDS, PROG_RUNS };

static void per_prog(const struct ts_expo *x, const struct ts_prom *p,
		     const char *name, const char *text, enum prog_figure k)
{
	const struct ts_prog_stat *g;
	int i;

	help(x, name, "counter", text);
	for (i = 0; i < p->nprogs; i++) {
		g = &p->progs[i];
		if (k == PROG_SECONDS) /* ns: exact with 9 decimals */
			sample(x, with(bare(name), "program", g->name),
			       g->run_ns / 1e9, TS_EXPO_F9);
		else
			sample(x, with(bare(name), "program", g->name),
			       g->runs, TS_EXPO_U64);
	}
}

/*
 * What truestat's own programs cost, as the kernel counts it while
 * kernel.bpf_stats_enabled is 1: said so, and counters only once the
 * kernel counted some (never zeros as if measured).
 */
static void bpf_cost(const struct ts_expo *x, const struct ts_prom *p)
{
	bool counted = false;
	int i;

	help(x, "truestat_bpf_stats_enabled", "gauge",
	     "1 while the kernel counts the run time of BPF programs (bpf_stats: kernel.bpf_stats_enabled, or a BPF_ENABLE_STATS descriptor held), 0 when it does not");
	sample(x, bare("truestat_bpf_stats_enabled"), p->bpf_stats,
	       TS_EXPO_U64);
	for (i = 0; i < p->nprogs; i++)
		counted |= p->progs[i].runs || p->progs[i].run_ns;
	if (!counted)
		return;
	per_prog(x, p, "truestat_bpf_run_seconds_total",
		 "Time truestat's BPF program ran, counted by the kernel while bpf_stats is on (not the trampoline's own cost)",
		 PROG_SECONDS);
	per_prog(x, p, "truestat_bpf_runs_total",
		 "Runs of truestat's BPF program, counted by the kernel while bpf_stats is on",
		 PROG_RUNS);
}

static int render(struct ts_prom *p, const struct ts_report *r,
		  const struct ts_expo *x)
{
	size_t k;

	if (ts_prom_hold(p, r))
		return -1;
	build_info(x, p);
	per_op_counter(x, r, p, "truestat_requests_total",
		       "Requests completed", TS_PROM_IOS);
	per_op_counter(x, r, p, "truestat_bytes_total",
		       "Bytes of the requests completed (size at issue)",
		       TS_PROM_BYTES);
	per_op_counter(x, r, p, "truestat_missed_completions_total",
		       "Requests completed without truestat seeing it (not in requests)",
		       TS_PROM_MISSED);
	histograms(x, p, r, QUEUE_HIST, "truestat_queue_seconds",
		   "Q->D: bio entered the block layer to request issued (none on a bio-based device)");
	histograms(x, p, r, SERVICE_HIST, "truestat_service_seconds",
		   "D->C: request issued to the driver to completed; Q->C on a bio-based device");
	histograms(x, p, r, TOTAL_HIST, "truestat_total_time_seconds",
		   "Q->C: bio entered the block layer to completed");
	histograms(x, p, r, LAYER_HIST, "truestat_layer_seconds",
		   "Stacked bio-based device: time of its bios mapped one-to-one onto a member bio in the layer itself (Q->C minus the member bio's Q->C)");
	PER_DEV(x, r, "truestat_device_inflight",
		"Requests inside the device now (bios in the layer on a bio-based device)",
		d->in_device_now);
	if (!r->light) /* --light: the OS queue is not followed */
		PER_DEV_IF(x, r, "truestat_os_queued",
			   "Bios and requests waiting in the OS now",
			   !d->bio_layer, d->in_os_now);
	concurrency_bounds(x, p, r);
	per_dev_counter(x, r, p, "truestat_device_inflight_seconds_total",
			"Integral of the in-device depth over time: its rate is the mean concurrency"
			MONOTONIC, TS_PROM_INFLIGHT_S, false);
	if (!r->light)
		per_dev_counter(x, r, p, "truestat_os_queued_seconds_total",
				"Integral of the OS queue depth over time: its rate is the mean OS queue depth"
				MONOTONIC, TS_PROM_OS_QUEUED_S, true);
	per_dev_counter(x, r, p, "truestat_device_busy_seconds_total",
			"Time with at least one request issued to the device and not completed: its rate is BUSY% / 100 (iostat's %util also counts time waiting in the OS)"
			MONOTONIC, TS_PROM_BUSY_S, false);
	for (k = 0; k < sizeof(depth_series) / sizeof(depth_series[0]); k++)
		per_depth_counter(x, r, p, &depth_series[k]);
	sync_counters(x, r);
	sync_histogram(x, p, r);
	by_counters(x, p, r);
	findings(x, p->findings, p->findings_windows);
	events(x, r, p);
	bpf_cost(x, p);
	help(x, "truestat_lost_events_total", "counter",
	     "Events lost to BPF recursion (recursion_misses)");
	sample(x, bare("truestat_lost_events_total"), p->lost_events,
	       TS_EXPO_G17);
	return 0;
}


/*
 * Whether row @i of @r is of a disk that went: a dev_t is one disk's at a
 * time, and another row has it with a later claim. A new disk that took the
 * name on another queue id leaves the old one's slot in the report (until
 * that id is taken), and its series would repeat the new disk's labels.
 */
static bool superseded(const struct ts_report *r, int i)
{
	const struct ts_dev_report *d = &r->dev[i];
	int j;

	for (j = 0; j < r->ndev; j++)
		if (r->dev[j].major == d->major && r->dev[j].minor == d->minor &&
		    r->dev[j].claimed_ns > d->claimed_ns)
			return true;
	return false;
}

/*
 * @r without the rows of disks that went: @r itself when it has none, else
 * *@copy (to free); NULL: out of memory.
 */
static const struct ts_report *present(const struct ts_report *r,
				       struct ts_report **copy)
{
	int i;

	*copy = NULL;
	for (i = 0; i < r->ndev && !superseded(r, i); i++)
		;
	if (i == r->ndev)
		return r;
	*copy = malloc(sizeof(**copy));
	if (!*copy)
		return NULL;
	memcpy(*copy, r, offsetof(struct ts_report, dev));
	(*copy)->ndev = 0;
	for (i = 0; i < r->ndev; i++)
		if (!superseded(r, i))
			(*copy)->dev[(*copy)->ndev++] = r->dev[i];
	return *copy;
}

int ts_prom_render_to(struct ts_prom *p, const struct ts_report *r,
		      const struct ts_expo *x)
{
	struct ts_report *copy;
	const struct ts_report *shown = present(r, &copy);
	int err = shown ? render(p, shown, x) : -1;

	free(copy);
	return err;
}
