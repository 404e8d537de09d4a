/* SPDX-License-Identifier: GPL-2.0 */
/* From two snapshots of the maps to the figures truestat prints. */
#ifndef TS_REPORT_H
#define TS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "truestat.h"
#include "lib/devices.h"
#include "lib/depth.h"
#include "lib/histogram.h"
#include "lib/names.h"
#include "features/curve.h"
#include "features/flags.h"
#include "features/pattern.h"
#include "features/slow.h"
#include "features/who.h"
#include "lib/units.h"

/* One traced device as read from the maps at one moment. */
struct ts_dev_snap {
	unsigned int qid; /* its slot: the BPF side's index of the device */
	__u64 queue;
	unsigned int queue_id; /* the kernel's id of its request queue */
	unsigned int kdev; /* major << 20 | minor */
	__u64 claimed_ns; /* when its slot was claimed for it (ts_dev_state) */
	__u64 last_claim_ns; /* gone lives of one number kept as one row
			      * (ts_snapshot_keep_gone): the last one's
			      * claim; else 0 */
	__s64 in_device, in_os;
	/* ns at depth >= each level so far, then the area above 64 */
	__s64 device_time[TS_LEVEL_REGS];
	__s64 os_time[TS_LEVEL_REGS];
	__u64 levels_ns; /* CLOCK_MONOTONIC they are as of */
	struct ts_dev_stats stats; /* summed over CPUs */
	unsigned int sync_in_flight; /* durable writes between Q and C now */
	struct ts_pattern pattern; /* --pattern, else zeros */
	unsigned int hist_slot; /* 1 + index into hist[], 0: no histograms */
	__u64 oldest_issue_ns; /* oldest request in flight at the sweep, 0: none */
	unsigned int suspects;	/* idle requests too young to repair (sweep) */
	__u64 repairs_uncounted; /* begun, not yet in stats' missed: the
				  * levels may hold them (lib/bounds.h) */
	unsigned int layer;	/* enum ts_layer */
	/* the true maximum depth since the last span end, and since the start */
	struct ts_depth_range device_span, device_run;
	__s64 os_peak, os_peak_run; /* highest OS queue depths, likewise */
	/* its slot held by a disk not traced (-d): its claim and counters
	 * only, the start of the slot's next traced disk; never reported */
	bool untraced;
	bool counts_shared; /* its claim's counts may hold another disk's */
};

struct ts_snapshot {
	unsigned int seq; /* span ends are 1, 2, ...; 0: start or a scrape */
	__u64 mono_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns): as of its counters */
	__u64 lost_events; /* recursion_misses of all programs */
	int ndev;
	struct ts_dev_snap dev[TS_MAX_DEVS];
	struct ts_hist hist[TS_HIST_DEVS][TS_HIST_SETS]; /* by hist_slot - 1 */
	struct ts_depth_counts depth[TS_HIST_DEVS];   /* by hist_slot - 1 */
	bool has_sizes; /* sizes[] read (--pattern); else never touched */
	struct ts_size_counts sizes[TS_HIST_DEVS];    /* --pattern, likewise */
};

/*
 * *@dst = *@src, sizes[] (4 MB) only when either has them: without
 * --pattern its pages are never written, and cost no memory.
 */
void ts_snapshot_copy(struct ts_snapshot *dst, const struct ts_snapshot *src);


struct ts_op_figures {
	__u64 ios, bytes, queued_ios;
	__u64 missed; /* completed without truestat seeing it: not in ios */
	__u64 missed_bytes; /* their size at issue */
	__u64 unissued; /* completed without being issued: not in ios */
	__u64 merges; /* bios and requests merged into others (diskstats') */
	double iops, mrgps, mibps, avg_kb; /* merges a second, MiB/s, KiB */
	double queue_ms, service_ms, total_ms; /* means; NaN: no sample */
	__u64 queue_ns, service_ns, total_ns, layer_ns; /* their exact sums */
	__u64 layer_ios;  /* bio layer: bios mapped one-to-one onto a member */
	double layer_ms;  /* their mean time in the layer itself; NaN: none */
	bool has_hist; /* the percentiles below are known */
	struct ts_pct queue_p, service_p, total_p, layer_p;
};

