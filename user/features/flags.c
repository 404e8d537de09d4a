// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <string.h>

#include "lib/histogram.h"
#include "lib/names.h"
#include "flags.h"

const char *const ts_flag_class_names[TS_NR_FLAG_CLASSES] = {
	[TS_FLAG_SYNC] = "sync",
	[TS_FLAG_META] = "meta",
	[TS_FLAG_PRIO] = "prio",
	[TS_FLAG_READAHEAD] = "readahead",
	[TS_FLAG_BACKGROUND] = "background",
	[TS_FLAG_FUA] = "fua",
	[TS_FLAG_PREFLUSH] = "preflush",
	[TS_FLAG_NONE] = "none",
};

#define FLAGS_U64S (sizeof(struct ts_flags_stats) / sizeof(__u64))

static const struct ts_flags_entry *find(const struct ts_flags_table *t,
					 const struct ts_flags_key *k)
{
	int i;

	for (i = 0; t && i < t->n; i++)
		if (!memcmp(&t->e[i].key, k, sizeof(*k)))
			return &t->e[i];
	return NULL;
}

/* @dst += @sign * @src, counter by counter. */
static void add_stats(struct ts_flags_stats *dst,
		      const struct ts_flags_stats *src, int sign)
{
	const __u64 *s = (const __u64 *)src;
	__u64 *d = (__u64 *)dst;
	size_t i;

	for (i = 0; i < FLAGS_U64S; i++)
		d[i] += sign * s[i];
}

void ts_flags_delta(const struct ts_flags_table *a,
		    const struct ts_flags_table *b, struct ts_flags_table *out)
{
	const struct ts_flags_entry *old;
	int i;

	out->n = b->n;
	for (i = 0; i < b->n; i++) {
		out->e[i] = b->e[i];
		old = find(a, &b->e[i].key);
		if (old)
			add_stats(&out->e[i].s, &old->s, -1);
	}
}

/* CLASS_ALL: every combination, each request once. */
#define CLASS_ALL TS_NR_FLAG_CLASSES

static bool in_class(__u8 bits, int class)
{
	if (class == CLASS_ALL)
		return true;
	return class == TS_FLAG_NONE ? !bits : (bits >> class) & 1;
}

static const char *class_name(int class)
{
	return class == CLASS_ALL ? "all" : ts_flag_class_names[class];
}

/* Whether @k is of disk @d: a slot's next disk has entries of its own. */
static bool of_disk(const struct ts_flags_key *k, struct ts_flags_disk d)
{
	if (k->qid == d.qid && k->claimed_ns == d.claimed_ns)
		return true;
	return k->dev == d.dev && k->claimed_ns > d.claimed_ns &&
	       k->claimed_ns <= d.last_claim_ns;
}

void ts_flags_class(const struct ts_flags_table *t, struct ts_flags_disk d,
		    int op, int class, struct ts_flags_stats *out)
{
	int i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < t->n; i++)
		if (of_disk(&t->e[i].key, d) && t->e[i].key.op == op &&
		    in_class(t->e[i].key.bits, class))
			add_stats(out, &t->e[i].s, 1);
}

static double mean_ms(__u64 ns, __u64 n)
{
	return n ? ns / 1e6 / n : NAN;
}

/* One class's figures: its means and percentiles of each time. */
struct class_figures {
	__u64 ios, bytes, queued_ios;
	double mean[3]; /* queue, service, total */
	struct ts_pct pct[3];
};

static const char *const kinds[3] = { "queue", "service", "total" };

static void figures(const struct ts_flags_stats *s, struct class_figures *c)
{
	c->ios = s->ios;
	c->bytes = s->bytes;
	c->queued_ios = s->queued_ios;
	c->mean[0] = mean_ms(s->queue_ns, s->queued_ios);
	c->mean[1] = mean_ms(s->service_ns, s->ios);
	c->mean[2] = mean_ms(s->total_ns, s->queued_ios);
	ts_hist_pct(s->queue, &c->pct[0]);
	ts_hist_pct(s->service, &c->pct[1]);
	ts_hist_pct(s->total, &c->pct[2]);
}

