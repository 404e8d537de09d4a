// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* nftw's FTW_ACTIONRETVAL */
#include <ftw.h>
#include <math.h>
#include <limits.h>
#include <mntent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/devices.h"
#include "lib/json.h"
#include "lib/names.h"
#include "slow.h"

static char cgroup2_root[256];

static void find_cgroup2_root(void)
{
	struct mntent *m;
	FILE *f = setmntent("/proc/self/mounts", "r");

	if (!f)
		return;
	while ((m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(cgroup2_root, sizeof(cgroup2_root), "%s",
				 m->mnt_dir);
			break;
		}
	endmntent(f);
}

const char *ts_cgroup2_root(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, find_cgroup2_root);
	return cgroup2_root[0] ? cgroup2_root : NULL;
}

#define CGROUP_CACHE 512

/*
 * The paths found, misses too, and the search nftw's callback serves
 * (it takes no argument): one owner, cache_lock, held by
 * ts_cgroup_path from the lookup to the copy out, so that the --slow
 * reader and the main thread (the exporter's labels, the findings) never
 * see each other's search or a path freed by the other's reset.
 */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
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

/* @id's path, from the cache or a search remembered; cache_lock held. */
static const char *cgroup_path_locked(const char *root, __u64 id)
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

const char *ts_cgroup_path(const char *root, __u64 id, char *buf, size_t len)
{
	const char *path;

	pthread_mutex_lock(&cache_lock);
	path = cgroup_path_locked(root, id);
	if (path)
		snprintf(buf, len, "%s", path);
	pthread_mutex_unlock(&cache_lock);
	return path ? buf : NULL;
}

/* A device's name, from the cache; looked up again each second. */
static const char *dev_name(struct ts_slow_printer *p, __u32 dev)
{
	struct ts_slow_name *n;
	int i;

	for (i = 0; i < p->nnames; i++)
		if (p->names[i].dev == dev)
			return p->names[i].name;
	if (p->nnames == TS_SLOW_NAMES)
		p->nnames = 0;
	n = &p->names[p->nnames++];
	n->dev = dev;
	ts_disk_name(p->sysroot, dev >> 20, dev & 0xfffff, n->name,
		     sizeof(n->name));
	if (p->dm_names)
		ts_disk_dm_rename(p->sysroot, n->name, sizeof(n->name));
	return n->name;
}

/* One more line of device @dev. */
static void count_logged(struct ts_slow_printer *p, __u32 dev)
{
	int i;

	for (i = 0; i < p->ndevs; i++)
		if (p->logged[i].dev == dev) {
			p->logged[i].n++;
			return;
		}
	if (p->ndevs == TS_MAX_DEVS)
		return;
	p->logged[p->ndevs].dev = dev;
	p->logged[p->ndevs++].n = 1;
}

unsigned long long ts_slow_logged(const struct ts_slow_printer *p,
				  unsigned int major, unsigned int minor)
{
	__u32 dev = major << 20 | minor;
	int i;

	for (i = 0; i < p->ndevs; i++)
		if (p->logged[i].dev == dev)
			return p->logged[i].n;
	return 0;
}

void ts_slow_put_counts(FILE *f, const struct ts_slow_printer *p,
			const char *name, unsigned int major,
			unsigned int minor, unsigned long long dropped,
			unsigned long long missed)
{
	fprintf(f, "  --slow: %s: %llu logged, %llu dropped (ring full), %llu not timed (missed)\n",
		name, ts_slow_logged(p, major, minor), dropped, missed);
}

void ts_slow_json_counts(struct tj *j, const struct ts_slow_printer *p,
			 unsigned int major, unsigned int minor,
			 unsigned long long dropped, unsigned long long missed)
{
	tj_obj(j, "slow");
	tj_u64(j, "logged", ts_slow_logged(p, major, minor));
	tj_u64(j, "dropped", dropped);
	tj_u64(j, "missed", missed);
	tj_end_obj(j);
}

void ts_slow_batch(void *ctx, bool end)
{
	struct ts_slow_printer *p = ctx;
	struct timespec mono, real;

	if (end) {
		fflush(p->f);
		funlockfile(p->f);
		return;
	}
	flockfile(p->f);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	p->real_offset_ns = real.tv_sec * 1000000000LL + real.tv_nsec -
			    (mono.tv_sec * 1000000000LL + mono.tv_nsec);
}

