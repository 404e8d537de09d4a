// SPDX-License-Identifier: GPL-2.0
/*
 * --by's table kept from filling (user/features/who.c): which entries are folded
 * (past 3/4 full, idle since the read before, least recent first, never
 * the "not known" row), and spans across a fold counting each request once,
 * also when the submitter comes back before the next report.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "features/who.h"

static struct ts_who_ledger ledger;
static struct ts_who_table a, b;
static struct ts_who_span span;
static int pick[TS_WHO_ENTRIES];

/* @t: @n submitters (ids 1..n) of device 0's reads, id i with @ios(i) */
static void fill(struct ts_who_table *t, int n, __u64 (*ios)(int))
{
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < n; i++) {
		t->e[i].key = (struct ts_who_key){ .id = i + 1 };
		t->e[i].s.ios = ios(i + 1);
		t->e[i].s.total_ns = 1000 * t->e[i].s.ios;
	}
	t->n = n;
}

static __u64 one(int id)
{
	return 1;
}

/* the first 100 ids ran again since the read before */
static __u64 first_ran(int id)
{
	return id <= 100 ? 2 : 1;
}

static void test_room_left_alone(void **state)
{
	memset(&ledger, 0, sizeof(ledger));
	fill(&a, TS_WHO_ENTRIES * 3 / 4, one);
	assert_int_equal(ts_who_pick(&ledger, &a, pick), 0);
	assert_int_equal(ts_who_pick(&ledger, &a, pick), 0);
}

static void test_idle_folded_to_half(void **state)
{
	int i, n;

	memset(&ledger, 0, sizeof(ledger));
	fill(&a, 900, one);
	a.e[0].key.id = 0; /* "not known": never folded */
	assert_int_equal(ts_who_pick(&ledger, &a, pick), 0); /* all new */
	fill(&b, 900, first_ran);
	b.e[0].key.id = 0;
	n = ts_who_pick(&ledger, &b, pick);
	assert_int_equal(n, 900 - TS_WHO_ENTRIES / 2);
	for (i = 0; i < n; i++) /* none that ran, nor "not known" */
		assert_true(b.e[pick[i]].key.id > 100);
	for (i = 0; i < n; i++)
		ts_who_fold(&ledger, &b.e[pick[i]]);
	ts_who_add_folded(&ledger, pick, n, &b);
	assert_int_equal(b.n, TS_WHO_ENTRIES / 2 + 1);
	assert_int_equal(b.e[b.n - 1].key.id, TS_WHO_FOLDED);
	assert_int_equal(b.e[b.n - 1].folded, n);
	assert_int_equal(b.e[b.n - 1].s.ios, n);
}

/* A fold between two reads: the span has each request once. */
static void test_span_across_fold(void **state)
{
	struct ts_who_entry gone;

	memset(&ledger, 0, sizeof(ledger));
	fill(&a, 3, one); /* ids 1..3, one request each */
	gone = a.e[2];
	gone.s.ios = 5; /* id 3 ran 4 more, then was folded */
	gone.s.total_ns = 5000;
	b = a;
	b.e[0].s.ios = 2;
	b.e[0].s.total_ns = 2000;
	ts_who_fold(&ledger, &gone);
	ts_who_add_folded(&ledger, (int[]){ 2 }, 1, &b);
	ts_who_delta(&a, &b, 1.0, &span);
	/* id 1: 1 more; id 2: none (left out); folded: id 3's 4 more */
	assert_int_equal(span.n, 2);
	assert_int_equal(span.e[0].key.id, 1);
	assert_int_equal(span.e[0].s.ios, 1);
	assert_int_equal(span.e[1].key.id, TS_WHO_FOLDED);
	assert_int_equal(span.e[1].s.ios, 4);
	assert_int_equal(span.e[1].s.total_ns, 4000);
	assert_int_equal(span.e[1].folded, 1);
	/* since the start: the folded entry whole */
	ts_who_delta(NULL, &b, 1.0, &span);
	assert_int_equal(span.e[span.n - 1].s.ios, 5);
}

