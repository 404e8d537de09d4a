// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/httpd.h"
#include "opts.h"
#include "truestat.h"
#include "lib/units.h"

/* -DTS_VERSION from the Makefile: VERSION, and the commit when in git */
#ifndef TS_VERSION
#define TS_VERSION "unknown"
#endif

const char ts_version[] = TS_VERSION;

/* -DTS_RELEASE, -DTS_COMMIT: truestat_build_info's version and commit */
#ifndef TS_RELEASE
#define TS_RELEASE "unknown"
#endif
#ifndef TS_COMMIT
#define TS_COMMIT "unknown"
#endif

const char ts_release[] = TS_RELEASE;
const char ts_commit[] = TS_COMMIT;

const char ts_usage[] =
	"Usage: truestat [options] [interval [count]]\n"
	"\n"
	"Per disk and direction: how long requests wait in the OS (queue),\n"
	"how long the device takes (service), and how many requests the\n"
	"device really works on at once (time-weighted concurrency).\n"
	"\n"
	"  interval        seconds between reports (e.g. 1 or 0.5); without it,\n"
	"                  trace until Ctrl-C and print the totals\n"
	"  count           number of reports, then the totals (default: until\n"
	"                  Ctrl-C)\n"
	"\n"
	"Options:\n"
	"  -d, --device=NAME  trace only this disk (repeatable); a partition\n"
	"                     name traces its whole disk; md, device-mapper\n"
	"                     (dm-0, or its /dev/mapper name) and zram devices\n"
	"                     are traced at their own layer, and a stacked one\n"
	"                     (md, dm) with the disks it is made of\n"
	"      --exclude=GLOB do not trace the disks whose name (or /dev/mapper\n"
	"                     name) matches GLOB, a shell pattern (repeatable;\n"
	"                     e.g. --exclude='loop*'): those that exist at the\n"
	"                     start; one made later is traced. Wins over -d.\n"
	"                     Without it every disk is traced, loop devices\n"
	"                     with no backing file too: they do no I/O, so they\n"
	"                     take no slot and show in no report, and one given\n"
	"                     a file while truestat runs is followed from then on\n"
	"  -N, --dm-names     device-mapper disks by their /dev/mapper name\n"
	"                     (vg0-lv0), not dm-N, as iostat -N; in the tables,\n"
	"                     the JSON, --slow and /metrics\n"
	"  -t, --date         the date in the tables' timestamps (2026-11-29\n"
	"                     05:12:43, local time), as iostat -t; the JSON's\n"
	"                     time always has it (UTC)\n"
	"  -j, --json         one JSON object per report (man truestat, doc/json.md)\n"
	"  -H, --hist[=fine]  also print the latency histograms (queue, service,\n"
	"                     total) and request sizes per disk and direction,\n"
	"                     in powers of two of us; =fine: every bucket\n"
	"                     (1/16 of a power of two); with -j, as JSON\n"
	"  -D, --depth        the parallelism curve per disk: by the device's\n"
	"                     depth when requests were issued (1, 2, 3-4, 5-8,\n"
	"                     ...), the time spent there, throughput and\n"
	"                     service p50/p95/p99; then the depth beyond which\n"
	"                     throughput stops growing (< +20% per doubling),\n"
	"                     the depth whose p95 service passes 3x that at\n"
	"                     depth 1, and the headroom now\n"
	"  -p, --partitions[=LIST]\n"
	"                     also a row per partition of each traced disk and\n"
	"                     direction, of the I/O the kernel counts under that\n"
	"                     partition (as /proc/diskstats); depth and BUSY%\n"
	"                     are \"-\" there. LIST: the partitions shown, comma\n"
	"                     separated (-p=sda1,sda2), else all\n"
	"      --pattern      the access pattern per disk and direction, in the\n"
	"                     order the disk was given requests: the share that\n"
	"                     start where the previous one ended (SEQ%), the\n"
	"                     share that go backwards, seek distance p50/p90,\n"
	"                     and I/Os, MiB/s and service p50/p95/p99 by\n"
	"                     request size\n"
	"  -F, --flags        per disk and direction, I/Os and queue/service/\n"
	"                     total mean and percentiles by the request flags\n"
	"                     the disk saw: sync, meta, prio, readahead,\n"
	"                     background, fua, preflush, none (a request counts\n"
	"                     in each class it carries), e.g. truestat -F 5 1\n"
	"      --slow=MS      also print each request whose total time (Q->C)\n"
	"                     reached MS milliseconds, as it completes: device,\n"
	"                     direction, sector, size, queue/service/total, the\n"
	"                     in-device depth it was issued at, and the process\n"
	"                     and cgroup that submitted it (at Q); one JSON\n"
	"                     object each with -j. --slow=0: every request;\n"
	"                     the end says per disk how many were logged,\n"
	"                     dropped (ring buffer full), not timed (missed)\n"
	"      --slow-buffer=SIZE\n"
	"                     the ring buffer of --slow, a power of two from\n"
	"                     4K (default 64M with --slow=0, else 1M)\n"
	"      --by=cgroup|process\n"
	"                     per disk and direction, each submitter's I/Os,\n"
	"                     MiB/s, queue/service/total means and total p99:\n"
	"                     the cgroup (v2) or process of the task that\n"
	"                     submitted the bio (at Q, not a kworker that\n"
	"                     issued it); the --top (default 10) with the most\n"
	"                     total time, the rest summed as \"other\"\n"
	"      --top=N        submitters shown with --by (1 to 1000)\n"
	"  -c, --cgroup=PATH  count only the I/O of cgroup v2 directory PATH and\n"
	"                     its children: the cgroup a bio is charged to (as\n"
	"                     its io.stat), or the submitting task's when the io\n"
	"                     controller is not on cgroup v2; other submitters'\n"
	"                     requests are counted apart; depth and %util stay\n"
	"                     the device's (e.g. -c /sys/fs/cgroup/db.slice)\n"
	"      --pid=PID      count only the I/O that process PID submitted\n"
	"                     (at Q), e.g. --pid=$(pidof postgres)\n"
	"      --web.listen-address=[ADDR:]PORT\n"
	"                     serve /metrics in the Prometheus text format\n"
	"                     (cumulative histograms, counters, gauges), or\n"
	"                     its protobuf one with native histograms to a\n"
	"                     scraper that asks for it; ADDR defaults to\n"
	"                     127.0.0.1\n"
	"      --prometheus=[ADDR:]PORT\n"
	"                     the same as --web.listen-address\n"
	"      --web.histogram-buckets=short|full\n"
	"                     the exporter's histogram buckets: short (the\n"
	"                     default), 15 from 1 us to 10 s, about 3.2x\n"
	"                     apart; full, 113 from 1 us to 275 s, a quarter\n"
	"                     of a power of two apart; each an edge of the\n"
	"                     kernel's buckets, so every count is exact\n"
	"      --web.config.file=FILE\n"
	"                     TLS and basic auth for the exporter, in the\n"
	"                     Prometheus exporter toolkit's format\n"
	"                     (tls_server_config, basic_auth_users with bcrypt\n"
	"                     hashes; man truestat, doc/prometheus.md)\n"
	"      --heatmap=FILE.svg\n"
	"                     at exit, write a latency heat map of the run: time\n"
	"                     in intervals across, log latency up, colour = I/Os;\n"
	"                     service and queue time per disk and direction;\n"
	"                     needs an interval; beyond 3600 columns, pairs of\n"
	"                     older columns are merged (one column = 2, 4, ...\n"
	"                     intervals)\n"
	"      --units=us|ms  the unit of the tables' times; by default each\n"
	"                     table picks one: us when its smallest non-zero\n"
	"                     figure is below 0.1 ms, else ms, with as few\n"
	"                     decimals as give that figure three significant\n"
	"                     digits (so does every figure from 0.1 us up,\n"
	"                     1 ns being the clock's step); the header names\n"
	"                     it (QUEUE_us, P99_ms); JSON is always ms, to 1 ns\n"
	"  -L, --light        cheaper per I/O: two BPF programs per I/O instead\n"
	"                     of three (bios are not followed, so md, dm and\n"
	"                     zram devices are not traced; what each mode\n"
	"                     costs: doc/measurements/overhead.md).\n"
	"                     QUEUE then starts when the kernel allocated the\n"
	"                     request, so time spent waiting for a free tag\n"
	"                     before that is left out, and OS_QD is not known\n"
	"                     (\"-\"); SERVICE, CONC and the rest are the same\n"
	"  -v, --verbose      libbpf messages, the programs attached, the\n"
	"                     verifier log on failure, and at exit when it\n"
	"                     attached and the totals' span on CLOCK_MONOTONIC\n"
	"                     (blktrace's clock)\n"
	"      --raw-tp       attach with raw_tp even where tp_btf works (tests)\n"
	"  -V, --version      print the version and exit\n"
	"  -h, --help         this text\n"
	"\n"
	"Columns: QUEUE = Q->D (bio entered the block layer -> issued to the\n"
	"driver), SERVICE = D->C (issued -> completed), TOTAL = Q->C. CONC is\n"
	"the time-weighted mean number of requests inside the device, CONC_MAX\n"
	"its maximum; OS_QD the same for requests waiting in the OS. BUSY% and\n"
	"SVCTM are iostat's %util and svctm computed from the same events:\n"
	"compare SVCTM with SERVICE to see what iostat hides. MRG/s is\n"
	"iostat's rrqm/s and wrqm/s; sizes are binary, as iostat's: MiB/s\n"
	"(2^20 bytes) and AVG_KiB.\n"
	"Bio-based devices (md, dm, zram) have no OS queue: QUEUE and OS_QD\n"
	"are \"-\", SERVICE = TOTAL = Q->C at their layer, CONC = bios in it;\n"
	"after a stacked device's rows, one line shows its members and the\n"
	"time bios spent in the stacking layer itself.\n"
	"\n"
	"Findings: after each report, what its figures mean, most important\n"
	"first (nothing when nothing is found; doc/diagnosis.md): capped-volume,\n"
	"waiting-in-device, waiting-in-os, commits-wait-on-flush, slow-not-busy,\n"
	"busy-not-full, random-reads (--pattern), one-submitter (--by); a\n"
	"\"cannot tell\" note says what a run has not seen.\n"
	"\n"
	"Examples:\n"
	"  truestat                 trace all disks until Ctrl-C, print totals\n"
	"  truestat 1 10            ten 1-second reports, then the totals\n"
	"  truestat -d nvme0n1 1    one disk, every second\n"
	"  truestat --units=ms -d nvme0n1 1  the same, its times in ms always\n"
	"  truestat -d md0 1        md0 and the disks it is made of\n"
	"  truestat --exclude='loop*' 1  every disk but the loop devices\n"
	"  truestat -N -t 1         dm disks by mapper name, dated timestamps\n"
	"  truestat -j 5 | jq .     JSON every 5 seconds\n"
	"  truestat -H -d sda 10 1  latency histograms of sda over 10 seconds\n"
	"  truestat -D -d sda       sda's parallelism curve over a whole run\n"
	"  truestat --pattern -d sda 10  sda's sizes, seeks and service by size\n"
	"  truestat -p -d sda 1     sda and a row per partition, as iostat -p\n"
	"  truestat -F -d sda 10 1  sda's latency by request flags (sync, fua, ...)\n"
	"  truestat -c /sys/fs/cgroup/db.slice 1  only that cgroup's I/O\n"
	"  truestat --web.listen-address=9101  metrics for Prometheus on\n"
	"                           127.0.0.1:9101\n"
	"  truestat --heatmap=sda.svg -d sda 1  sda's latency over time, as SVG\n"
	"  truestat --slow=0 -d sda >sda.log  a line per request of sda, and\n"
	"                           at the end how many were logged\n"
	"  truestat -L 10           left running on a busy host: cheaper tracing\n"
	"\n"
	"Percentiles (P50 .. MAX) come from histograms whose buckets are 1/16\n"
	"of a power of two wide: each is within 6.25% of the exact value.\n";

