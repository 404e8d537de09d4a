// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/names.h"
#include "slow.h"
#include "who.h"

/* @e's entry in @t: the same key, made at the same read. */
static const struct ts_who_entry *find(const struct ts_who_table *t,
				       const struct ts_who_entry *e)
{
	int i;

	for (i = 0; t && i < t->n; i++)
		if (!memcmp(&t->e[i].key, &e->key, sizeof(e->key)) &&
		    t->e[i].born == e->born)
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
	d->missed -= a->missed;
	for (i = 0; i < TS_WHO_SLOTS; i++)
		d->total[i] -= a->total[i];
}

static void add(struct ts_who_stats *sum, const struct ts_who_stats *x)
{
	sum->ios += x->ios;
	sum->bytes += x->bytes;
	sum->queued_ios += x->queued_ios;
	sum->queue_ns += x->queue_ns;
	sum->service_ns += x->service_ns;
	sum->total_ns += x->total_ns;
	sum->missed += x->missed;
}

static bool is_folded(const struct ts_who_entry *e)
{
	return e->key.id == TS_WHO_FOLDED;
}

/* Device, direction, then total time; a folded entry after the others. */
static int by_device_then_time(const void *x, const void *y)
{
	const struct ts_who_entry *a = x, *b = y;

	if (a->key.qid != b->key.qid)
		return a->key.qid < b->key.qid ? -1 : 1;
	if (a->key.claimed_ns != b->key.claimed_ns)
		return a->key.claimed_ns < b->key.claimed_ns ? -1 : 1;
	if (a->key.op != b->key.op)
		return a->key.op < b->key.op ? -1 : 1;
	if (is_folded(a) != is_folded(b))
		return is_folded(a) ? 1 : -1;
	if (a->s.total_ns != b->s.total_ns)
		return a->s.total_ns > b->s.total_ns ? -1 : 1;
	return a->key.id < b->key.id ? -1 : a->key.id > b->key.id;
}

/* Whether @a and @b are of one disk's claim and direction. */
static bool same_place(const struct ts_who_key *a, const struct ts_who_key *b)
{
	return a->qid == b->qid && a->claimed_ns == b->claimed_ns &&
	       a->dev == b->dev && a->op == b->op;
}

/* The folded entry of @e's device and direction in @w, or NULL. */
static struct ts_who_entry *folded_of(struct ts_who_span *w,
				      const struct ts_who_entry *e)
{
	int i;

	for (i = 0; i < w->n; i++)
		if (is_folded(&w->e[i]) && same_place(&w->e[i].key, &e->key))
			return &w->e[i];
	return NULL;
}

void ts_who_delta(const struct ts_who_table *a, const struct ts_who_table *b,
		  double span_s, struct ts_who_span *out)
{
	const struct ts_who_entry *old;
	struct ts_who_entry *f;
	int i, n = 0;

	out->span_s = span_s;
	out->n = b->n;
	for (i = 0; i < b->n; i++) {
		out->e[i] = b->e[i];
		old = find(a, &b->e[i]);
		if (old) {
			subtract(&out->e[i].s, &old->s);
			out->e[i].folded -= old->folded;
		}
	}
	/* folded since @a: its folded entry holds what it had at @a too */
	for (i = 0; a && i < a->n; i++)
		if (!find(b, &a->e[i]) && (f = folded_of(out, &a->e[i])))
			subtract(&f->s, &a->e[i].s);
	for (i = 0; i < out->n; i++)
		if (out->e[i].s.ios || out->e[i].s.missed)
			out->e[n++] = out->e[i];
	out->n = n;
	qsort(out->e, out->n, sizeof(out->e[0]), by_device_then_time);
}

static int by_key(const void *x, const void *y)
{
	return memcmp(x, y, sizeof(struct ts_who_key));
}

static int by_changed(const void *x, const void *y)
{
	const struct ts_who_seen *a = x, *b = y;

	return a->changed < b->changed ? -1 : a->changed > b->changed;
}

