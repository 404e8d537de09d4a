// SPDX-License-Identifier: GPL-2.0
/*
 * depth-race: the depth updates of bpf/truestat.bpf.c (program
 * ts_depth_check: depth_step's compare-and-swap of depth and stamp) run
 * from every CPU at once on one test entry, ROUNDS up-and-down pairs per
 * run, RUNS runs per CPU, so that the swaps lose races and retry; then the
 * level registers must hold a history that could have happened (time at
 * depth >= L never below that at depth >= L+1, never negative), the CPUs
 * must have been at depth 2 together, and the depth must be back at 0.
 * Needs root. Prints "NAME RC MESSAGE" lines (RC 0: pass).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "truestat.h"
#include "truestat.skel.h"
#include "depth.h"

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

int main(void)
{
	const char *tag = "depth_race";
	struct bpf_program *prog;
	struct truestat_bpf *skel;
	pthread_t th[64];
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), i, bad, err;
	__s64 worst, two;

	skel = truestat_bpf__open();
	if (!skel) {
		printf("%s_open 1 cannot open the BPF object\n", tag);
		return 1;
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.ts_depth_check);
	err = truestat_bpf__load(skel);
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
	bad = bad_levels(&skel->bss->depth_check_state, &worst);
	two = ts_level_time(skel->bss->depth_check_state.device_level[1], 0);
	printf("%s_history %d %d CPUs x %d up-down pairs: %d levels with more time than the level below or negative (worst %lld ns)\n",
	       tag, bad != 0, ncpu, ROUNDS * RUNS, bad, (long long)worst);
	printf("%s_together %d %.3f s at depth 2: the CPUs raced\n", tag,
	       two <= 0, two / 1e9);
	printf("%s_balanced %d depth after: %lld\n", tag,
	       ts_depth_of(skel->bss->depth_check_state.in_device) != 0,
	       (long long)ts_depth_of(skel->bss->depth_check_state.in_device));
	truestat_bpf__destroy(skel);
	return bad != 0;
}