static int fail(char *err, int errlen, const char *fmt, const char *arg)
{
	snprintf(err, errlen, fmt, arg);
	return -1;
}

/* A positive number of seconds, at most a day, at 1 ms resolution. */
static int parse_interval(const char *s, double *out, char *err, int errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v))
		return fail(err, errlen, "bad interval '%s': not a number", s);
	if (v < 0.001 || v > 86400)
		return fail(err, errlen,
			    "bad interval '%s': must be 0.001 to 86400 seconds",
			    s);
	*out = v;
	return 0;
}

static int parse_slow(const char *s, double *out, char *err, int errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < 0 || v > 86400000)
		return fail(err, errlen,
			    "bad --slow '%s': milliseconds, 0 to 86400000 (e.g. --slow=50)",
			    s);
	*out = v;
	return 0;
}

/* --slow-buffer=SIZE: bytes, or K, M, G of them (2^10...); a power of two */
static int parse_slow_buffer(const char *s, unsigned int *out, char *err,
			     int errlen)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end && !end[1])
		shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : -1;
	if (!isdigit((unsigned char)*s) || errno || shift < 0 ||
	    (*end && end[1]) || v > (1ULL << 30) >> shift ||
	    (v << shift) < 4096 || (v & (v - 1)))
		return fail(err, errlen,
			    "bad --slow-buffer '%s': a power of two, 4096 to 1G bytes (e.g. --slow-buffer=16M)",
			    s);
	*out = (unsigned int)(v << shift);
	return 0;
}

