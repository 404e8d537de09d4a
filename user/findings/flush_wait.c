// SPDX-License-Identifier: GPL-2.0
/*
 * commits-wait-on-flush: most of a durable write's time is the device's
 * cache flush, and a durable write was under way most of the time: each
 * commit waits for a flush, which iowait does not show.
 */
#include "findings.h"

/*
 * Most: more than half, the share at which the median moment of a durable
 * write (and of the span) is spent so (TS_CURVE_OS_WAIT's reason).
 */
#define TS_FLUSH_MOST 0.5

void ts_rule_flush_wait(const struct ts_finding_ctx *c)
{
	const struct ts_sync_figures *s = &c->d->sync;
	double under_way = s->iops * s->total_ms / 1e3;
	char t[32];
	struct ts_finding *f;

	/* --light does not follow durable writes from their Q */
	if (c->r->light || !s->ios)
		return;
	if (!(s->flush_share >= TS_FLUSH_MOST) || !(under_way >= TS_FLUSH_MOST))
		return;
	f = ts_finding_add(c, "commits-wait-on-flush", "sync", TS_SEV_HIGH, 0,
			   "%s durable writes: %.0f%% of each one's %s is the device's cache flush, and one was under way %.0f%% of the time (%.1f a second): commits wait on cache flushes, which iowait understates; a device with a protected write cache, or fewer durable writes (commits grouped), is where the time is",
			   c->d->name, 100 * s->flush_share,
			   ts_time_str(t, sizeof(t), s->total_ms, TS_UNIT_AUTO),
			   100 * under_way, s->iops);
	ts_finding_figure(f, "flush_share", s->flush_share, "share");
	ts_finding_figure(f, "sync_total_ms", s->total_ms, "ms");
	ts_finding_figure(f, "sync_iops", s->iops, "iops");
	ts_finding_figure(f, "under_way", under_way, "share");
}
