// SPDX-License-Identifier: GPL-2.0
/*
 * nest-check SECONDS: a completion that lands inside another's adds to the
 * same device's figures on one CPU (op_add, bpf/account.bpf.h) must leave
 * both counted. ts_nest_loop (tests/tools/checks.bpf.c) counts completions
 * of a test slot in a loop on every CPU at once, while ts_nest_irq, on
 * block_rq_complete, counts one more at each completion of a real disk
 * (the caller keeps one busy): from its interrupt, it lands inside the
 * loop's adds now and then. The figures must equal the loops' rounds plus
 * the interrupts' count, and some of the latter must have found the adds
 * under way (nested_stats). Then the control: plain adds, as before
 * op_add, must lose some in the same time, or the check proved nothing.
 * Each part runs in one-second steps until enough interrupts nested, at
 * most SECONDS. Needs root. Prints "NAME RC MESSAGE" lines (RC 0: pass).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "truestat.h"
#include "checks.skel.h"

#define NEST_QID (TS_MAX_DEVS - 1)
#define ROUNDS 20000
#define ENOUGH 50 /* interrupts that nested (or updates lost) */

static struct checks_bpf *skel;
static volatile int running;

struct loop_thread {
	pthread_t th;
	int cpu;
	unsigned long runs;
};

static void *loop(void *arg)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	struct loop_thread *l = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(l->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (running &&
	       !bpf_prog_test_run_opts(bpf_program__fd(skel->progs.ts_nest_loop),
				       &run))
		l->runs++;
	return NULL;
}

/* The test slot's reads: summed over CPUs, and the nested ones alone. */
static void read_counts(int ncpus, __u64 *all, __u64 *nested)
{
	struct ts_dev_stats *per = calloc(ncpus, sizeof(*per));
	struct ts_nested_stats n = {};
	__u32 qid = NEST_QID;
	int cpu;

	*all = 0;
	if (per && !bpf_map_lookup_elem(bpf_map__fd(skel->maps.dev_stats),
					&qid, per))
		for (cpu = 0; cpu < ncpus; cpu++)
			*all += per[cpu].op[TS_OP_READ].ios;
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.nested_stats), &qid, &n);
	*nested = n.op[TS_OP_READ].ios;
	*all += *nested;
	free(per);
}

/* One second of loops on every CPU, the interrupts counted meanwhile. */
static unsigned long step(struct loop_thread *l, int ncpus)
{
	unsigned long rounds = 0;
	int i;

	running = 1;
	__atomic_store_n(&skel->bss->nest_check_on, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < ncpus; i++)
		pthread_create(&l[i].th, NULL, loop, &l[i]);
	sleep(1);
	running = 0;
	for (i = 0; i < ncpus; i++)
		pthread_join(l[i].th, NULL);
	__atomic_store_n(&skel->bss->nest_check_on, 0, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&skel->bss->nest_check_busy, __ATOMIC_SEQ_CST))
		sched_yield();
	for (i = 0; i < ncpus; i++)
		rounds += l[i].runs * ROUNDS;
	return rounds;
}

/*
 * Runs one part (@plain: the control) until ENOUGH interrupts nested (lost,
 * in the control) or @seconds; prints its line.
 */
static int part(const char *name, int plain, int ncpus, int seconds)
{
	struct loop_thread *l = calloc(ncpus, sizeof(*l));
	__u64 all = 0, nested = 0, want = 0, lost = 0, irqs;
	int s, i, rc;

	if (!l)
		return 1;
	skel->bss->nest_check_plain = plain;
	skel->bss->nest_check_irqs = 0;
	for (i = 0; i < ncpus; i++)
		l[i].cpu = i;
	for (s = 0; s < seconds; s++) {
		for (i = 0; i < ncpus; i++)
			l[i].runs = 0;
		want += step(l, ncpus);
		irqs = skel->bss->nest_check_irqs;
		read_counts(ncpus, &all, &nested);
		lost = want + irqs - all;
		if ((plain ? lost : nested) >= ENOUGH)
			break;
	}
	irqs = skel->bss->nest_check_irqs;
	if (plain)
		rc = !lost;
	else
		rc = lost || nested < ENOUGH;
	printf("%s %d %s: %llu loop rounds + %llu interrupts, %llu counted "
	       "(%llu lost); %llu nested in the loop's adds, in %d s\n",
	       name, rc, plain ? "plain adds" : "op_add",
	       (unsigned long long)want, (unsigned long long)irqs,
	       (unsigned long long)all, (unsigned long long)lost,
	       (unsigned long long)nested, s + (s < seconds));
	free(l);
	return rc;
}

/* Zeroes the test slot's figures, on every CPU and nested. */
static void clear_slot(int ncpus)
{
	struct ts_dev_stats *per = calloc(ncpus, sizeof(*per));
	struct ts_nested_stats n = {};
	__u32 qid = NEST_QID;

	if (per)
		bpf_map_update_elem(bpf_map__fd(skel->maps.dev_stats), &qid,
				    per, 0);
	bpf_map_update_elem(bpf_map__fd(skel->maps.nested_stats), &qid, &n, 0);
	free(per);
}

int main(int argc, char **argv)
{
	int ncpus = libbpf_num_possible_cpus(), seconds, rc;
	struct bpf_program *prog;
	struct bpf_link *link;

	seconds = argc > 1 ? atoi(argv[1]) : 0;
	if (seconds <= 0 || ncpus <= 0) {
		printf("nest_usage 1 usage: nest-check SECONDS (root)\n");
		return 1;
	}
	skel = checks_bpf__open();
	if (!skel) {
		printf("nest_open 1 cannot open the BPF object\n");
		return 1;
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog,
					  prog == skel->progs.ts_nest_loop ||
						  prog == skel->progs.ts_nest_irq);
	skel->bss->nest_check_rounds = ROUNDS;
	if (checks_bpf__load(skel)) {
		printf("nest_load 1 cannot load the test programs\n");
		checks_bpf__destroy(skel);
		return 1;
	}
	link = bpf_program__attach(skel->progs.ts_nest_irq);
	if (!link) {
		printf("nest_attach 1 cannot attach to block_rq_complete\n");
		checks_bpf__destroy(skel);
		return 1;
	}
	clear_slot(ncpus);
	rc = part("nest_exact", 0, ncpus, seconds);
	clear_slot(ncpus);
	rc |= part("nest_control_loses", 1, ncpus, seconds);
	bpf_link__destroy(link);
	checks_bpf__destroy(skel);
	return rc;
}
