// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "pattern.h"
#include "lib/names.h"
#include "lib/units.h"

void ts_pattern_delta(const struct ts_pattern *a, const struct ts_pattern *b,
		      double span_s, struct ts_pattern_span *out)
{
	const __u64 *from = a ? (const __u64 *)a->op : NULL;
	const __u64 *to = (const __u64 *)b->op;
	__u64 *d = (__u64 *)out->op;
	size_t i, n = sizeof(out->op) / (sizeof(__u64));

	for (i = 0; i < n; i++)
		d[i] = to[i] - (from ? from[i] : 0);
	out->span_s = span_s;
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

static void print_sizes(FILE *f, const char *op, const struct ts_pattern_op *o,
			double span_s)
{
	char lo[16], hi[16];
	int k;

	for (k = 0; k < TS_SIZE_SLOTS; k++) {
		if (!o->size_ios[k])
			continue;
		human("", k ? 1ULL << k : 0, lo, sizeof(lo));
		human("", 2ULL << k, hi, sizeof(hi));
		fprintf(f, "  %-6s %6s-%-6s %10llu %10.1f %9.2f\n", op, lo, hi,
			(unsigned long long)o->size_ios[k],
			span_s > 0 ? o->size_ios[k] / span_s : 0,
			ts_mib_per_s(o->size_bytes[k], span_s));
	}
}

void ts_pattern_print(FILE *f, const char *name,
		      const struct ts_pattern_span *p)
{
	struct ts_pattern_figures fig;
	char a[16], b[16];
	int op;

	for (op = 0; op < TS_PATTERN_OPS; op++) {
		ts_pattern_figures(&p->op[op], &fig);
		if (fig.ios)
			break;
	}
	if (op == TS_PATTERN_OPS)
		return; /* given nothing */
	fprintf(f, "\n%s: access pattern, requests in the order the device was given them\n", name);
	fprintf(f, "  %-6s %10s %7s %7s %9s %9s\n", "OP", "IOS", "SEQ%",
		"BACK%", "SEEK_P50", "SEEK_P90");
	for (op = 0; op < TS_PATTERN_OPS; op++) {
		ts_pattern_figures(&p->op[op], &fig);
		if (!fig.ios)
			continue;
		fprintf(f, "  %-6s %10llu %7.1f %7.1f %9s %9s\n",
			ts_op_names[op], (unsigned long long)fig.ios,
			pct(fig.sequential, fig.compared),
			pct(fig.backward, fig.compared),
			human(fig.seek_p50_lt ? "<" : "", fig.seek_p50_lt, a, sizeof(a)),
			human(fig.seek_p90_lt ? "<" : "", fig.seek_p90_lt, b, sizeof(b)));
	}
	fprintf(f, "  %-6s %13s %10s %10s %9s\n", "OP", "SIZE(bytes)", "IOS",
		"IOPS", "MiB/s");
	for (op = 0; op < TS_PATTERN_OPS; op++)
		print_sizes(f, ts_op_names[op], &p->op[op], p->span_s);
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

static void json_sizes(struct tj *j, const struct ts_pattern_op *o,
		       double span_s)
{
	int k;

	tj_arr(j, "sizes");
	for (k = 0; k < TS_SIZE_SLOTS; k++) {
		if (!o->size_ios[k])
			continue;
		tj_obj(j, NULL);
		tj_u64(j, "from_bytes", k ? 1ULL << k : 0);
		tj_u64(j, "below_bytes", 2ULL << k);
		tj_u64(j, "ios", o->size_ios[k]);
		tj_u64(j, "bytes", o->size_bytes[k]);
		tj_num(j, "mib_per_s", ts_mib_per_s(o->size_bytes[k], span_s), 3);
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
		json_seeks(j, &p->op[op]);
		json_sizes(j, &p->op[op], p->span_s);
		tj_end_obj(j);
	}
	tj_end_obj(j);
}