static int parse_top(const char *s, int *out, char *err, int errlen)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 1 || v > 1000)
		return fail(err, errlen, "bad --top '%s': 1 to 1000", s);
	*out = (int)v;
	return 0;
}

static int parse_count(const char *s, long *out, char *err, int errlen)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 1)
		return fail(err, errlen, "bad count '%s': must be a whole number >= 1",
			    s);
	*out = v;
	return 0;
}

static int add_device(struct ts_opts *o, const char *name, char *err, int errlen)
{
	int i;

	if (!*name || strlen(name) >= TS_NAME_LEN || strchr(name, '/'))
		return fail(err, errlen, "bad device name '%s'", name);
	for (i = 0; i < o->ndevices; i++)
		if (!strcmp(o->devices[i], name))
			return 0; /* repeated: once is enough */
	if (o->ndevices == TS_MAX_DEVICE_ARGS)
		return fail(err, errlen, "too many devices (the limit is %s)", "64");
	strcpy(o->devices[o->ndevices++], name);
	return 0;
}

/* "--depth=3": a known flag that takes no value was given one. */
static int flag_with_value(const char *arg, char *err, int errlen)
{
	char name[32];
	int len = strchr(arg, '=') - arg;

	if (len >= (int)sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, arg, len);
	name[len] = 0;
	return fail(err, errlen, "option '%s' takes no value", name);
}

