// SPDX-License-Identifier: GPL-2.0
/*
 * The sweep (requests whose completion no program saw, found and repaired),
 * the log of repairs, and the depth words' restamps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"

/*
 * The durable writes between Q and C now (durable_bios) into @keys and
 * @vals (room for TS_DURABLE_BIOS): read bucket by bucket, so that the
 * programs deleting keys meanwhile cannot make the walk start over, as
 * bpf_map_get_next_key from a deleted key does. Returns how many.
 */
static size_t durable_read(struct ts_tracer *t, __u64 *keys,
			   struct ts_durable *vals)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int fd = bpf_map__fd(t->skel->maps.durable_bios);
	__u32 batch, count;
	void *in = NULL;
	size_t n = 0;
	int err;

	do {
		count = TS_DURABLE_BIOS - n;
		err = bpf_map_lookup_batch(fd, in, &batch, keys + n, vals + n,
					   &count, &opts);
		n += count;
		in = &batch;
	} while (!err && n < TS_DURABLE_BIOS);
	return n;
}

static __u64 durable_keys[TS_DURABLE_BIOS];
static struct ts_durable durable_vals[TS_DURABLE_BIOS];

/* Durable writes between Q and C now, by queue id. */
void tracer_durable_in_flight(struct ts_tracer *t, unsigned int *count)
{
	size_t n = durable_read(t, durable_keys, durable_vals), i;

	memset(count, 0, TS_MAX_DEVS * sizeof(*count));
	for (i = 0; i < n; i++)
		if (durable_vals[i].qid < TS_MAX_DEVS)
			count[durable_vals[i].qid]++;
}

/*
 * Runs part @part of the sweep, over the first @n slots or keys in
 * sweep_keys; its time in BPF, where it runs with preemption off, counted.
 */
void tracer_sweep_part(struct ts_tracer *t, __u64 part, __u64 n)
{
	__u64 args[2] = { part, n }, took;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args,
		    .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.ts_sweep),
				   &opts))
		return;
	took = t->skel->bss->sweep_part_ns;
	t->sweep_ns += took;
	if (took > t->sweep_part_max_ns)
		t->sweep_part_max_ns = took;
}

/* The durable bios' sweep, TS_SWEEP_KEYS keys at a time. */
static void sweep_durable(struct ts_tracer *t)
{
	size_t n = durable_read(t, durable_keys, durable_vals), i, k;

	for (i = 0; i < n; i += k) {
		k = n - i < TS_SWEEP_KEYS ? n - i : TS_SWEEP_KEYS;
		memcpy(t->skel->bss->sweep_keys, durable_keys + i,
		       k * sizeof(*durable_keys));
		tracer_sweep_part(t, TS_SWEEP_DURABLE, k);
	}
}

/*
 * The request slots that hold a record, read from the table's memory,
 * TS_SWEEP_KEYS at a time to the BPF side: its time goes with what is in
 * flight, not with the table's size. A slot filled after it was read here
 * is young (the next sweep sees it); one freed meanwhile, the BPF side
 * finds free.
 */
static void sweep_slots(struct ts_tracer *t)
{
	__u64 *keys = t->skel->bss->sweep_keys, rq;
	__u32 idx, k = 0;

	for (idx = 0; idx < t->rq_slots; idx++) {
		rq = __atomic_load_n(&t->rq_table[idx].rq, __ATOMIC_RELAXED);
		if (!rq || (rq & 1))
			continue;
		keys[k++] = idx;
		if (k == TS_SWEEP_KEYS) {
			tracer_sweep_part(t, TS_SWEEP_SLOTS, k);
			k = 0;
		}
	}
	if (k)
		tracer_sweep_part(t, TS_SWEEP_SLOTS, k);
}

/*
 * Repairs requests completed without our program seeing them (BPF side),
 * a part at a time: no bpf_loop, which kernels before 5.17 lack.
 */
