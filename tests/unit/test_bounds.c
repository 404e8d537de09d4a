// SPDX-License-Identifier: GPL-2.0
/*
 * The range of the true maximum depth (user/lib/bounds.c) against timelines
 * whose truth is known: requests in and out of a device, some of whose
 * completions the counter does not see until a later repair.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "truestat.h"
#include "lib/bounds.h"

static struct ts_bounds b;

/* @n windows of @w within [@start, @end]: the most open, the time covered. */
/*
 * Logs the repair of a request of @qid issued at @issue, found at @found,
 * the depth 1 to 4 for @low of that time (NULL: never).
 */
static void repair(unsigned int qid, __u64 issue, __u64 found,
		   const __u64 *low)
{
	struct ts_repair r = {
		.issue_ns = issue, .found_ns = found, .qid = qid,
	};

	if (low)
		memcpy(r.low_ns, low, sizeof(r.low_ns));
	ts_bounds_repair(&b, &r);
}

static void expect_windows(struct ts_miss_window *w, unsigned int n,
			   __u64 start, __u64 end, unsigned int most,
			   __u64 covered)
{
	struct ts_windows out;

	ts_windows_scan(w, n, start, end, &out);
	assert_int_equal(out.most, most);
	assert_int_equal(out.covered_ns, covered);
}

static void test_windows(void **state)
{
	struct ts_miss_window w[] = {
		{ 0, 10 }, { 5, 15 }, { 20, 30 }, { 30, 40 }, { 50, 60 },
	};

	expect_windows(w, 0, 0, 100, 0, 0);
	expect_windows(w, 3, 0, 100, 2, 25);
	/* touching windows count as open together: an upper bound */
	expect_windows(w + 2, 2, 0, 100, 2, 20);
	/* only what lies in the span */
	expect_windows(w, 5, 16, 45, 2, 20);
	expect_windows(w, 5, 41, 49, 0, 0);
	expect_windows(w, 5, 12, 12, 1, 0);
	expect_windows(w, 5, 8, 55, 2, 32);
}

static void test_range(void **state)
{
	struct ts_depth_range r, s;
	struct ts_depth_summary sum = { .max = 3 };

	ts_depth_range_of(&r, 7, 0, 0);
	assert_true(r.exact);
	assert_int_equal(r.lo, 7);
	assert_int_equal(r.hi, 7);
	ts_depth_range_of(&r, 7, 3, 2);
	assert_false(r.exact);
	assert_int_equal(r.lo, 4);
	assert_int_equal(r.hi, 9);
	assert_int_equal(r.excess, 3);
	ts_depth_range_of(&s, 2, 5, 0); /* never below 0 */
	assert_int_equal(s.lo, 0);
	ts_depth_range_join(&s, &r);
	assert_int_equal(s.excess, 5);
	assert_int_equal(s.lo, 4);
	assert_int_equal(s.hi, 9);
	assert_false(s.exact);
	ts_depth_bound(&sum, &r);
	assert_int_equal(sum.max, 9);
	assert_int_equal(sum.max_min, 4);
	assert_int_equal(sum.excess, 3);
	assert_false(sum.max_exact || sum.exact);
	ts_depth_range_of(&r, 5, 0, 0);
	ts_depth_bound(&sum, &r);
	assert_true(sum.exact && sum.max_exact);
	assert_int_equal(sum.max, 9); /* never below the levels' own max */
	assert_int_equal(sum.max_min, 9);
}

/* One request: in the device over [issue, end); its end unseen until found. */
struct req {
	__u64 issue, end, found; /* found == end: its completion was seen */
};

/* Depth at @t: the truth (counter false) or as the counter had it. */
static int depth_at(const struct req *r, int n, __u64 t, bool counter)
{
	int i, d = 0;

	for (i = 0; i < n; i++)
		d += r[i].issue <= t && t < (counter ? r[i].found : r[i].end);
	return d;
}

