/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What truestat needs from the running kernel, shared by the BPF side and
 * the loader: the block tracepoints it follows (the index of the request
 * or bio among their arguments moved between kernels) and the sweep's
 * chunks, which the loader runs over slot ranges.
 */
#ifndef TS_KFEATURES_H
#define TS_KFEATURES_H

/* The hooks, in the order they attach (include/hooks.def). */
enum ts_tp {
#define TS_HOOK(id, ...) TS_TP_##id,
#include "hooks.def"
#undef TS_HOOK
	TS_TP_COUNT,
};

/* Further an argument may have moved: 5.10's block_bio_backmerge has 2. */
#define TS_TP_MAX_SHIFT 2

/*
 * The sweep (ts_sweep), run by the loader with BPF_PROG_TEST_RUN, one part
 * per run: its first argument names the part, its second how many slots or
 * keys the loader put in sweep_keys. Bounded loops, no bpf_loop: every
 * kernel verifies it.
 */
enum ts_sweep_part {
	TS_SWEEP_BEGIN, /* each device: suspects and oldest reset */
	TS_SWEEP_SLOTS, /* the request slots in sweep_keys[0, second arg) */
	TS_SWEEP_DURABLE, /* the keys in sweep_keys[0, second arg) */
	TS_SWEEP_END, /* each device: peaks taken */
	TS_SWEEP_RESTAMP, /* each device: depth words restamped */
};

#define TS_SWEEP_KEYS 256

#endif
