// SPDX-License-Identifier: GPL-2.0
/*
 * --heatmap: one column per interval report, one row per quarter of a power
 * of two of latency, one panel per disk, direction and kind; written at exit
 * as a self-contained SVG. Memory is bounded: a panel's column keeps only
 * the rows between its lowest and highest non-empty one, and at most
 * max_cols columns are kept: when they are full, neighbours are merged
 * pairwise and each column holds twice as many intervals from then on.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"

enum { KIND_SERVICE, KIND_QUEUE, NR_KINDS };

static const char *const kind_names[NR_KINDS] = { "service", "queue" };
static const char *const kind_titles[NR_KINDS] = {
	"service time (D\xe2\x86\x92" "C: issued to completed)",
	"queue time (Q\xe2\x86\x92" "D: queued in the OS to issued)",
};

/* A bio-based device's service panel: it has no D, nor an OS queue. */
static const char layer_title[] =
	"time in its layer (Q\xe2\x86\x92" "C: bio-based, no OS queue)";

/* The rows lo .. lo + n - 1 of one column of one panel. */
struct hm_col {
	unsigned short lo, n;
	__u64 *c;
};

struct hm_panel {
	char dev[64];
	unsigned int major, minor;
	int op, kind;
	bool bio_layer;
	struct hm_col *cols;
	int cap;
	__u64 total;
};

/* Panels beyond this many are counted, not drawn. */
#define HM_MAX_PANELS 1024

struct ts_heatmap {
	double interval_s;
	time_t start;
	int max_cols;
	int ncols;	/* columns in use, the last one maybe not full */
	int per_col;	/* intervals a full column holds */
	int in_last;	/* intervals in the last column */
	long intervals; /* all of them */
	int npanels, cap_panels, dropped;
	struct hm_panel *p;
	FILE *file; /* ts_heatmap_open's */
	const char *path;
};

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

/* ColorBrewer's YlOrRd, without its two palest steps (white shows "none"). */
static const unsigned char scale[][3] = {
	{ 0xfe, 0xe3, 0x91 }, { 0xfe, 0xc4, 0x4f }, { 0xfe, 0x99, 0x29 },
	{ 0xec, 0x70, 0x14 }, { 0xcc, 0x4c, 0x02 }, { 0xe3, 0x1a, 0x1c },
	{ 0xbd, 0x00, 0x26 }, { 0x80, 0x00, 0x26 }, { 0x4a, 0x00, 0x1a },
};
#define NSCALE ((int)(sizeof(scale) / sizeof(scale[0])))

/* Position of @count on the scale: 0 for 1, 1 for @max. */
static double scale_pos(__u64 count, __u64 max)
{
	if (max <= 1)
		return 1.0;
	return log((double)count) / log((double)max);
}

static void scale_colour(double t, char buf[8])
{
	double x, f;
	int i, k, v;

	t = t < 0 ? 0 : t > 1 ? 1 : t;
	x = t * (NSCALE - 1);
	i = (int)x;
	if (i >= NSCALE - 1)
		i = NSCALE - 2;
	f = x - i;
	buf[0] = '#';
	for (k = 0; k < 3; k++) {
		v = (int)lround(scale[i][k] + f * (scale[i + 1][k] - scale[i][k]));
		snprintf(buf + 1 + 2 * k, 3, "%02x", v);
	}
}

int ts_hm_colour(__u64 count, __u64 max, char buf[8])
{
	if (!count) {
		buf[0] = 0;
		return -1;
	}
	scale_colour(scale_pos(count, max), buf);
	return 0;
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

int ts_heatmap_add(struct ts_heatmap *h, const struct ts_report *r)
{
	__u64 rows[TS_HM_ROWS];
	int i, op, kind, lo, hi;

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

		if (!d->active || !d->hist)
			continue;
		for (op = 0; op < TS_NR_OPS; op++) {
			for (kind = 0; kind < NR_KINDS; kind++) {
				struct hm_panel *p;

				ts_hm_fold(kind == KIND_SERVICE ?
						   d->hist[op].service :
						   d->hist[op].queue,
					   rows);
				for (lo = 0; lo < TS_HM_ROWS && !rows[lo]; lo++)
					;
				if (lo == TS_HM_ROWS)
					continue;
				for (hi = TS_HM_ROWS; !rows[hi - 1]; hi--)
					;
				p = panel(h, d, op, kind);
				if (p && panel_add(h, p, rows, lo, hi))
					return -1;
			}
		}
	}
	return 0;
}

