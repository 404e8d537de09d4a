/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The load decision: from what the running kernel has (probed by
 * user/core/tracer.c in its BTF and with test loads), which programs truestat
 * loads, where their arguments are, what it cannot give there, or why it
 * cannot run at all.
 */
#ifndef TS_KLOAD_H
#define TS_KLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include "kfeatures.h"

/* The oldest kernel truestat runs on, in its refusals. */
#define TS_OLDEST_KERNEL "5.10"

struct ts_kfeatures {
	const char *release; /* uname -r */
	bool btf;	     /* the kernel's BTF was read */
	/* arguments of each hook's BTF prototype (btf_trace_*), -1: absent */
	int tp_args[TS_TP_COUNT];
	bool bio_bdev;	 /* struct bio has bi_bdev (5.12) */
	bool bio_disk;	 /* struct bio has bi_disk (before 5.12) */
	bool atomics;	 /* BPF atomic fetch-add, xchg, cmpxchg (5.12) */
	bool ringbuf;	 /* BPF_MAP_TYPE_RINGBUF (5.8) */
};

#define TS_UNAVAILABLE_MAX TS_TP_COUNT

struct ts_load_plan {
	bool refused;
	char why[256]; /* refused: the one line */
	bool locked;   /* the object whose atomic operations take locks */
	bool load[TS_TP_COUNT];
	unsigned char tp_shift[TS_TP_COUNT];
	int nunavailable; /* what is not followed here, one line each */
	char unavailable[TS_UNAVAILABLE_MAX][160];
};

/* The tracepoint of hook @tp ("block_rq_issue"). */
const char *ts_tp_name(enum ts_tp tp);
/* The hook a program's section names ("tp_btf/block_rq_issue"), or none:
 * TS_TP_COUNT. */
enum ts_tp ts_tp_of_section(const char *section);
/* Arguments of hook @tp's BTF prototype since 5.11 (the void * included). */
int ts_tp_args_now(enum ts_tp tp);
/* Decides for kernel @f; @light: --light (no bio programs needed). */
void ts_load_plan(const struct ts_kfeatures *f, bool light,
		  struct ts_load_plan *p);

#endif
