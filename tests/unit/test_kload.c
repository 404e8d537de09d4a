// SPDX-License-Identifier: GPL-2.0
/*
 * The load decision (user/core/kload.c): kernels described by what the loader
 * probes in them, against what each of them has, as read from their BTF
 * (Debian's 5.10.223, 6.1, 6.12; tests/vm runs them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/kload.h"

static struct ts_load_plan p;

/* A kernel since 5.12: every hook with the request or bio first. */
static void kernel_6x(struct ts_kfeatures *f)
{
	int tp;

	memset(f, 0, sizeof(*f));
	f->release = "6.1.0-test";
	f->btf = f->bio_bdev = f->atomics = f->ringbuf = true;
	for (tp = 0; tp < TS_TP_COUNT; tp++)
		f->tp_args[tp] = ts_tp_args_now(tp);
}

/*
 * Debian's 5.10.223 (its BTF): the request hooks as since 5.11 (backported),
 * the bio hooks with the request_queue first (backmerge: q, rq, bio), bio
 * with bi_disk, and no BPF atomics with a result.
 */
static void kernel_510(struct ts_kfeatures *f)
{
	kernel_6x(f);
	f->release = "5.10.0-32-amd64";
	f->bio_bdev = false;
	f->bio_disk = true;
	f->tp_args[TS_TP_BIO_QUEUE] = 3;
	f->tp_args[TS_TP_BACKMERGE] = 4;
	f->tp_args[TS_TP_FRONTMERGE] = 4;
	f->tp_args[TS_TP_SPLIT] = 4;
	f->tp_args[TS_TP_REMAP] = 5;
	f->atomics = false;
}

static void test_6x_loads_all(void **state)
{
	struct ts_kfeatures f;
	int tp;

	kernel_6x(&f);
	ts_load_plan(&f, false, &p);
	assert_false(p.refused);
	assert_int_equal(p.nunavailable, 0);
	for (tp = 0; tp < TS_TP_COUNT; tp++) {
		assert_true(p.load[tp]);
		assert_int_equal(p.tp_shift[tp], 0);
	}
}

static void test_light_skips_bio_hooks(void **state)
{
	struct ts_kfeatures f;

	kernel_6x(&f);
	f.tp_args[TS_TP_BIO_QUEUE] = -1; /* not needed by --light */
	ts_load_plan(&f, true, &p);
	assert_false(p.refused);
	assert_true(p.load[TS_TP_ISSUE] && p.load[TS_TP_COMPLETE] &&
		    p.load[TS_TP_REQUEUE]);
	assert_false(p.load[TS_TP_BIO_QUEUE] || p.load[TS_TP_BACKMERGE] ||
		     p.load[TS_TP_REMAP] || p.load[TS_TP_BIO_COMPLETE]);
	assert_int_equal(p.nunavailable, 0);
}

/*
 * 5.10 as it is: every hook loaded, its arguments where 5.10 has them, and
 * the object whose atomic operations take locks (no cmpxchg before 5.12).
 */
static void test_510_loads_locked(void **state)
{
	struct ts_kfeatures f;
	int tp;

	kernel_510(&f);
	ts_load_plan(&f, false, &p);
	assert_false(p.refused);
	assert_true(p.locked);
	assert_int_equal(p.nunavailable, 0);
	for (tp = 0; tp < TS_TP_COUNT; tp++)
		assert_true(p.load[tp]);
	assert_int_equal(p.tp_shift[TS_TP_ISSUE], 0);
	assert_int_equal(p.tp_shift[TS_TP_COMPLETE], 0);
	assert_int_equal(p.tp_shift[TS_TP_RQ_MERGE], 0);
	assert_int_equal(p.tp_shift[TS_TP_BIO_QUEUE], 1);
	assert_int_equal(p.tp_shift[TS_TP_BACKMERGE], 2);
	assert_int_equal(p.tp_shift[TS_TP_FRONTMERGE], 2);
	assert_int_equal(p.tp_shift[TS_TP_SPLIT], 1);
	assert_int_equal(p.tp_shift[TS_TP_BIO_COMPLETE], 0);
	assert_int_equal(p.tp_shift[TS_TP_REMAP], 1);
}

