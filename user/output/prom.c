// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"

static void help(FILE *f, const char *name, const char *type, const char *text)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

/*
 * A label's value as the text format escapes it: a backslash, a double
 * quote and a line feed (a device-mapper name under -N may hold any).
 */
static void label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void labels(FILE *f, const struct ts_dev_report *d, const char *op)
{
	fputs("{device=\"", f);
	label_value(f, d->name);
	fprintf(f, "\",layer=\"%s\"", d->bio_layer ? "bio" : "request");
	if (op)
		fprintf(f, ",op=\"%s\"", op);
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

static void bucket(FILE *f, const char *name, const struct ts_dev_report *d,
		   const char *op, const char *le, __u64 cum)
{
	fprintf(f, "%s_bucket", name);
	labels(f, d, op);
	fprintf(f, ",le=\"%s\"} %llu\n", le, (unsigned long long)cum);
}

/* The protobuf exposition's native form of series @name @d @op. */
static void note_native(const struct ts_prom *p, const char *name,
			const struct ts_dev_report *d, const char *op,
			const __u64 *counts)
{
	struct ts_prom_natives *n = p->natives;
	struct ts_prom_native *e;
	size_t len;
	FILE *f;

	if (!n)
		return;
	if (n->n == n->cap) {
		e = realloc(n->e, (n->cap * 2 + 16) * sizeof(*e));
		if (!e) {
			n->failed = true;
			return;
		}
		n->e = e;
		n->cap = n->cap * 2 + 16;
	}
	e = &n->e[n->n];
	e->counts = counts;
	if (!(f = open_memstream(&e->key, &len))) {
		n->failed = true;
		return;
	}
	fputs(name, f);
	labels(f, d, op);
	fputc('}', f);
	if (fclose(f))
		n->failed = true;
	else
		n->n++;
}

/* One histogram series: cumulative counts at the exported edges. */
static void histogram(FILE *f, const struct ts_prom *p, const char *name,
		      const struct ts_dev_report *d, const char *op,
		      const __u64 *counts, double sum)
{
	__u64 edges[TS_PROM_FULL_EDGES], cum = 0;
	int n = ts_prom_edges(p->full_buckets, edges), b = 0, i;
	char le[32];

	note_native(p, name, d, op, counts);
	for (i = 0; i < n; i++) {
		/* every fine bucket below the edge */
		for (; b < TS_HIST_SLOTS && ts_hist_lower(b) < edges[i]; b++)
			cum += counts[b];
		snprintf(le, sizeof(le), "%.12g", edges[i] / 1e9);
		bucket(f, name, d, op, le, cum);
	}
	for (; b < TS_HIST_SLOTS; b++)
		cum += counts[b];
	bucket(f, name, d, op, "+Inf", cum);
	fprintf(f, "%s_sum", name);
	labels(f, d, op);
	fprintf(f, "} %.9f\n%s_count", sum, name);
	labels(f, d, op);
	fprintf(f, "} %llu\n", (unsigned long long)cum);
}

/* A gauge per device, of those for which @cond holds (d: the device). */
#define PER_DEV_KIND(f, r, name, kind, text, cond, expr)                      \
	do {                                                                 \
		int i_;                                                      \
		help(f, name, kind, text);                                   \
		for (i_ = 0; i_ < (r)->ndev; i_++) {                         \
			const struct ts_dev_report *d = &(r)->dev[i_];       \
			if (!(cond))                                         \
				continue;                                    \
			fputs(name, f);                                      \
			labels(f, d, NULL);                                  \
			fprintf(f, "} %.17g\n", (double)(expr));             \
		}                                                            \
	} while (0)

#define PER_DEV_IF(f, r, name, text, cond, expr)                             \
	PER_DEV_KIND(f, r, name, "gauge", text, cond, expr)
#define PER_DEV(f, r, name, text, expr) PER_DEV_IF(f, r, name, text, 1, expr)

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

/* A label value: \, " and newlines escaped (cgroup names may hold them). */
enum by_figure { BY_IOS, BY_BYTES, BY_TOTAL_S };

static double by_figure(const struct ts_who_stats *s, enum by_figure k)
{
	return k == BY_IOS ? s->ios : k == BY_BYTES ? s->bytes : s->total_ns / 1e9;
}

/* One --by series: each named submitter, then "other" per device and op. */
static void by_series(FILE *f, struct ts_prom *p, const struct ts_report *r,
		      const char *name, const char *text, enum by_figure k)
{
	const struct ts_who_span *w = r->who;
	const char *label = w->by == TS_BY_CGROUP ? "cgroup" : "process";
	double other[TS_MAX_DEVS][TS_NR_OPS] = { { 0 } };
	bool any[TS_MAX_DEVS][TS_NR_OPS] = { { false } };
	const struct ts_dev_report *d;
	char buf[300];
	int i, op;

	help(f, name, "counter", text);
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
		fputs(name, f);
		labels(f, d, ts_op_names[e->key.op]);
		fprintf(f, ",%s=\"", label);
		label_value(f, ts_who_name(w, e, buf, sizeof(buf)));
		fprintf(f, "\"} %.17g\n", by_figure(&e->s, k));
	}
	for (i = 0; i < r->ndev; i++)
		for (op = 0; op < TS_NR_OPS; op++) {
			if (!any[r->dev[i].qid][op])
				continue;
			fputs(name, f);
			labels(f, &r->dev[i], ts_op_names[op]);
			fprintf(f, ",%s=\"other\"} %.17g\n", label,
				other[r->dev[i].qid][op]);
		}
}