/* Each class with completions of disk @d, op by op, through @fn. */
static void walk(const struct ts_flags_table *t, struct ts_flags_disk d,
		 void (*fn)(void *ctx, int op, int class,
			    const struct class_figures *c),
		 void *ctx)
{
	static struct ts_flags_stats s;
	struct class_figures c;
	int op, class;

	for (op = 0; op < TS_NR_OPS; op++)
		for (class = 0; class <= CLASS_ALL; class++) {
			ts_flags_class(t, d, op, class, &s);
			if (!s.ios)
				continue;
			figures(&s, &c);
			fn(ctx, op, class, &c);
		}
}

struct table {
	FILE *f; /* NULL: finding the unit */
	const char *name;
	struct ts_tfmt t;
	double min_ms;
	int rows;
};

static void put_row(struct table *p, int op, int class,
		    const struct class_figures *c, int k)
{
	const struct ts_pct *q = &c->pct[k];
	const double v[] = { c->mean[k], q->p50, q->p90, q->p99, q->p999,
			     q->max };
	int i;

	if (!p->f) {
		for (i = 0; i < 6; i++)
			ts_tmin_see(&p->min_ms, v[i]);
		return;
	}
	fprintf(p->f, "  %-7s %-10s %10llu %-8s", ts_op_names[op],
		class_name(class),
		(unsigned long long)(k == 1 ? c->ios : c->queued_ios), kinds[k]);
	for (i = 0; i < 6; i++)
		ts_tfmt_put(p->f, &p->t, v[i], 9);
	fputc('\n', p->f);
}

static void put_class(void *ctx, int op, int class,
		      const struct class_figures *c)
{
	struct table *p = ctx;
	int k;

	if (p->f && !p->rows++) {
		fprintf(p->f, "\n%s: request flags as the device saw them (a request counts in each class it carries; all: each once)\n",
			p->name);
		fprintf(p->f, "  %-7s %-10s %10s %-8s %9s %9s %9s %9s %9s %9s  (%s)\n",
			"OP", "CLASS", "IOS", "TIME", "MEAN", "P50", "P90",
			"P99", "P99.9", "MAX", ts_tfmt_unit(&p->t));
	}
	for (k = 0; k < 3; k++)
		if (k == 1 || c->queued_ios)
			put_row(p, op, class, c, k);
}

void ts_flags_print(FILE *f, const struct ts_flags_table *t,
		    enum ts_unit units, struct ts_flags_disk d,
		    const char *name, unsigned long long not_counted)
{
	struct table p = { .name = name, .min_ms = INFINITY };

	walk(t, d, put_class, &p);
	p.t = ts_tfmt_pick(p.min_ms, units);
	p.f = f;
	walk(t, d, put_class, &p);
	if (!p.rows && !not_counted)
		fprintf(f, "\n%s: request flags: no request counted (a bio-based device has none)\n",
			name);
	else if (!p.rows)
		fprintf(f, "\n%s: request flags: no request counted\n", name);
	if (not_counted)
		fprintf(f, "  INCOMPLETE: %llu completions not counted in these classes: the table of %d flag combinations was full (flags_full)\n",
			not_counted, TS_FLAGS_ENTRIES);
}

struct json_walk {
	struct tj *j;
	int op; /* the op whose object is open, -1: none */
};

static void json_class(void *ctx, int op, int class,
		       const struct class_figures *c)
{
	struct json_walk *w = ctx;
	int k;

	if (w->op != op) {
		if (w->op >= 0)
			tj_end_obj(w->j);
		tj_obj(w->j, ts_op_names[op]);
		w->op = op;
	}
	tj_obj(w->j, class_name(class));
	tj_u64(w->j, "ios", c->ios);
	tj_u64(w->j, "bytes", c->bytes);
	tj_u64(w->j, "queued_ios", c->queued_ios);
	tj_num(w->j, "queue_ms", c->mean[0], 6);
	tj_num(w->j, "service_ms", c->mean[1], 6);
	tj_num(w->j, "total_ms", c->mean[2], 6);
	tj_obj(w->j, "percentiles_ms");
	for (k = 0; k < 3; k++)
		if (k == 1 || c->queued_ios)
			ts_json_pct(w->j, kinds[k], &c->pct[k]);
	tj_end_obj(w->j);
	tj_end_obj(w->j);
}

void ts_flags_json(struct tj *j, const struct ts_flags_table *t,
		   struct ts_flags_disk d)
{
	struct json_walk w = { .j = j, .op = -1 };

	tj_obj(j, "flags");
	walk(t, d, json_class, &w);
	if (w.op >= 0)
		tj_end_obj(j);
	tj_end_obj(j);
}
