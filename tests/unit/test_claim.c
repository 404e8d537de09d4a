// SPDX-License-Identifier: GPL-2.0
/*
 * ts_claim_settled and ts_claim_held on a slot claimed by another thread;
 * ts_claim_counts, a slot's counters per disk.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/claim.h"

#define QUEUE_A 0xffff888100a00000ULL
#define QUEUE_B 0xffff888100b00000ULL

static struct ts_dev_state st;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A claim as bpf/devices.bpf.h makes it: bit 0 set, reset, published. */
static void claim_begin(__u64 queue, __u64 claimed_ns)
{
	__atomic_store_n(&st.queue, queue + 1, __ATOMIC_SEQ_CST);
	st.claimed_ns = claimed_ns;
}

static void *publish_b_later(void *arg)
{
	usleep(20000);
	__atomic_store_n(&st.queue, QUEUE_B, __ATOMIC_RELEASE);
	return arg;
}

static void test_published(void **state)
{
	struct ts_claim c;

	st.queue = QUEUE_A;
	st.claimed_ns = 5;
	assert_true(ts_claim_settled(&st, &c, 0));
	assert_int_equal(c.queue, QUEUE_A);
	assert_int_equal(c.claimed_ns, 5);
	assert_true(ts_claim_held(&st, &c));
}

/* The report that lands inside a claim takes the new disk, not none. */
static void test_waits_out_a_claim(void **state)
{
	struct ts_claim c;
	pthread_t publisher;
	__u64 t0;

	st.queue = QUEUE_A;
	st.claimed_ns = 5;
	claim_begin(QUEUE_B, 9);
	t0 = now_ns();
	assert_int_equal(pthread_create(&publisher, NULL, publish_b_later, NULL),
			 0);
	assert_true(ts_claim_settled(&st, &c, 1000000));
	assert_true(now_ns() - t0 >= 20000000ULL);
	assert_int_equal(c.queue, QUEUE_B);
	assert_int_equal(c.claimed_ns, 9);
	pthread_join(publisher, NULL);
}

static void test_claim_never_ends(void **state)
{
	struct ts_claim c;
	__u64 t0 = now_ns();

	claim_begin(QUEUE_A, 7);
	assert_false(ts_claim_settled(&st, &c, 2000));
	assert_true(now_ns() - t0 >= 2000000ULL);
}

/* A claim that began, or came and went, while the slot was read. */
static void test_held_sees_a_new_claim(void **state)
{
	struct ts_claim c;

	st.queue = QUEUE_A;
	st.claimed_ns = 5;
	assert_true(ts_claim_settled(&st, &c, 0));
	claim_begin(QUEUE_B, 9);
	assert_false(ts_claim_held(&st, &c));
	st.queue = QUEUE_A; /* the same queue claimed again */
	assert_false(ts_claim_held(&st, &c));
	st.claimed_ns = 5;
	assert_true(ts_claim_held(&st, &c));
}

/* The slot's reads (its counters as the BPF side keeps them), counted. */
static __u64 reads(struct ts_claim_base *b, __u64 claimed_ns, bool traced,
		   __u64 slot_reads)
{
	static struct ts_claim_counters c;

	memset(&c, 0, sizeof(c));
	c.stats.op[TS_OP_READ].ios = slot_reads;
	c.stats.events[TS_EV_UNMATCHED] = slot_reads / 10;
	c.pattern.op[0].size_ios[1] = slot_reads;
	c.pattern.last_end = 4242;
	ts_claim_counts(b, claimed_ns, traced, &c);
	assert_int_equal(c.stats.events[TS_EV_UNMATCHED],
			 c.stats.op[TS_OP_READ].ios / 10);
	assert_int_equal(c.pattern.op[0].size_ios[1], c.stats.op[TS_OP_READ].ios);
	assert_int_equal(c.pattern.last_end, 4242); /* a sector, not a count */
	return c.stats.op[TS_OP_READ].ios;
}

/*
 * The counters go on from one disk of a slot to the next: A counts from
 * zero, B (traced) from where the slot stood at the last read under A, C
 * (not traced) keeps B's start (its slot's counters are B's), D (traced)
 * starts where the slot stood under C. A read that sees a claim again
 * counts from the same start.
 */
static void test_counts_per_disk(void **state)
{
	static struct ts_claim_base b;

	assert_int_equal(reads(&b, 1, true, 100), 100);	/* A */
	assert_int_equal(reads(&b, 1, true, 150), 150);
	assert_int_equal(reads(&b, 2, true, 157), 7);	/* B */
	assert_int_equal(reads(&b, 2, true, 160), 10);
	assert_int_equal(reads(&b, 3, false, 170), 20);	/* C: B's */
	assert_int_equal(reads(&b, 3, false, 170), 20);
	assert_int_equal(reads(&b, 4, true, 175), 5);	/* D */
	assert_int_equal(reads(&b, 4, true, 175), 5);
}

/*
 * A new claim's counts may hold another disk's: two claims since the last
 * read (a disk came and went between), or the disk before changing its
 * depth words after that read; not when it was idle since, nor at a read
 * of the same claim.
 */
static void test_shared(void **state)
{
	struct ts_claim_base b = {};

	ts_claim_shared(&b, 100, 1, 0, 1000); /* the slot's first disk */
	assert_false(b.shared);
	b.claimed_ns = 100;
	ts_claim_shared(&b, 100, 1, 0, 2000);
	assert_false(b.shared);
	ts_claim_shared(&b, 300, 2, 1500, 3000); /* idle since 1500 < 2000 */
	assert_false(b.shared);
	b.claimed_ns = 300;
	ts_claim_shared(&b, 500, 3, 3500, 4000); /* changed at 3500 > 3000 */
	assert_true(b.shared);
	b.claimed_ns = 500;
	ts_claim_shared(&b, 500, 3, 3500, 5000); /* the same claim: kept */
	assert_true(b.shared);
	ts_claim_shared(&b, 900, 5, 100, 6000); /* two claims since */
	assert_true(b.shared);
	b.claimed_ns = 900;
	/* stamps are 44 bits: a change just past the wrap is after a read
	 * just before it */
	b.read_stamp = TS_CLOCK_MASK - 5;
	ts_claim_shared(&b, 950, 6, 3, 10);
	assert_true(b.shared);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_per_disk),
		cmocka_unit_test(test_published),
		cmocka_unit_test(test_waits_out_a_claim),
		cmocka_unit_test(test_claim_never_ends),
		cmocka_unit_test(test_held_sees_a_new_claim),
		cmocka_unit_test(test_shared),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
