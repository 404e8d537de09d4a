// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's counters (user/output/prom.c) across scrapes: by depth class, and
 * held or started anew when another disk takes the name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "output/prom.h"

#define WRAP 4294967296.0 /* 2^32 */

static struct ts_report *r;
static struct ts_prom *p;
static char *text;

static int setup(void **state)
{
	(void)state;
	r = calloc(1, sizeof(*r));
	p = calloc(1, sizeof(*p));
	if (!r || !p)
		return -1;
	r->ndev = 1;
	r->span_s = 1;
	snprintf(r->dev[0].name, sizeof(r->dev[0].name), "sda");
	r->dev[0].major = 8;
	r->dev[0].claimed_ns = 1000;
	r->dev[0].has_curve = true;
	r->dev[0].curve.row[0] = (struct ts_curve_row){ .lo = 1, .hi = 1 };
	r->dev[0].curve.row[3] = (struct ts_curve_row){ .lo = 5, .hi = 8 };
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(text), free(r), free(p);
	text = NULL;
	return 0;
}

/* What the run's report says of class @c: as the curve sums the buckets. */
static void report(int c, __u64 completions, double service_ms, double time_s)
{
	struct ts_curve_row *row = &r->dev[0].curve.row[c];

	row->completions = completions;
	row->service_ms = completions ? service_ms : NAN;
	row->time_s = time_s;
}

static void scrape(void)
{
	size_t len;

	free(text);
	text = ts_prom_render(p, r, &len);
	assert_non_null(text);
}

/* The value of sda's series @name with label @label, NAN when not printed. */
static double sample(const char *name, const char *label)
{
	char key[256];
	const char *at;

	snprintf(key, sizeof(key), "\n%s{device=\"sda\",layer=\"request\"%s} ",
		 name, label);
	at = strstr(text, key);
	return at ? strtod(at + strlen(key), NULL) : NAN;
}

/* The value of @name at depth @depth, NAN when not printed. */
static double value(const char *name, const char *depth)
{
	char label[64];

	snprintf(label, sizeof(label), ",depth=\"%s\"", depth);
	return sample(name, label);
}

/* cmocka's assert_float_equal rounds to float: 2^32 + 5 would pass as 2^32 */
static void near(double got, double want, double eps)
{
	if (!(fabs(got - want) <= eps))
		fail_msg("%.17g, not %.17g", got, want);
}

static double issued(const char *depth)
{
	return value("truestat_issued_at_depth_total", depth);
}

static double service_s(const char *depth)
{
	return value("truestat_issued_at_depth_service_seconds_total", depth);
}

/* Only the classes reached are printed, each as the report has it. */
static void test_classes_reached(void **state)
{
	(void)state;
	report(0, 1000, 2.0, 0.5);
	scrape();
	near(issued("1"), 1000, 0);
	near(service_s("1"), 2.0, 1e-9);
	near(value("truestat_device_at_depth_seconds_total", "1"),
			   0.5, 1e-12);
	assert_true(isnan(issued("5-8")));
	assert_true(isnan(issued("2")));
}

/*
 * The run's count of class 1 passes 2^32 (widened by the loader): the
 * counter follows it exactly, each scrape's service time the rise's mean.
 */
static void test_past_2_32(void **state)
{
	double before;

	(void)state;
	report(0, (__u64)WRAP - 10, 1.0, 10);
	scrape();
	before = service_s("1");
	report(0, (__u64)WRAP + 5, ((WRAP - 10) * 1.0 + 15 * 3.0) / (WRAP + 5), 11);
	scrape();
	near(issued("1"), WRAP + 5, 0);
	near(service_s("1") - before, 15 * 3e-3, 1e-4);
}

