// SPDX-License-Identifier: GPL-2.0
/*
 * Test programs over truestat's own BPF code, in an object of their own
 * (never shipped): ts_hist_check and ts_hist_claim_check for
 * tests/tools/hist-check, ts_depth_check
 * for tests/tools/depth-race, ts_nest_loop and ts_nest_irq for
 * tests/tools/nest-check. Built like bpf/truestat.bpf.c, with and
 * without TS_LOCKED_ATOMICS.
 */
#include "core.bpf.h"
#include "depth.bpf.h"
#include "records.bpf.h"
#include "account.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * For tests/tools/hist-check: the bucket functions of include/hist.h as the
 * BPF compiler built them, run (BPF_PROG_TEST_RUN) over hist_check_in.
 */
__u64 hist_check_in[TS_HIST_CHECK_N];
__u32 hist_check_bucket[TS_HIST_CHECK_N];
__u32 hist_check_size[TS_HIST_CHECK_N];

static long hist_check_one(u32 i, void *unused)
{
	if (i >= TS_HIST_CHECK_N)
		return 1;
	hist_check_bucket[i] = ts_hist_bucket(hist_check_in[i]);
	hist_check_size[i] = ts_size_bucket(hist_check_in[i]);
	return 0;
}

SEC("raw_tp")
int ts_hist_check(void *ctx)
{
	bpf_loop(TS_HIST_CHECK_N, hist_check_one, NULL, 0);
	return 0;
}

/*
 * For tests/tools/hist-check, object for old kernels: a claim that finds
 * hist_next's lock held by another CPU gets no histograms
 * (hist_claim_first 0); the sweep's hists_retry gives it some once the
 * lock is free (hist_claim_after).
 */
struct ts_dev_state hist_claim_state;
__u32 hist_claim_first, hist_claim_after;

SEC("raw_tp")
int ts_hist_claim_check(void *ctx)
{
	struct ts_dev_state *st = &hist_claim_state;
	u32 other = bpf_get_smp_processor_id() + 1;
	u64 k = ptr_value(&hist_next);

	/* the same in both objects, so that their globals lie alike
	 * (depth-race reads the locked one through this one's skeleton) */
	st->mode = TS_DEV_TRACED;
	bpf_map_update_elem(&word_locks, &k, &other, BPF_ANY);
	claim_hists(st);
	hist_claim_first = st->hist_slot;
	bpf_map_delete_elem(&word_locks, &k);
	hists_retry(st);
	hist_claim_after = st->hist_slot;
	return 0;
}

/*
 * For tests/tools/depth-race: depth_check_rounds up-and-down pairs on one
 * test entry through depth_step, run on every CPU at once.
 */
struct ts_dev_state depth_check_state;
__u32 depth_check_rounds;

static long depth_check_one(u32 i, void *unused)
{
	struct ts_dev_state *st = &depth_check_state;

	device_up(st, 0, bpf_ktime_get_ns());
	device_down(st, 0, bpf_ktime_get_ns());
	return 0;
}

/*
 * With depth_check_below set, instead: two departures counted twice, then
 * an issue into depth_check_slot, which record_fill must file at depth 1
 * and count (TS_EV_DEPTH_BELOW, slot 0), not under the deepest class.
 */
__u32 depth_check_below;
struct ts_rq_slot depth_check_slot;
__s64 depth_check_depth;

SEC("raw_tp")
int ts_depth_check(void *ctx)
{
	struct ts_dev_state *st = &depth_check_state;
	u64 now = bpf_ktime_get_ns();

	if (depth_check_below) {
		device_down(st, 0, now);
		device_down(st, 0, now);
		depth_check_depth =
			record_fill(st, 0, &depth_check_slot, now, 4096, 0, now);
		return 0;
	}
	bpf_loop(depth_check_rounds, depth_check_one, NULL, 0);
	return 0;
}

/*
 * For tests/tools/nest-check: ts_nest_loop counts nest_check_rounds
 * completions of test slot TS_NEST_QID on the CPU that runs it, and
 * ts_nest_irq one more at each completion of a real disk, from its
 * interrupt, which lands inside the loop's adds now and then: the two
 * nest. By op_add, as truestat counts; with nest_check_plain, by plain
 * adds only (the control, which must lose some). ts_nest_irq counts only
 * while nest_check_on, and nest_check_busy says how many run.
 */
#define TS_NEST_QID (TS_MAX_DEVS - 1)
__u32 nest_check_rounds, nest_check_plain, nest_check_on;
__u64 nest_check_irqs, nest_check_busy;

static __always_inline void nest_add(void)
{
	struct ts_op_stats v = { .ios = 1, .bytes = 4096, .service_ns = 1 };
	u32 qid = TS_NEST_QID;
	struct ts_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &qid);
	struct ts_op_stats *os = op_stats(ds, TS_OP_READ);

	if (!ds || !os)
		return;
	if (nest_check_plain)
		op_add_plain(os, &v);
	else
		op_add(ds, qid, TS_OP_READ, &v);
}

static long nest_one(u32 i, void *unused)
{
	nest_add();
	return 0;
}

SEC("raw_tp")
int ts_nest_loop(void *ctx)
{
	bpf_loop(nest_check_rounds, nest_one, NULL, 0);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(ts_nest_irq)
{
	__sync_fetch_and_add(&nest_check_busy, 1);
	if (*(volatile __u32 *)&nest_check_on) {
		nest_add();
		__sync_fetch_and_add(&nest_check_irqs, 1);
	}
	__sync_fetch_and_add(&nest_check_busy, -1);
	return 0;
}
