// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "slow.h"
#include "who.h"

static const struct ts_who_entry *find(const struct ts_who_table *t,
				       const struct ts_who_key *k)
{
	int i;

	for (i = 0; t && i < t->n; i++)
		if (!memcmp(&t->e[i].key, k, sizeof(*k)))
			return &t->e[i];
	return NULL;
}

static void subtract(struct ts_who_stats *d, const struct ts_who_stats *a)
{
	int i;

	d->ios -= a->ios;
	d->bytes -= a->bytes;
	d->queued_ios -= a->queued_ios;
	d->queue_ns -= a->queue_ns;
	d->service_ns -= a->service_ns;
	d->total_ns -= a->total_ns;
	for (i = 0; i < TS_WHO_SLOTS; i++)
		d->total[i] -= a->total[i];
}

static int by_device_then_time(const void *x, const void *y)
{
	const struct ts_who_entry *a = x, *b = y;

	if (a->key.qid != b->key.qid)
		return a->key.qid < b->key.qid ? -1 : 1;
	if (a->s.total_ns != b->s.total_ns)
		return a->s.total_ns > b->s.total_ns ? -1 : 1;
	return a->key.id < b->key.id ? -1 : a->key.id > b->key.id;
}

void ts_who_delta(const struct ts_who_table *a, const struct ts_who_table *b,
		  double span_s, struct ts_who_span *out)
{
	const struct ts_who_entry *old;
	int i;

	out->n = 0;
	out->span_s = span_s;
	for (i = 0; i < b->n; i++) {
		struct ts_who_entry *d = &out->e[out->n];

		*d = b->e[i];
		old = find(a, &d->key);
		if (old)
			subtract(&d->s, &old->s);
		if (d->s.ios)
			out->n++;
	}
	qsort(out->e, out->n, sizeof(out->e[0]), by_device_then_time);
}

static double mean_ms(__u64 ns, __u64 n)
{
	return n ? ns / 1e6 / n : NAN;
}

/* The upper edge of the bucket that holds the p99 (within 25%). */
static double p99_ms(const struct ts_who_stats *s)
{
	__u64 seen = 0;
	int b;

	for (b = 0; b < TS_WHO_SLOTS; b++) {
		seen += s->total[b];
		if (seen && seen >= 0.99 * s->ios)
			return b + 1 < TS_WHO_SLOTS ? ts_who_lower(b + 1) / 1e6 :
						      INFINITY;
	}
	return NAN;
}

const char *ts_who_name(const struct ts_who_span *w,
			const struct ts_who_entry *e, char *buf, size_t len)
{
	static const char *root;
	const char *path;

	if (!e->key.id)
		return "not known";
	if (w->by == TS_BY_PROCESS) {
		snprintf(buf, len, "pid %llu (%.16s)",
			 (unsigned long long)e->key.id, e->s.comm);
		return buf;
	}
	if (!root)
		root = ts_cgroup2_root();
	path = root ? ts_cgroup_path(root, e->key.id) : NULL;
	snprintf(buf, len, "%s", path ? path : "(removed)");
	return buf;
}

/* Device @qid's rows of direction @op: [*first, *first + return). */
static int rows_of(const struct ts_who_span *w, unsigned int qid, int op,
		   int *first)
{
	int i, n = 0;

	*first = -1;
	for (i = 0; i < w->n; i++) {
		if (w->e[i].key.qid != qid || (int)w->e[i].key.op != op)
			continue;
		if (*first < 0)
			*first = i;
		n++;
	}
	return n;
}

static void add(struct ts_who_stats *sum, const struct ts_who_stats *x)
{
	sum->ios += x->ios;
	sum->bytes += x->bytes;
	sum->queued_ios += x->queued_ios;
	sum->queue_ns += x->queue_ns;
	sum->service_ns += x->service_ns;
	sum->total_ns += x->total_ns;
}

/* A device's table, printed (@f) or only looked at for its unit (@f NULL). */
struct who_table {
	FILE *f;
	const struct ts_who_span *w;
	const char *name; /* the device's */
	struct ts_tfmt t;
	double min_ms;
	int rows;
};

static void print_header(struct who_table *p)
{
	const char *u = ts_tfmt_unit(&p->t);
	char q[16], s[16], t[16], p99[16];

	snprintf(q, sizeof(q), "QUEUE_%s", u);
	snprintf(s, sizeof(s), "SERVICE_%s", u);
	snprintf(t, sizeof(t), "TOTAL_%s", u);
	snprintf(p99, sizeof(p99), "P99_%s", u);
	fprintf(p->f, "\n%s: by %s (captured at Q), the %d with the most total time\n  %-6s %9s %8s %9s %10s %9s %8s  %s\n",
		p->name, p->w->by == TS_BY_CGROUP ? "cgroup" : "process",
		p->w->top, "OP", "IOS", "MB/s", q, s, t, p99,
		p->w->by == TS_BY_CGROUP ? "CGROUP" : "PROCESS");
}