/* Durable writes (ts_sync_stats) in a span, beside the flush commands. */
struct ts_sync_figures {
	__u64 ios, bytes, missed, untracked;
	unsigned int in_flight; /* at the report: between Q and C */
	double iops, mibps, total_ms; /* total: mean Q -> C; NaN: none */
	__u64 total_ns; /* its exact sum */
	__u64 flush_ios;	/* flush commands (op flush) completed */
	double flush_ms;	/* their mean service; NaN: none */
	double flush_share;	/* of the durable writes' Q -> C summed, the
				 * part a flush command was in the device;
				 * NaN: no durable write */
	bool has_hist;		/* total_p is known (the disk has histograms) */
	struct ts_pct total_p;	/* percentiles of Q -> C */
};

struct ts_dev_report {
	char name[64];
	unsigned int qid; /* the BPF side's index of the device */
	unsigned int major, minor;
	/*
	 * When its slot was claimed for it: with major:minor, which disk this
	 * is. A disk removed and another made under its name (a loop device
	 * removed and added, a USB disk plugged back) differs in it.
	 */
	__u64 claimed_ns;
	/* the last claim of the gone lives of its number it sums (a gone
	 * disk's row in the totals), else claimed_ns */
	__u64 last_claim_ns;
	bool active; /* did anything in the span */
	/* its counts may hold another disk's: one of its slot that came and
	 * went between two reads, or the disk before it after its last read */
	bool counts_shared;
	/* discard ranges a request takes at most: above 1, a discard bio
	 * merged into one has no tracepoint (discard merges a lower bound) */
	unsigned int discard_ranges;
	bool bio_layer; /* bio-based (TS_LAYER_BIO): no OS queue, Q -> C */
	struct ts_stack stack; /* its members and holders (sysfs) */
	int nops_active;
	struct ts_op_figures op[TS_NR_OPS];
	struct ts_op_figures all;
	struct ts_sync_figures sync;
	struct ts_depth_summary device; /* requests inside the device */
	struct ts_depth_summary os;	/* requests waiting in the OS */
	double busy_pct; /* iostat's %util from the same events */
	double svctm_ms; /* iostat's svctm: busy time / I/Os */
	__s64 in_device_now, in_os_now;
	double oldest_age_s; /* of the oldest request in the device now, 0: none */
	__u64 events[TS_NR_EVENTS];
	struct ts_hist *hist; /* this span's histograms by op, then of the
			       * durable writes (TS_HIST_SYNC), or NULL */
	bool has_curve;	      /* curve is known (the disk has histograms) */
	struct ts_curve curve;
	struct ts_pattern_span pattern; /* --pattern, else zeros */
};

struct ts_part_span;

struct ts_report {
	bool totals; /* the whole run, not one interval */
	int show_hist; /* print the histograms: 1 folded, 2 fine (-H) */
	bool show_curve; /* print the parallelism curve (--depth) */
	bool show_pattern; /* print the access pattern (--pattern) */
	const struct ts_who_span *who; /* --by: the span's submitters, or NULL */
	const struct ts_slow_printer *slow; /* --slow: its lines, or NULL */
	const struct ts_flags_table *flags; /* --flags: the span's, or NULL */
	const struct ts_part_span *parts; /* -p: the span's partitions, or NULL */
	bool light; /* --light: Q from request allocation, OS queue unknown */
	const char *filter; /* "-c PATH", "--pid PID": rows of its I/O; NULL */
	bool date;  /* -t: the date in the table's timestamp */
	enum ts_unit units; /* --units: the tables' time unit, or per table */
	const char *not_traced; /* disks no report covers (bio-based ones
				 * under --light), space separated, or NULL */
	const char *no_room; /* disks not traced for want of a slot (more
			      * than max_devs at once), likewise */
	const char *excluded; /* disks --exclude left out, likewise (cut) */
	int nexcluded;	      /* how many */
	const char *exclude_unmatched; /* its globs that matched no disk */
	bool none_left; /* --exclude left no disk to trace */
	unsigned int max_devs;
	double span_s;
	__u64 end_mono_ns; /* when the span ended, CLOCK_MONOTONIC */
	__u64 lost_events;
	int ndev;
	struct ts_dev_report dev[TS_MAX_DEVS];
	/* storage for ts_dev_report.hist: not cleared between reports */
	struct ts_hist hist[TS_HIST_DEVS][TS_HIST_SETS];
	struct ts_depth_counts depth_delta; /* scratch */
};

