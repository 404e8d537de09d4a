// SPDX-License-Identifier: GPL-2.0
/* Level registers: slot mapping, decoding, and the depth summary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "truestat.h"
#include "lib/depth.h"

#define MS 1000000ULL
#define BOOT (5000ULL * 1000 * MS) /* clock value when the timelines start */

/* (a) slots and levels */

/* The thresholds as documented: 1..64, then four per power of two. */
static int thresholds(__u32 *out)
{
	__u32 pow;
	int n = 0, i;

	for (i = 1; i <= 64; i++)
		out[n++] = i;
	for (pow = 64; pow < 65536; pow *= 2)
		for (i = 1; i <= 4; i++)
			out[n++] = pow + i * pow / 4;
	return n;
}

static void test_slot_level_inverse(void **state)
{
	int slot;

	for (slot = 0; slot < TS_LEVEL_SLOTS; slot++) {
		assert_int_equal(ts_level_slot(ts_slot_level(slot)), slot);
		if (slot)
			assert_true(ts_slot_level(slot) > ts_slot_level(slot - 1));
	}
	assert_int_equal(ts_slot_level(0), 1);
	assert_int_equal(ts_slot_level(TS_LEVEL_SLOTS - 1), TS_LEVEL_MAX);
}

static void test_thresholds(void **state)
{
	__u32 want[TS_LEVEL_SLOTS + 8], depth;
	int n = thresholds(want), next = 0, slot;

	assert_int_equal(n, TS_LEVEL_SLOTS);
	assert_int_equal(want[64], 80);
	assert_int_equal(want[67], 128);
	assert_int_equal(want[68], 160);
	for (depth = 1; depth <= TS_LEVEL_MAX; depth++) {
		slot = ts_level_slot(depth);
		if (depth <= 64)
			assert_int_equal(slot, depth - 1);
		if (next < n && depth == want[next]) {
			assert_int_equal(slot, next);
			next++;
		} else {
			assert_int_equal(slot, -1);
		}
		if (slot >= 0)
			assert_int_equal(ts_slot_level(slot), depth);
	}
	assert_int_equal(next, n);
	assert_int_equal(ts_level_slot(0), -1);
	assert_int_equal(ts_level_slot(TS_LEVEL_MAX + 1), -1);
	assert_int_equal(ts_level_slot(2 * TS_LEVEL_MAX), -1);
	assert_int_equal(ts_level_slot(UINT32_MAX), -1);
}

/* (b) registers against a timeline */

struct ev {
	__u64 t; /* when the program ran, relative to BOOT */
	int delta; /* +1 or -1 */
};

/*
 * What bpf/depth.bpf.h does on one event: the level registers, and the
 * area above 64 from the segment each change closes (@stamp: the depth
 * word's, the last change's time).
 */
static void bpf_apply(__u64 *regs, __s64 *depth, const struct ev *e)
{
	static __u64 stamp;
	__u64 now = BOOT + e->t;
	__s64 d;
	int slot;

	regs[TS_LEVEL_ABOVE] += ts_above_exact(*depth) * (now - stamp);
	stamp = now;
	if (e->delta > 0) {
		d = ++*depth;
		slot = ts_level_slot(d < 0 ? 0 : d);
		if (slot >= 0)
			regs[slot] += TS_LEVEL_BIAS - now;
	} else {
		d = (*depth)--;
		slot = ts_level_slot(d < 0 ? 0 : d);
		if (slot >= 0)
			regs[slot] += now - TS_LEVEL_BIAS;
	}
}

/* ns at depth >= @level from the events before @until, walking the timeline. */
static __s64 truth(const struct ev *ev, int n, __u32 level, __u64 until)
{
	__s64 t = 0, depth = 0;
	int i;

	for (i = 0; i < n && ev[i].t <= until; i++) {
		__u64 end = i + 1 < n && ev[i + 1].t < until ? ev[i + 1].t : until;

		depth += ev[i].delta;
		if (depth >= level)
			t += end - ev[i].t;
	}
	return t;
}

/*
 * Apply the events up to @until, then every threshold must read the truth,
 * and the area above 64 (read with the depth word) the truth summed over
 * every level above 64.
 */
