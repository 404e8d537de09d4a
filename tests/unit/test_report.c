// SPDX-License-Identifier: GPL-2.0
/* ts_report_build: figures from two hand-made snapshots. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/report.h"

#define MS 1000000ULL
#define SEC (1000 * MS)
#define KDEV(maj, min) ((maj) * 1048576u + (min))

static struct ts_snapshot a, b;
static struct ts_report r;

static void name_fn(unsigned int major, unsigned int minor, char *buf,
		    size_t len, struct ts_stack *stack)
{
	snprintf(buf, len, "testdisk");
}

static struct ts_dev_snap *add_dev(struct ts_snapshot *s, unsigned int qid,
				   __u64 queue, unsigned int kdev)
{
	struct ts_dev_snap *d = &s->dev[s->ndev++];

	d->qid = qid;
	d->queue = queue;
	d->kdev = kdev;
	return d;
}

/*
 * One disk, 253:0, over 2 s. Between the snapshots it completed
 *   200 reads of 8 KiB: service 0.5 ms each; 150 of them with their Q
 *       seen, queue 0.2 ms and total 0.8 ms each;
 *    50 writes of 64 KiB: service 2 ms each, no Q seen.
 * Depth >= 1 for 1.5 s and >= 2 for 0.5 s; OS queue >= 1 for 0.2 s.
 * The first snapshot holds arbitrary earlier counts.
 */
static int setup(void **state)
{
	struct ts_dev_snap *x, *y;
	struct ts_op_stats *rd, *wr;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.mono_ns = 10 * SEC;
	b.mono_ns = 12 * SEC;
	a.lost_events = 1;
	b.lost_events = 4;

	x = add_dev(&a, 3, 0xffff888012340000ULL, KDEV(253, 0));
	x->stats.op[TS_OP_READ] = (struct ts_op_stats){
		.ios = 100, .bytes = 409600, .service_ns = 77 * MS,
		.queued_ios = 90, .queue_ns = 11 * MS, .total_ns = 99 * MS,
	};
	x->stats.op[TS_OP_WRITE] = (struct ts_op_stats){
		.ios = 7, .bytes = 7 * 4096, .service_ns = 5 * MS,
		.queued_ios = 7, .queue_ns = 3 * MS, .total_ns = 8 * MS,
	};
	x->stats.events[TS_EV_REQUEUE] = 5;
	x->stats.events[TS_EV_UNMATCHED] = 9;
	x->device_time[0] = 1 * SEC;
	x->device_time[1] = 3 * SEC / 10;
	x->os_time[0] = 4 * SEC;

	y = add_dev(&b, 3, 0xffff888012340000ULL, KDEV(253, 0));
	*y = *x;
	rd = &y->stats.op[TS_OP_READ];
	rd->ios += 200;
	rd->bytes += 200 * 8192;
	rd->service_ns += 200 * MS / 2;
	rd->queued_ios += 150;
	rd->queue_ns += 150 * MS / 5;
	rd->total_ns += 150 * MS * 4 / 5;
	wr = &y->stats.op[TS_OP_WRITE];
	wr->ios += 50;
	wr->bytes += 50 * 65536;
	wr->service_ns += 50 * 2 * MS;
	y->stats.events[TS_EV_REQUEUE] += 3;
	y->device_time[0] += 3 * SEC / 2;
	y->device_time[1] += SEC / 2;
	y->os_time[0] += SEC / 5;
	y->in_device = 2;
	y->in_os = 1;
	return 0;
}

static void build(void)
{
	memset(&r, 0x55, sizeof(r)); /* all must be written */
	ts_report_build(&a, &b, name_fn, &r);
}