/*
 * One line built by hand (a printf costs more than the rest of a line):
 * the puts stop at the end of the buffer, a line too long is cut.
 */
struct line {
	char buf[8192];
	char *at;
};

static void put_ch(struct line *l, char c)
{
	if (l->at < l->buf + sizeof(l->buf))
		*l->at++ = c;
}

static void put_str(struct line *l, const char *s)
{
	while (*s)
		put_ch(l, *s++);
}

/* @s, at most @max bytes of it, padded with spaces to @width */
static void put_padded(struct line *l, const char *s, size_t max, int width)
{
	size_t n = strnlen(s, max);

	for (size_t i = 0; i < n; i++)
		put_ch(l, s[i]);
	for (; (int)n < width; n++)
		put_ch(l, ' ');
}

/* @v in decimal, @width digits at least (zeros before) */
static void put_u64(struct line *l, unsigned long long v, int width)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v || n < width);
	while (n)
		put_ch(l, tmp[--n]);
}

/* @v / 10^@decimals, with its decimals */
static void put_fixed(struct line *l, unsigned long long v, int decimals)
{
	static const unsigned long long pow10[] = { 1, 10, 100, 1000, 10000,
						    100000, 1000000 };

	put_u64(l, v / pow10[decimals], 1);
	if (!decimals)
		return;
	put_ch(l, '.');
	put_u64(l, v % pow10[decimals], decimals);
}

/* A JSON string, escaped as tj_str does. */
static void put_json_str(struct line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *c = (const unsigned char *)s;

	put_ch(l, '"');
	for (; *c; c++) {
		if (*c == '"' || *c == '\\') {
			put_ch(l, '\\');
			put_ch(l, *c);
		} else if (*c < 0x20) {
			put_str(l, "\\u00");
			put_ch(l, hex[*c >> 4]);
			put_ch(l, hex[*c & 15]);
		} else {
			put_ch(l, *c);
		}
	}
	put_ch(l, '"');
}

/* "key": */
static void put_key(struct line *l, const char *key)
{
	put_ch(l, ',');
	put_ch(l, '"');
	put_str(l, key);
	put_str(l, "\":");
}

