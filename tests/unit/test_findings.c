// SPDX-License-Identifier: GPL-2.0
/*
 * Findings (user/findings/) from reports that ts_report_build makes of two
 * hand-made snapshots: for each finding a disk where it must appear, with
 * its figures, one where it must not, and crossed controls.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/opts.h"
#include "findings/findings.h"
#include "output/output.h"

#define MS 1000000ULL
#define SEC (1000 * MS)

static struct ts_snapshot a, b;
static struct ts_report r;
static struct ts_findings fs;
static struct ts_who_span who;
static struct ts_dev_snap *disk;

static void name_fn(unsigned int major, unsigned int minor, char *buf,
		    size_t len, struct ts_stack *stack)
{
	snprintf(buf, len, "vda");
}

/* One disk with histograms, over a span of @span_s, nothing done yet. */
static void reset(double span_s)
{
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.seq = 1;
	b.seq = 2;
	a.mono_ns = 100 * SEC;
	b.mono_ns = a.mono_ns + span_s * SEC;
	a.ndev = b.ndev = 1;
	a.dev[0] = (struct ts_dev_snap){ .qid = 0, .queue = 0x1000,
					 .kdev = 254 << 20, .hist_slot = 1 };
	b.dev[0] = a.dev[0];
	disk = &b.dev[0];
	disk->device_span.exact = true;
}

/*
 * @secs at in-device depth @depth, each request @svc_ms in the device after
 * @q_ms in the OS (the OS queue then never empty), all of direction @op
 * (phase: reads).
 */
static void phase_as(int op, unsigned int depth, double secs, double svc_ms,
		     double q_ms)
{
	struct ts_op_stats *o = &disk->stats.op[op];
	__u64 svc = svc_ms * MS, q = q_ms * MS;
	__u64 n = secs * depth / (svc_ms / 1e3); /* Little */
	int slot;

	for (slot = 0; slot < TS_LEVEL_SLOTS; slot++)
		if (ts_slot_level(slot) <= depth)
			disk->device_time[slot] += secs * SEC;
	if (q)
		disk->os_time[0] += secs * SEC;
	b.depth[0].service[ts_depth_class(depth)][ts_hist_bucket(svc)] += n;
	b.hist[0][op].service[ts_hist_bucket(svc)] += n;
	b.hist[0][op].size[ts_size_bucket(4096)] += n;
	if (depth == 1)
		b.depth[0].depth1[op][ts_hist_bucket(svc)] += n;
	o->ios += n;
	o->bytes += n * 4096;
	o->service_ns += n * svc;
	o->queued_ios += n;
	o->queue_ns += n * q;
	o->total_ns += n * (q + svc);
	if ((__s64)depth > disk->device_span.hi)
		disk->device_span.lo = disk->device_span.hi = depth;
}

static void phase(unsigned int depth, double secs, double svc_ms, double q_ms)
{
	phase_as(TS_OP_READ, depth, secs, svc_ms, q_ms);
}

static void build(void)
{
	ts_report_build(&a, &b, name_fn, &r);
	ts_findings_build(&r, &fs);
}

static const struct ts_finding *find(const char *id)
{
	int i;

	for (i = 0; i < fs.n; i++)
		if (!strcmp(fs.f[i].id, id))
			return &fs.f[i];
	return NULL;
}

/* The report's one finding: the note of rule @id. */
static const struct ts_finding *only_note(const char *id)
{
	const struct ts_finding *f = find(id);

	assert_non_null(f);
	assert_int_equal(f->severity, TS_SEV_NOTE);
	assert_int_equal(fs.n, 1);
	return f;
}

static double fig(const struct ts_finding *f, const char *name)
{
	int k;

	for (k = 0; k < f->nfigures; k++)
		if (!strcmp(f->figure[k].name, name))
			return f->figure[k].value;
	fail_msg("no figure %s in %s", name, f->id);
	return NAN;
}

/* K = 8 units of 2 ms seen at depths 2-16 briefly, at 2 mostly: 97% busy. */
static void eight_units_at_two(void)
{
	reset(10);
	phase(2, 8.2, 2, 0);
	phase(4, 0.5, 2, 0);
	phase(8, 0.5, 2, 0);
	phase(16, 0.5, 4, 0);
}

static void test_busy_not_full(void **state)
{
	const struct ts_finding *f;

	eight_units_at_two();
	build();
	f = find("busy-not-full");
	assert_non_null(f);
	assert_int_equal(f->severity, TS_SEV_MEDIUM);
	assert_string_equal(f->op, "read");
	assert_true(f->exact);
	assert_float_equal(fig(f, "busy_pct"), 97, 0.01);
	assert_float_equal(fig(f, "concurrency"), 3.04, 0.01);
	/* 8 at once seen at 5-8, 4000 IOPS there against 1361 now */
	assert_float_equal(fig(f, "best_depth"), 8, 1e-9);
	assert_float_equal(fig(f, "headroom"), 4000 / 1361.0, 0.2);
	assert_non_null(strstr(f->sentence, "about 2."));
	assert_int_equal(fs.n, 1);
}

/*
 * The same disk under -c: the filtered submitter made a third of the
 * requests, the others are counted apart (FILTER_OTHER). The headroom is
 * the device's, as without the filter, not inflated by the share.
 */
static void test_busy_not_full_filtered(void **state)
{
	struct ts_op_stats *o;
	__u64 others;

	eight_units_at_two();
	o = &disk->stats.op[TS_OP_READ];
	others = o->ios - o->ios / 3;
	o->ios -= others;
	o->queued_ios -= others;
	o->bytes = o->ios * 4096;
	disk->stats.events[TS_EV_FILTER_OTHER] = others;
	build();
	assert_float_equal(fig(find("busy-not-full"), "headroom"), 4000 / 1361.0,
			   0.2);
}

