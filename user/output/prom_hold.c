// SPDX-License-Identifier: GPL-2.0
/*
 * What the exporter printed, scrape to scrape: each disk's window of the
 * depth since the last scrape, and its counters held so that none goes
 * down (struct ts_prom_dev).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"
#include "prom_parts.h"

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
const struct ts_prom_window *ts_prom_window_of(const struct ts_prom *p,
						const struct ts_dev_report *d)
{
	const struct ts_prom_window *w = &p->win[d->qid % TS_MAX_DEVS];

	return w->shown && w->claimed_ns == d->claimed_ns ? w : NULL;
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
int ts_prom_hold(struct ts_prom *p, const struct ts_report *r)
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
