// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <string.h>

#include "pattern.h"
#include "lib/histogram.h"
#include "lib/names.h"
#include "lib/units.h"

void ts_pattern_delta(const struct ts_pattern *a, const struct ts_pattern *b,
		      double span_s, struct ts_pattern_span *out)
{
	const __u64 *from = a ? (const __u64 *)a->op : NULL;
	const __u64 *to = (const __u64 *)b->op;
	__u64 *d = (__u64 *)out->op;
	size_t i, n = sizeof(out->op) / (sizeof(__u64));

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++)
		d[i] = to[i] - (from ? from[i] : 0);
	out->span_s = span_s;
}

void ts_size_widen(struct ts_size_counts *total, struct ts_size_hist *seen,
		   const struct ts_size_hist *now)
{
	__u32 v;
	int op, c, b;

	for (op = 0; op < TS_PATTERN_OPS; op++)
		for (c = 0; c < TS_SIZE_CLASSES; c++)
			for (b = 0; b < TS_HIST_SLOTS; b++) {
				v = now[op].service[c][b];
				total->service[op][c][b] +=
					(__u32)(v - seen[op].service[c][b]);
				seen[op].service[c][b] = v;
			}
}

void ts_pattern_service(const struct ts_size_counts *a,
			const struct ts_size_counts *b,
			struct ts_pattern_span *p)
{
	__u64 h[TS_HIST_SLOTS];
	struct ts_size_service *s;
	int op, c, k;

	for (op = 0; op < TS_PATTERN_OPS; op++)
		for (c = 0; c < TS_SIZE_CLASSES; c++) {
			for (k = 0; k < TS_HIST_SLOTS; k++)
				h[k] = b->service[op][c][k] -
				       (a ? a->service[op][c][k] : 0);
			s = &p->service[op][c];
			s->completed = ts_hist_count(h);
			s->p50_ms = ts_hist_quantile(h, 0.50) / 1e6;
			s->p95_ms = ts_hist_quantile(h, 0.95) / 1e6;
			s->p99_ms = ts_hist_quantile(h, 0.99) / 1e6;
		}
	p->has_service = true;
}

/*
 * The service figures that size row @k carries: its class's, on the
 * class's own row (the 512-byte row for all below 1 KiB, the 4 MiB row for
 * 4 MiB and more); NULL on the others, or without histograms.
 */
static const struct ts_size_service *row_service(const struct ts_pattern_span *p,
						 int op, int k)
{
	int c = ts_size_class(k);

	if (!p->has_service || k != c + TS_SIZE_CLASS_LOW)
		return NULL;
	return &p->service[op][c];
}

/* Whether size row @k has anything to show. */
static bool row_shown(const struct ts_pattern_span *p, int op, int k)
{
	const struct ts_size_service *s = row_service(p, op, k);

	return p->op[op].size_ios[k] || (s && s->completed);
}

/* Bytes below which seek bucket @k lies: 2^k sectors (k = 0: sequential). */
static __u64 seek_lt(int k)
{
	return k ? (1ULL << k) * 512 : 0;
}

/* The bucket that holds the @q quantile of @n seeks. */
static __u64 seek_quantile_lt(const __u64 *seek, __u64 n, double q)
{
	__u64 seen = 0;
	int k;

	for (k = 0; k < TS_SEEK_SLOTS; k++) {
		seen += seek[k];
		if (seen && seen >= q * n)
			return seek_lt(k);
	}
	return 0;
}

void ts_pattern_figures(const struct ts_pattern_op *o,
			struct ts_pattern_figures *f)
{
	int k;

	memset(f, 0, sizeof(*f));
	for (k = 0; k < TS_SIZE_SLOTS; k++)
		f->ios += o->size_ios[k];
	for (k = 0; k < TS_SEEK_SLOTS; k++)
		f->compared += o->seek[k];
	f->sequential = o->seek[0];
	f->in_stream = o->in_stream;
	for (k = 0; k < TS_STREAMS; k++)
		f->streams += o->stream_ios[k] > 0;
	f->backward = o->backward;
	f->seek_p50_lt = seek_quantile_lt(o->seek, f->compared, 0.50);
	f->seek_p90_lt = seek_quantile_lt(o->seek, f->compared, 0.90);
}

