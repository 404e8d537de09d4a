/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --by=cgroup|process: per device and direction, what each submitter's
 * requests got (captured at Q): the top N by total time, the rest summed.
 */
#ifndef TS_WHO_H
#define TS_WHO_H

#include <stdbool.h>
#include <stdio.h>

#include "lib/json.h"
#include "truestat.h"
#include "lib/units.h"
#include "flags.h"

struct ts_who_entry {
	struct ts_who_key key;
	struct ts_who_stats s;
	__u32 folded; /* id TS_WHO_FOLDED: how many submitters it holds */
	unsigned int born; /* the read that first saw it (an entry folded and
			    * made again is another entry) */
};

/* Devices and directions that can have a folded entry at once. */
#define TS_WHO_FOLDS 256
#define TS_WHO_ROWS (TS_WHO_ENTRIES + TS_WHO_FOLDS)

/* The BPF table as read at one moment, and the entries folded so far. */
struct ts_who_table {
	int n;
	struct ts_who_entry e[TS_WHO_ROWS];
};

/* One span: entries with requests in it, by device, direction, then total
 * time; a device and direction's folded entry after its others. */
struct ts_who_span {
	enum ts_by by;
	int top;
	double span_s;
	int n;
	struct ts_who_entry e[TS_WHO_ROWS];
};

/*
 * What the reader of the BPF table remembers between reads: when each
 * entry last changed (entries sorted by key), and the folded entries.
 */
struct ts_who_ledger {
	unsigned int reads;
	int nseen;
	struct ts_who_seen {
		struct ts_who_key key;
		__u64 ios;
		unsigned int changed; /* the read that saw its ios change */
		unsigned int born;
	} seen[TS_WHO_ENTRIES];
	int nfolded;
	struct ts_who_entry folded[TS_WHO_FOLDS];
	/* entries never folded (the exporter's named submitters), or NULL */
	bool (*keep)(const void *ctx, const struct ts_who_key *k);
	const void *keep_ctx;
	bool cannot_fold; /* the kernel has no one-step take (before 5.14) */
};

/*
 * After a read of the BPF table into @t (@t->n entries, their born set
 * here): past 3/4 of TS_WHO_ENTRIES, the entries to fold, least recently
 * changed first, none that changed since the read before, down to half.
 * Their indexes into @t go to @pick; returns how many.
 */
int ts_who_pick(struct ts_who_ledger *l, struct ts_who_table *t, int *pick);

/* Entry @e, deleted from the BPF table with these last counts, folded. */
void ts_who_fold(struct ts_who_ledger *l, const struct ts_who_entry *e);

/* @t without the entries at @pick (@n of them), with the folded ones. */
void ts_who_add_folded(const struct ts_who_ledger *l, const int *pick, int n,
		       struct ts_who_table *t);

/* @out = @b - @a (@a NULL: zero), the span @span_s, sorted. */
void ts_who_delta(const struct ts_who_table *a, const struct ts_who_table *b,
		  double span_s, struct ts_who_span *out);

/* "/system.slice/x.service", "pid 1234 (fio)", or "not known". */
const char *ts_who_name(const struct ts_who_span *w,
			const struct ts_who_entry *e, char *buf, size_t len);

/*
 * Whether entry @k is of disk @d (a disk as -F's table knows it too): a
 * slot's next disk has entries of its own.
 */
bool ts_who_of(const struct ts_who_key *k, struct ts_flags_disk d);

/* Disk @d's section (nothing when its requests had no submitter). */
void ts_who_print(FILE *f, const struct ts_who_span *w, enum ts_unit units,
		  struct ts_flags_disk d, const char *name,
		  unsigned long long not_attributed);

/* Disk @d's "by" object. */
void ts_who_json(struct tj *j, const struct ts_who_span *w,
		 struct ts_flags_disk d, unsigned long long not_attributed);

#endif
