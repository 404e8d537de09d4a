/* SPDX-License-Identifier: GPL-2.0 */
/* Loading, attaching and reading the BPF side. */
#ifndef TS_TRACER_H
#define TS_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "report.h"
#include "features/filter.h"

#define TS_DEFAULT_BTF "/sys/kernel/btf/vmlinux"

struct ts_tracer;

struct ts_tracer_opts {
	const char *btf_path; /* kernel BTF (tests point it elsewhere) */
	bool raw_tp;	      /* skip tp_btf */
	bool verbose;	      /* libbpf's messages on stderr */
	bool test_verifier_failure; /* make the load fail (tests) */
	unsigned int test_rq_slots; /* the request table's size (tests), 0: its own */
	unsigned int test_part_slots; /* -p's table's size (tests), 0: its own */
	unsigned int test_miss_every; /* drop 1 completion in N (tests), 0: no */
	unsigned int test_miss_dev; /* of this disk only (tests), 0: any */
	/* depth histogram buckets start at 2^32 - N (tests), 0: at 0 */
	unsigned int test_depth_wrap;
	/* the depth words' 44-bit stamps wrap N s after start (tests), 0: no */
	unsigned int test_clock_wrap_s;
	/* a file naming how old to make the depth words (tests), or NULL */
	const char *test_stamp_age;
	/* every repair read, a line each (tests), or NULL */
	FILE *test_repair_log;
	/* a snapshot's sweeps between a disk's counters and levels (tests) */
	bool test_sweep_between;
	unsigned int max_devs; /* disks traced at once (tests lower it), 0: all */
	unsigned int qid_near; /* queue ids read from an array (tests), 0: all */
	bool bench_empty; /* programs that do nothing (bench/overhead.sh) */
	bool bench_clock; /* ... but read the clock once */
	bool test_locked; /* the object for kernels before 5.12 (tests) */
	bool light;	  /* --light: no block_bio_* programs, Q at allocation */
	bool pattern;	  /* --pattern: seek distances and sizes at issue */
	bool flags;	  /* --flags: completions by request-flag class */
	bool partitions;  /* -p: figures per partition (part_stats) */
	bool slow;	  /* --slow: requests at least slow_ns Q->C reported */
	int by;		  /* --by: enum ts_by */
	struct ts_filter filter; /* -c/--cgroup, --pid */
	__u64 slow_ns;
	unsigned int slow_ring; /* ring buffer bytes (a power of 2, >= 4096) */
	/* called for each slow request; return non-zero to stop reading */
	int (*on_slow)(void *ctx, const struct ts_slow_event *e);
	/* called before (@end false) and after each batch of them, or NULL */
	void (*on_slow_batch)(void *ctx, bool end);
	void *on_slow_ctx;
	const unsigned int *kdevs; /* trace only these disks (kernel dev_t) */
	int nkdevs;
	const unsigned int *excluded; /* never these (--exclude), likewise */
	int nexcluded;
};

/* Loads and attaches. NULL with a one-line message in @err on failure. */
struct ts_tracer *ts_tracer_open(const struct ts_tracer_opts *o, char *err,
				 size_t errlen);
/* Whether the last ts_tracer_open failed on a kernel truestat cannot run on. */
bool ts_tracer_kernel_refused(void);
/* "tp_btf" or "raw_tp". */
const char *ts_tracer_kind(const struct ts_tracer *t);
/* CLOCK_MONOTONIC ns when attaching began: all it counts came after. */
__u64 ts_tracer_start_ns(const struct ts_tracer *t);

/* The first span (of the depth's bounds) starts at @mono_ns: the baseline. */
void ts_tracer_begin(struct ts_tracer *t, __u64 mono_ns);
/*
 * Sweeps (repairs requests whose completion was never seen, looking again
 * while some are too young to judge), then reads every traced device.
 * @span_end: @s ends a span of the reports' chain (it gets the next seq and
 * the peak depths since the last such snapshot); else (a scrape) seq 0.
 */
void ts_tracer_snapshot(struct ts_tracer *t, struct ts_snapshot *s,
			bool span_end);
/*
 * Restamps the depth words (include/truestat.h, TS_RESTAMP_NS) when
 * TS_RESTAMP_NS passed since the last restamp or sweep, and reads the
 * repair log before it can wrap; returns when the next call is due
 * (CLOCK_MONOTONIC ns). Call it at least that often.
 */
__u64 ts_tracer_tick(struct ts_tracer *t);
/*
 * The disks whose slot another disk took since the last call (each read
 * of the slots sees them: reports and scrapes alike), their own figures
 * kept in @gone for the totals (ts_snapshot_keep_gone).
 */
void ts_tracer_gone(struct ts_tracer *t, struct ts_snapshot *gone);

/*
 * Disks refused a slot so far (kernel dev_t), at most @max into @kdevs:
 * how many; *@more: some were refused beyond what the BPF side could note.
 */
int ts_tracer_untraced(struct ts_tracer *t, unsigned int *kdevs, int max,
		       bool *more);
/*
 * The slow requests (--slow) are read by a thread of their own as they
 * come; this stops it and reads what is left in the ring buffer (the end).
 */
void ts_tracer_read_slow(struct ts_tracer *t);

struct ts_flags_table;
/* The --flags table as it is now. */
void ts_tracer_read_flags(struct ts_tracer *t, struct ts_flags_table *out);

struct ts_who_table;
struct ts_who_key;
/*
 * The --by table as it is now, with the entries folded so far (past 3/4
 * full, those idle since the last read are folded and deleted).
 */
void ts_tracer_read_who(struct ts_tracer *t, struct ts_who_table *out);

struct ts_part_table;
/* -p: every partition entry now, into @out. */
void ts_tracer_read_parts(struct ts_tracer *t, struct ts_part_table *out);
/* A read of the --by table for its folds alone (between reports). */
void ts_tracer_fold_who(struct ts_tracer *t);
/* Submitters @keep says yes to are never folded by ts_tracer_read_who. */
void ts_tracer_who_keep(struct ts_tracer *t,
			bool (*keep)(const void *ctx, const struct ts_who_key *k),
			const void *ctx);

/* One of the tracer's programs as the kernel counts it (bpf_stats). */
struct ts_prog_stat {
	char name[32]; /* its function's name, as bpftool shows it */
	__u64 run_ns;  /* run time, counted while bpf_stats is on */
	__u64 runs;
};

#define TS_MAX_PROGS 32

/* Its programs loaded, at most @max, into @out: how many. */
int ts_tracer_prog_stats(struct ts_tracer *t, struct ts_prog_stat *out,
			 int max);
/* The runs of @n programs @s summed. */
__u64 ts_prog_runs(const struct ts_prog_stat *s, int n);

/* Detaches and unloads everything. */
void ts_tracer_close(struct ts_tracer *t);

#endif