/* The same disk at 10% load: nothing to say. */
static void test_light_load_none(void **state)
{
	reset(10);
	phase(1, 0.7, 2, 0);
	phase(2, 0.2, 2, 0);
	phase(4, 0.1, 2, 0);
	build();
	assert_int_equal(fs.n, 0);
	assert_int_equal(fs.nskipped, 0);
}

/* Busy at depth 1 only: the parallelism is not known, so no conclusion. */
static void test_busy_cannot_tell(void **state)
{
	const struct ts_finding *f;

	reset(10);
	phase(1, 9.5, 2, 0);
	build();
	f = only_note("busy-not-full");
	assert_non_null(strstr(f->sentence, "scripts/knee.sh vda"));
}

/*
 * One client on a disk of 8 ms requests (investigation 000): 95% busy, at
 * depth 1, and at 2 long enough for evidence (MariaDB's read-ahead beside
 * its reads), throughput still growing there: its mean depth is in the
 * class of 2, and nothing deeper was seen. Whether the disk does more at
 * once is not known: the same note, not silence.
 */
static void test_busy_cannot_tell_brief_two(void **state)
{
	reset(10);
	phase(1, 8.9, 8, 0);
	phase(2, 0.6, 8, 0);
	build();
	assert_true(r.dev[0].curve.row[1].evidence);
	assert_int_equal(r.dev[0].curve.now_row, 1);
	only_note("busy-not-full");
}

/* K = 1 under 8 readers: waiting inside the device, not busy-not-full. */
static void one_unit_eight_readers(void)
{
	reset(10);
	phase(1, 1, 2, 0);
	phase(8, 9, 16, 0);
}

static void test_waiting_in_device(void **state)
{
	const struct ts_finding *f;

	one_unit_eight_readers();
	build();
	f = find("waiting-in-device");
	assert_non_null(f);
	assert_int_equal(f->severity, TS_SEV_HIGH);
	assert_int_equal(f->rank, 1);
	assert_float_equal(fig(f, "concurrency"), 7.3, 1e-6);
	assert_float_equal(fig(f, "parallelism"), 1, 1e-9);
	/* 500 at 2 ms and 4500 at 16 ms */
	assert_float_equal(fig(f, "service_ms"), 14.6, 1e-6);
	assert_float_equal(fig(f, "service_base_ms"), 2, 2 / 16.0);
	assert_null(find("busy-not-full"));
	assert_null(find("capped-volume"));
	assert_null(find("slow-not-busy"));
}

/* K = 8 below its knee: no wait inside it. */
static void test_waiting_in_device_none(void **state)
{
	eight_units_at_two();
	build();
	assert_null(find("waiting-in-device"));
}

/*
 * K = 1 of 2 ms under 8 readers from the start: seen at 5-8 and briefly
 * deeper, never shallower. The knee is the shallowest depth seen, so how
 * much of each request's time is a wait in the device is not known: a
 * note, not silence; at the knee's depths and past them alike.
 */
static void test_waiting_in_device_cannot_tell(void **state)
{
	const struct ts_finding *f;

	reset(10);
	phase(7, 3, 14, 0);
	phase(8, 6.5, 16, 0);
	phase(12, 0.5, 24, 0);
	build();
	assert_int_equal(r.dev[0].curve.parallelism_row, 3);
	assert_int_equal(r.dev[0].curve.now_row, 3);
	f = only_note("waiting-in-device");
	assert_float_equal(fig(f, "parallelism_at_most"), 8, 1e-9);
	assert_float_equal(fig(f, "concurrency"), 7.9, 1e-6);
	assert_non_null(strstr(f->sentence, "never seen at fewer than 5"));
	assert_non_null(strstr(f->sentence, "scripts/knee.sh vda"));
	reset(10);
	phase(8, 8, 16, 0);
	phase(12, 2, 24, 0);
	build();
	only_note("waiting-in-device");
}

/* Seen from 5-8 up only, each request twice as long deeper: a wait seen. */
static void test_waiting_in_device_from_five(void **state)
{
	const struct ts_finding *f;

	reset(10);
	phase(8, 5, 16, 0);
	phase(16, 5, 32, 0);
	build();
	f = find("waiting-in-device");
	assert_non_null(f);
	assert_int_equal(f->severity, TS_SEV_HIGH);
	assert_float_equal(fig(f, "service_base_ms"), 16, 16 / 16.0);
}

/* 3 ms in the OS for 1 ms in the device, one class of depth only. */
static void test_waiting_in_os(void **state)
{
	const struct ts_finding *f;

	reset(5);
	phase(4, 5, 1, 3);
	build();
	f = find("waiting-in-os");
	assert_non_null(f);
	assert_string_equal(f->op, "read");
	assert_float_equal(fig(f, "queue_share"), 0.75, 1e-9);
	assert_float_equal(fig(f, "queue_ms"), 3, 1e-9);
	assert_float_equal(fig(f, "os_queue"), 1, 1e-9);
}

/* A few µs in the OS; and a device past its knee backs up into the OS. */
static void test_waiting_in_os_none(void **state)
{
	reset(5);
	phase(4, 5, 1, 0.004);
	build();
	assert_null(find("waiting-in-os"));
	one_unit_eight_readers();
	phase(8, 0, 16, 0);
	disk->stats.op[TS_OP_READ].queue_ns = 5000 * 20 * MS;
	disk->stats.op[TS_OP_READ].total_ns += 5000 * 20 * MS;
	build();
	assert_null(find("waiting-in-os"));
	assert_non_null(find("waiting-in-device"));
}

