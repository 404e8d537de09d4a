// SPDX-License-Identifier: GPL-2.0
/* The JSON of a report (-j): doc/json.md, schema/truestat.schema.json. */
#include <math.h>
#include <string.h>

#include "findings/findings.h"
#include "lib/json.h"
#include "core/report_parts.h"
#include "output.h"
#include "output_parts.h"

/* Non-empty buckets as [lower bound, count] pairs (ns, or bytes). */
static void json_buckets(struct tj *j, const char *key, const __u64 *counts,
			 int n, int sizes)
{
	int b;

	tj_arr(j, key);
	for (b = 0; b < n; b++) {
		if (!counts[b])
			continue;
		tj_arr(j, NULL);
		tj_u64(j, NULL, sizes ? (b ? 1ULL << b : 0) : ts_hist_lower(b));
		tj_u64(j, NULL, counts[b]);
		tj_end_arr(j);
	}
	tj_end_arr(j);
}

static void json_hist(struct tj *j, const struct ts_hist *h)
{
	tj_obj(j, "histograms");
	json_buckets(j, "queue_ns", h->queue, TS_HIST_SLOTS, 0);
	json_buckets(j, "service_ns", h->service, TS_HIST_SLOTS, 0);
	json_buckets(j, "total_ns", h->total, TS_HIST_SLOTS, 0);
	json_buckets(j, "size_bytes", h->size, TS_SIZE_SLOTS, 1);
	json_buckets(j, "layer_ns", h->layer, TS_HIST_SLOTS, 0);
	tj_end_obj(j);
}

/* Merges, null under --light (no merge program attached). */
static void json_merges(struct tj *j, const struct ts_op_figures *o,
			bool light)
{
	if (light) {
		tj_null(j, "merges");
		tj_null(j, "merges_per_s");
		return;
	}
	tj_u64(j, "merges", o->merges);
	tj_num(j, "merges_per_s", o->mrgps, 1);
}

static void json_op(struct tj *j, const char *key, const struct ts_op_figures *o,
		    const struct ts_hist *h, bool light)
{
	tj_obj(j, key);
	tj_u64(j, "ios", o->ios);
	tj_u64(j, "bytes", o->bytes);
	tj_num(j, "iops", o->iops, 1);
	json_merges(j, o, light);
	tj_num(j, "mib_per_s", o->mibps, 3);
	tj_num(j, "avg_kib", o->avg_kb, 1);
	tj_u64(j, "queued_ios", o->queued_ios);
	tj_u64(j, "missed", o->missed);
	tj_u64(j, "missed_bytes", o->missed_bytes);
	tj_u64(j, "unissued", o->unissued);
	tj_num(j, "queue_ms", o->queue_ms, 6);
	tj_num(j, "service_ms", o->service_ms, 6);
	tj_num(j, "total_ms", o->total_ms, 6);
	tj_u64(j, "layer_ios", o->layer_ios);
	tj_num(j, "layer_ms", o->layer_ms, 6);
	tj_u64(j, "queue_ns_sum", o->queue_ns);
	tj_u64(j, "service_ns_sum", o->service_ns);
	tj_u64(j, "total_ns_sum", o->total_ns);
	tj_u64(j, "layer_ns_sum", o->layer_ns);
	if (o->has_hist && o->ios) {
		tj_obj(j, "percentiles_ms");
		ts_json_pct(j, "queue", &o->queue_p);
		ts_json_pct(j, "service", &o->service_p);
		ts_json_pct(j, "total", &o->total_p);
		if (o->layer_ios)
			ts_json_pct(j, "layer", &o->layer_p);
		tj_end_obj(j);
	}
	if (h)
		json_hist(j, h);
	tj_end_obj(j);
}

