// SPDX-License-Identifier: GPL-2.0
/*
 * --slow's lines (user/features/slow.c), built by hand for speed: each
 * time as ts_time_str prints it, the JSON's milliseconds as tj_num's six
 * decimals, the lines counted per device.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "features/slow.h"
#include "lib/json.h"

static struct ts_slow_printer printer;

/* @e printed by a printer of @units (text) or JSON, into @buf */
static void print(const struct ts_slow_event *e, bool json, enum ts_unit units,
		  char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	assert_non_null(f);
	memset(&printer, 0, sizeof(printer));
	printer.f = f;
	printer.json = json;
	printer.units = units;
	printer.sysroot = "/nonexistent";
	ts_slow_batch(&printer, false);
	ts_slow_print(&printer, e);
	ts_slow_batch(&printer, true);
	fclose(f);
}

static struct ts_slow_event event(__u64 queue_ns, __u64 service_ns)
{
	struct ts_slow_event e = {
		.end_ns = 123456789, .sector = 2048, .dev = 7 << 20 | 3,
		.bytes = 4096, .depth = 5, .op = 0,
		.queue_ns = queue_ns, .service_ns = service_ns,
		.total_ns = queue_ns + service_ns,
	};

	return e;
}

/* The three times of a text line, as ts_time_str prints them. */
static void test_times_as_ts_time_str(void **state)
{
	static const enum ts_unit units[] = { TS_UNIT_AUTO, TS_UNIT_US,
					      TS_UNIT_MS };
	char line[512], want[160], q[32], s[32], t[32];
	__u64 ns;
	int u;

	(void)state;
	for (u = 0; u < 3; u++)
		for (ns = 1; ns < 20000000000ULL; ns += 1 + ns / 89) {
			struct ts_slow_event e = event(ns, ns * 3 + 5);

			print(&e, false, units[u], line, sizeof(line));
			snprintf(want, sizeof(want),
				 " B  queue %s service %s total %s  depth 5",
				 ts_time_str(q, sizeof(q), ns / 1e6, units[u]),
				 ts_time_str(s, sizeof(s), (ns * 3 + 5) / 1e6,
					     units[u]),
				 ts_time_str(t, sizeof(t), (ns * 4 + 5) / 1e6,
					     units[u]));
			if (!strstr(line, want))
				fail_msg("ns %llu units %d: '%s' lacks '%s'",
					 (unsigned long long)ns, u, line, want);
		}
}

/* No queue time: "-"; no submitter: said so; the device by number. */
static void test_text_line(void **state)
{
	struct ts_slow_event e = event(0, 250000);
	char line[512];

	(void)state;
	print(&e, false, TS_UNIT_AUTO, line, sizeof(line));
	assert_non_null(strstr(line, " 7:3        read   sector 2048 4096 B  queue - service 0.250 ms total 0.250 ms  depth 5  submitter not known\n"));
	assert_int_equal(ts_slow_logged(&printer, 7, 3), 1);
	assert_int_equal(ts_slow_logged(&printer, 7, 4), 0);
}

/* The milliseconds to the nanosecond, as tj_num(.., 6); strings escaped. */
static void test_json_line(void **state)
{
	struct ts_slow_event e = event(0, 1234567891);
	char line[1024];

	(void)state;
	e.who.tgid = 42;
	e.who.cgroup = 9;
	strcpy(e.who.comm, "a\"b\\c");
	print(&e, true, TS_UNIT_AUTO, line, sizeof(line));
	assert_non_null(strstr(line, ",\"queue_ms\":null,\"service_ms\":1234.567891,\"total_ms\":1234.567891,\"depth\":5,\"pid\":42,\"comm\":\"a\\\"b\\\\c\",\"cgroup_id\":9,\"cgroup\":null}\n"));
	assert_non_null(strstr(line, "{\"type\":\"slow\",\"time\":\""));
	assert_non_null(strstr(line, "\"mono_ns\":123456789,\"device\":\"7:3\",\"op\":\"read\",\"layer\":\"request\",\"sector\":2048,\"bytes\":4096"));
}

/*
 * ts_cgroup_path from two threads at once, as the --slow reader and the
 * main thread (the exporter's labels, the findings) call it: a tree of
 * more directories than the cache holds (it starts over while the other
 * thread reads), each looked up by its inode number, each answer its own.
 */
#define DIRS 600
#define LOOKUPS 700

static char tree[64];
static __u64 ino[DIRS];

struct looker {
	unsigned int seed;
	int wrong;
};

static void *look_up(void *arg)
{
	struct looker *l = arg;
	char buf[64], want[16];
	const char *got;
	int k, i;

	for (k = 0; k < LOOKUPS; k++) {
		i = (k * 7 + l->seed) % DIRS;
		snprintf(want, sizeof(want), "/d%d", i);
		got = ts_cgroup_path(tree, ino[i], buf, sizeof(buf));
		l->wrong += !got || strcmp(got, want);
	}
	return NULL;
}

static void test_cgroup_path_two_threads(void **state)
{
	struct looker a = { .seed = 0 }, b = { .seed = 301 };
	char path[96];
	struct stat st;
	pthread_t t;
	int i;

	(void)state;
	snprintf(tree, sizeof(tree), "/tmp/truestat-test.XXXXXX");
	assert_non_null(mkdtemp(tree));
	for (i = 0; i < DIRS; i++) {
		snprintf(path, sizeof(path), "%s/d%d", tree, i);
		assert_int_equal(mkdir(path, 0700), 0);
		assert_int_equal(stat(path, &st), 0);
		ino[i] = st.st_ino;
	}
	assert_int_equal(pthread_create(&t, NULL, look_up, &a), 0);
	look_up(&b);
	pthread_join(t, NULL);
	for (i = 0; i < DIRS; i++) {
		snprintf(path, sizeof(path), "%s/d%d", tree, i);
		rmdir(path);
	}
	rmdir(tree);
	assert_int_equal(a.wrong + b.wrong, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_times_as_ts_time_str),
		cmocka_unit_test(test_text_line),
		cmocka_unit_test(test_json_line),
		cmocka_unit_test(test_cgroup_path_two_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