/* Durable writes: @per_s a second of @total_ms, @flush_ms of it a flush. */
static void durable(double secs, double per_s, double total_ms,
		    double flush_ms)
{
	struct ts_op_stats *fl = &disk->stats.op[TS_OP_FLUSH];
	__u64 n = secs * per_s;

	disk->stats.sync.ios += n;
	disk->stats.sync.total_ns += n * total_ms * MS;
	disk->stats.sync.flush_ns += n * flush_ms * MS;
	fl->ios += n;
	fl->service_ns += n * flush_ms * MS;
}

static void test_flush_wait(void **state)
{
	const struct ts_finding *f;

	reset(10);
	phase(1, 3, 2, 0);
	durable(10, 43.9, 17.615, 15.68);
	build();
	f = find("commits-wait-on-flush");
	assert_non_null(f);
	assert_string_equal(f->op, "sync");
	assert_float_equal(fig(f, "flush_share"), 0.89, 0.001);
	assert_float_equal(fig(f, "in_flight"), 0.773, 0.001);
	assert_float_equal(fig(f, "sync_iops"), 43.9, 1e-9);
}

/*
 * Group commit: four committers on a 1-unit disk, each durable write 12 ms
 * of which a flush was in the device 8 ms, one flush command serving four
 * (blk-flush merges the pending preflushes): the flush clock's share is
 * two thirds, where flush commands' service over the writes' time would
 * be a quarter of that. In flight: 4 committers, not "400% of the time".
 */
static void test_group_commit(void **state)
{
	struct ts_op_stats *fl;
	const struct ts_finding *f;
	__u64 n = 10 * 333;

	reset(10);
	phase(1, 3, 2, 0);
	fl = &disk->stats.op[TS_OP_FLUSH];
	disk->stats.sync.ios += n;
	disk->stats.sync.total_ns += n * 12 * MS;
	disk->stats.sync.flush_ns += n * 8 * MS;
	fl->ios += n / 4;
	fl->service_ns += n / 4 * 8 * MS;
	build();
	f = find("commits-wait-on-flush");
	assert_non_null(f);
	assert_float_equal(fig(f, "flush_share"), 8.0 / 12, 1e-9);
	assert_float_equal(fig(f, "in_flight"), 333 * 0.012, 1e-9);
	assert_non_null(strstr(f->sentence, "4.0 in flight on average"));
}

/* innodb_flush_log_at_trx_commit=2: a flush a durable write, rarely. */
static void test_flush_wait_none(void **state)
{
	reset(10);
	phase(1, 3, 2, 0);
	durable(10, 7.3, 16.753, 14.74);
	build();
	assert_null(find("commits-wait-on-flush"));
	r.light = true; /* durable writes not followed: never a finding */
	durable(10, 100, 17.6, 15.7);
	build();
	r.light = true;
	ts_findings_build(&r, &fs);
	assert_null(find("commits-wait-on-flush"));
}

/* Reads of @size bytes, @seq of @n sequential, the rest @seek_k apart. */
static void reads_pattern(__u64 n, double seq, int size_k, int seek_k)
{
	struct ts_pattern_op *p = &disk->pattern.op[TS_OP_READ];

	p->seek[0] = n * seq;
	p->seek[seek_k] = n - 1 - p->seek[0];
	p->in_stream = p->stream_ios[0] = p->seek[0];
	p->size_ios[size_k] = n;
	p->size_bytes[size_k] = n << size_k;
}

static void test_random_reads(void **state)
{
	const struct ts_finding *f;

	reset(10);
	phase(1, 9.2, 13, 0);
	reads_pattern(4389, 0.062, 12, 12); /* 4-8 KiB, seeks below 2 MiB */
	build();
	r.show_pattern = true;
	ts_findings_build(&r, &fs);
	f = find("random-reads");
	assert_non_null(f);
	assert_float_equal(fig(f, "in_stream_share"), 0.062, 0.001);
	assert_float_equal(fig(f, "streams"), 1, 1e-9);
	assert_float_equal(fig(f, "seek_p50_below"), 2097152.0, 1e-9);
	assert_float_equal(fig(f, "most_bytes_below"), 8192, 1e-9);
	assert_float_equal(fig(f, "busy_pct"), 92, 1e-9);
}

/* The table rebuilt: sequential 1 MiB reads. Without --pattern: none. */
static void test_random_reads_none(void **state)
{
	reset(10);
	phase(1, 9.2, 13, 0);
	reads_pattern(951, 0.932, 20, 12);
	build();
	r.show_pattern = true;
	ts_findings_build(&r, &fs);
	assert_null(find("random-reads"));
	reads_pattern(4389, 0.062, 12, 12);
	build();
	assert_null(find("random-reads"));
}

/*
 * Four sequential readers at once, 64 KiB reads far apart: one read in
 * five starts where the read before it ended (the device's order
 * interleaves them), but nearly every one goes on one of four streams:
 * not random-reads (it was, when sequentiality was judged per device).
 */
static void test_random_reads_interleaved(void **state)
{
	struct ts_pattern_op *p;
	int i;

	reset(10);
	phase(4, 9.2, 2, 0);
	reads_pattern(18400, 0.21, 16, 18); /* 64-128 KiB, seeks of 64 MiB */
	p = &disk->pattern.op[TS_OP_READ];
	p->in_stream = 0;
	for (i = 0; i < 4; i++)
		p->in_stream += p->stream_ios[i] = 18400 / 4 - 1;
	build();
	r.show_pattern = true;
	ts_findings_build(&r, &fs);
	assert_null(find("random-reads"));
}

/* A volume capped at 1000 IOPS over 1 ms units: depth 1, 2, ... 64. */
static void capped_at_thousand(void)
{
	unsigned int depth;

	reset(7);
	phase(1, 1, 1.1, 0);
	for (depth = 2; depth <= 64; depth *= 2)
		phase(depth, 1, depth, 0);
	build();
}