/* Decimal digits of @v (1 for 0). */
static int digits(unsigned long long v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/*
 * @ns as ts_time_str prints it: in us below 0.1 ms (unless --units), with
 * three significant digits, 1 to 3 decimals in us, 3 to 6 in ms.
 */
static void put_time(struct line *l, __u64 ns, enum ts_unit units)
{
	bool us = units == TS_UNIT_US ||
		  (units == TS_UNIT_AUTO && ns && ns < 100000);
	unsigned long long unit = us ? 1000 : 1000000, scale = 1;
	int lo = us ? 1 : 3, hi = us ? 3 : 6, d = lo, i;

	if (ns) /* 2 - floor(log10(ns / unit)), unit = 10^(3 or 6) */
		d = 3 + (us ? 3 : 6) - digits(ns);
	d = d < lo ? lo : d > hi ? hi : d;
	for (i = 0; i < d; i++)
		scale *= 10;
	if (ns * scale % unit == unit / 2) { /* a tie: printf's rounding */
		char buf[32];

		put_str(l, ts_time_str(buf, sizeof(buf), ns / 1e6, units));
		return;
	}
	put_fixed(l, (ns * scale + unit / 2) / unit, d);
	put_str(l, us ? " us" : " ms");
}

/*
 * CLOCK_MONOTONIC @ns as wall-clock time, to the microsecond: @utc, ISO
 * 8601 with the date; else local, the date first when @date. The second
 * is formatted once, the microseconds by hand.
 */
static void wall_time(struct ts_slow_printer *p, __u64 ns, bool utc,
		      bool date, struct line *l)
{
	long long at = (long long)ns + p->real_offset_ns;
	time_t sec = at / 1000000000LL;
	struct tm tm;

	if (sec != p->second) {
		if (utc)
			gmtime_r(&sec, &tm);
		else
			localtime_r(&sec, &tm);
		strftime(p->second_str, sizeof(p->second_str),
			 utc ? "%Y-%m-%dT%H:%M:%S." :
			 date ? "%Y-%m-%d %H:%M:%S." : "%H:%M:%S.", &tm);
		p->second = sec;
		p->nnames = 0; /* names looked up again (a claim may change) */
	}
	put_str(l, p->second_str);
	put_u64(l, at % 1000000000LL / 1000, 6);
	if (utc)
		put_ch(l, 'Z');
}

static const char *op_name(const struct ts_slow_event *e)
{
	return e->op < TS_NR_OPS ? ts_op_names[e->op] : "?";
}

static void json_u64(struct line *l, const char *key, unsigned long long v)
{
	put_key(l, key);
	put_u64(l, v, 1);
}

/* milliseconds to the nanosecond, as tj_num(.., 6) */
static void json_ms(struct line *l, const char *key, __u64 ns)
{
	put_key(l, key);
	put_fixed(l, ns, 6);
}

static void json_who(struct line *l, const struct ts_slow_event *e,
		     const char *cgroup)
{
	if (e->who.tgid) {
		json_u64(l, "pid", e->who.tgid);
		put_key(l, "comm");
		put_json_str(l, e->who.comm);
		json_u64(l, "cgroup_id", e->who.cgroup);
	} else {
		put_str(l, ",\"pid\":null,\"comm\":null,\"cgroup_id\":null");
	}
	put_key(l, "cgroup");
	if (cgroup)
		put_json_str(l, cgroup);
	else
		put_str(l, "null");
}

static void json_line(struct ts_slow_printer *p, const struct ts_slow_event *e,
		      const char *dev, const char *cgroup, struct line *l)
{
	put_str(l, "{\"type\":\"slow\",\"time\":\"");
	wall_time(p, e->end_ns, true, true, l);
	put_ch(l, '"');
	json_u64(l, "mono_ns", e->end_ns);
	put_key(l, "device");
	put_json_str(l, dev);
	put_key(l, "op");
	put_json_str(l, op_name(e));
	put_str(l, e->layer == TS_LAYER_BIO ? ",\"layer\":\"bio\"" :
					      ",\"layer\":\"request\"");
	json_u64(l, "sector", e->sector);
	json_u64(l, "bytes", e->bytes);
	if (e->queue_ns)
		json_ms(l, "queue_ms", e->queue_ns);
	else
		put_str(l, ",\"queue_ms\":null");
	json_ms(l, "service_ms", e->service_ns);
	json_ms(l, "total_ms", e->total_ns);
	json_u64(l, "depth", e->depth);
	json_who(l, e, cgroup);
	put_str(l, "}\n");
}

static void text_line(struct ts_slow_printer *p, const struct ts_slow_event *e,
		      const char *dev, const char *cgroup, struct line *l)
{
	put_str(l, "slow ");
	wall_time(p, e->end_ns, false, p->date, l);
	put_ch(l, ' ');
	put_padded(l, dev, 64, 10);
	put_ch(l, ' ');
	put_padded(l, op_name(e), 16, 6);
	put_str(l, " sector ");
	put_u64(l, e->sector, 1);
	put_ch(l, ' ');
	put_u64(l, e->bytes, 1);
	put_str(l, " B  queue ");
	if (e->queue_ns)
		put_time(l, e->queue_ns, p->units);
	else
		put_ch(l, '-');
	put_str(l, " service ");
	put_time(l, e->service_ns, p->units);
	put_str(l, " total ");
	put_time(l, e->total_ns, p->units);
	put_str(l, "  depth ");
	put_u64(l, e->depth, 1);
	if (!e->who.tgid) {
		put_str(l, "  submitter not known\n");
		return;
	}
	put_str(l, "  pid ");
	put_u64(l, e->who.tgid, 1);
	put_ch(l, ' ');
	put_padded(l, e->who.comm, sizeof(e->who.comm), 0);
	put_str(l, " cgroup ");
	put_str(l, cgroup ? cgroup : "?");
	put_ch(l, '\n');
}

int ts_slow_print(void *ctx, const struct ts_slow_event *e)
{
	struct ts_slow_printer *p = ctx;
	const char *cgroup = NULL;
	const char *dev = dev_name(p, e->dev);
	struct line l = { .at = l.buf };
	char path[PATH_MAX];

	if (e->who.tgid && p->cgroup_root)
		cgroup = ts_cgroup_path(p->cgroup_root, e->who.cgroup, path,
					sizeof(path));
	if (p->json)
		json_line(p, e, dev, cgroup, &l);
	else
		text_line(p, e, dev, cgroup, &l);
	if (l.at == l.buf + sizeof(l.buf)) /* cut: still a line */
		l.at[-1] = '\n';
	fwrite_unlocked(l.buf, 1, l.at - l.buf, p->f);
	p->printed++;
	count_logged(p, e->dev);
	return 0;
}
