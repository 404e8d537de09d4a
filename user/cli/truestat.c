// SPDX-License-Identifier: GPL-2.0
/*
 * truestat: per disk and direction, queue time, service time and the
 * device's true concurrency, from the block tracepoints.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "lib/devices.h"
#include "output/heatmap.h"
#include "exporter/httpd.h"
#include "exporter/webauth.h"
#include "features/slow.h"
#include "features/who.h"
#include "core/report_parts.h"
#include "opts.h"
#include "output/output.h"
#include "output/prom.h"
#include "core/report.h"
#include "core/tracer.h"

#include "cli.h"
#include "disks.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

void ts_cli_die(int code, const char *msg)
{
	fprintf(stderr, "truestat: %s\n", msg);
	exit(code);
}


/* Root, or CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN. */
static void check_privileges(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { 0 };
	char msg[160];
	bool bpf, perfmon;

	if (syscall(SYS_capget, &hdr, data))
		return; /* let the load itself fail with its own reason */
#define HAS(cap) (data[(cap) / 32].effective & (1U << ((cap) % 32)))
	if (HAS(CAP_SYS_ADMIN))
		return;
	bpf = HAS(CAP_BPF);
	perfmon = HAS(CAP_PERFMON);
#undef HAS
	if (bpf && perfmon)
		return;
	snprintf(msg, sizeof(msg),
		 "needs root, or CAP_BPF and CAP_PERFMON (missing:%s%s)",
		 bpf ? "" : " CAP_BPF", perfmon ? "" : " CAP_PERFMON");
	ts_cli_die(EXIT_FAILURE, msg);
}

static bool verbose;

/* The signal mask while waiting: the stop signals let in. */
static sigset_t wait_mask;

/*
 * The stop signals are blocked but inside the waits (ppoll with
 * wait_mask): one that comes between the check of stop_signal and the
 * wait ends that wait, and none interrupts a write to stdout (SA_RESTART
 * in case one ever does).
 */
static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
	const int n = sizeof(stop_signals) / sizeof(stop_signals[0]);
	sigset_t block;
	int i;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (i = 0; i < n; i++) {
		sigaction(stop_signals[i], &sa, NULL);
		sigaddset(&block, stop_signals[i]);
	}
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
	for (i = 0; i < n; i++)
		sigdelset(&wait_mask, stop_signals[i]);
	signal(SIGPIPE, SIG_IGN); /* a closed stdout shows up as EPIPE */
}

/* The snapshots a run keeps: at attach, the last two, the disks gone. */
struct run {
	struct ts_snapshot *first, *prev, *cur, *gone;
	struct ts_snapshot *window; /* the exporter's without an interval */
	struct ts_snapshot *scratch; /* to build the window's report from */
	struct ts_span_join *spans;  /* the window's spans, joined */
	struct ts_report *report;
};

/* What a scrape of /metrics needs: the run and room for now. */
struct exporter {
	struct ts_httpd *httpd;
	struct ts_web *web; /* --web.config.file, or NULL */
	struct ts_tracer *tracer;
	struct run *run;
	struct ts_snapshot *now;
	struct ts_report *report;
	struct ts_prom *printed; /* keeps the counters from going down */
	struct ts_findings *findings; /* of the last window */
	bool light;   /* --light */
	bool pattern; /* --pattern: random-reads is drawn */
	int by, top;  /* --by, --top */
	struct ts_who_table who_table;
	struct ts_who_span who;
	struct utsname uts; /* the kernel truestat_build_info names */
	__u64 runs; /* its programs' runs at the last read (bpf_stats) */
};

/*
 * truestat's programs as the kernel counts them, and whether it counts
 * them now: the runs rose since the last read. The snapshot just taken
 * ran the sweep, so with bpf_stats on (kernel.bpf_stats_enabled, or a
 * BPF_ENABLE_STATS descriptor another tool holds) they did. Not the
 * sysctl: the service reads nothing in /proc beyond what it traces.
 */