/* A count of the same disk that goes down holds until it rises past. */
static void test_count_holds(void **state)
{
	(void)state;
	report(0, 100, 1.0, 1);
	scrape();
	report(0, 40, 2.0, 2);
	scrape();
	near(issued("1"), 100, 0);
	report(0, 130, (100 * 1.0 + 30 * 4.0) / 130, 3);
	scrape();
	near(issued("1"), 130, 0);
	near(service_s("1"), 0.1 + 30 * 4e-3, 1e-9);
}

/* A time that moves back (a late repair) holds until it catches up. */
static void test_time_holds(void **state)
{
	(void)state;
	report(3, 100, 8.0, 3.0);
	scrape();
	report(3, 100, 8.0, 2.5);
	scrape();
	near(value("truestat_device_at_depth_seconds_total", "5-8"),
			   3.0, 1e-12);
	near(issued("5-8"), 100, 0);
}

/* sda's reads completed, and its time with a request in the device. */
static void totals(__u64 reads, double busy_share)
{
	r->dev[0].op[TS_OP_READ].ios = reads;
	r->dev[0].device.busy_share = busy_share;
}

static double reads(void)
{
	return sample("truestat_requests_total", ",op=\"read\"");
}

static double busy_s(void)
{
	return sample("truestat_device_busy_seconds_total", "");
}

/* A late repair lowers the same disk's busy time: the counter holds. */
static void test_repair_holds(void **state)
{
	(void)state;
	totals(100, 0.5);
	scrape();
	totals(120, 0.4);
	scrape();
	near(reads(), 120, 0);
	near(busy_s(), 0.5, 1e-12);
}

/*
 * Another disk under the name (removed and made again: its slot claimed
 * anew): every counter, the depth classes' too, starts from the new disk's
 * own, and none of the old disk's is held.
 */
static void test_new_disk_starts_anew(void **state)
{
	(void)state;
	totals(1000, 0.9);
	report(0, 1000, 2.0, 5);
	scrape();
	r->dev[0].claimed_ns = 2000;
	totals(40, 0.1);
	report(0, 40, 3.0, 0.5);
	scrape();
	near(reads(), 40, 0);
	near(busy_s(), 0.1, 1e-12);
	near(issued("1"), 40, 0);
	near(service_s("1"), 40 * 3e-3, 1e-9);
	near(value("truestat_device_at_depth_seconds_total", "1"), 0.5, 1e-12);
	totals(50, 0.2);
	report(0, 50, 3.0, 0.6);
	scrape();
	near(reads(), 50, 0);
	near(issued("1"), 50, 0);
}

/* The same name on another dev_t is another disk too. */
static void test_other_dev_t_starts_anew(void **state)
{
	(void)state;
	totals(1000, 0.9);
	scrape();
	r->dev[0].minor = 16;
	totals(40, 0.1);
	scrape();
	near(reads(), 40, 0);
}

/*
 * The new disk took the name on another queue id: the old one's row stays
 * in the report, and is not printed (its series would repeat the name).
 */
static void test_gone_disk_left_out(void **state)
{
	const char *first;

	(void)state;
	totals(1000, 0.9);
	scrape();
	r->ndev = 2;
	r->dev[1] = r->dev[0];
	r->dev[1].qid = 1;
	r->dev[1].claimed_ns = 2000;
	r->dev[1].op[TS_OP_READ].ios = 40;
	scrape();
	near(reads(), 40, 0);
	first = strstr(text, "\ntruestat_requests_total{");
	assert_non_null(first);
	assert_null(strstr(first + 1, "\ntruestat_requests_total{"));
}

/* The short set: 11 edges rising, each an edge of the full set and of
 * the kernel's buckets, about 10 us to 1 s, the first and last within
 * a quarter octave of them. */