/* Highest depth over [from, to): changes happen only at the requests' times. */
static int max_depth(const struct req *r, int n, __u64 from, __u64 to,
		     bool counter)
{
	int i, most = depth_at(r, n, from, counter), d;

	for (i = 0; i < n; i++) {
		__u64 ts[3] = { r[i].issue, r[i].end, r[i].found };

		for (int k = 0; k < 3; k++) {
			if (ts[k] < from || ts[k] >= to)
				continue;
			d = depth_at(r, n, ts[k], counter);
			most = d > most ? d : most;
		}
	}
	return most;
}

/*
 * Random timelines, 3 spans each: requests with random service times, one
 * in five of them with a completion found late. The sweep's peak take and
 * the repair log are what the BPF side would give; the true maximum of
 * each span and of the run must lie in the range, and the upper end is the
 * counter's own peak.
 */
static void test_random_timelines(void **state)
{
	enum { N = 60, SPANS = 3 };
	static struct req r[N];
	__u64 ends[SPANS + 1] = { 0, 1000, 2000, 3000 };
	struct ts_bounds_out out;
	int run, i, span, true_run, missed;

	srand(12345);
	for (run = 0; run < 500; run++) {
		for (i = 0; i < N; i++) {
			r[i].issue = rand() % 2900;
			r[i].end = r[i].issue + 1 + rand() % 300;
			r[i].found = r[i].end;
			if (rand() % 5 == 0)
				r[i].found = r[i].end + rand() % 400;
		}
		ts_bounds_init(&b, 0);
		true_run = missed = 0;
		for (span = 1; span <= SPANS; span++) {
			__u64 from = ends[span - 1], to = ends[span];
			int truth = max_depth(r, N, from, to, false);
			struct ts_bounds_read in = {
				.qid = 3, .queue = 0x1000,
				.device_peak_taken = max_depth(r, N, from, to, true),
			};

			for (i = 0; i < N; i++) {
				if (r[i].found == r[i].end)
					continue;
				if (r[i].found >= from && r[i].found < to) {
					repair(3, r[i].issue, r[i].found, NULL);
					missed++;
				} else if (r[i].end < to && r[i].found >= to) {
					in.suspects++; /* ended, not yet found */
				}
			}
			in.missed = missed;
			ts_bounds_device(&b, &in, to, &out);
			true_run = truth > true_run ? truth : true_run;
			assert_true(out.span.lo <= truth && truth <= out.span.hi);
			assert_int_equal(out.span.hi, in.device_peak_taken);
			assert_true(out.run.lo <= true_run && true_run <= out.run.hi);
			ts_bounds_end_span(&b, to);
		}
	}
}

/*
 * Busy time depends on when a repaired request left only while the depth
 * was no higher than the requests counted that could have left: per
 * window, its time at a depth up to the most windows open at once while
 * it was (the whole window beyond 4), even a part before the span (its
 * repair took the time out of this span's levels).
 */
static void test_overlapping_windows(void **state)
{
	struct ts_bounds_read in = {
		.qid = 1, .queue = 0x2000, .device_peak_taken = 10, .missed = 2,
	};
	struct ts_bounds_out out;
	int i;

	ts_bounds_init(&b, 100);
	repair(1, 90, 120, (__u64[]){ 25, 3, 0, 0 }); /* 10 before the span */
	repair(1, 130, 150, (__u64[]){ 5, 7, 1, 0 });
	ts_bounds_device(&b, &in, 200, &out);
	assert_int_equal(out.span.windows_ns, 40);
	assert_int_equal(out.span.unsure_ns, 30); /* alone, each */
	ts_bounds_init(&b, 100);
	repair(1, 110, 140, (__u64[]){ 3, 4, 50, 0 });
	repair(1, 130, 150, (__u64[]){ 1, 2, 7, 0 });
	ts_bounds_device(&b, &in, 200, &out);
	assert_int_equal(out.span.windows_ns, 40);
	assert_int_equal(out.span.unsure_ns, 3 + 4 + 1 + 2); /* up to 2 */
	assert_int_equal(out.span.lo, 8);
	/* five at once: deeper than the depths kept, all their time */
	ts_bounds_init(&b, 100);
	for (i = 0; i < 5; i++)
		repair(1, 110 + i, 130, (__u64[]){ 1, 1, 1, 1 });
	repair(1, 150, 160, (__u64[]){ 2, 0, 0, 0 });
	in.missed = 6;
	ts_bounds_device(&b, &in, 200, &out);
	/* 20 + 19 + 18 + 17 + 16 + 2 summed window by window, but busy time
	 * is unsure only while one is open: 20 and 10 */
	assert_int_equal(out.span.windows_ns, 30);
	assert_int_equal(out.span.unsure_ns, 30);
	/* never more than the span */
	ts_bounds_init(&b, 190);
	ts_bounds_device(&b, &in, 200, &out);
	assert_int_equal(out.span.unsure_ns, 10);
}