static void test_capped(void **state)
{
	const struct ts_finding *f;

	capped_at_thousand();
	f = find("capped-volume");
	assert_non_null(f);
	assert_float_equal(fig(f, "rate_iops"), 1000, 1000 / 16.0);
	assert_float_equal(fig(f, "from_depth"), 1, 1e-9);
	assert_float_equal(fig(f, "to_depth"), 64, 1e-9);
	/* it says the wait inside the device; no second finding for it */
	assert_null(find("waiting-in-device"));
	assert_null(find("busy-not-full"));
}

/*
 * One verdict per device: a serial disk of 4 ms (250 IOPS alone, 500 from
 * depth 2 on: two classes of request), busy at depth 1 to 2 most of the
 * span, briefly deeper. The plateau from depth 2 is capped-volume's;
 * busy-not-full would say 1.9x is left at depth 17-32 while the verdict
 * says more depth only adds latency beyond 2. The verdict states the
 * throughput now, short of the limit, and no second finding is drawn.
 */
static void test_capped_or_busy_one_verdict(void **state)
{
	const struct ts_finding *f;
	unsigned int depth;

	reset(20);
	phase(1, 17, 4, 0);
	phase(2, 0.25, 4, 0);
	for (depth = 4; depth <= 32; depth *= 2)
		phase(depth, 0.25, 2 * depth, 0);
	build();
	if (getenv("TS_SHOW"))
		ts_findings_print(stderr, &fs, NULL, false);
	f = find("capped-volume");
	assert_non_null(f);
	assert_null(find("busy-not-full"));
	assert_float_equal(fig(f, "rate_iops"), 500, 500 / 16.0);
	assert_float_equal(fig(f, "iops_now"), 267, 1);
	assert_non_null(strstr(f->sentence, "short of it: more at once reaches it (depths beyond 2 did)"));
	/* at the limit now: no clause on the throughput now */
	capped_at_thousand();
	assert_non_null(strstr(find("capped-volume")->sentence, "; more depth only adds latency"));
}

/* Whether the report says more depth gets more (busy-not-full) and not. */
static bool contradicts(void)
{
	static const char *const full[] = { "capped-volume",
					     "waiting-in-device" };
	const struct ts_finding *room = find("busy-not-full"), *f;
	size_t i;

	if (!room || room->severity == TS_SEV_NOTE)
		return false;
	for (i = 0; i < sizeof(full) / sizeof(full[0]); i++) {
		f = find(full[i]);
		if (f && f->severity != TS_SEV_NOTE)
			return true;
	}
	return false;
}

/*
 * Service at @depth of model @m: 0, two classes on a serial disk (4 ms
 * alone, 500 IOPS from depth 2); 1, a volume capped at 1000 IOPS over 1 ms
 * units; 2, eight units of 2 ms; 3, a serial disk of 4 ms.
 */
static double model_ms(unsigned int m, unsigned int depth)
{
	switch (m) {
	case 0:
		return depth == 1 ? 4 : depth == 2 ? 4 : 2 * depth;
	case 1:
		return depth == 1 ? 1.1 : depth;
	case 2:
		return depth <= 8 ? 2 : depth / 4.0;
	default:
		return 4.0 * depth;
	}
}

/*
 * No report holds two findings that contradict: each model busy at depth
 * 1 from 5 to 19 s of 20, and briefly at each depth from 2 to 64.
 */
static void test_no_contradiction(void **state)
{
	unsigned int depth, m;
	double shallow;

	for (m = 0; m < 4; m++) {
		for (shallow = 5; shallow <= 19; shallow += 2) {
			reset(20);
			phase(1, shallow, model_ms(m, 1), 0);
			for (depth = 2; depth <= 64; depth *= 2)
				phase(depth, 0.25, model_ms(m, depth), 0);
			build();
			if (contradicts())
				fail_msg("model %u, %.0f s shallow: %s and busy-not-full",
					 m, shallow, fs.f[0].id);
		}
	}
}

/*
 * The rows of a fresh clone's 63-investigate-004 (MariaDB on a volume
 * capped at 1000 IOPS), their times and rates: beyond the knee at depth 1
 * the class of 3-4 does 853 a second, short of the cap, 9-16 987 and
 * 33-64 972. The rate stated is the deepest class's, not the plateau's
 * mean weighted by time (926).
 */
static void test_capped_short_beyond_knee(void **state)
{
	const struct ts_finding *f;

	reset(6);
	phase(1, 1.86, 1.2, 0);
	phase(4, 1.93, 4 / 0.853, 0);
	phase(16, 1.98, 16 / 0.9875, 0);
	phase(64, 0.36, 64 / 0.9717, 0);
	build();
	f = find("capped-volume");
	assert_non_null(f);
	assert_float_equal(fig(f, "from_depth"), 1, 1e-9);
	assert_float_equal(fig(f, "to_depth"), 64, 1e-9);
	assert_float_equal(fig(f, "rate_iops"), 971.7, 971.7 / 32);
}

/*
 * The same volume, with 400 flushes a cache answered in 10 us among the
 * depth-1 reads: that row does 1400 a second, above the cap; the rows
 * beyond it are the plateau all the same.
 */
static void test_capped_cheap_at_knee(void **state)
{
	static const unsigned int depth[] = { 1, 4, 16, 64 };
	const struct ts_finding *f;
	int i;

	reset(4);
	phase(1, 1, 1, 0);
	phase(1, 0.004, 0.01, 0);
	for (i = 1; i < 4; i++)
		phase(depth[i], 1, depth[i], 0);
	build();
	f = find("capped-volume");
	assert_non_null(f);
	assert_float_equal(fig(f, "rate_iops"), 1000, 1000 / 16.0);
	assert_null(find("waiting-in-device"));
}

