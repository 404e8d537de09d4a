// SPDX-License-Identifier: GPL-2.0
/* --slow: the ring buffer of slow requests and the thread that drains it. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>

#include "loader.h"

static int on_slow_event(void *ctx, void *data, size_t len)
{
	struct ts_tracer *t = ctx;

	if (len < sizeof(struct ts_slow_event))
		return 0;
	return t->on_slow(t->on_slow_ctx, data);
}

/* What is in the ring now, to the printer, as one batch. */
static int consume_slow(struct ts_tracer *t)
{
	int n;

	if (t->on_slow_batch)
		t->on_slow_batch(t->on_slow_ctx, false);
	n = ring_buffer__consume(t->slow);
	if (t->on_slow_batch)
		t->on_slow_batch(t->on_slow_ctx, true);
	return n;
}

/* --slow's reader: its pause after a batch, and when it found none */
static const struct timespec slow_busy = { .tv_nsec = 1000000 },
			     slow_idle = { .tv_nsec = 10000000 };

/*
 * --slow: a thread of its own drains the ring on its own clock: every
 * millisecond while records come, every 10 ms when none did. The programs
 * submit without waking it (BPF_RB_NO_WAKEUP): a wakeup would run in the
 * completion path of the request that caused it. 64 MiB hold 1.4 s of
 * records at 500,000 a second, 1 MiB 10 ms of a million.
 */
static void *slow_reader(void *arg)
{
	struct ts_tracer *t = arg;
	struct timespec cpu;
	int n;

	while (!atomic_load(&t->slow_stop)) {
		n = consume_slow(t);
		if (n > 0)
			t->slow_read += n;
		nanosleep(n > 0 ? &slow_busy : &slow_idle, NULL);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	t->slow_cpu_ns = cpu.tv_sec * 1000000000ULL + cpu.tv_nsec;
	return NULL;
}

int tracer_open_slow(struct ts_tracer *t, const struct ts_tracer_opts *o,
		     char *err, size_t errlen)
{
	sigset_t all, old;
	int rc;

	t->on_slow = o->on_slow;
	t->on_slow_batch = o->on_slow_batch;
	t->on_slow_ctx = o->on_slow_ctx;
	t->slow = ring_buffer__new(bpf_map__fd(t->skel->maps.slow_events),
				   on_slow_event, t, NULL);
	if (!t->slow) {
		tracer_fail(err, errlen, "cannot open the ring buffer of --slow: %s",
		     strerror(errno));
		return -1;
	}
	/* signals stay with the main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t->slow_reader, NULL, slow_reader, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		tracer_fail(err, errlen, "cannot start the reader of --slow: %s",
		     strerror(rc));
		return -1;
	}
	t->slow_reading = true;
	return 0;
}


/* Stops the reader thread, if it runs. */
void tracer_stop_slow_reader(struct ts_tracer *t)
{
	if (!t->slow_reading)
		return;
	atomic_store(&t->slow_stop, true);
	pthread_join(t->slow_reader, NULL);
	t->slow_reading = false;
	if (t->verbose && t->slow_read)
		fprintf(stderr, "truestat: --slow reader: %llu records, %.0f ns "
			"of its CPU each\n", (unsigned long long)t->slow_read,
			(double)t->slow_cpu_ns / t->slow_read);
}

void ts_tracer_read_slow(struct ts_tracer *t)
{
	if (!t->slow)
		return;
	tracer_stop_slow_reader(t);
	consume_slow(t);
}
