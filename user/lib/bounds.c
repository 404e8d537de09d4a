// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "bounds.h"

/* Keeps what win[] has allocated. */
void ts_bounds_init(struct ts_bounds *b, __u64 now_ns)
{
	struct ts_repair_window *win = b->win;
	unsigned int cap = b->cap;

	memset(b, 0, sizeof(*b));
	b->win = win;
	b->cap = cap;
	b->span_start_ns = now_ns;
}

void ts_bounds_free(struct ts_bounds *b)
{
	free(b->win);
	b->win = NULL;
	b->cap = b->nwin = 0;
}

/* Room in win[] for one more window; false past TS_REPAIR_WINDOWS_MAX. */
static bool window_room(struct ts_bounds *b)
{
	unsigned int cap = b->cap ? 2 * b->cap : TS_REPAIR_SLOTS;
	struct ts_repair_window *win;

	if (b->nwin < b->cap)
		return true;
	if (b->cap >= TS_REPAIR_WINDOWS_MAX)
		return false;
	win = realloc(b->win, (size_t)cap * sizeof(*win));
	if (!win)
		return false;
	b->win = win;
	b->cap = cap;
	return true;
}

void ts_bounds_repair(struct ts_bounds *b, const struct ts_repair *r)
{
	if (!window_room(b)) {
		b->overflow = true;
		return;
	}
	b->win[b->nwin].qid = r->qid;
	b->win[b->nwin].w.from = r->issue_ns;
	b->win[b->nwin].w.to = r->found_ns;
	memcpy(b->win[b->nwin].w.low_ns, r->low_ns, sizeof(r->low_ns));
	b->nwin++;
}

void ts_bounds_lost(struct ts_bounds *b)
{
	b->overflow = true;
}

/*
 * A seqlock read: the BPF side sets seq to 0 before rewriting a record and
 * to n + 1 after (bpf/records.bpf.h, repair_seq_set), so a copy is whole
 * when seq read n + 1 before it (acquire: the fields not read earlier) and
 * still does after it (the fence: the fields not read later).
 */
bool ts_repair_read(const volatile struct ts_repair *r, __u64 n,
		    struct ts_repair *out)
{
	const struct ts_repair *p = (const struct ts_repair *)r;

	if (__atomic_load_n(&p->seq, __ATOMIC_ACQUIRE) != n + 1)
		return false;
	out->seq = n + 1;
	out->issue_ns = __atomic_load_n(&p->issue_ns, __ATOMIC_RELAXED);
	out->found_ns = __atomic_load_n(&p->found_ns, __ATOMIC_RELAXED);
	out->addr = __atomic_load_n(&p->addr, __ATOMIC_RELAXED);
	for (int i = 0; i < TS_LOW_DEPTHS; i++)
		out->low_ns[i] =
			__atomic_load_n(&p->low_ns[i], __ATOMIC_RELAXED);
	out->qid = __atomic_load_n(&p->qid, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&p->seq, __ATOMIC_RELAXED) == n + 1;
}

static __s64 max64(__s64 a, __s64 b)
{
	return a > b ? a : b;
}

/*
 * The repair windows of device @qid over the span up to @now_ns: the most
 * open at once and the time any is; when some of its @missed repairs were
 * not logged, all of them at once, all the span long. A repair counted
 * but not logged: the log had lost some, its slot was taken while locked
 * (kernels before 5.12), or it came after the log was read for this
 * snapshot (then its window, read with the next, lies before that span).
 */
static void windows_of(const struct ts_bounds *b, unsigned int qid,
		       __u64 missed, __u64 now_ns, struct ts_windows *out)
{
	struct ts_miss_window *w = malloc((b->nwin + 1) * sizeof(*w));
	unsigned int i, n = 0;

	for (i = 0; w && i < b->nwin; i++)
		if (b->win[i].qid == qid)
			w[n++] = b->win[i].w;
	if (!w || b->overflow || missed > n) {
		out->most = missed;
		out->covered_ns = missed && now_ns > b->span_start_ns ?
					  now_ns - b->span_start_ns : 0;
		out->unsure_ns = out->covered_ns;
	} else
		ts_windows_scan(w, n, b->span_start_ns, now_ns, out);
	free(w);
}

void ts_bounds_device(struct ts_bounds *b, const struct ts_bounds_read *in,
		      __u64 now_ns, struct ts_bounds_out *out)
{
	struct ts_bounds_dev *d = &b->dev[in->qid % TS_MAX_DEVS];
	struct ts_windows win;
	__u64 over;

	if (d->queue != in->queue || d->claimed_ns != in->claimed_ns) {
		memset(d, 0, sizeof(*d));
		d->queue = in->queue;
		d->claimed_ns = in->claimed_ns;
	}
	d->peak = max64(d->peak, in->device_peak_taken);
	d->os_peak = max64(d->os_peak, in->os_peak_taken);
	d->os_peak_run = max64(d->os_peak_run, d->os_peak);
	windows_of(b, in->qid, in->missed - d->missed_start, now_ns, &win);
	over = win.most + in->suspects + in->contended;
	ts_depth_range_of(&out->span, d->peak, over,
			  in->under - d->under_start + d->open_start);
	out->span.unsure_ns = win.unsure_ns;
	out->span.windows_ns = win.covered_ns;
	out->span.uncounted = d->open_start;
	out->run = out->span;
	if (d->has_run)
		ts_depth_range_join(&out->run, &d->run);
	out->os_peak = d->os_peak;
	out->os_peak_run = d->os_peak_run;
	d->last_run = out->run;
	d->last_under = in->under;
	d->last_open = in->open;
	d->last_missed = in->missed;
	d->seen = true;
}

void ts_bounds_end_span(struct ts_bounds *b, __u64 now_ns)
{
	struct ts_bounds_dev *d;
	int i;

	for (i = 0; i < TS_MAX_DEVS; i++) {
		d = &b->dev[i];
		if (!d->seen)
			continue;
		d->run = d->last_run;
		d->has_run = true;
		d->under_start = d->last_under;
		d->open_start = d->last_open;
		d->missed_start = d->last_missed;
		d->peak = d->os_peak = 0;
		d->seen = false;
	}
	b->nwin = 0;
	b->overflow = false;
	b->span_start_ns = now_ns;
}