static void sweep(struct ts_tracer *t)
{
	__u64 t0 = mono_ns();

	tracer_sweep_part(t, TS_SWEEP_BEGIN, 0);
	sweep_slots(t);
	sweep_durable(t);
	tracer_sweep_part(t, TS_SWEEP_END, 0);
	tracer_sweep_part(t, TS_SWEEP_RESTAMP, 0);
	t->restamped_ns = mono_ns();
	t->sweep_wall_ns += t->restamped_ns - t0;
	t->sweeps++;
}


/* Sweeps a snapshot makes at most while requests are too young to judge. */
#define TS_SETTLE_SWEEPS 3

/* Requests the last sweep found idle but too young to repair. */
static unsigned int suspects(const struct ts_tracer *t)
{
	unsigned int qid, n = 0;

	for (qid = 0; qid < TS_MAX_DEVS; qid++)
		if (t->state[qid].queue && t->state[qid].mode == TS_DEV_TRACED)
			n += t->state[qid].suspects;
	return n;
}

/*
 * Sweeps until no idle request is too young to repair: a request caught
 * between the issue tracepoint and the kernel marking it in flight proves
 * live at the next look, one whose completion went unseen is old enough by
 * then to be repaired and counted in this span. Only what is still young
 * at the last look makes the span's depth not exact without an event.
 */
void tracer_settle(struct ts_tracer *t)
{
	const struct timespec age = { 0, TS_SWEEP_MIN_AGE_NS + 1000000 };
	int i;

	for (i = 0;; i++) {
		sweep(t);
		if (!suspects(t) || i == TS_SETTLE_SWEEPS - 1)
			return;
		nanosleep(&age, NULL);
	}
}

/*
 * Moves the stamp of depth word *@w back, as of @now, until it is @age old
 * (no further when it is already); unless it changed meanwhile. Returns
 * the ns it moved.
 */
