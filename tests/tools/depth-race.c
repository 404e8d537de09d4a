// SPDX-License-Identifier: GPL-2.0
/*
 * depth-race: the depth updates of tests/tools/checks.bpf.c (program
 * ts_depth_check: depth_step's compare-and-swap of depth and stamp) run
 * from every CPU at once on one test entry, ROUNDS up-and-down pairs per
 * run, RUNS runs per CPU, so that the swaps lose races and retry; then the
 * level registers must hold a history that could have happened (time at
 * depth >= L never below that at depth >= L+1, never negative), the CPUs
 * must have been at depth 2 together, and the depth must be back at 0.
 * Then the same with the object for kernels before 5.12, whose changes
 * take a lock and are left to its holder when it is held
 * (bpf/atomics.bpf.h): none may stay left once all have returned.
 * Last, a departure counted twice before an issue: the request must be
 * filed at depth 1 and counted in depth_below_zero.
 * Needs root. Prints "NAME RC MESSAGE" lines (RC 0: pass).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "truestat.h"
#include "checks.skel.h"
#include "checks-locked.skel.h"
#include "lib/depth.h"

#define ROUNDS 100000
#define RUNS 20

static int prog_fd;

static void *hammer(void *arg)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	CPU_SET((int)(long)arg, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (i = 0; i < RUNS; i++)
		bpf_prog_test_run_opts(prog_fd, &run);
	return NULL;
}

/* Levels whose time is above the level below's, or negative. */
static int bad_levels(const struct ts_dev_state *st, __s64 *worst)
{
	__s64 t[TS_LEVEL_SLOTS];
	int slot, bad = 0;

	*worst = 0;
	for (slot = 0; slot < TS_LEVEL_SLOTS; slot++)
		t[slot] = ts_level_time(st->device_level[slot], 0);
	for (slot = 0; slot < TS_LEVEL_SLOTS; slot++) {
		__s64 excess = slot ? t[slot] - t[slot - 1] : 0;

		if (t[slot] < 0)
			excess = -t[slot];
		if (excess > 0) {
			bad++;
			*worst = excess > *worst ? excess : *worst;
		}
	}
	return bad;
}

/* What makes bpf_ktime_get_ns() + it start at 1 s from now. */
static __u64 early_clock_offset(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return 1000000000ULL - (ts.tv_sec * 1000000000ULL + ts.tv_nsec);
}

/* Offset of global @name in @btf's .bss, or -1. */
static long bss_offset(const struct btf *btf, const char *name)
{
	int sec = btf__find_by_name_kind(btf, ".bss", BTF_KIND_DATASEC), i;
	const struct btf_var_secinfo *v;
	const struct btf_type *t;

	if (sec < 0)
		return -1;
	t = btf__type_by_id(btf, sec);
	v = btf_var_secinfos(t);
	for (i = 0; i < btf_vlen(t); i++, v++)
		if (!strcmp(btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off), name))
			return v->offset;
	return -1;
}

/*
 * Whether @obj's .bss lies as this skeleton's: the locked object is read
 * and written through it, so each global the tool uses must be where the
 * skeleton has it (one more global in one object moved them once).
 */
static bool skeleton_layout(struct bpf_object *obj)
{
	const struct btf *btf = bpf_object__btf(obj);

	return btf &&
	       bss_offset(btf, "depth_check_state") ==
		       offsetof(struct checks_bpf__bss, depth_check_state) &&
	       bss_offset(btf, "depth_check_rounds") ==
		       offsetof(struct checks_bpf__bss, depth_check_rounds) &&
	       bss_offset(btf, "depth_check_below") ==
		       offsetof(struct checks_bpf__bss, depth_check_below) &&
	       bss_offset(btf, "depth_check_slot") ==
		       offsetof(struct checks_bpf__bss, depth_check_slot) &&
	       bss_offset(btf, "depth_check_depth") ==
		       offsetof(struct checks_bpf__bss, depth_check_depth);
}

/* The object, the locked one (@locked) opened through the same skeleton. */
static struct checks_bpf *open_object(bool locked)
{
	struct checks_bpf *obj;

	if (!locked)
		return checks_bpf__open();
	obj = calloc(1, sizeof(*obj));
	if (!obj || checks_bpf__create_skeleton(obj))
		return NULL;
	obj->skeleton->data =
		(void *)checks_locked_bpf__elf_bytes(&obj->skeleton->data_sz);
	if (bpf_object__open_skeleton(obj->skeleton, NULL)) {
		checks_bpf__destroy(obj);
		return NULL;
	}
	return obj;
}

/* The test entry: a global, or slot 0 of dev_state in the locked object. */
static void entry_of(struct checks_bpf *skel, bool locked,
		     struct ts_dev_state *st)
{
	__u32 zero = 0;