static void check_at(const struct ev *ev, int n, __u64 until)
{
	__u64 regs[TS_LEVEL_REGS] = { 0 }, word;
	__s64 depth = 0, at_least[TS_LEVEL_REGS], above = 0;
	__u32 level;
	int i, slot;

	for (i = 0; i < n && ev[i].t <= until; i++)
		bpf_apply(regs, &depth, &ev[i]);
	word = (__u64)depth << TS_CLOCK_BITS |
	       ((BOOT + (i ? ev[i - 1].t : 0)) & TS_CLOCK_MASK);
	ts_levels_at(regs, word, BOOT + until, at_least);
	for (slot = 0; slot < TS_LEVEL_SLOTS; slot++)
		assert_int_equal(at_least[slot],
				 truth(ev, n, ts_slot_level(slot), until));
	for (level = TS_LEVEL_EXACT + 1; level <= 1000; level++)
		above += truth(ev, n, level, until);
	assert_int_equal(at_least[TS_LEVEL_ABOVE], above);
}

static void test_level_time_simple(void **state)
{
	static const struct ev ev[] = {
		{ 0 * MS, +1 },	 { 10 * MS, +1 }, { 15 * MS, +1 },
		{ 20 * MS, -1 }, { 30 * MS, -1 }, { 40 * MS, +1 },
		{ 50 * MS, -1 }, { 60 * MS, -1 },
	};
	static const __u64 at[] = { 0, 5, 10, 12, 17, 20, 25, 35, 45, 55, 70 };
	__u64 regs[TS_LEVEL_REGS] = { 0 };
	__s64 depth = 0;
	unsigned int i;

	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		check_at(ev, 8, at[i] * MS);

	/* by hand: >= 1 for 60 ms, >= 2 for 10 + 10 + 10, >= 3 for 5 */
	for (i = 0; i < 8; i++)
		bpf_apply(regs, &depth, &ev[i]);
	assert_int_equal(depth, 0);
	assert_int_equal(ts_level_time(regs[0], BOOT + 99 * MS), 60 * MS);
	assert_int_equal(ts_level_time(regs[1], BOOT + 99 * MS), 30 * MS);
	assert_int_equal(ts_level_time(regs[2], BOOT + 99 * MS), 5 * MS);
	assert_int_equal(regs[3], 0);
	/* closed levels do not depend on when they are read */
	assert_int_equal(ts_level_time(regs[1], BOOT + 1000 * MS), 30 * MS);
}

/* A random walk deep enough to cross several thresholds above 64. */
static void test_level_time_random(void **state)
{
	static struct ev ev[6000];
	__u64 t = 0, x = 88172645463325252ULL;
	int n, depth = 0, i;

	for (n = 0; n < 6000; n++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
		t += 1 + x % 5000;
		/* climb to ~300 for the first half, then drain */
		if (depth == 0 || (n < 3000 ? x % 8 < 5 : x % 8 < 3))
			ev[n].delta = +1;
		else
			ev[n].delta = -1;
		depth += ev[n].delta;
		ev[n].t = t;
	}
	assert_true(depth >= 0);
	for (i = 0; i < 6000; i += 397)
		check_at(ev, n, ev[i].t + 123);
	check_at(ev, n, t + 1000);
	assert_true(truth(ev, n, 160, t) > 0); /* thresholds above 64 seen */
}

/*
 * Two CPUs race on level 2: A's issue takes depth 1 -> 2 at 100 ms but its
 * register add lands only at 250 ms; B's completion takes depth 2 -> 1 at
 * 200 ms and its add lands at once. Between 200 and 250 the register holds
 * one more close than opens (n = -1).
 */
