// SPDX-License-Identifier: GPL-2.0
/* The parallelism curve (user/features/curve.c) from synthetic depth-time tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "truestat.h"
#include "features/curve.h"

#define S_NS 2000000ULL /* 2 ms */
#define SEC 1000000000ULL

static struct ts_depth_counts h;
static __s64 at_least[TS_LEVEL_SLOTS];

/* @secs seconds at depth @d, with requests of service @svc issued there. */
static void spend(unsigned int d, double secs, __u64 svc)
{
	unsigned int c = ts_depth_class(d);
	__u64 n = secs * SEC * d / svc; /* Little: completions at this depth */
	int slot;

	for (slot = 0; slot < TS_LEVEL_SLOTS; slot++)
		if (ts_slot_level(slot) <= d)
			at_least[slot] += secs * SEC;
	h.service[c][ts_hist_bucket(svc)] += n;
}

static void reset(void)
{
	memset(&h, 0, sizeof(h));
	memset(at_least, 0, sizeof(at_least));
}

/* K units: S up to depth K, d/K x S beyond. */
static void device(unsigned int k)
{
	static const unsigned int offered[] = { 1, 2, 4, 8, 16, 32 };
	unsigned int i, d;

	reset();
	for (i = 0; i < 6; i++) {
		d = offered[i];
		spend(d, 1.0, d <= k ? S_NS : S_NS * d / k);
	}
}

static void test_parallel_device(void **state)
{
	struct ts_curve c;

	device(8);
	ts_curve_build(&h, at_least, 0, 6 * SEC, 4000, 4.0, &c);
	assert_int_equal(c.nrows, 6);
	assert_true(c.row[3].lo == 5 && c.row[3].hi == 8);
	assert_float_equal(c.row[3].mean_depth, 8, 1e-9);
	/* Little: 8 / 2 ms, within the bucket's middle (6.25%) */
	assert_float_equal(c.row[3].iops, 4000, 4000 / 16.0);
	assert_false(c.still_growing);
	assert_int_equal(c.row[c.parallelism_row].hi, 8);
	/* 32 on 8 units: 8 ms, 4x depth 1's p95: saturated from 17-32 */
	assert_int_equal(c.saturation_row, 5);
	/* now at mean depth 4 (class 3-4): 2000 IOPS there, 4000 deeper */
	assert_true(c.best_row >= 3);
	assert_float_equal(c.headroom, 1.0, 0.07);
}

static void test_serial_device(void **state)
{
	struct ts_curve c;

	device(1);
	ts_curve_build(&h, at_least, 0, 6 * SEC, 500, 1.0, &c);
	assert_false(c.still_growing);
	assert_int_equal(c.row[c.parallelism_row].hi, 1);
	assert_int_equal(c.saturation_row, 2); /* 3-4: 4 S > 3 S */
	assert_float_equal(c.row[4].iops, 500, 500 / 16.0);
}

static void test_evidence(void **state)
{
	struct ts_curve c;

	/* one depth only: nothing to compare */
	reset();
	spend(1, 1.0, S_NS);
	ts_curve_build(&h, at_least, 0, SEC, 500, 1.0, &c);
	assert_int_equal(c.parallelism_row, -1);
	assert_int_equal(c.best_row, -1);
	assert_true(isnan(c.headroom));
	assert_int_equal(c.saturation_row, -1);

	/* a deeper depth seen for 5 ms of 10 s: too little to use */
	spend(16, 0.005, S_NS);
	ts_curve_build(&h, at_least, 0, 10 * SEC, 500, 1.0, &c);
	assert_false(c.row[4].evidence);
	assert_int_equal(c.parallelism_row, -1);

	/* throughput still growing at the deepest depth seen */
	device(64);
	ts_curve_build(&h, at_least, 0, 6 * SEC, 500, 1.0, &c);
	assert_true(c.still_growing);
	assert_int_equal(c.row[c.parallelism_row].hi, 32);

	/* no depth-1 evidence: saturation cannot be judged */
	reset();
	spend(4, 1.0, S_NS);
	spend(8, 1.0, S_NS);
	ts_curve_build(&h, at_least, 0, 2 * SEC, 500, 4.0, &c);
	assert_int_equal(c.saturation_row, -2);
}

/*
 * What held the device at its depths. Its busy share 1.0 (every row is
 * spent busy), the OS queue's share as given.
 */
