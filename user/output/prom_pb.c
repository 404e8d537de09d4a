// SPDX-License-Identifier: GPL-2.0
/*
 * The exposition in Prometheus' protobuf format (io.prometheus.client,
 * length-delimited MetricFamily messages), from the text one: each family,
 * series and value as the text says, so that both come from one render;
 * each histogram also native, at schema 4, from the kernel's buckets the
 * render noted (struct ts_prom_natives).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.pb-c.h"
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
	struct hseries **hs; /* the histogram series so far */
	size_t nhs;
	const struct ts_prom_natives *nat;
};

/* A histogram series: its family, its labels' text (no le), its message. */
struct hseries {
	Family *f;
	char *key;
	Metric *m;
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

/* "# HELP name text" and "# TYPE name type": a family, in text order. */
static void comment(struct conv *c, const char *line)
{
	static const Family init = IO__PROMETHEUS__CLIENT__METRIC_FAMILY__INIT;
	const char *name = line + 7, *sp = strchr(name, ' ');
	Family *f;

	if (!sp)
		return;
	f = family(c, name, sp - name);
	if (!f && (f = grab(c, sizeof(*f)))) {
		*f = init;
		f->name = dup(c, name, sp - name);
		push(c, (void ***)&c->fam, &c->nfam, f);
	}
	if (!f)
		return;
	if (!strncmp(line, "# HELP ", 7)) {
		f->help = dup(c, sp + 1, strlen(sp + 1));
		return;
	}
	f->has_type = true;
	f->type = !strcmp(sp + 1, "counter") ?
			  IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER :
		  !strcmp(sp + 1, "histogram") ?
			  IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM :
			  IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE;
}

/* A label value as the text escapes it (\\, \", \n), unescaped. */
static char *unescape(struct conv *c, const char *v, const char **end)
{
	char *out = grab(c, strlen(v) + 1), *o = out;

	for (; out && *v && *v != '"'; v++) {
		if (*v == '\\' && v[1])
			*o++ = *++v == 'n' ? '\n' : *v;
		else
			*o++ = *v;
	}
	*end = v;
	return out;
}

/*
 * The labels of "{a="x",b="y"}" from @s (after the brace) into @m, all
 * but le; its value in *@le. Returns where they end (at the '}').
 */
static const char *labels(struct conv *c, const char *s, Metric *m,
			  double *le)
{
	static const Label init = IO__PROMETHEUS__CLIENT__LABEL_PAIR__INIT;
	const char *eq, *end;
	Label *l;

	while (*s && *s != '}') {
		eq = strchr(s, '=');
		if (!eq || eq[1] != '"')
			return NULL;
		if (eq - s == 2 && !memcmp(s, "le", 2)) {
			*le = strtod(eq + 2, (char **)&end);
		} else if ((l = grab(c, sizeof(*l)))) {
			*l = init;
			l->name = dup(c, s, eq - s);
			l->value = unescape(c, eq + 2, &end);
			push(c, (void ***)&m->label, &m->n_label, l);
		}
		if (!end || *end != '"')
			return NULL;
		s = end + 1 + (end[1] == ',');
	}
	return *s ? s : NULL;
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

static const __u64 *native_counts(const struct conv *c, const Family *f,
				  const char *key)
{
	size_t n = strlen(f->name);
	int i;

	for (i = 0; c->nat && i < c->nat->n; i++) {
		const char *k = c->nat->e[i].key;

		if (!strncmp(k, f->name, n) && k[n] == '{' &&
		    !strncmp(k + n + 1, key, strlen(key)) &&
		    !strcmp(k + n + 1 + strlen(key), "}"))
			return c->nat->e[i].counts;
	}
	return NULL;
}

/*
 * The series of histogram @f whose labels are the first @len bytes of
 * @key (a sample's labels, from after the brace: le follows), made once.
 */
static Metric *hist_series(struct conv *c, Family *f, const char *key,
			   size_t len)
{
	static const Metric minit = IO__PROMETHEUS__CLIENT__METRIC__INIT;
	static const Hist hinit = IO__PROMETHEUS__CLIENT__HISTOGRAM__INIT;
	struct hseries *x;
	const __u64 *counts;
	double le;
	size_t i;

	for (i = 0; i < c->nhs; i++)
		if (c->hs[i]->f == f && strlen(c->hs[i]->key) == len &&
		    !memcmp(c->hs[i]->key, key, len))
			return c->hs[i]->m;
	x = grab(c, sizeof(*x));
	if (!x || !(x->m = grab(c, sizeof(*x->m))))
		return NULL;
	*x->m = minit;
	if (!labels(c, key, x->m, &le) ||
	    !(x->m->histogram = grab(c, sizeof(Hist))))
		return NULL;
	*x->m->histogram = hinit;
	x->f = f;
	x->key = dup(c, key, len);
	push(c, (void ***)&c->hs, &c->nhs, x);
	push(c, (void ***)&f->metric, &f->n_metric, x->m);
	counts = x->key ? native_counts(c, f, x->key) : NULL;
	if (counts)
		native(c, x->m->histogram, counts);
	return x->m;
}

/* Where the histogram series' own labels end: before le, or at the '}'. */
static size_t key_len(const char *labels)
{
	const char *le = strstr(labels, ",le=\"");
	const char *end = strchr(labels, '}');

	if (!strncmp(labels, "le=\"", 4))
		return 0;
	return le && (!end || le < end) ? (size_t)(le - labels) :
	       end ? (size_t)(end - labels) : strlen(labels);
}

/* A sample of histogram @f: "_bucket", "_sum" or "_count" in @suffix. */
static void hist_sample(struct conv *c, Family *f, const char *suffix,
			const char *labels_at, double v, double le)
{
	static const Bucket init = IO__PROMETHEUS__CLIENT__BUCKET__INIT;
	Metric *m = hist_series(c, f, labels_at, key_len(labels_at));
	Hist *h = m ? m->histogram : NULL;
	Bucket *b;

	if (!h)
		return;
	if (!strcmp(suffix, "_sum")) {
		h->has_sample_sum = true;
		h->sample_sum = v;
	} else if (!strcmp(suffix, "_count")) {
		h->has_sample_count = true;
		h->sample_count = (uint64_t)v;
	} else if (isfinite(le) && (b = grab(c, sizeof(*b)))) {
		*b = init; /* +Inf: the count, not a bucket */
		b->has_cumulative_count = b->has_upper_bound = true;
		b->cumulative_count = (uint64_t)v;
		b->upper_bound = le;
		push(c, (void ***)&h->bucket, &h->n_bucket, b);
	}
}

/* The family of sample name @name (@len): its own, or its histogram's. */
static Family *family_of(struct conv *c, const char *name, size_t len,
			 const char **suffix)
{
	static const char *const sfx[] = { "_bucket", "_sum", "_count" };
	Family *f = family(c, name, len);
	size_t i, n;

	*suffix = NULL;
	for (i = 0; !f && i < 3; i++) {
		n = strlen(sfx[i]);
		if (len > n && !memcmp(name + len - n, sfx[i], n) &&
		    (f = family(c, name, len - n)) &&
		    f->type == IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM)
			*suffix = sfx[i];
		else
			f = NULL;
	}
	return f;
}

/* A plain series: its labels and its value as a gauge or a counter. */
static void plain_sample(struct conv *c, Family *f, const char *labels_at,
			 double v)
{
	static const Metric minit = IO__PROMETHEUS__CLIENT__METRIC__INIT;
	static const Io__Prometheus__Client__Counter cinit =
		IO__PROMETHEUS__CLIENT__COUNTER__INIT;
	static const Io__Prometheus__Client__Gauge ginit =
		IO__PROMETHEUS__CLIENT__GAUGE__INIT;
	Metric *m = grab(c, sizeof(*m));
	double le;

	if (!m)
		return;
	*m = minit;
	if (labels_at && !labels(c, labels_at, m, &le))
		return;
	if (f->type == IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER &&
	    (m->counter = grab(c, sizeof(*m->counter)))) {
		*m->counter = cinit;
		m->counter->has_value = true;
		m->counter->value = v;
	} else if ((m->gauge = grab(c, sizeof(*m->gauge)))) {
		*m->gauge = ginit;
		m->gauge->has_value = true;
		m->gauge->value = v;
	}
	push(c, (void ***)&f->metric, &f->n_metric, m);
}

/*
 * One sample line: "name{labels} value" or "name value"; the value after
 * the last space (a label value may hold spaces and braces).
 */
static void sample(struct conv *c, const char *line)
{
	const char *cut = strpbrk(line, "{ "), *val = strrchr(line, ' ');
	const char *labels_at = cut && *cut == '{' ? cut + 1 : NULL;
	const char *suffix, *le_at;
	double le = INFINITY;
	Family *f;

	if (!cut || !val || !(f = family_of(c, line, cut - line, &suffix)))
		return;
	if (!suffix) {
		plain_sample(c, f, labels_at, strtod(val, NULL));
		return;
	}
	/* a histogram's labels are device, layer, op, then le */
	le_at = labels_at ? strstr(labels_at, "le=\"") : NULL;
	if (le_at && !strcmp(suffix, "_bucket"))
		le = strtod(le_at + 4, NULL);
	hist_sample(c, f, suffix, labels_at ?: "}", strtod(val, NULL), le);
}

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
	struct ts_prom_natives nat = { 0 };
	struct conv c = { .nat = &nat };
	char *text, *line, *save, *out = NULL;
	size_t tlen;
	int i;

	p->natives = &nat;
	text = ts_prom_render(p, r, &tlen);
	p->natives = NULL;
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7))
			comment(&c, line);
		else if (line[0] != '#')
			sample(&c, line);
	}
	if (text && !c.failed && !nat.failed)
		out = pack(&c, len);
	conv_free(&c);
	for (i = 0; i < nat.n; i++)
		free(nat.e[i].key);
	free(nat.e);
	free(text);
	return out;
}
