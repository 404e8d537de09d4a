/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --flags: completions per device, op and request-flag class (the flags
 * the device saw), with their queue, service and total time.
 */
#ifndef TS_FLAGS_H
#define TS_FLAGS_H

#include <stdio.h>

#include "truestat.h"
#include "lib/json.h"
#include "lib/units.h"

struct ts_flags_entry {
	struct ts_flags_key key;
	struct ts_flags_stats s;
};

/* The flag_stats map as read at one moment, or a span between two. */
struct ts_flags_table {
	int n;
	struct ts_flags_entry e[TS_FLAGS_ENTRIES];
};

extern const char *const ts_flag_class_names[TS_NR_FLAG_CLASSES];

/* @out = @b - @a, entry by entry (@a NULL: from zero). */
void ts_flags_delta(const struct ts_flags_table *a,
		    const struct ts_flags_table *b, struct ts_flags_table *out);

/*
 * A disk: its slot and its claim of the slot (ts_dev_report's); a gone
 * disk's row in the totals also sums the later gone lives of its number,
 * @dev, claimed up to @last_claim_ns (0: none).
 */
struct ts_flags_disk {
	unsigned int qid;
	__u64 claimed_ns;
	unsigned int dev;
	__u64 last_claim_ns;
};

/*
 * Class @class of direction @op of disk @d in @t into @out: the sum of its
 * claim's combinations that have its bit (for TS_FLAG_NONE: that have
 * none; for TS_NR_FLAG_CLASSES: all of them, each request once).
 */
void ts_flags_class(const struct ts_flags_table *t, struct ts_flags_disk d,
		    int op, int class, struct ts_flags_stats *out);

/*
 * The class rows of disk @d: count, bytes, mean and percentiles; then, if
 * @not_counted (its flags_full), that the rows are short of that many.
 */
void ts_flags_print(FILE *f, const struct ts_flags_table *t,
		    enum ts_unit units, struct ts_flags_disk d,
		    const char *name, unsigned long long not_counted);

/* The "flags" object of disk @d in the JSON output. */
void ts_flags_json(struct tj *j, const struct ts_flags_table *t,
		   struct ts_flags_disk d);

#endif