static void test_limit(void **state)
{
	struct ts_curve c;

	/* 8 units, offered up to 32: a plateau, whatever the OS queue held */
	device(8);
	ts_curve_build(&h, at_least, 0, 6 * SEC, 4000, 4.0, &c);
	assert_int_equal(ts_curve_limit_of(&c, 100, 1.0, 0), TS_LIMIT_DEVICE);
	assert_int_equal(ts_curve_limit_of(&c, 0, 1.0, 0), TS_LIMIT_DEVICE);
	assert_int_equal(ts_curve_limit_of(&c, 0, 1.0, 1.0), TS_LIMIT_DEVICE);
	assert_int_equal(ts_curve_limit_of(&c, 0, 1.0, NAN), TS_LIMIT_DEVICE);

	/* 64 units, still growing at 32 */
	device(64);
	ts_curve_build(&h, at_least, 0, 6 * SEC, 500, 1.0, &c);
	assert_true(c.still_growing);
	/* an empty OS queue, or one that held a request only in passing */
	assert_int_equal(ts_curve_limit_of(&c, 0, 1.0, 0), TS_LIMIT_ABOVE);
	assert_int_equal(ts_curve_limit_of(&c, 0, 0.8, 0.005), TS_LIMIT_ABOVE);
	/* requests waited in the OS for most of the device's busy time */
	assert_int_equal(ts_curve_limit_of(&c, 0, 0.8, 0.79), TS_LIMIT_OS_QUEUE);
	assert_int_equal(ts_curve_limit_of(&c, 0, 0.8, 0.4), TS_LIMIT_OS_QUEUE);
	assert_int_equal(ts_curve_limit_of(&c, 0, 0.8, 0.39), TS_LIMIT_ABOVE);
	/* the OS queue not followed (--light): nothing to tell by */
	assert_int_equal(ts_curve_limit_of(&c, 0, 1.0, NAN), TS_LIMIT_UNKNOWN);
	/*
	 * the depth counter too high at times: the row 17-32 (mean 32) was
	 * at least 31 deep with 1 too many (still growing from 9-16's 16),
	 * at least 12 with 20 (then not)
	 */
	assert_int_equal(ts_curve_limit_of(&c, 1, 1.0, 0), TS_LIMIT_ABOVE);
	assert_int_equal(ts_curve_limit_of(&c, 20, 1.0, 0), TS_LIMIT_UNKNOWN);

	/* one depth only (two psync jobs in step): still said */
	reset();
	spend(2, 1.0, S_NS);
	ts_curve_build(&h, at_least, 0, SEC, 1000, 2.0, &c);
	assert_int_equal(c.parallelism_row, -1);
	assert_int_equal(ts_curve_limit_of(&c, 0, 1.0, 0), TS_LIMIT_ABOVE);
	assert_int_equal(ts_curve_limit_of(&c, 0, 1.0, 1.0), TS_LIMIT_OS_QUEUE);
	/* misfiled or not, a lone row shows no growth to doubt */
	assert_int_equal(ts_curve_limit_of(&c, 5, 1.0, 0), TS_LIMIT_ABOVE);

	/* no evidence at all: no verdict */
	reset();
	spend(1, 0.005, S_NS);
	ts_curve_build(&h, at_least, 0, 10 * SEC, 1, 1.0, &c);
	assert_int_equal(ts_curve_limit_of(&c, 0, 0.0005, 0), TS_LIMIT_UNKNOWN);
}

/* A second at depth @a, one at @b, all at S. */
static void at_two(unsigned int a, unsigned int b, struct ts_curve *c)
{
	reset();
	spend(a, 1.0, S_NS);
	spend(b, 1.0, S_NS);
	ts_curve_build(&h, at_least, 0, 2 * SEC, 1000, (a + b) / 2.0, c);
	assert_true(c->still_growing);
}

/* Growth that a depth counter @excess too high at times could fake. */
static void test_limit_misfiled(void **state)
{
	struct ts_curve c;

	/* 1 and 4, two classes apart: 4 - 1 still grows +73% a doubling */
	at_two(1, 4, &c);
	assert_int_equal(ts_curve_limit_of(&c, 1, 1.0, 0), TS_LIMIT_ABOVE);
	/* 4 - 3 does not grow */
	assert_int_equal(ts_curve_limit_of(&c, 3, 1.0, 0), TS_LIMIT_UNKNOWN);
	/* two readers at 1 and 2: one too many at 2 leaves no growth */
	at_two(1, 2, &c);
	assert_int_equal(ts_curve_limit_of(&c, 0, 1.0, 0), TS_LIMIT_ABOVE);
	assert_int_equal(ts_curve_limit_of(&c, 1, 1.0, 0), TS_LIMIT_UNKNOWN);
}

static void test_classes(void **state)
{
	assert_int_equal(ts_depth_class(0), 0);
	assert_int_equal(ts_depth_class(1), 0);
	assert_int_equal(ts_depth_class(2), 1);
	assert_int_equal(ts_depth_class(3), 2);
	assert_int_equal(ts_depth_class(4), 2);
	assert_int_equal(ts_depth_class(5), 3);
	assert_int_equal(ts_depth_class(8), 3);
	assert_int_equal(ts_depth_class(9), 4);
	assert_int_equal(ts_depth_class(2048), 11);
	assert_int_equal(ts_depth_class(100000), TS_DEPTH_CLASSES - 1);
}

/*
 * The kernel's 32-bit buckets, started just below 2^32 and read after
 * every ~0.99 billion completions: the widened counts are exactly what
 * was added, past several wraps, and so is the curve's class total.
 */
static void test_widen(void **state)
{
	static struct ts_depth_hist kernel, seen;
	static struct ts_depth_counts total, delta;
	static struct ts_curve c;
	__u64 added = 0, step = 987654321;
	int i, b = ts_hist_bucket(S_NS);

	kernel.service[2][b] = seen.service[2][b] = 0xfffffffdU;
	kernel.service[0][0] = seen.service[0][0] = 7;
	for (i = 0; i < 20; i++) {
		kernel.service[2][b] += step;
		kernel.service[0][0] += 1;
		added += step;
		ts_depth_widen(&total, &seen, &kernel);
		assert_true(total.service[2][b] == added);
		assert_true(total.service[0][0] == (__u64)i + 1);
	}
	assert_true(added > 4 * (1ULL << 32));
	ts_depth_counts_delta(NULL, &total, &delta);
	reset();
	spend(3, 1.0, S_NS);
	ts_curve_build(&delta, at_least, 0, SEC, 1000, 3.0, &c);
	assert_true(c.row[2].completions == added);
	assert_true(c.row[0].completions == 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_parallel_device),
		cmocka_unit_test(test_serial_device),
		cmocka_unit_test(test_evidence),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_limit_misfiled),
		cmocka_unit_test(test_widen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