static void test_span_and_device(void **state)
{
	build();
	assert_false(r.totals);
	assert_float_equal(r.span_s, 2.0, 1e-12);
	assert_int_equal(r.end_mono_ns, b.mono_ns);
	assert_int_equal(r.lost_events, 3);
	assert_int_equal(r.ndev, 1);
	assert_string_equal(r.dev[0].name, "testdisk");
	assert_int_equal(r.dev[0].major, 253);
	assert_int_equal(r.dev[0].minor, 0);
	assert_true(r.dev[0].active);
	assert_int_equal(r.dev[0].nops_active, 2);
	assert_int_equal(r.dev[0].in_device_now, 2);
	assert_int_equal(r.dev[0].in_os_now, 1);
	assert_true(r.dev[0].os.exact);
}

/* A counter below 0 counted a departure twice: not exact, and it shows. */
static void test_depth_below_zero(void **state)
{
	struct ts_dev_snap *y = &b.dev[0];
	__s64 keep = y->in_os;

	y->in_os = -1;
	build();
	y->in_os = keep;
	assert_int_equal(r.dev[0].in_os_now, -1);
	assert_false(r.dev[0].os.exact);
	assert_false(r.dev[0].os.max_exact);
}

static void test_ops(void **state)
{
	const struct ts_op_figures *rd, *wr, *dc;

	build();
	rd = &r.dev[0].op[TS_OP_READ];
	assert_int_equal(rd->ios, 200);
	assert_int_equal(rd->bytes, 1638400);
	assert_int_equal(rd->queued_ios, 150);
	assert_float_equal(rd->iops, 100.0, 1e-9);
	assert_float_equal(rd->mibps, 0.78125, 1e-9); /* 1638400 B / 2 s */
	assert_float_equal(rd->avg_kb, 8.0, 1e-9);
	assert_float_equal(rd->service_ms, 0.5, 1e-9);
	assert_float_equal(rd->queue_ms, 0.2, 1e-9);
	assert_float_equal(rd->total_ms, 0.8, 1e-9);

	wr = &r.dev[0].op[TS_OP_WRITE];
	assert_int_equal(wr->ios, 50);
	assert_float_equal(wr->iops, 25.0, 1e-9);
	assert_float_equal(wr->mibps, 1.6384e6 / 1048576, 1e-9);
	assert_float_equal(wr->avg_kb, 64.0, 1e-9);
	assert_float_equal(wr->service_ms, 2.0, 1e-9);
	assert_int_equal(wr->queued_ios, 0);
	assert_true(isnan(wr->queue_ms)); /* no Q seen: no sample */
	assert_true(isnan(wr->total_ms));

	dc = &r.dev[0].op[TS_OP_DISCARD];
	assert_int_equal(dc->ios, 0);
	assert_float_equal(dc->iops, 0.0, 0);
	assert_float_equal(dc->mibps, 0.0, 0);
	assert_true(isnan(dc->avg_kb));
	assert_true(isnan(dc->service_ms));
	assert_true(isnan(dc->queue_ms));
}

static void test_all_ops(void **state)
{
	const struct ts_op_figures *all;

	build();
	all = &r.dev[0].all;
	assert_int_equal(all->ios, 250);
	assert_int_equal(all->bytes, 1638400 + 3276800);
	assert_int_equal(all->queued_ios, 150);
	assert_float_equal(all->iops, 125.0, 1e-9);
	assert_float_equal(all->mibps, 2.4576e6 / 1048576, 1e-9);
	assert_float_equal(all->avg_kb, 4915200 / 1024.0 / 250, 1e-9);
	/* (200 * 0.5 + 50 * 2) / 250 */
	assert_float_equal(all->service_ms, 0.8, 1e-9);
	/* only the 150 reads whose Q was seen */
	assert_float_equal(all->queue_ms, 0.2, 1e-9);
	assert_float_equal(all->total_ms, 0.8, 1e-9);
}

