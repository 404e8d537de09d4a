// SPDX-License-Identifier: GPL-2.0
/*
 * --heatmap: the SVG written at exit, into the file opened at start. A
 * header, then one panel per disk, direction and kind, each with its plot (a
 * cell per column and row with I/O), its latency and time axes and the
 * legend of its colour scale. Uses the grid of heatmap.c, which knows
 * nothing of SVG.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap_internal.h"

static const char *const kind_names[NR_KINDS] = { "service", "queue",
						   "sync" };
static const char *const kind_titles[NR_KINDS] = {
	"service time (D\xe2\x86\x92" "C: issued to completed)",
	"queue time (Q\xe2\x86\x92" "D: queued in the OS to issued)",
	"durable writes (fsync, O_DSYNC), Q\xe2\x86\x92" "the end of their flush sequence",
};
static const char *const kind_axes[NR_KINDS] = { "service time", "queue time",
						  "time to durable" };

/* A bio-based device's service panel: it has no D, nor an OS queue. */
static const char layer_title[] =
	"time in its layer (Q\xe2\x86\x92" "C: bio-based, no OS queue)";

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

/* Where a panel and its plot lie, and what they show. */
struct frame {
	int rlo, rhi;	/* the rows shown */
	__u64 max;	/* the busiest cell */
	double y0, top; /* the panel's top, its plot's */
	double rh, ph;	/* row and plot height */
};

static void panel_frame(const struct ts_heatmap *h, const struct hm_panel *p,
			double y0, struct frame *fr)
{
	int nrows;

	panel_range(h, p, &fr->rlo, &fr->rhi, &fr->max);
	nrows = fr->rhi - fr->rlo + 1;
	fr->rh = row_height(nrows);
	fr->ph = nrows * fr->rh;
	fr->y0 = y0;
	fr->top = y0 + PANEL_TOP;
}

static double panel_height(const struct ts_heatmap *h,
			   const struct hm_panel *p)
{
	struct frame fr;

	panel_frame(h, p, 0, &fr);
	return PANEL_TOP + fr.ph + PANEL_BOTTOM;
}

/* The group's data attributes, the title and the line under it. */
static void put_panel_head(FILE *f, const struct hm_panel *p,
			   const struct frame *fr)
{
	fprintf(f, "<g class=\"panel\" data-device=\"");
	put_escaped(f, p->dev);
	fprintf(f, "\" data-major=\"%u\" data-minor=\"%u\" data-op=\"%s\" "
		   "data-kind=\"%s\" data-ios=\"%llu\" data-max-count=\"%llu\">\n",
		p->major, p->minor, ts_op_names[p->op], kind_names[p->kind],
		(unsigned long long)p->total, (unsigned long long)fr->max);
	fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"title\">", ML,
		fr->y0 + 18);
	put_escaped(f, p->dev);
	fprintf(f, " %s: %s</text>\n", ts_op_names[p->op],
		p->bio_layer && p->kind == KIND_SERVICE ? layer_title :
							  kind_titles[p->kind]);
	fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"sub\">%llu I/Os; the "
		   "busiest cell holds %llu</text>\n",
		ML, fr->y0 + 35, (unsigned long long)p->total,
		(unsigned long long)fr->max);
}

/* The intervals one column holds and where it is drawn. */
struct span {
	long first; /* its first interval, from 0 */
	int n;
	double x, w;
};

static void put_cell(FILE *f, const struct ts_heatmap *h,
		     const struct frame *fr, const struct span *s, int row,
		     __u64 count)
{
	__u64 up = ts_hm_row_upper(row);
	char col[8], a[32], b[32];

	ts_hm_colour(count, fr->max, col);
	fmt_ns(ts_hm_row_lower(row), a, sizeof(a));
	if (up == UINT64_MAX)
		snprintf(b, sizeof(b), "more");
	else
		fmt_ns(up, b, sizeof(b));
	fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		   "height=\"%.2f\" fill=\"%s\" data-interval=\"%ld\" "
		   "data-intervals=\"%d\" data-bucket-lo=\"%llu\" ",
		s->x, fr->top + (fr->rhi - row) * fr->rh, s->w, fr->rh, col,
		s->first + 1, s->n, (unsigned long long)ts_hm_row_lower(row));
	if (up == UINT64_MAX)
		fputs("data-bucket-hi=\"inf\"", f);
	else
		fprintf(f, "data-bucket-hi=\"%llu\"", (unsigned long long)up);
	fprintf(f, " data-count=\"%llu\"><title>%g\xe2\x80\x93%g s, "
		   "%s\xe2\x80\x93%s: %llu I/Os</title></rect>\n",
		(unsigned long long)count, s->first * h->interval_s,
		(s->first + s->n) * h->interval_s, a, b,
		(unsigned long long)count);
}

