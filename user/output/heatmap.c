// SPDX-License-Identifier: GPL-2.0
/*
 * --heatmap: one column per interval report, one row per quarter of a power
 * of two of latency, one panel per disk, direction and kind, that
 * heatmap_svg.c writes at exit as a self-contained SVG. Memory is bounded: a panel's
 * column keeps only the rows between its lowest and highest non-empty one,
 * and at most max_cols columns are kept: when they are full, neighbours are
 * merged pairwise and each column holds twice as many intervals from then on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap_internal.h"

int ts_hm_row(__u64 ns)
{
	unsigned int e;

	if (ns < 4)
		return (int)ns;
	e = ts_log2(ns);
	if (e > TS_HIST_MAX_EXP)
		return TS_HM_ROWS - 1;
	return (int)(4 * (e - 1) + ((ns >> (e - 2)) - 4));
}

__u64 ts_hm_row_lower(int r)
{
	if (r < 4)
		return r;
	if (r >= TS_HM_ROWS - 1)
		return 1ULL << (TS_HIST_MAX_EXP + 1);
	return (__u64)(4 + r % 4) << (r / 4 - 1);
}

__u64 ts_hm_row_upper(int r)
{
	return r >= TS_HM_ROWS - 1 ? UINT64_MAX : ts_hm_row_lower(r + 1);
}

void ts_hm_fold(const __u64 *fine, __u64 *rows)
{
	int b;

	memset(rows, 0, TS_HM_ROWS * sizeof(*rows));
	for (b = 0; b < TS_HIST_SLOTS; b++)
		rows[ts_hm_row(ts_hist_lower(b))] += fine[b];
}

struct ts_heatmap *ts_heatmap_new(double interval_s, int max_cols,
				  time_t start)
{
	struct ts_heatmap *h;

	if (max_cols < 2 || max_cols % 2 || !(interval_s > 0))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->interval_s = interval_s;
	h->max_cols = max_cols;
	h->start = start;
	h->per_col = 1;
	return h;
}

void ts_heatmap_free(struct ts_heatmap *h)
{
	int i, k;

	if (!h)
		return;
	for (i = 0; i < h->npanels; i++) {
		for (k = 0; k < h->p[i].cap; k++)
			free(h->p[i].cols[k].c);
		free(h->p[i].cols);
	}
	free(h->p);
	free(h);
}

int ts_heatmap_per_col(const struct ts_heatmap *h)
{
	return h->per_col;
}

int ts_heatmap_ncols(const struct ts_heatmap *h)
{
	return h->ncols;
}

/* @col += @rows[lo .. hi - 1]; -1 when out of memory. */
static int col_add(struct hm_col *col, const __u64 *rows, int lo, int hi)
{
	int nlo = lo, nhi = hi, i;
	__u64 *c;

	if (col->n) {
		nlo = col->lo < lo ? col->lo : lo;
		nhi = col->lo + col->n > hi ? col->lo + col->n : hi;
	}
	if (nlo != col->lo || nhi - nlo != col->n) {
		c = calloc(nhi - nlo, sizeof(*c));
		if (!c)
			return -1;
		for (i = 0; i < col->n; i++)
			c[col->lo + i - nlo] = col->c[i];
		free(col->c);
		col->c = c;
		col->lo = nlo;
		col->n = nhi - nlo;
	}
	for (i = lo; i < hi; i++)
		col->c[i - col->lo] += rows[i];
	return 0;
}

/* Merges columns 2i and 2i + 1 into column i, for every panel. */
static int fold_columns(struct ts_heatmap *h)
{
	struct hm_col *a, *b;
	int i, k;

	for (i = 0; i < h->npanels; i++) {
		struct hm_panel *p = &h->p[i];

		for (k = 0; k < h->ncols / 2; k++) {
			a = &p->cols[2 * k];
			b = &p->cols[2 * k + 1];
			if (b->n && col_add(a, b->c - b->lo, b->lo, b->lo + b->n))
				return -1;
			free(b->c);
			memset(b, 0, sizeof(*b));
			if (k != 2 * k) {
				p->cols[k] = *a;
				memset(a, 0, sizeof(*a));
			}
		}
	}
	h->ncols /= 2;
	h->per_col *= 2;
	return 0;
}

