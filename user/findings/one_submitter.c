// SPDX-License-Identifier: GPL-2.0
/*
 * one-submitter (--by): on a device busy at least half the span, one
 * cgroup or process had more of the device time (its requests' service
 * summed) than all the others together, by the curve's margin for "more"
 * (TS_CURVE_GROWTH), while others used the device too.
 */
#include "findings.h"

/* Busy: at least half the span (TS_CURVE_OS_WAIT's median reason). */
#define TS_OWNS 0.5

static bool is_one(const struct ts_who_entry *e)
{
	return e->key.id && e->key.id != TS_WHO_FOLDED;
}

/* Submitter @id's device time on disk @d, over its directions. */
static __u64 service_of(const struct ts_who_span *w, struct ts_flags_disk d,
			__u64 id, __u64 *ios)
{
	__u64 ns = 0;
	int i;

	*ios = 0;
	for (i = 0; i < w->n; i++)
		if (ts_who_of(&w->e[i].key, d) && w->e[i].key.id == id) {
			ns += w->e[i].s.service_ns;
			*ios += w->e[i].s.ios;
		}
	return ns;
}

void ts_rule_one_submitter(const struct ts_finding_ctx *c)
{
	const struct ts_who_span *w = c->r->who;
	const struct ts_who_entry *top = NULL;
	struct ts_flags_disk d = ts_report_disk(c->d);
	__u64 total = 0, most = 0, ns, ios, top_ios = 0;
	struct ts_finding *f;
	char name[300];
	int i;

	if (!w || c->d->device.busy_share < TS_OWNS)
		return;
	for (i = 0; i < w->n; i++) {
		if (!ts_who_of(&w->e[i].key, d))
			continue;
		total += w->e[i].s.service_ns;
		ns = service_of(w, d, w->e[i].key.id, &ios);
		if (is_one(&w->e[i]) && ns > most) {
			most = ns;
			top = &w->e[i];
			top_ios = ios;
		}
	}
	/*
	 * Alone on the device, it owns nothing from anyone. Two equal
	 * submitters split the time about half and half, one of them a little
	 * above by chance: owning is more than the others together by the
	 * curve's +20%, well beyond that split.
	 */
	if (!top || most == total ||
	    !(most > TS_CURVE_GROWTH * (double)(total - most)))
		return;
	f = ts_finding_add(c, "one-submitter", "all", TS_SEV_LOW,
			   TS_RESTS_DEPTH,
			   "%s: %s had %.0f%% of the device's time (%llu requests) on a device busy %.0f%% of the time; the others shared the rest",
			   c->d->name, ts_who_name(w, top, name, sizeof(name)),
			   100.0 * most / total, (unsigned long long)top_ios,
			   c->d->busy_pct);
	ts_finding_figure(f, "device_time_share", (double)most / total, "share");
	ts_finding_figure(f, "ios", top_ios, "requests");
	ts_finding_figure(f, "busy_pct", c->d->busy_pct, "percent");
}
