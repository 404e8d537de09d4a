// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices.h"

static int read_dev(const char *path, unsigned int *major, unsigned int *minor)
{
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%u:%u", major, minor);
	fclose(f);
	return n == 2 ? 0 : -1;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The first line of file @path, without its newline. 0, or -1. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char *ok;

	if (!f)
		return -1;
	ok = fgets(buf, len, f);
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

#define TS_MAX_ENTRIES 256

/*
 * The names in directory @path (but . and ..), sorted, malloc'd into
 * @names: at most @max. How many, or -1 when it cannot be read.
 */
static int entries_upto(const char *path, char **names, int max)
{
	struct dirent *e;
	int n = 0;
	DIR *d = opendir(path);

	if (!d)
		return -1;
	while ((e = readdir(d)) && n < max)
		if (e->d_name[0] != '.' && (names[n] = strdup(e->d_name)))
			n++;
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	return n;
}

static int sorted_entries(const char *path, char **names)
{
	return entries_upto(path, names, TS_MAX_ENTRIES);
}

static void free_entries(char **names, int n)
{
	while (n > 0)
		free(names[--n]);
}

/* The disk in @sysroot/block whose device-mapper name is @name, or false. */
static bool dm_disk(const char *sysroot, const char *name, char *disk,
		    size_t len)
{
	char path[PATH_MAX], dm[256], *names[TS_MAX_ENTRIES];
	bool found = false;
	int n, i;

	snprintf(path, sizeof(path), "%s/block", sysroot);
	n = sorted_entries(path, names);
	for (i = 0; i < n && !found; i++) {
		snprintf(path, sizeof(path), "%s/block/%s/dm/name", sysroot,
			 names[i]);
		found = !read_line(path, dm, sizeof(dm)) && !strcmp(dm, name);
		if (found)
			snprintf(disk, len, "%s", names[i]);
	}
	free_entries(names, n);
	return found;
}

/* The sysfs directory of device @name (a kernel or device-mapper name). */
static bool device_dir(const char *sysroot, const char *name, char *real)
{
	char path[PATH_MAX], disk[TS_STACK_NAME];

	if (strchr(name, '/'))
		return false; /* must not escape class/block */
	snprintf(path, sizeof(path), "%s/class/block/%s", sysroot, name);
	if (realpath(path, real))
		return true;
	if (!dm_disk(sysroot, name, disk, sizeof(disk)))
		return false;
	snprintf(path, sizeof(path), "%s/class/block/%s", sysroot, disk);
	return realpath(path, real) != NULL;
}

int ts_disk_resolve(const char *sysroot, const char *name, struct ts_disk *out,
		    char *err, size_t errlen)
{
	char path[PATH_MAX], real[PATH_MAX], list[512];
	char *slash;

	memset(out, 0, sizeof(*out));
	if (!device_dir(sysroot, name, real)) {
		ts_disk_list(sysroot, false, list, sizeof(list));
		snprintf(err, errlen, "unknown device '%s' (disks: %s)", name,
			 list);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/partition", real);
	if (access(path, F_OK) == 0) {
		/* devices/.../DISK/PART: the disk is the parent directory */
		slash = strrchr(real, '/');
		if (!slash || slash == real)
			goto bad;
		*slash = '\0';
		out->was_partition = true;
	}
	snprintf(out->name, sizeof(out->name), "%s", base_name(real));
	snprintf(path, sizeof(path), "%s/mq", real);
	out->bio_based = access(path, F_OK) != 0;
	snprintf(path, sizeof(path), "%s/dev", real);
	if (read_dev(path, &out->major, &out->minor))
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "cannot read the device number of '%s' in %s",
		 name, sysroot);
	return -1;
}

unsigned int ts_disk_discard_ranges(const char *sysroot, unsigned int major,
				    unsigned int minor)
{
	char path[PATH_MAX], line[32];

	snprintf(path, sizeof(path),
		 "%s/dev/block/%u:%u/queue/max_discard_segments", sysroot,
		 major, minor);
	if (read_line(path, line, sizeof(line)))
		return 0;
	return (unsigned int)strtoul(line, NULL, 10);
}

void ts_disk_dm_rename(const char *sysroot, char *name, size_t len)
{
	char path[PATH_MAX], dm[256];

	snprintf(path, sizeof(path), "%s/block/%s/dm/name", sysroot, name);
	if (!read_line(path, dm, sizeof(dm)) && dm[0])
		snprintf(name, len, "%s", dm);
}

void ts_stack_dm_rename(const char *sysroot, struct ts_stack *stack)
{
	int i;

	for (i = 0; i < stack->nmembers; i++)
		ts_disk_dm_rename(sysroot, stack->member[i].name,
				  sizeof(stack->member[i].name));
	for (i = 0; i < stack->nholders; i++)
		ts_disk_dm_rename(sysroot, stack->holder[i],
				  sizeof(stack->holder[i]));
}

bool ts_disk_name(const char *sysroot, unsigned int major, unsigned int minor,
		  char *buf, size_t len)
{
	char path[PATH_MAX], real[PATH_MAX];

	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sysroot, major,
		 minor);
	if (realpath(path, real)) {
		snprintf(buf, len, "%s", base_name(real));
		return true;
	}
	snprintf(buf, len, "%u:%u", major, minor);
	return false;
}