static void test_depth_and_iostat(void **state)
{
	const struct ts_dev_report *d;

	build();
	d = &r.dev[0];
	/* (1.5 s at >= 1 + 0.5 s at >= 2) / 2 s */
	assert_float_equal(d->device.mean, 1.0, 1e-9);
	assert_float_equal(d->device.busy_share, 0.75, 1e-12);
	assert_int_equal(d->device.max, 2);
	assert_int_equal(d->device.p50, 1); /* depth > 1 for 25% only */
	assert_int_equal(d->device.p90, 2);
	assert_float_equal(d->os.mean, 0.1, 1e-9);
	assert_int_equal(d->os.max, 1);
	assert_float_equal(d->busy_pct, 75.0, 1e-9);
	/* iostat's svctm: 1500 ms busy / 250 I/Os */
	assert_float_equal(d->svctm_ms, 6.0, 1e-9);
}

static void test_events(void **state)
{
	int e;

	build();
	for (e = 0; e < TS_NR_EVENTS; e++)
		assert_int_equal(r.dev[0].events[e], e == TS_EV_REQUEUE ? 3 : 0);
}

/* A disk that appears after the first snapshot counts from zero. */
static void test_new_device(void **state)
{
	struct ts_dev_snap *n;
	const struct ts_dev_report *d;

	n = add_dev(&b, 4, 0xffff888099990000ULL, KDEV(8, 16));
	n->stats.op[TS_OP_READ].ios = 10;
	n->stats.op[TS_OP_READ].bytes = 40960;
	n->stats.op[TS_OP_READ].service_ns = 10 * MS;
	n->stats.events[TS_EV_PARTIAL] = 2;
	n->device_time[0] = SEC / 10;

	build();
	assert_int_equal(r.ndev, 2);
	d = &r.dev[1];
	assert_int_equal(d->major, 8);
	assert_int_equal(d->minor, 16);
	assert_true(d->active);
	assert_int_equal(d->nops_active, 1);
	assert_int_equal(d->op[TS_OP_READ].ios, 10);
	assert_float_equal(d->op[TS_OP_READ].iops, 5.0, 1e-9);
	assert_float_equal(d->op[TS_OP_READ].avg_kb, 4.0, 1e-9);
	assert_float_equal(d->op[TS_OP_READ].service_ms, 1.0, 1e-9);
	assert_float_equal(d->busy_pct, 5.0, 1e-9);
	assert_float_equal(d->svctm_ms, 10.0, 1e-9); /* 100 ms / 10 */
	assert_int_equal(d->events[TS_EV_PARTIAL], 2);

	/* queue id reused by another disk: a new device, from zero too */
	n = add_dev(&a, 4, 0xffff888099990000ULL, KDEV(8, 0));
	n->stats.op[TS_OP_READ].ios = 7;
	build();
	assert_int_equal(r.dev[1].op[TS_OP_READ].ios, 10);

	/* the same disk in both: only the difference */
	n->kdev = KDEV(8, 16);
	build();
	assert_int_equal(r.dev[1].op[TS_OP_READ].ios, 3);

	a.ndev--;
	b.ndev--;
}

/* Counters that did not move: not active, no figures. */
static void test_idle_device(void **state)
{
	struct ts_dev_snap *x, *y;
	const struct ts_dev_report *d;

	x = add_dev(&a, 5, 0xffff888055550000ULL, KDEV(7, 0));
	x->stats.op[TS_OP_WRITE].ios = 1000;
	x->stats.op[TS_OP_WRITE].service_ns = 5 * SEC;
	x->device_time[0] = 9 * SEC;
	y = add_dev(&b, 0, 0, 0);
	*y = *x; /* the same disk, nothing moved */

	build();
	assert_int_equal(r.ndev, 2);
	d = &r.dev[1];
	assert_false(d->active);
	assert_int_equal(d->nops_active, 0);
	assert_int_equal(d->all.ios, 0);
	assert_float_equal(d->all.iops, 0.0, 0);
	assert_true(isnan(d->all.service_ms));
	assert_true(isnan(d->svctm_ms));
	assert_float_equal(d->busy_pct, 0.0, 0);
	assert_float_equal(d->device.mean, 0.0, 0);

	a.ndev--;
	b.ndev--;
}