/* Repairs the log lost: the bound falls back to every repair of the span. */
static void test_lost_repairs(void **state)
{
	struct ts_bounds_read in = {
		.qid = 1, .queue = 0x2000, .device_peak_taken = 10, .missed = 1,
	};
	struct ts_bounds_out out;

	ts_bounds_init(&b, 0);
	repair(1, 10, 20, (__u64[]){ 4, 5, 0, 0 });
	ts_bounds_device(&b, &in, 100, &out);
	assert_int_equal(out.span.lo, 9);
	assert_int_equal(out.span.windows_ns, 10); /* the window, 10..20 */
	assert_int_equal(out.span.unsure_ns, 4);   /* of it, alone */
	ts_bounds_lost(&b);
	in.missed = 6;
	ts_bounds_device(&b, &in, 100, &out);
	assert_int_equal(out.span.lo, 4);
	assert_int_equal(out.span.unsure_ns, 100); /* all the span */
	assert_int_equal(out.span.windows_ns, 100);
	assert_false(out.span.exact);
	/* the next span starts clean: no repairs, nothing uncounted */
	ts_bounds_end_span(&b, 100);
	in.device_peak_taken = 8;
	ts_bounds_device(&b, &in, 200, &out);
	assert_true(out.span.exact);
	assert_int_equal(out.span.lo, 8);
	assert_int_equal(out.span.unsure_ns, 0);
	assert_int_equal(out.run.unsure_ns, 100); /* the spans' sum */
	assert_false(out.run.exact);
	assert_int_equal(out.run.lo, 8);
	assert_int_equal(out.run.hi, 10);
	/* a disk that takes over the queue id starts from nothing (its
	 * counters too: lib/claim.h) */
	in.queue = 0x3000;
	in.device_peak_taken = 2;
	in.missed = 0;
	ts_bounds_device(&b, &in, 300, &out);
	assert_true(out.run.exact);
	assert_int_equal(out.run.hi, 2);
}

/*
 * A request refused a record at issue (the table full) is in the device
 * uncounted until it completes, unseen: the span it was refused in is not
 * exact (its event), nor is a later one inside its life with no event of
 * its own, until the span it completed in.
 */
static void test_uncounted_outlives_its_event(void **state)
{
	struct ts_bounds_read in = {
		.qid = 1, .queue = 0x2000, .device_peak_taken = 4,
		.under = 1, .open = 1, /* refused, in flight */
	};
	struct ts_bounds_out out;

	ts_bounds_init(&b, 0);
	ts_bounds_device(&b, &in, 100, &out);
	assert_false(out.span.exact);
	ts_bounds_end_span(&b, 100);
	ts_bounds_device(&b, &in, 200, &out); /* no event: still in flight */
	assert_false(out.span.exact);
	assert_int_equal(out.span.hi, 5);
	ts_bounds_end_span(&b, 200);
	in.under = 2, in.open = 0; /* it completed: issue unseen */
	ts_bounds_device(&b, &in, 300, &out);
	assert_false(out.span.exact);
	ts_bounds_end_span(&b, 300);
	ts_bounds_device(&b, &in, 400, &out); /* after its life */
	assert_true(out.span.exact);
	ts_bounds_free(&b);
}

/*
 * More repairs in a span than the BPF log holds (it is read more often
 * than the spans end): every window kept, the span's bound from them; past
 * TS_REPAIR_WINDOWS_MAX, all of them at once, all the span long.
 */