/* ---- the SVG ------------------------------------------------------------ */

/* "16.4 us", "1.05 ms", "128 us": three significant digits, no "e+03". */
static void fmt_ns(double ns, char *buf, size_t len)
{
	static const char *const unit[] = { "ns", "\xc2\xb5s", "ms", "s" };
	int u = 0;
	char num[32], *z;

	while (u < 3 && ns >= 999.5) {
		ns /= 1e3;
		u++;
	}
	snprintf(num, sizeof(num), "%.*f", ns < 9.995 ? 2 : ns < 99.95 ? 1 : 0,
		 ns);
	if (strchr(num, '.')) {
		for (z = num + strlen(num) - 1; *z == '0'; z--)
			*z = 0;
		if (*z == '.')
			*z = 0;
	}
	snprintf(buf, len, "%s %s", num, unit[u]);
}

static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s < 0x20)
				fputc('?', f);
			else
				fputc(*s, f);
		}
	}
}

static int cmp_panel(const void *x, const void *y)
{
	const struct hm_panel *a = *(struct hm_panel *const *)x,
			      *b = *(struct hm_panel *const *)y;

	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->op != b->op)
		return a->op - b->op;
	return a->kind - b->kind;
}

/* A step of 1, 2 or 5 times a power of ten giving at most @n ticks over @span. */
static double nice_step(double span, int n)
{
	double s = pow(10, floor(log10(span / n))), m[] = { 1, 2, 5, 10 };
	int i;

	for (i = 0; i < 4; i++)
		if (span / (s * m[i]) <= n)
			return s * m[i];
	return 10 * s;
}

/* Layout, in px. */
#define ML 96	  /* left of the plot: latency labels */
#define PANEL_TOP 44 /* title lines above the plot */
#define PANEL_BOTTOM 52 /* tick labels and the axis label below it */
#define LEGEND_GAP 28
#define LEGEND_W 16
#define MR 110 /* legend labels */
#define HEADER 90
#define PANEL_GAP 16

struct geometry {
	double pw, ppi; /* plot width, px per interval */
	double width;
};

/* The rows a panel shows (whole powers of two) and its busiest cell. */
static void panel_range(const struct ts_heatmap *h, const struct hm_panel *p,
			int *lo, int *hi, __u64 *max)
{
	int rlo = TS_HM_ROWS, rhi = -1, i, r;

	*max = 0;
	for (i = 0; i < h->ncols && i < p->cap; i++) {
		const struct hm_col *c = &p->cols[i];

		for (r = 0; r < c->n; r++) {
			if (!c->c[r])
				continue;
			if (c->lo + r < rlo)
				rlo = c->lo + r;
			if (c->lo + r > rhi)
				rhi = c->lo + r;
			if (c->c[r] > *max)
				*max = c->c[r];
		}
	}
	/* whole powers of two, so that both ends are labelled */
	rlo -= rlo % TS_HM_SUB;
	rhi += TS_HM_SUB - 1 - rhi % TS_HM_SUB;
	if (rhi >= TS_HM_ROWS)
		rhi = TS_HM_ROWS - 1;
	*lo = rlo;
	*hi = rhi;
}

/* Height of a row of a panel of @nrows rows, in px. */
static double row_height(int nrows)
{
	double rh = 320.0 / nrows;

	return rh < 5 ? 5 : rh > 16 ? 16 : rh;
}

