// SPDX-License-Identifier: GPL-2.0
/* The JSON writer, and the JSON and table printers built on it. */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <cmocka.h>

#include "json.h"
#include "output.h"

#define WHEN 1700000000 /* 2023-11-14 22:13:20 UTC */

static char *out;
static size_t outlen;
static struct tj j;

/* Everything written to the returned stream lands in out, on done(). */
static FILE *start(void)
{
	FILE *f = open_memstream(&out, &outlen);

	assert_non_null(f);
	return f;
}

static const char *done(FILE *f)
{
	fclose(f);
	return out;
}

static int free_out(void **state)
{
	free(out);
	out = NULL;
	return 0;
}

static void test_nesting(void **state)
{
	FILE *f = start();

	tj_open(&j, f);
	tj_obj(&j, NULL);
	tj_str(&j, "a", "x");
	tj_obj(&j, "b");
	tj_u64(&j, "c", 1);
	tj_arr(&j, "d");
	tj_u64(&j, NULL, 1);
	tj_u64(&j, NULL, 2);
	tj_obj(&j, NULL);
	tj_end_obj(&j);
	tj_arr(&j, NULL);
	tj_end_arr(&j);
	tj_end_arr(&j);
	tj_end_obj(&j);
	tj_bool(&j, "e", true);
	tj_bool(&j, "f", false);
	tj_obj(&j, "g");
	tj_end_obj(&j);
	tj_end_obj(&j);
	tj_close(&j);
	/* a second document on its own line, no comma between them */
	tj_arr(&j, NULL);
	tj_u64(&j, NULL, 18446744073709551615ULL);
	tj_end_arr(&j);
	tj_close(&j);
	assert_string_equal(done(f),
			    "{\"a\":\"x\",\"b\":{\"c\":1,\"d\":[1,2,{},[]]},"
			    "\"e\":true,\"f\":false,\"g\":{}}\n"
			    "[18446744073709551615]\n");
}

static void test_escaping(void **state)
{
	FILE *f = start();

	tj_open(&j, f);
	tj_obj(&j, NULL);
	tj_str(&j, "q\"k", "say \"hi\"");
	tj_str(&j, "path", "C:\\dir\\");
	tj_str(&j, "ctl", "a\nb\tc\r\x01\x1f");
	tj_str(&j, "kept", "/ \x7f \xc3\xa9"); /* JSON allows these as is */
	tj_str(&j, "", "");
	tj_end_obj(&j);
	tj_close(&j);
	assert_string_equal(done(f),
			    "{\"q\\\"k\":\"say \\\"hi\\\"\","
			    "\"path\":\"C:\\\\dir\\\\\","
			    "\"ctl\":\"a\\u000ab\\u0009c\\u000d\\u0001\\u001f\","
			    "\"kept\":\"/ \x7f \xc3\xa9\","
			    "\"\":\"\"}\n");
}

static void test_numbers(void **state)
{
	FILE *f = start();

	tj_open(&j, f);
	tj_arr(&j, NULL);
	tj_num(&j, NULL, 1.23456, 2);
	tj_num(&j, NULL, 2.76, 1);
	tj_num(&j, NULL, 42, 0);
	tj_num(&j, NULL, -0.5, 3);
	tj_num(&j, NULL, NAN, 2);
	tj_num(&j, NULL, INFINITY, 2);
	tj_num(&j, NULL, -INFINITY, 2);
	tj_u64(&j, NULL, 0);
	tj_end_arr(&j);
	tj_close(&j);
	assert_string_equal(done(f),
			    "[1.23,2.8,42,-0.500,null,null,null,0]\n");
}

/* A report with one busy disk and one idle one. */
static void fill_report(struct ts_report *r)
{
	struct ts_dev_report *d = &r->dev[0];
	int op;

	memset(r, 0, sizeof(*r));
	r->span_s = 2.0;
	r->lost_events = 0;
	r->ndev = 2;
	snprintf(d->name, sizeof(d->name), "sda");
	d->major = 8;
	d->active = true;
	d->nops_active = 1;
	d->op[TS_OP_READ] = (struct ts_op_figures){
		.ios = 200, .bytes = 1638400, .queued_ios = 0, .iops = 100,
		.mbps = 0.8192, .avg_kb = 8, .queue_ms = NAN,
		.service_ms = 0.5, .total_ms = NAN,
	};
	d->all = d->op[TS_OP_READ];
	d->device = (struct ts_depth_summary){
		.mean = 1.0, .busy_share = 0.75, .max = 2, .max_exact = true,
		.max_min = 2, .exact = true,
		.p50 = 1, .p90 = 2, .p99 = 2,
	};
	d->busy_pct = 75;
	d->svctm_ms = 7.5;
	d->in_device_now = 2;
	d->in_os_now = -1; /* printed as it is: a negative depth must show */
	d->events[TS_EV_REQUEUE] = 3;
	for (op = 0; op < TS_NR_OPS; op++)
		if (op != TS_OP_READ)
			d->op[op].avg_kb = NAN;

	snprintf(r->dev[1].name, sizeof(r->dev[1].name), "sdb");
	r->dev[1].major = 8;
	r->dev[1].minor = 16;
}