/* The folded entry of @k's device and direction, made if room; or NULL. */
static struct ts_who_entry *fold_slot(struct ts_who_ledger *l,
				      const struct ts_who_key *k, bool make)
{
	struct ts_who_entry *f;
	int i;

	for (i = 0; i < l->nfolded; i++)
		if (same_place(&l->folded[i].key, k))
			return &l->folded[i];
	if (!make || l->nfolded == TS_WHO_FOLDS)
		return NULL;
	f = &l->folded[l->nfolded++];
	memset(f, 0, sizeof(*f));
	f->key = *k;
	f->key.id = TS_WHO_FOLDED;
	return f;
}

/*
 * Notes when each of @t's entries was made and last changed (a key not in
 * the last read's is a new entry); the ledger's seen, re-made.
 */
static void note_changes(struct ts_who_ledger *l, struct ts_who_table *t)
{
	static struct ts_who_seen now[TS_WHO_ENTRIES];
	const struct ts_who_seen *was;
	int i, n = 0;

	l->reads++;
	for (i = 0; i < t->n && n < TS_WHO_ENTRIES; i++, n++) {
		now[n] = (struct ts_who_seen){ t->e[i].key, t->e[i].s.ios,
					       l->reads, l->reads };
		was = bsearch(&now[n].key, l->seen, l->nseen,
			      sizeof(l->seen[0]), by_key);
		if (was)
			now[n].born = was->born;
		if (was && was->ios == now[n].ios)
			now[n].changed = was->changed;
		t->e[i].born = now[n].born;
	}
	qsort(now, n, sizeof(now[0]), by_key);
	memcpy(l->seen, now, n * sizeof(now[0]));
	l->nseen = n;
}

int ts_who_pick(struct ts_who_ledger *l, struct ts_who_table *t, int *pick)
{
	static struct ts_who_seen idle[TS_WHO_ENTRIES];
	int i, j, n = 0, want = t->n - TS_WHO_ENTRIES / 2, picked = 0;

	note_changes(l, t);
	if (t->n <= TS_WHO_ENTRIES * 3 / 4)
		return 0;
	for (i = 0; i < l->nseen; i++)
		if (l->seen[i].changed < l->reads && l->seen[i].key.id &&
		    !(l->keep && l->keep(l->keep_ctx, &l->seen[i].key)) &&
		    fold_slot(l, &l->seen[i].key, true))
			idle[n++] = l->seen[i];
	qsort(idle, n, sizeof(idle[0]), by_changed);
	for (i = 0; i < n && picked < want; i++)
		for (j = 0; j < t->n; j++)
			if (!by_key(&t->e[j].key, &idle[i].key)) {
				pick[picked++] = j;
				break;
			}
	return picked;
}

/* @e's counts and histogram added to @sum's. */
static void add_entry(struct ts_who_entry *sum, const struct ts_who_entry *e)
{
	int i;

	add(&sum->s, &e->s);
	for (i = 0; i < TS_WHO_SLOTS; i++)
		sum->s.total[i] += e->s.total[i];
}

void ts_who_fold(struct ts_who_ledger *l, const struct ts_who_entry *e)
{
	struct ts_who_entry *f = fold_slot(l, &e->key, true);
	struct ts_who_seen *was;

	if (!f)
		return;
	add_entry(f, e);
	f->folded++;
	/* gone from the table: made again, it is a new entry */
	was = bsearch(&e->key, l->seen, l->nseen, sizeof(l->seen[0]), by_key);
	if (!was)
		return;
	l->nseen--;
	memmove(was, was + 1, (l->seen + l->nseen - was) * sizeof(*was));
}

void ts_who_add_folded(const struct ts_who_ledger *l, const int *pick, int n,
		       struct ts_who_table *t)
{
	static bool gone[TS_WHO_ROWS];
	int i, k = 0;