static double panel_height(const struct ts_heatmap *h,
			   const struct hm_panel *p)
{
	int lo, hi;
	__u64 max;

	panel_range(h, p, &lo, &hi, &max);
	return PANEL_TOP + (hi - lo + 1) * row_height(hi - lo + 1) +
	       PANEL_BOTTOM;
}

static void put_panel(FILE *f, const struct ts_heatmap *h,
		      const struct hm_panel *p, const struct geometry *g,
		      double y0, int id)
{
	__u64 max;
	int rlo, rhi, i, r, nrows, every;
	double rh, ph, top, x, w, t, step, lx;
	char col[8], a[32], b[32];

	panel_range(h, p, &rlo, &rhi, &max);
	/* whole powers of two, so that both ends are labelled */
	nrows = rhi - rlo + 1;
	rh = row_height(nrows);
	ph = nrows * rh;
	top = y0 + PANEL_TOP;

	fprintf(f, "<g class=\"panel\" data-device=\"");
	put_escaped(f, p->dev);
	fprintf(f, "\" data-major=\"%u\" data-minor=\"%u\" data-op=\"%s\" "
		   "data-kind=\"%s\" data-ios=\"%llu\" data-max-count=\"%llu\">\n",
		p->major, p->minor, ts_op_names[p->op], kind_names[p->kind],
		(unsigned long long)p->total, (unsigned long long)max);
	fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"title\">", ML, y0 + 18);
	put_escaped(f, p->dev);
	fprintf(f, " %s: %s</text>\n", ts_op_names[p->op],
		p->bio_layer ? layer_title : kind_titles[p->kind]);
	fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"sub\">%llu I/Os; the "
		   "busiest cell holds %llu</text>\n",
		ML, y0 + 35, (unsigned long long)p->total,
		(unsigned long long)max);

	/* the plot: white for "no I/O", a cell per column and row with I/O */
	fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		   "fill=\"#fff\"/>\n<g shape-rendering=\"crispEdges\">\n",
		ML, top, g->pw, ph);
	for (i = 0; i < h->ncols && i < p->cap; i++) {
		const struct hm_col *c = &p->cols[i];
		long first = (long)i * h->per_col;
		int n = i == h->ncols - 1 ? h->in_last : h->per_col;

		x = ML + first * g->ppi;
		w = n * g->ppi;
		for (r = 0; r < c->n; r++) {
			int row = c->lo + r;
			__u64 up = ts_hm_row_upper(row);

			if (!c->c[r])
				continue;
			ts_hm_colour(c->c[r], max, col);
			fmt_ns(ts_hm_row_lower(row), a, sizeof(a));
			if (up == UINT64_MAX)
				snprintf(b, sizeof(b), "more");
			else
				fmt_ns(up, b, sizeof(b));
			fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
				   "height=\"%.2f\" fill=\"%s\" data-interval=\"%ld\" "
				   "data-intervals=\"%d\" data-bucket-lo=\"%llu\" ",
				x, top + (rhi - row) * rh, w, rh, col, first + 1, n,
				(unsigned long long)ts_hm_row_lower(row));
			if (up == UINT64_MAX)
				fputs("data-bucket-hi=\"inf\"", f);
			else
				fprintf(f, "data-bucket-hi=\"%llu\"",
					(unsigned long long)up);
			fprintf(f, " data-count=\"%llu\"><title>%g\xe2\x80\x93%g s, "
				   "%s\xe2\x80\x93%s: %llu I/Os</title></rect>\n",
				(unsigned long long)c->c[r], first * h->interval_s,
				(first + n) * h->interval_s, a, b,
				(unsigned long long)c->c[r]);
		}
	}
	fprintf(f, "</g>\n<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		   "class=\"frame\"/>\n",
		ML, top, g->pw, ph);

	/* latency axis: a tick at each power of two (every other when many) */
	every = nrows / TS_HM_SUB > 12 ? 2 * TS_HM_SUB : TS_HM_SUB;
	for (r = rlo; r <= rhi + 1 && r < TS_HM_ROWS; r += TS_HM_SUB) {
		double y = top + (rhi + 1 - r) * rh;

		if ((r - rlo) % every)
			continue;
		fmt_ns(ts_hm_row_lower(r), a, sizeof(a));
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
			   "class=\"tick\"/><text x=\"%d\" y=\"%.1f\" "
			   "class=\"ylab\">%s</text>\n",
			ML - 5, y, ML, y, ML - 8, y + 4, a);
	}
	fprintf(f, "<text transform=\"translate(16 %.1f) rotate(-90)\" "
		   "class=\"axis\">%s (log)</text>\n",
		top + ph / 2, p->kind == KIND_SERVICE ? "service time" :
							"queue time");

	/* time axis, in seconds */
	step = nice_step(h->intervals * h->interval_s, 10);
	for (t = 0; t <= h->intervals * h->interval_s * (1 + 1e-9); t += step) {
		x = ML + t / h->interval_s * g->ppi;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			   "class=\"tick\"/><text x=\"%.1f\" y=\"%.1f\" "
			   "class=\"xlab\">%g</text>\n",
			x, top + ph, x, top + ph + 5, x, top + ph + 18, t);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"axis\" "
		   "text-anchor=\"middle\">seconds since start (one column = "
		   "%g s)</text>\n",
		ML + g->pw / 2, top + ph + 40, h->per_col * h->interval_s);

	/* legend: the colour scale, 1 at the bottom, the busiest cell on top */
	lx = ML + g->pw + LEGEND_GAP;
	fprintf(f, "<defs><linearGradient id=\"scale%d\" x1=\"0\" y1=\"1\" "
		   "x2=\"0\" y2=\"0\">",
		id);
	for (i = 0; i <= 16; i++) {
		scale_colour(max > 1 ? i / 16.0 : 1.0, col);
		fprintf(f, "<stop offset=\"%g\" stop-color=\"%s\"/>", i / 16.0,
			col);
	}
	fprintf(f, "</linearGradient></defs>\n");
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"sub\">I/Os per cell"
		   "</text>\n",
		lx - 4, y0 + 35);
	/* CSS would beat a fill attribute: the frame is a rect of its own */
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" "
		   "fill=\"url(#scale%d)\"/>\n<rect x=\"%.1f\" y=\"%.1f\" "
		   "width=\"%d\" height=\"%.1f\" class=\"frame\"/>\n",
		lx, top, LEGEND_W, ph, id, lx, top, LEGEND_W, ph);
	for (__u64 v = 1;; v *= 10) {
		double y;

		if (v > max)
			v = max;
		y = top + ph - scale_pos(v, max) * ph;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			   "class=\"tick\"/><text x=\"%.1f\" y=\"%.1f\" "
			   "class=\"llab\">%llu</text>\n",
			lx + LEGEND_W, y, lx + LEGEND_W + 4, y,
			lx + LEGEND_W + 7, y + 4, (unsigned long long)v);
		if (v == max || v > max / 10)
			break;
	}
	if (max > 1) {
		/* the busiest cell on top, unless a power of ten is there */
		__u64 v = 1;

		while (v <= max / 10)
			v *= 10;
		if (v != max && scale_pos(v, max) < 0.93)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				   "y2=\"%.1f\" class=\"tick\"/><text x=\"%.1f\" "
				   "y=\"%.1f\" class=\"llab\">%llu</text>\n",
				lx + LEGEND_W, top, lx + LEGEND_W + 4, top,
				lx + LEGEND_W + 7, top + 4,
				(unsigned long long)max);
	}
	fprintf(f, "</g>\n");
}

