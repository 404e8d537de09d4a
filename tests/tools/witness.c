// SPDX-License-Identifier: GPL-2.0
/*
 * witness: an independent count of the completions truestat may miss. For
 * one disk, per-CPU counters on block_rq_issue, block_rq_requeue,
 * block_rq_complete, block_io_start and block_io_done (tp_btf, see
 * witness.bpf.c), read together with the disk's /proc/diskstats at the
 * start and at the end of one window; printed as one JSON object.
 *
 * shortfall = diskstats completions - complete - io_start_empty, per
 * diskstats group: the requests diskstats saw end whose ending
 * block_rq_complete ran no program here. Empty preflush writes (fsync on a
 * disk with a write cache) are counted by diskstats but never issued;
 * their count is taken on the issue side (block_io_start), which loses
 * nothing. Ends of flush sequences (a zero-byte block_rq_complete of a
 * write whose data completion came before) are left out, as truestat
 * leaves them out.
 *
 * Each edge of the window is a read of diskstats, the counters, and
 * diskstats again, repeated until both diskstats reads agree ("settled"),
 * so that no completion was being accounted while the counters were read.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "witness.skel.h"

#define NR_GROUPS 4
#define SETTLE_TRIES 10000

static const char *const group_names[NR_GROUPS] = { "read", "write",
						    "discard", "flush" };

/* The order of enum w_kind in witness.bpf.c. */
enum kind { ISSUE, REQUEUE, COMPLETE, COMPLETE_EMPTY, PARTIAL, BYTES,
	    IO_START, IO_START_EMPTY, IO_DONE, NR_KINDS };

static const char *const kind_names[NR_KINDS] = {
	"issue", "requeue", "complete", "complete_empty", "partial", "bytes",
	"io_start", "io_start_empty", "io_done",
};

static const char usage[] =
	"Usage: witness [-h] DEVICE [SECONDS]\n"
	"Counts, for one whole disk (e.g. vda, loop0, /dev/loop0), how many times\n"
	"block_rq_issue, block_rq_requeue, block_rq_complete, block_io_start and\n"
	"block_io_done ran a BPF program (tp_btf, per-CPU counters, nothing else),\n"
	"until SIGINT or SIGTERM, or for SECONDS; then prints one JSON object: the\n"
	"counts per diskstats group (read, write, discard, flush), the disk's\n"
	"/proc/diskstats deltas over the same window, and the shortfall:\n"
	"completions diskstats counted that no completion program saw.\n"
	"A block_rq_complete with nr_bytes < data_len is partial, as in truestat:\n"
	"the request is counted when it ends. Says \"witness: counting\" on stderr\n"
	"once attached. Needs root. Exit status 0, 1 on failure, 2 on bad usage.\n";

struct disk {
	char name[64];
	unsigned int major, minor;
};

struct diskstats {
	__u64 ios[NR_GROUPS];
	__u64 sectors[NR_GROUPS];
	__u64 in_flight;
};