/* md0 (9:0) is stacked on vda1 (a partition of 253:0) and held by dm-0. */
static void stack_name_fn(unsigned int major, unsigned int minor, char *buf,
			  size_t len, struct ts_stack *stack)
{
	snprintf(buf, len, "%s", major == 9 ? "md0" : "testdisk");
	if (major != 9)
		return;
	stack->nmembers = 1;
	snprintf(stack->member[0].name, TS_STACK_NAME, "vda1");
	stack->member[0].major = 253;
	stack->nholders = 1;
	snprintf(stack->holder[0], TS_STACK_NAME, "dm-0");
}

/*
 * A bio-based device: between the snapshots 100 reads of 4 KiB, Q->C 2 ms
 * each, 80 of them mapped one-to-one with 0.02 ms in the layer; 20 writes
 * mirrored (fanned out): no layer time. No OS queue: QUEUE is not a 0 but
 * unknown (NaN). Its histograms are in slot 2.
 */
static void test_bio_layer(void **state)
{
	struct ts_dev_snap *x, *y;
	struct ts_op_stats *rd, *wr;
	const struct ts_dev_report *d;

	x = add_dev(&a, 6, 0x6000, KDEV(9, 0));
	x->layer = TS_LAYER_BIO;
	x->hist_slot = 2;
	x->stats.op[TS_OP_READ] = (struct ts_op_stats){
		.ios = 10, .bytes = 40960, .service_ns = 10 * MS,
		.queued_ios = 10, .total_ns = 10 * MS, .layer_ios = 8,
		.layer_ns = 8 * MS,
	};
	y = add_dev(&b, 0, 0, 0);
	*y = *x;
	rd = &y->stats.op[TS_OP_READ];
	rd->ios += 100, rd->bytes += 100 * 4096;
	rd->queued_ios += 100;
	rd->service_ns += 100 * 2 * MS, rd->total_ns += 100 * 2 * MS;
	rd->layer_ios += 80, rd->layer_ns += 80 * MS / 50;
	wr = &y->stats.op[TS_OP_WRITE];
	wr->ios = wr->queued_ios = 20;
	wr->service_ns = wr->total_ns = 20 * 4 * MS;
	y->stats.events[TS_EV_FANOUT] = 20;
	b.hist[1][TS_OP_READ].layer[ts_hist_bucket(20000)] = 80;
	b.hist[1][TS_OP_READ].service[ts_hist_bucket(2 * MS)] = 100;

	memset(&r, 0x55, sizeof(r));
	ts_report_build(&a, &b, stack_name_fn, &r);
	d = &r.dev[1];
	assert_string_equal(d->name, "md0");
	assert_true(d->bio_layer);
	assert_false(r.dev[0].bio_layer);
	assert_int_equal(d->op[TS_OP_READ].ios, 100);
	assert_float_equal(d->op[TS_OP_READ].service_ms, 2.0, 1e-9);
	assert_float_equal(d->op[TS_OP_READ].total_ms, 2.0, 1e-9);
	assert_true(isnan(d->op[TS_OP_READ].queue_ms));
	assert_true(isnan(d->all.queue_ms));
	assert_int_equal(d->op[TS_OP_READ].layer_ios, 80);
	assert_float_equal(d->op[TS_OP_READ].layer_ms, 0.02, 1e-9);
	assert_int_equal(d->op[TS_OP_WRITE].layer_ios, 0);
	assert_true(isnan(d->op[TS_OP_WRITE].layer_ms));
	assert_int_equal(d->all.layer_ios, 80);
	assert_float_equal(d->all.layer_ms, 0.02, 1e-9);
	assert_int_equal(d->events[TS_EV_FANOUT], 20);
	/* within a fine bucket (6.25%) of 20 us */
	assert_float_equal(d->op[TS_OP_READ].layer_p.p99, 0.02, 0.02 * 0.0625);
	assert_float_equal(d->all.layer_p.p50, 0.02, 0.02 * 0.0625);
	assert_true(isnan(d->op[TS_OP_WRITE].layer_p.p50));
	assert_int_equal(d->stack.nmembers, 1);
	assert_string_equal(d->stack.member[0].name, "vda1");
	assert_int_equal(d->stack.nholders, 1);
	assert_string_equal(d->stack.holder[0], "dm-0");
	/* the name function left the other disk's stack as zeroed */
	assert_int_equal(r.dev[0].stack.nmembers, 0);
	assert_int_equal(r.dev[0].stack.nholders, 0);

	memset(&b.hist[1], 0, sizeof(b.hist[1]));
	a.ndev--;
	b.ndev--;
}