static void print_row(struct who_table *p, int op,
		      const struct ts_who_stats *s, double p99,
		      const char *name)
{
	const double v[] = { mean_ms(s->queue_ns, s->queued_ios),
			     mean_ms(s->service_ns, s->ios),
			     mean_ms(s->total_ns, s->ios), p99 };
	static const int width[] = { 9, 10, 9, 8 };
	int k;

	if (!p->f) {
		for (k = 0; k < 4; k++)
			ts_tmin_see(&p->min_ms, v[k]);
		return;
	}
	if (!p->rows++)
		print_header(p);
	fprintf(p->f, "  %-6s %9llu %8.2f", ts_op_names[op],
		(unsigned long long)s->ios,
		p->w->span_s > 0 ? s->bytes / p->w->span_s / 1e6 : 0);
	for (k = 0; k < 4; k++)
		ts_tfmt_put(p->f, &p->t, v[k], width[k]);
	fprintf(p->f, "  %s\n", name);
}

/* Each direction's top submitters of device @qid, the rest as "other". */
static void walk_rows(struct who_table *p, unsigned int qid)
{
	const struct ts_who_span *w = p->w;
	const char *kind = w->by == TS_BY_CGROUP ? "cgroup" : "process";
	int op, first, n, i;
	char buf[300];

	for (op = 0; op < TS_NR_OPS; op++) {
		n = rows_of(w, qid, op, &first);
		for (i = first; i < first + n && i < first + w->top; i++)
			print_row(p, op, &w->e[i].s, p99_ms(&w->e[i].s),
				  ts_who_name(w, &w->e[i], buf, sizeof(buf)));
		if (n > w->top) {
			struct ts_who_stats other = { 0 };

			for (i = first + w->top; i < first + n; i++)
				add(&other, &w->e[i].s);
			snprintf(buf, sizeof(buf), "other (%d %ss)", n - w->top,
				 kind);
			print_row(p, op, &other, NAN, buf);
		}
	}
}

void ts_who_print(FILE *f, const struct ts_who_span *w, enum ts_unit units,
		  unsigned int qid, const char *name,
		  unsigned long long not_attributed)
{
	struct who_table p = { .w = w, .name = name, .min_ms = INFINITY };

	walk_rows(&p, qid);
	p.t = ts_tfmt_pick(p.min_ms, units);
	p.f = f;
	walk_rows(&p, qid);
	if (p.rows && not_attributed)
		fprintf(f, "  %llu requests not attributed: the table of %d submitters was full\n",
			not_attributed, TS_WHO_ENTRIES);
}

static void json_row(struct tj *j, const struct ts_who_span *w, int op,
		     const struct ts_who_stats *s)
{
	tj_str(j, "op", ts_op_names[op]);
	tj_u64(j, "ios", s->ios);
	tj_u64(j, "bytes", s->bytes);
	tj_num(j, "mb_per_s", w->span_s > 0 ? s->bytes / w->span_s / 1e6 : 0, 3);
	tj_num(j, "queue_ms", mean_ms(s->queue_ns, s->queued_ios), 6);
	tj_num(j, "service_ms", mean_ms(s->service_ns, s->ios), 6);
	tj_num(j, "total_ms", mean_ms(s->total_ns, s->ios), 6);
}

static void json_rows(struct tj *j, const struct ts_who_span *w,
		      unsigned int qid, int op)
{
	struct ts_who_stats other = { 0 };
	int first, n, i;
	char buf[300];

	n = rows_of(w, qid, op, &first);
	for (i = first; n && i < first + n; i++) {
		if (i >= first + w->top) {
			add(&other, &w->e[i].s);
			continue;
		}
		tj_obj(j, NULL);
		json_row(j, w, op, &w->e[i].s);
		tj_num(j, "total_p99_ms", p99_ms(&w->e[i].s), 6);
		tj_u64(j, "id", w->e[i].key.id);
		if (w->e[i].key.id)
			tj_str(j, "name", ts_who_name(w, &w->e[i], buf, sizeof(buf)));
		else
			tj_null(j, "name");
		tj_end_obj(j);
	}
	if (n <= w->top)
		return;
	tj_obj(j, NULL);
	json_row(j, w, op, &other);
	tj_u64(j, "others", n - w->top);
	tj_end_obj(j);
}

void ts_who_json(struct tj *j, const struct ts_who_span *w, unsigned int qid,
		 unsigned long long not_attributed)
{
	int op;

	tj_obj(j, "by");
	tj_str(j, "kind", w->by == TS_BY_CGROUP ? "cgroup" : "process");
	tj_u64(j, "top", w->top);
	tj_u64(j, "not_attributed", not_attributed);
	tj_arr(j, "rows");
	for (op = 0; op < TS_NR_OPS; op++)
		json_rows(j, w, qid, op);
	tj_end_arr(j);
	tj_end_obj(j);
}
