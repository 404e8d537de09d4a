// SPDX-License-Identifier: GPL-2.0
/*
 * -p: the span's figures per partition, from two reads of the part_stats
 * map and the report of the disks they are on.
 */
#include <stdlib.h>
#include <string.h>

#include "report_parts.h"

static const struct ts_part_stats *find_entry(const struct ts_part_table *t,
					      const struct ts_part_key *key)
{
	int i;

	for (i = 0; t && i < t->n; i++)
		if (t->e[i].key.slot_part == key->slot_part &&
		    t->e[i].key.claimed_ns == key->claimed_ns)
			return &t->e[i].s;
	return NULL;
}

/*
 * The disk of report @r whose claim of slot @qid is @claimed_ns, or NULL
 * (a disk that had the slot before or after: its rows are not this one's).
 */
static const struct ts_dev_report *claim_dev(const struct ts_report *r,
					     unsigned int qid,
					     __u64 claimed_ns)
{
	int i;

	for (i = 0; i < r->ndev; i++)
		if (r->dev[i].qid == qid && r->dev[i].claimed_ns == claimed_ns)
			return &r->dev[i];
	return NULL;
}

/* Partition direction @o as the device's counters are laid out. */
static struct ts_op_stats op_stats_of(const struct ts_part_op *o)
{
	struct ts_op_stats s = {
		.ios = o->ios, .bytes = o->bytes, .merges = o->merges,
		.missed = o->missed, .missed_bytes = o->missed_bytes,
		.queued_ios = o->queued_ios,
		.queue_ns = o->queue_ns, .service_ns = o->service_ns,
		.total_ns = o->total_ns,
	};

	return s;
}

/* Row @row's figures, @a (NULL: zeros) to @b. */
static void row_figures(const struct ts_part_stats *a,
			const struct ts_part_stats *b, double span_s,
			struct ts_part_row *row)
{
	static const struct ts_part_stats zero;
	struct ts_op_stats sa = { 0 }, sb = { 0 }, x, y;
	int i;

	if (!a)
		a = &zero;
	for (i = 0; i < TS_NR_OPS; i++) {
		x = op_stats_of(&a->op[i]);
		y = op_stats_of(&b->op[i]);
		ts_op_figures_of(&x, &y, span_s, &row->op[i]);
		if (row->op[i].ios || row->op[i].missed)
			row->nops_active++;
		ts_op_stats_add(&sa, &x);
		ts_op_stats_add(&sb, &y);
	}
	ts_op_figures_of(&sa, &sb, span_s, &row->all);
}

static int by_disk_and_number(const void *x, const void *y)
{
	const struct ts_part_row *a = x, *b = y;

	if (a->qid != b->qid)
		return a->qid < b->qid ? -1 : 1;
	if (a->claimed_ns != b->claimed_ns)
		return a->claimed_ns < b->claimed_ns ? -1 : 1;
	return (int)a->partno - (int)b->partno;
}

void ts_part_delta(const struct ts_part_table *a, const struct ts_part_table *b,
		   const struct ts_report *r, const char *sys,
		   const char *list, struct ts_part_span *out)
{
	const struct ts_part_key *key;
	const struct ts_dev_report *d;
	struct ts_part_row *row;
	int i;

	out->n = 0;
	for (i = 0; i < b->n; i++) {
		key = &b->e[i].key;
		d = claim_dev(r, key->slot_part >> 8, key->claimed_ns);
		if (!d)
			continue;
		row = &out->row[out->n];
		memset(row, 0, sizeof(*row));
		row->qid = d->qid;
		row->claimed_ns = d->claimed_ns;
		row->incomplete = d->events[TS_EV_PART_FULL] > 0;
		row->partno = key->slot_part & 0xff;
		ts_part_name(sys, d->major, d->minor, row->partno, row->name,
			  sizeof(row->name));
		if (!ts_part_listed(list, row->name))
			continue;
		row_figures(find_entry(a, key), &b->e[i].s, r->span_s, row);
		out->n++;
	}
	qsort(out->row, out->n, sizeof(out->row[0]), by_disk_and_number);
}