/* Still growing to the deepest depth: no cap seen. */
static void test_capped_none(void **state)
{
	reset(4);
	phase(1, 1, 2, 0);
	phase(2, 1, 2, 0);
	phase(4, 1, 2, 0);
	phase(8, 1, 2, 0);
	build();
	assert_null(find("capped-volume"));
	one_unit_eight_readers(); /* two points only */
	build();
	assert_null(find("capped-volume"));
}

static void test_slow_not_busy(void **state)
{
	const struct ts_finding *f;

	reset(10);
	phase(1, 1, 2, 0);   /* 500 requests of 2 ms */
	phase(1, 5, 500, 0); /* 10 of 500 ms */
	build();
	f = find("slow-not-busy");
	assert_non_null(f);
	assert_float_equal(fig(f, "concurrency"), 0.6, 1e-9);
	assert_float_equal(fig(f, "p50_depth1_ms"), 2, 2 / 16.0);
	assert_true(fig(f, "service_depth1_ms") > 11);
}

static void test_slow_not_busy_none(void **state)
{
	reset(10);
	phase(1, 6, 2, 0);
	build();
	assert_int_equal(fs.n, 0);
	one_unit_eight_readers(); /* slow from load, not alone */
	build();
	assert_null(find("slow-not-busy"));
}

/* a microsecond device: a tail under 1 ms is the host's, one past it not */
static void test_slow_not_busy_floor(void **state)
{
	reset(10);
	phase(1, 0.3, 0.01, 0); /* 30000 of 10 us */
	phase(1, 0.7, 0.5, 0);  /* 1400 of 0.5 ms: 3.2x the median */
	build();
	assert_null(find("slow-not-busy"));
	reset(10);
	phase(1, 0.3, 0.01, 0);
	phase(1, 0.7, 2, 0); /* 350 of 2 ms: past 1% */
	build();
	assert_non_null(find("slow-not-busy"));
}

/*
 * A 1-unit disk at 40 ms a 4 KiB read, one reader: no spread at all, and
 * slower than any working disk (a 5400 rpm disk's whole stroke and turn,
 * 36.1 ms, and the transfer); 30 ms is not, nor 80 ms for 1 MiB reads
 * (52 ms of transfer at 20 MB/s), nor writes (a disk's cache full).
 */
static void test_slow_by_physics(void **state)
{
	const struct ts_finding *f;

	reset(20);
	phase(1, 19, 40, 0);
	build();
	f = find("slow-not-busy");
	assert_non_null(f);
	assert_string_equal(f->op, "read");
	assert_int_equal(f->severity, TS_SEV_HIGH);
	assert_float_equal(fig(f, "slowest_disk_ms"), 36.1 + 4096 / 20000.0,
			   1e-9);
	assert_non_null(strstr(f->sentence, "longer than any working disk"));
	reset(20);
	phase(1, 19, 30, 0);
	build();
	assert_null(find("slow-not-busy"));
	reset(20);
	phase(1, 19, 80, 0);
	disk->stats.op[TS_OP_READ].bytes *= 256;
	build();
	assert_null(find("slow-not-busy"));
	reset(20);
	phase_as(TS_OP_WRITE, 1, 19, 40, 0);
	build();
	assert_null(find("slow-not-busy"));
}

static void submitter(__u64 id, const char *comm, __u64 ios, double svc_ms)
{
	struct ts_who_entry *e = &who.e[who.n++];

	memset(e, 0, sizeof(*e));
	e->key = (struct ts_who_key){ .id = id, .qid = 0, .op = TS_OP_READ };
	e->s.ios = ios;
	e->s.service_ns = ios * svc_ms * MS;
	snprintf(e->s.comm, sizeof(e->s.comm), "%s", comm);
}

static void with_who(void)
{
	build();
	r.who = &who;
	ts_findings_build(&r, &fs);
}

static void test_one_submitter(void **state)
{
	const struct ts_finding *f;

	memset(&who, 0, sizeof(who));
	who.by = TS_BY_PROCESS;
	submitter(4242, "backup", 4000, 2);
	submitter(17, "mysqld", 1000, 2);
	reset(10);
	phase(1, 9, 2, 0);
	with_who();
	f = find("one-submitter");
	assert_non_null(f);
	assert_int_equal(f->severity, TS_SEV_LOW);
	assert_non_null(strstr(f->sentence, "pid 4242 (backup)"));
	assert_float_equal(fig(f, "device_time_share"), 0.8, 1e-9);
}

/* Alone, or one among equals, or an idle disk: nobody owns it. */
static void test_one_submitter_none(void **state)
{
	memset(&who, 0, sizeof(who));
	who.by = TS_BY_PROCESS;
	submitter(4242, "backup", 4000, 2);
	reset(10);
	phase(1, 9, 2, 0);
	with_who();
	assert_null(find("one-submitter"));
	submitter(17, "mysqld", 4000, 2);
	with_who();
	assert_null(find("one-submitter"));
	/* equals never split exactly: 50.3% is one of two equals, not an owner */
	who.e[0].s.ios = 4050;
	who.e[0].s.service_ns = 4050 * 2 * MS;
	with_who();
	assert_null(find("one-submitter"));
	/* 54% is within the +20% margin over the rest (46%), 56% beyond it */
	who.e[0].s.service_ns = 54 * MS;
	who.e[1].s.service_ns = 46 * MS;
	with_who();
	assert_null(find("one-submitter"));
	who.e[0].s.service_ns = 56 * MS;
	who.e[1].s.service_ns = 44 * MS;
	with_who();
	assert_non_null(find("one-submitter"));
	reset(10);
	phase(1, 1, 2, 0);
	with_who();
	assert_null(find("one-submitter"));
}

/*
 * --light does not follow the OS queue: a finding resting on it says so,
 * is not marked exact and states no OS queue depth.
 */