static const struct option longopts[] = {
	{ "device", required_argument, NULL, 'd' },
	{ "exclude", required_argument, NULL, 'X' },
	{ "json", no_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "raw-tp", no_argument, NULL, 'R' },
	{ "hist", optional_argument, NULL, 'H' },
	{ "depth", no_argument, NULL, 'D' },
	{ "light", no_argument, NULL, 'L' },
	{ "date", no_argument, NULL, 't' },
	{ "dm-names", no_argument, NULL, 'N' },
	{ "pattern", no_argument, NULL, 'A' },
	{ "flags", no_argument, NULL, 'F' },
	{ "partitions", optional_argument, NULL, 'p' },
	{ "slow", required_argument, NULL, 'S' },
	{ "slow-buffer", required_argument, NULL, 'Z' },
	{ "by", required_argument, NULL, 'B' },
	{ "top", required_argument, NULL, 'T' },
	{ "cgroup", required_argument, NULL, 'c' },
	{ "pid", required_argument, NULL, 'I' },
	{ "web.listen-address", required_argument, NULL, 'l' },
	{ "prometheus", required_argument, NULL, 'P' },
	{ "web.config.file", required_argument, NULL, 'W' },
	{ "web.histogram-buckets", required_argument, NULL, 'b' },
	{ "heatmap", required_argument, NULL, 'M' },
	{ "units", required_argument, NULL, 'U' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 },
};

/* --web.config.file and --heatmap: a file name, given once. */
static int set_file(const char **slot, const char *opt, const char *arg,
		    char *err, int errlen)
{
	if (*slot || !*arg) {
		snprintf(err, errlen, *slot ?
			 "option '--%s' given twice (one file only)" :
			 "bad --%s '': needs a file name", opt);
		return -1;
	}
	*slot = arg;
	return 0;
}

static int set_device(struct ts_opts *o, const char *dev, char *err,
		      int errlen)
{
	if (!strncmp(dev, "/dev/", 5))
		dev += 5;
	if (!strncmp(dev, "mapper/", 7)) /* a dm name */
		dev += 7;
	return add_device(o, dev, err, errlen);
}

/* Where the bracket expression at @at ('[') ends, or NULL: unclosed. */
static const char *bracket_end(const char *at)
{
	const char *p = at + 1;

	if (*p == '!' || *p == '^')
		p++;
	if (*p == ']') /* first: a member, not the end */
		p++;
	for (; *p; p++)
		if (*p == ']')
			return p;
	return NULL;
}