static void json_depth(struct tj *j, const char *key,
		       const struct ts_depth_summary *s, long long now)
{
	tj_obj(j, key);
	tj_num(j, "mean", s->mean, 6);
	tj_u64(j, "max", s->max);
	tj_bool(j, "max_exact", s->max_exact);
	tj_u64(j, "max_min", s->max_min);
	tj_u64(j, "excess", s->excess);
	tj_u64(j, "uncounted_in_flight", s->uncounted);
	tj_num(j, "unsure_ms", s->unsure_ms, 3);
	tj_num(j, "windows_ms", s->windows_ms, 3);
	tj_bool(j, "exact", s->exact);
	tj_u64(j, "p50", s->p50);
	tj_u64(j, "p90", s->p90);
	tj_u64(j, "p99", s->p99);
	tj_num(j, "busy_pct", 100.0 * s->busy_share, 2);
	tj_num(j, "reordered_ms", s->reordered_ms, 6);
	tj_s64(j, "now", now); /* never negative: a test checks it */
	tj_end_obj(j);
}


static void json_row_label(struct tj *j, const char *key,
			   const struct ts_curve *c, int row)
{
	char buf[24];

	if (row < 0)
		tj_null(j, key);
	else
		tj_str(j, key, ts_out_depths(&c->row[row], buf, sizeof(buf)));
}

static void json_limit(struct tj *j, enum ts_curve_limit l)
{
	static const char *const names[] = {
		[TS_LIMIT_DEVICE] = "device",
		[TS_LIMIT_OS_QUEUE] = "os_queue",
		[TS_LIMIT_ABOVE] = "above_device",
	};

	if (l == TS_LIMIT_UNKNOWN)
		tj_null(j, "limit");
	else
		tj_str(j, "limit", names[l]);
}

/* Each op's requests issued alone in the device (depth 1), ops with some. */
static void json_alone(struct tj *j, const struct ts_curve *c)
{
	int op;

	tj_obj(j, "alone");
	for (op = 0; op < TS_NR_OPS; op++) {
		if (!c->alone[op].completions)
			continue;
		tj_obj(j, ts_op_names[op]);
		tj_u64(j, "ios", c->alone[op].completions);
		tj_num(j, "service_mean_ms", c->alone[op].service_ms, 6);
		tj_num(j, "service_p50_ms", c->alone[op].p50_ms, 6);
		tj_num(j, "service_p99_ms", c->alone[op].p99_ms, 6);
		tj_end_obj(j);
	}
	tj_end_obj(j);
}

static void json_curve(struct tj *j, const struct ts_dev_report *d, bool light)
{
	const struct ts_curve *c = &d->curve;
	int k;

	tj_obj(j, "depth_curve");
	tj_bool(j, "exact", d->device.exact);
	tj_arr(j, "rows");
	for (k = 0; k < c->nrows; k++) {
		const struct ts_curve_row *row = &c->row[k];

		tj_obj(j, NULL);
		tj_u64(j, "depth_lo", row->lo);
		tj_u64(j, "depth_hi", row->hi);
		tj_num(j, "time_s", row->time_s, 6);
		tj_num(j, "mean_depth", row->mean_depth, 3);
		tj_u64(j, "ios", row->completions);
		tj_num(j, "service_mean_ms", row->service_ms, 6);
		tj_num(j, "iops", row->iops, 1);
		tj_num(j, "service_p50_ms", row->p50_ms, 6);
		tj_num(j, "service_p95_ms", row->p95_ms, 6);
		tj_num(j, "service_p99_ms", row->p99_ms, 6);
		tj_bool(j, "evidence", row->evidence);
		tj_end_obj(j);
	}
	tj_end_arr(j);
	if (c->parallelism_row >= 0 && !c->still_growing)
		tj_u64(j, "parallelism", c->row[c->parallelism_row].hi);
	else
		tj_null(j, "parallelism");
	json_row_label(j, "parallelism_depths", c, c->parallelism_row);
	json_limit(j, ts_out_dev_limit(d, light));
	tj_bool(j, "still_growing", c->still_growing);
	json_row_label(j, "saturation_depths", c, c->saturation_row);
	tj_num(j, "headroom", c->headroom, 3);
	json_row_label(j, "best_depths", c, c->best_row);
	json_alone(j, c);
	tj_end_obj(j);
}

