// SPDX-License-Identifier: GPL-2.0
/*
 * -F's classes: combinations summed into overlapping classes (a request in
 * each class whose bit it has, in none when it has no bit, in all once),
 * kept apart by device and op, and the span's counts as differences.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "features/flags.h"

static struct ts_flags_table a, b, d;
static struct ts_flags_stats s;

static void put(struct ts_flags_table *t, unsigned int qid, int op,
		unsigned int bits, __u64 ios)
{
	struct ts_flags_entry *e = &t->e[t->n++];

	memset(e, 0, sizeof(*e));
	e->key.qid = qid;
	e->key.op = op;
	e->key.bits = bits;
	e->s.ios = ios;
	e->s.service[10] = ios;
}

static __u64 class_ios(const struct ts_flags_table *t, unsigned int qid,
		       int op, int class)
{
	ts_flags_class(t, qid, op, class, &s);
	return s.ios;
}

static void test_classes(void **state)
{
	b.n = 0;
	put(&b, 3, TS_OP_WRITE, 1 << TS_FLAG_SYNC, 10);
	put(&b, 3, TS_OP_WRITE, 1 << TS_FLAG_SYNC | 1 << TS_FLAG_FUA, 4);
	put(&b, 3, TS_OP_WRITE, 0, 2);
	put(&b, 3, TS_OP_READ, 1 << TS_FLAG_READAHEAD, 7);
	put(&b, 5, TS_OP_WRITE, 1 << TS_FLAG_SYNC, 100);
	assert_int_equal(class_ios(&b, 3, TS_OP_WRITE, TS_FLAG_SYNC), 14);
	assert_int_equal(s.service[10], 14);
	assert_int_equal(class_ios(&b, 3, TS_OP_WRITE, TS_FLAG_FUA), 4);
	assert_int_equal(class_ios(&b, 3, TS_OP_WRITE, TS_FLAG_NONE), 2);
	assert_int_equal(class_ios(&b, 3, TS_OP_WRITE, TS_NR_FLAG_CLASSES), 16);
	assert_int_equal(class_ios(&b, 3, TS_OP_WRITE, TS_FLAG_READAHEAD), 0);
	assert_int_equal(class_ios(&b, 3, TS_OP_READ, TS_FLAG_READAHEAD), 7);
	assert_int_equal(class_ios(&b, 5, TS_OP_WRITE, TS_FLAG_SYNC), 100);
}

static void test_delta(void **state)
{
	a.n = b.n = 0;
	put(&a, 3, TS_OP_WRITE, 1 << TS_FLAG_SYNC, 10);
	put(&b, 3, TS_OP_READ, 0, 5); /* new since a */
	put(&b, 3, TS_OP_WRITE, 1 << TS_FLAG_SYNC, 25);
	ts_flags_delta(&a, &b, &d);
	assert_int_equal(class_ios(&d, 3, TS_OP_WRITE, TS_FLAG_SYNC), 15);
	assert_int_equal(s.service[10], 15);
	assert_int_equal(class_ios(&d, 3, TS_OP_READ, TS_FLAG_NONE), 5);
	ts_flags_delta(NULL, &b, &d);
	assert_int_equal(class_ios(&d, 3, TS_OP_WRITE, TS_FLAG_SYNC), 25);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_delta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