/* Whether disk @name under @sysroot/block has no request queue. */
static bool bio_based(const char *sysroot, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/block/%s/mq", sysroot, name);
	return access(path, F_OK) != 0;
}

void ts_disk_list(const char *sysroot, bool bio_only, char *buf, size_t len)
{
	char path[PATH_MAX], *names[TS_MAX_ENTRIES];
	size_t used = 0;
	int n, i;

	snprintf(path, sizeof(path), "%s/block", sysroot);
	buf[0] = '\0';
	n = sorted_entries(path, names);
	if (n < 0) {
		snprintf(buf, len, "none found in %s", path);
		return;
	}
	for (i = 0; i < n; i++)
		if ((!bio_only || bio_based(sysroot, names[i])) &&
		    used + strlen(names[i]) + 2 < len)
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? " " : "", names[i]);
	free_entries(names, n);
	if (!used)
		snprintf(buf, len, "none");
}

/* Member @name (a disk or a partition) and the whole disk of its figures. */
static void member_of(const char *sysroot, const char *name,
		      struct ts_member *m)
{
	struct ts_disk disk;
	char err[64];

	snprintf(m->name, sizeof(m->name), "%s", name);
	if (!ts_disk_resolve(sysroot, name, &disk, err, sizeof(err))) {
		m->major = disk.major;
		m->minor = disk.minor;
	}
}

void ts_disk_stack(const char *sysroot, const char *disk, struct ts_stack *out)
{
	char path[PATH_MAX], *names[TS_MAX_ENTRIES];
	int n, i;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/block/%s/slaves", sysroot, disk);
	n = sorted_entries(path, names);
	for (i = 0; i < n && i < TS_STACK_MAX; i++)
		member_of(sysroot, names[i], &out->member[out->nmembers++]);
	free_entries(names, n);
	snprintf(path, sizeof(path), "%s/block/%s/holders", sysroot, disk);
	n = sorted_entries(path, names);
	for (i = 0; i < n && i < TS_STACK_MAX; i++)
		snprintf(out->holder[out->nholders++], TS_STACK_NAME, "%s",
			 names[i]);
	free_entries(names, n);
}

/* Stacks deeper than this are cut (and a loop in sysfs ends). */
#define TS_STACK_DEPTH 8

static int add_stack(const char *sysroot, unsigned int major,
		     unsigned int minor, unsigned int *kdevs, int n, int max,
		     int depth)
{
	unsigned int kdev = ts_kdev(major, minor);
	struct ts_stack stack;
	char name[TS_STACK_NAME];
	int i;

	for (i = 0; i < n; i++)
		if (kdevs[i] == kdev)
			return n;
	if (n >= max)
		return -1;
	kdevs[n++] = kdev;
	if (depth == TS_STACK_DEPTH)
		return n;
	ts_disk_name(sysroot, major, minor, name, sizeof(name));
	ts_disk_stack(sysroot, name, &stack);
	for (i = 0; i < stack.nmembers && n >= 0; i++)
		if (stack.member[i].major || stack.member[i].minor)
			n = add_stack(sysroot, stack.member[i].major,
				      stack.member[i].minor, kdevs, n, max,
				      depth + 1);
	return n;
}