/* What @d is: its layer, the devices under it and those above it. */
static void json_stack(struct tj *j, const struct ts_dev_report *d)
{
	const struct ts_stack *s = &d->stack;
	int k;

	tj_str(j, "layer", d->bio_layer ? "bio" : "request");
	tj_arr(j, "members");
	for (k = 0; k < s->nmembers; k++)
		tj_str(j, NULL, s->member[k].name);
	tj_end_arr(j);
	tj_arr(j, "holders");
	for (k = 0; k < s->nholders; k++)
		tj_str(j, NULL, s->holder[k]);
	tj_end_arr(j);
}

/* Durable writes; null with --light (their Q is not followed). */
static void json_sync(struct tj *j, const struct ts_report *r,
		      const struct ts_dev_report *d)
{
	const struct ts_sync_figures *s = &d->sync;

	if (r->light) {
		tj_null(j, "sync");
		return;
	}
	tj_obj(j, "sync");
	tj_u64(j, "ios", s->ios);
	tj_u64(j, "bytes", s->bytes);
	tj_num(j, "iops", s->iops, 1);
	tj_num(j, "mib_per_s", s->mibps, 3);
	tj_num(j, "total_ms", s->total_ms, 6);
	tj_u64(j, "total_ns_sum", s->total_ns);
	tj_u64(j, "missed", s->missed);
	tj_u64(j, "untracked", s->untracked);
	tj_u64(j, "in_flight", s->in_flight);
	tj_u64(j, "flush_ios", s->flush_ios);
	tj_num(j, "flush_service_ms", s->flush_ms, 6);
	tj_num(j, "flush_share", s->flush_share, 4);
	if (s->has_hist && s->ios) {
		tj_obj(j, "percentiles_ms");
		ts_json_pct(j, "total", &s->total_p);
		tj_end_obj(j);
	}
	if (r->show_hist && d->hist) {
		tj_obj(j, "histograms");
		json_buckets(j, "total_ns", d->hist[TS_HIST_SYNC].total,
			     TS_HIST_SLOTS, 0);
		json_buckets(j, "size_bytes", d->hist[TS_HIST_SYNC].size,
			     TS_SIZE_SLOTS, 1);
		tj_end_obj(j);
	}
	tj_end_obj(j);
}

/* -p: the "partitions" array of device @d (rows with I/O in the span). */
static void json_partitions(struct tj *j, const struct ts_report *r,
			    const struct ts_dev_report *d)
{
	const struct ts_part_row *p;
	int i, op;

	if (!r->parts)
		return;
	tj_arr(j, "partitions");
	for (i = 0; i < r->parts->n; i++) {
		p = &r->parts->row[i];
		if (p->qid != d->qid || p->claimed_ns != d->claimed_ns ||
		    !p->nops_active)
			continue;
		tj_obj(j, NULL);
		tj_str(j, "partition", p->name);
		tj_u64(j, "partno", p->partno);
		tj_bool(j, "complete", !p->incomplete);
		tj_obj(j, "ops");
		for (op = 0; op < TS_NR_OPS; op++)
			if (ts_out_op_shown(&p->op[op]))
				json_op(j, ts_op_names[op], &p->op[op], NULL,
					r->light);
		tj_end_obj(j);
		json_op(j, "all", &p->all, NULL, r->light);
		tj_end_obj(j);
	}
	tj_end_arr(j);
}

