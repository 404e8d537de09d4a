// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <string.h>

#include "report.h"

static const struct ts_dev_snap *find_dev(const struct ts_snapshot *s,
					  const struct ts_dev_snap *d)
{
	int i;

	/* one disk: its slot, queue and number, and its claim of the slot
	 * (a disk made again can get the same queue and number back) */
	for (i = 0; i < s->ndev; i++)
		if (s->dev[i].qid == d->qid && s->dev[i].queue == d->queue &&
		    s->dev[i].kdev == d->kdev &&
		    s->dev[i].claimed_ns == d->claimed_ns)
			return &s->dev[i];
	return NULL;
}

static double mean_ms(__u64 sum_ns, __u64 n)
{
	return n ? (double)sum_ns / (double)n / 1e6 : NAN;
}

void ts_op_figures_of(const struct ts_op_stats *a, const struct ts_op_stats *b,
		      double span_s, struct ts_op_figures *f)
{
	__u64 service = b->service_ns - a->service_ns;
	__u64 queue = b->queue_ns - a->queue_ns;
	__u64 total = b->total_ns - a->total_ns;

	f->layer_ios = b->layer_ios - a->layer_ios;
	f->layer_ms = mean_ms(b->layer_ns - a->layer_ns, f->layer_ios);
	f->ios = b->ios - a->ios;
	f->bytes = b->bytes - a->bytes;
	f->queued_ios = b->queued_ios - a->queued_ios;
	f->missed = b->missed - a->missed;
	f->missed_bytes = b->missed_bytes - a->missed_bytes;
	f->unissued = b->unissued - a->unissued;
	f->merges = b->merges - a->merges;
	f->iops = f->ios / span_s;
	f->mrgps = f->merges / span_s;
	f->mibps = ts_mib_per_s(f->bytes, span_s);
	f->avg_kb = f->ios ? f->bytes / 1024.0 / f->ios : NAN;
	f->service_ms = mean_ms(service, f->ios);
	f->queue_ms = mean_ms(queue, f->queued_ios);
	f->total_ms = mean_ms(total, f->queued_ios);
	f->service_ns = service;
	f->queue_ns = queue;
	f->total_ns = total;
	f->layer_ns = b->layer_ns - a->layer_ns;
}

static void op_percentiles(const struct ts_hist *h, struct ts_op_figures *f)
{
	f->has_hist = true;
	ts_hist_pct(h->queue, &f->queue_p);
	ts_hist_pct(h->service, &f->service_p);
	ts_hist_pct(h->total, &f->total_p);
	ts_hist_pct(h->layer, &f->layer_p);
}

/* This span's histograms of @b, into @out[set]; NULL when it has none. */
static struct ts_hist *dev_hists(const struct ts_snapshot *sa,
				 const struct ts_dev_snap *a,
				 const struct ts_snapshot *sb,
				 const struct ts_dev_snap *b, struct ts_report *r,
				 struct ts_dev_report *d)
{
	struct ts_hist *out, all;
	int op;

	if (!b->hist_slot || b->hist_slot > TS_HIST_DEVS)
		return NULL;
	if (a && a->hist_slot != b->hist_slot)
		a = NULL;
	out = r->hist[b->hist_slot - 1];
	memset(&all, 0, sizeof(all));
	for (op = 0; op < TS_HIST_SETS; op++)
		ts_hist_delta(a ? &sa->hist[a->hist_slot - 1][op] : NULL,
			      &sb->hist[b->hist_slot - 1][op], &out[op]);
	for (op = 0; op < TS_NR_OPS; op++) {
		ts_hist_add(&all, &out[op]);
		op_percentiles(&out[op], &d->op[op]);
	}
	op_percentiles(&all, &d->all);
	d->sync.has_hist = true;
	ts_hist_pct(out[TS_HIST_SYNC].total, &d->sync.total_p);
	return out;
}