static void test_short_edges(void **state)
{
	__u64 shrt[TS_PROM_FULL_EDGES], full[TS_PROM_FULL_EDGES];
	int ns = ts_prom_edges(false, shrt), nf = ts_prom_edges(true, full);
	int i, j;

	(void)state;
	assert_int_equal(ns, TS_PROM_SHORT_EDGES);
	assert_int_equal(nf, TS_PROM_FULL_EDGES);
	assert_int_equal(full[nf - 1], 1ULL << (TS_HIST_MAX_EXP + 1));
	for (i = 0; i < ns; i++) {
		assert_true(!i || shrt[i] > shrt[i - 1] * 2.5);
		assert_true(ts_hist_lower(ts_hist_bucket(shrt[i])) == shrt[i]);
		for (j = 0; j < nf && full[j] != shrt[i]; j++)
			;
		assert_true(j < nf);
	}
	assert_true(shrt[0] >= 1e4 / 1.25 && shrt[0] <= 1e4 * 1.25);
	assert_true(shrt[ns - 1] >= 1e9 / 1.25 && shrt[ns - 1] <= 1e9 * 1.25);
}

/* sda's read service bucket at @le in @t, or -1 when not printed. */
static double read_bucket(const char *t, const char *le)
{
	char key[160];
	const char *at;

	snprintf(key, sizeof(key),
		 "\ntruestat_service_seconds_bucket{device=\"sda\",layer=\"request\",op=\"read\",le=\"%s\"} ",
		 le);
	at = strstr(t, key);
	return at ? strtod(at + strlen(key), NULL) : -1;
}

/*
 * One report rendered in both forms: at each edge of the short set its
 * cumulative count is the full set's at the same le, and so is +Inf.
 */
static void test_short_sums_full(void **state)
{
	__u64 edges[TS_PROM_FULL_EDGES], *h = r->hist[0][0].service, n = 0;
	char *shrt, le[32];
	int b, i, k = ts_prom_edges(false, edges);
	size_t len;

	(void)state;
	for (b = 0; b < TS_HIST_SLOTS; b++)
		n += h[b] = (b * 2654435761u) % 7; /* every bucket, some empty */
	r->dev[0].hist = r->hist[0];
	r->dev[0].op[TS_OP_READ].ios = n;
	shrt = ts_prom_render(p, r, &len);
	assert_non_null(shrt);
	memset(p, 0, sizeof(*p));
	p->full_buckets = true;
	scrape();
	for (i = 0; i < k; i++) {
		snprintf(le, sizeof(le), "%.12g", edges[i] / 1e9);
		assert_true(read_bucket(shrt, le) >= 0);
		near(read_bucket(shrt, le), read_bucket(text, le), 0);
	}
	near(read_bucket(shrt, "+Inf"), n, 0);
	near(read_bucket(text, "+Inf"), n, 0);
	free(shrt);
}

/* A snapshot at @mono_ns of sda (slot 0, claimed at @claimed_ns) whose
 * span's true maximum depth is @lo to @hi. */
static struct ts_snapshot *snap(__u64 mono_ns, __u64 claimed_ns, __s64 lo,
				__s64 hi)
{
	static struct ts_snapshot *s[2];
	static int k;
	struct ts_snapshot *x;

	k ^= 1;
	if (!s[k])
		s[k] = malloc(sizeof(*s[k]));
	x = s[k];
	assert_non_null(x);
	x->mono_ns = mono_ns;
	x->ndev = 1;
	memset(&x->dev[0], 0, sizeof(x->dev[0]));
	x->dev[0].claimed_ns = claimed_ns;
	x->dev[0].device_span = (struct ts_depth_range){ .lo = lo, .hi = hi,
							 .exact = lo == hi };
	return x;
}

static double window(const char *what)
{
	char name[96];

	snprintf(name, sizeof(name), "truestat_device_concurrency_%s", what);
	return sample(name, "");
}

/*
 * The depth since the previous scrape: a span with a missed request makes
 * that scrape's window inexact and its time counted; the next window,
 * whose spans followed every request, is exact again, its max its own.
 */
