// SPDX-License-Identifier: GPL-2.0
/* The side tables: submitters (--by), flag classes (-F), partitions (-p). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "features/partitions.h"

static struct ts_who_ledger *who_ledger(struct ts_tracer *t)
{
	if (!t->who)
		t->who = calloc(1, sizeof(*t->who));
	return t->who;
}

void ts_tracer_who_keep(struct ts_tracer *t,
			bool (*keep)(const void *ctx, const struct ts_who_key *k),
			const void *ctx)
{
	if (!who_ledger(t))
		return;
	t->who->keep = keep;
	t->who->keep_ctx = ctx;
}

/*
 * Deletes @e from the table, its counts as they were then in @e: 0, or -1
 * on failure, or 1 where the kernel cannot take an entry in one step
 * (lookup-and-delete on a hash came with 5.14). Two steps would lose a
 * request counted between them, unseen by who_fold_races (the entry is
 * still there when the program looks again): there the table is not
 * folded, and past its 1024 entries requests count in who_table_full.
 */
static int take_who(int fd, struct ts_who_entry *e)
{
	if (!bpf_map_lookup_and_delete_elem(fd, &e->key, &e->s))
		return 0;
	if (errno == EINVAL || errno == 524 /* ENOTSUPP */ ||
	    errno == EOPNOTSUPP)
		return 1;
	return -1;
}

void ts_tracer_read_who(struct ts_tracer *t, struct ts_who_table *out)
{
	int fd = bpf_map__fd(t->skel->maps.by_who);
	/* no device has queue id ~0: its next key is the first */
	struct ts_who_key key = { .qid = 0xffff }, next;
	static int pick[TS_WHO_ENTRIES];
	int i, n, taken, rc;

	out->n = 0;
	while (out->n < TS_WHO_ENTRIES &&
	       !bpf_map_get_next_key(fd, &key, &next)) {
		out->e[out->n].key = next;
		out->e[out->n].folded = 0;
		if (!bpf_map_lookup_elem(fd, &next, &out->e[out->n].s))
			out->n++;
		key = next;
	}
	if (!who_ledger(t))
		return;
	n = t->who->cannot_fold ? 0 : ts_who_pick(t->who, out, pick);
	for (i = 0, taken = 0; i < n; i++) {
		rc = take_who(fd, &out->e[pick[i]]);
		if (rc > 0) {
			t->who->cannot_fold = true;
			break;
		}
		if (rc)
			continue;
		ts_who_fold(t->who, &out->e[pick[i]]);
		pick[taken++] = pick[i];
	}
	ts_who_add_folded(t->who, pick, taken, out);
}

void ts_tracer_read_flags(struct ts_tracer *t, struct ts_flags_table *out)
{
	int fd = bpf_map__fd(t->skel->maps.flag_stats);
	/* no device has queue id ~0: its next key is the first */
	struct ts_flags_key key = { .qid = ~0U }, next;

	/* entries are never deleted: the walk sees each once */
	out->n = 0;
	while (out->n < TS_FLAGS_ENTRIES &&
	       !bpf_map_get_next_key(fd, &key, &next)) {
		out->e[out->n].key = next;
		if (!bpf_map_lookup_elem(fd, &next, &out->e[out->n].s))
			out->n++;
		key = next;
	}
}

void ts_tracer_read_parts(struct ts_tracer *t, struct ts_part_table *out)
{
	int fd = bpf_map__fd(t->skel->maps.part_stats);
	struct ts_part_key key, next;
	void *prev = NULL; /* NULL: the first key */

	out->n = 0;
	while (out->n < TS_PART_MAX && !bpf_map_get_next_key(fd, prev, &next)) {
		out->e[out->n].key = next;
		if (!bpf_map_lookup_elem(fd, &next, &out->e[out->n].s))
			out->n++;
		key = next;
		prev = &key;
	}
}

void ts_tracer_fold_who(struct ts_tracer *t)
{
	static struct ts_who_table scratch;

	ts_tracer_read_who(t, &scratch);
}
