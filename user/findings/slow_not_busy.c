// SPDX-License-Identifier: GPL-2.0
/*
 * slow-not-busy: requests of one direction issued to an empty device
 * (depth 1) took far longer on average than their median, or (reads)
 * longer than any working disk takes, while the device held about one at
 * a time: slowness that load does not explain.
 */
#include "findings.h"

/*
 * A device's stall lasts milliseconds (a retry, a throttle's refill, flash
 * garbage collection); a tail below one is within what the host adds to a
 * completion (an interrupt, a loop worker waiting for a CPU), which the
 * block layer cannot tell from the device.
 */
#define TS_STALL_FLOOR_MS 1.0

/*
 * Reads alone in the device slower on average than any working disk takes
 * for one of their size, whatever their spread. Their mean size is at most
 * the direction's bytes over their count, and the bound is linear in it,
 * so it holds for a mean over any mix of sizes.
 */
static bool slower_than_any_disk(const struct ts_finding_ctx *c,
				 const struct ts_curve_alone *one,
				 double *bound_ms)
{
	const struct ts_op_figures *rd = &c->d->op[TS_OP_READ];

	*bound_ms = ts_finding_slowest_read_ms((double)rd->bytes /
					       one->completions);
	return one->service_ms > *bound_ms;
}

static void slow_by_physics(const struct ts_finding_ctx *c,
			    const struct ts_curve_alone *one)
{
	const struct ts_dev_report *d = c->d;
	char mean[32], bound[32];
	struct ts_finding *f;
	double bound_ms;

	if (!slower_than_any_disk(c, one, &bound_ms))
		return;
	f = ts_finding_add(c, "slow-not-busy", "read", TS_SEV_HIGH,
			   TS_RESTS_DEPTH,
			   "%s reads: those alone in the device took %s on average, longer than any working disk takes for a read of their size (%s: a 5400 rpm disk's seek across the whole stroke and a whole turn, and the transfer at 20 MB/s), while it held %.1f at once: a failing (retrying), throttled, spun-down or stalling device, or a host that holds up its completions",
			   d->name,
			   ts_time_str(mean, sizeof(mean), one->service_ms,
				       TS_UNIT_AUTO),
			   ts_time_str(bound, sizeof(bound), bound_ms,
				       TS_UNIT_AUTO),
			   d->device.mean);
	ts_finding_figure(f, "service_depth1_ms", one->service_ms, "ms");
	ts_finding_figure(f, "slowest_disk_ms", bound_ms, "ms");
	ts_finding_figure(f, "concurrency", d->device.mean, "requests");
}

/*
 * Whether direction @op's requests are of one size: nine in ten within two
 * neighbouring log2 size classes (a factor of 4). Of several sizes, a
 * mean far above the median can be the big ones' transfer, not a stall:
 * 4 KiB reads beside 1 MiB ones are two spreads, not one long tail.
 */
static bool one_size(const struct ts_dev_report *d, int op)
{
	const __u64 *sz = d->hist ? d->hist[op].size : NULL;
	__u64 n = 0, pair = 0;
	int i;

	for (i = 0; sz && i < TS_SIZE_SLOTS; i++) {
		n += sz[i];
		if (i && sz[i - 1] + sz[i] > pair)
			pair = sz[i - 1] + sz[i];
	}
	return sz && n && 10 * pair >= 9 * n;
}

/*
 * Op @op's requests alone in the device: slow beyond their own median (of
 * one size), or (reads) beyond what any disk takes.
 */
static void check_op(const struct ts_finding_ctx *c, int op)
{
	const struct ts_dev_report *d = c->d;
	const struct ts_curve_alone *one = &d->curve.alone[op];
	const char *name = ts_op_names[op];
	char mean[32], p50[32], p99[32];
	struct ts_finding *f;

	if (one->completions < TS_FIND_MIN_IOS)
		return;
	/* the curve's 3x: service no longer the device's usual */
	if (!(one->service_ms >= TS_CURVE_SATURATION * one->p50_ms) ||
	    one->p99_ms < TS_STALL_FLOOR_MS || !one_size(d, op)) {
		if (op == TS_OP_READ)
			slow_by_physics(c, one);
		return;
	}
	f = ts_finding_add(c, "slow-not-busy", name, TS_SEV_HIGH, TS_RESTS_DEPTH,
			   "%s %s: those alone in the device took %s on average against a median of %s (p99 %s), while it held %.1f at once: some requests are far slower and load does not explain it; a failing (retrying), throttled or stalling device",
			   d->name, ts_finding_op_words(name),
			   ts_time_str(mean, sizeof(mean), one->service_ms,
				       TS_UNIT_AUTO),
			   ts_time_str(p50, sizeof(p50), one->p50_ms,
				       TS_UNIT_AUTO),
			   ts_time_str(p99, sizeof(p99), one->p99_ms,
				       TS_UNIT_AUTO),
			   d->device.mean);
	ts_finding_figure(f, "service_depth1_ms", one->service_ms, "ms");
	ts_finding_figure(f, "p50_depth1_ms", one->p50_ms, "ms");
	ts_finding_figure(f, "p99_depth1_ms", one->p99_ms, "ms");
	ts_finding_figure(f, "concurrency", d->device.mean, "requests");
}

/*
 * Each direction on its own (the curve's alone[]): 4 KiB reads beside
 * 1 MiB writes or flushes at depth 1 are two spreads, not one long tail.
 * Sizes within a direction are not told apart.
 */
void ts_rule_slow_not_busy(const struct ts_finding_ctx *c)
{
	int op;

	if (!c->d->has_curve || c->d->device.mean >= TS_SERIAL_CONC)
		return;
	for (op = 0; op < TS_NR_OPS; op++)
		check_op(c, op);
}