/*
 * --by with --prometheus: per submitter, its requests, bytes and Q->C
 * summed, since the start; the first --top of each device by name, the
 * rest in "other" (cardinality: at most (top + 1) x directions a device).
 */
static void by_counters(FILE *f, struct ts_prom *p, const struct ts_report *r)
{
	if (!r->who)
		return;
	by_series(f, p, r, "truestat_by_requests_total",
		  "Requests completed, by their submitter (captured at Q)", BY_IOS);
	by_series(f, p, r, "truestat_by_bytes_total",
		  "Their bytes", BY_BYTES);
	by_series(f, p, r, "truestat_by_total_seconds_total",
		  "Their Q->C summed", BY_TOTAL_S);
}

static void sync_counters(FILE *f, const struct ts_report *r)
{
	if (r->light)
		return;
	PER_DEV_KIND(f, r, "truestat_sync_requests_total", "counter",
		     "Durable writes completed (REQ_PREFLUSH or REQ_FUA: fsync, O_DSYNC, journal commits)",
		     1, d->sync.ios);
	PER_DEV_KIND(f, r, "truestat_sync_seconds_total", "counter",
		     "Their time from Q to the end of their flush sequence, summed",
		     1, d->sync.ios ? d->sync.ios * d->sync.total_ms / 1e3 : 0);
	PER_DEV_KIND(f, r, "truestat_sync_bytes_total", "counter",
		     "Their data (an fsync's flush has none)", 1, d->sync.bytes);
	PER_DEV_KIND(f, r, "truestat_sync_missed_total", "counter",
		     "Durable writes whose end went unseen (not in sync_requests)",
		     1, d->sync.missed);
}

/* Their time as a histogram, on the disks that have histograms. */
static void sync_histogram(FILE *f, const struct ts_prom *p,
			   const struct ts_report *r)
{
	static const char name[] = "truestat_sync_time_seconds";
	int i;

	if (r->light)
		return;
	help(f, name, "histogram",
	     "Durable writes: Q to the end of their flush sequence (disks with histograms)");
	for (i = 0; i < r->ndev; i++) {
		const struct ts_dev_report *d = &r->dev[i];

		if (d->hist && d->sync.ios)
			histogram(f, p, name, d, "write",
				  d->hist[TS_HIST_SYNC].total,
				  sum_s(d->sync.total_ns));
	}
}