/* The plot: white for "no I/O", a cell per column and row with I/O. */
static void put_plot(FILE *f, const struct ts_heatmap *h,
		     const struct hm_panel *p, const struct geometry *g,
		     const struct frame *fr)
{
	struct span s;
	int i, r;

	fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		   "fill=\"#fff\"/>\n<g shape-rendering=\"crispEdges\">\n",
		ML, fr->top, g->pw, fr->ph);
	for (i = 0; i < h->ncols && i < p->cap; i++) {
		const struct hm_col *c = &p->cols[i];

		s.first = (long)i * h->per_col;
		s.n = i == h->ncols - 1 ? h->in_last : h->per_col;
		s.x = ML + s.first * g->ppi;
		s.w = s.n * g->ppi;
		for (r = 0; r < c->n; r++)
			if (c->c[r])
				put_cell(f, h, fr, &s, c->lo + r, c->c[r]);
	}
	fprintf(f, "</g>\n<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		   "class=\"frame\"/>\n",
		ML, fr->top, g->pw, fr->ph);
}

/* A tick at each power of two (every other when many), and the title. */
static void put_latency_axis(FILE *f, const struct hm_panel *p,
			     const struct frame *fr)
{
	int nrows = fr->rhi - fr->rlo + 1, every, r;
	char a[32];

	every = nrows / TS_HM_SUB > 12 ? 2 * TS_HM_SUB : TS_HM_SUB;
	for (r = fr->rlo; r <= fr->rhi + 1 && r < TS_HM_ROWS; r += TS_HM_SUB) {
		double y = fr->top + (fr->rhi + 1 - r) * fr->rh;

		if ((r - fr->rlo) % every)
			continue;
		fmt_ns(ts_hm_row_lower(r), a, sizeof(a));
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
			   "class=\"tick\"/><text x=\"%d\" y=\"%.1f\" "
			   "class=\"ylab\">%s</text>\n",
			ML - 5, y, ML, y, ML - 8, y + 4, a);
	}
	fprintf(f, "<text transform=\"translate(16 %.1f) rotate(-90)\" "
		   "class=\"axis\">%s (log)</text>\n",
		fr->top + fr->ph / 2, kind_axes[p->kind]);
}

/* The time axis, in seconds since the start. */
static void put_time_axis(FILE *f, const struct ts_heatmap *h,
			  const struct geometry *g, const struct frame *fr)
{
	double step, t, x, bottom = fr->top + fr->ph;

	step = nice_step(h->intervals * h->interval_s, 10);
	for (t = 0; t <= h->intervals * h->interval_s * (1 + 1e-9); t += step) {
		x = ML + t / h->interval_s * g->ppi;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			   "class=\"tick\"/><text x=\"%.1f\" y=\"%.1f\" "
			   "class=\"xlab\">%g</text>\n",
			x, bottom, x, bottom + 5, x, bottom + 18, t);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"axis\" "
		   "text-anchor=\"middle\">seconds since start (one column = "
		   "%g s)</text>\n",
		ML + g->pw / 2, bottom + 40, h->per_col * h->interval_s);
}

/* The colour scale as a bar, 1 at the bottom, the busiest cell on top. */
static void put_legend_bar(FILE *f, const struct frame *fr, double lx, int id)
{
	char col[8];
	int i;

	fprintf(f, "<defs><linearGradient id=\"scale%d\" x1=\"0\" y1=\"1\" "
		   "x2=\"0\" y2=\"0\">",
		id);
	for (i = 0; i <= 16; i++) {
		scale_colour(fr->max > 1 ? i / 16.0 : 1.0, col);
		fprintf(f, "<stop offset=\"%g\" stop-color=\"%s\"/>", i / 16.0,
			col);
	}
	fprintf(f, "</linearGradient></defs>\n");
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"sub\">I/Os per cell"
		   "</text>\n",
		lx - 4, fr->y0 + 35);
	/* CSS would beat a fill attribute: the frame is a rect of its own */
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" "
		   "fill=\"url(#scale%d)\"/>\n<rect x=\"%.1f\" y=\"%.1f\" "
		   "width=\"%d\" height=\"%.1f\" class=\"frame\"/>\n",
		lx, fr->top, LEGEND_W, fr->ph, id, lx, fr->top, LEGEND_W,
		fr->ph);
}