/* Kernels with the atomic instructions (5.12 on) load the plain object. */
static void test_atomics_not_locked(void **state)
{
	struct ts_kfeatures f;

	kernel_6x(&f);
	ts_load_plan(&f, false, &p);
	assert_false(p.locked);
	kernel_510(&f);
	f.atomics = true;
	ts_load_plan(&f, false, &p);
	assert_false(p.refused);
	assert_false(p.locked);
}

static void test_no_btf_refused(void **state)
{
	struct ts_kfeatures f;

	kernel_6x(&f);
	f.btf = false;
	ts_load_plan(&f, false, &p);
	assert_true(p.refused);
	assert_non_null(strstr(p.why, "no kernel BTF"));
	assert_non_null(strstr(p.why, "Linux 6.1.0-test"));
}

/* A hook that is missing: required ones refuse, others are named. */
static void test_missing_hooks(void **state)
{
	struct ts_kfeatures f;

	kernel_6x(&f);
	f.tp_args[TS_TP_RQ_MERGE] = -1;
	f.tp_args[TS_TP_SPLIT] = -1;
	ts_load_plan(&f, false, &p);
	assert_false(p.refused);
	assert_false(p.load[TS_TP_RQ_MERGE] || p.load[TS_TP_SPLIT]);
	assert_true(p.load[TS_TP_ISSUE] && p.load[TS_TP_BACKMERGE]);
	assert_int_equal(p.nunavailable, 2);
	assert_non_null(strstr(p.unavailable[0], "request merges"));
	assert_non_null(strstr(p.unavailable[0], "no block_rq_merge tracepoint"));
	assert_non_null(strstr(p.unavailable[1], "splits"));

	f.tp_args[TS_TP_COMPLETE] = -1;
	ts_load_plan(&f, false, &p);
	assert_true(p.refused);
	assert_non_null(strstr(p.why, "no block_rq_complete tracepoint"));
	assert_false(p.load[TS_TP_ISSUE]);
}

/* Arguments where no known kernel has them: refused, not guessed. */
static void test_unknown_layout(void **state)
{
	struct ts_kfeatures f;

	kernel_6x(&f);
	f.tp_args[TS_TP_ISSUE] = 1; /* fewer than since 5.11 */
	ts_load_plan(&f, false, &p);
	assert_true(p.refused);
	assert_non_null(strstr(p.why, "block_rq_issue tracepoint takes 0 arguments, not 1 to 3"));

	kernel_6x(&f);
	f.bio_bdev = false; /* neither bi_bdev nor bi_disk */
	ts_load_plan(&f, false, &p);
	assert_true(p.refused);
	assert_non_null(strstr(p.why, "neither bi_bdev nor bi_disk"));
}

static void test_ringbuf(void **state)
{
	struct ts_kfeatures f;

	kernel_6x(&f);
	f.ringbuf = false;
	ts_load_plan(&f, false, &p);
	assert_true(p.refused);
	assert_non_null(strstr(p.why, "ring buffer (Linux 5.8)"));
}

/* A program is of the hook its section names, whatever its attach kind. */
static void test_hook_of_section(void **state)
{
	char section[64];
	int tp;

	(void)state;
	for (tp = 0; tp < TS_TP_COUNT; tp++) {
		snprintf(section, sizeof(section), "tp_btf/%s", ts_tp_name(tp));
		assert_int_equal(ts_tp_of_section(section), tp);
		snprintf(section, sizeof(section), "raw_tp/%s", ts_tp_name(tp));
		assert_int_equal(ts_tp_of_section(section), tp);
	}
	assert_int_equal(ts_tp_of_section("tp_btf/block_rq_issue"), TS_TP_ISSUE);
	assert_int_equal(ts_tp_of_section("syscall"), TS_TP_COUNT);
	assert_int_equal(ts_tp_of_section("tp_btf/block_rq_insert"), TS_TP_COUNT);
	assert_int_equal(ts_tp_of_section("tp_btf/block_rq_issue_x"), TS_TP_COUNT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_6x_loads_all),
		cmocka_unit_test(test_light_skips_bio_hooks),
		cmocka_unit_test(test_510_loads_locked),
		cmocka_unit_test(test_atomics_not_locked),
		cmocka_unit_test(test_no_btf_refused),
		cmocka_unit_test(test_missing_hooks),
		cmocka_unit_test(test_unknown_layout),
		cmocka_unit_test(test_ringbuf),
		cmocka_unit_test(test_hook_of_section),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
