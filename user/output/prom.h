/* SPDX-License-Identifier: GPL-2.0 */
/* The Prometheus text exposition of a report over the whole run. */
#ifndef TS_PROM_H
#define TS_PROM_H

#include <stddef.h>

#include "core/report.h"
#include "core/tracer.h"
#include "findings/findings.h"

/*
 * Histogram buckets exported, in full (--web.histogram-buckets=full):
 * every quarter of a power of two of ns from 2^10 ns (about 1 us) to 2^38
 * ns, 113 edges; each is an edge of the kernel's fine buckets, so each
 * cumulative count is exact, and a quantile Prometheus interpolates
 * inside one of them is within its width (25% of its lower edge).
 */
#define TS_PROM_FIRST_EXP 10
#define TS_PROM_PER_OCTAVE 4
#define TS_PROM_FULL_EDGES                                                     \
	((TS_HIST_MAX_EXP + 1 - TS_PROM_FIRST_EXP) * TS_PROM_PER_OCTAVE + 1)

/*
 * By default, a short set: the edge of the full set nearest each half
 * decade from 10 us to 1 s (10, 31.6, 100, ... us), 11 edges, as exact as
 * the full set's; each is 2.8 to 3.5 times the one before.
 */
#define TS_PROM_SHORT_EDGES 11

/* The edges of the short or the @full set, in ns, into @edges: how many. */
int ts_prom_edges(bool full, __u64 *edges);

/* Where each counter of a disk is in struct ts_prom_dev.total. */
enum {
	TS_PROM_IOS = 0,				/* by op */
	TS_PROM_BYTES = TS_PROM_IOS + TS_NR_OPS,	/* by op */
	TS_PROM_MISSED = TS_PROM_BYTES + TS_NR_OPS,	/* by op */
	TS_PROM_INFLIGHT_S = TS_PROM_MISSED + TS_NR_OPS,
	TS_PROM_OS_QUEUED_S,
	TS_PROM_BUSY_S,
	TS_PROM_EVENTS,					/* by event */
	TS_PROM_NR = TS_PROM_EVENTS + TS_NR_EVENTS,
};

/*
 * The -D curve's raw material by depth class at issue, over the run: each
 * scrape adds the rise of the run's count (64 bits: the loader widens the
 * kernel's 32-bit buckets at every snapshot, ts_depth_widen).
 */
struct ts_prom_depth {
	__u64 seen;	  /* the report's completions at the last scrape */
	double seen_s;	  /* and their service time (bucket middles) */
	__u64 issued;	  /* completions printed */
	double service_s; /* their service time, printed */
	double time_s;	  /* time the device spent at these depths, printed */
};

/*
 * What the exporter printed last: every *_total is the larger of the run's
 * total now and what was printed before, so that none goes down. A late
 * repair of the depth (README: completions never seen) lowers the run's
 * integrals, and Prometheus would read that as a counter reset; the printed
 * counter instead holds until the run's total catches up. A disk missing
 * from a scrape is forgotten: if it comes back, its counters start again.
 * So do a new disk's under the name of one printed (a loop device removed
 * and added, a USB disk plugged back): it counts from its own start, and
 * holding the old disk's totals would print them frozen until it caught
 * up; Prometheus reads the drop as the counter reset it is.
 * Zeroed: nothing printed yet.
 */
struct ts_prom_dev {
	char name[64];
	unsigned int major, minor; /* which disk: as ts_dev_report's */
	__u64 claimed_ns;
	double total[TS_PROM_NR];
	struct ts_prom_depth depth[TS_DEPTH_CLASSES];
};

/*
 * --by: the submitters that have series of their own, per device the
 * first --top seen (kept: a counter never moves to "other" and back).
 */
struct ts_prom_named {
	__u64 id;
	unsigned int qid;
};

/*
 * A disk's depth since the previous scrape (the window), by its slot
 * (qid): the spans that ended since (ts_prom_span: each second without an
 * interval, each interval with one) and, at the scrape, the span under
 * way. And its time in spans whose depth was not exact, over the run.
 */
struct ts_prom_window {
	__u64 claimed_ns;	     /* the disk in the slot: its claim */
	bool ended;		     /* spans ended since the last scrape */
	struct ts_depth_range range; /* their true maximum's range */
	bool shown;		     /* the last scrape's window is in seen */
	struct ts_depth_range seen;
	double inexact_s;
};

struct ts_prom {
	bool full_buckets; /* --web.histogram-buckets=full; else short */
	/* truestat_build_info's labels: truestat's version and commit, the
	 * running kernel's release */
	const char *version, *commit, *kernel;
	/* the findings of the last window the caller drew them over, or
	 * NULL; and how many windows ended so far (the last one's number) */
	const struct ts_findings *findings;
	__u64 findings_windows;
	double lost_events;
	int ndev;
	struct ts_prom_dev dev[TS_MAX_DEVS]; /* in the last report's order */
	int nnamed;
	struct ts_prom_named named[TS_WHO_ENTRIES];
	struct ts_prom_window win[TS_MAX_DEVS];
	/* truestat's programs as the kernel counts them at this scrape, and
	 * whether it counts them now */
	int nprogs;
	struct ts_prog_stat progs[TS_MAX_PROGS];
	bool bpf_stats;
};

/* A span of the depth ended at snapshot @cur, taken after @prev. */
void ts_prom_span(struct ts_prom *p, const struct ts_snapshot *prev,
		  const struct ts_snapshot *cur);

/*
 * A scrape's snapshot @now (no span end): each disk's window is the
 * spans ended since the last scrape and the span under way; the next
 * starts.
 */
void ts_prom_window(struct ts_prom *p, const struct ts_snapshot *now);

/*
 * @r must cover the run from its start (a totals report, with histograms):
 * counters and histograms are cumulative. @p remembers what was printed
 * from one scrape to the next. A disk another has taken the dev_t of since
 * (its slot still in @r) is left out. malloc'd text, length in *len.
 */
char *ts_prom_render(struct ts_prom *p, const struct ts_report *r, size_t *len);

/*
 * The same through sink @x (output/expo.h): each family and series once,
 * what every format is made from. 0, or -1: out of memory.
 */
struct ts_expo;
int ts_prom_render_to(struct ts_prom *p, const struct ts_report *r,
		      const struct ts_expo *x);

/*
 * The same as Prometheus' protobuf exposition: length-delimited
 * io.prometheus.client.MetricFamily messages, each histogram with its
 * classic buckets and native ones at schema 4. malloc'd, length in *len.
 */
char *ts_prom_render_protobuf(struct ts_prom *p, const struct ts_report *r,
			      size_t *len);

/* Whether the submitter of @k has series of its own in @ctx (a ts_prom). */
bool ts_prom_named(const void *ctx, const struct ts_who_key *k);

#endif
