/* SPDX-License-Identifier: GPL-2.0 */
/* Which disks truestat traces, and their names (cli/disks.c). */
#ifndef TS_CLI_DISKS_H
#define TS_CLI_DISKS_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/devices.h"
#include "core/report.h"
#include "core/tracer.h"
#include "opts.h"

/* -N: device-mapper disks by their /dev/mapper names. */
void ts_cli_disks_dm_names(bool on);

/* The most disks traced at once (tests lower it; TS_MAX_DEVS else). */
void ts_cli_disks_max(unsigned int most);

/*
 * The name of disk @major:@minor; one gone by now keeps the name it had at
 * an earlier report (major:minor if none saw it). A ts_name_fn.
 */
void ts_cli_disk_name(unsigned int major, unsigned int minor, char *buf,
		      size_t len, struct ts_stack *stack);

/* -d's disks and their stacks' members into @kdevs: how many; a bad -d
 * is one line and exit 2. */
int ts_cli_resolve_devices(const struct ts_opts *o, unsigned int *kdevs);

/* --exclude, against the @n disks of @kdevs (0: every disk). */
void ts_cli_resolve_excludes(const struct ts_opts *o,
			     const unsigned int *kdevs, int n);
const struct ts_exclusion *ts_cli_exclusion(void);

/* --light without -d: the bio-based disks no report can cover. */
void ts_cli_find_untraceable(const struct ts_opts *o);

/* The disks refused a slot so far, said on stderr as they come. */
void ts_cli_find_refused(struct ts_tracer *t);

/* -v: each disk of @s as it is first traced. */
void ts_cli_say_new_disks(const struct ts_snapshot *s);

/* What the reports say of these disks. */
void ts_cli_disks_facts(struct ts_report *r);

#endif