static void test_window_forgets(void **state)
{
	static struct ts_snapshot start; /* not on the stack: megabytes */

	(void)state;
	start.mono_ns = 500;
	/* from the claim (1000 ns) on: the disk was not there before */
	ts_prom_span(p, &start, snap(1000000500, 1000, 3, 5));
	ts_prom_window(p, snap(1200000000, 1000, 2, 2));
	scrape();
	near(window("window_exact"), 0, 0);
	near(window("window_max"), 5, 0);
	near(window("window_max_min"), 3, 0);
	near(window("inexact_seconds_total"), 0.9999995, 1e-12);
	ts_prom_span(p, snap(1000000500, 1000, 3, 5), snap(2000000500, 1000, 4, 4));
	ts_prom_window(p, snap(2100000000, 1000, 1, 1));
	scrape();
	near(window("window_exact"), 1, 0);
	near(window("window_max"), 4, 0);
	near(window("inexact_seconds_total"), 0.9999995, 1e-12);
	ts_prom_window(p, snap(2200000000, 1000, 2, 2)); /* no span ended */
	scrape();
	near(window("window_max"), 2, 0);
	/* another disk in the slot: its own time */
	r->dev[0].claimed_ns = 3000000000;
	ts_prom_window(p, snap(3100000000, 3000000000, 0, 0));
	scrape();
	near(window("inexact_seconds_total"), 0, 0);
}

/* The value of @series in the scrape (a whole line's name), NAN: none. */
static double line_value(const char *series)
{
	char key[128];
	const char *at;

	snprintf(key, sizeof(key), "\n%s ", series);
	at = strstr(text, key);
	return at ? strtod(at + strlen(key), NULL) : NAN;
}

/*
 * bpf_stats off and nothing counted: said so, and no counter of zeros as
 * if measured; once the kernel counted, its figures as counted.
 */
static void test_bpf_cost(void **state)
{
	(void)state;
	p->nprogs = 2;
	snprintf(p->progs[0].name, sizeof(p->progs[0].name), "ts_sweep");
	snprintf(p->progs[1].name, sizeof(p->progs[1].name), "ts_issue_btf");
	scrape();
	near(line_value("truestat_bpf_stats_enabled"), 0, 0);
	assert_null(strstr(text, "truestat_bpf_run_seconds_total{"));
	assert_null(strstr(text, "truestat_bpf_runs_total{"));
	p->bpf_stats = true;
	p->progs[1].run_ns = 1234567891;
	p->progs[1].runs = 1000;
	scrape();
	near(line_value("truestat_bpf_stats_enabled"), 1, 0);
	near(line_value("truestat_bpf_run_seconds_total{program=\"ts_issue_btf\"}"),
	     1.234567891, 0);
	near(line_value("truestat_bpf_runs_total{program=\"ts_issue_btf\"}"),
	     1000, 0);
	near(line_value("truestat_bpf_runs_total{program=\"ts_sweep\"}"), 0, 0);
}

/*
 * A device-mapper name (-N) may hold a double quote, a backslash or a
 * line feed: each label value escaped as the text format says, so that
 * every line is still one sample.
 */
static void test_name_escaped(void **state)
{
	const char *at;

	(void)state;
	snprintf(r->dev[0].name, sizeof(r->dev[0].name), "vg-a\"b\\c\nd");
	report(0, 10, 1, 0.5);
	scrape();
	at = strstr(text, "{device=\"vg-a\\\"b\\\\c\\nd\",layer=\"request\"");
	assert_non_null(at);
	assert_null(strstr(text, "\nd\""));
	assert_null(strstr(text, "a\"b"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_classes_reached, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_past_2_32, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_count_holds, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_time_holds, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_repair_holds, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_new_disk_starts_anew,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_dev_t_starts_anew,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_disk_left_out, setup,
						teardown),
		cmocka_unit_test(test_short_edges),
		cmocka_unit_test_setup_teardown(test_bpf_cost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_window_forgets, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_short_sums_full, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_name_escaped, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