/* Every event has a name (JSON key) and a help text (table note). */
static void test_event_names(void **state)
{
	int e;

	for (e = 0; e < TS_NR_EVENTS; e++) {
		assert_non_null(ts_event_names[e]);
		assert_non_null(ts_event_help[e]);
	}
}

/*
 * The loader's reads of @s's slots after those before (@last, by slot):
 * the disks gone meanwhile into @gone; how many.
 */
static int read_slots(struct ts_dev_snap *last, const struct ts_snapshot *s,
		      struct ts_snapshot *gone)
{
	struct ts_dev_snap g;
	int i, n = 0;

	for (i = 0; i < s->ndev; i++) {
		if (!ts_slot_next(&last[s->dev[i].qid], &s->dev[i], &g))
			continue;
		ts_snapshot_keep_gone(gone, &g);
		n++;
	}
	return n;
}

/*
 * Two gone lives of one number, on slots 2 then 4: one row in the totals,
 * which names its first claim and the last (-F sums the claims between);
 * a live disk's row names its own claim as both.
 */
static void test_gone_lives_claims(void **state)
{
	static struct ts_snapshot first, cur, gone;
	struct ts_dev_snap a1 = { .qid = 2, .queue = 0x2000, .claimed_ns = 10,
				  .kdev = KDEV(7, 9) };
	struct ts_dev_snap a2 = { .qid = 4, .queue = 0x4000, .claimed_ns = 30,
				  .kdev = KDEV(7, 9) };

	memset(&first, 0, sizeof(first));
	memset(&cur, 0, sizeof(cur));
	memset(&gone, 0, sizeof(gone));
	cur.mono_ns = SEC;
	a1.stats.op[TS_OP_READ].ios = 2000;
	a2.stats.op[TS_OP_READ].ios = 300;
	ts_snapshot_keep_gone(&gone, &a1);
	ts_snapshot_keep_gone(&gone, &a2);
	assert_int_equal(gone.ndev, 1);
	add_dev(&cur, 2, 0x5000, KDEV(7, 10))->claimed_ns = 20;
	cur.dev[cur.ndev++] = gone.dev[0];
	ts_report_build(&first, &cur, name_fn, &r);
	assert_int_equal(r.ndev, 2);
	assert_int_equal(r.dev[0].claimed_ns, 20);
	assert_int_equal(r.dev[0].last_claim_ns, 20);
	assert_int_equal(r.dev[1].op[TS_OP_READ].ios, 2300);
	assert_int_equal(r.dev[1].claimed_ns, 10);
	assert_int_equal(r.dev[1].last_claim_ns, 30);
}

/*
 * A new disk takes over the queue id of a disk that went away: the BPF side
 * reset the depth registers, the loader counts it from its claim
 * (lib/claim.h). It counts from its own start, in the interval and in the
 * totals, and the old disk is kept for the totals as it stood at prev.
 */
