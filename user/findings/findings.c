// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"

/* In the order a tie in severity is ranked: the limit before its signs. */
const struct ts_rule ts_rules[] = {
	{ "capped-volume", ts_rule_capped },
	{ "waiting-in-device", ts_rule_waiting_in_device },
	{ "waiting-in-os", ts_rule_waiting_in_os },
	{ "commits-wait-on-flush", ts_rule_flush_wait },
	{ "slow-not-busy", ts_rule_slow_not_busy },
	{ "busy-not-full", ts_rule_busy_not_full },
	{ "random-reads", ts_rule_random_reads },
	{ "one-submitter", ts_rule_one_submitter },
};

const int ts_nrules = sizeof(ts_rules) / sizeof(ts_rules[0]);

const char *ts_finding_dev_op(const struct ts_dev_report *d)
{
	int op;

	if (d->nops_active != 1)
		return "all";
	for (op = 0; op < TS_NR_OPS; op++)
		if (d->op[op].ios || d->op[op].missed || d->op[op].unissued)
			return ts_op_names[op];
	return "all";
}

const char *ts_finding_op_words(const char *op)
{
	static const char *const words[][2] = {
		{ "read", "reads" },	 { "write", "writes" },
		{ "discard", "discards" }, { "flush", "flushes" },
		{ "other", "other requests" }, { "sync", "durable writes" },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(op, words[i][0]))
			return words[i][1];
	return "I/O";
}

int ts_finding_knee(const struct ts_dev_report *d, bool light)
{
	const struct ts_curve *c = &d->curve;
	double os = d->bio_layer ? 0 : light ? NAN : d->os.busy_share;

	if (!d->has_curve ||
	    ts_curve_limit_of(c, d->device.excess, d->device.busy_share, os) !=
		    TS_LIMIT_DEVICE)
		return -1;
	return c->parallelism_row;
}

const char *ts_finding_depths(const struct ts_curve *c, int row, char *buf,
			      size_t len)
{
	const struct ts_curve_row *x = &c->row[row];

	if (x->lo == x->hi)
		snprintf(buf, len, "%u", x->lo);
	else
		snprintf(buf, len, "%u-%u", x->lo, x->hi);
	return buf;
}

/* Op @op's service summed (ms), 0 when it has no mean. */
static double service_sum(const struct ts_op_figures *o)
{
	return isnan(o->service_ms) ? 0 : o->ios * o->service_ms;
}

/* Op @op's cost alone (depth 1) as words: "writes of 2.000 ms alone". */
static void alone_words(const struct ts_dev_report *d, int op, char *buf,
			size_t len)
{
	const struct ts_curve_alone *a = &d->curve.alone[op];
	char t[32];

	if (a->completions < TS_FIND_MIN_IOS)
		snprintf(buf, len, "%s (too few alone in the device to measure)",
			 ts_finding_op_words(ts_op_names[op]));
	else
		snprintf(buf, len, "%s of %s alone",
			 ts_finding_op_words(ts_op_names[op]),
			 ts_time_str(t, sizeof(t), a->service_ms, TS_UNIT_AUTO));
}

bool ts_finding_mixed(const struct ts_dev_report *d, char *why, size_t len)
{
	int op, n = 0, weighed[TS_NR_OPS], fast = -1, slow = -1, unknown = -1;
	const struct ts_curve_alone *a = d->curve.alone;
	char x[96], y[96];
	double all = 0;

	why[0] = 0;
	for (op = 0; op < TS_NR_OPS; op++)
		all += service_sum(&d->op[op]);
	for (op = 0; op < TS_NR_OPS; op++) {
		if (d->op[op].ios < TS_FIND_MIN_IOS ||
		    !(service_sum(&d->op[op]) >= TS_FIND_MIX_SHARE * all))
			continue;
		weighed[n++] = op;
		if (a[op].completions < TS_FIND_MIN_IOS) {
			unknown = unknown < 0 ? op : unknown;
			continue;
		}
		if (fast < 0 || a[op].service_ms < a[fast].service_ms)
			fast = op;
		if (slow < 0 || a[op].service_ms > a[slow].service_ms)
			slow = op;
	}
	if (n < 2)
		return false;
	if (unknown >= 0) { /* its own cost not known: the other first weighed */
		slow = unknown;
		fast = weighed[0] == unknown ? weighed[1] : weighed[0];
	} else if (!(a[slow].service_ms >= TS_CURVE_GROWTH * a[fast].service_ms)) {
		return false;
	}
	alone_words(d, slow, x, sizeof(x));
	alone_words(d, fast, y, sizeof(y));
	snprintf(why, len, "%s beside %s", x, y);
	return true;
}

/*
 * A 2.5-inch disk at 5400 rpm seeking the whole stroke (25.0 ms at most)
 * and waiting a whole turn (11.1 ms), its vendor's specification; flash
 * and network volumes read in less.
 */
#define TS_READ_ACCESS_MAX_MS 36.1

/* Below any working disk's media rate, bytes a ms: 20 MB/s (the doc's). */
#define TS_MEDIA_MIN_BYTES_MS 20000.0

double ts_finding_slowest_read_ms(double mean_bytes)
{
	return TS_READ_ACCESS_MAX_MS + mean_bytes / TS_MEDIA_MIN_BYTES_MS;
}

bool ts_finding_waits_by_physics(const struct ts_dev_report *d,
				 double *bound_ms)
{
	const struct ts_op_figures *rd = &d->op[TS_OP_READ];

	if (rd->ios < TS_FIND_MIN_IOS || d->device.mean < TS_SERIAL_CONC)
		return false;
	*bound_ms = ts_finding_slowest_read_ms((double)rd->bytes / rd->ios);
	return rd->service_ms > *bound_ms;
}

