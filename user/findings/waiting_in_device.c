// SPDX-License-Identifier: GPL-2.0
/*
 * waiting-in-device: the device holds more than its knee, where it stops
 * completing more, and each request takes longer than at depth 1: more
 * load only queues inside the device.
 */
#include "findings.h"

/*
 * The knee is the shallowest depth seen, and that is not 1: the device may
 * be past its true knee already, its requests waiting in it, by how much
 * the run cannot say (no depth-1 service to measure against).
 */
static void cannot_tell(const struct ts_finding_ctx *c, const char *op,
			int knee)
{
	const struct ts_dev_report *d = c->d;
	const struct ts_curve *k = &d->curve;
	struct ts_finding *f;
	char kd[24], svc[32];

	f = ts_finding_add(c, "waiting-in-device", op, TS_SEV_NOTE,
			   TS_RESTS_DEPTH,
			   "%s %s: the device held %.1f requests at once and completes no more beyond depth %s (%.0f IOPS there), but it was never seen at fewer than %u long enough to conclude: its parallelism may be lower, and how much of each request's %s in it was waiting is not known; offer fewer at once (a load step) or run scripts/knee.sh %s",
			   d->name, ts_finding_op_words(op), d->device.mean,
			   ts_finding_depths(k, knee, kd, sizeof(kd)),
			   k->row[knee].iops, k->row[knee].lo,
			   ts_time_str(svc, sizeof(svc), d->all.service_ms,
				       TS_UNIT_AUTO),
			   d->name);
	ts_finding_figure(f, "concurrency", d->device.mean, "requests");
	ts_finding_figure(f, "parallelism_at_most", k->row[knee].hi,
			  "requests");
	ts_finding_figure(f, "iops_at_knee", k->row[knee].iops, "iops");
	ts_finding_figure(f, "service_ms", d->all.service_ms, "ms");
}

/*
 * No depth-1 service to compare with, or a curve of mixed classes, but the
 * reads spent longer in the device than any working disk takes to serve
 * one alone, while it held several: that time is not its work on each.
 */
static bool by_physics(const struct ts_finding_ctx *c)
{
	const struct ts_dev_report *d = c->d;
	const struct ts_op_figures *rd = &d->op[TS_OP_READ];
	char svc[32], bound[32];
	struct ts_finding *f;
	double bound_ms;

	if (!ts_finding_waits_by_physics(d, &bound_ms))
		return false;
	f = ts_finding_add(c, "waiting-in-device", "read", TS_SEV_HIGH,
			   TS_RESTS_DEPTH,
			   "%s reads: each spent %s in the device on average, longer than any working disk takes to serve one alone (%s), while it held %.1f at once: that is not its work on each; they waited inside it (its queue, a throttle), or it is failing. It completed %.0f a second at that depth; whether more at once adds any is not known from one depth (a load step, or scripts/knee.sh %s)",
			   d->name,
			   ts_time_str(svc, sizeof(svc), rd->service_ms,
				       TS_UNIT_AUTO),
			   ts_time_str(bound, sizeof(bound), bound_ms,
				       TS_UNIT_AUTO),
			   d->device.mean, d->all.iops, d->name);
	ts_finding_figure(f, "service_ms", rd->service_ms, "ms");
	ts_finding_figure(f, "slowest_disk_ms", bound_ms, "ms");
	ts_finding_figure(f, "concurrency", d->device.mean, "requests");
	ts_finding_figure(f, "iops", d->all.iops, "iops");
	return true;
}

void ts_rule_waiting_in_device(const struct ts_finding_ctx *c)
{
	const struct ts_dev_report *d = c->d;
	const struct ts_curve *k = &d->curve;
	const char *op = ts_finding_dev_op(d);
	int knee = ts_finding_knee(d, c->r->light), base;
	char kd[24], bd[24], svc[32], svc1[32];
	struct ts_finding *f;

	/*
	 * a plateau over rising depth is capped-volume's, which says this;
	 * a curve of mixed classes compares different work (busy-not-full's
	 * note says so)
	 */
	if (d->has_curve && ts_finding_capped(d, c->r->light, NULL, NULL))
		return;
	if (knee < 0 || c->mixed[0]) {
		by_physics(c);
		return;
	}
	base = ts_finding_base_row(k);
	/* the curve's +20%: well above a histogram bucket's 6.25% */
	if (d->device.mean < k->row[knee].hi ||
	    !(d->all.service_ms > TS_CURVE_GROWTH * k->row[base].service_ms)) {
		/* at the knee's depths or past them, never seen below */
		if (!by_physics(c) && knee == base && base > 0 &&
		    k->now_row >= knee)
			cannot_tell(c, op, knee);
		return;
	}
	f = ts_finding_add(c, "waiting-in-device", op, TS_SEV_HIGH,
			   TS_RESTS_DEPTH,
			   "%s %s: the device held %.1f requests at once, past depth %s beyond which it completes no more (%.0f IOPS there): each request spent %s in it against %s at depth %s; more load only queues inside the device",
			   d->name, ts_finding_op_words(op), d->device.mean,
			   ts_finding_depths(k, knee, kd, sizeof(kd)),
			   k->row[knee].iops,
			   ts_time_str(svc, sizeof(svc), d->all.service_ms,
				       TS_UNIT_AUTO),
			   ts_time_str(svc1, sizeof(svc1),
				       k->row[base].service_ms, TS_UNIT_AUTO),
			   ts_finding_depths(k, base, bd, sizeof(bd)));
	ts_finding_figure(f, "concurrency", d->device.mean, "requests");
	ts_finding_figure(f, "parallelism", k->row[knee].hi, "requests");
	ts_finding_figure(f, "iops_at_knee", k->row[knee].iops, "iops");
	ts_finding_figure(f, "service_ms", d->all.service_ms, "ms");
	ts_finding_figure(f, "service_base_ms", k->row[base].service_ms, "ms");
	ts_finding_figure(f, "base_depth", k->row[base].hi, "requests");
}
