/* SPDX-License-Identifier: GPL-2.0 */
/* -p: a report's rows per partition (from the part_stats map's reads). */
#ifndef TS_REPORT_PARTS_H
#define TS_REPORT_PARTS_H

#include "features/partitions.h"
#include "report.h"

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
 * The span from @a (NULL: from the start) to @b for the disks of report
 * @r, named from sysfs (@sys: "/sys"), only those @list names (NULL: all).
 */
void ts_part_delta(const struct ts_part_table *a, const struct ts_part_table *b,
		   const struct ts_report *r, const char *sys,
		   const char *list, struct ts_part_span *out);

#endif
