// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <string.h>

#include "histogram.h"

__u64 ts_hist_count(const __u64 *counts)
{
	__u64 n = 0;
	int b;

	for (b = 0; b < TS_HIST_SLOTS; b++)
		n += counts[b];
	return n;
}

double ts_hist_quantile(const __u64 *counts, double q)
{
	__u64 n = ts_hist_count(counts), seen = 0;
	double rank, lo, hi;
	int b;

	if (!n)
		return NAN;
	rank = ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	for (b = 0; b < TS_HIST_SLOTS; b++) {
		if (!counts[b] || (double)(seen + counts[b]) < rank) {
			seen += counts[b];
			continue;
		}
		lo = ts_hist_lower(b);
		hi = b + 1 < TS_HIST_SLOTS ? ts_hist_lower(b + 1) : lo;
		return lo + (hi - lo) * (rank - (double)seen) / (double)counts[b];
	}
	return NAN;
}

void ts_hist_pct(const __u64 *counts, struct ts_pct *p)
{
	p->p50 = ts_hist_quantile(counts, 0.50) / 1e6;
	p->p90 = ts_hist_quantile(counts, 0.90) / 1e6;
	p->p99 = ts_hist_quantile(counts, 0.99) / 1e6;
	p->p999 = ts_hist_quantile(counts, 0.999) / 1e6;
	p->max = ts_hist_quantile(counts, 1.0) / 1e6;
}

void ts_json_pct(struct tj *j, const char *key, const struct ts_pct *p)
{
	tj_obj(j, key);
	tj_num(j, "p50", p->p50, 6);
	tj_num(j, "p90", p->p90, 6);
	tj_num(j, "p99", p->p99, 6);
	tj_num(j, "p99_9", p->p999, 6);
	tj_num(j, "max", p->max, 6);
	tj_end_obj(j);
}

void ts_hist_delta(const struct ts_hist *a, const struct ts_hist *b,
		   struct ts_hist *dst)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
	__u64 *d = (__u64 *)dst;
	size_t i;

	for (i = 0; i < TS_HIST_U64S; i++)
		d[i] = y[i] - (x ? x[i] : 0);
}

void ts_hist_add(struct ts_hist *dst, const struct ts_hist *src)
{
	const __u64 *s = (const __u64 *)src;
	__u64 *d = (__u64 *)dst;
	size_t i;

	for (i = 0; i < TS_HIST_U64S; i++)
		d[i] += s[i];
}

static void put_bar(FILE *f, __u64 v, __u64 max)
{
	const int width = 40;
	int i, n = max ? (int)((double)v * width / (double)max + 0.5) : 0;

	fputc('|', f);
	for (i = 0; i < width; i++)
		fputc(i < n ? '*' : ' ', f);
	fputs("|\n", f);
}

/* Lines [lo, hi) us with @v samples; bounds printed as integers when whole. */
static void put_line(FILE *f, double lo_us, double hi_us, __u64 v, __u64 max)
{
	char lo[24], hi[24];

	snprintf(lo, sizeof(lo), lo_us == floor(lo_us) ? "%.0f" : "%.3f", lo_us);
	snprintf(hi, sizeof(hi), hi_us == floor(hi_us) ? "%.0f" : "%.3f", hi_us);
	fprintf(f, "%12s -> %-12s: %-10llu ", lo, hi, (unsigned long long)v);
	put_bar(f, v, max);
}

void ts_hist_print(FILE *f, const char *title, const __u64 *counts, int fine)
{
	__u64 folded[64] = { 0 }, max = 0;
	int b, first = -1, last = -1, e;

	fprintf(f, "%s\n%12s    %-12s: %-10s %s\n", title, "usecs", "",
		"count", "distribution");
	if (fine) {
		for (b = 0; b < TS_HIST_SLOTS; b++)
			if (counts[b] > max)
				max = counts[b];
		for (b = 0; b < TS_HIST_SLOTS; b++)
			if (counts[b])
				put_line(f, ts_hist_lower(b) / 1e3,
					 (b + 1 < TS_HIST_SLOTS ?
						  ts_hist_lower(b + 1) :
						  ts_hist_lower(b)) / 1e3,
					 counts[b], max);
		return;
	}
	/* fold into powers of two of microseconds: [2^e, 2^(e+1)) us */
	for (b = 0; b < TS_HIST_SLOTS; b++) {
		double us = ts_hist_lower(b) / 1e3;

		e = us < 1 ? 0 : (int)floor(log2(us)) + 1;
		folded[e] += counts[b];
	}
	for (e = 0; e < 64; e++) {
		if (!folded[e])
			continue;
		if (first < 0)
			first = e;
		last = e;
		if (folded[e] > max)
			max = folded[e];
	}
	for (e = first; e >= 0 && e <= last; e++)
		put_line(f, e ? ldexp(1, e - 1) : 0, ldexp(1, e), folded[e], max);
}

void ts_size_print(FILE *f, const char *title, const __u64 *counts)
{
	__u64 max = 0;
	int b, first = -1, last = -1;

	fprintf(f, "%s\n%12s    %-12s: %-10s %s\n", title, "kbytes", "", "count",
		"distribution");
	for (b = 0; b < TS_SIZE_SLOTS; b++) {
		if (!counts[b])
			continue;
		if (first < 0)
			first = b;
		last = b;
		if (counts[b] > max)
			max = counts[b];
	}
	for (b = first; b >= 0 && b <= last; b++)
		put_line(f, ldexp(1, b) / 1024, ldexp(1, b + 1) / 1024, counts[b],
			 max);
}