/* Service by size of @b's device over the span (needs histograms). */
static void dev_size_service(const struct ts_snapshot *sa,
			     const struct ts_dev_snap *a,
			     const struct ts_snapshot *sb,
			     const struct ts_dev_snap *b,
			     struct ts_dev_report *d)
{
	if (!b->hist_slot || b->hist_slot > TS_HIST_DEVS)
		return;
	if (a && a->hist_slot != b->hist_slot)
		a = NULL;
	ts_pattern_service(a ? &sa->sizes[a->hist_slot - 1] : NULL,
			   &sb->sizes[b->hist_slot - 1], &d->pattern);
}

/* The parallelism curve of @b's device over the span (needs histograms). */
static void dev_curve(const struct ts_snapshot *sa, const struct ts_dev_snap *a,
		      const struct ts_snapshot *sb, const struct ts_dev_snap *b,
		      __u64 span_ns, struct ts_report *r, struct ts_dev_report *d)
{
	__s64 dt[TS_LEVEL_SLOTS];
	double iops;
	int i;

	if (!b->hist_slot || b->hist_slot > TS_HIST_DEVS)
		return;
	if (a && a->hist_slot != b->hist_slot)
		a = NULL;
	for (i = 0; i < TS_LEVEL_SLOTS; i++)
		dt[i] = b->device_time[i] - (a ? a->device_time[i] : 0);
	ts_depth_repair(dt, span_ns);
	ts_depth_counts_delta(a ? &sa->depth[a->hist_slot - 1] : NULL,
			      &sb->depth[b->hist_slot - 1], &r->depth_delta);
	/*
	 * now: throughput while busy, as the curve's rows are: the device's,
	 * of every submitter (under -c/--pid the rows count one submitter's
	 * requests, the others are FILTER_OTHER)
	 */
	iops = d->all.iops + d->events[TS_EV_FILTER_OTHER] / (span_ns / 1e9);
	ts_curve_build(&r->depth_delta, dt, d->device.max, span_ns,
		       d->device.busy_share > 0 ? iops / d->device.busy_share : 0,
		       d->device.mean, &d->curve);
	d->has_curve = true;
}

/*
 * How far the depth counters may be from the truth: the device's from the
 * tracer (user/lib/bounds.c); the OS queue's from counts: bios that left unseen
 * were counted until found, bios without a Q (table full, entered before
 * tracing) never were.
 */
/* The ranges of the true maximum depths of the span, in the device and OS. */
static void depth_ranges(const struct ts_dev_snap *b, bool consecutive,
			 const __u64 *ev, struct ts_depth_range *device,
			 struct ts_depth_range *os)
{
	*device = consecutive ? b->device_span : b->device_run;
	ts_depth_range_of(os, consecutive ? b->os_peak : b->os_peak_run,
			  ev[TS_EV_STALE_BIO] + ev[TS_EV_CONTENDED],
			  ev[TS_EV_BIO_FULL] + ev[TS_EV_NO_QUEUE_TIME] +
				  ev[TS_EV_CLAIMING]);
}

/* Depth figures of the span from its level times @dt, @ot and its ranges. */
static void depth_report(const __s64 *dt, const __s64 *ot, __u64 span_ns,
			 const struct ts_depth_range *device,
			 const struct ts_depth_range *os,
			 struct ts_dev_report *r)
{
	ts_depth_summarize(dt, span_ns, &r->device);
	ts_depth_summarize(ot, span_ns, &r->os);
	ts_depth_bound(&r->device, device);
	/* a request completed in the span: the device held one at least */
	if (r->all.ios && !r->device.max_min)
		r->device.max_min = 1;
	ts_depth_bound(&r->os, os);
}

