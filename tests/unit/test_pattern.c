// SPDX-License-Identifier: GPL-2.0
/*
 * --pattern's figures: seek classes (0, then [2^(k-1), 2^k) sectors), the
 * classes that hold the median and p90, the span's counts as differences.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "features/pattern.h"

static void test_seek_buckets(void **state)
{
	assert_int_equal(ts_seek_bucket(0), 0);
	assert_int_equal(ts_seek_bucket(1), 1);
	assert_int_equal(ts_seek_bucket(2), 2);
	assert_int_equal(ts_seek_bucket(3), 2);
	assert_int_equal(ts_seek_bucket(4), 3);
	assert_int_equal(ts_seek_bucket(2048), 12); /* 1 MiB: [1M, 2M) */
	assert_int_equal(ts_seek_bucket(~0ULL), TS_SEEK_SLOTS - 1);
}

static void test_figures(void **state)
{
	struct ts_pattern_op o = { 0 };
	struct ts_pattern_figures f;

	/* 9 requests given: 1 first, 5 sequential, 2 at 1-2 MiB, 1 far back */
	o.size_ios[12] = 9;
	o.seek[0] = 5;
	o.seek[12] = 2;
	o.seek[20] = 1;
	o.backward = 1;
	ts_pattern_figures(&o, &f);
	assert_int_equal(f.ios, 9);
	assert_int_equal(f.compared, 8);
	assert_int_equal(f.sequential, 5);
	assert_int_equal(f.backward, 1);
	assert_int_equal(f.seek_p50_lt, 0);	       /* 5 of 8 at 0 */
	assert_int_equal(f.seek_p90_lt, 512ULL << 20); /* the 8th: < 2^20 sectors */
	o.seek[0] = 0;
	ts_pattern_figures(&o, &f);
	assert_int_equal(f.seek_p50_lt, 2 << 20); /* < 4096 sectors = 2 MiB */
}

static void test_delta(void **state)
{
	struct ts_pattern a = { 0 }, b = { 0 };
	struct ts_pattern_span d;

	a.op[1].seek[3] = 10;
	b.op[1].seek[3] = 25;
	b.op[0].size_bytes[12] = 4096;
	ts_pattern_delta(&a, &b, 2.0, &d);
	assert_int_equal(d.op[1].seek[3], 15);
	assert_int_equal(d.op[0].size_bytes[12], 4096);
	assert_true(d.span_s == 2.0);
	ts_pattern_delta(NULL, &b, 1.0, &d);
	assert_int_equal(d.op[1].seek[3], 25);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seek_buckets),
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_delta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