static void test_queue_taken_over(void **state)
{
	static struct ts_snapshot first, prev, cur, gone;
	static struct ts_dev_snap last[TS_MAX_DEVS];
	struct ts_dev_snap *o, *n, *s;

	memset(&first, 0, sizeof(first));
	memset(&prev, 0, sizeof(prev));
	memset(&cur, 0, sizeof(cur));
	memset(&gone, 0, sizeof(gone));
	first.mono_ns = 0;
	prev.mono_ns = 5 * SEC;
	cur.mono_ns = 6 * SEC;
	/* a disk that stays, on queue id 1: untouched */
	s = add_dev(&prev, 1, 0x1000, KDEV(8, 0));
	s->stats.op[TS_OP_READ].ios = 50;
	*add_dev(&cur, 0, 0, 0) = *s;
	cur.dev[0].stats.op[TS_OP_READ].ios = 60;
	/* loop0 did 1000 reads, went away; a new loop0 took its queue id 2 */
	o = add_dev(&prev, 2, 0x2000, KDEV(7, 0));
	o->stats.op[TS_OP_READ].ios = 1000;
	o->stats.op[TS_OP_READ].bytes = 4096000;
	o->stats.events[TS_EV_UNMATCHED] = 3;
	o->device_time[0] = 2 * SEC;
	o->in_device = 1;
	n = add_dev(&cur, 2, 0x3000, KDEV(7, 0));
	n->stats.op[TS_OP_READ].ios = 77;
	n->stats.op[TS_OP_READ].bytes = 77 * 4096;
	n->device_time[0] = SEC / 2; /* registers reset at the takeover */

	assert_int_equal(read_slots(last, &prev, &gone), 0);
	assert_int_equal(read_slots(last, &cur, &gone), 1);
	assert_int_equal(gone.ndev, 1);
	assert_int_equal(gone.dev[0].queue, 0x2000);
	assert_int_equal(gone.dev[0].stats.op[TS_OP_READ].ios, 1000);
	/* read again (a scrape, then a report): the old disk kept once */
	assert_int_equal(read_slots(last, &cur, &gone), 0);
	assert_int_equal(gone.ndev, 1);

	/* the interval: 10 reads on the disk that stays, 77 on the new one */
	ts_report_build(&prev, &cur, name_fn, &r);
	assert_int_equal(r.ndev, 2);
	assert_int_equal(r.dev[0].op[TS_OP_READ].ios, 10);
	assert_int_equal(r.dev[1].op[TS_OP_READ].ios, 77);
	assert_int_equal(r.dev[1].op[TS_OP_READ].bytes, 77 * 4096);
	assert_int_equal(r.dev[1].events[TS_EV_UNMATCHED], 0);
	assert_float_equal(r.dev[1].busy_pct, 50.0, 1e-9);

	/* the totals: the new disk from its start, the old one whole */
	cur.dev[cur.ndev++] = gone.dev[0];
	ts_report_build(&first, &cur, name_fn, &r);
	assert_int_equal(r.ndev, 3);
	assert_int_equal(r.dev[0].op[TS_OP_READ].ios, 60);
	assert_int_equal(r.dev[1].op[TS_OP_READ].ios, 77);
	assert_int_equal(r.dev[1].events[TS_EV_UNMATCHED], 0);
	assert_int_equal(r.dev[2].op[TS_OP_READ].ios, 1000);
	assert_int_equal(r.dev[2].events[TS_EV_UNMATCHED], 3);

	/* nothing taken over: nothing changes */
	memcpy(&prev, &cur, sizeof(prev));
	prev.ndev = 2;
	cur.ndev = 2;
	assert_int_equal(read_slots(last, &cur, &gone), 0);
	assert_int_equal(gone.ndev, 1);
}

static struct ts_dev_snap *claim(struct ts_snapshot *s, __u64 queue,
				  unsigned int minor, __u64 claimed_ns,
				  __u64 reads)
{
	struct ts_dev_snap *d = add_dev(s, 2, queue, KDEV(7, minor));

	d->claimed_ns = claimed_ns;
	d->stats.op[TS_OP_READ].ios = reads;
	return d;
}