static void test_light_os_unknown(void **state)
{
	const struct ts_finding *f;
	int i;

	reset(5);
	phase(4, 5, 1, 3);
	build();
	r.light = true;
	ts_findings_build(&r, &fs);
	f = find("waiting-in-os");
	assert_non_null(f);
	assert_false(f->exact);
	assert_non_null(strstr(f->sentence, "--light does not follow the OS queue"));
	assert_null(strstr(f->sentence, "the OS queue 1.0"));
	for (i = 0; i < f->nfigures; i++)
		assert_string_not_equal(f->figure[i].name, "os_queue");
	capped_at_thousand();
	r.light = true;
	ts_findings_build(&r, &fs);
	f = find("capped-volume");
	assert_non_null(f);
	assert_false(f->exact);
	assert_null(strstr(f->sentence, "with the OS queue empty"));
	assert_non_null(strstr(f->sentence, "the OS queue not followed"));
}

/* The rules that gate on BUSY% carry the depth's inexactness. */
static void test_busy_gates_not_exact(void **state)
{
	const struct ts_finding *f;

	reset(10);
	phase(1, 9.2, 13, 0);
	reads_pattern(4389, 0.062, 12, 12);
	disk->device_span = (struct ts_depth_range){ .lo = 1, .hi = 3,
						     .excess = 2 };
	build();
	r.show_pattern = true;
	ts_findings_build(&r, &fs);
	f = find("random-reads");
	assert_non_null(f);
	assert_false(f->exact);
	assert_non_null(strstr(f->sentence, "estimates: the depth was not exact"));
	memset(&who, 0, sizeof(who));
	who.by = TS_BY_PROCESS;
	submitter(4242, "backup", 4000, 2);
	submitter(17, "mysqld", 1000, 2);
	reset(10);
	phase(1, 9, 2, 0);
	disk->device_span = (struct ts_depth_range){ .lo = 1, .hi = 3,
						     .excess = 2 };
	with_who();
	f = find("one-submitter");
	assert_non_null(f);
	assert_false(f->exact);
}

/*
 * Every finding's sentence whole with a 63-byte device name and a depth
 * not exact: the longest clauses each rule has (a capped volume short of
 * its limit, the OS queue, a cannot-tell note).
 */
static void check_fit(void)
{
	int i;

	for (i = 0; i < r.ndev; i++)
		memset(r.dev[i].name, 'x', 63), r.dev[i].name[63] = 0;
	for (i = 0; i < r.ndev; i++)
		r.dev[i].device = (struct ts_depth_summary){
			.mean = r.dev[i].device.mean,
			.busy_share = r.dev[i].device.busy_share,
			.max = 123456, .max_min = 12345 };
	ts_findings_build(&r, &fs);
	assert_true(fs.n > 0);
	for (i = 0; i < fs.n; i++)
		if (strlen(fs.f[i].sentence) >= TS_SENTENCE_MAX - 1)
			fail_msg("%s cut: %s", fs.f[i].id, fs.f[i].sentence);
}

static void test_sentences_fit(void **state)
{
	reset(20); /* capped-volume, short of its limit */
	phase(1, 17, 4, 0);
	phase(2, 0.25, 4, 0);
	for (unsigned int depth = 4; depth <= 32; depth *= 2)
		phase(depth, 0.25, 2 * depth, 0);
	build();
	check_fit();
	reset(5); /* waiting-in-os */
	phase(4, 5, 1, 3);
	build();
	check_fit();
	reset(10); /* busy-not-full's note */
	phase(1, 9.5, 2, 0);
	build();
	check_fit();
	one_unit_eight_readers(); /* waiting-in-device */
	build();
	check_fit();
}

/*
 * The articles' MariaDB case on a 1-unit disk: 8 ms flushes alone in the
 * device most of the time, bursts of 2 ms page writes deep. The curve sums
 * both: its deep rows (writes) do four times its depth-1 row (flushes), a
 * headroom and a plateau that are the mix's. Only the note is drawn, naming
 * the classes; the same writes without the flushes are one class.
 */
static void test_mixed_classes(void **state)
{
	static const char *const curve[] = { "busy-not-full", "capped-volume",
					     "waiting-in-device",
					     "slow-not-busy" };
	const struct ts_finding *f;
	unsigned int depth;
	size_t i;

	reset(20);
	phase_as(TS_OP_FLUSH, 1, 14, 8, 0);
	for (depth = 2; depth <= 64; depth *= 2)
		phase_as(TS_OP_WRITE, depth, 0.8, 2.0 * depth, 0);
	build();
	if (getenv("TS_SHOW"))
		ts_findings_print(stderr, &fs, NULL, false);
	f = find("busy-not-full");
	assert_non_null(f);
	assert_int_equal(f->severity, TS_SEV_NOTE);
	assert_non_null(strstr(f->sentence, "mix classes the depth curve cannot compare (writes (too few alone in the device to measure) beside flushes of 7.995 ms alone)"));
	for (i = 0; i < sizeof(curve) / sizeof(curve[0]); i++) {
		f = find(curve[i]);
		if (f && f->severity != TS_SEV_NOTE)
			fail_msg("%s stated on a mixed curve: %s", curve[i], f->sentence);
	}
	/* flushes a cache answers at once: not a tenth of the device's time */
	capped_at_thousand();
	phase_as(TS_OP_FLUSH, 1, 0.05, 0.01, 0);
	build();
	assert_non_null(find("capped-volume"));
	/*
	 * reads and writes of one cost alone (1 ms), the writes deeper (a
	 * writeback beside a reader): their mean service differs by where
	 * they sit, not by what they cost: not mixed
	 */
	reset(20);
	phase_as(TS_OP_READ, 1, 8, 1, 0);
	phase_as(TS_OP_WRITE, 1, 2, 1, 0);
	phase_as(TS_OP_WRITE, 8, 6, 8, 0);
	build();
	f = find("busy-not-full");
	assert_true(!f || !strstr(f->sentence, "mix classes"));
	assert_true(r.dev[0].op[TS_OP_WRITE].service_ms >
		    TS_CURVE_GROWTH * r.dev[0].op[TS_OP_READ].service_ms);
	/* one class: the rules read the curve */
	reset(20);
	for (depth = 1; depth <= 64; depth *= 2)
		phase_as(TS_OP_WRITE, depth, depth == 1 ? 14 : 0.8, 2.0 * depth, 0);
	build();
	f = find("busy-not-full");
	assert_true(!f || !strstr(f->sentence, "mix classes"));
}