/* A counter per device and direction: total[@first + op]. */
static void per_op_counter(FILE *f, const struct ts_report *r,
			   const struct ts_prom *p, const char *name,
			   const char *text, int first)
{
	int i, op;

	help(f, name, "counter", text);
	for (i = 0; i < r->ndev; i++)
		for (op = 0; op < TS_NR_OPS; op++) {
			const struct ts_op_figures *o = &r->dev[i].op[op];

			if (!o->ios && !o->missed)
				continue;
			fputs(name, f);
			labels(f, &r->dev[i], ts_op_names[op]);
			fprintf(f, "} %.17g\n", p->dev[i].total[first + op]);
		}
}

/*
 * A counter per device: total[@which]; @os_queue: only of devices with an
 * OS queue (a bio-based one has none).
 */
static void per_dev_counter(FILE *f, const struct ts_report *r,
			    const struct ts_prom *p, const char *name,
			    const char *text, int which, bool os_queue)
{
	int i;

	help(f, name, "counter", text);
	for (i = 0; i < r->ndev; i++) {
		if (os_queue && r->dev[i].bio_layer)
			continue;
		fputs(name, f);
		labels(f, &r->dev[i], NULL);
		fprintf(f, "} %.17g\n", p->dev[i].total[which]);
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

static void histograms(FILE *f, const struct ts_prom *p,
		       const struct ts_report *r, enum hist_kind kind,
		       const char *name, const char *text)
{
	const __u64 *counts;
	double sum;
	int i, op;

	help(f, name, "histogram", text);
	for (i = 0; i < r->ndev; i++) {
		const struct ts_dev_report *d = &r->dev[i];

		if (!d->hist)
			continue;
		for (op = 0; op < TS_NR_OPS; op++) {
			if (!d->op[op].ios)
				continue;
			counts = hist_of(d, op, kind, &sum);
			if (counts)
				histogram(f, p, name, d, ts_op_names[op],
					  counts, sum);
		}
	}
}

static void events(FILE *f, const struct ts_report *r,
		   const struct ts_prom *p)
{
	int i, e;

	help(f, "truestat_events_total", "counter",
	     "Things that went differently from Q->D->C (README: events), once they happened");
	for (i = 0; i < r->ndev; i++)
		for (e = 0; e < TS_NR_EVENTS; e++) {
			if (!p->dev[i].total[TS_PROM_EVENTS + e])
				continue; /* 22 a disk, most never */
			fputs("truestat_events_total", f);
			labels(f, &r->dev[i], NULL);
			fprintf(f, ",event=\"%s\"} %.17g\n", ts_event_names[e],
				p->dev[i].total[TS_PROM_EVENTS + e]);
		}
}

/*
 * The window of disk @i of snapshot @s, restarted when another disk
 * claimed its slot; NULL for a disk not traced.
 */
static struct ts_prom_window *window_at(struct ts_prom *p,
					const struct ts_snapshot *s, int i)
{
	const struct ts_dev_snap *d = &s->dev[i];
	struct ts_prom_window *w = &p->win[d->qid % TS_MAX_DEVS];

	if (d->untraced)
		return NULL;
	if (w->claimed_ns != d->claimed_ns) {
		memset(w, 0, sizeof(*w));
		w->claimed_ns = d->claimed_ns;
	}
	return w;
}

void ts_prom_span(struct ts_prom *p, const struct ts_snapshot *prev,
		  const struct ts_snapshot *cur)
{
	const struct ts_depth_range *span;
	struct ts_prom_window *w;
	__u64 from;
	int i;

	for (i = 0; i < cur->ndev; i++) {
		if (!(w = window_at(p, cur, i)))
			continue;
		span = &cur->dev[i].device_span;
		if (w->ended)
			ts_depth_range_join(&w->range, span);
		else
			w->range = *span;
		w->ended = true;
		/* from the claim when the disk came in the span */
		from = prev->mono_ns > w->claimed_ns ? prev->mono_ns : w->claimed_ns;
		if (!span->exact && cur->mono_ns > from)
			w->inexact_s += (cur->mono_ns - from) / 1e9;
	}
}

void ts_prom_window(struct ts_prom *p, const struct ts_snapshot *now)
{
	struct ts_prom_window *w;
	int i;

	for (i = 0; i < now->ndev; i++) {
		if (!(w = window_at(p, now, i)))
			continue;
		w->seen = now->dev[i].device_span;
		if (w->ended)
			ts_depth_range_join(&w->seen, &w->range);
		w->shown = true;
		w->ended = false;
	}
}

/* @d's window at this scrape, NULL: none taken (ts_prom_window). */
static const struct ts_prom_window *window_of(const struct ts_prom *p,
					      const struct ts_dev_report *d)
{
	const struct ts_prom_window *w = &p->win[d->qid % TS_MAX_DEVS];

	return w->shown && w->claimed_ns == d->claimed_ns ? w : NULL;
}

/*
 * The in-device depth since the previous scrape: its most requests at
 * once, and whether the depth counter followed every request; the time
 * it did not, over the run (README: exact or flagged). And the run's
 * deepest, between two bounds.
 */
static void concurrency_bounds(FILE *f, const struct ts_prom *p,
			       const struct ts_report *r)
{
	PER_DEV_IF(f, r, "truestat_device_concurrency_window_exact",
		   "1: the in-device depth followed every request since the previous scrape (from the start of the span under way then: a second, or the interval); 0: the window's figures are estimates",
		   window_of(p, d), window_of(p, d)->seen.exact);
	PER_DEV_IF(f, r, "truestat_device_concurrency_window_max",
		   "Most requests inside the device at once in that window; an upper bound when not exact",
		   window_of(p, d), window_of(p, d)->seen.hi);
	PER_DEV_IF(f, r, "truestat_device_concurrency_window_max_min",
		   "The window's most requests inside the device at once is at least this (the max when exact)",
		   window_of(p, d), window_of(p, d)->seen.lo);
	PER_DEV_KIND(f, r, "truestat_device_concurrency_inexact_seconds_total",
		     "counter",
		     "Time in spans (a second, or the interval) whose in-device depth did not follow every request, counted as each ends",
		     window_of(p, d), window_of(p, d)->inexact_s);
	PER_DEV(f, r, "truestat_device_concurrency_max",
		"Most requests inside the device at once over the run; an upper bound unless it equals truestat_device_concurrency_max_min",
		d->device.max);
	PER_DEV(f, r, "truestat_device_concurrency_max_min",
		"The run's most requests inside the device at once is at least this",
		d->device.max_min);
}

/* Disk @d's counters over the run so far, as computed now. */
static void totals_now(const struct ts_dev_report *d, double span, double *t)
{
	int op, e;

	for (op = 0; op < TS_NR_OPS; op++) {
		t[TS_PROM_IOS + op] = d->op[op].ios;
		t[TS_PROM_BYTES + op] = d->op[op].bytes;
		t[TS_PROM_MISSED + op] = d->op[op].missed;
	}
	t[TS_PROM_INFLIGHT_S] = d->device.mean * span;
	t[TS_PROM_OS_QUEUED_S] = d->os.mean * span;
	t[TS_PROM_BUSY_S] = d->device.busy_share * span;
	for (e = 0; e < TS_NR_EVENTS; e++)
		t[TS_PROM_EVENTS + e] = d->events[e];
}

/*
 * Class @c of @d's curve into @x: the count's rise since the last scrape,
 * its service time the rise's mean from the buckets. The run's counts are
 * 64 bits (ts_depth_widen), and a new disk in the slot starts anew
 * (hold): one that went down all the same holds until it catches up.
 * @first: nothing printed yet.
 */
static void hold_class(struct ts_prom_depth *x, const struct ts_curve_row *row,
		       bool first)
{
	__u64 from = first ? 0 : x->seen;
	__u64 rise = row->completions > from ? row->completions - from : 0;
	double now_s = row->completions ? row->service_ms / 1e3 * row->completions : 0;
	double mean_s = rise ? (now_s - (first ? 0 : x->seen_s)) / rise : NAN;

	if (rise && isfinite(mean_s) && mean_s > 0)
		x->service_s += mean_s * rise;
	x->issued += rise;
	if (rise || first) {
		x->seen = row->completions;
		x->seen_s = now_s;
	}
	x->time_s = fmax(x->time_s, row->time_s);
}

static void hold_depth(struct ts_prom_dev *next, const struct ts_dev_report *d,
		       bool first)
{
	int c;

	if (!d->has_curve)
		return;
	for (c = 0; c < TS_DEPTH_CLASSES; c++)
		hold_class(&next->depth[c], &d->curve.row[c], first);
}

static bool same_disk(const struct ts_prom_dev *x,
		      const struct ts_dev_report *d)
{
	return !strcmp(x->name, d->name) && x->major == d->major &&
	       x->minor == d->minor && x->claimed_ns == d->claimed_ns;
}

/* What was printed last of disk @d, NULL: nothing (or of another disk). */
static const struct ts_prom_dev *printed(const struct ts_prom *p,
					 const struct ts_dev_report *d)
{
	int i;

	for (i = 0; i < p->ndev; i++)
		if (same_disk(&p->dev[i], d))
			return &p->dev[i];
	return NULL;
}

/*
 * @p->dev[i] becomes what to print for @r->dev[i]: each counter the larger
 * of its total now and what was printed last of the same disk (fmax also
 * drops a NaN).
 */
static int hold(struct ts_prom *p, const struct ts_report *r)
{
	struct ts_prom_dev *next = calloc(r->ndev ?: 1, sizeof(*next));
	double now[TS_PROM_NR];
	int i, k;

	if (!next)
		return -1;
	for (i = 0; i < r->ndev; i++) {
		const struct ts_prom_dev *last = printed(p, &r->dev[i]);

		if (last)
			next[i] = *last;
		snprintf(next[i].name, sizeof(next[i].name), "%s", r->dev[i].name);
		next[i].major = r->dev[i].major;
		next[i].minor = r->dev[i].minor;
		next[i].claimed_ns = r->dev[i].claimed_ns;
		hold_depth(&next[i], &r->dev[i], !last);
		totals_now(&r->dev[i], r->span_s, now);
		for (k = 0; k < TS_PROM_NR; k++)
			next[i].total[k] = fmax(next[i].total[k], now[k]);
	}
	memcpy(p->dev, next, r->ndev * sizeof(*next));
	p->ndev = r->ndev;
	p->lost_events = fmax(p->lost_events, r->lost_events);
	free(next);
	return 0;
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
static void per_depth_counter(FILE *f, const struct ts_report *r,
			      const struct ts_prom *p,
			      const struct depth_series *s)
{
	const struct ts_prom_depth *x;
	char buf[32];
	int i, c;

	help(f, s->name, "counter", s->text);
	for (i = 0; i < r->ndev; i++)
		for (c = 0; c < TS_DEPTH_CLASSES; c++) {
			x = &p->dev[i].depth[c];
			if (!depth_label(&r->dev[i], x, c, buf, sizeof(buf)))
				continue;
			fputs(s->name, f);
			labels(f, &r->dev[i], NULL);
			fprintf(f, ",depth=\"%s\"} %.17g\n", buf,
				depth_figure(x, s->figure));
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

/* A finding's labels, with @extra ("name" and its value) when not NULL. */
static void finding_labels(FILE *f, const struct ts_finding *x,
			   const char *extra, const char *value)
{
	fputs("{device=\"", f);
	label_value(f, x->device);
	fprintf(f, "\",op=\"%s\",finding=\"%s\"", x->op, x->id);
	if (extra)
		fprintf(f, ",%s=\"%s\"", extra, value);
	fprintf(f, "}");
}

/*
 * What truestat concluded over the last window (doc/diagnosis.md): a
 * series per finding stated, gone when it no longer is, as Prometheus'
 * own ALERTS series; declared also when none is. Exactness is a series of
 * its own: as a label, each change would start a new series.
 */
static void findings(FILE *f, const struct ts_findings *fs, __u64 windows)
{
	const struct ts_finding *x;
	int i, k;

	help(f, "truestat_findings_windows_total", "counter",
	     "Windows truestat drew findings from so far: the last one's number");
	fprintf(f, "truestat_findings_windows_total %llu\n",
		(unsigned long long)windows);
	help(f, "truestat_findings_window_seconds", "gauge",
	     "Span of the report the truestat_finding series were drawn from: the interval, else a minute (0: none ended yet)");
	fprintf(f, "truestat_findings_window_seconds %.17g\n",
		fs ? fs->span_s : 0);
	help(f, "truestat_finding", "gauge",
	     "1 for each finding truestat stated over the last window (doc/diagnosis.md), by severity: high, medium, low, cannot_tell");
	for (i = 0; fs && i < fs->n; i++) {
		x = &fs->f[i];
		fprintf(f, "truestat_finding");
		finding_labels(f, x, "severity", ts_severity_name(x->severity));
		fprintf(f, " 1\n");
	}
	help(f, "truestat_finding_exact", "gauge",
	     "1 when every figure a finding rests on was exact, 0 when its sentence says they were estimates");
	for (i = 0; fs && i < fs->n; i++) {
		fprintf(f, "truestat_finding_exact");
		finding_labels(f, &fs->f[i], NULL, NULL);
		fprintf(f, " %d\n", fs->f[i].exact);
	}
	help(f, "truestat_finding_figure", "gauge",
	     "The figures a finding rests on, by name; the name says the unit (doc/diagnosis.md)");
	for (i = 0; fs && i < fs->n; i++)
		for (k = 0; k < fs->f[i].nfigures; k++) {
			fprintf(f, "truestat_finding_figure");
			finding_labels(f, &fs->f[i], "figure",
				       fs->f[i].figure[k].name);
			fprintf(f, " %.17g\n", fs->f[i].figure[k].value);
		}
}

/* Which truestat serves the metrics, on which kernel: always 1. */
static void build_info(FILE *f, const struct ts_prom *p)
{
	help(f, "truestat_build_info", "gauge",
	     "1; its labels: truestat's version and commit, the running kernel's release (uname -r)");
	fputs("truestat_build_info{version=\"", f);
	label_value(f, p->version ?: "unknown");
	fputs("\",commit=\"", f);
	label_value(f, p->commit ?: "unknown");
	fputs("\",kernel=\"", f);
	label_value(f, p->kernel ?: "unknown");
	fputs("\"} 1\n", f);
}

enum prog_figure { PROG_SECONDS, PROG_RUNS };

static void per_prog(FILE *f, const struct ts_prom *p, const char *name,
		     const char *text, enum prog_figure k)
{
	const struct ts_prog_stat *x;
	int i;

	help(f, name, "counter", text);
	for (i = 0; i < p->nprogs; i++) {
		x = &p->progs[i];
		if (k == PROG_SECONDS) /* ns: exact with 9 decimals */
			fprintf(f, "%s{program=\"%s\"} %.9f\n", name, x->name,
				x->run_ns / 1e9);
		else
			fprintf(f, "%s{program=\"%s\"} %llu\n", name, x->name,
				(unsigned long long)x->runs);
	}
}

/*
 * What truestat's own programs cost, as the kernel counts it while
 * kernel.bpf_stats_enabled is 1: said so, and counters only once the
 * kernel counted some (never zeros as if measured).
 */
static void bpf_cost(FILE *f, const struct ts_prom *p)
{
	bool counted = false;
	int i;

	help(f, "truestat_bpf_stats_enabled", "gauge",
	     "1 while the kernel counts the run time of BPF programs (bpf_stats: kernel.bpf_stats_enabled, or a BPF_ENABLE_STATS descriptor held), 0 when it does not");
	fprintf(f, "truestat_bpf_stats_enabled %d\n", p->bpf_stats);
	for (i = 0; i < p->nprogs; i++)
		counted |= p->progs[i].runs || p->progs[i].run_ns;
	if (!counted)
		return;
	per_prog(f, p, "truestat_bpf_run_seconds_total",
		 "Time truestat's BPF program ran, counted by the kernel while bpf_stats is on (not the trampoline's own cost)",
		 PROG_SECONDS);
	per_prog(f, p, "truestat_bpf_runs_total",
		 "Runs of truestat's BPF program, counted by the kernel while bpf_stats is on",
		 PROG_RUNS);
}

static char *render(struct ts_prom *p, const struct ts_report *r, size_t *len)
{
	char *buf = NULL;
	size_t k;
	FILE *f;

	if (hold(p, r) || !(f = open_memstream(&buf, len)))
		return NULL;
	build_info(f, p);
	per_op_counter(f, r, p, "truestat_requests_total",
		       "Requests completed", TS_PROM_IOS);
	per_op_counter(f, r, p, "truestat_bytes_total",
		       "Bytes of the requests completed (size at issue)",
		       TS_PROM_BYTES);
	per_op_counter(f, r, p, "truestat_missed_completions_total",
		       "Requests completed without truestat seeing it (not in requests)",
		       TS_PROM_MISSED);
	histograms(f, p, r, QUEUE_HIST, "truestat_queue_seconds",
		   "Q->D: bio entered the block layer to request issued (none on a bio-based device)");
	histograms(f, p, r, SERVICE_HIST, "truestat_service_seconds",
		   "D->C: request issued to the driver to completed; Q->C on a bio-based device");
	histograms(f, p, r, TOTAL_HIST, "truestat_total_time_seconds",
		   "Q->C: bio entered the block layer to completed");
	histograms(f, p, r, LAYER_HIST, "truestat_layer_seconds",
		   "Stacked bio-based device: time of its bios mapped one-to-one onto a member bio in the layer itself (Q->C minus the member bio's Q->C)");
	PER_DEV(f, r, "truestat_device_inflight",
		"Requests inside the device now (bios in the layer on a bio-based device)",
		d->in_device_now);
	if (!r->light) /* --light: the OS queue is not followed */
		PER_DEV_IF(f, r, "truestat_os_queued",
			   "Bios and requests waiting in the OS now",
			   !d->bio_layer, d->in_os_now);
	concurrency_bounds(f, p, r);
	per_dev_counter(f, r, p, "truestat_device_inflight_seconds_total",
			"Integral of the in-device depth over time: its rate is the mean concurrency"
			MONOTONIC, TS_PROM_INFLIGHT_S, false);
	if (!r->light)
		per_dev_counter(f, r, p, "truestat_os_queued_seconds_total",
				"Integral of the OS queue depth over time: its rate is the mean OS queue depth"
				MONOTONIC, TS_PROM_OS_QUEUED_S, true);
	per_dev_counter(f, r, p, "truestat_device_busy_seconds_total",
			"Time with at least one request issued to the device and not completed: its rate is BUSY% / 100 (iostat's %util also counts time waiting in the OS)"
			MONOTONIC, TS_PROM_BUSY_S, false);
	for (k = 0; k < sizeof(depth_series) / sizeof(depth_series[0]); k++)
		per_depth_counter(f, r, p, &depth_series[k]);
	sync_counters(f, r);
	sync_histogram(f, p, r);
	by_counters(f, p, r);
	findings(f, p->findings, p->findings_windows);
	events(f, r, p);
	bpf_cost(f, p);
	help(f, "truestat_lost_events_total", "counter",
	     "Events lost to BPF recursion (recursion_misses)");
	fprintf(f, "truestat_lost_events_total %.17g\n", p->lost_events);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
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

char *ts_prom_render(struct ts_prom *p, const struct ts_report *r, size_t *len)
{
	struct ts_report *copy;
	const struct ts_report *shown = present(r, &copy);
	char *text = shown ? render(p, shown, len) : NULL;

	free(copy);
	return text;
}