static struct hm_panel *panel(struct ts_heatmap *h,
			      const struct ts_dev_report *d, int op, int kind)
{
	struct hm_panel *p;
	int i;

	for (i = 0; i < h->npanels; i++) {
		p = &h->p[i];
		if (p->major == d->major && p->minor == d->minor &&
		    p->op == op && p->kind == kind)
			return p;
	}
	if (h->npanels == HM_MAX_PANELS) {
		h->dropped++;
		return NULL;
	}
	if (h->npanels == h->cap_panels) {
		int cap = h->cap_panels ? 2 * h->cap_panels : 8;

		p = realloc(h->p, cap * sizeof(*p));
		if (!p)
			return NULL;
		h->p = p;
		h->cap_panels = cap;
	}
	p = &h->p[h->npanels++];
	memset(p, 0, sizeof(*p));
	snprintf(p->dev, sizeof(p->dev), "%s", d->name);
	p->major = d->major;
	p->minor = d->minor;
	p->op = op;
	p->kind = kind;
	p->bio_layer = d->bio_layer;
	return p;
}

static int panel_add(struct ts_heatmap *h, struct hm_panel *p,
		     const __u64 *rows, int lo, int hi)
{
	int col = h->ncols - 1, i;

	if (p->cap <= col) {
		int cap = p->cap ? p->cap : 16;
		struct hm_col *c;

		while (cap <= col)
			cap *= 2;
		if (cap > h->max_cols)
			cap = h->max_cols;
		c = realloc(p->cols, cap * sizeof(*c));
		if (!c)
			return -1;
		memset(c + p->cap, 0, (cap - p->cap) * sizeof(*c));
		p->cols = c;
		p->cap = cap;
	}
	for (i = lo; i < hi; i++)
		p->total += rows[i];
	return col_add(&p->cols[col], rows, lo, hi);
}

/* The first and one past the last non-empty row of @rows; -1 when none. */
static int row_span(const __u64 *rows, int *lo, int *hi)
{
	for (*lo = 0; *lo < TS_HM_ROWS && !rows[*lo]; (*lo)++)
		;
	if (*lo == TS_HM_ROWS)
		return -1;
	for (*hi = TS_HM_ROWS; !rows[*hi - 1]; (*hi)--)
		;
	return 0;
}

/* Adds histogram @fine of @d to its panel (op, kind); none if it is empty. */
static int add_hist(struct ts_heatmap *h, const struct ts_dev_report *d,
		    int op, int kind, const __u64 *fine)
{
	__u64 rows[TS_HM_ROWS];
	struct hm_panel *p;
	int lo, hi;

	ts_hm_fold(fine, rows);
	if (row_span(rows, &lo, &hi))
		return 0;
	p = panel(h, d, op, kind);
	return p ? panel_add(h, p, rows, lo, hi) : 0;
}

/* Adds the service and queue histograms of @d, and its durable writes'. */
static int add_device(struct ts_heatmap *h, const struct ts_dev_report *d)
{
	int op;

	for (op = 0; op < TS_NR_OPS; op++)
		if (add_hist(h, d, op, KIND_SERVICE, d->hist[op].service) ||
		    add_hist(h, d, op, KIND_QUEUE, d->hist[op].queue))
			return -1;
	return add_hist(h, d, TS_OP_WRITE, KIND_SYNC,
			d->hist[TS_HIST_SYNC].total);
}

int ts_heatmap_add(struct ts_heatmap *h, const struct ts_report *r)
{
	int i;

	if (!h->ncols || h->in_last == h->per_col) {
		if (h->ncols == h->max_cols && fold_columns(h))
			return -1;
		h->ncols++;
		h->in_last = 0;
	}
	h->in_last++;
	h->intervals++;
	for (i = 0; i < r->ndev; i++) {
		const struct ts_dev_report *d = &r->dev[i];

		if (d->active && d->hist && add_device(h, d))
			return -1;
	}
	return 0;
}
