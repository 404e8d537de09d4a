// SPDX-License-Identifier: GPL-2.0
/*
 * capped-volume: throughput flat at one rate over rising depth, each
 * request longer the deeper, the OS queue empty: a rate limit, and its
 * rate. A volume's cap and a device whose units are all busy look alike
 * from the block layer; the sentence says so.
 */
#include "findings.h"

/* Flat: within the curve's +20% of the plateau's rate, either way. */
static bool flat(const struct ts_curve_row *row, double rate)
{
	return row->iops <= rate * TS_CURVE_GROWTH &&
	       row->iops >= rate / TS_CURVE_GROWTH;
}

/* The plateau's rate: its rows beyond the knee, weighted by their time. */
static double plateau_rate(const struct ts_curve *k, int first, int last)
{
	double sum = 0, time = 0;
	int i;

	for (i = first + 1; i <= last; i++) {
		if (!k->row[i].evidence)
			continue;
		sum += k->row[i].iops * k->row[i].time_s;
		time += k->row[i].time_s;
	}
	return time > 0 ? sum / time : 0;
}

/*
 * A plateau beyond the knee to @last: at least two evidenced rows (two
 * points make any line, three test it), two doublings deep, each within
 * 20% of their rate. The knee's own row is not held to it: there the
 * device may not have reached the cap yet, and requests the cap does not
 * slow (a flush a cache answers at once) lift its rate.
 */
bool ts_finding_capped(const struct ts_dev_report *d, bool light, int *first,
		       int *last)
{
	const struct ts_curve *k = &d->curve;
	int knee = ts_finding_knee(d, light), i, rows = 0, deepest = -1;
	double rate;

	if (knee < 0)
		return false;
	/*
	 * requests waited at the OS's door: the curve's "OS queue" rule
	 * (--light does not follow that queue: the sentence says so)
	 */
	if (!d->bio_layer && !light &&
	    d->os.busy_share >= TS_CURVE_OS_WAIT * d->device.busy_share)
		return false;
	for (i = knee + 1; i < k->nrows; i++) {
		if (!k->row[i].evidence)
			continue;
		rows++;
		deepest = i;
	}
	if (rows < 2 || deepest - knee < 2 ||
	    !(k->row[deepest].service_ms >
	      TS_CURVE_GROWTH * k->row[knee].service_ms))
		return false;
	rate = plateau_rate(k, knee, deepest);
	for (i = knee + 1; i <= deepest; i++)
		if (k->row[i].evidence && !flat(&k->row[i], rate))
			return false;
	if (first)
		*first = knee;
	if (last)
		*last = deepest;
	return true;
}

/*
 * What more depth does, as the sentence's end. When the throughput now is
 * short of the limit (below the plateau's 20% band), more at once reaches
 * it: what busy-not-full would state as throughput left, said in this
 * verdict.
 */
static void more_depth(const struct ts_curve *k, double rate,
		       double depth_now, const char *knee, char *buf,
		       size_t len)
{
	if (k->now_iops < rate / TS_CURVE_GROWTH)
		snprintf(buf, len, "now %.0f IOPS at %.1f at once, short of it: more at once reaches it (depths beyond %s did), and more still only adds latency",
			 k->now_iops, depth_now, knee);
	else
		snprintf(buf, len, "more depth only adds latency");
}

void ts_rule_capped(const struct ts_finding_ctx *c)
{
	const struct ts_dev_report *d = c->d;
	const struct ts_curve *k = &d->curve;
	const char *op = ts_finding_dev_op(d);
	char a[24], b[24], s1[32], s2[32], more[160];
	struct ts_finding *f;
	int first, last;
	double rate;

	/* mixed classes: the plateau may be the mix's (busy-not-full's note) */
	if (!d->has_curve || c->mixed[0] ||
	    !ts_finding_capped(d, c->r->light, &first, &last))
		return;
	/*
	 * A limit is a ceiling: its rate is the deepest class's, where every
	 * request waits for it; a shallower class may not reach it yet, and
	 * the plateau's mean (flatness's measure) then reads low
	 */
	rate = k->row[last].iops;
	ts_finding_depths(k, first, a, sizeof(a));
	more_depth(k, rate, d->device.mean, a, more, sizeof(more));
	f = ts_finding_add(c, "capped-volume", op, TS_SEV_HIGH,
			   TS_RESTS_DEPTH | TS_RESTS_OS_DEPTH,
			   "%s %s: a rate limit at about %.0f IOPS: beyond depth %s the device completed as many (within 20%%) at every depth up to %s, each request longer the deeper (%s at depth %s, %s at %s), %s; a volume's provisioned rate and a device with all its units busy look alike here; %s",
			   d->name, ts_finding_op_words(op), rate, a,
			   ts_finding_depths(k, last, b, sizeof(b)),
			   ts_time_str(s1, sizeof(s1), k->row[first].service_ms,
				       TS_UNIT_AUTO),
			   a,
			   ts_time_str(s2, sizeof(s2), k->row[last].service_ms,
				       TS_UNIT_AUTO),
			   b,
			   c->r->light && !d->bio_layer ?
				   "the OS queue not followed" :
				   "with the OS queue empty",
			   more);
	ts_finding_figure(f, "rate_iops", rate, "iops");
	ts_finding_figure(f, "from_depth", k->row[first].hi, "requests");
	ts_finding_figure(f, "to_depth", k->row[last].hi, "requests");
	ts_finding_figure(f, "service_first_ms", k->row[first].service_ms, "ms");
	ts_finding_figure(f, "service_last_ms", k->row[last].service_ms, "ms");
	ts_finding_figure(f, "avg_kib", d->all.avg_kb, "KiB");
	ts_finding_figure(f, "iops_now", k->now_iops, "iops");
}
