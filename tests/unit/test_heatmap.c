// SPDX-License-Identifier: GPL-2.0
/* --heatmap: the folding of buckets, the colour scale, the columns and the SVG. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/heatmap.h"
#include "cli/opts.h"

static void test_rows_hold_whole_fine_buckets(void **state)
{
	int b, r;

	/* every fine bucket lies inside one row, and rows go up with it */
	for (b = 0; b + 1 < TS_HIST_SLOTS; b++) {
		int lo = ts_hm_row(ts_hist_lower(b));

		assert_int_equal(lo, ts_hm_row(ts_hist_lower(b + 1) - 1));
		assert_true(ts_hm_row(ts_hist_lower(b + 1)) >= lo);
	}
	assert_int_equal(ts_hm_row(ts_hist_lower(TS_HIST_SLOTS - 1)),
			 TS_HM_ROWS - 1);
	assert_int_equal(ts_hm_row(UINT64_MAX), TS_HM_ROWS - 1);
	/* rows are contiguous and their bounds invert ts_hm_row */
	for (r = 0; r < TS_HM_ROWS; r++) {
		assert_int_equal(ts_hm_row(ts_hm_row_lower(r)), r);
		if (r + 1 < TS_HM_ROWS) {
			assert_int_equal(ts_hm_row_upper(r), ts_hm_row_lower(r + 1));
			assert_int_equal(ts_hm_row(ts_hm_row_upper(r) - 1), r);
		}
	}
	assert_true(ts_hm_row_upper(TS_HM_ROWS - 1) == UINT64_MAX);
	/* four rows per power of two: 1 ms lies in [2^19 * 7/4, 2^20) */
	r = ts_hm_row(1000000);
	assert_true(ts_hm_row_lower(r) == 917504);
	assert_true(ts_hm_row_upper(r) == 1048576);
	assert_int_equal(ts_hm_row(1048576), r + 1);
	assert_int_equal(ts_hm_row(2097152), r + 1 + TS_HM_SUB);
	assert_int_equal(ts_hm_row(3), 3);
	assert_int_equal(ts_hm_row(4), 4);
	assert_int_equal(ts_hm_row(7), 7);
	assert_int_equal(ts_hm_row(8), 8);
	assert_int_equal(ts_hm_row(11), 9);
}

static void test_fold_keeps_every_count(void **state)
{
	__u64 fine[TS_HIST_SLOTS] = { 0 }, rows[TS_HM_ROWS], n = 0, m = 0;
	int b, r;

	for (b = 0; b < TS_HIST_SLOTS; b++)
		n += fine[b] = (b * 7919) % 13;
	ts_hm_fold(fine, rows);
	for (r = 0; r < TS_HM_ROWS; r++)
		m += rows[r];
	assert_true(m == n);

	memset(fine, 0, sizeof(fine));
	fine[ts_hist_bucket(100000)] = 5; /* 100 us */
	fine[ts_hist_bucket(110000)] = 2; /* same row: [98304, 114688) */
	fine[ts_hist_bucket(120000)] = 1; /* the next */
	ts_hm_fold(fine, rows);
	assert_true(rows[ts_hm_row(100000)] == 7);
	assert_true(rows[ts_hm_row(120000)] == 1);
	assert_int_equal(ts_hm_row(120000), ts_hm_row(100000) + 1);
}