static __u64 age_word(volatile __u64 *w, __u64 age, __u64 now)
{
	__u64 old = *w, was = (now - old) & TS_CLOCK_MASK, by, new;

	if (was >= age)
		return 0;
	by = age - was;
	new = (old & ~TS_CLOCK_MASK) | ((old - by) & TS_CLOCK_MASK);
	if (!__atomic_compare_exchange_n((__u64 *)w, &old, new, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return 0;
	return by;
}

static bool traced(const volatile struct ts_dev_state *st)
{
	return st->queue && !(st->queue & 1) && st->mode == TS_DEV_TRACED;
}

/* Every traced device's depth words in @st made @age old; @by[] += moves. */
static void age_all(const struct ts_tracer *t, volatile struct ts_dev_state *st,
		    __u64 age, __u64 (*by)[2])
{
	unsigned int qid;
	__u64 now;

	for (qid = 0; qid < TS_MAX_DEVS; qid++) {
		if (!traced(&st[qid]))
			continue;
		now = mono_ns() + t->clock_offset;
		by[qid][0] += age_word(&st[qid].in_device, age, now);
		by[qid][1] += age_word(&st[qid].in_os, age, now);
	}
}

/*
 * Every traced device's depth words as after @age without a change: aged
 * a TS_RESTAMP_NS at a time, restamped after each as the main loop does
 * (ts_tracer_tick). What each word moved is said on stderr: the time
 * that passed for it, the test's expected depth x time.
 */
static void age_words(struct ts_tracer *t, __u64 age)
{
	static __u64 by[TS_MAX_DEVS][2];
	size_t len = t->state_len;
	volatile struct ts_dev_state *st;
	unsigned int qid;
	__u64 step;

	st = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		  bpf_map__fd(t->skel->maps.dev_state), 0);
	if (st == MAP_FAILED)
		return;
	memset(by, 0, sizeof(by));
	for (; age; age -= step) {
		step = age < TS_RESTAMP_NS ? age : TS_RESTAMP_NS;
		age_all(t, st, step, by);
		if (step == TS_RESTAMP_NS)
			tracer_sweep_part(t, TS_SWEEP_RESTAMP, 0);
	}
	for (qid = 0; qid < TS_MAX_DEVS; qid++)
		if (traced(&st[qid]))
			fprintf(stderr, "truestat: test: slot %u: stamps aged, "
				"device %llu ns, os %llu ns\n", qid,
				(unsigned long long)by[qid][0],
				(unsigned long long)by[qid][1]);
	munmap((void *)st, len);
}

/*
 * Tests (TRUESTAT_TEST_STAMP_AGE=FILE): when FILE exists, the time since
 * the last snapshot stands for as much as makes every traced device's
 * depth words as old as the ns FILE holds. No event changed them
 * meanwhile (the test keeps the disk idle, or held by a stopped simulated
 * disk), so what that time does to them is their stamps growing older.
 * FILE is removed once done.
 */
void tracer_test_age_stamps(struct ts_tracer *t)
{
	unsigned long long age;
	FILE *f;

	if (!t->test_stamp_age || !(f = fopen(t->test_stamp_age, "r")))
		return;
	if (fscanf(f, "%llu", &age) == 1)
		age_words(t, age);
	fclose(f);
	unlink(t->test_stamp_age);
}

/*
 * Tests (TRUESTAT_TEST_REPAIR_LOG=FILE): repair @r as a line, its queue id,
 * times, address and time at each low depth, so that a test can hold them
 * to another tracer's log.
 */
static void test_log_repair(struct ts_tracer *t, const struct ts_repair *r)
{
	int i;

	if (!t->test_repair_log)
		return;
	fprintf(t->test_repair_log, "%u %llu %llu %llx", r->qid,
		(unsigned long long)r->issue_ns,
		(unsigned long long)r->found_ns, (unsigned long long)r->addr);
	for (i = 0; i < TS_LOW_DEPTHS; i++)
		fprintf(t->test_repair_log, " %llu",
			(unsigned long long)r->low_ns[i]);
	fputc('\n', t->test_repair_log);
	fflush(t->test_repair_log);
}

/*
 * The repairs logged since the last read. A record still being written, or
 * overwritten before this read, makes the bounds fall back to counts.
 */
void tracer_read_repairs(struct ts_tracer *t)
{
	__u64 n = *(volatile __u64 *)&t->skel->bss->repair_count;
	const volatile struct ts_repair *r;
	struct ts_repair copy;

	if (n - t->repairs_read > TS_REPAIR_SLOTS) {
		ts_bounds_lost(&t->bounds);
		t->repairs_read = n - TS_REPAIR_SLOTS;
	}
	for (; t->repairs_read < n; t->repairs_read++) {
		r = &t->repairs[t->repairs_read % TS_REPAIR_SLOTS];
		if (ts_repair_read(r, t->repairs_read, &copy)) {
			ts_bounds_repair(&t->bounds, &copy);
			test_log_repair(t, &copy);
		} else
			ts_bounds_lost(&t->bounds);
	}
}

/*
 * The repair log holds TS_REPAIR_SLOTS: read every TS_REPAIR_READ_NS, it
 * keeps up with that many repairs in that time (41,000 a second: 0.7% of
 * 5.8M IOPS lost), whatever the interval.
 */
#define TS_REPAIR_READ_NS 100000000ULL

__u64 ts_tracer_tick(struct ts_tracer *t)
{
	__u64 now = mono_ns(), restamp_due;

	if (now - t->restamped_ns >= TS_RESTAMP_NS) {
		tracer_sweep_part(t, TS_SWEEP_RESTAMP, 0);
		t->restamped_ns = now;
	}
	tracer_read_repairs(t);
	restamp_due = t->restamped_ns + TS_RESTAMP_NS;
	return now + TS_REPAIR_READ_NS < restamp_due ? now + TS_REPAIR_READ_NS :
						       restamp_due;
}