static void test_many_repairs(void **state)
{
	const unsigned int n = 3 * TS_REPAIR_SLOTS;
	struct ts_bounds_read in = {
		.qid = 1, .queue = 0x2000, .device_peak_taken = 3, .missed = n,
	};
	struct ts_bounds_out out;
	unsigned int i;

	ts_bounds_init(&b, 0);
	for (i = 0; i < n; i++)
		repair(1, 10 * i + 1, 10 * i + 5, (__u64[]){ 3, 1, 0, 0 });
	ts_bounds_device(&b, &in, 10 * n, &out);
	assert_int_equal(out.span.windows_ns, 4 * n);
	assert_int_equal(out.span.unsure_ns, 3 * n); /* alone, each */
	assert_int_equal(out.span.lo, 2);
	ts_bounds_end_span(&b, 10 * n);
	for (i = 0; i <= TS_REPAIR_WINDOWS_MAX; i++)
		repair(1, 10 * n + 1, 10 * n + 5, NULL);
	in.missed += TS_REPAIR_WINDOWS_MAX + 1;
	ts_bounds_device(&b, &in, 20 * n, &out);
	assert_int_equal(out.span.unsure_ns, 10 * n);
	assert_false(out.span.exact);
	ts_bounds_free(&b);
}

/*
 * A repair counted but not in the log as read for this snapshot (it came
 * after the log was read, or took its slot while locked): that device's
 * span is not exact, all of it unsure; another device's is. The window
 * read with the next snapshot lies before the next span, which is exact.
 */
static void test_repair_after_log_read(void **state)
{
	struct ts_bounds_read in = {
		.qid = 1, .queue = 0x2000, .device_peak_taken = 10, .missed = 2,
	}, other = { .qid = 2, .queue = 0x3000, .device_peak_taken = 4 };
	struct ts_bounds_out out;

	ts_bounds_init(&b, 0);
	repair(1, 10, 20, NULL); /* one of the two logged */
	ts_bounds_device(&b, &in, 100, &out);
	assert_false(out.span.exact);
	assert_int_equal(out.span.lo, 8);
	assert_int_equal(out.span.unsure_ns, 100);
	ts_bounds_device(&b, &other, 100, &out);
	assert_true(out.span.exact);
	ts_bounds_end_span(&b, 100);
	repair(1, 50, 90, NULL);
	ts_bounds_device(&b, &in, 200, &out);
	assert_true(out.span.exact);
	assert_int_equal(out.span.unsure_ns, 0);
	assert_false(out.run.exact);
	/* the disk made again on the same queue: a claim of its own, its
	 * counters from zero, nothing of the old one's */
	in.claimed_ns = 150;
	in.missed = 0;
	ts_bounds_device(&b, &in, 200, &out);
	assert_true(out.run.exact);
}

/* The stamp in a depth word: a change before the last one takes its time. */
static void test_change_time(void **state)
{
	__u64 now = 5000ULL * 1000000000ULL, word;

	word = (3ULL << TS_CLOCK_BITS) | (now & TS_CLOCK_MASK);
	assert_int_equal(ts_depth_of(word), 3);
	assert_int_equal(ts_change_time(word, now + 7), now + 7);
	assert_int_equal(ts_change_time(word, now - 7), now);
	/* a stamp from long ago (over a second, or wrapped): now */
	assert_int_equal(ts_change_time(word, now - 2000000000ULL),
			 now - 2000000000ULL);
	assert_int_equal(ts_change_time(word, now + (1ULL << 43) + 5),
			 now + (1ULL << 43) + 5);
	word = ((__u64)-2 << TS_CLOCK_BITS) | 5;
	assert_int_equal(ts_depth_of(word), -2);
}

/*
 * A depth of 72 held for 2^44 ns and 5 s more: one stamp difference reads
 * 5 s (the interval wrapped), restamps every TS_RESTAMP_NS sum the time
 * above 64 to the whole of it.
 */