/* 0.2126 R + 0.7152 G + 0.0722 B of "#rrggbb" */
static double luma(const char *c)
{
	unsigned int r, g, b;

	assert_int_equal(sscanf(c, "#%2x%2x%2x", &r, &g, &b), 3);
	return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

static void test_colour_scale(void **state)
{
	char c[8], prev[8];
	__u64 v;

	assert_int_equal(ts_hm_colour(0, 100, c), -1);
	assert_int_equal(ts_hm_colour(1, 100000, c), 0);
	assert_string_equal(c, "#fee391"); /* the palest: one I/O */
	ts_hm_colour(100000, 100000, c);
	assert_string_equal(c, "#4a001a"); /* the darkest: the busiest cell */
	ts_hm_colour(1, 1, c);
	assert_string_equal(c, "#4a001a"); /* alone: the busiest cell */
	/* log scale: 10 of 10000 sits a quarter of the way; darker with more */
	ts_hm_colour(1, 10000, prev);
	for (v = 2; v <= 10000; v *= 2) {
		ts_hm_colour(v, 10000, c);
		assert_true(luma(c) < luma(prev));
		strcpy(prev, c);
	}
}

/* A report with @ndev devices; dev[i].hist points into r->hist[i]. */
static struct ts_report *fake_report(int ndev)
{
	struct ts_report *r = calloc(1, sizeof(*r));
	int i;

	assert_non_null(r);
	r->ndev = ndev;
	r->span_s = 1;
	for (i = 0; i < ndev; i++) {
		snprintf(r->dev[i].name, sizeof(r->dev[i].name), "d%d", i);
		r->dev[i].major = 7;
		r->dev[i].minor = i;
		r->dev[i].active = true;
		r->dev[i].hist = r->hist[i];
	}
	return r;
}

static char *render(const struct ts_heatmap *h, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(ts_heatmap_write(h, f), 0);
	fclose(f);
	return buf;
}

static int count_of(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

/* Sum of data-count over the cells after @from up to the next panel. */
static unsigned long long panel_sum(const char *from)
{
	const char *end = strstr(from + 1, "<g class=\"panel\"");
	unsigned long long n = 0;

	while ((from = strstr(from, "data-count=\"")) && (!end || from < end)) {
		from += strlen("data-count=\"");
		n += strtoull(from, NULL, 10);
	}
	return n;
}

static void test_columns_fold_pairwise(void **state)
{
	struct ts_heatmap *h = ts_heatmap_new(0.5, 4, 0);
	struct ts_report *r = fake_report(1);
	char *svg;
	size_t len;
	int i;

	assert_null(ts_heatmap_new(0.5, 3, 0)); /* odd: cannot fold pairwise */
	assert_null(ts_heatmap_new(0, 4, 0));
	assert_non_null(h);
	for (i = 0; i < 9; i++) {
		memset(r->hist, 0, sizeof(r->hist));
		r->hist[0][0].service[ts_hist_bucket(1000 << (i % 3))] = i + 1;
		assert_int_equal(ts_heatmap_add(h, r), 0);
		if (i == 3) {
			assert_int_equal(ts_heatmap_ncols(h), 4);
			assert_int_equal(ts_heatmap_per_col(h), 1);
		}
		if (i == 4) { /* 4 full: 2 of 2 intervals, and a new one */
			assert_int_equal(ts_heatmap_ncols(h), 3);
			assert_int_equal(ts_heatmap_per_col(h), 2);
		}
	}
	/* 9 intervals: 2 columns of 4, and the 9th alone */
	assert_int_equal(ts_heatmap_ncols(h), 3);
	assert_int_equal(ts_heatmap_per_col(h), 4);
	svg = render(h, &len);
	assert_int_equal(count_of(svg, "<g class=\"panel\""), 1);
	assert_int_equal(panel_sum(strstr(svg, "<g class=\"panel\"")), 45); /* 1 + ... + 9 */
	/* intervals 1-4: 1 + 2 + 3 + 4, in three rows (1, 2 and 4 us) */
	assert_non_null(strstr(svg, "data-interval=\"1\" data-intervals=\"4\""));
	assert_non_null(strstr(svg, "data-interval=\"5\" data-intervals=\"4\""));
	assert_non_null(strstr(svg, "data-interval=\"9\" data-intervals=\"1\""));
	assert_int_equal(count_of(svg, "data-interval=\"1\""), 3);
	assert_non_null(strstr(svg, "4 intervals (pairs of older columns merged"));
	free(svg);
	ts_heatmap_free(h);
	free(r);
}

static void test_svg_panels_and_counts(void **state)
{
	struct ts_heatmap *h = ts_heatmap_new(1.0, 3600, 0);
	struct ts_report *r = fake_report(4);
	const char *p;
	char *svg;
	size_t len;
	int i;

	strcpy(r->dev[0].name, "a&<b>");
	r->dev[2].hist = NULL;	   /* beyond the devices with histograms */
	r->dev[3].active = false; /* idle in this span */
	r->dev[1].bio_layer = true; /* md, dm, zram: time in its layer */
	r->hist[3][0].service[100] = 99;
	for (i = 0; i < 3; i++) {
		memset(r->hist, 0, sizeof(r->hist));
		/* d0: reads with queue and service time, writes service only */
		r->hist[0][0].service[ts_hist_bucket(50000)] = 10;
		r->hist[0][0].service[ts_hist_bucket(4000000)] = i;
		r->hist[0][0].queue[ts_hist_bucket(2000)] = 10 + i;
		r->hist[0][1].service[ts_hist_bucket(300000)] = 7;
		/* d0: durable writes, a panel after the write service one */
		r->hist[0][TS_HIST_SYNC].total[ts_hist_bucket(2000000)] = 5;
		/* d1: flushes, from the second interval on */
		r->hist[1][3].service[ts_hist_bucket(1000000)] = i ? 3 : 0;
		r->hist[2][0].service[10] = 1; /* not shown: hist is NULL */
		assert_int_equal(ts_heatmap_add(h, r), 0);
	}
	svg = render(h, &len);
	assert_true(len > 0 && !strncmp(svg, "<?xml version=\"1.0\"", 19));
	assert_true(!strcmp(svg + len - 7, "</svg>\n"));
	/* self-contained: the only address is the SVG namespace */
	assert_int_equal(count_of(svg, "http"), 1);
	assert_int_equal(count_of(svg, "xlink"), 0);
	assert_int_equal(count_of(svg, "<g class=\"panel\""), 5);
	assert_int_equal(count_of(svg, "data-device=\"a&amp;&lt;b&gt;\""), 4);
	assert_null(strstr(svg, "a&<b>"));

	/* in order: d0 read service, read queue, write service, write sync,
	 * d1 flush */
	p = strstr(svg, "<g class=\"panel\"");
	assert_non_null(strstr(p, "data-op=\"read\" data-kind=\"service\" data-ios=\"33\""));
	assert_int_equal(panel_sum(p), 33);
	p = strstr(p + 1, "<g class=\"panel\"");
	assert_non_null(strstr(p, "data-op=\"read\" data-kind=\"queue\" data-ios=\"33\""));
	assert_int_equal(panel_sum(p), 33);
	p = strstr(p + 1, "<g class=\"panel\"");
	assert_non_null(strstr(p, "data-op=\"write\" data-kind=\"service\" data-ios=\"21\""));
	assert_int_equal(panel_sum(p), 21);
	p = strstr(p + 1, "<g class=\"panel\"");
	assert_non_null(strstr(p, "data-op=\"write\" data-kind=\"sync\" data-ios=\"15\""));
	assert_int_equal(panel_sum(p), 15);
	p = strstr(p + 1, "<g class=\"panel\"");
	assert_non_null(strstr(p, "data-device=\"d1\""));
	assert_non_null(strstr(p, "data-op=\"flush\" data-kind=\"service\" data-ios=\"6\""));
	assert_int_equal(panel_sum(p), 6);
	assert_null(strstr(p, "data-interval=\"1\"")); /* nothing in the first */
	/* the row of 1 ms: [917504, 1048576) ns, labelled in us and ms */
	assert_non_null(strstr(p, "data-bucket-lo=\"917504\" data-bucket-hi=\"1048576\" data-count=\"3\""));
	assert_non_null(strstr(p, "918 \xc2\xb5s\xe2\x80\x93" "1.05 ms: 3 I/Os"));
	/* a legend and axis titles in each panel */
	assert_int_equal(count_of(svg, "I/Os per cell"), 5);
	assert_int_equal(count_of(svg, "seconds since start"), 5);
	assert_int_equal(count_of(svg, "service time (log)"), 3);
	assert_int_equal(count_of(svg, "queue time (log)"), 1);
	assert_int_equal(count_of(svg, "time to durable (log)"), 1);
	assert_int_equal(count_of(svg, "end of their flush sequence"), 1);
	/* d1 is bio-based: its one panel is its time in its layer */
	assert_int_equal(count_of(svg, "time in its layer (Q\xe2\x86\x92" "C"), 1);
	assert_int_equal(count_of(svg, "issued to completed"), 2);
	free(svg);
	ts_heatmap_free(h);
	free(r);
}

static void test_empty_run(void **state)
{
	struct ts_heatmap *h = ts_heatmap_new(1.0, 3600, 0);
	char *svg;
	size_t len;

	svg = render(h, &len);
	assert_int_equal(count_of(svg, "<g class=\"panel\""), 0);
	assert_non_null(strstr(svg, "No I/O with latency histograms"));
	free(svg);
	ts_heatmap_free(h);
}

static void test_option(void **state)
{
	char *no_interval[] = { "truestat", "--heatmap=x.svg" };
	char *ok[] = { "truestat", "--heatmap=x.svg", "-d", "sda", "0.5" };
	char *empty[] = { "truestat", "--heatmap=", "1" };
	struct ts_opts o;
	char err[256];

	assert_int_equal(ts_parse_args(2, no_interval, &o, err, sizeof(err)), -1);
	assert_string_equal(err, "--heatmap needs an interval: its columns are "
				 "the interval reports (e.g. truestat "
				 "--heatmap=x.svg 1)");
	assert_int_equal(ts_parse_args(5, ok, &o, err, sizeof(err)), 0);
	assert_string_equal(o.heatmap, "x.svg");
	assert_true(o.interval_s == 0.5);
	assert_int_equal(ts_parse_args(3, empty, &o, err, sizeof(err)), -1);
	assert_string_equal(err, "bad --heatmap '': needs a file name");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_hold_whole_fine_buckets),
		cmocka_unit_test(test_fold_keeps_every_count),
		cmocka_unit_test(test_colour_scale),
		cmocka_unit_test(test_columns_fold_pairwise),
		cmocka_unit_test(test_svg_panels_and_counts),
		cmocka_unit_test(test_empty_run),
		cmocka_unit_test(test_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