static void read_cost(struct exporter *x)
{
	struct ts_prom *p = x->printed;
	__u64 runs;

	p->nprogs = ts_tracer_prog_stats(x->tracer, p->progs, TS_MAX_PROGS);
	runs = ts_prog_runs(p->progs, p->nprogs);
	p->bpf_stats = runs != x->runs;
	x->runs = runs;
}

static char *render_metrics(void *ctx, bool protobuf, size_t *len)
{
	struct exporter *x = ctx;

	ts_tracer_snapshot(x->tracer, x->now, false);
	ts_prom_window(x->printed, x->now);
	read_cost(x);
	if (verbose)
		ts_cli_say_new_disks(x->now);
	ts_report_build(x->run->first, x->now, ts_cli_disk_name, x->report);
	x->report->totals = true;
	x->report->light = x->light;
	if (x->by) { /* the table is since the start, as the report is */
		ts_tracer_read_who(x->tracer, &x->who_table);
		x->who.by = x->by;
		x->who.top = x->top;
		ts_who_delta(NULL, &x->who_table, x->report->span_s, &x->who);
		x->report->who = &x->who;
	}
	if (protobuf)
		return ts_prom_render_protobuf(x->printed, x->report, len);
	return ts_prom_render(x->printed, x->report, len);
}

static struct exporter exporter;

/*
 * The exporter's findings (truestat_finding) without an interval: drawn
 * from a report over each minute. A minute holds the 50 completions a
 * finding asks of a disk down to about one I/O a second, and a finding
 * shows within a minute of its start, whatever the scrape interval.
 */
static unsigned int findings_window_takes = 60;

static struct ts_slow_printer slow_printer = { .sysroot = "/sys" };
static struct ts_tracer *fold_tracer; /* --by: its table read every TICK_NS */
#define TICK_NS 100000000LL

static long long ns_of(const struct timespec *t)
{
	return t->tv_sec * 1000000000LL + t->tv_nsec;
}

static struct timespec timespec_of(long long ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000LL,
				  .tv_nsec = ns % 1000000000LL };
}

/*
 * Sleeps until @deadline (CLOCK_MONOTONIC), serving /metrics meanwhile,
 * with --by keeping room in its table (a burst of new submitters between two
 * reports), and waking as often as @t needs whatever the interval (its
 * depth words restamped, its repair log read: ts_tracer_tick); false when
 * a signal came.
 */
static bool sleep_until(struct ts_tracer *t, const struct timespec *deadline)
{
	bool tick = fold_tracer;
	long long next, due;
	struct timespec now, step;

	do {
		due = (long long)ts_tracer_tick(t);
		clock_gettime(CLOCK_MONOTONIC, &now);
		next = ns_of(deadline);
		if (tick && next - ns_of(&now) > TICK_NS)
			next = ns_of(&now) + TICK_NS;
		if (next > due)
			next = due;
		step = timespec_of(next);
		if (ts_httpd_serve(exporter.httpd, &step, &stop_signal,
				   &wait_mask, render_metrics, &exporter))
			return false;
		if (fold_tracer)
			ts_tracer_fold_who(fold_tracer);
	} while (!stop_signal && ns_of(&step) < ns_of(deadline));
	return !stop_signal;
}