	memset(gone, 0, sizeof(gone));
	for (i = 0; i < n; i++)
		gone[pick[i]] = true;
	for (i = 0; i < t->n; i++)
		if (!gone[i])
			t->e[k++] = t->e[i];
	for (i = 0; i < l->nfolded && k < TS_WHO_ROWS; i++)
		t->e[k++] = l->folded[i];
	t->n = k;
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
	const char *root, *path;

	if (!e->key.id)
		return "not known";
	if (w->by == TS_BY_PROCESS) {
		snprintf(buf, len, "pid %llu (%.16s)",
			 (unsigned long long)e->key.id, e->s.comm);
		return buf;
	}
	root = ts_cgroup2_root();
	path = root ? ts_cgroup_path(root, e->key.id, buf, len) : NULL;
	if (!path)
		snprintf(buf, len, "(removed)");
	return buf;
}

bool ts_who_of(const struct ts_who_key *k, struct ts_flags_disk d)
{
	if (k->qid == d.qid && k->claimed_ns == d.claimed_ns)
		return true;
	return k->dev == d.dev && k->claimed_ns > d.claimed_ns &&
	       k->claimed_ns <= d.last_claim_ns;
}

/*
 * Disk @d's rows of direction @op into @out (returns how many): a
 * submitter's entries of its lives summed into one, by total time, the
 * folded ones (one row) last.
 */
static int rows_of(const struct ts_who_span *w, struct ts_flags_disk d, int op,
		   struct ts_who_entry *out)
{
	int i, j, n = 0;

	for (i = 0; i < w->n; i++) {
		const struct ts_who_entry *e = &w->e[i];

		if (!ts_who_of(&e->key, d) || (int)e->key.op != op)
			continue;
		for (j = 0; j < n && out[j].key.id != e->key.id; j++)
			;
		if (j < n) {
			add_entry(&out[j], e);
			out[j].folded += e->folded;
			continue;
		}
		out[n] = *e;
		out[n++].key = (struct ts_who_key){
			.id = e->key.id, .claimed_ns = d.claimed_ns,
			.dev = d.dev, .qid = d.qid, .op = op };
	}
	qsort(out, n, sizeof(out[0]), by_device_then_time);
	return n;
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
		p->w->top, "OP", "IOS", "MiB/s", q, s, t, p99,
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
		ts_mib_per_s(s->bytes, p->w->span_s));
	for (k = 0; k < 4; k++)
		ts_tfmt_put(p->f, &p->t, v[k], width[k]);
	fprintf(p->f, "  %s\n", name);
}

/*
 * Rows @e[0, n) of a device and direction: how many have rows of their
 * own (the top, never the folded entry); the rest summed in @other,
 * returning how many submitters that is (0: no "other" row).
 */
static int other_of(const struct ts_who_span *w, const struct ts_who_entry *e,
		    int n, int *shown, struct ts_who_stats *other)
{
	int i, subs = 0;

	*shown = n && is_folded(&e[n - 1]) ? n - 1 : n;
	if (*shown > w->top)
		*shown = w->top;
	memset(other, 0, sizeof(*other));
	for (i = *shown; i < n; i++) {
		add(other, &e[i].s);
		subs += is_folded(&e[i]) ? (int)e[i].folded : 1;
	}
	return subs ? subs : *shown < n;
}

/* A disk's rows of one direction (rows_of): one at a time, not thread-safe. */
static struct ts_who_entry rows[TS_WHO_ROWS];

/* Each direction's top submitters of disk @d, the rest as "other". */
static void walk_rows(struct who_table *p, struct ts_flags_disk d)
{
	const struct ts_who_span *w = p->w;
	const char *kind = w->by == TS_BY_CGROUP ? "cgroup" : "process";
	struct ts_who_stats other;
	int op, n, i, shown, subs;
	char buf[300];

	for (op = 0; op < TS_NR_OPS; op++) {
		n = rows_of(w, d, op, rows);
		subs = other_of(w, rows, n, &shown, &other);
		for (i = 0; i < shown; i++)
			print_row(p, op, &rows[i].s, p99_ms(&rows[i].s),
				  ts_who_name(w, &rows[i], buf, sizeof(buf)));
		if (!subs)
			continue;
		snprintf(buf, sizeof(buf), "other (%d %s%s)", subs, kind,
			 subs == 1 ? "" : w->by == TS_BY_CGROUP ? "s" : "es");
		print_row(p, op, &other, NAN, buf);
	}
}

