// SPDX-License-Identifier: GPL-2.0
/*
 * Which disks: -d's (with their stacks), --exclude's, those no report can
 * cover, those refused a slot, and each disk's name (-N: device-mapper
 * names), for the reports and stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "disks.h"
#include "lib/devices.h"

/* -N: device-mapper disks by their /dev/mapper names. */
static bool dm_names;

/*
 * The name of disk @major:@minor; one gone by now keeps the name it had at
 * an earlier report (major:minor if none saw it).
 */
void ts_cli_disk_name(unsigned int major, unsigned int minor, char *buf,
		     size_t len, struct ts_stack *stack)
{
	static struct {
		unsigned int kdev;
		char name[32];
	} seen[TS_MAX_DEVS];
	unsigned int kdev = ts_kdev(major, minor), i = kdev % TS_MAX_DEVS;

	if (ts_disk_name("/sys", major, minor, buf, len)) {
		seen[i].kdev = kdev;
		snprintf(seen[i].name, sizeof(seen[i].name), "%s", buf);
	} else if (seen[i].kdev == kdev && seen[i].name[0]) {
		snprintf(buf, len, "%s", seen[i].name);
	}
	ts_disk_stack("/sys", buf, stack);
	if (!dm_names)
		return;
	ts_disk_dm_rename("/sys", buf, len);
	ts_stack_dm_rename("/sys", stack);
}

int ts_cli_resolve_devices(const struct ts_opts *o, unsigned int *kdevs)
{
	struct ts_disk disk;
	char err[768];
	int i, n = 0;

	for (i = 0; i < o->ndevices; i++) {
		if (ts_disk_resolve("/sys", o->devices[i], &disk, err,
				    sizeof(err)))
			ts_cli_die(EXIT_USAGE, err);
		if (disk.bio_based && o->light) {
			snprintf(err, sizeof(err),
				 "cannot trace %s with --light: it is bio-based (no request queue, as zram, md and device-mapper disks), and --light does not attach the block_bio_* tracepoints that trace it",
				 disk.name);
			ts_cli_die(EXIT_USAGE, err);
		}
		if (disk.was_partition)
			fprintf(stderr,
				"truestat: %s is a partition: tracing its disk %s\n",
				o->devices[i], disk.name);
		/* a stacked device with its members: the report shows the stack */
		n = ts_disk_add_stack("/sys", disk.major, disk.minor, kdevs, n,
				      TS_MAX_DEVS);
		if (n < 0) {
			snprintf(err, sizeof(err),
				 "too many disks to trace (the limit is %d)",
				 TS_MAX_DEVS);
			ts_cli_die(EXIT_USAGE, err);
		}
	}
	return n;
}

/*
 * --exclude: the disks it leaves out (those that exist at the start), the
 * globs that matched none, and whether any disk is left to trace.
 */
static struct ts_exclusion exclusion;
static char unmatched[TS_MAX_EXCLUDES * (TS_GLOB_LEN + 16)];
static bool none_left;

/* Whether every disk of the @n in @kdevs (0: every disk) is excluded. */
static bool all_excluded(const unsigned int *kdevs, int n)
{
	int i, j;

	if (!n)
		return exclusion.n == exclusion.ndisks;
	for (i = 0; i < n; i++) {
		for (j = 0; j < exclusion.n && exclusion.kdevs[j] != kdevs[i];)
			j++;
		if (j == exclusion.n)
			return false;
	}
	return true;
}