/* Folded, then made again before the next report: two entries. */
static void test_made_again(void **state)
{
	struct ts_who_entry gone;

	memset(&ledger, 0, sizeof(ledger));
	fill(&a, 1, one);
	a.e[0].s.ios = 3;
	a.e[0].born = 1;
	gone = a.e[0];
	gone.s.ios = 4; /* one more, then folded */
	ts_who_fold(&ledger, &gone);
	b = a;
	b.e[0].s.ios = 1; /* the new entry: one request */
	b.e[0].born = 2;
	ts_who_add_folded(&ledger, NULL, 0, &b);
	ts_who_delta(&a, &b, 1.0, &span);
	assert_int_equal(span.n, 2);
	assert_int_equal(span.e[0].key.id, 1);
	assert_int_equal(span.e[0].s.ios, 1);
	assert_int_equal(span.e[1].key.id, TS_WHO_FOLDED);
	assert_int_equal(span.e[1].s.ios, 1);
}

/* Rows of a device by direction: a write never among the reads. */
static void test_rows_by_direction(void **state)
{
	fill(&a, 3, one);
	a.e[1].key.op = 1; /* a write, its total time between the reads' */
	a.e[0].s.total_ns = 3000;
	a.e[1].s.total_ns = 2000;
	ts_who_delta(NULL, &a, 1.0, &span);
	assert_int_equal(span.e[0].key.op, 0);
	assert_int_equal(span.e[1].key.op, 0);
	assert_int_equal(span.e[2].key.op, 1);
}

/* Disk @d's section of @span, printed into @buf. */
static void print_disk(struct ts_flags_disk d, char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	assert_non_null(f);
	ts_who_print(f, &span, TS_UNIT_AUTO, d, "x", 0);
	fclose(f);
}

/*
 * A slot's claims: the disk that took the slot has its own claim's rows
 * only; a gone disk's totals row sums its number's gone lives (claims 10
 * and 20 of disk 5, in slots 0 and 1), one submitter's entries as one row.
 */
static void test_claims_of_a_slot(void **state)
{
	static const struct ts_who_key keys[] = {
		{ .id = 7, .qid = 0, .claimed_ns = 10, .dev = 5 },
		{ .id = 7, .qid = 1, .claimed_ns = 20, .dev = 5 },
		{ .id = 7, .qid = 0, .claimed_ns = 30, .dev = 9 },
	};
	struct ts_flags_disk gone = { 0, 10, 5, 20 }, now = { 0, 30, 9, 0 };
	static char buf[4096];
	int i;

	memset(&a, 0, sizeof(a));
	for (i = 0; i < 3; i++) {
		a.e[i].key = keys[i];
		a.e[i].s.ios = 2 + i; /* 2, 3 and 4 */
		a.e[i].s.total_ns = 1000 * a.e[i].s.ios;
		memcpy(a.e[i].s.comm, "dd", 3);
	}
	a.n = 3;
	ts_who_delta(NULL, &a, 1.0, &span);
	span.by = TS_BY_PROCESS;
	span.top = 10;
	assert_true(ts_who_of(&keys[2], now));
	assert_false(ts_who_of(&keys[0], now));
	assert_true(ts_who_of(&keys[1], gone));
	assert_false(ts_who_of(&keys[2], gone));
	print_disk(now, buf, sizeof(buf));
	assert_non_null(strstr(buf, "  read           4 "));
	assert_null(strstr(buf, "  read           5 "));
	print_disk(gone, buf, sizeof(buf));
	assert_non_null(strstr(buf, "  read           5 "));
	assert_null(strstr(strstr(buf, "pid 7") + 1, "pid 7")); /* one row */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_room_left_alone),
		cmocka_unit_test(test_idle_folded_to_half),
		cmocka_unit_test(test_span_across_fold),
		cmocka_unit_test(test_made_again),
		cmocka_unit_test(test_rows_by_direction),
		cmocka_unit_test(test_claims_of_a_slot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