/* Reads of the rows of @s's report over @a, each of number 7:@minor. */
static __u64 reads_of(const struct ts_snapshot *a, const struct ts_snapshot *s,
		      unsigned int minor)
{
	__u64 n = 0;
	int i;

	ts_report_build(a, s, name_fn, &r);
	for (i = 0; i < r.ndev; i++)
		if (r.dev[i].minor == minor)
			n += r.dev[i].op[TS_OP_READ].ios;
	return n;
}

/*
 * truestat -d loop900: loop900 (A) did 100 reads on queue id 2 and went;
 * loop901, not traced, took the id (its slot held, counting nothing) after
 * A's last 5 reads, so the loader reads A's 105 in it (lib/claim.h);
 * loop900 made again (C) took it back and did 30. The interval row of C
 * counts its 30; the totals hold A's 105 and C's 30, and no row of loop901.
 */
static void test_untraced_disk_between(void **state)
{
	static struct ts_snapshot first, prev, cur, gone, all;
	static struct ts_dev_snap last[TS_MAX_DEVS];
	int i;

	(void)state;
	memset(&first, 0, sizeof(first));
	memset(&gone, 0, sizeof(gone));
	claim(&first, 0x2000, 900, 1, 0);
	read_slots(last, &first, &gone);
	memset(&cur, 0, sizeof(cur));
	claim(&cur, 0x2000, 900, 1, 100);
	read_slots(last, &cur, &gone);
	prev = cur;
	memset(&cur, 0, sizeof(cur));
	claim(&cur, 0x3000, 901, 2, 105)->untraced = true;
	assert_int_equal(read_slots(last, &cur, &gone), 1);
	ts_report_build(&prev, &cur, name_fn, &r);
	assert_int_equal(r.ndev, 0);
	prev = cur;
	memset(&cur, 0, sizeof(cur));
	claim(&cur, 0x4000, 900, 3, 30);
	assert_int_equal(read_slots(last, &cur, &gone), 0);
	assert_int_equal(reads_of(&prev, &cur, 900), 30);
	all = cur;
	for (i = 0; i < gone.ndev; i++)
		all.dev[all.ndev++] = gone.dev[i];
	assert_int_equal(reads_of(&first, &all, 900), 135);
	assert_int_equal(reads_of(&first, &all, 901), 0);
	assert_int_equal(r.ndev, 2);
}

/*
 * loop0 made three times on queue id 2, each new one on the same queue and
 * number (the kernel gave the memory back): only its claim tells them
 * apart. A: 100 reads before the first snapshot, 1000 at the second; B
 * then 100 of its own; C 100 more. The totals: one row for the gone disks
 * of that number, their own reads only (900 + 100), and C's 100.
 */
static void test_queue_taken_over_again(void **state)
{
	static struct ts_snapshot first, prev, cur, gone;
	static struct ts_dev_snap last[TS_MAX_DEVS];
	struct ts_dev_snap *x;
	__u64 reads[3] = { 1000, 100, 100 };
	int i;

	memset(&first, 0, sizeof(first));
	memset(&gone, 0, sizeof(gone));
	x = add_dev(&first, 2, 0x2000, KDEV(7, 0));
	x->claimed_ns = 1;
	x->stats.op[TS_OP_READ].ios = 100;
	memcpy(&prev, &first, sizeof(prev));
	prev.dev[0].stats.op[TS_OP_READ].ios = reads[0];
	read_slots(last, &prev, &gone);
	for (i = 1; i < 3; i++) {
		memcpy(&cur, &prev, sizeof(cur));
		cur.dev[0].claimed_ns = i + 1;
		cur.dev[0].stats.op[TS_OP_READ].ios = reads[i];
		assert_int_equal(read_slots(last, &cur, &gone), 1);
		memcpy(&prev, &cur, sizeof(prev));
	}
	assert_int_equal(gone.ndev, 1);
	assert_int_equal(gone.dev[0].stats.op[TS_OP_READ].ios, 1000 + 100);
	assert_int_equal(gone.dev[0].hist_slot, 0);
	cur.dev[cur.ndev++] = gone.dev[0];
	ts_report_build(&first, &cur, name_fn, &r);
	assert_int_equal(r.ndev, 2);
	assert_int_equal(r.dev[0].op[TS_OP_READ].ios, 100);
	assert_int_equal(r.dev[1].op[TS_OP_READ].ios, 1000);
}

