// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* nftw's FTW_ACTIONRETVAL */
#include <ftw.h>
#include <math.h>
#include <mntent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/devices.h"
#include "lib/json.h"
#include "lib/names.h"
#include "slow.h"

const char *ts_cgroup2_root(void)
{
	static char root[256];
	struct mntent *m;
	FILE *f = setmntent("/proc/self/mounts", "r");

	if (!f)
		return NULL;
	while ((m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(root, sizeof(root), "%s", m->mnt_dir);
			break;
		}
	endmntent(f);
	return m ? root : NULL;
}

#define CGROUP_CACHE 512

static struct {
	__u64 id;
	char *path; /* NULL: looked for, not found */
} cache[CGROUP_CACHE];
static int ncache;

static __u64 wanted_id;
static size_t root_len;
static char *found;

static int visit(const char *path, const struct stat *st, int type,
		 struct FTW *ftw)
{
	if (type != FTW_D || st->st_ino != wanted_id)
		return FTW_CONTINUE;
	found = strdup(path[root_len] ? path + root_len : "/");
	return FTW_STOP;
}

const char *ts_cgroup_path(const char *root, __u64 id)
{
	int i;

	for (i = 0; i < ncache; i++)
		if (cache[i].id == id)
			return cache[i].path;
	found = NULL;
	wanted_id = id;
	root_len = strlen(root);
	nftw(root, visit, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
	if (ncache == CGROUP_CACHE) { /* full: start over */
		for (i = 0; i < ncache; i++)
			free(cache[i].path);
		ncache = 0;
	}
	cache[ncache].id = id;
	cache[ncache++].path = found;
	return found;
}

/*
 * CLOCK_MONOTONIC @ns as wall-clock time, to the microsecond: @utc, ISO
 * 8601 with the date; else local, the date first when @date.
 */
static void wall_time(__u64 ns, bool utc, bool date, char *buf, size_t len)
{
	struct timespec mono, real;
	long long at;
	time_t sec;
	struct tm tm;
	char hms[32];

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	at = real.tv_sec * 1000000000LL + real.tv_nsec -
	     (mono.tv_sec * 1000000000LL + mono.tv_nsec - (long long)ns);
	sec = at / 1000000000LL;
	if (utc)
		gmtime_r(&sec, &tm);
	else
		localtime_r(&sec, &tm);
	strftime(hms, sizeof(hms), utc ? "%Y-%m-%dT%H:%M:%S" :
				   date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S",
		 &tm);
	snprintf(buf, len, "%s.%06lld%s", hms, at % 1000000000LL / 1000,
		 utc ? "Z" : "");
}

static void print_json(struct ts_slow_printer *p, const struct ts_slow_event *e,
		       const char *dev, const char *cgroup)
{
	struct tj j;
	char when[48];

	wall_time(e->end_ns, true, true, when, sizeof(when));
	tj_open(&j, p->f);
	tj_obj(&j, NULL);
	tj_str(&j, "type", "slow");
	tj_str(&j, "time", when);
	tj_u64(&j, "mono_ns", e->end_ns);
	tj_str(&j, "device", dev);
	tj_str(&j, "op", e->op < TS_NR_OPS ? ts_op_names[e->op] : "?");
	tj_str(&j, "layer", e->layer == TS_LAYER_BIO ? "bio" : "request");
	tj_u64(&j, "sector", e->sector);
	tj_u64(&j, "bytes", e->bytes);
	tj_num(&j, "queue_ms", e->queue_ns ? e->queue_ns / 1e6 : NAN, 6);
	tj_num(&j, "service_ms", e->service_ns / 1e6, 6);
	tj_num(&j, "total_ms", e->total_ns / 1e6, 6);
	tj_u64(&j, "depth", e->depth);
	if (e->who.tgid) {
		tj_u64(&j, "pid", e->who.tgid);
		tj_str(&j, "comm", e->who.comm);
		tj_u64(&j, "cgroup_id", e->who.cgroup);
	} else {
		tj_null(&j, "pid");
		tj_null(&j, "comm");
		tj_null(&j, "cgroup_id");
	}
	if (cgroup)
		tj_str(&j, "cgroup", cgroup);
	else
		tj_null(&j, "cgroup");
	tj_end_obj(&j);
	tj_close(&j);
}

static void print_line(struct ts_slow_printer *p, const struct ts_slow_event *e,
		       const char *dev, const char *cgroup)
{
	char when[48], q[32], sv[32], t[32];

	wall_time(e->end_ns, false, p->date, when, sizeof(when));
	fprintf(p->f, "slow %s %-10s %-6s sector %llu %u B  queue %s service %s total %s  depth %u",
		when, dev, e->op < TS_NR_OPS ? ts_op_names[e->op] : "?",
		(unsigned long long)e->sector, e->bytes,
		ts_time_str(q, sizeof(q), e->queue_ns ? e->queue_ns / 1e6 : NAN,
			    p->units),
		ts_time_str(sv, sizeof(sv), e->service_ns / 1e6, p->units),
		ts_time_str(t, sizeof(t), e->total_ns / 1e6, p->units),
		e->depth);
	if (e->who.tgid)
		fprintf(p->f, "  pid %u %.16s cgroup %s\n", e->who.tgid,
			e->who.comm, cgroup ? cgroup : "?");
	else
		fprintf(p->f, "  submitter not known\n");
}

int ts_slow_print(void *ctx, const struct ts_slow_event *e)
{
	struct ts_slow_printer *p = ctx;
	const char *cgroup = NULL;
	char dev[64];

	ts_disk_name(p->sysroot, e->dev >> 20, e->dev & 0xfffff, dev,
		     sizeof(dev));
	if (p->dm_names)
		ts_disk_dm_rename(p->sysroot, dev, sizeof(dev));
	if (e->who.tgid && p->cgroup_root)
		cgroup = ts_cgroup_path(p->cgroup_root, e->who.cgroup);
	if (p->json)
		print_json(p, e, dev, cgroup);
	else
		print_line(p, e, dev, cgroup);
	p->printed++;
	return 0;
}
