// SPDX-License-Identifier: GPL-2.0
/* Log-linear buckets (include/hist.h) and percentiles from them (user/lib/histogram.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "truestat.h"
#include "lib/histogram.h"

/* Every bucket: its lower bound maps to it, one below to the bucket before. */
static void test_bucket_edges(void **state)
{
	int b;

	assert_int_equal(ts_hist_bucket(0), 0);
	for (b = 0; b < TS_HIST_SLOTS; b++) {
		__u64 lo = ts_hist_lower(b);

		assert_int_equal(ts_hist_bucket(lo), b);
		if (b)
			assert_int_equal(ts_hist_bucket(lo - 1), b - 1);
		if (b + 1 < TS_HIST_SLOTS)
			assert_true(ts_hist_lower(b + 1) > lo);
	}
	/* below 32 ns exact; the last bucket holds 2^38 ns and everything above */
	assert_int_equal(ts_hist_bucket(31), 31);
	assert_int_equal(ts_hist_lower(TS_HIST_SLOTS - 1), 1ULL << 38);
	assert_int_equal(ts_hist_bucket((1ULL << 38) - 1), TS_HIST_SLOTS - 2);
	assert_int_equal(ts_hist_bucket(UINT64_MAX), TS_HIST_SLOTS - 1);
}

/* The promise: every bucket above 32 ns is at most 1/16 of its lower bound. */
static void test_bucket_width(void **state)
{
	int b;

	for (b = 32; b + 1 < TS_HIST_SLOTS; b++) {
		__u64 lo = ts_hist_lower(b), hi = ts_hist_lower(b + 1);

		assert_true((hi - lo) * 16 <= lo);
	}
	/* by hand: 1 ms = 1000000 ns lies in [983040, 1015808), 32768 wide */
	assert_int_equal(ts_hist_lower(ts_hist_bucket(1000000)), 983040);
	assert_int_equal(ts_hist_lower(ts_hist_bucket(1000000) + 1), 1015808);
	assert_int_equal(ts_hist_lower(ts_hist_bucket(98)), 96);
}

/* Random values against the definition lower(b) <= v < lower(b + 1). */
static void test_bucket_random(void **state)
{
	__u64 x = 88172645463325252ULL, v;
	unsigned int b;
	int i;

	for (i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v = x >> (x % 64);
		b = ts_hist_bucket(v);
		assert_true(b < (unsigned int)TS_HIST_SLOTS);
		assert_true(ts_hist_lower(b) <= v);
		if (b + 1 < (unsigned int)TS_HIST_SLOTS)
			assert_true(v < ts_hist_lower(b + 1));
	}
}

static void test_size_bucket(void **state)
{
	int k;

	assert_int_equal(ts_size_bucket(0), 0);
	assert_int_equal(ts_size_bucket(1), 0);
	assert_int_equal(ts_size_bucket(4095), 11);
	assert_int_equal(ts_size_bucket(4096), 12);
	for (k = 1; k < TS_SIZE_SLOTS; k++)
		assert_int_equal(ts_size_bucket(1ULL << k), k);
	assert_int_equal(ts_size_bucket(UINT64_MAX), TS_SIZE_SLOTS - 1);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Percentiles from the histogram within 6.25% of the exact ones. */
static void test_quantiles(void **state)
{
	static __u64 v[20000], counts[TS_HIST_SLOTS];
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999, 1.0 };
	__u64 x = 2463534242ULL;
	double exact, got;
	unsigned int i, q;

	memset(counts, 0, sizeof(counts));
	for (i = 0; i < 20000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* log-uniform from 10 us to 100 ms */
		v[i] = (__u64)(1e4 * pow(10, (double)(x % 1000000) / 250000));
		counts[ts_hist_bucket(v[i])]++;
	}
	qsort(v, 20000, sizeof(v[0]), cmp_u64);
	assert_int_equal(ts_hist_count(counts), 20000);
	for (q = 0; q < 5; q++) {
		exact = v[(unsigned int)ceil(qs[q] * 20000) - 1];
		got = ts_hist_quantile(counts, qs[q]);
		assert_true(fabs(got - exact) <= exact / 16);
	}
	/* one sample: every percentile is in its bucket */
	memset(counts, 0, sizeof(counts));
	counts[ts_hist_bucket(5000)] = 1;
	got = ts_hist_quantile(counts, 0.5);
	assert_true(got >= 4864 && got <= 5120);
	memset(counts, 0, sizeof(counts));
	assert_true(isnan(ts_hist_quantile(counts, 0.5)));
}

static void test_delta(void **state)
{
	static struct ts_hist a, b, d;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.service[40] = 5, b.service[40] = 12, b.size[12] = 3;
	ts_hist_delta(&a, &b, &d);
	assert_int_equal(d.service[40], 7);
	assert_int_equal(d.size[12], 3);
	ts_hist_delta(NULL, &b, &d);
	assert_int_equal(d.service[40], 12);
	ts_hist_add(&d, &b);
	assert_int_equal(d.service[40], 24);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_edges),
		cmocka_unit_test(test_bucket_width),
		cmocka_unit_test(test_bucket_random),
		cmocka_unit_test(test_size_bucket),
		cmocka_unit_test(test_quantiles),
		cmocka_unit_test(test_delta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