/* @sum += @x, counter by counter. */
void ts_op_stats_add(struct ts_op_stats *sum, const struct ts_op_stats *x)
{
	__u64 *dst = (__u64 *)sum;
	const __u64 *src = (const __u64 *)x;
	size_t i;

	for (i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
		dst[i] += src[i];
}

static void sync_figures(const struct ts_dev_stats *a,
			 const struct ts_dev_stats *b, double span_s,
			 struct ts_sync_figures *f)
{
	const struct ts_op_stats *fa = &a->op[TS_OP_FLUSH];
	const struct ts_op_stats *fb = &b->op[TS_OP_FLUSH];
	__u64 total = b->sync.total_ns - a->sync.total_ns;
	__u64 flush = fb->service_ns - fa->service_ns;

	f->ios = b->sync.ios - a->sync.ios;
	f->bytes = b->sync.bytes - a->sync.bytes;
	f->missed = b->sync.missed - a->sync.missed;
	f->untracked = b->sync.untracked - a->sync.untracked;
	f->iops = f->ios / span_s;
	f->mibps = ts_mib_per_s(f->bytes, span_s);
	f->total_ms = mean_ms(total, f->ios);
	f->total_ns = total;
	f->flush_ios = fb->ios - fa->ios;
	f->flush_ms = mean_ms(flush, f->flush_ios);
	f->flush_share =
		total ? (double)(b->sync.flush_ns - a->sync.flush_ns) / total :
			NAN;
}

/* Each direction's figures, and all of them summed (r->all). */
static void ops_report(const struct ts_dev_snap *a, const struct ts_dev_snap *b,
		       double span_s, struct ts_dev_report *r)
{
	struct ts_op_stats sum_a = { 0 }, sum_b = { 0 };
	int i;

	for (i = 0; i < TS_NR_OPS; i++) {
		ts_op_figures_of(&a->stats.op[i], &b->stats.op[i], span_s, &r->op[i]);
		if (r->op[i].ios || r->op[i].missed || r->op[i].unissued)
			r->nops_active++;
		ts_op_stats_add(&sum_a, &a->stats.op[i]);
		ts_op_stats_add(&sum_b, &b->stats.op[i]);
	}
	ts_op_figures_of(&sum_a, &sum_b, span_s, &r->all);
	sync_figures(&a->stats, &b->stats, span_s, &r->sync);
	r->sync.in_flight = b->sync_in_flight;
}

/*
 * A bio-based device has no OS queue: its bios go to the driver at Q, so
 * there is no queue time to show (not a measured 0).
 */
static void no_queue(struct ts_dev_report *r)
{
	int i;

	for (i = 0; i < TS_NR_OPS; i++)
		r->op[i].queue_ms = NAN;
	r->all.queue_ms = NAN;
}

/*
 * A depth counter below 0 counted a departure twice (or missed an
 * arrival), and stays that far off: its figures are estimates.
 */
static void below_zero(struct ts_depth_summary *s, __s64 now)
{
	if (now >= 0)
		return;
	s->exact = false;
	s->max_exact = false;
}

/*
 * The time the level registers of @b changed over since @a's read: the
 * span of its depth figures (the report's span when @a has none).
 */
static __u64 levels_span(const struct ts_dev_snap *a,
			 const struct ts_dev_snap *b, __u64 span_ns)
{
	return a->levels_ns && b->levels_ns > a->levels_ns ?
		       b->levels_ns - a->levels_ns :
		       span_ns;
}

static void dev_report(const struct ts_dev_snap *a, const struct ts_dev_snap *b,
		       __u64 span_ns, bool consecutive, struct ts_dev_report *r)
{
	static const struct ts_dev_snap zero;
	__s64 dt[TS_LEVEL_REGS], ot[TS_LEVEL_REGS];
	struct ts_depth_range device, os;
	__u64 busy_ns;
	int i;

	/* counted from its claim, which may hold another disk's counts */
	r->counts_shared = b->counts_shared && !a;
	if (!a)
		a = &zero;
	ops_report(a, b, span_ns / 1e9, r);
	r->bio_layer = b->layer == TS_LAYER_BIO;
	if (r->bio_layer)
		no_queue(r);
	for (i = 0; i < TS_LEVEL_REGS; i++) {
		dt[i] = b->device_time[i] - a->device_time[i];
		ot[i] = b->os_time[i] - a->os_time[i];
	}
	for (i = 0; i < TS_NR_EVENTS; i++)
		r->events[i] = b->stats.events[i] - a->stats.events[i];
	depth_ranges(b, consecutive, r->events, &device, &os);
	span_ns = levels_span(a, b, span_ns);
	depth_report(dt, ot, span_ns, &device, &os, r);
	r->device.reordered_ms = (b->stats.device_reordered_ns -
				  a->stats.device_reordered_ns) / 1e6;
	r->os.reordered_ms = (b->stats.os_reordered_ns -
			      a->stats.os_reordered_ns) / 1e6;
	busy_ns = r->device.busy_share * span_ns;
	r->busy_pct = 100.0 * r->device.busy_share;
	r->svctm_ms = r->all.ios ? busy_ns / 1e6 / r->all.ios : NAN;
	r->in_device_now = b->in_device;
	r->in_os_now = b->in_os;
	below_zero(&r->device, b->in_device);
	below_zero(&r->os, b->in_os);
	r->active = r->all.ios || r->device.busy_share > 0 || r->os.busy_share > 0;
	for (i = 0; i < TS_NR_EVENTS; i++)
		r->active |= r->events[i] != 0;
}

_Static_assert(sizeof(struct ts_dev_stats) % sizeof(__u64) == 0,
	       "struct ts_dev_stats: __u64 counters only");

/*
 * @to's counters and depth times plus @from's (@sign 1) or less them
 * (@sign -1), counter by counter.
 */
static void snap_add(struct ts_dev_snap *to, const struct ts_dev_snap *from,
		     int sign)
{
	__u64 *t = (__u64 *)&to->stats;
	const __u64 *f = (const __u64 *)&from->stats;
	size_t i;

	for (i = 0; i < sizeof(to->stats) / sizeof(__u64); i++)
		t[i] += sign * f[i];
	for (i = 0; i < TS_LEVEL_REGS; i++) {
		to->device_time[i] += sign * from->device_time[i];
		to->os_time[i] += sign * from->os_time[i];
	}
}

void ts_snapshot_copy(struct ts_snapshot *dst, const struct ts_snapshot *src)
{
	bool sizes = src->has_sizes || dst->has_sizes;

	memcpy(dst, src, offsetof(struct ts_snapshot, sizes));
	if (sizes)
		memcpy(dst->sizes, src->sizes, sizeof(dst->sizes));
}

/* @to, gone lives of a number, now also sums @from's: its last claim. */
static void keep_last_claim(struct ts_dev_snap *to,
			    const struct ts_dev_snap *from)
{
	__u64 last = from->last_claim_ns > from->claimed_ns ?
			     from->last_claim_ns : from->claimed_ns;

	if (last > to->last_claim_ns)
		to->last_claim_ns = last;
}

void ts_snapshot_keep_gone(struct ts_snapshot *gone,
			   const struct ts_dev_snap *p)
{
	struct ts_dev_snap g = *p;
	int j;

	g.hist_slot = 0;
	for (j = 0; j < gone->ndev; j++) {
		if (gone->dev[j].kdev == g.kdev) {
			snap_add(&gone->dev[j], &g, 1);
			keep_last_claim(&gone->dev[j], &g);
			return;
		}
	}
	if (gone->ndev < TS_MAX_DEVS)
		gone->dev[gone->ndev++] = g;
}

bool ts_slot_next(struct ts_dev_snap *last, const struct ts_dev_snap *d,
		  struct ts_dev_snap *g)
{
	bool gone = last->queue && !last->untraced &&
		    (last->queue != d->queue || last->claimed_ns != d->claimed_ns);

	if (gone) {
		*g = *last;
		/* a disk not traced counts nothing: the gone one's figures
		 * run up to now */
		if (d->untraced) {
			g->stats = d->stats;
			g->pattern = d->pattern;
		}
	}
	*last = *d;
	return gone;
}

void ts_report_build(const struct ts_snapshot *a, const struct ts_snapshot *b,
		     ts_name_fn name, struct ts_report *r)
{
	__u64 span_ns = b->mono_ns > a->mono_ns ? b->mono_ns - a->mono_ns : 1;
	int i;

	memset(r, 0, offsetof(struct ts_report, hist));
	r->span_s = span_ns / 1e9;
	r->end_mono_ns = b->mono_ns;
	r->lost_events = b->lost_events - a->lost_events;
	for (i = 0; i < b->ndev; i++) {
		const struct ts_dev_snap *cur = &b->dev[i];
		struct ts_dev_report *d;

		if (cur->untraced)
			continue;
		d = &r->dev[r->ndev++];
		d->qid = cur->qid;
		d->major = cur->kdev >> 20;
		d->minor = cur->kdev & 0xfffff;
		d->claimed_ns = cur->claimed_ns;
		d->last_claim_ns = cur->last_claim_ns > cur->claimed_ns ?
					   cur->last_claim_ns : cur->claimed_ns;
		name(d->major, d->minor, d->name, sizeof(d->name), &d->stack);
		dev_report(find_dev(a, cur), cur, span_ns,
			   b->seq && b->seq == a->seq + 1, d);
		if (cur->oldest_issue_ns && cur->oldest_issue_ns < b->mono_ns)
			d->oldest_age_s = (b->mono_ns - cur->oldest_issue_ns) / 1e9;
		d->hist = dev_hists(a, find_dev(a, cur), b, cur, r, d);
		dev_curve(a, find_dev(a, cur), b, cur, span_ns, r, d);
		ts_pattern_delta(find_dev(a, cur) ? &find_dev(a, cur)->pattern : NULL,
				 &cur->pattern, r->span_s, &d->pattern);
		dev_size_service(a, find_dev(a, cur), b, cur, d);
	}
}

struct ts_flags_disk ts_report_disk(const struct ts_dev_report *d)
{
	return (struct ts_flags_disk){ d->qid, d->claimed_ns,
				       d->major << 20 | d->minor,
				       d->last_claim_ns };
}

const struct ts_dev_report *ts_report_dev(const struct ts_report *r,
					  unsigned int qid)
{
	int i;

	for (i = 0; i < r->ndev; i++)
		if (r->dev[i].qid == qid)
			return &r->dev[i];
	return NULL;
}

void ts_span_join_add(struct ts_span_join *j, const struct ts_snapshot *cur)
{
	const struct ts_dev_snap *d;
	int i, k;

	for (i = 0; i < cur->ndev; i++) {
		d = &cur->dev[i];
		k = d->qid % TS_MAX_DEVS;
		if (d->untraced)
			continue;
		if (j->slot[k].claimed_ns != d->claimed_ns || !j->slot[k].any) {
			j->slot[k].claimed_ns = d->claimed_ns;
			j->slot[k].any = true;
			j->slot[k].device = d->device_span;
			j->slot[k].os_peak = d->os_peak;
			continue;
		}
		ts_depth_range_join(&j->slot[k].device, &d->device_span);
		if (d->os_peak > j->slot[k].os_peak)
			j->slot[k].os_peak = d->os_peak;
	}
}

void ts_report_build_window(const struct ts_snapshot *mark,
			    const struct ts_snapshot *cur,
			    struct ts_span_join *j, struct ts_snapshot *scratch,
			    ts_name_fn name, struct ts_report *r)
{
	struct ts_dev_snap *d;
	int i, k;

	ts_snapshot_copy(scratch, cur);
	for (i = 0; i < scratch->ndev; i++) {
		d = &scratch->dev[i];
		k = d->qid % TS_MAX_DEVS;
		if (j->slot[k].any && j->slot[k].claimed_ns == d->claimed_ns) {
			d->device_span = j->slot[k].device;
			d->os_peak = j->slot[k].os_peak;
		} else { /* no span of its ended in the window: the run's */
			d->device_span = d->device_run;
			d->os_peak = d->os_peak_run;
		}
		j->slot[k].any = false;
	}
	/* the spans' ranges, joined over the window: as for one span */
	scratch->seq = mark->seq + 1;
	ts_report_build(mark, scratch, name, r);
}