int ts_disk_add_stack(const char *sysroot, unsigned int major,
		      unsigned int minor, unsigned int *kdevs, int n, int max)
{
	return add_stack(sysroot, major, minor, kdevs, n, max, 0);
}

static bool listed(unsigned int kdev, const unsigned int *kdevs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (kdevs[i] == kdev)
			return true;
	return false;
}

/* The nr_tags of disk @name's hardware queues, summed (0: bio-based). */
static unsigned long queue_tags(const char *sysroot, const char *name)
{
	char path[PATH_MAX], line[32];
	unsigned long tags = 0;
	struct dirent *e;
	DIR *mq;

	snprintf(path, sizeof(path), "%s/block/%s/mq", sysroot, name);
	mq = opendir(path);
	if (!mq)
		return 0;
	while ((e = readdir(mq))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/block/%s/mq/%s/nr_tags",
			 sysroot, name, e->d_name);
		if (!read_line(path, line, sizeof(line)))
			tags += strtoul(line, NULL, 10);
	}
	closedir(mq);
	return tags;
}

unsigned long ts_disk_tags(const char *sysroot, const unsigned int *kdevs,
			   int n)
{
	char path[PATH_MAX];
	unsigned int major, minor;
	unsigned long tags = 0;
	struct dirent *e;
	DIR *block;

	snprintf(path, sizeof(path), "%s/block", sysroot);
	block = opendir(path);
	if (!block)
		return 0;
	while ((e = readdir(block))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/block/%s/dev", sysroot,
			 e->d_name);
		if (read_dev(path, &major, &minor))
			continue;
		if (!n || listed(ts_kdev(major, minor), kdevs, n))
			tags += queue_tags(sysroot, e->d_name);
	}
	closedir(block);
	return tags;
}

/* Whether disk @name in @sysroot/block matches one of @x's globs. */
static bool excluded(const char *sysroot, const char *name,
		     struct ts_exclusion *x)
{
	char path[PATH_MAX], dm[256] = "";
	bool any = false;
	int g;

	snprintf(path, sizeof(path), "%s/block/%s/dm/name", sysroot, name);
	if (read_line(path, dm, sizeof(dm)))
		dm[0] = '\0';
	for (g = 0; g < x->nglobs; g++) {
		if (fnmatch(x->globs[g], name, 0) &&
		    (!dm[0] || fnmatch(x->globs[g], dm, 0)))
			continue;
		x->matched[g] = true;
		any = true;
	}
	return any;
}

/* Disk @name, @kdev, into @x's list of those left out. */
static void exclude_one(struct ts_exclusion *x, const char *name,
			unsigned int kdev)
{
	size_t used = strlen(x->names), room = sizeof(x->names);

	if (x->n < TS_EXCLUDED_MAX)
		x->kdevs[x->n++] = kdev;
	if (used + strlen(name) + 5 < room)
		snprintf(x->names + used, room - used, "%s%s", used ? " " : "",
			 name);
	else if (used + 4 < room && strcmp(x->names + used - 3, "..."))
		snprintf(x->names + used, room - used, " ...");
}

int ts_disk_exclude(const char *sysroot, struct ts_exclusion *x)
{
	char path[PATH_MAX], **names = calloc(TS_EXCLUDED_MAX, sizeof(*names));
	unsigned int major, minor;
	int n, i;

	x->n = 0;
	x->names[0] = '\0';
	memset(x->matched, 0, sizeof(x->matched));
	snprintf(path, sizeof(path), "%s/block", sysroot);
	n = names ? entries_upto(path, names, TS_EXCLUDED_MAX) : -1;
	x->ndisks = n > 0 ? n : 0;
	for (i = 0; i < n; i++) {
		if (!excluded(sysroot, names[i], x))
			continue;
		snprintf(path, sizeof(path), "%s/block/%s/dev", sysroot,
			 names[i]);
		if (!read_dev(path, &major, &minor))
			exclude_one(x, names[i], ts_kdev(major, minor));
	}
	if (n > 0)
		free_entries(names, n);
	free(names);
	return n < 0 ? -1 : 0;
}
