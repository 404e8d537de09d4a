/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The loader's parts (user/core/): what they share. tracer.c loads the BPF
 * object (the kernel's features, map sizes, rodata) and opens and closes
 * the tracer; attach.c attaches its programs and follows stacked devices;
 * snapshot.c reads the maps into a snapshot; sweep.c repairs what no
 * program saw and restamps the depth words; slow_ring.c reads --slow's
 * ring; tables.c reads the side tables (--by, -F, -p); progstats.c the
 * programs' own counts. Only these files include this header.
 */
#ifndef TS_LOADER_H
#define TS_LOADER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <bpf/libbpf.h>

#include "truestat.h"
#include "kfeatures.h"
#include "truestat.skel.h"
#include "lib/bounds.h"
#include "lib/claim.h"
#include "lib/depth.h"
#include "tracer.h"
#include "features/who.h"

#define TS_MAX_LINKS 16

struct ts_tracer {
	struct truestat_bpf *skel;
	struct bpf_link *links[TS_MAX_LINKS];
	int nlinks;
	__u64 start_ns; /* when attaching began (CLOCK_MONOTONIC) */
	struct bpf_link *remap; /* block_bio_remap, once stack_traced() */
	unsigned int kdevs[TS_MAX_DEVS]; /* -d's disks and their stacks' */
	int nkdevs;			 /* 0: every disk is traced */
	const char *kind;
	const struct ts_dev_state *state; /* mmap of dev_state */
	size_t state_len;
	const struct ts_hist *hists; /* mmap of hists */
	size_t hists_len;
	const struct ts_depth_hist *depth_hists; /* mmap of depth_hists */
	size_t depth_hists_len;
	/* each histogram slot's counts widened to 64 bits (ts_depth_widen) */
	struct ts_depth_counts depth_total[TS_HIST_DEVS];
	struct ts_depth_hist depth_seen[TS_HIST_DEVS];
	__u64 depth_claim[TS_HIST_DEVS]; /* claimed_ns of the disk followed */
	/* --pattern: service by size, likewise (ts_size_widen) */
	const struct ts_size_hist *size_hists; /* mmap of size_hists */
	size_t size_hists_len;
	struct ts_size_counts size_total[TS_HIST_DEVS];
	struct ts_size_hist size_seen[TS_HIST_DEVS][TS_PATTERN_OPS];
	__u64 size_claim[TS_HIST_DEVS];
	int ncpus;
	struct ts_dev_stats *percpu;
	struct ts_claim_base *claims; /* each slot's counters per disk */
	__u64 counted_ns; /* CLOCK_MONOTONIC just after the last read of them */
	/* reads made again for a pause within their clock bracket (-v) */
	__u64 reread;
	__u64 bracket_max_ns; /* the widest bracket a read kept */
	struct ts_dev_snap *last; /* each slot as last read (ts_slot_next) */
	struct ts_snapshot *gone; /* disks gone since ts_tracer_gone */
	const struct ts_repair *repairs; /* mmap of repairs */
	size_t repairs_len;
	__u64 repairs_read; /* repairs taken from the log so far */
	unsigned int seq;   /* span ends so far */
	struct ts_bounds bounds;
	__u32 rq_slots; /* the request table's size (size_tables) */
	const struct ts_rq_slot *rq_table; /* mmap of rq_slots (the sweep) */
	size_t rq_table_len;
	/* the sweeps (-v at the end): how many, their time in BPF (with
	 * preemption off), its longest part, their time in all */
	__u64 sweeps, sweep_ns, sweep_part_max_ns, sweep_wall_ns;
	const char *test_stamp_age; /* TRUESTAT_TEST_STAMP_AGE, else NULL */
	FILE *test_repair_log; /* TRUESTAT_TEST_REPAIR_LOG, else NULL */
	bool test_sweep_between; /* TRUESTAT_TEST_SWEEP_BETWEEN */
	__u64 restamped_ns; /* the depth words' last restamp (CLOCK_MONOTONIC) */
	bool pattern; /* --pattern: the patterns map is read */
	struct ts_who_ledger *who; /* --by: the table's reader's memory */
	struct ring_buffer *slow; /* --slow, else NULL */
	int (*on_slow)(void *ctx, const struct ts_slow_event *e);
	void (*on_slow_batch)(void *ctx, bool end);
	void *on_slow_ctx;
	pthread_t slow_reader; /* --slow: drains the ring as it fills */
	bool slow_reading;     /* slow_reader runs */
	atomic_bool slow_stop; /* asks slow_reader to return */
	__u64 slow_read, slow_cpu_ns; /* records it read, its CPU time */
	bool verbose; /* -v */
	__u64 clock_offset; /* added to the depth words' clock (tests), else 0 */
};

/* CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns, in ns. */
static inline __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* user/core/attach.c: programs attached in order, stacked devices followed */
int tracer_attach_in_order(struct ts_tracer *t);
void tracer_follow_stacks(struct ts_tracer *t);

/* user/core/slow_ring.c: --slow's ring buffer and its reader */
int tracer_open_slow(struct ts_tracer *t, const struct ts_tracer_opts *o,
		     char *err, size_t errlen);
void tracer_stop_slow_reader(struct ts_tracer *t);

/* user/core/sweep.c: the sweep, the repairs' log, the restamps */
void tracer_sweep_part(struct ts_tracer *t, __u64 part, __u64 n);
void tracer_settle(struct ts_tracer *t);
void tracer_read_repairs(struct ts_tracer *t);
void tracer_test_age_stamps(struct ts_tracer *t);
void tracer_durable_in_flight(struct ts_tracer *t, unsigned int *count);

/* user/core/progstats.c */
__u64 tracer_lost_events(struct ts_tracer *t);

/* user/core/tracer.c */
int tracer_fail(char *err, size_t errlen, const char *fmt, ...);
enum ts_tp tracer_hook_of(const struct bpf_program *prog);

#endif
