// SPDX-License-Identifier: GPL-2.0
/*
 * random-reads (--pattern): a busy device given reads that mostly go on
 * none of its recent streams (each read compared with where the last
 * TS_STREAMS streams ended, so that several sequential readers at once
 * count as sequential), jump further than their own size, and carry their
 * bytes in small requests: where a scan should be sequential, the data is
 * fragmented or a query lacks an index.
 */
#include "findings.h"

/*
 * Small: below the kernel's default readahead window (read_ahead_kb 128),
 * the size a buffered sequential scan reads in.
 */
#define TS_READAHEAD_BYTES (128 * 1024)

/* The size class carrying the most bytes: its upper bound. */
static __u64 most_bytes_below(const struct ts_pattern_op *o)
{
	int k, most = 0;

	for (k = 1; k < TS_SIZE_SLOTS; k++)
		if (o->size_bytes[k] > o->size_bytes[most])
			most = k;
	return 2ULL << most;
}

static double kib(__u64 bytes)
{
	return bytes / 1024.0;
}

void ts_rule_random_reads(const struct ts_finding_ctx *c)
{
	const struct ts_dev_report *d = c->d;
	const struct ts_pattern_op *o = &d->pattern.op[TS_OP_READ];
	struct ts_pattern_figures p;
	struct ts_finding *f;
	double seq;
	__u64 size;
	char svc[32];

	if (!c->r->show_pattern || d->device.busy_share < TS_FIND_BUSY)
		return;
	ts_pattern_figures(o, &p);
	if (p.compared < TS_FIND_MIN_IOS)
		return;
	seq = (double)p.in_stream / p.ios;
	size = most_bytes_below(o);
	/* most not sequential, small, and the median jump beyond a request */
	if (seq >= 0.5 || size > TS_READAHEAD_BYTES || p.seek_p50_lt <= size)
		return;
	f = ts_finding_add(c, "random-reads", "read", TS_SEV_MEDIUM,
			   TS_RESTS_DEPTH,
			   "%s reads: %.0f%% went on one of the last %d streams (began where one ended), half jumped up to %.0f KiB from the read before and most bytes came in reads below %.0f KiB, each %s in the device while it was %.0f%% busy: the device spends its time moving between small reads; if this is a scan, the data is fragmented or a query lacks an index",
			   d->name, 100 * seq, TS_STREAMS, kib(p.seek_p50_lt),
			   kib(size),
			   ts_time_str(svc, sizeof(svc),
				       d->op[TS_OP_READ].service_ms,
				       TS_UNIT_AUTO),
			   d->busy_pct);
	ts_finding_figure(f, "in_stream_share", seq, "share");
	ts_finding_figure(f, "streams", p.streams, "streams");
	ts_finding_figure(f, "seek_p50_below", p.seek_p50_lt, "bytes");
	ts_finding_figure(f, "most_bytes_below", size, "bytes");
	ts_finding_figure(f, "service_ms", d->op[TS_OP_READ].service_ms, "ms");
	ts_finding_figure(f, "busy_pct", d->busy_pct, "percent");
}