void ts_cli_resolve_excludes(const struct ts_opts *o,
			     const unsigned int *kdevs, int n)
{
	size_t used = 0;
	int g;

	if (!o->nexcludes)
		return;
	exclusion.nglobs = o->nexcludes;
	memcpy(exclusion.globs, o->excludes, sizeof(exclusion.globs));
	if (ts_disk_exclude("/sys", &exclusion))
		ts_cli_die(EXIT_FAILURE,
			   "cannot list the disks in /sys/block for --exclude");
	for (g = 0; g < o->nexcludes; g++)
		if (!exclusion.matched[g])
			used += snprintf(unmatched + used, sizeof(unmatched) - used,
					 "%s%s", used ? " " : "", o->excludes[g]);
	none_left = exclusion.n && all_excluded(kdevs, n);
	if (o->verbose && exclusion.n)
		fprintf(stderr, "truestat: --exclude: not tracing %d disk%s: %s\n",
			exclusion.n, exclusion.n == 1 ? "" : "s",
			exclusion.names);
	if (unmatched[0])
		fprintf(stderr, "truestat: --exclude matches no disk: %s\n",
			unmatched);
}

/*
 * The disks no report can cover, named in every report: bio-based ones
 * under --light, which does not follow bios.
 */
static char not_traced[512];

void ts_cli_find_untraceable(const struct ts_opts *o)
{
	if (o->ndevices || !o->light)
		return;
	ts_disk_list("/sys", true, not_traced, sizeof(not_traced));
	if (!strcmp(not_traced, "none") || !strncmp(not_traced, "none found", 10))
		not_traced[0] = '\0';
}

/*
 * The disks refused a slot (more than max_devs traced at once), named in
 * every report from then on, and said on stderr as they come.
 */
static char no_room[1024];
static int nrefused;
static bool said_more;

static unsigned int max_devs = TS_MAX_DEVS;

void ts_cli_disks_dm_names(bool on)
{
	dm_names = on;
}

void ts_cli_disks_max(unsigned int most)
{
	max_devs = most;
}

const struct ts_exclusion *ts_cli_exclusion(void)
{
	return &exclusion;
}

void ts_cli_disks_facts(struct ts_report *r)
{
	r->not_traced = not_traced;
	r->no_room = no_room;
	r->max_devs = max_devs;
	r->excluded = exclusion.names;
	r->nexcluded = exclusion.n;
	r->exclude_unmatched = unmatched;
	r->none_left = none_left;
}

void ts_cli_find_refused(struct ts_tracer *t)
{
	unsigned int kdevs[64];
	size_t used = 0;
	char name[64];
	bool more;
	int n, i;

	n = ts_tracer_untraced(t, kdevs, 64, &more);
	if (n == nrefused && (!more || said_more))
		return;
	for (i = 0; i < n; i++) {
		ts_disk_name("/sys", kdevs[i] >> 20, kdevs[i] & 0xfffff, name,
			     sizeof(name));
		if (i >= nrefused)
			fprintf(stderr, "truestat: not tracing %s: %u disks traced already, the most at once\n",
				name, max_devs);
		if (used + strlen(name) + 8 < sizeof(no_room))
			used += snprintf(no_room + used, sizeof(no_room) - used,
					 "%s%s", used ? " " : "", name);
	}
	if (more && !said_more)
		fprintf(stderr, "truestat: more disks not traced than named\n");
	said_more |= more;
	nrefused = n;
}

/*
 * -v: each disk as it is first traced (read by a report or a scrape), with
 * its queue id and slot (a disk is its slot's claim: a new disk can get a
 * gone one's queue back).
 */
void ts_cli_say_new_disks(const struct ts_snapshot *s)
{
	static __u64 said[TS_MAX_DEVS];
	char name[64];
	int i;

	for (i = 0; i < s->ndev; i++) {
		const struct ts_dev_snap *d = &s->dev[i];

		if (d->untraced || d->qid >= TS_MAX_DEVS ||
		    said[d->qid] == d->claimed_ns)
			continue;
		said[d->qid] = d->claimed_ns;
		ts_disk_name("/sys", d->kdev >> 20, d->kdev & 0xfffff, name,
			     sizeof(name));
		fprintf(stderr, "truestat: tracing %s (queue id %u) in slot %u\n",
			name, d->queue_id, d->qid);
	}
}

