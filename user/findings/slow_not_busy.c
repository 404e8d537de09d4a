// SPDX-License-Identifier: GPL-2.0
/*
 * slow-not-busy: requests of one direction issued to an empty device
 * (depth 1) took far longer on average than their median, while the
 * device held about one at a time: slowness that load does not explain,
 * in a tail long enough to be the device's.
 */
#include "findings.h"

/*
 * About one at a time: half a request above serial, so the device held
 * one request or none most of the span.
 */
#define TS_SERIAL_CONC 1.5

/*
 * A device's stall lasts milliseconds (a retry, a throttle's refill, flash
 * garbage collection); a tail below one is within what the host adds to a
 * completion (an interrupt, a loop worker waiting for a CPU), which the
 * block layer cannot tell from the device.
 */
#define TS_STALL_FLOOR_MS 1.0

/* Op @op's requests alone in the device: slow beyond their own median. */
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
	if (!(one->service_ms >= TS_CURVE_SATURATION * one->p50_ms))
		return;
	if (one->p99_ms < TS_STALL_FLOOR_MS)
		return;
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
