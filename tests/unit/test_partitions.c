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

#include "features/partitions.h"

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

static void put(struct ts_part_table *t, unsigned int qid, unsigned int no,
		int op, __u64 ios, __u64 merges)
{
	struct ts_part_entry *e = &t->e[t->n++];

	memset(e, 0, sizeof(*e));
	e->key = ts_part_key(qid, no);
	e->s.op[op].ios = ios;
	e->s.op[op].bytes = ios * 4096;
	e->s.op[op].service_ns = ios * 1000000;
	e->s.op[op].merges = merges;
}

/* Slot 5 is loop3 (7:3); slot 9 is no disk of the report. */
static void tables(void)
{
	memset(&r, 0, sizeof(r));
	r.ndev = 1;
	r.dev[0].qid = 5;
	r.dev[0].major = 7;
	r.dev[0].minor = 3;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_list),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
