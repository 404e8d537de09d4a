/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --slow=MS: one line (or JSON object) per request whose Q -> C reached MS,
 * as it completes, with the process and cgroup that submitted it.
 */
#ifndef TS_SLOW_H
#define TS_SLOW_H

#include <stdbool.h>
#include <stdio.h>

#include "truestat.h"
#include "lib/units.h"

struct ts_slow_printer {
	FILE *f;
	bool json;
	const char *sysroot;	 /* "/sys": device names */
	const char *cgroup_root; /* the cgroup v2 mount, NULL: ids only */
	unsigned long long printed;
	enum ts_unit units; /* --units, or each time in its own */
	bool date;	    /* -t: the date before the time of day */
	bool dm_names;	    /* -N: device-mapper disks by /dev/mapper name */
};

/* The mount point of cgroup v2 (from /proc/self/mounts), or NULL. */
const char *ts_cgroup2_root(void);

/*
 * The path of cgroup v2 id @id under @root ("/system.slice/x.service"),
 * found by the inode numbers of its directories; NULL when there is none
 * (removed since). Remembered, misses too.
 */
const char *ts_cgroup_path(const char *root, __u64 id);

/* Prints @e; the ring buffer callback (ctx: a struct ts_slow_printer). */
int ts_slow_print(void *ctx, const struct ts_slow_event *e);

#endif