int ts_finding_base_row(const struct ts_curve *c)
{
	int i;

	for (i = 0; i < c->nrows; i++)
		if (c->row[i].evidence)
			return i;
	return -1;
}

/* What of @rests is not exact in @c's device, as a clause for the sentence. */
static const char *inexact_clause(const struct ts_finding_ctx *c,
				  unsigned int rests, char *buf, size_t len)
{
	const struct ts_dev_report *d = c->d;
	bool os_unknown = c->r->light && !d->bio_layer;

	buf[0] = 0;
	if ((rests & TS_RESTS_DEPTH) && !d->device.exact &&
	    d->device.max_min < d->device.max)
		snprintf(buf, len, " (estimates: the depth was not exact, the device held between %u and %u at most)",
			 d->device.max_min, d->device.max);
	else if ((rests & TS_RESTS_DEPTH) && !d->device.exact)
		snprintf(buf, len, " (estimates: the depth was not exact, though its maximum, %u, was)",
			 d->device.max);
	else if ((rests & TS_RESTS_OS_DEPTH) && os_unknown)
		snprintf(buf, len, " (estimates: --light does not follow the OS queue: its depth is unknown, its time counted from allocation)");
	else if ((rests & TS_RESTS_OS_DEPTH) && !d->os.exact)
		snprintf(buf, len, " (estimates: the OS queue's depth was not exact)");
	else if (d->all.missed)
		snprintf(buf, len, " (%llu completions were never seen: not in these figures)",
			 (unsigned long long)d->all.missed);
	return buf;
}

/*
 * Where a new finding of @sev goes: a free entry, else the place of the
 * least important kept if it ranks below @sev, else nowhere (NULL).
 */
static struct ts_finding *finding_slot(struct ts_findings *out,
				       enum ts_severity sev)
{
	struct ts_finding *low = NULL, *x;
	int i;

	if (out->n < TS_FINDINGS_MAX)
		return &out->f[out->n++];
	out->not_kept++;
	for (i = 0; i < out->n; i++) {
		x = &out->f[i];
		if (!low || x->severity < low->severity ||
		    (x->severity == low->severity && x->rank > low->rank))
			low = x;
	}
	return low->severity < sev ? low : NULL;
}

struct ts_finding *ts_finding_add(const struct ts_finding_ctx *c,
				  const char *id, const char *op,
				  enum ts_severity sev, unsigned int rests,
				  const char *fmt, ...)
{
	struct ts_finding *f = finding_slot(c->out, sev);
	char caveat[160];
	va_list ap;
	size_t n;

	c->out->found++;
	if (!f)
		return NULL;
	memset(f, 0, sizeof(*f));
	f->rank = c->out->found; /* the order found, until ranked */
	f->id = id;
	f->device = c->d->name;
	f->op = op;
	f->severity = sev;
	va_start(ap, fmt);
	vsnprintf(f->sentence, sizeof(f->sentence), fmt, ap);
	va_end(ap);
	inexact_clause(c, rests, caveat, sizeof(caveat));
	f->exact = !caveat[0];
	n = strlen(f->sentence);
	snprintf(f->sentence + n, sizeof(f->sentence) - n, "%s", caveat);
	return f;
}

void ts_finding_figure(struct ts_finding *f, const char *name, double value,
		       const char *unit)
{
	if (!f || f->nfigures >= TS_FIGURES_MAX)
		return;
	f->figure[f->nfigures++] = (struct ts_figure){ name, value, unit };
}

/* Device @d has too few I/Os for findings this span: why, in @out. */
static bool too_few(const struct ts_dev_report *d, double span_s,
		    struct ts_findings *out)
{
	struct ts_findings_skip *s;
	__u64 ios = d->all.ios + d->all.missed;

	if (ios >= TS_FIND_MIN_IOS || out->nskipped >= TS_MAX_DEVS)
		return ios < TS_FIND_MIN_IOS;
	s = &out->skipped[out->nskipped++];
	s->device = d->name;
	snprintf(s->reason, sizeof(s->reason),
		 "%llu I/Os in %.2f s: fewer than %d, too few to conclude",
		 (unsigned long long)ios, span_s, TS_FIND_MIN_IOS);
	return true;
}

static int by_severity(const void *a, const void *b)
{
	const struct ts_finding *x = a, *y = b;

	if (x->severity != y->severity)
		return x->severity > y->severity ? -1 : 1;
	return x->rank - y->rank; /* the order found: rule order, by device */
}

void ts_findings_build(const struct ts_report *r, struct ts_findings *out)
{
	struct ts_finding_ctx c = { .r = r, .span_s = r->span_s, .out = out };
	char mixed[128];
	int i, k;

	out->span_s = r->span_s;
	out->n = 0;
	out->found = 0;
	out->not_kept = 0;
	out->nskipped = 0;
	for (i = 0; i < r->ndev; i++) {
		c.d = &r->dev[i];
		if (!c.d->active || too_few(c.d, r->span_s, out))
			continue;
		ts_finding_mixed(c.d, mixed, sizeof(mixed));
		c.mixed = mixed;
		for (k = 0; k < ts_nrules; k++)
			ts_rules[k].fn(&c);
	}
	qsort(out->f, out->n, sizeof(out->f[0]), by_severity);
	for (i = 0; i < out->n; i++)
		out->f[i].rank = i + 1;
}