/* What is wrong with glob @g as fnmatch reads it, or NULL. */
static const char *glob_fault(const char *g)
{
	if (!*g)
		return "empty";
	if (strlen(g) >= TS_GLOB_LEN)
		return "longer than 63 characters";
	if (strchr(g, '/'))
		return "disk names have no '/'";
	if (strpbrk(g, " \t\n"))
		return "disk names have no spaces";
	for (; *g; g++) {
		if (*g == '\\' && !*++g)
			return "ends in a lone '\\'";
		if (*g == '[' && !(g = bracket_end(g)))
			return "a '[' without its ']'";
	}
	return NULL;
}

static int set_exclude(struct ts_opts *o, const char *glob, char *err,
		       int errlen)
{
	const char *fault;

	if (!strncmp(glob, "/dev/", 5))
		glob += 5;
	if (!strncmp(glob, "mapper/", 7))
		glob += 7;
	fault = glob_fault(glob);
	if (fault) {
		snprintf(err, errlen, "bad --exclude '%s': %s (a shell pattern of disk names, e.g. --exclude='loop*')",
			 glob, fault);
		return -1;
	}
	if (o->nexcludes == TS_MAX_EXCLUDES)
		return fail(err, errlen, "too many --exclude (the limit is %s)",
			    "16");
	strcpy(o->excludes[o->nexcludes++], glob);
	return 0;
}

static int parse_pid(const char *arg, long *pid, char *err, int errlen)
{
	char *end;

	errno = 0;
	*pid = strtol(arg, &end, 10);
	if (errno || end == arg || *end || *pid <= 0 || *pid > INT_MAX)
		return fail(err, errlen, "bad --pid '%s': a process id", arg);
	return 0;
}

static int set_by(struct ts_opts *o, const char *arg, char *err, int errlen)
{
	if (!strcmp(arg, "cgroup"))
		o->by = TS_BY_CGROUP;
	else if (!strcmp(arg, "process"))
		o->by = TS_BY_PROCESS;
	else
		return fail(err, errlen, "bad --by '%s': cgroup or process",
			    arg);
	return 0;
}

/* --web.listen-address, or its other spelling @opt (--prometheus). */
static int set_listen(struct ts_opts *o, const char *opt, const char *arg,
		      char *err, int errlen)
{
	struct sockaddr_storage ss;
	socklen_t sslen;

	if (o->prometheus)
		return fail(err, errlen,
			    "option '%s' given twice (one address only; --prometheus and --web.listen-address are the same)",
			    opt);
	if (ts_http_parse_addr(opt, arg, &ss, &sslen, err, errlen))
		return -1;
	o->prometheus = arg;
	return 0;
}

static int set_buckets(struct ts_opts *o, const char *arg, char *err,
		       int errlen)
{
	if (strcmp(arg, "short") && strcmp(arg, "full"))
		return fail(err, errlen,
			    "bad --web.histogram-buckets '%s': short or full",
			    arg);
	o->full_buckets = !strcmp(arg, "full");
	o->buckets_given = true;
	return 0;
}

/* Option @c with its value @arg (NULL: none) into @o; -1 with @err. */
static int set_option(struct ts_opts *o, int c, const char *arg, char *err,
		      int errlen)
{
	switch (c) {
	case 'd':
		return set_device(o, arg, err, errlen);
	case 'X':
		return set_exclude(o, arg, err, errlen);
	case 'j':
		o->json = true;
		return 0;
	case 'v':
		o->verbose = true;
		return 0;
	case 'R':
		o->raw_tp = true;
		return 0;
	case 'D':
		o->depth = true;
		return 0;
	case 'L':
		o->light = true;
		return 0;
	case 't':
		o->date = true;
		return 0;
	case 'N':
		o->dm_names = true;
		return 0;
	case 'A':
		o->pattern = true;
		return 0;
	case 'F':
		o->flags = true;
		return 0;
	case 'p':
		o->partitions = true;
		if (arg && *arg == '=') /* -p=LIST, as --partitions=LIST */
			arg++;
		o->part_list = arg && *arg ? arg : NULL;
		return 0;
	case 'S':
		return parse_slow(arg, &o->slow_ms, err, errlen);
	case 'Z':
		return parse_slow_buffer(arg, &o->slow_buffer, err, errlen);
	case 'B':
		return set_by(o, arg, err, errlen);
	case 'T':
		return parse_top(arg, &o->top, err, errlen);
	case 'c':
		o->cgroup = arg;
		return 0;
	case 'I':
		return parse_pid(arg, &o->pid, err, errlen);
	case 'l':
		return set_listen(o, "--web.listen-address", arg, err, errlen);
	case 'P':
		return set_listen(o, "--prometheus", arg, err, errlen);
	case 'W':
		return set_file(&o->web_config, "web.config.file", arg, err,
				errlen);
	case 'b':
		return set_buckets(o, arg, err, errlen);
	case 'M':
		return set_file(&o->heatmap, "heatmap", arg, err, errlen);
	case 'U':
		if (ts_units_parse(arg, &o->units))
			return fail(err, errlen,
				    "bad --units '%s': us or ms (default: per table)",
				    arg);
		return 0;
	case 'H':
		if (arg && strcmp(arg, "fine"))
			return fail(err, errlen,
				    "bad --hist '%s': only --hist=fine", arg);
		o->hist = arg ? 2 : 1;
		return 0;
	}
	return fail(err, errlen, "option '%s' has no handler", optarg ?: "?");
}