/*
 * A healthy disk given 1 ms reads and 20 ms writes, each alone: the
 * depth-1 row mixes them (mean 4.8x its median, p99 20 ms), each
 * direction alone is uniform: not slow-not-busy (it was, from the row).
 */
static void test_slow_not_busy_two_directions(void **state)
{
	reset(20);
	phase_as(TS_OP_READ, 1, 3.2, 1, 0);
	phase_as(TS_OP_WRITE, 1, 16, 20, 0);
	build();
	assert_true(r.dev[0].curve.row[0].service_ms >=
		    3 * r.dev[0].curve.row[0].p50_ms);
	assert_null(find("slow-not-busy"));
}

/*
 * Sizes within a direction: 4 KiB reads of 1 ms beside 1 MiB reads of 20
 * ms, each alone: the reads' mean is far above their median, and p99 past
 * 1 ms, but of two sizes (the size histogram: a factor of 256), not a
 * stall; the same service of one size is one.
 */
static void test_slow_not_busy_two_sizes(void **state)
{
	__u64 big;

	reset(20);
	phase(1, 3.2, 1, 0);
	big = 16 / 0.020;
	phase(1, 16, 20, 0);
	b.hist[0][TS_OP_READ].size[ts_size_bucket(4096)] -= big;
	b.hist[0][TS_OP_READ].size[ts_size_bucket(1 << 20)] += big;
	build();
	assert_true(r.dev[0].curve.alone[TS_OP_READ].service_ms >=
		    3 * r.dev[0].curve.alone[TS_OP_READ].p50_ms);
	assert_null(find("slow-not-busy"));
	reset(20);
	phase(1, 3.2, 1, 0);
	phase(1, 16, 20, 0);
	build();
	assert_non_null(find("slow-not-busy"));
}

/*
 * A 4-unit disk at 8 ms under 64 readers, seen only at depth 33-64 (the
 * tool started mid-load): no depth-1 service to compare with, but reads of
 * 126 ms each, past what any disk takes for one (36.3 ms), while it held
 * 54: waiting-in-device, and not busy-not-full's note; the same depth at
 * 1 ms a read (a device that works on them all) draws only the note.
 */
static void test_waiting_by_physics(void **state)
{
	const struct ts_finding *f;

	reset(20);
	phase(54, 19, 126, 0);
	build();
	f = find("waiting-in-device");
	assert_non_null(f);
	assert_int_equal(f->severity, TS_SEV_HIGH);
	assert_float_equal(fig(f, "slowest_disk_ms"), 36.1 + 4096 / 20000.0,
			   1e-9);
	assert_float_equal(fig(f, "concurrency"), 54 * 19 / 20.0, 0.01);
	assert_null(find("busy-not-full"));
	reset(20);
	phase(54, 19, 1, 0);
	build();
	assert_null(find("waiting-in-device"));
	assert_non_null(only_note("busy-not-full"));
}

/* The depth not exact: the finding says so and is not marked exact. */
static void test_not_exact(void **state)
{
	const struct ts_finding *f;

	one_unit_eight_readers();
	disk->device_span = (struct ts_depth_range){ .lo = 8, .hi = 12,
						     .excess = 4 };
	build();
	f = find("waiting-in-device");
	assert_non_null(f);
	assert_false(f->exact);
	assert_non_null(strstr(f->sentence, "estimates: the depth was not exact, the device held between 8 and 12"));
	/* exact figures: no caveat */
	one_unit_eight_readers();
	build();
	assert_true(find("waiting-in-device")->exact);
}

static void test_too_few(void **state)
{
	reset(1);
	phase(8, 0.2, 40, 0); /* 40 requests */
	build();
	assert_int_equal(fs.n, 0);
	assert_int_equal(fs.nskipped, 1);
	assert_string_equal(fs.skipped[0].reason,
			    "40 I/Os in 1.00 s: fewer than 50, too few to conclude");
}

static void test_idle(void **state)
{
	reset(1);
	build();
	assert_int_equal(fs.n, 0);
	assert_int_equal(fs.nskipped, 0);
}

/*
 * More findings than a report keeps: 70 disks each with a note, and one
 * more with a high finding, last. The high one is kept, ranked first; the
 * table says how many were not shown.
 */
static void test_cap_keeps_most_important(void **state)
{
	static struct ts_report many;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	reset(10);
	phase(1, 9.5, 2, 0); /* busy-not-full's note */
	build();
	many = r;
	for (i = 0; i < 70; i++) {
		many.dev[i] = r.dev[0];
		snprintf(many.dev[i].name, sizeof(many.dev[i].name), "d%d", i);
	}
	one_unit_eight_readers();
	build();
	many.dev[70] = r.dev[0];
	many.ndev = 71;
	ts_findings_build(&many, &fs);
	assert_int_equal(fs.n, TS_FINDINGS_MAX);
	assert_int_equal(fs.not_kept, 71 - TS_FINDINGS_MAX);
	assert_string_equal(fs.f[0].id, "waiting-in-device");
	assert_int_equal(fs.f[0].rank, 1);
	assert_string_equal(fs.f[1].device, "d0"); /* then the notes, as found */
	assert_string_equal(fs.f[TS_FINDINGS_MAX - 1].device, "d62");
	f = open_memstream(&buf, &len);
	ts_findings_print(f, &fs, NULL, false);
	fclose(f);
	assert_non_null(strstr(buf, "  (7 less important findings not shown: 64 at most a report)\n"));
	free(buf);
}

