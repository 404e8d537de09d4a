// SPDX-License-Identifier: GPL-2.0
/*
 * spans: every block_io_start (S), block_rq_issue (I), block_rq_requeue
 * (Q), ending block_rq_complete (C) and block_io_done (E) of one disk, one
 * line each: "KIND NS REQUEST CPU", NS from bpf_ktime_get_ns(), REQUEST
 * the request's address (the same request reappears once its tag is
 * reused). Until SIGINT or SIGTERM; the last line is "# dropped N", the
 * events the ring buffer had no room for. What the lines add up to (the
 * time with a request issued, or allocated) is for the reader to make:
 * tests/lib/spans.py.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "spans.skel.h"

static const char usage[] =
	"Usage: spans MAJOR:MINOR [ends]\n"
	"Prints each block_io_start (S), block_rq_issue (I), block_rq_requeue (Q),\n"
	"ending block_rq_complete (C) and block_io_done (E) of the disk\n"
	"MAJOR:MINOR (/sys/block/NAME/dev) as \"KIND NS REQUEST CPU\", until SIGINT\n"
	"or SIGTERM, then \"# dropped N\". Says \"spans: tracing\" on stderr once\n"
	"attached. Kernels before 6.5 have no block_io_start/done: S and E absent.\n"
	"ends: C and E only, nothing attached where requests are submitted.\n";

static const char kind_letters[] = "SIQCE";

struct span_event {
	unsigned long long ns, rq;
	unsigned int kind, cpu;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int print_event(void *ctx, void *data, size_t size)
{
	const struct span_event *e = data;

	if (size < sizeof(*e) || e->kind >= sizeof(kind_letters) - 1)
		return 0;
	printf("%c %llu %llx %u\n", kind_letters[e->kind], e->ns, e->rq,
	       e->cpu);
	return 0;
}

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int trace(struct spans_bpf *skel)
{
	struct ring_buffer *rb;
	struct sigaction sa = { .sa_handler = on_signal };

	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), print_event,
			      NULL, NULL);
	if (!rb)
		return fprintf(stderr, "spans: no ring buffer\n"), 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "spans: tracing\n");
	while (!stop)
		ring_buffer__poll(rb, 100);
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	printf("# dropped %llu\n", (unsigned long long)skel->bss->dropped);
	return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	bool io_tps = libbpf_find_vmlinux_btf_id("block_io_start",
						 BPF_TRACE_RAW_TP) > 0;
	bool ends = argc == 3 && !strcmp(argv[2], "ends");
	struct spans_bpf *skel;
	unsigned int major, minor;
	int rc;

	if (argc != 2 + ends ||
	    sscanf(argv[1], "%u:%u", &major, &minor) != 2) {
		fputs(usage, stderr);
		return 2;
	}
	libbpf_set_print(silent);
	skel = spans_bpf__open();
	if (!skel)
		return fprintf(stderr, "spans: cannot open\n"), 1;
	skel->rodata->target_dev = major << 20 | minor;
	bpf_program__set_autoload(skel->progs.s_io_start, io_tps && !ends);
	bpf_program__set_autoload(skel->progs.s_issue, !ends);
	bpf_program__set_autoload(skel->progs.s_requeue, !ends);
	bpf_program__set_autoload(skel->progs.s_io_done, io_tps);
	rc = spans_bpf__load(skel);
	if (!rc)
		rc = spans_bpf__attach(skel);
	if (rc) {
		fprintf(stderr, "spans: cannot load or attach: %s\n",
			strerror(-rc));
		spans_bpf__destroy(skel);
		return 1;
	}
	rc = trace(skel);
	spans_bpf__destroy(skel);
	return rc;
}
