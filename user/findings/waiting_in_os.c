// SPDX-License-Identifier: GPL-2.0
/*
 * waiting-in-os: most of each request's time passes before the device sees
 * it (a scheduler holding requests, a throttled cgroup, a full tag set),
 * while the device is below its knee: the device is not the limit.
 */
#include "findings.h"

static void check_op(const struct ts_finding_ctx *c, int op)
{
	const struct ts_dev_report *d = c->d;
	const struct ts_op_figures *o = &d->op[op];
	double share = o->queue_ms / o->total_ms;
	char q[32], t[32], os[48] = "";
	struct ts_finding *f;

	/* more than half: the OS queue, not the device, holds most of it */
	if (o->queued_ios < TS_FIND_MIN_IOS || !(share >= TS_CURVE_OS_WAIT))
		return;
	/* --light does not follow the OS queue: its depth is not stated */
	if (!c->r->light)
		snprintf(os, sizeof(os), " and the OS queue %.1f", d->os.mean);
	f = ts_finding_add(c, "waiting-in-os", ts_op_names[op], TS_SEV_HIGH,
			   TS_RESTS_DEPTH | TS_RESTS_OS_DEPTH,
			   "%s %s: %.0f%% of each request's time passed in the OS before the device saw it (%s of %s), while the device held %.1f at once%s: the device is not the limit; an I/O scheduler, an I/O controller (a throttled cgroup) or the device's queue depth holds requests back",
			   d->name, ts_finding_op_words(ts_op_names[op]),
			   100 * share,
			   ts_time_str(q, sizeof(q), o->queue_ms, TS_UNIT_AUTO),
			   ts_time_str(t, sizeof(t), o->total_ms, TS_UNIT_AUTO),
			   d->device.mean, os);
	ts_finding_figure(f, "queue_share", share, "share");
	ts_finding_figure(f, "queue_ms", o->queue_ms, "ms");
	ts_finding_figure(f, "total_ms", o->total_ms, "ms");
	ts_finding_figure(f, "concurrency", d->device.mean, "requests");
	if (!c->r->light)
		ts_finding_figure(f, "os_queue", d->os.mean, "requests");
}

void ts_rule_waiting_in_os(const struct ts_finding_ctx *c)
{
	const struct ts_dev_report *d = c->d;
	int knee = ts_finding_knee(d, c->r->light), op;

	/* a bio-based device has no OS queue */
	if (d->bio_layer)
		return;
	/* a device past its knee backs up into the OS: waiting-in-device */
	if (knee >= 0 && d->device.mean >= d->curve.row[knee].hi)
		return;
	for (op = 0; op < TS_NR_OPS; op++)
		check_op(c, op);
}
