// SPDX-License-Identifier: GPL-2.0
/* The programs attached in the order their events need; stacked devices. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "loader.h"

/* Whether the sysfs block device at @dir is stacked on others (slaves/). */
static bool stacked_on(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *m;
	bool found = false;
	DIR *slaves;

	snprintf(path, sizeof(path), "%s/slaves", dir);
	slaves = opendir(path);
	if (!slaves)
		return false;
	while (!found && (m = readdir(slaves)))
		found = m->d_name[0] != '.';
	closedir(slaves);
	return found;
}

/* Any disk stacked on others (md, dm) into @name; false: none. */
static bool any_stacked(char *name, size_t len)
{
	char path[PATH_MAX];
	struct dirent *e;
	bool found = false;
	DIR *d;

	d = opendir("/sys/block");
	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s", e->d_name);
		found = stacked_on(path);
		if (found)
			snprintf(name, len, "%s", e->d_name);
	}
	closedir(d);
	return found;
}

/* The name of the device sysfs link @path points to, into @name. */
static void link_name(const char *path, char *name, size_t len)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	const char *base;

	target[n > 0 ? n : 0] = '\0';
	base = strrchr(target, '/');
	snprintf(name, len, "%s", base ? base + 1 : path);
}

/*
 * Whether a traced disk is stacked on others, its name into @name. -d
 * traced the chosen disks and the members of those stacked (their
 * stacks): block_bio_remap is followed only when one of them is stacked.
 * A traced member whose stacked device is not traced gains nothing from
 * it (the remap links a member bio only to a bio of a traced stacked
 * device), and a partition's every I/O fires it too: on an LVM host a
 * plain disk traced alone would pay a fourth program per I/O. Without
 * -d every disk is traced: any stacked disk on the host. Looked at again
 * at every snapshot: a device stacked later (a dm table loaded, a new
 * dm device without -d) switches it on.
 */
static bool stack_traced(const struct ts_tracer *t, char *name, size_t len)
{
	char path[PATH_MAX];
	int i;

	if (!t->nkdevs)
		return any_stacked(name, len);
	for (i = 0; i < t->nkdevs; i++) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u",
			 t->kdevs[i] >> 20, t->kdevs[i] & 0xfffff);
		if (stacked_on(path)) {
			link_name(path, name, len);
			return true;
		}
	}
	return false;
}

/* Appends " @name" to the list in @buf. */
static void add_name(char *buf, size_t len, const char *name)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, " %s", name);
}

/*
 * Attaches the loaded programs in the order of include/hooks.def, all but
 * block_bio_remap's (follow_stacks).
 */
int tracer_attach_in_order(struct ts_tracer *t)
{
	struct bpf_program *prog;
	struct bpf_link *link;
	char names[512] = "";
	int tp;

	for (tp = 0; tp < TS_TP_REMAP; tp++) {
		bpf_object__for_each_program(prog, t->skel->obj) {
			if (!bpf_program__autoload(prog) || (int)tracer_hook_of(prog) != tp)
				continue;
			link = bpf_program__attach(prog);
			if (!link)
				return -errno;
			if (t->nlinks == TS_MAX_LINKS) {
				bpf_link__destroy(link);
				return -E2BIG;
			}
			t->links[t->nlinks++] = link;
			add_name(names, sizeof(names), bpf_program__name(prog));
		}
		/* requests allocated from now on have their issue traced */
		if (tp == TS_TP_ISSUE)
			t->skel->data->issue_traced_ns = mono_ns();
	}
	if (t->verbose)
		fprintf(stderr, "truestat: programs attached:%s\n", names);
	return 0;
}

/*
 * Attaches the block_bio_remap program once a traced disk is stacked
 * (stack_traced); -v says so.
 */
void tracer_follow_stacks(struct ts_tracer *t)
{
	struct bpf_program *prog;
	char name[NAME_MAX + 1];

	if (t->remap || !stack_traced(t, name, sizeof(name)))
		return;
	bpf_object__for_each_program(prog, t->skel->obj) {
		if (!bpf_program__autoload(prog) || tracer_hook_of(prog) != TS_TP_REMAP)
			continue;
		t->remap = bpf_program__attach(prog);
		if (t->remap && t->verbose)
			fprintf(stderr, "truestat: programs attached: %s (%s is stacked)\n",
				bpf_program__name(prog), name);
		return;
	}
}