static void advance(struct timespec *t, double seconds)
{
	long long ns = (long long)(seconds * 1e9);

	t->tv_sec += ns / 1000000000LL;
	t->tv_nsec += ns % 1000000000LL;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

/*
 * Takes snapshot @cur. When a new disk took over the queue id of an old one
 * since the last, the old one is kept in @gone for the totals.
 */
static void take(struct ts_tracer *t, struct ts_snapshot *cur,
		 struct ts_snapshot *gone)
{
	ts_tracer_snapshot(t, cur, true);
	ts_cli_find_refused(t);
	if (verbose)
		ts_cli_say_new_disks(cur);
	ts_tracer_gone(t, gone);
}

/*
 * -v: on CLOCK_MONOTONIC, the clock of blktrace's and perf's records, when
 * attaching began (all counted came after), and the totals' span (which
 * ends after what they count): to cut another trace to the same requests.
 */
static void say_span(__u64 attach_ns, __u64 from_ns, __u64 to_ns)
{
	const __u64 s = 1000000000ULL;

	fprintf(stderr, "truestat: CLOCK_MONOTONIC: attaching at %llu.%09llu s, "
		"totals from %llu.%09llu to %llu.%09llu s\n", attach_ns / s,
		attach_ns % s, from_ns / s, from_ns % s, to_ns / s, to_ns % s);
}

/* --by: the table at the last report, and now; the span between them */
static struct ts_who_table who_then, who_now;
static struct ts_who_span who_span;
static struct ts_tracer *who_tracer;

/* The submitters of the span of report @r (--by). */
static void who_report(const struct ts_opts *o, bool totals,
		       struct ts_report *r)
{
	if (!o->by || !who_tracer)
		return;
	ts_tracer_read_who(who_tracer, &who_now);
	who_span.by = o->by;
	who_span.top = o->top;
	ts_who_delta(totals ? NULL : &who_then, &who_now, r->span_s, &who_span);
	who_then = who_now;
	r->who = &who_span;
}

/* --flags: the table at the last report, and now; the span between them */
static struct ts_flags_table flags_then, flags_now, flags_span;

/* The flag classes of the span of report @r (--flags). */
static void flags_report(const struct ts_opts *o, bool totals,
			 struct ts_report *r)
{
	if (!o->flags || !who_tracer)
		return;
	ts_tracer_read_flags(who_tracer, &flags_now);
	ts_flags_delta(totals ? NULL : &flags_then, &flags_now, &flags_span);
	flags_then = flags_now;
	r->flags = &flags_span;
}

/* -p: the partition table at the last report, and now; the span between */
static struct ts_part_table part_then, part_now;
static struct ts_part_span part_span;

/* -p: the partition table now, read as close to the snapshot as can be. */
static void parts_read(const struct ts_opts *o)
{
	if (o->partitions && who_tracer)
		ts_tracer_read_parts(who_tracer, &part_now);
}

/* The partitions of the span of report @r (-p), read by parts_read. */
static void parts_report(const struct ts_opts *o, bool totals,
			 struct ts_report *r)
{
	if (!o->partitions || !who_tracer)
		return;
	ts_part_delta(totals ? NULL : &part_then, &part_now, r, "/sys",
		      o->part_list, &part_span);
	part_then = part_now;
	r->parts = &part_span;
}

/*
 * TRUESTAT_TEST_JSON=FILE: each table report also goes to FILE as JSON,
 * so that a test can hold the table against the JSON of the same report.
 */
static FILE *test_json;

/* What sysfs says of each disk of @r that the figures need. */
static void sys_facts(struct ts_report *r)
{
	int i;

	for (i = 0; i < r->ndev; i++)
		r->dev[i].discard_ranges = ts_disk_discard_ranges(
			"/sys", r->dev[i].major, r->dev[i].minor);
}

/* The filter as the report names it, or NULL. */
static const char *filter_name(const struct ts_opts *o)
{
	static char name[4200];

	if (o->cgroup)
		snprintf(name, sizeof(name), "-c %s", o->cgroup);
	else if (o->pid)
		snprintf(name, sizeof(name), "--pid %ld", o->pid);
	else
		return NULL;
	return name;
}

/* Prints one report; false once stdout is gone (e.g. `| head`). */
static bool emit(const struct ts_opts *o, const struct ts_snapshot *a,
		 const struct ts_snapshot *b, bool totals,
		 struct ts_report *r)
{
	parts_read(o);
	ts_report_build(a, b, ts_cli_disk_name, r);
	sys_facts(r);
	who_report(o, totals, r);
	flags_report(o, totals, r);
	parts_report(o, totals, r);
	r->totals = totals;
	r->show_hist = o->hist;
	r->show_curve = o->depth;
	r->show_pattern = o->pattern;
	r->light = o->light;
	r->filter = filter_name(o);
	r->units = o->units;
	r->date = o->date;
	ts_cli_disks_facts(r);
	r->slow = o->slow_ms >= 0 ? &slow_printer : NULL;
	flockfile(stdout); /* not amid the lines of --slow */
	if (o->json)
		ts_print_json(stdout, r, time(NULL));
	else
		ts_print_table(stdout, r, time(NULL));
	funlockfile(stdout);
	if (test_json && !o->json) {
		ts_print_json(test_json, r, time(NULL));
		fflush(test_json);
	}
	return fflush(stdout) == 0 && !ferror(stdout);
}

/*
 * A test knob from the environment: 0 when unset; a number from @lo to @hi
 * (a power of two if @pow2), or a one-line error naming @what it must be.
 */
static unsigned int test_knob(const char *name, unsigned long lo,
			      unsigned long hi, bool pow2, const char *what)
{
	const char *v = getenv(name);
	char *end, msg[128];
	unsigned long n;

	if (!v)
		return 0;
	n = strtoul(v, &end, 10);
	if (*end || n < lo || n > hi || (pow2 && (n & (n - 1)))) {
		snprintf(msg, sizeof(msg), "bad %s: %s", name, what);
		ts_cli_die(EXIT_USAGE, msg);
	}
	return n;
}

static void open_exporter(const struct ts_opts *o, struct ts_tracer *tracer,
			  struct run *run)
{
	char err[256];

	exporter.httpd = ts_httpd_open(o->prometheus, exporter.web, err,
				       sizeof(err));
	if (!exporter.httpd) {
		ts_tracer_close(tracer);
		ts_cli_die(EXIT_FAILURE, err);
	}
	exporter.tracer = tracer;
	exporter.run = run;
	exporter.light = o->light;
	exporter.pattern = o->pattern;
	exporter.by = o->by;
	exporter.top = o->top;
	exporter.now = calloc(1, sizeof(*exporter.now));
	exporter.report = calloc(1, sizeof(*exporter.report));
	exporter.printed = calloc(1, sizeof(*exporter.printed));
	exporter.findings = calloc(1, sizeof(*exporter.findings));
	if (!o->interval_s) {
		run->window = calloc(1, sizeof(*run->window));
		run->scratch = calloc(1, sizeof(*run->scratch));
		run->spans = calloc(1, sizeof(*run->spans));
	}
	if (!exporter.now || !exporter.report || !exporter.printed ||
	    !exporter.findings ||
	    (!o->interval_s && (!run->window || !run->scratch || !run->spans)))
		ts_cli_die(EXIT_FAILURE, "out of memory");
	/* a submitter with series of its own keeps them for the run */
	if (o->by)
		ts_tracer_who_keep(tracer, ts_prom_named, exporter.printed);
	uname(&exporter.uts);
	exporter.printed->version = ts_release;
	exporter.printed->commit = ts_commit;
	exporter.printed->kernel = exporter.uts.release;
	exporter.printed->full_buckets = o->full_buckets;
	exporter.runs = ts_prog_runs(exporter.printed->progs,
				     ts_tracer_prog_stats(tracer,
							  exporter.printed->progs,
							  TS_MAX_PROGS));
}

/* What truestat traces and how, from the command line (@o). */
static void tracer_opts(const struct ts_opts *o, unsigned int *kdevs,
			struct ts_tracer_opts *t)
{
	t->nkdevs = ts_cli_resolve_devices(o, kdevs);
	ts_cli_find_untraceable(o);
	t->kdevs = kdevs;
	ts_cli_resolve_excludes(o, kdevs, t->nkdevs);
	t->excluded = ts_cli_exclusion()->kdevs;
	t->nexcluded = ts_cli_exclusion()->n;
	t->btf_path = getenv("TRUESTAT_BTF") ?: TS_DEFAULT_BTF;
	t->raw_tp = o->raw_tp;
	t->light = o->light;
	t->pattern = o->pattern;
	t->flags = o->flags;
	t->partitions = o->partitions;
	t->slow = o->slow_ms >= 0;
	t->by = o->by;
	t->slow_ns = o->slow_ms >= 0 ? (__u64)(o->slow_ms * 1e6) : 0;
	slow_printer.f = stdout;
	slow_printer.json = o->json;
	slow_printer.units = o->units;
	slow_printer.cgroup_root = o->slow_ms >= 0 ? ts_cgroup2_root() : NULL;
	t->on_slow = ts_slow_print;
	t->on_slow_batch = ts_slow_batch;
	t->on_slow_ctx = &slow_printer;
	t->slow_ring = o->slow_buffer ? o->slow_buffer :
		       o->slow_ms == 0 ? 64U << 20 : 1U << 20;
	/* a line per request, written a buffer at a time */
	if (t->slow)
		setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	t->verbose = o->verbose;
	verbose = o->verbose;
	ts_cli_disks_dm_names(o->dm_names);
	slow_printer.dm_names = o->dm_names;
	slow_printer.date = o->date;
}

/* The environment's knobs for tests and bench/overhead.sh (README). */
static void test_opts(struct ts_tracer_opts *t)
{
	const char *bench;
	unsigned int ring;

	/* a smaller ring buffer of --slow, so that tests fill it */
	ring = test_knob("TRUESTAT_TEST_SLOW_RING", 4096, 1U << 30, true,
			 "a power of two, 4096 to 2^30");
	if (ring)
		t->slow_ring = ring;
	/* for tests of the error path: the verifier rejects one program */
	t->test_verifier_failure = getenv("TRUESTAT_TEST_VERIFIER_FAILURE");
	/* a smaller request table, so that tests fill it; or a larger one,
	 * for the sweep's cost at that size */
	t->test_rq_slots = test_knob("TRUESTAT_TEST_RQ_SLOTS", 4,
				     TS_RQ_SLOTS_MAX, true,
				     "a power of two, 4 to 1048576");
	/* a smaller partition table (-p), so that tests fill it */
	t->test_part_slots = test_knob("TRUESTAT_TEST_PART_SLOTS", 1,
				       TS_PART_MAX, false, "a number, 1 to 1024");
	/* drop one completion in N, as the platform does (README) */
	t->test_miss_every = test_knob("TRUESTAT_TEST_MISS_EVERY", 2, 1000000,
				       false, "a number, 2 to 1000000");
	/* ... of one disk only: its number as major << 20 | minor */
	t->test_miss_dev = test_knob("TRUESTAT_TEST_MISS_DEV", 1,
				     (1UL << 32) - 1, false,
				     "a device number, major << 20 | minor");
	/* depth histogram counters that wrap after N completions a bucket */
	t->test_depth_wrap = test_knob("TRUESTAT_TEST_DEPTH_WRAP", 1, 1U << 31,
				       false, "a number, 1 to 2147483648");
	/* the depth words' 44-bit clock wraps N seconds after the start */
	t->test_clock_wrap_s = test_knob("TRUESTAT_TEST_CLOCK_WRAP", 1, 3600,
					 false, "a number, 1 to 3600");
	/* the exporter's findings window without an interval, in seconds */
	findings_window_takes = test_knob("TRUESTAT_TEST_FINDINGS_WINDOW", 1,
					  3600, false, "a number, 1 to 3600") ?: 60;
	/* the depth words made as old as a file says, at a snapshot */
	t->test_stamp_age = getenv("TRUESTAT_TEST_STAMP_AGE");
	/* a snapshot's sweeps made after each disk's counters are read and
	 * before its depth is: their repairs race the read, every time */
	t->test_sweep_between = getenv("TRUESTAT_TEST_SWEEP_BETWEEN");
	/* every repair read, a line each */
	if (getenv("TRUESTAT_TEST_REPAIR_LOG") &&
	    !(t->test_repair_log = fopen(getenv("TRUESTAT_TEST_REPAIR_LOG"),
					 "w")))
		ts_cli_die(EXIT_FAILURE,
			   "TRUESTAT_TEST_REPAIR_LOG: cannot create the file");
	if (getenv("TRUESTAT_TEST_JSON") &&
	    !(test_json = fopen(getenv("TRUESTAT_TEST_JSON"), "w")))
		ts_cli_die(EXIT_FAILURE,
			   "TRUESTAT_TEST_JSON: cannot create the file");
	/* fewer disks at once, so that tests reach the limit */
	t->max_devs = test_knob("TRUESTAT_TEST_MAX_DEVS", 1, TS_MAX_DEVS, false,
				"a number, 1 to 256");
	if (t->max_devs)
		ts_cli_disks_max(t->max_devs);
	/* queue ids from this one on are looked up in the hash */
	t->qid_near = test_knob("TRUESTAT_TEST_QID_NEAR", 1, TS_QID_NEAR, false,
				"a number, 1 to 4096");
	/* for bench/overhead.sh: the cost of programs that do nothing (1),
	 * or only read the clock (clock) */
	bench = getenv("TRUESTAT_BENCH_EMPTY");
	t->bench_empty = bench;
	t->bench_clock = bench && !strcmp(bench, "clock");
	/* the object for kernels before 5.12, on any kernel */
	t->test_locked = getenv("TRUESTAT_TEST_LOCKED");
}

static void run_alloc(struct run *r)
{
	r->first = calloc(1, sizeof(*r->first));
	r->prev = calloc(1, sizeof(*r->prev));
	r->cur = calloc(1, sizeof(*r->cur));
	r->gone = calloc(1, sizeof(*r->gone));
	r->report = calloc(1, sizeof(*r->report));
	r->window = NULL; /* the exporter's, made by open_exporter */
	r->scratch = NULL;
	r->spans = NULL;
	if (!r->first || !r->prev || !r->cur || !r->gone || !r->report)
		ts_cli_die(EXIT_FAILURE, "out of memory");
}

static void run_free(struct run *r)
{
	free(r->first), free(r->prev), free(r->cur), free(r->gone);
	free(r->window), free(r->scratch), free(r->spans);
	free(r->report);
}

/* A snapshot in @r's cur, from the maps now: a span of the depth ends. */
static void run_take(struct ts_tracer *t, struct run *r)
{
	take(t, r->cur, r->gone);
	if (exporter.httpd)
		ts_prom_span(exporter.printed, r->prev, r->cur);
	if (r->window)
		ts_span_join_add(r->spans, r->cur);
}

/* The snapshot just taken becomes the one the next is measured from. */
static void run_next(struct run *r)
{
	struct ts_snapshot *tmp = r->prev;

	r->prev = r->cur;
	r->cur = tmp;
}

/* The findings of report @rep for the exporter, if one runs. */
static void export_findings(const struct ts_report *rep)
{
	if (!exporter.httpd)
		return;
	ts_findings_build(rep, exporter.findings);
	exporter.printed->findings = exporter.findings;
	exporter.printed->findings_windows++;
}

/* Without an interval: after take @n, the last window's findings. */
static void window_findings(struct run *r, long n)
{
	if (!r->window || n % findings_window_takes)
		return;
	ts_report_build_window(r->window, r->cur, r->spans, r->scratch,
			       ts_cli_disk_name, r->report);
	r->report->light = exporter.light;
	r->report->show_pattern = exporter.pattern;
	export_findings(r->report);
	ts_snapshot_copy(r->window, r->cur);
}

/*
 * Reports every interval until a signal, the count or a failed write
 * (false); without an interval, keeps the depth repaired once a second.
 * The maps start at zero: the baseline is an empty snapshot taken at
 * attach time, so that what happened before the first report (e.g. the
 * completions of requests already in flight) is in the figures.
 */
static bool run_intervals(const struct ts_opts *o, struct ts_tracer *t,
			  struct run *r, struct ts_heatmap *hm)
{
	struct timespec next;
	bool out_ok = true;
	long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &next);
	r->first->ndev = 0;
	r->first->lost_events = 0;
	r->first->mono_ns = next.tv_sec * 1000000000ULL + next.tv_nsec;
	ts_tracer_begin(t, r->first->mono_ns);
	ts_snapshot_copy(r->prev, r->first);
	if (r->window)
		ts_snapshot_copy(r->window, r->first);
	while (!stop_signal && out_ok && o->interval_s > 0 &&
	       (!o->count || n < o->count)) {
		advance(&next, o->interval_s);
		if (!sleep_until(t, &next))
			break;
		run_take(t, r);
		out_ok = emit(o, r->prev, r->cur, false, r->report);
		export_findings(r->report);
		if (hm)
			ts_heatmap_add(hm, r->report);
		run_next(r);
		n++;
	}
	while (!stop_signal && o->interval_s == 0) {
		advance(&next, 1.0);
		if (!sleep_until(t, &next))
			break;
		run_take(t, r);
		window_findings(r, ++n);
		run_next(r);
	}
	return out_ok;
}

