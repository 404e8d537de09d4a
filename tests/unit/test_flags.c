// SPDX-License-Identifier: GPL-2.0
/*
 * -F's classes: combinations summed into overlapping classes (a request in
 * each class whose bit it has, in none when it has no bit, in all once),
 * kept apart by device and op, a slot's claims apart (a disk that takes a
 * gone disk's slot has none of its counts), and the span's counts as
 * differences.
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

/* The claim of slot qid in these tests, unless a test says another. */
#define CLAIM 1000

static void put_claim(struct ts_flags_table *t, unsigned int qid,
		      __u64 claimed_ns, int op, unsigned int bits, __u64 ios)
{
	struct ts_flags_entry *e = &t->e[t->n++];

	memset(e, 0, sizeof(*e));
	e->key.qid = qid;
	e->key.claimed_ns = claimed_ns;
	e->key.op = op;
	e->key.bits = bits;
	e->s.ios = ios;
	e->s.service[10] = ios;
}

static void put(struct ts_flags_table *t, unsigned int qid, int op,
		unsigned int bits, __u64 ios)
{
	put_claim(t, qid, CLAIM, op, bits, ios);
}

static __u64 claim_ios(const struct ts_flags_table *t, unsigned int qid,
		       __u64 claimed_ns, int op, int class)
{
	ts_flags_class(t, (struct ts_flags_disk){ qid, claimed_ns, 0, 0 }, op,
		       class, &s);
	return s.ios;
}

static __u64 class_ios(const struct ts_flags_table *t, unsigned int qid,
		       int op, int class)
{
	return claim_ios(t, qid, CLAIM, op, class);
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

/* A new disk in a gone one's slot: each claim its own, in a span too. */
static void test_claims(void **state)
{
	a.n = b.n = 0;
	put(&a, 3, TS_OP_READ, 0, 2000);
	put(&b, 3, TS_OP_READ, 0, 2000);
	put_claim(&b, 3, CLAIM + 1, TS_OP_READ, 0, 100);
	put_claim(&b, 3, CLAIM + 1, TS_OP_READ, 1 << TS_FLAG_SYNC, 7);
	assert_int_equal(claim_ios(&b, 3, CLAIM + 1, TS_OP_READ,
				   TS_NR_FLAG_CLASSES), 107);
	assert_int_equal(class_ios(&b, 3, TS_OP_READ, TS_NR_FLAG_CLASSES),
			 2000);
	ts_flags_delta(&a, &b, &d);
	assert_int_equal(claim_ios(&d, 3, CLAIM + 1, TS_OP_READ, TS_FLAG_NONE),
			 100);
	assert_int_equal(class_ios(&d, 3, TS_OP_READ, TS_NR_FLAG_CLASSES), 0);
	assert_int_equal(claim_ios(&d, 4, CLAIM + 1, TS_OP_READ,
				   TS_NR_FLAG_CLASSES), 0);
}

/* @not_counted completions lost to a full table: the section says so. */
static const char *printed(unsigned long long not_counted)
{
	static char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	ts_flags_print(f, &b, TS_UNIT_AUTO,
		       (struct ts_flags_disk){ 3, CLAIM, 0, 0 },
		       "loop9", not_counted);
	fclose(f);
	return buf;
}

static void test_table_full(void **state)
{
	b.n = 0;
	put(&b, 3, TS_OP_READ, 0, 5);
	assert_null(strstr(printed(0), "INCOMPLETE"));
	assert_non_null(strstr(printed(7), "INCOMPLETE: 7 completions not counted"));
	b.n = 0;
	assert_non_null(strstr(printed(7), "INCOMPLETE: 7 completions not counted"));
	assert_null(strstr(printed(7), "bio-based"));
}

/*
 * A gone disk's totals row with two lives of its number (dev 7), on slots
 * 3 then 4: both lives' entries, not those of another disk on slot 4 nor
 * of the number's live disk claimed later.
 */
static void test_gone_lives(void **state)
{
	struct ts_flags_disk gone = { 3, CLAIM, 7, CLAIM + 20 };
	struct ts_flags_disk live = { 5, CLAIM + 30, 7, CLAIM + 30 };

	b.n = 0;
	put_claim(&b, 3, CLAIM, TS_OP_READ, 0, 2000);
	put_claim(&b, 4, CLAIM + 20, TS_OP_READ, 0, 300);
	b.e[1].key.dev = b.e[0].key.dev = 7;
	put_claim(&b, 4, CLAIM + 25, TS_OP_READ, 0, 50); /* dev 0 */
	put_claim(&b, 5, CLAIM + 30, TS_OP_READ, 0, 9);
	b.e[3].key.dev = 7;
	ts_flags_class(&b, gone, TS_OP_READ, TS_NR_FLAG_CLASSES, &s);
	assert_int_equal(s.ios, 2300);
	ts_flags_class(&b, live, TS_OP_READ, TS_NR_FLAG_CLASSES, &s);
	assert_int_equal(s.ios, 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_gone_lives),
		cmocka_unit_test(test_table_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