	if (!locked)
		*st = skel->bss->depth_check_state;
	else
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.dev_state), &zero, st);
}

static int race(const char *tag, bool locked)
{
	struct bpf_program *prog;
	struct checks_bpf *skel;
	struct ts_dev_state st;
	pthread_t th[64];
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), i, bad, err;
	__s64 worst, two;

	skel = open_object(locked);
	if (!skel) {
		printf("%s_open 1 cannot open the BPF object\n", tag);
		return 1;
	}
	if (!skeleton_layout(skel->obj)) {
		printf("%s_layout 1 the object's globals do not lie where the skeleton has them\n",
		       tag);
		checks_bpf__destroy(skel);
		return 1;
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.ts_depth_check);
	/* the clock as in a kernel's first second: below 2^40 ns, where a
	 * change's count read without its clock reading once passed as late */
	skel->rodata->test_clock_offset = early_clock_offset();
	err = checks_bpf__load(skel);
	if (err) {
		printf("%s_load 1 %s\n", tag, strerror(-err));
		return 1;
	}
	skel->bss->depth_check_rounds = ROUNDS;
	prog_fd = bpf_program__fd(skel->progs.ts_depth_check);
	ncpu = ncpu < 2 ? 2 : ncpu > 64 ? 64 : ncpu;
	for (i = 0; i < ncpu; i++)
		pthread_create(&th[i], NULL, hammer, (void *)(long)i);
	for (i = 0; i < ncpu; i++)
		pthread_join(th[i], NULL);
	entry_of(skel, locked, &st);
	bad = bad_levels(&st, &worst);
	two = ts_level_time(st.device_level[1], 0);
	printf("%s_history %d %d CPUs x %d up-down pairs: %d levels with more time than the level below or negative (worst %lld ns)\n",
	       tag, bad != 0, ncpu, ROUNDS * RUNS, bad, (long long)worst);
	printf("%s_together %d %.3f s at depth 2: the CPUs raced\n", tag,
	       two <= 0, two / 1e9);
	printf("%s_balanced %d depth after: %lld\n", tag,
	       ts_depth_of(st.in_device) != 0,
	       (long long)ts_depth_of(st.in_device));
	if (locked)
		printf("%s_none_left %d changes left undone: %llu rises, %llu falls (clock sums %llu, %llu)\n",
		       tag, st.device_deferred[0] || st.device_deferred[1] ||
			       st.device_deferred[2] || st.device_deferred[3] ||
			       st.device_deferred[4] != st.device_deferred[5],
		       (unsigned long long)st.device_deferred[0],
		       (unsigned long long)st.device_deferred[2],
		       (unsigned long long)st.device_deferred[1],
		       (unsigned long long)st.device_deferred[3]);
	checks_bpf__destroy(skel);
	return bad != 0;
}

/*
 * A departure counted twice before an issue (depth_check_below): the
 * request is filed at depth 1, and the issue counted in TS_EV_DEPTH_BELOW.
 */
static int below_zero(void)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	int ncpu = libbpf_num_possible_cpus();
	struct ts_dev_stats *stats = calloc(ncpu > 0 ? ncpu : 1, sizeof(*stats));
	struct bpf_program *prog;
	struct checks_bpf *skel;
	__u64 below = 0;
	__u32 zero = 0;
	int i, bad;

	skel = open_object(false);
	if (!skel) {
		printf("depth_below_open 1 cannot open the BPF object\n");
		free(stats);
		return 1;
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.ts_depth_check);
	if (checks_bpf__load(skel)) {
		printf("depth_below_load 1 cannot load the BPF object\n");
		checks_bpf__destroy(skel);
		free(stats);
		return 1;
	}
	skel->bss->depth_check_below = 1;
	bpf_prog_test_run_opts(bpf_program__fd(skel->progs.ts_depth_check), &run);
	if (stats &&
	    !bpf_map_lookup_elem(bpf_map__fd(skel->maps.dev_stats), &zero, stats))
		for (i = 0; i < ncpu; i++)
			below += stats[i].events[TS_EV_DEPTH_BELOW];
	bad = skel->bss->depth_check_slot.depth_class != ts_depth_class(1) ||
	      below != 1;
	printf("depth_below_filed %d depth %lld at issue: filed in depth class %u (depth 1's: %u), depth_below_zero %llu (1 expected)\n",
	       bad, (long long)skel->bss->depth_check_depth,
	       skel->bss->depth_check_slot.depth_class, ts_depth_class(1),
	       (unsigned long long)below);
	checks_bpf__destroy(skel);
	free(stats);
	return bad;
}

int main(void)
{
	int bad = race("depth_race", false) | below_zero();

	return race("depth_race_locked", true) || bad;
}