/* The totals since attach; disks that went away keep their row. */
static void run_totals(const struct ts_opts *o, struct ts_tracer *t,
		       struct run *r)
{
	ts_tracer_read_slow(t);
	run_take(t, r);
	for (int i = 0; i < r->gone->ndev && r->cur->ndev < TS_MAX_DEVS; i++)
		r->cur->dev[r->cur->ndev++] = r->gone->dev[i];
	emit(o, r->first, r->cur, true, r->report);
	if (o->verbose)
		say_span(ts_tracer_start_ns(t), r->first->mono_ns,
			 r->cur->mono_ns);
}

int main(int argc, char **argv)
{
	unsigned int kdevs[TS_MAX_DEVS];
	struct ts_tracer_opts topts = { 0 };
	struct ts_tracer *tracer;
	struct ts_heatmap *hm = NULL;
	struct run run;
	struct ts_opts o;
	char err[512];
	int rc = 0;

	if (ts_parse_args(argc, argv, &o, err, sizeof(err)))
		ts_cli_die(EXIT_USAGE, err);
	if (o.help) {
		fputs(ts_usage, stdout);
		return 0;
	}
	if (o.version) {
		printf("truestat %s\n", ts_version);
		return 0;
	}
	if (o.part_list && ts_part_check(o.part_list, err, sizeof(err)))
		ts_cli_die(EXIT_USAGE, err);
	check_privileges();
	/* a bad file stops truestat here, before anything is attached */
	if (o.web_config &&
	    !(exporter.web = ts_web_open(o.web_config, err, sizeof(err))))
		ts_cli_die(EXIT_USAGE, err);
	if (ts_filter_resolve(o.cgroup, o.pid, &topts.filter, err,
			      sizeof(err)))
		ts_cli_die(EXIT_USAGE, err);
	tracer_opts(&o, kdevs, &topts);
	ts_part_say_untraced(o.part_list, kdevs, topts.nkdevs);
	test_opts(&topts);
	if (o.heatmap && !(hm = ts_heatmap_open(o.heatmap, o.interval_s, err,
						sizeof(err))))
		ts_cli_die(EXIT_FAILURE, err);
	run_alloc(&run);
	install_signals();
	tracer = ts_tracer_open(&topts, err, sizeof(err));
	if (!tracer)
		ts_cli_die(ts_tracer_kernel_refused() ? EXIT_USAGE :
							EXIT_FAILURE,
			   err);
	if (o.verbose)
		fprintf(stderr, "truestat: attached with %s\n",
			ts_tracer_kind(tracer));
	if (o.prometheus)
		open_exporter(&o, tracer, &run);
	if (o.by)
		fold_tracer = tracer;
	who_tracer = tracer;
	if (run_intervals(&o, tracer, &run, hm))
		run_totals(&o, tracer, &run);
	if (hm && ts_heatmap_close(hm, err, sizeof(err))) {
		fprintf(stderr, "truestat: %s\n", err);
		rc = EXIT_FAILURE;
	}
	ts_httpd_close(exporter.httpd);
	ts_web_close(exporter.web);
	free(exporter.now), free(exporter.report), free(exporter.printed);
	ts_tracer_close(tracer);
	run_free(&run);
	return rc;
}
