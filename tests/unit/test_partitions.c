// SPDX-License-Identifier: GPL-2.0
/* -p: partition rows from two readings of the table, named from a fake sysfs. */
#define _GNU_SOURCE
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/report_parts.h"

static char root[PATH_MAX];
static struct ts_report r;
static struct ts_part_table a, b;
static struct ts_part_span span;

/* ROOT/dev/block/7:3/@part/partition holding @no */
static void add_part(const char *part, const char *no)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/dev/block/7:3/%s", root, part);
	assert_int_equal(mkdir(path, 0755), 0);
	strcat(path, "/partition");
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(no, f);
	fclose(f);
}

static int setup(void **state)
{
	char path[PATH_MAX];

	(void)state;
	strcpy(root, "/tmp/truestat-sysfs-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(path, sizeof(path), "%s/dev", root);
	mkdir(path, 0755);
	strcat(path, "/block");
	mkdir(path, 0755);
	strcat(path, "/7:3");
	mkdir(path, 0755);
	add_part("loop3p2", "2\n");
	add_part("loop3p1", "1\n");
	add_part("power", "x\n"); /* not a partition: no number */
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	(void)state;
	return nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Slot @qid's partition @no under claim @claim: @ios of 4 KiB, 1 ms each. */
static void put_claim(struct ts_part_table *t, unsigned int qid, __u64 claim,
		      unsigned int no, int op, __u64 ios, __u64 merges)
{
	struct ts_part_entry *e = &t->e[t->n++];

	memset(e, 0, sizeof(*e));
	e->key.slot_part = ts_part_key(qid, no);
	e->key.claimed_ns = claim;
	e->s.op[op].ios = ios;
	e->s.op[op].bytes = ios * 4096;
	e->s.op[op].service_ns = ios * 1000000;
	e->s.op[op].merges = merges;
}

static void put(struct ts_part_table *t, unsigned int qid, unsigned int no,
		int op, __u64 ios, __u64 merges)
{
	put_claim(t, qid, 1000, no, op, ios, merges);
}

/* Slot 5 is loop3 (7:3); slot 9 is no disk of the report. */
static void tables(void)
{
	memset(&r, 0, sizeof(r));
	r.ndev = 1;
	r.dev[0].qid = 5;
	r.dev[0].major = 7;
	r.dev[0].minor = 3;
	r.dev[0].claimed_ns = 1000;
	r.span_s = 2;
	a.n = b.n = 0;
	put(&a, 5, 2, TS_OP_WRITE, 10, 1);
	put(&b, 9, 1, TS_OP_READ, 50, 0);
	put(&b, 5, 2, TS_OP_WRITE, 30, 5);
	put(&b, 5, 7, TS_OP_READ, 2, 0);
	put(&b, 5, 1, TS_OP_READ, 4, 0);
}

static void test_rows(void **state)
{
	(void)state;
	tables();
	ts_part_delta(&a, &b, &r, root, NULL, &span);
	assert_int_equal(span.n, 3);
	/* by number, named by their partition file; one without: its number */
	assert_string_equal(span.row[0].name, "loop3p1");
	assert_string_equal(span.row[1].name, "loop3p2");
	assert_string_equal(span.row[2].name, "7:3#7");
	assert_int_equal(span.row[0].op[TS_OP_READ].ios, 4);
	assert_true(span.row[0].op[TS_OP_READ].iops == 2);
	/* the span's: 30 - 10 writes, 5 - 1 merges */
	assert_int_equal(span.row[1].op[TS_OP_WRITE].ios, 20);
	assert_int_equal(span.row[1].op[TS_OP_WRITE].merges, 4);
	assert_int_equal(span.row[1].all.ios, 20);
	assert_int_equal(span.row[1].nops_active, 1);
	assert_true(fabs(span.row[1].op[TS_OP_WRITE].service_ms - 1) < 1e-9);
	/* from the start (totals) */
	ts_part_delta(NULL, &b, &r, root, NULL, &span);
	assert_int_equal(span.row[1].op[TS_OP_WRITE].ios, 30);
}

static void test_list(void **state)
{
	(void)state;
	tables();
	ts_part_delta(&a, &b, &r, root, "loop3p2", &span);
	assert_int_equal(span.n, 1);
	assert_string_equal(span.row[0].name, "loop3p2");
	/* a prefix is not the name */
	ts_part_delta(&a, &b, &r, root, "loop3p,loop3p1", &span);
	assert_int_equal(span.n, 1);
	assert_string_equal(span.row[0].name, "loop3p1");
}

/*
 * Slot 5 given to another disk (claim 2000) after loop3's claim 1000 ended:
 * each disk's rows hold its own entries only, in an interval and in the
 * totals, where the gone disk is beside the new one.
 */
static void test_claims(void **state)
{
	(void)state;
	tables();
	r.ndev = 2;
	r.dev[1] = r.dev[0];
	r.dev[1].claimed_ns = 2000;
	put_claim(&b, 5, 2000, 1, TS_OP_READ, 3, 0);
	ts_part_delta(&a, &b, &r, root, NULL, &span);
	assert_int_equal(span.n, 4);
	/* loop3's three rows first (by claim), then the new disk's p1 */
	assert_int_equal(span.row[0].claimed_ns, 1000);
	assert_int_equal(span.row[0].op[TS_OP_READ].ios, 4);
	assert_int_equal(span.row[3].claimed_ns, 2000);
	assert_int_equal(span.row[3].partno, 1);
	assert_int_equal(span.row[3].op[TS_OP_READ].ios, 3);
	ts_part_delta(NULL, &b, &r, root, NULL, &span);
	assert_int_equal(span.row[3].op[TS_OP_READ].ios, 3);
	/* the new disk alone in the report: the gone one's entries no row */
	r.ndev = 1;
	r.dev[0].claimed_ns = 2000;
	ts_part_delta(&a, &b, &r, root, NULL, &span);
	assert_int_equal(span.n, 1);
	assert_int_equal(span.row[0].op[TS_OP_READ].ios, 3);
}

/* Requests of the disk missed for a full table: its rows say so. */
static void test_incomplete(void **state)
{
	(void)state;
	tables();
	ts_part_delta(&a, &b, &r, root, NULL, &span);
	assert_false(span.row[0].incomplete);
	r.dev[0].events[TS_EV_PART_FULL] = 2;
	ts_part_delta(&a, &b, &r, root, NULL, &span);
	assert_true(span.row[0].incomplete);
	assert_true(span.row[2].incomplete);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_incomplete),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
