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

/* Resolves a disk or partition NAME to its whole disk. 0, or -1 + @err. */
int ts_disk_resolve(const char *sysroot, const char *name, struct ts_disk *out,
		    char *err, size_t errlen);

/* Name of block device MAJOR:MINOR; "MAJOR:MINOR" when sysfs has none. */
void ts_disk_name(const char *sysroot, unsigned int major, unsigned int minor,
		  char *buf, size_t len);

/*
 * The disks that exist (@bio_only: the bio-based ones), space separated and
 * sorted, for messages.
 */
void ts_disk_list(const char *sysroot, bool bio_only, char *buf, size_t len);

/* Kernel-internal dev_t (major << 20 | minor), as the BPF side sees it. */
static inline unsigned int ts_kdev(unsigned int major, unsigned int minor)
{
	return major << 20 | minor;
}

#endif