struct sample {
	__u64 c[NR_KINDS][NR_GROUPS];
	struct diskstats ds;
	bool settled;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* One line on stderr; returns @rc, the exit status. */
static int fail(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("witness: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return rc;
}

/* @arg: "vda" or "/dev/vda"; a whole disk, from /sys/block/NAME/dev. */
static int resolve(const char *arg, struct disk *d)
{
	char path[160];
	FILE *f;
	int n;

	if (!strncmp(arg, "/dev/", 5))
		arg += 5;
	if (!*arg || strchr(arg, '/') || strlen(arg) >= sizeof(d->name))
		return fail(2, "not a disk name: '%s'", arg);
	strcpy(d->name, arg);
	snprintf(path, sizeof(path), "/sys/block/%s/dev", arg);
	f = fopen(path, "r");
	if (!f) {
		snprintf(path, sizeof(path), "/sys/class/block/%s/partition", arg);
		if (!access(path, F_OK))
			return fail(2, "%s is a partition: give its whole disk", arg);
		return fail(2, "no disk %s (not in /sys/block)", arg);
	}
	n = fscanf(f, "%u:%u", &d->major, &d->minor);
	fclose(f);
	if (n != 2)
		return fail(1, "cannot read /sys/block/%s/dev", arg);
	return 0;
}

/* SECONDS: a positive number; 0 when absent (until a signal). */
static int parse_seconds(const char *arg, double *secs)
{
	char *end;

	errno = 0;
	*secs = strtod(arg, &end);
	if (errno || end == arg || *end || !(*secs > 0) || *secs > 1e7)
		return fail(2, "SECONDS must be a positive number, not '%s'", arg);
	return 0;
}

static int read_diskstats(const struct disk *d, struct diskstats *s)
{
	unsigned long long v[17];
	unsigned int maj, min;
	char line[512];
	FILE *f = fopen("/proc/diskstats", "r");
	int found = -1;

	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %u %*s %llu %llu %llu %llu %llu %llu %llu %llu "
			   "%llu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &maj, &min, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			   &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12],
			   &v[13], &v[14], &v[15], &v[16]) != 19 ||
		    maj != d->major || min != d->minor)
			continue;
		*s = (struct diskstats){
			.ios = { v[0], v[4], v[11], v[15] },
			.sectors = { v[2], v[6], v[13], 0 },
			.in_flight = v[8],
		};
		found = 0;
	}
	fclose(f);
	return found;
}

static int read_counters(int fd, int ncpus, __u64 c[NR_KINDS][NR_GROUPS])
{
	__u64 percpu[ncpus];
	__u32 k;
	int cpu;

	for (k = 0; k < NR_KINDS * NR_GROUPS; k++) {
		if (bpf_map_lookup_elem(fd, &k, percpu))
			return -1;
		c[k / NR_GROUPS][k % NR_GROUPS] = 0;
		for (cpu = 0; cpu < ncpus; cpu++)
			c[k / NR_GROUPS][k % NR_GROUPS] += percpu[cpu];
	}
	return 0;
}

