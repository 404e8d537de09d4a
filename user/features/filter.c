// SPDX-License-Identifier: GPL-2.0
/* -c/--cgroup and --pid: what the BPF programs match at Q (bpf/filter.bpf.h). */
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "filter.h"
#include "slow.h"

static bool on_cgroup2(const char *path, struct stat *st)
{
	struct statfs fs;

	return !statfs(path, &fs) && fs.f_type == CGROUP2_SUPER_MAGIC &&
	       !stat(path, st) && S_ISDIR(st->st_mode);
}

/* How many directories @path (a real path) is below cgroup v2's @root. */
static int depth_below(const char *path, const char *root)
{
	size_t n = strlen(root);
	int level = 0;

	if (strncmp(path, root, n) || (path[n] && path[n] != '/'))
		return -1;
	for (path += n; *path; path++)
		level += *path == '/' && path[1];
	return level;
}

/* Whether the io controller is on cgroup v2 (@root's cgroup.controllers). */
static bool io_on_v2(const char *root)
{
	char file[PATH_MAX], word[64];
	bool io = false;
	FILE *f;

	snprintf(file, sizeof(file), "%s/cgroup.controllers", root);
	f = fopen(file, "r");
	if (!f)
		return false;
	while (!io && fscanf(f, "%63s", word) == 1)
		io = !strcmp(word, "io");
	fclose(f);
	return io;
}

/* The inodes of the init namespaces (the kernel's include/linux/proc_ns.h). */
#define TS_INIT_CGROUP_NS_INO 0xEFFFFFFBU
#define TS_INIT_PID_NS_INO 0xEFFFFFFCU

/* Whether namespace file @file is the init namespace (@init), or unknown. */
static bool init_ns(const char *file, ino_t init, struct stat *st)
{
	return stat(file, st) || st->st_ino == init;
}

static int resolve_cgroup(const char *path, struct ts_filter *f, char *err,
			  int errlen)
{
	const char *root = ts_cgroup2_root();
	char real[PATH_MAX];
	struct stat st;
	int level;

	if (!realpath(path, real) || !on_cgroup2(real, &st) || !root ||
	    (level = depth_below(real, root)) < 0) {
		snprintf(err, errlen,
			 "-c/--cgroup '%s': not a cgroup v2 directory%s%s",
			 path, root ? " under " : " (cgroup v2 is not mounted)",
			 root ?: "");
		return -1;
	}
	f->cgroup = true;
	f->cgroup_id = st.st_ino;
	f->level = level;
	f->any_level = !init_ns("/proc/self/ns/cgroup", TS_INIT_CGROUP_NS_INO,
				&st);
	f->blkg = io_on_v2(root);
	return 0;
}

int ts_filter_resolve(const char *path, long pid, struct ts_filter *f,
		      char *err, int errlen)
{
	char proc[64];
	struct stat st;

	memset(f, 0, sizeof(*f));
	if (path && resolve_cgroup(path, f, err, errlen))
		return -1;
	if (!pid)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/%ld", pid);
	if (stat(proc, &st)) {
		snprintf(err, errlen, "--pid %ld: no such process (no %s)", pid,
			 proc);
		return -1;
	}
	f->pid = true;
	f->tgid = pid;
	/* pid 1 of /proc is in the namespace whose pids /proc shows */
	if (!init_ns("/proc/1/ns/pid", TS_INIT_PID_NS_INO, &st)) {
		f->pidns_dev = st.st_dev;
		f->pidns_ino = st.st_ino;
	}
	return 0;
}