/*
 * The range of the true max: a report between two snapshots of the chain
 * takes the span's, any other (the totals, a scrape) the run's.
 */
static void test_depth_range_span_or_run(void **state)
{
	struct ts_dev_snap *y = &b.dev[0];

	y->device_span = (struct ts_depth_range){ .lo = 16, .hi = 16, .exact = true };
	y->device_run = (struct ts_depth_range){ .lo = 14, .hi = 19 };
	a.seq = 4, b.seq = 5;
	build();
	assert_true(r.dev[0].device.exact && r.dev[0].device.max_exact);
	assert_int_equal(r.dev[0].device.max, 16);
	assert_int_equal(r.dev[0].device.max_min, 16);
	a.seq = 0, b.seq = 7;
	build();
	assert_false(r.dev[0].device.exact || r.dev[0].device.max_exact);
	assert_int_equal(r.dev[0].device.max, 19);
	assert_int_equal(r.dev[0].device.max_min, 14);
	a.seq = 4, b.seq = 0; /* a scrape */
	build();
	assert_int_equal(r.dev[0].device.max, 19);
}

/*
 * A window of takes (the exporter's findings without an interval): its
 * report is exact when each span in it was, whatever the run held before
 * (requests in flight at attach); inexact when one span was; and a disk
 * whose slot another claimed starts its spans anew.
 */
static void test_window_spans_joined(void **state)
{
	static struct ts_span_join j;
	static struct ts_snapshot mid, scratch;
	struct ts_dev_snap *y = &b.dev[0];

	memset(&j, 0, sizeof(j));
	a.seq = 4, b.seq = 9;
	y->device_run = (struct ts_depth_range){ .lo = 14, .hi = 19 };
	mid = b;
	mid.dev[0].device_span = (struct ts_depth_range){ .lo = 12, .hi = 12, .exact = true };
	ts_span_join_add(&j, &mid);
	y->device_span = (struct ts_depth_range){ .lo = 16, .hi = 16, .exact = true };
	ts_span_join_add(&j, &b);
	ts_report_build_window(&a, &b, &j, &scratch, name_fn, &r);
	assert_true(r.dev[0].device.exact);
	assert_int_equal(r.dev[0].device.max, 16);
	/* one span of the window not exact: the window is not */
	mid.dev[0].device_span = (struct ts_depth_range){ .lo = 10, .hi = 13, .excess = 3 };
	ts_span_join_add(&j, &mid);
	ts_span_join_add(&j, &b);
	ts_report_build_window(&a, &b, &j, &scratch, name_fn, &r);
	assert_false(r.dev[0].device.exact);
	/* no span ended in the window: the run's range */
	ts_report_build_window(&a, &b, &j, &scratch, name_fn, &r);
	assert_false(r.dev[0].device.exact);
	assert_int_equal(r.dev[0].device.max, 19);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_and_device),
		cmocka_unit_test(test_depth_below_zero),
		cmocka_unit_test(test_ops),
		cmocka_unit_test(test_all_ops),
		cmocka_unit_test(test_depth_and_iostat),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_event_names),
		cmocka_unit_test(test_new_device),
		cmocka_unit_test(test_idle_device),
		cmocka_unit_test(test_bio_layer),
		cmocka_unit_test(test_queue_taken_over),
		cmocka_unit_test(test_gone_lives_claims),
		cmocka_unit_test(test_queue_taken_over_again),
		cmocka_unit_test(test_untraced_disk_between),
		cmocka_unit_test(test_depth_range_span_or_run),
		cmocka_unit_test(test_window_spans_joined),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
