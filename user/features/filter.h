/* SPDX-License-Identifier: GPL-2.0 */
/* -c/--cgroup and --pid: the submitter whose I/O alone is counted. */
#ifndef TS_FILTER_H
#define TS_FILTER_H

#include <stdbool.h>
#include <linux/types.h>

struct ts_filter {
	bool cgroup;	  /* -c: by cgroup v2 */
	bool pid;	  /* --pid: by process */
	bool blkg;	  /* the io controller is on cgroup v2: the bio's
			   * charged cgroup, else the submitting task's */
	__u64 cgroup_id;  /* the directory's inode */
	unsigned int level; /* its depth under the cgroup v2 mount */
	/* truestat in a cgroup namespace: the depth under a mount made there
	 * is not the kernel's, and every level is compared */
	bool any_level;
	unsigned int tgid;
	/* the pid namespace of /proc, whose pids --pid takes; 0: the init one */
	__u64 pidns_dev, pidns_ino;
};

/*
 * @f from -c @path (or NULL) and --pid @pid (or 0). Returns 0, or -1 with
 * one line in @err: @path not a cgroup v2 directory, @pid not running.
 */
int ts_filter_resolve(const char *path, long pid, struct ts_filter *f,
		      char *err, int errlen);

#endif