int ts_heatmap_write(const struct ts_heatmap *h, FILE *f)
{
	struct hm_panel **order = NULL;
	struct geometry g;
	double y, height;
	char stamp[40];
	int i, n = 0;

	if (h->npanels) {
		order = malloc(h->npanels * sizeof(*order));
		if (!order)
			return -1;
	}
	for (i = 0; i < h->npanels; i++)
		if (h->p[i].total)
			order[n++] = &h->p[i];
	if (n)
		qsort(order, n, sizeof(*order), cmp_panel);

	g.pw = h->ncols * 24.0;
	g.pw = g.pw < 480 ? 480 : g.pw > 1000 ? 1000 : g.pw;
	g.ppi = h->intervals ? g.pw / h->intervals : 0;
	g.width = ML + g.pw + LEGEND_GAP + LEGEND_W + MR;
	height = HEADER + (n ? 0 : 40) + (h->dropped ? 20 : 0) + 10;
	for (i = 0; i < n; i++)
		height += panel_height(h, order[i]) + PANEL_GAP;

	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S UTC",
		 gmtime(&h->start));
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		   "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
		   "font-size=\"12\">\n",
		g.width, height, g.width, height);
	fputs("<style>\n"
	      ".title { font-size: 15px; font-weight: bold; fill: #222; }\n"
	      ".sub { font-size: 12px; fill: #555; }\n"
	      ".frame { fill: none; stroke: #777; stroke-width: 1; }\n"
	      ".tick { stroke: #777; stroke-width: 1; }\n"
	      ".ylab { text-anchor: end; font-size: 11px; fill: #333; }\n"
	      ".xlab { text-anchor: middle; font-size: 11px; fill: #333; }\n"
	      ".llab { font-size: 11px; fill: #333; }\n"
	      ".axis { font-size: 12px; fill: #333; text-anchor: middle; }\n"
	      "</style>\n",
	      f);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#f4f4f4\"/>\n");
	fprintf(f, "<text x=\"%d\" y=\"24\" class=\"title\" "
		   "style=\"font-size: 18px\">truestat latency heat map</text>\n",
		ML);
	fprintf(f, "<text x=\"%d\" y=\"44\" class=\"sub\">from %s, %ld "
		   "intervals of %g s",
		ML, stamp, h->intervals, h->interval_s);
	if (h->per_col > 1)
		fprintf(f, ", one column = %d intervals (pairs of older columns "
			   "merged to keep at most %d)",
			h->per_col, h->max_cols);
	fputs(".</text>\n", f);
	fprintf(f, "<text x=\"%d\" y=\"62\" class=\"sub\">A cell: the I/Os "
		   "completed in its column's time with a latency in its row."
		   "</text>\n<text x=\"%d\" y=\"78\" class=\"sub\">Darker: "
		   "more (log scale, each panel its own); white: none.</text>\n",
		ML, ML);
	y = HEADER;
	for (i = 0; i < n; i++) {
		put_panel(f, h, order[i], &g, y, i);
		y += panel_height(h, order[i]) + PANEL_GAP;
	}
	if (!n) {
		fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"sub\">No I/O with "
			   "latency histograms in these intervals.</text>\n",
			ML, y + 20);
		y += 40;
	}
	if (h->dropped)
		fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"sub\">%d more "
			   "panels not drawn (at most %d).</text>\n",
			ML, y + 14, h->dropped, HM_MAX_PANELS);
	fputs("</svg>\n", f);
	free(order);
	return fflush(f) || ferror(f) ? -1 : 0;
}

struct ts_heatmap *ts_heatmap_open(const char *path, double interval_s,
				   char *err, size_t len)
{
	struct ts_heatmap *h;
	FILE *f = fopen(path, "w");

	if (!f) {
		snprintf(err, len, "cannot write the heat map %s: %s", path,
			 strerror(errno));
		return NULL;
	}
	h = ts_heatmap_new(interval_s, TS_HM_MAX_COLS, time(NULL));
	if (!h) {
		fclose(f);
		snprintf(err, len, "out of memory");
		return NULL;
	}
	h->file = f;
	h->path = path;
	return h;
}

int ts_heatmap_close(struct ts_heatmap *h, char *err, size_t len)
{
	int rc = ts_heatmap_write(h, h->file);

	if (fclose(h->file))
		rc = -1;
	if (rc)
		snprintf(err, len, "cannot write the heat map %s: %s", h->path,
			 strerror(errno));
	ts_heatmap_free(h);
	return rc;
}