/* Disk @d's requests whose completion was never seen, over its rows. */
static unsigned long long missed_of(const struct ts_who_span *w,
				    struct ts_flags_disk d)
{
	unsigned long long n = 0;
	int i;

	for (i = 0; i < w->n; i++)
		if (ts_who_of(&w->e[i].key, d))
			n += w->e[i].s.missed;
	return n;
}

void ts_who_print(FILE *f, const struct ts_who_span *w, enum ts_unit units,
		  struct ts_flags_disk d, const char *name,
		  unsigned long long not_attributed)
{
	struct who_table p = { .w = w, .name = name, .min_ms = INFINITY };
	unsigned long long missed = missed_of(w, d);

	walk_rows(&p, d);
	p.t = ts_tfmt_pick(p.min_ms, units);
	p.f = f;
	walk_rows(&p, d);
	if (p.rows && missed)
		fprintf(f, "  %llu of these requests completed unseen: not in IOS (each row's missed in -j)\n",
			missed);
	if (p.rows && not_attributed)
		fprintf(f, "  %llu requests not attributed: the table of %d submitters was full\n",
			not_attributed, TS_WHO_ENTRIES);
}

static void json_row(struct tj *j, const struct ts_who_span *w, int op,
		     const struct ts_who_stats *s)
{
	tj_str(j, "op", ts_op_names[op]);
	tj_u64(j, "ios", s->ios);
	tj_u64(j, "missed", s->missed);
	tj_u64(j, "bytes", s->bytes);
	tj_num(j, "mib_per_s", ts_mib_per_s(s->bytes, w->span_s), 3);
	tj_num(j, "queue_ms", mean_ms(s->queue_ns, s->queued_ios), 6);
	tj_num(j, "service_ms", mean_ms(s->service_ns, s->ios), 6);
	tj_num(j, "total_ms", mean_ms(s->total_ns, s->ios), 6);
}

static void json_rows(struct tj *j, const struct ts_who_span *w,
		      struct ts_flags_disk d, int op)
{
	struct ts_who_stats other;
	int n, i, shown, subs;
	char buf[300];

	n = rows_of(w, d, op, rows);
	subs = other_of(w, rows, n, &shown, &other);
	for (i = 0; i < shown; i++) {
		tj_obj(j, NULL);
		json_row(j, w, op, &rows[i].s);
		tj_num(j, "total_p99_ms", p99_ms(&rows[i].s), 6);
		tj_u64(j, "id", rows[i].key.id);
		if (rows[i].key.id)
			tj_str(j, "name", ts_who_name(w, &rows[i], buf, sizeof(buf)));
		else
			tj_null(j, "name");
		tj_end_obj(j);
	}
	if (!subs)
		return;
	tj_obj(j, NULL);
	json_row(j, w, op, &other);
	tj_u64(j, "others", subs);
	tj_end_obj(j);
}

void ts_who_json(struct tj *j, const struct ts_who_span *w,
		 struct ts_flags_disk d, unsigned long long not_attributed)
{
	int op;

	tj_obj(j, "by");
	tj_str(j, "kind", w->by == TS_BY_CGROUP ? "cgroup" : "process");
	tj_u64(j, "top", w->top);
	tj_u64(j, "not_attributed", not_attributed);
	tj_arr(j, "rows");
	for (op = 0; op < TS_NR_OPS; op++)
		json_rows(j, w, d, op);
	tj_end_arr(j);
	tj_end_obj(j);
}