static void test_level_time_negative(void **state)
{
	__u64 r1 = 0, r2 = 0;
	__s64 want;

	r1 += TS_LEVEL_BIAS - (BOOT + 0); /* depth 0 -> 1 at 0 ms */
	/* level 2 was open 10 -> 30 ms before: 20 ms so far */
	r2 += TS_LEVEL_BIAS - (BOOT + 10 * MS);
	r2 += (BOOT + 30 * MS) - TS_LEVEL_BIAS;
	assert_int_equal(ts_level_time(r2, BOOT + 50 * MS), 20 * MS);

	r2 += (BOOT + 200 * MS) - TS_LEVEL_BIAS; /* B's close */
	/*
	 * Each applied open counts (now - open), each applied close
	 * -(now - close): at 220 ms that is 20 ms - 20 ms = 0, at 240 ms
	 * -20 ms. Not yet the truth, but no 2^60-sized garbage.
	 */
	assert_int_equal(ts_level_time(r2, BOOT + 220 * MS), 0);
	want = 20 * MS - 40 * (__s64)MS;
	assert_int_equal(ts_level_time(r2, BOOT + 240 * MS), want);
	assert_int_equal(ts_level_time(r1, BOOT + 240 * MS), 240 * MS);

	r2 += TS_LEVEL_BIAS - (BOOT + 100 * MS); /* A's open lands */
	assert_int_equal(ts_level_time(r2, BOOT + 250 * MS), 120 * MS);
	assert_int_equal(ts_level_time(r2, BOOT + 900 * MS), 120 * MS);

	/* the same, racing on a level that has never been used */
	r2 = 0;
	r2 += (BOOT + 200 * MS) - TS_LEVEL_BIAS;
	assert_int_equal(ts_level_time(r2, BOOT + 201 * MS), -1 * (__s64)MS);
	r2 += TS_LEVEL_BIAS - (BOOT + 100 * MS);
	assert_int_equal(ts_level_time(r2, BOOT + 201 * MS), 100 * MS);
}

/* ts_depth_summarize */

#define SPAN (1000 * MS)

/* Time-weighted: depth @depth[i] for @share[i] of SPAN. */
static void shares(__s64 *at_least, const __u32 *depth, const double *share,
		   int n)
{
	int i, slot;

	memset(at_least, 0, TS_LEVEL_REGS * sizeof(*at_least));
	for (i = 0; i < n; i++) {
		for (slot = 0; slot < TS_LEVEL_SLOTS; slot++)
			if (ts_slot_level(slot) <= depth[i])
				at_least[slot] += share[i] * SPAN + 0.5;
		at_least[TS_LEVEL_ABOVE] +=
			ts_above_exact(depth[i]) * share[i] * SPAN + 0.5;
	}
}

static void test_summary_hand(void **state)
{
	__s64 at_least[TS_LEVEL_REGS];
	struct ts_depth_summary s;

	{
		/* depth 1 for 30% of the time, 4 for 70% */
		static const __u32 d[] = { 1, 4 };
		static const double sh[] = { 0.3, 0.7 };

		shares(at_least, d, sh, 2);
		ts_depth_summarize(at_least, SPAN, &s);
		assert_float_equal(s.mean, 0.3 * 1 + 0.7 * 4, 1e-9);
		assert_float_equal(s.busy_share, 1.0, 1e-12);
		assert_int_equal(s.max, 4);
		assert_true(s.max_exact);
		assert_int_equal(s.p50, 4);
		assert_int_equal(s.p90, 4);
		assert_int_equal(s.p99, 4);
	}
	{
		/* idle 10%, then 1 for 35%, 3 for 45%, 10 for 9%, 63 for 1% */
		static const __u32 d[] = { 1, 3, 10, 63 };
		static const double sh[] = { 0.35, 0.45, 0.09, 0.01 };

		shares(at_least, d, sh, 4);
		ts_depth_summarize(at_least, SPAN, &s);
		assert_float_equal(s.mean, 0.35 + 1.35 + 0.9 + 0.63, 1e-9);
		assert_float_equal(s.busy_share, 0.9, 1e-12);
		assert_int_equal(s.max, 63);
		assert_true(s.max_exact);
		assert_int_equal(s.p50, 3);  /* <= 1 for 45%, <= 3 for 90% */
		assert_int_equal(s.p90, 3);  /* exactly 90%: still 3 */
		assert_int_equal(s.p99, 10); /* <= 10 for 99% */
	}
	{
		/* idle 60%, 2 for 40% */
		static const __u32 d[] = { 2 };
		static const double sh[] = { 0.4 };

		shares(at_least, d, sh, 1);
		ts_depth_summarize(at_least, SPAN, &s);
		assert_float_equal(s.mean, 0.8, 1e-9);
		assert_float_equal(s.busy_share, 0.4, 1e-12);
		assert_int_equal(s.max, 2);
		assert_int_equal(s.p50, 0);
		assert_int_equal(s.p90, 2);
	}
}

