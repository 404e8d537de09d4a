// SPDX-License-Identifier: GPL-2.0
/*
 * The exposition in Prometheus' protobuf format (io.prometheus.client,
 * length-delimited MetricFamily messages): a sink of the render (expo.h),
 * each family, series and value as prom.c says them, as the text's sink
 * has them; each histogram also native, at schema 4, from the kernel's
 * buckets.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.pb-c.h"
#include "expo.h"
#include "prom.h"

typedef Io__Prometheus__Client__MetricFamily Family;
typedef Io__Prometheus__Client__Metric Metric;
typedef Io__Prometheus__Client__LabelPair Label;
typedef Io__Prometheus__Client__Histogram Hist;
typedef Io__Prometheus__Client__Bucket Bucket;
typedef Io__Prometheus__Client__BucketSpan Span;

/* Schema 4 bucket indexes of the kernel's buckets: from 1 ns to 2^38 ns. */
#define NAT_MIN (-480)
#define NAT_N 640

/* Every allocation of one conversion, freed together. */
struct conv {
	void **mem;
	size_t nmem, capmem;
	bool failed;
	Family **fam;
	size_t nfam;
	Family *cur; /* the family the series now given are of */
};

static void *grab(struct conv *c, size_t n)
{
	void *p, **m;

	if (c->nmem == c->capmem) {
		m = realloc(c->mem, (c->capmem * 2 + 64) * sizeof(*m));
		if (!m) {
			c->failed = true;
			return NULL;
		}
		c->mem = m;
		c->capmem = c->capmem * 2 + 64;
	}
	p = calloc(1, n ?: 1);
	if (!p)
		c->failed = true;
	else
		c->mem[c->nmem++] = p;
	return p;
}

static char *dup(struct conv *c, const char *s, size_t n)
{
	char *d = grab(c, n + 1);

	if (d)
		memcpy(d, s, n);
	return d;
}

/* Appends @x to the array *@v of *@n pointers (in @c). */
static void push(struct conv *c, void ***v, size_t *n, void *x)
{
	void **w = grab(c, (*n + 1) * sizeof(*w));

	if (!w || !x)
		return;
	if (*n)
		memcpy(w, *v, *n * sizeof(*w));
	w[(*n)++] = x;
	*v = w;
}

static Family *family(struct conv *c, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < c->nfam; i++)
		if (strlen(c->fam[i]->name) == len &&
		    !memcmp(c->fam[i]->name, name, len))
			return c->fam[i];
	return NULL;
}

/* The index of schema 4's bucket that holds kernel bucket @b's middle. */
static int native_index(unsigned int b)
{
	double lo = ts_hist_lower(b), hi;

	hi = b + 1 < TS_HIST_SLOTS ? ts_hist_lower(b + 1) : lo * 17 / 16;
	return (int)ceil(16 * log2((lo + hi) / 2 / 1e9));
}

/* Runs of buckets with counts: spans, and each count's change (deltas). */
static void spans(struct conv *c, Hist *h, const __u64 *by)
{
	static const Span init = IO__PROMETHEUS__CLIENT__BUCKET_SPAN__INIT;
	int i, end = INT_MIN; /* where the last span ends */
	__u64 last = 0;
	Span *s = NULL;

	h->positive_delta = grab(c, NAT_N * sizeof(*h->positive_delta));
	for (i = 0; i < NAT_N && h->positive_delta; i++) {
		if (!by[i])
			continue;
		if (i != end && (s = grab(c, sizeof(*s)))) {
			*s = init;
			s->has_offset = s->has_length = true;
			s->offset = end == INT_MIN ? i + NAT_MIN : i - end;
			push(c, (void ***)&h->positive_span, &h->n_positive_span, s);
		}
		if (s)
			s->length++;
		end = i + 1;
		h->positive_delta[h->n_positive_delta++] = (int64_t)(by[i] - last);
		last = by[i];
	}
	if (!h->n_positive_span && (s = grab(c, sizeof(*s)))) {
		*s = init; /* none: a no-op span says native all the same */
		s->has_offset = s->has_length = true;
		push(c, (void ***)&h->positive_span, &h->n_positive_span, s);
	}
}

/*
 * @h native at schema 4 (16 buckets a power of two, the kernel's number):
 * each kernel bucket counted in the schema's bucket holding its middle;
 * its 0 ns one in the zero bucket (threshold 0).
 */
static void native(struct conv *c, Hist *h, const __u64 *counts)
{
	__u64 by[NAT_N] = { 0 };
	unsigned int b;
	int i;

	h->has_schema = h->has_zero_threshold = h->has_zero_count = true;
	h->schema = 4;
	h->zero_count = counts[0];
	for (b = 1; b < TS_HIST_SLOTS; b++) {
		i = native_index(b) - NAT_MIN;
		by[i < 0 ? 0 : i >= NAT_N ? NAT_N - 1 : i] += counts[b];
	}
	spans(c, h, by);
}

