/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --by=cgroup|process: per device and direction, what each submitter's
 * requests got (captured at Q): the top N by total time, the rest summed.
 */
#ifndef TS_WHO_H
#define TS_WHO_H

#include <stdio.h>

#include "json.h"
#include "truestat.h"
#include "units.h"

struct ts_who_entry {
	struct ts_who_key key;
	struct ts_who_stats s;
};

/* The BPF table as read at one moment. */
struct ts_who_table {
	int n;
	struct ts_who_entry e[TS_WHO_ENTRIES];
};

/* One span: entries with requests in it, by device, then total time. */
struct ts_who_span {
	enum ts_by by;
	int top;
	double span_s;
	int n;
	struct ts_who_entry e[TS_WHO_ENTRIES];
};

/* @out = @b - @a (@a NULL: zero), the span @span_s, sorted. */
void ts_who_delta(const struct ts_who_table *a, const struct ts_who_table *b,
		  double span_s, struct ts_who_span *out);

/* "/system.slice/x.service", "pid 1234 (fio)", or "not known". */
const char *ts_who_name(const struct ts_who_span *w,
			const struct ts_who_entry *e, char *buf, size_t len);

/* Device @qid's section (nothing when its requests had no submitter). */
void ts_who_print(FILE *f, const struct ts_who_span *w, enum ts_unit units,
		  unsigned int qid, const char *name,
		  unsigned long long not_attributed);

/* Device @qid's "by" object. */
void ts_who_json(struct tj *j, const struct ts_who_span *w, unsigned int qid,
		 unsigned long long not_attributed);

#endif