static void test_summary_deep(void **state)
{
	__s64 at_least[TS_LEVEL_REGS];
	struct ts_depth_summary s;
	static const __u32 d100[] = { 100 }, d64[] = { 64 }, d6465[] = { 64, 65 };
	static const double all[] = { 1.0 }, halves[] = { 0.5, 0.5 };

	/*
	 * Depth 100 throughout: levels 96 and below read SPAN, 112 reads 0,
	 * and the area above 64 is 36 x SPAN: the mean is exact, percentiles
	 * and max round down to the threshold 96.
	 */
	shares(at_least, d100, all, 1);
	ts_depth_summarize(at_least, SPAN, &s);
	assert_float_equal(s.mean, 100, 1e-9);
	assert_int_equal(s.max, 96);
	assert_false(s.max_exact);
	assert_int_equal(s.p50, 96);
	assert_int_equal(s.p99, 96);
	assert_float_equal(s.busy_share, 1.0, 1e-12);
	/* the -D curve's classes interpolate between the thresholds */
	assert_float_equal(ts_depth_at_least(at_least, 97, 0), SPAN * 15.0 / 16, 1);
	assert_float_equal(ts_depth_at_least(at_least, 97, 100), SPAN * 15.0 / 16, 1);
	assert_float_equal(ts_depth_at_least(at_least, 101, 100), 0, 1e-9);

	/* 64 is a threshold, but 65..79 are not: the max is not exact */
	shares(at_least, d64, all, 1);
	ts_depth_summarize(at_least, SPAN, &s);
	assert_int_equal(s.max, 64);
	assert_false(s.max_exact);
	assert_int_equal(s.p50, 64);
	assert_float_equal(s.mean, 64, 1e-9);
	assert_float_equal(ts_depth_at_least(at_least, 65, 0), SPAN * 15.0 / 16, 1);
	assert_float_equal(ts_depth_at_least(at_least, 65, 64), 0, 1e-9);
	assert_float_equal(ts_depth_at_least(at_least, 64, 64), SPAN, 1e-9);

	/*
	 * 64 readers with one completion unseen: depth 64 half of the time,
	 * 65 the other half. Interpolating between the thresholds 64 and 80
	 * read 64 + 15/16 (make demo's 64 readers read 64.25-64.4 so); the
	 * area above 64 gives the truth.
	 */
	shares(at_least, d6465, halves, 2);
	ts_depth_summarize(at_least, SPAN, &s);
	assert_float_equal(s.mean, 64.5, 1e-9);
}

static void test_summary_edges(void **state)
{
	__s64 at_least[TS_LEVEL_REGS] = { 0 };
	struct ts_depth_summary s;

	/* zero span: all zero, nothing read */
	memset(&s, 0x55, sizeof(s));
	at_least[0] = 5;
	ts_depth_summarize(at_least, 0, &s);
	assert_true(s.mean == 0 && s.busy_share == 0);
	assert_int_equal(s.max, 0);
	assert_false(s.max_exact);
	assert_int_equal(s.p50 + s.p90 + s.p99, 0);

	/* idle */
	at_least[0] = 0;
	ts_depth_summarize(at_least, SPAN, &s);
	assert_true(s.mean == 0 && s.busy_share == 0);
	assert_int_equal(s.max, 0);
	assert_int_equal(s.p50 + s.p90 + s.p99, 0);

	/* a racing read: over the span is clamped, negative is zero */
	at_least[0] = SPAN + 7;
	at_least[1] = -3;
	ts_depth_summarize(at_least, SPAN, &s);
	assert_float_equal(s.busy_share, 1.0, 1e-12);
	assert_float_equal(s.mean, 1.0, 1e-12);
	assert_int_equal(s.max, 1);
	assert_true(s.max_exact);
	assert_int_equal(s.p99, 1);
}

