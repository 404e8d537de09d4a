// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>

#include "kfeatures.h"
#include "kload.h"

static const struct {
	const char *name;
	int args;
	bool required;
	bool bio;
	const char *lost;
} hooks[TS_TP_COUNT] = {
#define TS_HOOK(id, name, args, required, bio, lost)                   \
	[TS_TP_##id] = { name, args, required, bio, lost },
#include "hooks.def"
#undef TS_HOOK
};

const char *ts_tp_name(enum ts_tp tp)
{
	return tp < TS_TP_COUNT ? hooks[tp].name : "?";
}

enum ts_tp ts_tp_of_section(const char *section)
{
	const char *slash = strchr(section, '/');
	int tp;

	for (tp = 0; slash && tp < TS_TP_COUNT; tp++)
		if (!strcmp(slash + 1, hooks[tp].name))
			return tp;
	return TS_TP_COUNT;
}

int ts_tp_args_now(enum ts_tp tp)
{
	return tp < TS_TP_COUNT ? hooks[tp].args : -1;
}

static void refuse(const struct ts_kfeatures *f, struct ts_load_plan *p,
		   const char *missing)
{
	p->refused = true;
	snprintf(p->why, sizeof(p->why),
		 "Linux %s cannot run truestat: %s; truestat needs Linux "
		 TS_OLDEST_KERNEL " or later with BTF",
		 f->release ? f->release : "?", missing);
}

/* Hook @tp: where its arguments are, or why it cannot be followed. */
static void plan_hook(const struct ts_kfeatures *f, bool light,
		      enum ts_tp tp, struct ts_load_plan *p)
{
	int shift = f->tp_args[tp] - hooks[tp].args;
	char what[128];

	if (light && hooks[tp].bio)
		return;
	if (f->tp_args[tp] >= 0 && shift >= 0 && shift <= TS_TP_MAX_SHIFT) {
		p->load[tp] = true;
		p->tp_shift[tp] = shift;
		return;
	}
	if (f->tp_args[tp] >= 0)
		snprintf(what, sizeof(what), "its %s tracepoint takes %d "
			 "arguments, not %d to %d", hooks[tp].name,
			 f->tp_args[tp] - 1, hooks[tp].args - 1,
			 hooks[tp].args - 1 + TS_TP_MAX_SHIFT);
	else
		snprintf(what, sizeof(what), "no %s tracepoint in its BTF",
			 hooks[tp].name);
	if (hooks[tp].required) {
		if (!p->refused)
			refuse(f, p, what);
	} else if (p->nunavailable < TS_UNAVAILABLE_MAX) {
		snprintf(p->unavailable[p->nunavailable++],
			 sizeof(p->unavailable[0]), "%s (%s)", hooks[tp].lost,
			 what);
	}
}

void ts_load_plan(const struct ts_kfeatures *f, bool light,
		  struct ts_load_plan *p)
{
	int tp;

	memset(p, 0, sizeof(*p));
	if (!f->btf)
		return refuse(f, p, "no kernel BTF (CONFIG_DEBUG_INFO_BTF=y)");
	if (!f->bio_bdev && !f->bio_disk)
		return refuse(f, p, "struct bio has neither bi_bdev nor bi_disk");
	if (!f->ringbuf)
		return refuse(f, p, "no BPF ring buffer (Linux 5.8)");
	p->locked = !f->atomics;
	for (tp = 0; tp < TS_TP_COUNT; tp++)
		plan_hook(f, light, tp, p);
	if (p->refused)
		memset(p->load, 0, sizeof(p->load));
}
