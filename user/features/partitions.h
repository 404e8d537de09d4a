/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -p, --partitions: figures per partition of each traced disk and
 * direction, of the requests the kernel counts under that partition (its
 * /proc/diskstats line). Depth and busy time are not kept per partition.
 */
#ifndef TS_PARTITIONS_H
#define TS_PARTITIONS_H

#include <stdbool.h>
#include <stddef.h>

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
 * The name of partition @partno of disk MAJOR:MINOR into @buf (@sys:
 * "/sys"): the directory under the disk's whose "partition" file holds it;
 * "MAJOR:MINOR#N" when none does.
 */
void ts_part_name(const char *sys, unsigned int major, unsigned int minor,
		  unsigned int partno, char *buf, size_t len);

/* Whether @name is in comma-separated @list (NULL: everything is). */
bool ts_part_listed(const char *list, const char *name);

#endif
