// SPDX-License-Identifier: GPL-2.0
/*
 * The times' unit and decimals (user/lib/units.c): ms, or us when a table's
 * smallest figure is below 0.1 ms; three significant digits for the
 * smallest figure, hence for every one; --units fixes the unit.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/units.h"

/* @ms as a table picked for @min_ms with @fixed prints it, width 0. */
static const char *put(double min_ms, enum ts_unit fixed, double ms)
{
	static char buf[64];
	struct ts_tfmt t = ts_tfmt_pick(min_ms, fixed);
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	ts_tfmt_put(f, &t, ms, 0);
	fclose(f);
	return buf;
}

static const char *unit_of(double min_ms, enum ts_unit fixed)
{
	struct ts_tfmt t = ts_tfmt_pick(min_ms, fixed);

	return ts_tfmt_unit(&t);
}

/* Automatic: ms from 0.1 ms up, us below; the switch at exactly 0.1 ms. */
static void test_switch(void **state)
{
	assert_string_equal(unit_of(8.013, TS_UNIT_AUTO), "ms");
	assert_string_equal(unit_of(0.1, TS_UNIT_AUTO), "ms");
	assert_string_equal(unit_of(0.0999, TS_UNIT_AUTO), "us");
	assert_string_equal(unit_of(0.010, TS_UNIT_AUTO), "us");
	/* no figure at all (an idle table): ms, as before */
	assert_string_equal(unit_of(INFINITY, TS_UNIT_AUTO), "ms");
	assert_string_equal(put(INFINITY, TS_UNIT_AUTO, 0), " 0.000");
}

/* ms keeps its 3 decimals at and above 0.1 ms: slow disks look as before. */
static void test_ms_as_before(void **state)
{
	assert_string_equal(put(8.013, TS_UNIT_AUTO, 8.013), " 8.013");
	assert_string_equal(put(0.1, TS_UNIT_AUTO, 0.1), " 0.100");
	assert_string_equal(put(0.5, TS_UNIT_AUTO, 1234.5678), " 1234.568");
}

/* In us, the decimals give the smallest figure 3 significant digits. */
static void test_three_digits_us(void **state)
{
	/* the NVMe read: 10 us was "0.010" */
	assert_string_equal(put(0.010, TS_UNIT_AUTO, 0.010), " 10.0");
	assert_string_equal(put(0.0999, TS_UNIT_AUTO, 0.0999), " 99.9");
	/* p50 of a fast device: 1 us was "0.001" */
	assert_string_equal(put(0.00125, TS_UNIT_AUTO, 0.00125), " 1.25");
	assert_string_equal(put(0.000432, TS_UNIT_AUTO, 0.000432), " 0.432");
	/* below 0.1 us: ns, the clock's resolution, is the limit */
	assert_string_equal(put(0.000042, TS_UNIT_AUTO, 0.000042), " 0.042");
	/* larger figures of the same table get the same decimals */
	assert_string_equal(put(0.00125, TS_UNIT_AUTO, 150.0), " 150000.00");
	/* a figure just under a power of ten never loses a digit */
	assert_string_equal(put(0.0099996, TS_UNIT_AUTO, 0.0099996), " 10.00");
}

/* Every figure from 1 ns to 100 s keeps >= 3 significant digits. */
static void test_three_digits_everywhere(void **state)
{
	enum ts_unit fixed[] = { TS_UNIT_AUTO, TS_UNIT_US, TS_UNIT_MS };
	char buf[64], *p;
	double ms;
	int i, sig;

	for (i = 0; i < 3; i++)
		for (ms = 1e-4; ms < 1e5; ms *= 1.37) {
			snprintf(buf, sizeof(buf), "%s", put(ms, fixed[i], ms));
			for (p = buf + 1; *p == '0' || *p == '.'; p++)
				;
			for (sig = 0; *p; p++)
				sig += *p != '.';
			if (sig < 3)
				fail_msg("%g ms as '%s': %d digits", ms, buf, sig);
		}
}

/* --units=us|ms fixes the unit whatever the figures; NaN is "-". */
static void test_fixed(void **state)
{
	assert_string_equal(unit_of(0.010, TS_UNIT_MS), "ms");
	assert_string_equal(put(0.010, TS_UNIT_MS, 0.010), " 0.0100");
	assert_string_equal(put(0.000042, TS_UNIT_MS, 0.000042), " 0.000042");
	assert_string_equal(unit_of(8.013, TS_UNIT_US), "us");
	assert_string_equal(put(8.013, TS_UNIT_US, 8.013), " 8013.0");
	assert_string_equal(put(8.013, TS_UNIT_US, NAN), " -");
}

static void test_parse(void **state)
{
	enum ts_unit u = TS_UNIT_AUTO;

	assert_int_equal(ts_units_parse("us", &u), 0);
	assert_int_equal(u, TS_UNIT_US);
	assert_int_equal(ts_units_parse("ms", &u), 0);
	assert_int_equal(u, TS_UNIT_MS);
	assert_int_equal(ts_units_parse("x", &u), -1);
	assert_int_equal(ts_units_parse("", &u), -1);
	assert_int_equal(ts_units_parse("MS", &u), -1);
	assert_int_equal(u, TS_UNIT_MS);
}

/* A figure in running text: its own unit, three significant digits. */
static void test_time_str(void **state)
{
	char b[32];

	assert_string_equal(ts_time_str(b, sizeof(b), 0.012, TS_UNIT_AUTO), "12.0 us");
	assert_string_equal(ts_time_str(b, sizeof(b), 0.5, TS_UNIT_AUTO), "0.500 ms");
	assert_string_equal(ts_time_str(b, sizeof(b), 8.013, TS_UNIT_AUTO), "8.013 ms");
	assert_string_equal(ts_time_str(b, sizeof(b), 0, TS_UNIT_AUTO), "0.000 ms");
	assert_string_equal(ts_time_str(b, sizeof(b), NAN, TS_UNIT_AUTO), "-");
	assert_string_equal(ts_time_str(b, sizeof(b), 0.012, TS_UNIT_MS), "0.0120 ms");
	assert_string_equal(ts_time_str(b, sizeof(b), 8.013, TS_UNIT_US), "8013.0 us");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_switch),
		cmocka_unit_test(test_ms_as_before),
		cmocka_unit_test(test_three_digits_us),
		cmocka_unit_test(test_three_digits_everywhere),
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_time_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
