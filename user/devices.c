// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
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

int ts_disk_resolve(const char *sysroot, const char *name, struct ts_disk *out,
		    char *err, size_t errlen)
{
	char path[PATH_MAX], real[PATH_MAX], list[512];
	char *slash;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/class/block/%s", sysroot, name);
	if (strchr(name, '/') || !realpath(path, real)) {
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

void ts_disk_name(const char *sysroot, unsigned int major, unsigned int minor,
		  char *buf, size_t len)
{
	char path[PATH_MAX], real[PATH_MAX];

	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sysroot, major,
		 minor);
	if (realpath(path, real))
		snprintf(buf, len, "%s", base_name(real));
	else
		snprintf(buf, len, "%u:%u", major, minor);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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
	char path[PATH_MAX], *names[256];
	struct dirent *e;
	size_t used = 0;
	int n = 0, i;
	DIR *d;

	snprintf(path, sizeof(path), "%s/block", sysroot);
	buf[0] = '\0';
	d = opendir(path);
	if (!d) {
		snprintf(buf, len, "none found in %s", path);
		return;
	}
	while ((e = readdir(d)) && n < 256)
		if (e->d_name[0] != '.' &&
		    (!bio_only || bio_based(sysroot, e->d_name)))
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (i = 0; i < n; i++) {
		if (names[i] && used + strlen(names[i]) + 2 < len)
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? " " : "", names[i]);
		free(names[i]);
	}
	if (!n)
		snprintf(buf, len, "none");
}