static void json_device(struct tj *j, const struct ts_report *r,
			const struct ts_dev_report *d)
{
	int op, e;

	tj_obj(j, NULL);
	tj_str(j, "device", d->name);
	tj_u64(j, "major", d->major);
	tj_u64(j, "minor", d->minor);
	json_stack(j, d);
	tj_obj(j, "ops");
	for (op = 0; op < TS_NR_OPS; op++)
		if (d->op[op].ios || d->op[op].missed || d->op[op].unissued)
			json_op(j, ts_op_names[op], &d->op[op],
				r->show_hist && d->hist ? &d->hist[op] : NULL,
				r->light);
	tj_end_obj(j);
	json_op(j, "all", &d->all, NULL, r->light);
	json_depth(j, "concurrency", &d->device, d->in_device_now);
	tj_num(j, "oldest_in_device_s", d->oldest_age_s, 3);
	if (r->light || d->bio_layer) /* not followed, or none */
		tj_null(j, "os_queue");
	else
		json_depth(j, "os_queue", &d->os, d->in_os_now);
	tj_obj(j, "iostat");
	tj_num(j, "util_pct", d->busy_pct, 2);
	tj_num(j, "svctm_ms", d->svctm_ms, 6);
	tj_end_obj(j);
	tj_bool(j, "discard_merges_exact", d->discard_ranges <= 1);
	tj_bool(j, "counts_shared", d->counts_shared);
	json_sync(j, r, d);
	if (r->show_curve && d->has_curve)
		json_curve(j, d, r->light);
	if (r->show_pattern)
		ts_pattern_json(j, &d->pattern);
	if (r->flags)
		ts_flags_json(j, r->flags, ts_report_disk(d));
	if (r->who)
		ts_who_json(j, r->who, ts_report_disk(d), d->events[TS_EV_WHO_FULL]);
	if (r->totals && r->slow)
		ts_slow_json_counts(j, r->slow, d->major, d->minor,
				    d->events[TS_EV_SLOW_DROPPED], d->all.missed);
	json_partitions(j, r, d);
	tj_obj(j, "events");
	for (e = 0; e < TS_NR_EVENTS; e++)
		tj_u64(j, ts_event_names[e], d->events[e]);
	tj_end_obj(j);
	tj_end_obj(j);
}

static void json_names(struct tj *j, const char *names)
{
	char name[64];
	int n;

	while (names && sscanf(names, " %63s%n", name, &n) == 1) {
		tj_str(j, NULL, name);
		names += n;
	}
}

/*
 * The disks no report covers (bio-based under --light, those refused a
 * slot), as names.
 */
static void json_not_traced(struct tj *j, const struct ts_report *r)
{
	tj_arr(j, "not_traced");
	json_names(j, r->not_traced);
	json_names(j, r->no_room);
	tj_end_arr(j);
}

/* --exclude: the disks it left out, its globs that matched none. */
static void json_excluded(struct tj *j, const struct ts_report *r)
{
	tj_obj(j, "exclude");
	tj_u64(j, "disks", r->nexcluded);
	tj_arr(j, "names");
	json_names(j, r->excluded);
	tj_end_arr(j);
	tj_arr(j, "unmatched");
	json_names(j, r->exclude_unmatched);
	tj_end_arr(j);
	tj_bool(j, "none_left", r->none_left);
	tj_end_obj(j);
}

static void json_findings(struct tj *j, const struct ts_report *r)
{
	static struct ts_findings fs;

	ts_findings_build(r, &fs);
	ts_findings_json(j, &fs);
}

void ts_print_json(FILE *f, const struct ts_report *r, time_t when)
{
	struct tj j;
	char stamp[32];
	int i;

	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime(&when));
	tj_open(&j, f);
	tj_obj(&j, NULL);
	tj_str(&j, "type", r->totals ? "totals" : "interval");
	tj_str(&j, "time", stamp);
	tj_num(&j, "span_s", r->span_s, 6);
	tj_u64(&j, "end_mono_ns", r->end_mono_ns);
	tj_u64(&j, "lost_events", r->lost_events);
	tj_str(&j, "queue_from", r->light ? "request" : "bio");
	json_not_traced(&j, r);
	json_excluded(&j, r);
	tj_arr(&j, "devices");
	for (i = 0; i < r->ndev; i++)
		if (r->dev[i].active)
			json_device(&j, r, &r->dev[i]);
	tj_end_arr(&j);
	json_findings(&j, r);
	tj_end_obj(&j);
	tj_close(&j);
}
