// SPDX-License-Identifier: GPL-2.0
/*
 * commits-wait-on-flush: a flush command was in the device most of the
 * time durable writes took, and durable writes were in flight half the
 * time or more on average: each commit waits for a flush, which iowait
 * does not show.
 */
#include "findings.h"

/*
 * Most: more than half, the share at which the median moment of a durable
 * write (and of the span) is spent so (TS_CURVE_OS_WAIT's reason).
 */
#define TS_FLUSH_MOST 0.5

/*
 * flush_share is time, not commands: a flush that served several durable
 * writes at once (blk-flush merges the preflushes pending together, as
 * group commit makes them) is in each one's time, so the share does not
 * fall as 1/N with N committers. in_flight is Little's L (durable writes
 * a second x their mean time), a number of writes, not a share of time:
 * above 1 when committers overlap.
 */
void ts_rule_flush_wait(const struct ts_finding_ctx *c)
{
	const struct ts_sync_figures *s = &c->d->sync;
	double in_flight = s->iops * s->total_ms / 1e3;
	char t[32];
	struct ts_finding *f;

	/* --light does not follow durable writes from their Q */
	if (c->r->light || !s->ios)
		return;
	if (!(s->flush_share >= TS_FLUSH_MOST) || !(in_flight >= TS_FLUSH_MOST))
		return;
	f = ts_finding_add(c, "commits-wait-on-flush", "sync", TS_SEV_HIGH, 0,
			   "%s durable writes: a cache flush was in the device for %.0f%% of their time (%s each, %.1f a second, %.1f in flight on average): commits wait on cache flushes, which iowait understates; a device with a protected write cache, or fewer durable writes (commits grouped), is where the time is",
			   c->d->name, 100 * s->flush_share,
			   ts_time_str(t, sizeof(t), s->total_ms, TS_UNIT_AUTO),
			   s->iops, in_flight);
	ts_finding_figure(f, "flush_share", s->flush_share, "share");
	ts_finding_figure(f, "sync_total_ms", s->total_ms, "ms");
	ts_finding_figure(f, "sync_iops", s->iops, "iops");
	ts_finding_figure(f, "in_flight", in_flight, "requests");
}