/* Parsed by python3, which checks the documented keys and some values. */
static const char check_py[] =
	"import json, sys\n"
	"lines = sys.stdin.read().split(\"\\n\")\n"
	"assert len(lines) == 2 and lines[1] == \"\", lines\n"
	"d = json.loads(lines[0])\n"
	"assert list(d) == [\"type\", \"time\", \"span_s\", \"lost_events\","
	" \"queue_from\", \"not_traced\", \"devices\"], list(d)\n"
	"assert d[\"not_traced\"] == [\"zram0\", \"md127\"]\n"
	"assert d[\"queue_from\"] == \"bio\"\n"
	"assert d[\"type\"] == \"interval\"\n"
	"assert d[\"time\"] == \"2023-11-14T22:13:20Z\"\n"
	"assert d[\"span_s\"] == 2 and d[\"lost_events\"] == 0\n"
	"assert len(d[\"devices\"]) == 1\n"
	"v = d[\"devices\"][0]\n"
	"for k in (\"device\", \"major\", \"minor\", \"ops\", \"all\","
	" \"concurrency\", \"os_queue\", \"iostat\", \"events\"):\n"
	"    assert k in v, k\n"
	"assert (v[\"device\"], v[\"major\"], v[\"minor\"]) == (\"sda\", 8, 0)\n"
	"assert list(v[\"ops\"]) == [\"read\"]\n"
	"rd = v[\"ops\"][\"read\"]\n"
	"for k in (\"ios\", \"bytes\", \"iops\", \"mb_per_s\", \"avg_kb\","
	" \"queued_ios\", \"queue_ms\", \"service_ms\", \"total_ms\"):\n"
	"    assert k in rd and k in v[\"all\"], k\n"
	"assert rd[\"ios\"] == 200 and rd[\"mb_per_s\"] == 0.819\n"
	"assert rd[\"queue_ms\"] is None and rd[\"service_ms\"] == 0.5\n"
	"c = v[\"concurrency\"]\n"
	"assert c == {\"mean\": 1, \"max\": 2, \"max_exact\": True,"
	" \"max_min\": 2, \"excess\": 0, \"exact\": True, \"p50\": 1,"
	" \"p90\": 2, \"p99\": 2, \"busy_pct\": 75, \"now\": 2}, c\n"
	"assert v[\"os_queue\"][\"now\"] == -1\n"
	"assert v[\"iostat\"] == {\"util_pct\": 75, \"svctm_ms\": 7.5}\n"
	"e = v[\"events\"]\n"
	"assert len(e) == 14 and e[\"requeues\"] == 3, e\n"
	"assert sum(e.values()) == 3\n";

