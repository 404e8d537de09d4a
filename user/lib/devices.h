/* SPDX-License-Identifier: GPL-2.0 */
/* Disk names <-> device numbers, read from sysfs (root given for tests). */
#ifndef TS_DEVICES_H
#define TS_DEVICES_H

#include <stdbool.h>
#include <stddef.h>

struct ts_disk {
	char name[64];
	unsigned int major, minor;
	bool was_partition; /* NAME was a partition of this disk */
	bool bio_based;	    /* no request queue (zram, md, device-mapper):
			     * the block_rq_* tracepoints never fire for it */
};

/* A stacked device's name lists are cut at this many (sorted by name). */
#define TS_STACK_MAX 32
#define TS_STACK_NAME 32 /* the kernel's DISK_NAME_LEN */

/* A device a stacked one sends its bios to (sysfs: slaves/NAME). */
struct ts_member {
	char name[TS_STACK_NAME]; /* as sysfs names it: vda1 for a partition */
	unsigned int major, minor; /* its whole disk's, where its figures are;
				    * 0:0 when it cannot be read */
};

/* What a device is stacked on (slaves/) and what is stacked on it (holders/). */
struct ts_stack {
	int nmembers, nholders;
	struct ts_member member[TS_STACK_MAX];
	char holder[TS_STACK_MAX][TS_STACK_NAME];
};

/*
 * Resolves a disk or partition NAME, or a device-mapper name (as under
 * /dev/mapper, from dm/name), to its whole disk. 0, or -1 + @err.
 */
int ts_disk_resolve(const char *sysroot, const char *name, struct ts_disk *out,
		    char *err, size_t errlen);

/*
 * The discard ranges one request of disk MAJOR:MINOR takes at most
 * (queue/max_discard_segments); 0 when sysfs does not say.
 */
unsigned int ts_disk_discard_ranges(const char *sysroot, unsigned int major,
				    unsigned int minor);

/* Name of block device MAJOR:MINOR; "MAJOR:MINOR" (false) when sysfs has
 * none. */
bool ts_disk_name(const char *sysroot, unsigned int major, unsigned int minor,
		  char *buf, size_t len);

/*
 * -N: disk @name (a kernel name, @len bytes of room) becomes its
 * device-mapper name (dm/name, as under /dev/mapper) when it has one.
 */
void ts_disk_dm_rename(const char *sysroot, char *name, size_t len);

/* The same for the members and holders in @stack. */
void ts_stack_dm_rename(const char *sysroot, struct ts_stack *stack);

/* The members and holders of whole disk @disk; none when it has none. */
void ts_disk_stack(const char *sysroot, const char *disk, struct ts_stack *out);

/*
 * Adds the kernel dev_t of whole disk MAJOR:MINOR to the @n in @kdevs (room
 * for @max), and when it is stacked those of its members, down to whole
 * disks; each once. The new count, or -1 when @max is too small.
 */
int ts_disk_add_stack(const char *sysroot, unsigned int major,
		      unsigned int minor, unsigned int *kdevs, int n, int max);

/*
 * The disks that exist (@bio_only: the bio-based ones), space separated and
 * sorted, for messages.
 */
void ts_disk_list(const char *sysroot, bool bio_only, char *buf, size_t len);

/* --exclude: globs given at most, and disks they can leave out. */
#define TS_MAX_EXCLUDES 16
#define TS_GLOB_LEN 64
#define TS_EXCLUDED_MAX 4096 /* include/truestat.h's TS_EXCLUDE_MAX */

struct ts_exclusion {
	int nglobs;
	char globs[TS_MAX_EXCLUDES][TS_GLOB_LEN];
	bool matched[TS_MAX_EXCLUDES]; /* the glob matched a disk */
	int ndisks; /* disks in /sys/block (the first TS_EXCLUDED_MAX) */
	int n; /* disks matched: */
	unsigned int kdevs[TS_EXCLUDED_MAX];
	char names[1024]; /* their names, space separated, cut with "..." */
};

/*
 * The disks in @sysroot/block whose name, or device-mapper name, matches
 * one of @x's globs (fnmatch) into @x. 0, or -1 when it cannot be read.
 */
int ts_disk_exclude(const char *sysroot, struct ts_exclusion *x);

/*
 * The driver tags of the request-based disks in @sysroot/block (nr_tags of
 * each hardware queue, summed): of those in @kdevs (@n of them; 0: all).
 */
unsigned long ts_disk_tags(const char *sysroot, const unsigned int *kdevs,
			   int n);

/* Kernel-internal dev_t (major << 20 | minor), as the BPF side sees it. */
static inline unsigned int ts_kdev(unsigned int major, unsigned int minor)
{
	return major << 20 | minor;
}

#endif