/* Counters between two diskstats reads, until those agree (or give up). */
static int take(const struct disk *d, int fd, int ncpus, struct sample *s)
{
	struct diskstats after;
	int i;

	for (i = 0; i < SETTLE_TRIES; i++) {
		if (read_diskstats(d, &s->ds) || read_counters(fd, ncpus, s->c) ||
		    read_diskstats(d, &after))
			return -1;
		s->settled = !memcmp(s->ds.ios, after.ios, sizeof(after.ios)) &&
			     !memcmp(s->ds.sectors, after.sectors,
				     sizeof(after.sectors));
		if (s->settled)
			break;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wait_window(double secs)
{
	double end = now_s() + secs;
	struct timespec nap = { 0, 50 * 1000 * 1000 };

	while (!stop && (!secs || now_s() < end))
		nanosleep(&nap, NULL);
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* block_io_start/done came with 6.5: left out (null) where they are absent. */
static bool has_tracepoint(const char *name)
{
	return libbpf_find_vmlinux_btf_id(name, BPF_TRACE_RAW_TP) > 0;
}

static void print_groups(const char *key, const long long v[NR_GROUPS],
			 bool last)
{
	long long all = 0;
	int g;

	printf("\"%s\":{", key);
	for (g = 0; g < NR_GROUPS; g++) {
		printf("\"%s\":%lld,", group_names[g], v[g]);
		all += v[g];
	}
	printf("\"all\":%lld}%s", all, last ? "" : ",");
}

static void print_kinds(const struct sample *a, const struct sample *b,
			bool io_tps)
{
	long long v[NR_GROUPS];
	int k, g;

	printf("\"bpf\":{");
	for (k = 0; k < NR_KINDS; k++) {
		bool io = k == IO_START || k == IO_START_EMPTY || k == IO_DONE;

		if (io && !io_tps) {
			printf("\"%s\":null%s", kind_names[k],
			       k == NR_KINDS - 1 ? "" : ",");
			continue;
		}
		for (g = 0; g < NR_GROUPS; g++)
			v[g] = b->c[k][g] - a->c[k][g];
		print_groups(kind_names[k], v, k == NR_KINDS - 1);
	}
	printf("},");
}

static void print_report(const struct disk *d, const struct sample *a,
			 const struct sample *b, double secs, bool io_tps)
{
	long long ios[NR_GROUPS], bytes[NR_GROUPS], s[NR_GROUPS], sb[NR_GROUPS];
	int g;

	for (g = 0; g < NR_GROUPS; g++) {
		ios[g] = b->ds.ios[g] - a->ds.ios[g];
		bytes[g] = (b->ds.sectors[g] - a->ds.sectors[g]) * 512;
		s[g] = ios[g] - (b->c[COMPLETE][g] - a->c[COMPLETE][g]) -
		       (b->c[IO_START_EMPTY][g] - a->c[IO_START_EMPTY][g]);
		sb[g] = bytes[g] - (b->c[BYTES][g] - a->c[BYTES][g]);
	}
	printf("{\"device\":\"%s\",\"major\":%u,\"minor\":%u,\"seconds\":%.3f,",
	       d->name, d->major, d->minor, secs);
	printf("\"settled\":%s,", a->settled && b->settled ? "true" : "false");
	print_kinds(a, b, io_tps);
	printf("\"diskstats\":{");
	print_groups("ios", ios, false);
	print_groups("bytes", bytes, false);
	printf("\"in_flight_start\":%llu,\"in_flight_end\":%llu},",
	       (unsigned long long)a->ds.in_flight,
	       (unsigned long long)b->ds.in_flight);
	print_groups("shortfall", s, false);
	print_groups("shortfall_bytes", sb, true);
	printf("}\n");
}

static int run(const struct disk *d, double secs)
{
	struct witness_bpf *skel;
	struct sample a, b;
	bool io_tps = has_tracepoint("block_io_start") &&
		      has_tracepoint("block_io_done");
	int ncpus = libbpf_num_possible_cpus(), fd, err;
	double t0;

	skel = witness_bpf__open();
	if (!skel || ncpus <= 0)
		return fail(1, "cannot open the BPF object");
	skel->rodata->target_dev = d->major << 20 | d->minor;
	bpf_program__set_autoload(skel->progs.w_io_start, io_tps);
	bpf_program__set_autoload(skel->progs.w_io_done, io_tps);
	err = witness_bpf__load(skel);
	if (!err)
		err = witness_bpf__attach(skel);
	if (err) {
		witness_bpf__destroy(skel);
		return fail(1, "cannot load or attach: %s", strerror(-err));
	}
	fd = bpf_map__fd(skel->maps.counters);
	err = take(d, fd, ncpus, &a);
	t0 = now_s();
	if (!err) {
		fprintf(stderr, "witness: counting %s (%u:%u)\n", d->name,
			d->major, d->minor);
		wait_window(secs);
		err = take(d, fd, ncpus, &b);
	}
	if (!err)
		print_report(d, &a, &b, now_s() - t0, io_tps);
	witness_bpf__destroy(skel);
	if (err)
		return fail(1, "cannot read the counters or /proc/diskstats "
			    "(did %s go away?)", d->name);
	return fflush(stdout) ? fail(1, "cannot write: %s", strerror(errno)) : 0;
}

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	struct disk d;
	double secs = 0;
	int rc;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc < 2 || argc > 3)
		return fail(2, "give DEVICE [SECONDS] (--help: usage)");
	if (argv[1][0] == '-')
		return fail(2, "unknown option '%s' (--help: usage)", argv[1]);
	rc = resolve(argv[1], &d);
	if (!rc && argc == 3)
		rc = parse_seconds(argv[2], &secs);
	if (rc)
		return rc;
	if (geteuid())
		return fail(1, "needs root (loads BPF programs)");
	libbpf_set_print(silent);
	install_signals();
	return run(&d, secs);
}