static void test_print_json(void **state)
{
	static struct ts_report r;
	char cmd[sizeof(check_py) + 64];
	FILE *f = start(), *py;
	int status;

	fill_report(&r);
	r.not_traced = "zram0 md127";
	ts_print_json(f, &r, WHEN);
	done(f);
	assert_non_null(strstr(out, "\"type\":\"interval\""));
	assert_null(strstr(out, "sdb")); /* idle disks are left out */

	if (system("python3 -c pass >/dev/null 2>&1")) {
		fprintf(stderr, "python3 missing: JSON not parsed\n");
		return;
	}
	/* the script has no single quotes: it fits in '...' as is */
	assert_null(strchr(check_py, '\''));
	snprintf(cmd, sizeof(cmd), "python3 -c '%s'", check_py);
	py = popen(cmd, "w");
	assert_non_null(py);
	fputs(out, py);
	status = pclose(py);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_print_json_totals_empty(void **state)
{
	static struct ts_report r;
	FILE *f = start();

	memset(&r, 0, sizeof(r));
	r.totals = true;
	r.span_s = 12.5;
	r.lost_events = 7;
	ts_print_json(f, &r, WHEN);
	assert_string_equal(done(f),
			    "{\"type\":\"totals\",\"time\":\"2023-11-14T22:13:20Z\","
			    "\"span_s\":12.500000,\"lost_events\":7,"
			    "\"queue_from\":\"bio\",\"not_traced\":[],"
			    "\"devices\":[]}\n");
}

static void test_table_idle(void **state)
{
	static struct ts_report r;
	FILE *f;

	setenv("TZ", "UTC", 1);
	tzset();
	fill_report(&r);
	r.dev[0].active = false; /* as ts_report_build leaves a quiet disk */
	r.dev[0].events[TS_EV_REQUEUE] = 0;
	f = start();
	ts_print_table(f, &r, WHEN);
	assert_string_equal(done(f),
			    "22:13:20  interval 2.00 s  no I/O on the traced disks\n");

	free(out);
	r.ndev = 0;
	r.totals = true;
	f = start();
	ts_print_table(f, &r, WHEN);
	assert_string_equal(done(f),
			    "22:13:20  totals over 2.00 s  no I/O on the traced disks\n");
}

/* Requests in the device for a second or more are reported as stuck. */
static void test_table_stuck(void **state)
{
	static struct ts_report r;
	FILE *f;

	fill_report(&r);
	r.dev[0].oldest_age_s = 0.9;
	f = start();
	ts_print_table(f, &r, WHEN);
	assert_null(strstr(done(f), "warning"));
	free(out);
	r.dev[0].oldest_age_s = 12.34;
	f = start();
	ts_print_table(f, &r, WHEN);
	assert_non_null(strstr(done(f),
		"  warning: sda: 2 requests in the device, the oldest issued 12.3 s ago\n"));
}

/* --light: Q from request allocation says so; the OS queue is unknown. */
static void test_light(void **state)
{
	static struct ts_report r;
	FILE *f;

	fill_report(&r);
	r.light = true;
	f = start();
	ts_print_json(f, &r, WHEN);
	done(f);
	assert_non_null(strstr(out, "\"queue_from\":\"request\","));
	assert_non_null(strstr(out, "\"os_queue\":null,"));
	free(out);
	f = start();
	ts_print_table(f, &r, WHEN);
	done(f);
	assert_non_null(strstr(out, "  interval 2.00 s  (--light: QUEUE from request allocation)\n"));
	/* CONC 1.00, CONC_MAX 2, OS_QD -, BUSY% 75.0 */
	assert_non_null(strstr(out, "   1.00        2      -   75.0"));
}

/*
 * Depth the counter did not follow exactly: the table prints the upper end
 * as "<=N" and a warning with the range, -D says so, and the JSON carries
 * the flags and the range.
 */
static void test_inexact_depth(void **state)
{
	static struct ts_report r;
	const char *text;
	FILE *f;

	fill_report(&r);
	r.dev[0].device.exact = r.dev[0].device.max_exact = false;
	r.dev[0].device.max = 19;
	r.dev[0].device.max_min = 13;
	r.dev[0].device.excess = 6;
	r.dev[0].events[TS_EV_MISSED_C] = 12;
	f = start();
	ts_print_table(f, &r, WHEN);
	text = done(f);
	assert_non_null(strstr(text, " <=19 "));
	assert_non_null(strstr(text,
		"  warning: sda: depth not exact (see the notes): the device held between 13 and 19 at most"));
	assert_non_null(strstr(text, "  note: sda: 12 completions never seen"));
	free(out);
	f = start();
	ts_print_json(f, &r, WHEN);
	text = done(f);
	assert_non_null(strstr(text,
		"\"max\":19,\"max_exact\":false,\"max_min\":13,\"excess\":6,\"exact\":false"));
	assert_non_null(strstr(text, "\"missed_completions\":12"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_nesting, free_out),
		cmocka_unit_test_teardown(test_escaping, free_out),
		cmocka_unit_test_teardown(test_numbers, free_out),
		cmocka_unit_test_teardown(test_print_json, free_out),
		cmocka_unit_test_teardown(test_print_json_totals_empty, free_out),
		cmocka_unit_test_teardown(test_table_idle, free_out),
		cmocka_unit_test_teardown(test_table_stuck, free_out),
		cmocka_unit_test_teardown(test_light, free_out),
		cmocka_unit_test_teardown(test_inexact_depth, free_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
