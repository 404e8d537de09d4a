// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "prom.h"

static void help(FILE *f, const char *name, const char *type, const char *text)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

static void labels(FILE *f, const struct ts_dev_report *d, const char *op)
{
	/* device names come from sysfs: no quotes or backslashes in them */
	fprintf(f, "{device=\"%s\"", d->name);
	if (op)
		fprintf(f, ",op=\"%s\"", op);
}

static double sum_s(double mean_ms, __u64 n)
{
	return n && !isnan(mean_ms) ? mean_ms * (double)n / 1e3 : 0;
}

/* One histogram series: cumulative counts at the exported edges. */
static void histogram(FILE *f, const char *name, const struct ts_dev_report *d,
		      const char *op, const __u64 *counts, double sum)
{
	__u64 cum = 0;
	int b = 0, e, q;

	for (e = TS_PROM_FIRST_EXP; e <= TS_HIST_MAX_EXP + 1; e++) {
		for (q = 0; q < TS_PROM_PER_OCTAVE; q++) {
			/* first fine bucket at or above 2^e (1 + q/4) */
			__u64 edge = (1ULL << e) + q * (1ULL << e) / TS_PROM_PER_OCTAVE;

			if (e > TS_HIST_MAX_EXP && q)
				break;
			for (; b < TS_HIST_SLOTS && ts_hist_lower(b) < edge; b++)
				cum += counts[b];
			fprintf(f, "%s_bucket", name);
			labels(f, d, op);
			fprintf(f, ",le=\"%.9g\"} %llu\n", edge / 1e9,
				(unsigned long long)cum);
		}
	}
	for (; b < TS_HIST_SLOTS; b++)
		cum += counts[b];
	fprintf(f, "%s_bucket", name);
	labels(f, d, op);
	fprintf(f, ",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
	fprintf(f, "%s_sum", name);
	labels(f, d, op);
	fprintf(f, "} %.9f\n%s_count", sum, name);
	labels(f, d, op);
	fprintf(f, "} %llu\n", (unsigned long long)cum);
}

/* A counter or gauge per device and direction. */
#define PER_OP(f, r, name, type, text, expr)                                 \
	do {                                                                 \
		int i_, op_;                                                 \
		help(f, name, type, text);                                   \
		for (i_ = 0; i_ < (r)->ndev; i_++)                           \
			for (op_ = 0; op_ < TS_NR_OPS; op_++) {              \
				const struct ts_dev_report *d = &(r)->dev[i_]; \
				const struct ts_op_figures *o = &d->op[op_]; \
				if (!o->ios && !o->missed)                   \
					continue;                            \
				fputs(name, f);                              \
				labels(f, d, ts_op_names[op_]);              \
				fprintf(f, "} %.17g\n", (double)(expr));     \
			}                                                    \
	} while (0)

/* A counter or gauge per device. */
#define PER_DEV(f, r, name, type, text, expr)                                \
	do {                                                                 \
		int i_;                                                      \
		help(f, name, type, text);                                   \
		for (i_ = 0; i_ < (r)->ndev; i_++) {                         \
			const struct ts_dev_report *d = &(r)->dev[i_];       \
			fputs(name, f);                                      \
			labels(f, d, NULL);                                  \
			fprintf(f, "} %.17g\n", (double)(expr));             \
		}                                                            \
	} while (0)

static void histograms(FILE *f, const struct ts_report *r, int kind,
		       const char *name, const char *text)
{
	int i, op;

	help(f, name, "histogram", text);
	for (i = 0; i < r->ndev; i++) {
		const struct ts_dev_report *d = &r->dev[i];

		if (!d->hist)
			continue;
		for (op = 0; op < TS_NR_OPS; op++) {
			const struct ts_op_figures *o = &d->op[op];
			const struct ts_hist *h = &d->hist[op];

			if (!o->ios)
				continue;
			if (kind == 0)
				histogram(f, name, d, ts_op_names[op], h->queue,
					  sum_s(o->queue_ms, o->queued_ios));
			else if (kind == 1)
				histogram(f, name, d, ts_op_names[op], h->service,
					  sum_s(o->service_ms, o->ios));
			else
				histogram(f, name, d, ts_op_names[op], h->total,
					  sum_s(o->total_ms, o->queued_ios));
		}
	}
}

static void events(FILE *f, const struct ts_report *r)
{
	int i, e;

	help(f, "truestat_events_total", "counter",
	     "Things that went differently from Q->D->C (README: events)");
	for (i = 0; i < r->ndev; i++)
		for (e = 0; e < TS_NR_EVENTS; e++) {
			fputs("truestat_events_total", f);
			labels(f, &r->dev[i], NULL);
			fprintf(f, ",event=\"%s\"} %llu\n", ts_event_names[e],
				(unsigned long long)r->dev[i].events[e]);
		}
}

char *ts_prom_render(const struct ts_report *r, size_t *len)
{
	double span = r->span_s;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	PER_OP(f, r, "truestat_requests_total", "counter",
	       "Requests completed", o->ios);
	PER_OP(f, r, "truestat_bytes_total", "counter",
	       "Bytes of the requests completed (size at issue)", o->bytes);
	PER_OP(f, r, "truestat_missed_completions_total", "counter",
	       "Requests completed without truestat seeing it (not in requests)",
	       o->missed);
	histograms(f, r, 0, "truestat_queue_seconds",
		   "Q->D: bio entered the block layer to request issued");
	histograms(f, r, 1, "truestat_service_seconds",
		   "D->C: request issued to the driver to completed");
	histograms(f, r, 2, "truestat_total_time_seconds",
		   "Q->C: bio entered the block layer to completed");
	PER_DEV(f, r, "truestat_device_inflight", "gauge",
		"Requests inside the device now", d->in_device_now);
	if (!r->light) /* --light: the OS queue is not followed */
		PER_DEV(f, r, "truestat_os_queued", "gauge",
			"Bios and requests waiting in the OS now", d->in_os_now);
	PER_DEV(f, r, "truestat_device_inflight_seconds_total", "counter",
		"Integral of the in-device depth over time: its rate is the mean concurrency",
		d->device.mean * span);
	if (!r->light)
		PER_DEV(f, r, "truestat_os_queued_seconds_total", "counter",
			"Integral of the OS queue depth over time: its rate is the mean OS queue depth",
			d->os.mean * span);
	PER_DEV(f, r, "truestat_device_busy_seconds_total", "counter",
		"Time with at least one request in the device (iostat's %util is its rate)",
		d->device.busy_share * span);
	events(f, r);
	help(f, "truestat_lost_events_total", "counter",
	     "Events lost to BPF recursion (recursion_misses)");
	fprintf(f, "truestat_lost_events_total %llu\n",
		(unsigned long long)r->lost_events);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
