/* SPDX-License-Identifier: GPL-2.0 */
/* Command line of truestat. */
#ifndef TS_OPTS_H
#define TS_OPTS_H

#include <stdbool.h>

#include "lib/devices.h"
#include "lib/units.h"

#define TS_MAX_DEVICE_ARGS 64
#define TS_NAME_LEN 64

struct ts_opts {
	double interval_s; /* 0: no interval, trace until a signal */
	long count;	   /* intervals to print, 0: until a signal */
	bool json;
	bool verbose;
	bool raw_tp; /* force the raw_tp fallback (for tests) */
	int hist;    /* -H: 0 none, 1 folded to powers of two, 2 fine */
	bool depth;  /* -D: the parallelism curve */
	bool light;  /* -L: no bio programs; Q from the request's allocation */
	bool date;   /* -t: the date in the tables' timestamps */
	bool dm_names; /* -N: device-mapper disks by their /dev/mapper name */
	bool pattern; /* --pattern: seeks and sizes as the device sees them */
	bool flags;   /* -F: latency by request-flag class */
	bool partitions; /* -p: rows per partition */
	const char *part_list; /* -p=LIST: the partitions shown, or NULL: all */
	double slow_ms; /* --slow: report requests this slow; < 0: off */
	unsigned int slow_buffer; /* --slow-buffer: ring bytes, 0: default */
	int by;	 /* --by: enum ts_by */
	int top; /* --top: submitters shown per device and direction */
	const char *cgroup; /* -c: count only this cgroup v2's I/O, or NULL */
	long pid;	    /* --pid: only this process's I/O, 0: all */
	const char *prometheus; /* --web.listen-address (--prometheus)
				 * ADDR:PORT, or NULL */
	const char *web_config; /* --web.config.file FILE, or NULL */
	bool full_buckets;	/* --web.histogram-buckets=full */
	bool buckets_given;	/* --web.histogram-buckets at all */
	const char *heatmap;	/* --heatmap FILE.svg, or NULL */
	enum ts_unit units;	/* --units: TS_UNIT_AUTO unless fixed */
	bool help;
	bool version; /* -V, --version */
	int ndevices;
	char devices[TS_MAX_DEVICE_ARGS][TS_NAME_LEN];
	int nexcludes; /* --exclude: globs of disk names */
	char excludes[TS_MAX_EXCLUDES][TS_GLOB_LEN];
};

/*
 * Parses argv into @o. Returns 0, or -1 with a one-line message in @err.
 * Never exits and never prints.
 */
int ts_parse_args(int argc, char **argv, struct ts_opts *o, char *err,
		  int errlen);

/* The --help text. */
extern const char ts_usage[];

/* What --version prints after "truestat ": "0.1.0" or "0.1.0 (f599b81)". */
extern const char ts_version[];

/* truestat_build_info's version ("0.1.0") and commit ("unknown": none) */
extern const char ts_release[], ts_commit[];

#endif
