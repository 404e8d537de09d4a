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
#include <unistd.h>
#include <cmocka.h>

#include "lib/json.h"
#include "output/output.h"

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
	r->end_mono_ns = 5716832406121ULL;
	r->lost_events = 0;
	r->ndev = 2;
	snprintf(d->name, sizeof(d->name), "sda");
	d->major = 8;
	d->active = true;
	d->nops_active = 1;
	d->op[TS_OP_READ] = (struct ts_op_figures){
		.ios = 200, .bytes = 1638400, .queued_ios = 0, .iops = 100,
		.merges = 30, .mrgps = 15,
		.mibps = 0.78125, .avg_kb = 8, .queue_ms = NAN,
		.service_ms = 0.5, .total_ms = NAN,
	};
	d->all = d->op[TS_OP_READ];
	d->device = (struct ts_depth_summary){
		.mean = 1.0, .busy_share = 0.75, .max = 2, .max_exact = true,
		.max_min = 2, .exact = true,
		.p50 = 1, .p90 = 2, .p99 = 2, .reordered_ms = 0.0125,
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
	"assert list(d) == [\"type\", \"time\", \"span_s\", \"end_mono_ns\","
	" \"lost_events\","
	" \"queue_from\", \"not_traced\", \"exclude\", \"devices\","
	" \"findings\", \"findings_skipped\"], list(d)\n"
	"assert d[\"not_traced\"] == [\"zram0\", \"md127\"]\n"
	"assert d[\"queue_from\"] == \"bio\"\n"
	"assert d[\"type\"] == \"interval\"\n"
	"assert d[\"time\"] == \"2023-11-14T22:13:20Z\"\n"
	"assert d[\"span_s\"] == 2 and d[\"lost_events\"] == 0\n"
	"assert d[\"end_mono_ns\"] == 5716832406121\n"
	"assert len(d[\"devices\"]) == 1\n"
	"v = d[\"devices\"][0]\n"
	"for k in (\"device\", \"major\", \"minor\", \"ops\", \"all\","
	" \"concurrency\", \"os_queue\", \"iostat\", \"events\"):\n"
	"    assert k in v, k\n"
	"assert (v[\"device\"], v[\"major\"], v[\"minor\"]) == (\"sda\", 8, 0)\n"
	"assert list(v[\"ops\"]) == [\"read\"]\n"
	"rd = v[\"ops\"][\"read\"]\n"
	"for k in (\"ios\", \"bytes\", \"iops\", \"merges\","
	" \"merges_per_s\", \"mib_per_s\", \"avg_kib\","
	" \"queued_ios\", \"queue_ms\", \"service_ms\", \"total_ms\"):\n"
	"    assert k in rd and k in v[\"all\"], k\n"
	"assert rd[\"ios\"] == 200 and rd[\"mib_per_s\"] == 0.781\n"
	"assert rd[\"merges\"] == 30 and rd[\"merges_per_s\"] == 15\n"
	"assert rd[\"queue_ms\"] is None and rd[\"service_ms\"] == 0.5\n"
	"c = v[\"concurrency\"]\n"
	"assert c == {\"mean\": 1, \"max\": 2, \"max_exact\": True,"
	" \"max_min\": 2, \"excess\": 0, \"uncounted_in_flight\": 0,"
	" \"unsure_ms\": 0, \"windows_ms\": 0,"
	" \"exact\": True,"
	" \"p50\": 1,"
	" \"p90\": 2, \"p99\": 2, \"busy_pct\": 75, \"reordered_ms\": 0.0125,"
	" \"now\": 2}, c\n"
	"assert v[\"os_queue\"][\"now\"] == -1\n"
	"assert v[\"iostat\"] == {\"util_pct\": 75, \"svctm_ms\": 7.5}\n"
	"e = v[\"events\"]\n"
	"assert len(e) == 31 and e[\"requeues\"] == 3, e\n"
	"assert sum(e.values()) == 3\n";

/* @text against schema/truestat.schema.json (run from the source tree). */
static void validate(const char *text)
{
	char path[] = "/tmp/truestat-json-XXXXXX", cmd[160];
	int fd = mkstemp(path), rc;
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	if (system("python3 -c \"import jsonschema\" 2>/dev/null") ||
	    access("schema/truestat.schema.json", R_OK)) {
		fprintf(stderr, "no jsonschema or schema: not validated\n");
		unlink(path);
		return;
	}
	snprintf(cmd, sizeof(cmd), "python3 tests/tools/validate-json.py "
		 "schema/truestat.schema.json %s >&2", path);
	rc = system(cmd);
	unlink(path);
	assert_int_equal(rc, 0);
}

/* Pipes @text into python3 running @script: its exit status, 0 if none. */
static int python(const char *script, const char *text)
{
	char cmd[4096];
	FILE *py;
	int status;

	if (system("python3 -c pass >/dev/null 2>&1")) {
		fprintf(stderr, "python3 missing: JSON not parsed\n");
		return 0;
	}
	/* the script has no single quotes: it fits in '...' as is */
	assert_null(strchr(script, '\''));
	snprintf(cmd, sizeof(cmd), "python3 -c '%s'", script);
	py = popen(cmd, "w");
	assert_non_null(py);
	fputs(text, py);
	status = pclose(py);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_print_json(void **state)
{
	static struct ts_report r;
	FILE *f = start();

	fill_report(&r);
	r.not_traced = "zram0 md127";
	ts_print_json(f, &r, WHEN);
	done(f);
	assert_non_null(strstr(out, "\"type\":\"interval\""));
	assert_null(strstr(out, "sdb")); /* idle disks are left out */
	assert_int_equal(python(check_py, out), 0);
	validate(out);
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
			    "\"span_s\":12.500000,\"end_mono_ns\":0,"
			    "\"lost_events\":7,"
			    "\"queue_from\":\"bio\",\"not_traced\":[],"
			    "\"exclude\":{\"disks\":0,\"names\":[],"
			    "\"unmatched\":[],\"none_left\":false},"
			    "\"devices\":[],\"findings\":[],"
			    "\"findings_skipped\":[]}\n");
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
	assert_non_null(strstr(done(f),
			       "22:13:20  interval 2.00 s  no I/O on the traced disks\n"
			       "  (waiting for I/O: run some, e.g. fio "));
	assert_non_null(strstr(out, "make demo"));

	free(out); /* the hint is said once a run */
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

	free(out); /* -t: the date before the time of day */
	r.date = true;
	f = start();
	ts_print_table(f, &r, WHEN);
	assert_string_equal(done(f),
			    "2023-11-14 22:13:20  totals over 2.00 s  no I/O on the traced disks\n");
}

/*
 * Discards on a disk that takes several ranges a request: their merges are
 * a lower bound, in a note and in discard_merges_exact; one range, exact.
 */
static void test_discard_lower_bound(void **state)
{
	static struct ts_report r;
	FILE *f;

	fill_report(&r);
	r.dev[0].op[TS_OP_DISCARD].ios = 4;
	r.dev[0].discard_ranges = 256;
	f = start();
	ts_print_table(f, &r, WHEN);
	done(f);
	assert_non_null(strstr(out, "  note: sda: discard MRG/s is a lower bound: a discard takes up to 256 ranges here, and a discard bio merged into one has no tracepoint\n"));
	free(out);
	f = start();
	ts_print_json(f, &r, WHEN);
	done(f);
	assert_non_null(strstr(out, "\"discard_merges_exact\":false,"));
	validate(out);
	free(out);
	r.dev[0].discard_ranges = 1;
	f = start();
	ts_print_table(f, &r, WHEN);
	done(f);
	assert_null(strstr(out, "lower bound"));
}

/*
 * --exclude: the disks it left out and the globs that matched none are
 * notes; when it leaves no disk, the report says that, not "no I/O".
 */
static void test_table_excluded(void **state)
{
	static struct ts_report r;
	FILE *f;
	int none;

	fill_report(&r);
	r.excluded = "loop0 loop1";
	r.nexcluded = 2;
	r.exclude_unmatched = "nvme*";
	for (none = 0; none < 2; none++) {
		r.dev[0].active = !none;
		r.none_left = none;
		f = start();
		ts_print_table(f, &r, WHEN);
		done(f);
		assert_non_null(strstr(out, "  note: not traced, --exclude: 2 disks: loop0 loop1\n"
					    "  note: --exclude matches no disk: nvme*\n"));
		assert_true(!strstr(out, "nothing traced: --exclude leaves no disk\n") == !none);
		assert_true(!strstr(out, "no I/O") || !none);
		free(out);
	}
	f = start();
	ts_print_json(f, &r, WHEN);
	done(f);
	assert_non_null(strstr(out, "\"exclude\":{\"disks\":2,\"names\":[\"loop0\",\"loop1\"],"
				    "\"unmatched\":[\"nvme*\"],\"none_left\":true},"));
	validate(out);
}

/*
 * A fast device: the table's times switch to us (3 significant digits,
 * the header says so); --units=ms keeps ms with the decimals they need.
 */
static void test_table_units(void **state)
{
	static struct ts_report r;
	const char *text;
	FILE *f;

	fill_report(&r);
	r.dev[0].op[TS_OP_READ].service_ms = 0.0104;
	r.dev[0].all = r.dev[0].op[TS_OP_READ];
	r.dev[0].svctm_ms = 0.0139;
	f = start();
	ts_print_table(f, &r, WHEN);
	text = done(f);
	assert_non_null(strstr(text, " QUEUE_us SERVICE_us  TOTAL_us "));
	assert_non_null(strstr(text, " BUSY% SVCTM_us\n"));
	assert_non_null(strstr(text, "         -       10.4         - "));
	assert_non_null(strstr(text, "   75.0     13.9\n"));
	free(out);
	r.units = TS_UNIT_MS;
	f = start();
	ts_print_table(f, &r, WHEN);
	text = done(f);
	assert_non_null(strstr(text, " QUEUE_ms SERVICE_ms  TOTAL_ms "));
	assert_non_null(strstr(text, "         -     0.0104         - "));
	assert_non_null(strstr(text, "   75.0   0.0139\n"));
	free(out);
	/* a slow disk's table is as it always was */
	fill_report(&r);
	f = start();
	ts_print_table(f, &r, WHEN);
	text = done(f);
	assert_non_null(strstr(text, " QUEUE_ms SERVICE_ms  TOTAL_ms "));
	assert_non_null(strstr(text, "         -      0.500         - "));
}

/* Requests in the device for a second or more are reported as stuck. */
static void test_table_stuck(void **state)
{
	static struct ts_report r;
	FILE *f;

	fill_report(&r);
	/* fill_report's OS depth of -1 says so */
	f = start();
	ts_print_table(f, &r, WHEN);
	assert_non_null(strstr(done(f), "the OS queue's depth counter is at -1"));
	free(out);
	r.dev[0].in_os_now = 0;
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
	r.not_traced = "zram0";
	f = start();
	ts_print_json(f, &r, WHEN);
	done(f);
	assert_non_null(strstr(out, "\"queue_from\":\"request\","));
	assert_non_null(strstr(out, "\"os_queue\":null,"));
	/* no merge program under --light: merges unknown, not 0 */
	assert_non_null(strstr(out, "\"merges\":null,\"merges_per_s\":null,"));
	validate(out);
	free(out);
	f = start();
	ts_print_table(f, &r, WHEN);
	done(f);
	assert_non_null(strstr(out, "  interval 2.00 s  (--light: QUEUE from request allocation)\n"));
	/* CONC 1.00, CONC_MAX 2, OS_QD -, BUSY% 75.0 */
	assert_non_null(strstr(out, "   1.00        2      -   75.0"));
	assert_non_null(strstr(out, "sda        read         100.0       -     0.78"));
	/* bio-based devices are not followed under --light, and say so */
	assert_non_null(strstr(out, "  note: not traced, bio-based (--light does not follow bios): zram0\n"));
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
	r.dev[0].device.unsure_ms = 41.5;
	r.dev[0].device.windows_ms = 62.25;
	r.dev[0].events[TS_EV_MISSED_C] = 12;
	f = start();
	ts_print_table(f, &r, WHEN);
	text = done(f);
	assert_non_null(strstr(text, " <=19 "));
	assert_non_null(strstr(text,
		"  warning: sda: depth not exact (see the notes): the device held between 13 and 19 at most"));
	assert_non_null(strstr(text, "  note: sda: 12 completions never seen"));
	free(out);
	/* the maximum known exactly, the depth not: no range of one value */
	r.dev[0].device.max_min = 19;
	f = start();
	ts_print_table(f, &r, WHEN);
	text = done(f);
	assert_non_null(strstr(text,
		"  warning: sda: depth not exact (see the notes), though its maximum, 19, is;"));
	free(out);
	r.dev[0].device.max_min = 13;
	f = start();
	ts_print_json(f, &r, WHEN);
	text = done(f);
	assert_non_null(strstr(text,
		"\"max\":19,\"max_exact\":false,\"max_min\":13,\"excess\":6,"
		"\"uncounted_in_flight\":0,\"unsure_ms\":41.500,\"windows_ms\":62.250,\"exact\":false"));
	assert_non_null(strstr(text, "\"missed_completions\":12"));
}

/*
 * fill_report's sda and idle sdb, and md0 (9:0), bio-based, stacked on sda,
 * sdb and nvme9 (not traced): 812 reads at 8.013 ms, all mapped one-to-one
 * onto a member bio, 0.012 ms in the layer on average.
 */
static void fill_stacked(struct ts_report *r)
{
	struct ts_dev_report *md = &r->dev[2];
	struct ts_stack *st = &md->stack;
	const struct ts_pct none = { NAN, NAN, NAN, NAN, NAN };

	fill_report(r);
	/* as ts_report_build leaves them: no sample is NaN */
	r->dev[0].op[TS_OP_READ].layer_ms = r->dev[0].all.layer_ms = NAN;
	r->dev[1].all.service_ms = NAN;
	r->ndev = 3;
	snprintf(md->name, sizeof(md->name), "md0");
	md->major = 9;
	md->active = md->bio_layer = true;
	md->nops_active = 1;
	md->op[TS_OP_READ] = (struct ts_op_figures){
		.ios = 812, .bytes = 812 * 4096, .queued_ios = 812, .iops = 406,
		.mibps = 1.586, .avg_kb = 4, .queue_ms = NAN,
		.service_ms = 8.013, .total_ms = 8.013, .layer_ios = 812,
		.layer_ms = 0.012, .has_hist = true, .queue_p = none,
		.service_p = { 8, 8.1, 8.2, 8.3, 8.4 },
		.total_p = { 8, 8.1, 8.2, 8.3, 8.4 },
		.layer_p = { 0.011, 0.015, 0.020, 0.030, 0.040 },
	};
	md->all = md->op[TS_OP_READ];
	md->device = (struct ts_depth_summary){
		.mean = 3.9, .busy_share = 1, .max = 4, .max_exact = true,
		.max_min = 4, .exact = true, .p50 = 4, .p90 = 4, .p99 = 4,
	};
	md->busy_pct = 100;
	md->svctm_ms = 2.463;
	st->nmembers = 3;
	snprintf(st->member[0].name, TS_STACK_NAME, "sda");
	st->member[0].major = 8;
	snprintf(st->member[1].name, TS_STACK_NAME, "sdb");
	st->member[1].major = 8;
	st->member[1].minor = 16;
	snprintf(st->member[2].name, TS_STACK_NAME, "nvme9");
	st->member[2].major = 259;
	st->member[2].minor = 9;
	st->nholders = 1;
	snprintf(st->holder[0], TS_STACK_NAME, "dm-3");
}

/*
 * A bio-based device: QUEUE and OS_QD are "-", no queue percentile row, a
 * layer row, and after its rows the line with its members (sdb idle, nvme9
 * not traced) and its layer time.
 */
static void test_table_stacked(void **state)
{
	static struct ts_report r;
	const char *text;
	FILE *f;

	fill_stacked(&r);
	f = start();
	ts_print_table(f, &r, WHEN);
	text = done(f);
	assert_non_null(strstr(text,
		"md0        read         406.0     0.0     1.59     4.0         -      8.013     8.013   3.90        4      -  100.0    2.463\n"
		"  md0: bio-based, members sda sdb nvme9 (CONC 1.00 0.00 -, SERVICE 0.500 - - ms); layer time 12.0 us mean, 20.0 us p99 over 812 bios\n"));
	assert_null(strstr(text, "md0        read    queue"));
	/* the layer's 11 us puts the percentile table in us, 1 decimal */
	assert_non_null(strstr(text, "TIME       MEAN_us    P50_us"));
	assert_non_null(strstr(text, "md0        read    service     8013.0    8000.0"));
	assert_non_null(strstr(text, "md0        read    layer         12.0      11.0      15.0      20.0      30.0      40.0\n"));
	/* the request-based disk keeps its numbers and gets no stack line */
	assert_null(strstr(text, "  sda:"));

	free(out);
	r.dev[2].all.layer_ios = 0;
	r.dev[2].all.layer_ms = NAN;
	f = start();
	ts_print_table(f, &r, WHEN);
	assert_non_null(strstr(done(f),
		" ms); layer time unknown (bios not mapped one-to-one)\n"));
}

/* The JSON of the same: layer, members, holders, layer time. */
static const char stacked_py[] =
	"import json, sys\n"
	"d = json.loads(sys.stdin.read())\n"
	"sda, md = d[\"devices\"]\n"
	"assert list(md)[:7] == [\"device\", \"major\", \"minor\", \"layer\","
	" \"members\", \"holders\", \"ops\"], list(md)\n"
	"assert md[\"layer\"] == \"bio\" and sda[\"layer\"] == \"request\"\n"
	"assert md[\"members\"] == [\"sda\", \"sdb\", \"nvme9\"]\n"
	"assert md[\"holders\"] == [\"dm-3\"]\n"
	"assert sda[\"members\"] == [] and sda[\"holders\"] == []\n"
	"assert md[\"os_queue\"] is None and sda[\"os_queue\"] is not None\n"
	"a = md[\"all\"]\n"
	"assert a[\"layer_ios\"] == 812 and a[\"layer_ms\"] == 0.012, a\n"
	"assert a[\"queue_ms\"] is None and a[\"service_ms\"] == 8.013\n"
	"p = md[\"ops\"][\"read\"][\"percentiles_ms\"]\n"
	"assert p[\"layer\"][\"p99\"] == 0.02 and p[\"queue\"][\"p99\"] is None\n"
	"s = sda[\"all\"]\n"
	"assert s[\"layer_ios\"] == 0 and s[\"layer_ms\"] is None\n"
	"assert list(s)[13:16] == [\"total_ms\", \"layer_ios\", \"layer_ms\"]\n";

static void test_json_stacked(void **state)
{
	static struct ts_report r;
	FILE *f;

	fill_stacked(&r);
	r.show_hist = 1;
	r.dev[2].hist = r.hist[0];
	r.hist[0][TS_OP_READ].layer[100] = 812;
	f = start();
	ts_print_json(f, &r, WHEN);
	done(f);
	assert_non_null(strstr(out, "\"layer_ns\":[[" ));
	assert_int_equal(python(stacked_py, out), 0);
	validate(out);
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
		cmocka_unit_test_teardown(test_table_units, free_out),
		cmocka_unit_test_teardown(test_table_stuck, free_out),
		cmocka_unit_test_teardown(test_table_excluded, free_out),
		cmocka_unit_test_teardown(test_discard_lower_bound, free_out),
		cmocka_unit_test_teardown(test_light, free_out),
		cmocka_unit_test_teardown(test_inexact_depth, free_out),
		cmocka_unit_test_teardown(test_table_stacked, free_out),
		cmocka_unit_test_teardown(test_json_stacked, free_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
