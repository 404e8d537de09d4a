/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -p, --partitions: figures per partition of each traced disk and
 * direction, of the requests the kernel counts under that partition (its
 * /proc/diskstats line). Depth and busy time are not kept per partition.
 */
#ifndef TS_PARTITIONS_H
#define TS_PARTITIONS_H

#include <stdbool.h>

#include "core/report.h"
#include "truestat.h"

struct ts_part_entry {
	struct ts_part_key key; /* slot, partno and the slot's claim */
	struct ts_part_stats s;
};

/* The part_stats map as read at one moment. */
struct ts_part_table {
	int n;
	struct ts_part_entry e[TS_PART_MAX];
};

/* One partition's figures over a span. */
struct ts_part_row {
	char name[64];
	unsigned int qid, partno;
	__u64 claimed_ns; /* its disk's claim of the slot (ts_dev_report) */
	bool incomplete; /* requests of its disk not counted: the table full */
	int nops_active;
	struct ts_op_figures op[TS_NR_OPS];
	struct ts_op_figures all;
};

struct ts_part_span {
	int n;
	struct ts_part_row row[TS_PART_MAX];
};

/*
 * -p=LIST: 0 when each comma-separated name is a partition, else -1 with
 * why in @err.
 */
int ts_part_check(const char *list, char *err, int errlen);

/*
 * -p=LIST with -d: says on stderr which listed partitions are on a disk not
 * among the @n traced ones in @kdevs (major << 20 | minor); @n 0: all are.
 */
void ts_part_say_untraced(const char *list, const unsigned int *kdevs, int n);

/*
 * The span from @a (NULL: from the start) to @b for the disks of report
 * @r, named from sysfs (@sys: "/sys"), only those @list names (NULL: all).
 */
void ts_part_delta(const struct ts_part_table *a, const struct ts_part_table *b,
		   const struct ts_report *r, const char *sys,
		   const char *list, struct ts_part_span *out);

#endif