/* Registers from a random timeline, summarized, against the timeline. */
static void test_summary_from_timeline(void **state)
{
	static struct ev ev[4000];
	static __u64 by_depth[64]; /* ns spent at exactly this depth */
	__u64 regs[TS_LEVEL_REGS] = { 0 }, t = 0, x = 2463534242ULL, end;
	__s64 at_least[TS_LEVEL_REGS], depth = 0, cur = 0;
	struct ts_depth_summary s;
	double sum = 0, cum;
	__u32 max = 0, p[3] = { 0 }, q;
	static const double qs[3] = { 0.5, 0.9, 0.99 };
	int n, i;

	for (n = 0; n < 4000; n++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		t += 1 + x % 100000;
		ev[n].delta = cur == 0 || (cur < 40 && x % 2) ? +1 : -1;
		cur += ev[n].delta;
		ev[n].t = t;
	}
	end = t + 12345;
	for (i = 0; i < n; i++) {
		bpf_apply(regs, &depth, &ev[i]);
		by_depth[depth] += (i + 1 < n ? ev[i + 1].t : end) - ev[i].t;
		if ((__u32)depth > max)
			max = depth;
	}
	for (i = 0; i < 64; i++)
		sum += (double)i * by_depth[i];
	for (q = 0; q < 3; q++) {
		cum = by_depth[0] + ev[0].t; /* idle before the first event */
		for (i = 0; cum < qs[q] * end; i++)
			cum += by_depth[i + 1];
		p[q] = i;
	}
	ts_levels_at(regs, (__u64)depth << TS_CLOCK_BITS, BOOT + end, at_least);
	/* as of BOOT + end, the span starting at BOOT */
	ts_depth_summarize(at_least, end, &s);
	assert_float_equal(s.mean, sum / end, 1e-9);
	assert_int_equal(s.max, max);
	assert_true(s.max_exact);
	assert_int_equal(s.p50, p[0]);
	assert_int_equal(s.p90, p[1]);
	assert_int_equal(s.p99, p[2]);
	assert_float_equal(s.busy_share, 1.0 - (double)(by_depth[0] + ev[0].t) / end,
			   1e-12);
}

/*
 * Completions never seen (README): at depth 1, twenty requests in a row
 * complete unseen; 300 ms later the sweep closes each at its estimated end,
 * long after later requests opened and closed the levels above them. The
 * registers then hold negative times on some levels; the summary must still
 * give the exact area (here every estimate is right: the mean is the truth).
 */
static void test_summary_missed_completions(void **state)
{
	static struct ev ev[40000];
	__u64 regs[TS_LEVEL_REGS] = { 0 }, t, area = 0;
	const __u64 service = 100000, gap = 20000, span = 1000 * MS;
	__s64 at_least[TS_LEVEL_REGS], depth = 0;
	__u64 ghost_issue[20];
	struct ts_depth_summary s;
	int n = 0, ghosts = 0, i;

	for (t = 0; t + service < span; t += service + gap) {
		ev[n++] = (struct ev){ t, +1 };
		area += service;
		if (t >= 500 * MS && ghosts < 20) {
			ghost_issue[ghosts++] = t; /* its completion is not seen */
			continue;
		}
		if (ghosts == 20 && t >= 800 * MS) {
			/* the sweep: each ghost leaves at issue + service, later */
			for (i = 0; i < 20; i++)
				ev[n++] = (struct ev){ ghost_issue[i] + service, -1 };
			ghosts++;
		}
		ev[n++] = (struct ev){ t + service, -1 };
	}
	for (i = 0; i < n; i++)
		bpf_apply(regs, &depth, &ev[i]);
	assert_int_equal(depth, 0);
	ts_levels_at(regs, 0, BOOT + span, at_least);
	assert_true(at_least[1] < 0 || at_least[20] < 0 || at_least[10] < 0);
	ts_depth_summarize(at_least, span, &s);
	assert_float_equal(s.mean, (double)area / span, 1e-9);
	assert_true(s.busy_share <= 1.0);
	assert_int_equal(s.p50, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slot_level_inverse),
		cmocka_unit_test(test_thresholds),
		cmocka_unit_test(test_level_time_simple),
		cmocka_unit_test(test_level_time_random),
		cmocka_unit_test(test_level_time_negative),
		cmocka_unit_test(test_summary_hand),
		cmocka_unit_test(test_summary_deep),
		cmocka_unit_test(test_summary_edges),
		cmocka_unit_test(test_summary_from_timeline),
		cmocka_unit_test(test_summary_missed_completions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