static void put_legend_tick(FILE *f, double lx, double y, __u64 v)
{
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		   "class=\"tick\"/><text x=\"%.1f\" y=\"%.1f\" "
		   "class=\"llab\">%llu</text>\n",
		lx + LEGEND_W, y, lx + LEGEND_W + 4, y, lx + LEGEND_W + 7,
		y + 4, (unsigned long long)v);
}

/* Ticks at 1, 10, 100, ... and at the busiest cell. */
static void put_legend_ticks(FILE *f, const struct frame *fr, double lx)
{
	__u64 max = fr->max, v;
	double y;

	for (v = 1;; v *= 10) {
		if (v > max)
			v = max;
		y = fr->top + fr->ph - scale_pos(v, max) * fr->ph;
		put_legend_tick(f, lx, y, v);
		if (v == max || v > max / 10)
			break;
	}
	if (max <= 1)
		return;
	/* the busiest cell on top, unless a power of ten is there */
	for (v = 1; v <= max / 10; v *= 10)
		;
	if (v != max && scale_pos(v, max) < 0.93)
		put_legend_tick(f, lx, fr->top, max);
}

static void put_panel(FILE *f, const struct ts_heatmap *h,
		      const struct hm_panel *p, const struct geometry *g,
		      double y0, int id)
{
	double lx = ML + g->pw + LEGEND_GAP;
	struct frame fr;

	panel_frame(h, p, y0, &fr);
	put_panel_head(f, p, &fr);
	put_plot(f, h, p, g, &fr);
	put_latency_axis(f, p, &fr);
	put_time_axis(f, h, g, &fr);
	put_legend_bar(f, &fr, lx, id);
	put_legend_ticks(f, &fr, lx);
	fprintf(f, "</g>\n");
}

/* The panels with I/O, in the order of cmp_panel; -1 when out of memory. */
static int sorted_panels(const struct ts_heatmap *h, struct hm_panel ***order,
			 int *n)
{
	int i;

	*order = NULL;
	*n = 0;
	if (!h->npanels)
		return 0;
	*order = malloc(h->npanels * sizeof(**order));
	if (!*order)
		return -1;
	for (i = 0; i < h->npanels; i++)
		if (h->p[i].total)
			(*order)[(*n)++] = &h->p[i];
	if (*n)
		qsort(*order, *n, sizeof(**order), cmp_panel);
	return 0;
}

/* The plot's width and the whole picture's height. */
static double layout(const struct ts_heatmap *h, struct hm_panel **order,
		     int n, struct geometry *g)
{
	double height;
	int i;

	g->pw = h->ncols * 24.0;
	g->pw = g->pw < 480 ? 480 : g->pw > 1000 ? 1000 : g->pw;
	g->ppi = h->intervals ? g->pw / h->intervals : 0;
	g->width = ML + g->pw + LEGEND_GAP + LEGEND_W + MR;
	height = HEADER + (n ? 0 : 40) + (h->dropped ? 20 : 0) + 10;
	for (i = 0; i < n; i++)
		height += panel_height(h, order[i]) + PANEL_GAP;
	return height;
}

static const char style[] =
	"<style>\n"
	".title { font-size: 15px; font-weight: bold; fill: #222; }\n"
	".sub { font-size: 12px; fill: #555; }\n"
	".frame { fill: none; stroke: #777; stroke-width: 1; }\n"
	".tick { stroke: #777; stroke-width: 1; }\n"
	".ylab { text-anchor: end; font-size: 11px; fill: #333; }\n"
	".xlab { text-anchor: middle; font-size: 11px; fill: #333; }\n"
	".llab { font-size: 11px; fill: #333; }\n"
	".axis { font-size: 12px; fill: #333; text-anchor: middle; }\n"
	"</style>\n";

/* The <svg> element, its style, background, title and how to read it. */
static void put_header(FILE *f, const struct ts_heatmap *h,
		       const struct geometry *g, double height)
{
	char stamp[40];

	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S UTC",
		 gmtime(&h->start));
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		   "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
		   "font-size=\"12\">\n",
		g->width, height, g->width, height);
	fputs(style, f);
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
}

/* What was not drawn: no panel at all, or the panels beyond the limit. */
static void put_footer(FILE *f, const struct ts_heatmap *h, int n, double y)
{
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
}

int ts_heatmap_write(const struct ts_heatmap *h, FILE *f)
{
	struct hm_panel **order;
	struct geometry g;
	double y = HEADER, height;
	int i, n;

	if (sorted_panels(h, &order, &n))
		return -1;
	height = layout(h, order, n, &g);
	put_header(f, h, &g, height);
	for (i = 0; i < n; i++) {
		put_panel(f, h, order[i], &g, y, i);
		y += panel_height(h, order[i]) + PANEL_GAP;
	}
	put_footer(f, h, n, y);
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