static void pb_family(void *ctx, const char *name, const char *type,
		      const char *help)
{
	static const Family init = IO__PROMETHEUS__CLIENT__METRIC_FAMILY__INIT;
	struct conv *c = ctx;
	Family *f = family(c, name, strlen(name));

	if (!f && (f = grab(c, sizeof(*f)))) {
		*f = init;
		f->name = dup(c, name, strlen(name));
		f->help = dup(c, help, strlen(help));
		f->has_type = true;
		f->type = !strcmp(type, "counter") ?
				  IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER :
			  !strcmp(type, "histogram") ?
				  IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM :
				  IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE;
		push(c, (void ***)&c->fam, &c->nfam, f);
	}
	c->cur = f;
}

/* A series' message in the current family, its labels copied. */
static Metric *series(struct conv *c, const struct ts_expo_series *s)
{
	static const Metric minit = IO__PROMETHEUS__CLIENT__METRIC__INIT;
	static const Label linit = IO__PROMETHEUS__CLIENT__LABEL_PAIR__INIT;
	Metric *m;
	Label *l;
	int i;

	if (!c->cur || strcmp(c->cur->name, s->name) ||
	    !(m = grab(c, sizeof(*m)))) {
		c->failed = true;
		return NULL;
	}
	*m = minit;
	for (i = 0; i < s->n; i++) {
		if (!(l = grab(c, sizeof(*l))))
			return NULL;
		*l = linit;
		l->name = dup(c, s->l[i].name, strlen(s->l[i].name));
		l->value = dup(c, s->l[i].value ?: "",
			       s->l[i].value ? strlen(s->l[i].value) : 0);
		push(c, (void ***)&m->label, &m->n_label, l);
	}
	push(c, (void ***)&c->cur->metric, &c->cur->n_metric, m);
	return m;
}

static void pb_sample(void *ctx, const struct ts_expo_series *s, double v,
		      enum ts_expo_fmt fmt)
{
	static const Io__Prometheus__Client__Counter cinit =
		IO__PROMETHEUS__CLIENT__COUNTER__INIT;
	static const Io__Prometheus__Client__Gauge ginit =
		IO__PROMETHEUS__CLIENT__GAUGE__INIT;
	struct conv *c = ctx;
	Metric *m = series(c, s);

	if (!m)
		return;
	if (c->cur->type == IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER &&
	    (m->counter = grab(c, sizeof(*m->counter)))) {
		*m->counter = cinit;
		m->counter->has_value = true;
		m->counter->value = v;
	} else if ((m->gauge = grab(c, sizeof(*m->gauge)))) {
		*m->gauge = ginit;
		m->gauge->has_value = true;
		m->gauge->value = v;
	}
}

/* Classic buckets at the exported edges, and native ones (native()). */
static void pb_histogram(void *ctx, const struct ts_expo_series *s,
			 const struct ts_expo_hist *h)
{
	static const Hist hinit = IO__PROMETHEUS__CLIENT__HISTOGRAM__INIT;
	static const Bucket binit = IO__PROMETHEUS__CLIENT__BUCKET__INIT;
	struct conv *c = ctx;
	Metric *m = series(c, s);
	Bucket *b;
	Hist *x;
	int i;

	if (!m || !(x = m->histogram = grab(c, sizeof(*x))))
		return;
	*x = hinit;
	for (i = 0; i < h->nedges && (b = grab(c, sizeof(*b))); i++) {
		*b = binit;
		b->has_cumulative_count = b->has_upper_bound = true;
		b->cumulative_count = h->cum[i];
		b->upper_bound = h->edges[i] / 1e9;
		push(c, (void ***)&x->bucket, &x->n_bucket, b);
	}
	x->has_sample_sum = x->has_sample_count = true;
	x->sample_sum = h->sum_s;
	x->sample_count = h->count;
	native(c, x, h->counts);
}

static const struct ts_expo_ops pb_ops = {
	.family = pb_family,
	.sample = pb_sample,
	.histogram = pb_histogram,
};

static size_t packed_size(const Family *f)
{
	return io__prometheus__client__metric_family__get_packed_size(f);
}

/* The families as length-delimited messages, malloc'd, length in *@len. */
static char *pack(const struct conv *c, size_t *len)
{
	size_t i, n, total = 0, at = 0;
	uint8_t *out;

	for (i = 0; i < c->nfam; i++)
		total += 10 + packed_size(c->fam[i]);
	out = malloc(total ?: 1);
	for (i = 0; out && i < c->nfam; i++) {
		if (!c->fam[i]->n_metric) /* declared, no series now */
			continue;
		n = packed_size(c->fam[i]);
		do { /* varint */
			out[at++] = (n & 0x7f) | (n > 0x7f ? 0x80 : 0);
			n >>= 7;
		} while (n);
		at += io__prometheus__client__metric_family__pack(c->fam[i], out + at);
	}
	*len = at;
	return (char *)out;
}

static void conv_free(struct conv *c)
{
	size_t i;

	for (i = 0; i < c->nmem; i++)
		free(c->mem[i]);
	free(c->mem);
}

char *ts_prom_render_protobuf(struct ts_prom *p, const struct ts_report *r,
			      size_t *len)
{
	struct conv c = { 0 };
	struct ts_expo x = { &pb_ops, &c };
	char *out = NULL;

	if (!ts_prom_render_to(p, r, &x) && !c.failed)
		out = pack(&c, len);
	conv_free(&c);
	return out;
}
