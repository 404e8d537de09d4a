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

#define TS_SLOW_NAMES 16

struct ts_slow_name {
	__u32 dev; /* major << 20 | minor */
	char name[64];
};

struct ts_slow_printer {
	FILE *f;
	bool json;
	const char *sysroot;	 /* "/sys": device names */
	const char *cgroup_root; /* the cgroup v2 mount, NULL: ids only */
	unsigned long long printed;
	enum ts_unit units; /* --units, or each time in its own */
	bool date;	    /* -t: the date before the time of day */
	bool dm_names;	    /* -N: device-mapper disks by /dev/mapper name */
	/* the names of the devices seen this second */
	struct ts_slow_name names[TS_SLOW_NAMES];
	int nnames;
	long long real_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	long long second;	  /* of second_str */
	char second_str[32];	  /* its date and time, to the dot */
	/* lines printed, per device */
	struct {
		__u32 dev;
		unsigned long long n;
	} logged[TS_MAX_DEVS];
	int ndevs;
};

/* The mount point of cgroup v2 (from /proc/self/mounts), or NULL. */
const char *ts_cgroup2_root(void);

/*
 * The path of cgroup v2 id @id under @root ("/system.slice/x.service"),
 * found by the inode numbers of its directories, copied into @buf (@len
 * bytes, cut to fit): @buf, or NULL when there is none (removed since).
 * Remembered, misses too. Safe from any thread.
 */
const char *ts_cgroup_path(const char *root, __u64 id, char *buf, size_t len);

/* Prints @e; the ring buffer callback (ctx: a struct ts_slow_printer). */
int ts_slow_print(void *ctx, const struct ts_slow_event *e);

/*
 * Before a batch of ts_slow_print (@end false): the output locked (report
 * blocks and lines never interleave), the clocks read once; after: the
 * output flushed and unlocked.
 */
void ts_slow_batch(void *ctx, bool end);

/* The lines printed for the device @major:@minor. */
unsigned long long ts_slow_logged(const struct ts_slow_printer *p,
				  unsigned int major, unsigned int minor);

/*
 * The end of the run, device @name (@major:@minor): its lines, those
 * @dropped (the ring buffer full) and the requests not timed (@missed).
 */
void ts_slow_put_counts(FILE *f, const struct ts_slow_printer *p,
			const char *name, unsigned int major,
			unsigned int minor, unsigned long long dropped,
			unsigned long long missed);

struct tj;
/* The same as "slow": {"logged", "dropped", "missed"}. */
void ts_slow_json_counts(struct tj *j, const struct ts_slow_printer *p,
			 unsigned int major, unsigned int minor,
			 unsigned long long dropped, unsigned long long missed);

#endif