/*
 * The name of disk MAJOR:MINOR into @buf, and its members and holders into
 * @stack (zeroed before the call: left so, the disk is not stacked).
 */
typedef void (*ts_name_fn)(unsigned int major, unsigned int minor, char *buf,
			   size_t len, struct ts_stack *stack);

/* A direction's figures from its counters at @a and @b (@a zeros: all). */
void ts_op_figures_of(const struct ts_op_stats *a, const struct ts_op_stats *b,
		      double span_s, struct ts_op_figures *f);

/* @sum += @x, field by field. */
void ts_op_stats_add(struct ts_op_stats *sum, const struct ts_op_stats *x);

/* Disk @d as -F's and --by's tables know it: slot, claim, number. */
struct ts_flags_disk ts_report_disk(const struct ts_dev_report *d);

/* The device of slot @qid in report @r, or NULL. */
const struct ts_dev_report *ts_report_dev(const struct ts_report *r,
					  unsigned int qid);

/* Figures for what happened between snapshots @a and @b. */
void ts_report_build(const struct ts_snapshot *a, const struct ts_snapshot *b,
		     ts_name_fn name, struct ts_report *r);

/*
 * The depth ranges of the spans since a mark, joined per disk slot (a
 * window of several takes: the exporter's findings without an interval),
 * so that a report over the window is exact when each of its spans was,
 * not when the whole run was.
 */
struct ts_span_join {
	struct {
		__u64 claimed_ns; /* the disk in the slot */
		bool any;	  /* a span ended since the mark */
		struct ts_depth_range device;
		__s64 os_peak;
	} slot[TS_MAX_DEVS];
};

/* The span that ended at @cur joined into @j. */
void ts_span_join_add(struct ts_span_join *j, const struct ts_snapshot *cur);

/*
 * A report over the window from @mark to @cur, its depth ranges @j's:
 * into @r, with @scratch to build from. @j starts over.
 */
void ts_report_build_window(const struct ts_snapshot *mark,
			    const struct ts_snapshot *cur,
			    struct ts_span_join *j, struct ts_snapshot *scratch,
			    ts_name_fn name, struct ts_report *r);

/*
 * A slot read after @last (the slot as read before, then @d): false, or
 * when @d is another disk's claim and @last's disk was traced, true with
 * the gone disk's own figures in @g: as last read (exact when it did
 * nothing after), or as the slot holds them now when a disk not traced
 * (-d) took it, which counts nothing. A disk is its slot, queue, number
 * and claim time (a disk made again can get the same queue back). The
 * loader's counters are per disk (lib/claim.h).
 */
bool ts_slot_next(struct ts_dev_snap *last, const struct ts_dev_snap *d,
		  struct ts_dev_snap *g);

/*
 * Gone disk @p kept in @gone for the totals: added to an earlier gone disk
 * of the same number (one row per number), with no histograms (the
 * slot's, which the next disk empties). A report from a snapshot that
 * holds the disk's start takes that off, as for any disk.
 */
void ts_snapshot_keep_gone(struct ts_snapshot *gone,
			   const struct ts_dev_snap *p);

#endif