/* The table's findings of the report built, @said and @totals as given. */
static char *printed(struct ts_notes_said *said, bool totals)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ts_findings_print(f, &fs, said, totals);
	fclose(f);
	return buf;
}

/*
 * A note is said once a device in the table: in the first report that has
 * it and in the totals; a finding in every report (JSON, which keeps no
 * such memory, has every note in every report).
 */
static void test_note_once(void **state)
{
	static struct ts_notes_said said;
	char *buf;

	reset(10);
	phase(1, 9.5, 2, 0); /* busy-not-full's note */
	build();
	buf = printed(&said, false);
	assert_non_null(strstr(buf, "cannot tell (busy-not-full): vda"));
	free(buf);
	buf = printed(&said, false);
	assert_string_equal(buf, "");
	free(buf);
	buf = printed(&said, true);
	assert_non_null(strstr(buf, "cannot tell (busy-not-full): vda"));
	free(buf);
	/* another device's note is its own */
	snprintf(r.dev[0].name, sizeof(r.dev[0].name), "vdb");
	ts_findings_build(&r, &fs);
	buf = printed(&said, false);
	assert_non_null(strstr(buf, "cannot tell (busy-not-full): vdb"));
	free(buf);
	/* a finding, every time */
	one_unit_eight_readers();
	build();
	free(printed(&said, false));
	buf = printed(&said, false);
	assert_non_null(strstr(buf, "1. waiting-in-device [high]"));
	free(buf);
	/* without the memory, every note */
	reset(10);
	phase(1, 9.5, 2, 0);
	build();
	buf = printed(NULL, false);
	assert_non_null(strstr(buf, "cannot tell (busy-not-full)"));
	free(buf);
}

/* The table's block and the JSON of one report. */
static void test_output(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	one_unit_eight_readers();
	build();
	ts_print_table(f, &r, 0);
	ts_print_json(f, &r, 0);
	fclose(f);
	if (getenv("TS_SHOW"))
		fputs(buf, stderr);
	assert_non_null(strstr(buf, "\nfindings, most important first:\n  1. waiting-in-device [high]: vda reads: the device held 7.3 requests at once"));
	assert_non_null(strstr(buf, "\"findings\":[{\"id\":\"waiting-in-device\",\"device\":\"vda\",\"op\":\"read\",\"rank\":1,\"severity\":\"high\",\"exact\":true,"));
	assert_non_null(strstr(buf, "{\"name\":\"concurrency\",\"value\":7.300000,\"unit\":\"requests\"}"));
	assert_non_null(strstr(buf, "\"findings_skipped\":[]"));
	free(buf);
}

/* Quiet when nothing is found. */
static void test_output_quiet(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	reset(10);
	phase(1, 1, 2, 0);
	build();
	ts_print_table(f, &r, 0);
	fclose(f);
	assert_null(strstr(buf, "findings"));
	free(buf);
}

/* --help names every finding of the rule table. */
static void test_help_lists_rules(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < ts_nrules; i++)
		if (!strstr(ts_usage, ts_rules[i].id))
			fail_msg("--help does not name %s", ts_rules[i].id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy_not_full),
		cmocka_unit_test(test_busy_not_full_filtered),
		cmocka_unit_test(test_light_load_none),
		cmocka_unit_test(test_help_lists_rules),
		cmocka_unit_test(test_busy_cannot_tell),
		cmocka_unit_test(test_busy_cannot_tell_brief_two),
		cmocka_unit_test(test_waiting_in_device),
		cmocka_unit_test(test_waiting_in_device_none),
		cmocka_unit_test(test_waiting_in_device_cannot_tell),
		cmocka_unit_test(test_waiting_in_device_from_five),
		cmocka_unit_test(test_waiting_in_os),
		cmocka_unit_test(test_waiting_in_os_none),
		cmocka_unit_test(test_flush_wait),
		cmocka_unit_test(test_group_commit),
		cmocka_unit_test(test_flush_wait_none),
		cmocka_unit_test(test_random_reads),
		cmocka_unit_test(test_random_reads_none),
		cmocka_unit_test(test_random_reads_interleaved),
		cmocka_unit_test(test_capped),
		cmocka_unit_test(test_capped_cheap_at_knee),
		cmocka_unit_test(test_capped_short_beyond_knee),
		cmocka_unit_test(test_capped_none),
		cmocka_unit_test(test_capped_or_busy_one_verdict),
		cmocka_unit_test(test_no_contradiction),
		cmocka_unit_test(test_slow_not_busy),
		cmocka_unit_test(test_slow_not_busy_none),
		cmocka_unit_test(test_slow_not_busy_floor),
		cmocka_unit_test(test_slow_not_busy_two_directions),
		cmocka_unit_test(test_slow_not_busy_two_sizes),
		cmocka_unit_test(test_waiting_by_physics),
		cmocka_unit_test(test_slow_by_physics),
		cmocka_unit_test(test_one_submitter),
		cmocka_unit_test(test_one_submitter_none),
		cmocka_unit_test(test_not_exact),
		cmocka_unit_test(test_sentences_fit),
		cmocka_unit_test(test_mixed_classes),
		cmocka_unit_test(test_light_os_unknown),
		cmocka_unit_test(test_busy_gates_not_exact),
		cmocka_unit_test(test_too_few),
		cmocka_unit_test(test_cap_keeps_most_important),
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_output),
		cmocka_unit_test(test_note_once),
		cmocka_unit_test(test_output_quiet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