/*
 * @bytes as "512", "4K", "1M", "2G" (powers of two are what it gets),
 * after @prefix.
 */
static const char *human(const char *prefix, __u64 bytes, char *buf,
			 size_t len)
{
	static const char unit[] = " KMGTP";
	int u = 0;

	while (bytes >= 1024 && !(bytes % 1024) && u < 5) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%s%llu%c" : "%s%llu", prefix,
		 (unsigned long long)bytes, unit[u]);
	return buf;
}

static double pct(__u64 part, __u64 whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/* The format of @p's service columns, from the figures they print. */
static struct ts_tfmt service_fmt(const struct ts_pattern_span *p,
				  enum ts_unit units)
{
	const struct ts_size_service *s;
	double min = INFINITY;
	int op, k;

	for (op = 0; op < TS_PATTERN_OPS; op++)
		for (k = 0; k < TS_SIZE_SLOTS; k++) {
			s = row_service(p, op, k);
			if (!s || !s->completed)
				continue;
			ts_tmin_see(&min, s->p50_ms);
			ts_tmin_see(&min, s->p95_ms);
			ts_tmin_see(&min, s->p99_ms);
		}
	return ts_tfmt_pick(min, units);
}

/* COMPLETED and the percentiles: "-" where the row carries none. */
static void print_service(FILE *f, const struct ts_size_service *s,
			  const struct ts_tfmt *t)
{
	if (!s) {
		fprintf(f, " %10s %10s %10s %10s\n", "-", "-", "-", "-");
		return;
	}
	fprintf(f, " %10llu", (unsigned long long)s->completed);
	ts_tfmt_put(f, t, s->p50_ms, 10);
	ts_tfmt_put(f, t, s->p95_ms, 10);
	ts_tfmt_put(f, t, s->p99_ms, 10);
	fputc('\n', f);
}

static void print_sizes(FILE *f, int op, const struct ts_pattern_span *p,
			const struct ts_tfmt *t)
{
	const struct ts_pattern_op *o = &p->op[op];
	char lo[16], hi[16];
	int k;

	for (k = 0; k < TS_SIZE_SLOTS; k++) {
		if (!row_shown(p, op, k))
			continue;
		human("", k ? 1ULL << k : 0, lo, sizeof(lo));
		human("", 2ULL << k, hi, sizeof(hi));
		fprintf(f, "  %-6s %6s-%-6s %10llu %10.1f %9.2f", ts_op_names[op],
			lo, hi, (unsigned long long)o->size_ios[k],
			p->span_s > 0 ? o->size_ios[k] / p->span_s : 0,
			ts_mib_per_s(o->size_bytes[k], p->span_s));
		print_service(f, row_service(p, op, k), t);
	}
}

void ts_pattern_print(FILE *f, const char *name,
		      const struct ts_pattern_span *p, enum ts_unit units)
{
	static const char *const svc[] = { "SVC_P50", "SVC_P95", "SVC_P99" };
	struct ts_pattern_figures fig;
	char a[16], b[16];
	struct ts_tfmt t;
	int op, i;

	for (op = 0; op < TS_PATTERN_OPS; op++) {
		ts_pattern_figures(&p->op[op], &fig);
		if (fig.ios)
			break;
	}
	if (op == TS_PATTERN_OPS)
		return; /* given nothing */
	fprintf(f, "\n%s: access pattern, requests in the order the device was given them\n", name);
	fprintf(f, "  %-6s %10s %7s %8s %7s %7s %9s %9s\n", "OP", "IOS",
		"SEQ%", "STREAM%", "STREAMS", "BACK%", "SEEK_P50", "SEEK_P90");
	for (op = 0; op < TS_PATTERN_OPS; op++) {
		ts_pattern_figures(&p->op[op], &fig);
		if (!fig.ios)
			continue;
		fprintf(f, "  %-6s %10llu %7.1f %8.1f %7d %7.1f %9s %9s\n",
			ts_op_names[op], (unsigned long long)fig.ios,
			pct(fig.sequential, fig.compared),
			pct(fig.in_stream, fig.ios), fig.streams,
			pct(fig.backward, fig.compared),
			human(fig.seek_p50_lt ? "<" : "", fig.seek_p50_lt, a, sizeof(a)),
			human(fig.seek_p90_lt ? "<" : "", fig.seek_p90_lt, b, sizeof(b)));
	}
	t = service_fmt(p, units);
	fprintf(f, "  %-6s %13s %10s %10s %9s %10s", "OP", "SIZE(bytes)",
		"IOS", "IOPS", "MiB/s", "COMPLETED");
	for (i = 0; i < 3; i++)
		fprintf(f, " %7s_%s", svc[i], ts_tfmt_unit(&t));
	fputc('\n', f);
	for (op = 0; op < TS_PATTERN_OPS; op++)
		print_sizes(f, op, p, &t);
}

static void json_seeks(struct tj *j, const struct ts_pattern_op *o)
{
	int k;

	tj_arr(j, "seek");
	for (k = 0; k < TS_SEEK_SLOTS; k++) {
		if (!o->seek[k])
			continue;
		tj_obj(j, NULL);
		tj_u64(j, "from_bytes", k ? seek_lt(k) / 2 : 0);
		tj_u64(j, "below_bytes", k ? seek_lt(k) : 1);
		tj_u64(j, "ios", o->seek[k]);
		tj_end_obj(j);
	}
	tj_end_arr(j);
}

/* "completed" and "service_ms" of a size row (nulls: not known there). */
static void json_service(struct tj *j, const struct ts_size_service *s)
{
	if (!s) {
		tj_null(j, "completed");
		tj_null(j, "service_ms");
		return;
	}
	tj_u64(j, "completed", s->completed);
	if (!s->completed) {
		tj_null(j, "service_ms");
		return;
	}
	tj_obj(j, "service_ms");
	tj_num(j, "p50", s->p50_ms, 6);
	tj_num(j, "p95", s->p95_ms, 6);
	tj_num(j, "p99", s->p99_ms, 6);
	tj_end_obj(j);
}

static void json_sizes(struct tj *j, int op, const struct ts_pattern_span *p)
{
	const struct ts_pattern_op *o = &p->op[op];
	int k;

	tj_arr(j, "sizes");
	for (k = 0; k < TS_SIZE_SLOTS; k++) {
		if (!row_shown(p, op, k))
			continue;
		tj_obj(j, NULL);
		tj_u64(j, "from_bytes", k ? 1ULL << k : 0);
		tj_u64(j, "below_bytes", 2ULL << k);
		tj_u64(j, "ios", o->size_ios[k]);
		json_service(j, row_service(p, op, k));
		tj_u64(j, "bytes", o->size_bytes[k]);
		tj_num(j, "mib_per_s", ts_mib_per_s(o->size_bytes[k], p->span_s), 3);
		tj_end_obj(j);
	}
	tj_end_arr(j);
}

void ts_pattern_json(struct tj *j, const struct ts_pattern_span *p)
{
	struct ts_pattern_figures fig;
	int op;

	tj_obj(j, "pattern");
	for (op = 0; op < TS_PATTERN_OPS; op++) {
		ts_pattern_figures(&p->op[op], &fig);
		tj_obj(j, ts_op_names[op]);
		tj_u64(j, "ios", fig.ios);
		tj_u64(j, "compared", fig.compared);
		tj_u64(j, "sequential", fig.sequential);
		tj_u64(j, "backward", fig.backward);
		if (fig.compared)
			tj_num(j, "sequential_share", (double)fig.sequential / fig.compared, 4);
		else
			tj_null(j, "sequential_share");
		tj_u64(j, "in_stream", fig.in_stream);
		if (fig.ios)
			tj_num(j, "in_stream_share", (double)fig.in_stream / fig.ios, 4);
		else
			tj_null(j, "in_stream_share");
		tj_u64(j, "streams", fig.streams);
		json_seeks(j, &p->op[op]);
		json_sizes(j, op, p);
		tj_end_obj(j);
	}
	tj_end_obj(j);
}