/*
 * An option getopt did not know, found from @at: not argv[optind - 1]:
 * inside "-0.5" or "-xj" getopt has not moved past the element yet. It is
 * the first option-like element from where this call started (getopt only
 * skips non-options, "" and "-").
 */
static int bad_option(int argc, char **argv, int at, char *err, int errlen)
{
	while (at < argc && (argv[at][0] != '-' || !argv[at][1]))
		at++;
	if (optopt >= '0' && optopt <= '9')
		return fail(err, errlen,
			    "bad interval or count '%s': must be positive",
			    argv[at]);
	if (optopt && !strncmp(argv[at], "--", 2) && strchr(argv[at], '='))
		return flag_with_value(argv[at], err, errlen);
	return fail(err, errlen, "unknown option '%s' (see truestat --help)",
		    argv[at]);
}

/* The interval and count (@npos of them at @args), then what needs what. */
static int finish(struct ts_opts *o, char **args, int npos, char *err,
		  int errlen)
{
	if (npos > 2)
		return fail(err, errlen, "too many arguments: '%s'", args[2]);
	if (npos >= 1 && parse_interval(args[0], &o->interval_s, err, errlen))
		return -1;
	if (npos == 2 && parse_count(args[1], &o->count, err, errlen))
		return -1;
	if (o->top && !o->by)
		return fail(err, errlen, "--top%s is for --by: give --by=cgroup or --by=process too",
			    "");
	if (!o->top)
		o->top = 10;
	if (o->cgroup && o->pid)
		return fail(err, errlen, "give -c/--cgroup or --pid, not both%s",
			    "");
	if ((o->cgroup || o->pid) && o->light)
		return fail(err, errlen,
			    "%s needs the bio programs that --light leaves out: the submitter is known at Q",
			    o->cgroup ? "-c/--cgroup" : "--pid");
	if (o->web_config && !o->prometheus)
		return fail(err, errlen,
			    "--web.config.file is for the exporter: give --web.listen-address too (e.g. truestat --web.listen-address=9101 --web.config.file=%s)",
			    o->web_config);
	if (o->buckets_given && !o->prometheus)
		return fail(err, errlen,
			    "--web.histogram-buckets is for the exporter: give --web.listen-address too%s",
			    "");
	if (o->heatmap && !o->interval_s)
		return fail(err, errlen,
			    "--heatmap needs an interval: its columns are the "
			    "interval reports (e.g. truestat --heatmap=%s 1)",
			    o->heatmap);
	return 0;
}

int ts_parse_args(int argc, char **argv, struct ts_opts *o, char *err,
		  int errlen)
{
	int c, at;

	memset(o, 0, sizeof(*o));
	o->slow_ms = -1;
	optind = 0; /* reset getopt: callable more than once (tests) */
	opterr = 0;
	while ((at = optind ? optind : 1),
	       (c = getopt_long(argc, argv, ":d:jvhHDLVtNFc:p::", longopts, NULL)) != -1) {
		if (c == 'h' || c == 'V') {
			o->help = c == 'h';
			o->version = c == 'V';
			return 0;
		}
		if (c == ':')
			return fail(err, errlen, "option '%s' needs a value",
				    argv[optind - 1]);
		if (c == '?')
			return bad_option(argc, argv, at, err, errlen);
		if (set_option(o, c, optarg, err, errlen))
			return -1;
	}
	return finish(o, argv + optind, argc - optind, err, errlen);
}