static void test_restamp(void **state)
{
	__u64 t0 = 7000ULL * 1000000000ULL, held = (1ULL << 44) + 5000000000ULL;
	__u64 word = (72ULL << TS_CLOCK_BITS) | (t0 & TS_CLOCK_MASK), now, next;
	__s64 area = 0;

	assert_int_equal(ts_stamp_since(word, t0 + held), 5000000000LL);
	for (now = t0; now < t0 + held; word = next) {
		now = now + TS_RESTAMP_NS < t0 + held ? now + TS_RESTAMP_NS :
							t0 + held;
		next = ts_restamp(word, now);
		assert_int_equal(ts_depth_of(next), 72);
		area += (__s64)ts_above_exact(72) * ts_stamp_since(word, now);
	}
	assert_int_equal(area, 8 * (__s64)held);
	/* a clock read before the last change's stamp: the stamp stays */
	assert_int_equal(ts_restamp(word, now - 7), word);
}

/*
 * A repair record rewritten by one thread (as the BPF side does when the
 * log wraps) while another reads it with ts_repair_read: every field is
 * derived from the repair's number, so a copy mixing two repairs is seen.
 */
static struct ts_repair stress_rec;
static volatile int stress_stop;

static __u64 issue_of(__u64 n)
{
	return n * 3 + 1;
}

static __u64 found_of(__u64 n)
{
	return n * 5 + 2;
}

/* As forget_request (bpf/records.bpf.h) writes repair n into its slot. */
static void *stress_writer(void *unused)
{
	__u64 n;

	for (n = 0; !stress_stop; n++) {
		__atomic_exchange_n(&stress_rec.seq, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&stress_rec.issue_ns, issue_of(n),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&stress_rec.found_ns, found_of(n),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&stress_rec.qid, (__u32)n, __ATOMIC_RELAXED);
		__atomic_store_n(&stress_rec.seq, n + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Reads until 1000 copies were refused (the record changed under them:
 * the race was met that often), which takes a quarter of a second on a
 * 2-CPU VM, or for 10 s at most (a guard well inside the unit runner's
 * 60 s for the whole file). No copy accepted may mix two repairs. That
 * the race was met at all is required where the two threads can run at
 * once (two CPUs or more in the test's affinity): on one CPU they meet
 * only when a preemption falls inside a copy, which a run need not see
 * (a fresh clone pinned with taskset -c 0 did not reach 1000 in 60 s).
 * How many were, and at what rate, is printed either way.
 */
static void test_repair_read_torn(void **state)
{
	__u64 reads = 0, refused = 0, torn = 0, n, end = mono_ns() + 10000000000ULL;
	struct ts_repair copy;
	pthread_t writer;
	cpu_set_t cpus;
	int ncpus;

	assert_int_equal(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
	ncpus = CPU_COUNT(&cpus);
	stress_stop = 0;
	assert_int_equal(pthread_create(&writer, NULL, stress_writer, NULL), 0);
	while (refused < 1000 && mono_ns() < end) {
		n = __atomic_load_n(&stress_rec.seq, __ATOMIC_RELAXED);
		if (!n)
			continue;
		reads++;
		if (!ts_repair_read(&stress_rec, n - 1, &copy)) {
			refused++;
			continue;
		}
		if (copy.issue_ns != issue_of(n - 1) ||
		    copy.found_ns != found_of(n - 1) || copy.qid != (__u32)(n - 1))
			torn++;
	}
	stress_stop = 1;
	pthread_join(writer, NULL);
	printf("repair records: %llu reads, %llu refused (changed while "
	       "copied), %llu torn copies accepted (%.2e of reads), %d CPU%s\n",
	       (unsigned long long)reads, (unsigned long long)refused,
	       (unsigned long long)torn, reads ? (double)torn / reads : 0.0,
	       ncpus, ncpus == 1 ? " (the race not required)" : "s");
	if (ncpus > 1)
		assert_true(refused > 0);
	assert_int_equal(torn, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_random_timelines),
		cmocka_unit_test(test_overlapping_windows),
		cmocka_unit_test(test_lost_repairs),
		cmocka_unit_test(test_many_repairs),
		cmocka_unit_test(test_uncounted_outlives_its_event),
		cmocka_unit_test(test_repair_after_log_read),
		cmocka_unit_test(test_change_time),
		cmocka_unit_test(test_restamp),
		cmocka_unit_test(test_repair_read_torn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
