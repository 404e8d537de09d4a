// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/devices.h"
#include "partitions.h"

/* The number in file @path, or -1. */
static int read_number(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

int ts_part_check(const char *list, char *err, int errlen)
{
	char name[64], path[256];
	const char *p = list;
	int len;

	while (p && *p) {
		len = strcspn(p, ",");
		if (len == 0 || len >= (int)sizeof(name) || memchr(p, '/', len)) {
			snprintf(err, errlen, "bad --partitions '%s': a comma-separated list of partition names, e.g. -p=sda1,sda2",
				 list);
			return -1;
		}
		memcpy(name, p, len);
		name[len] = 0;
		snprintf(path, sizeof(path), "/sys/class/block/%s/partition", name);
		if (read_number(path) < 1) {
			snprintf(err, errlen, "--partitions: %s is not a partition (no /sys/class/block/%s/partition)",
				 name, name);
			return -1;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

static bool traced(const struct ts_disk *d, const unsigned int *kdevs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (kdevs[i] == (d->major << 20 | d->minor))
			return true;
	return false;
}

void ts_part_say_untraced(const char *list, const unsigned int *kdevs, int n)
{
	struct ts_disk disk;
	char name[64], err[256];
	const char *p;
	int len;

	for (p = list; n && p && *p; p += len + (p[len] == ',')) {
		len = strcspn(p, ",");
		snprintf(name, sizeof(name), "%.*s", len, p);
		if (ts_disk_resolve("/sys", name, &disk, err, sizeof(err)) ||
		    traced(&disk, kdevs, n))
			continue;
		fprintf(stderr, "truestat: --partitions: %s is on %s, which -d does not trace: it has no row\n",
			name, disk.name);
	}
}

/*
 * The name of partition @partno of disk MAJOR:MINOR into @buf: the
 * directory under the disk's in sysfs whose "partition" file holds it.
 */
void ts_part_name(const char *sys, unsigned int major, unsigned int minor,
		  unsigned int partno, char *buf, size_t len)
{
	char dir[128], path[512];
	struct dirent *e;
	DIR *d;

	snprintf(buf, len, "%u:%u#%u", major, minor, partno);
	snprintf(dir, sizeof(dir), "%s/dev/block/%u:%u", sys, major, minor);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/partition", dir, e->d_name);
		if (read_number(path) == (int)partno) {
			snprintf(buf, len, "%s", e->d_name);
			break;
		}
	}
	closedir(d);
}

/* Whether @name is in comma-separated @list (NULL: everything is). */
bool ts_part_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	if (!list)
		return true;
	for (; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}
