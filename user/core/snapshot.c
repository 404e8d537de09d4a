// SPDX-License-Identifier: GPL-2.0
/*
 * A snapshot: every traced device's counters, histograms and depth read
 * from the maps under its claim, with the bounds of its depth.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "features/partitions.h"

/* @dst[i] += @src[i] for @n 64-bit counters. */
static void add_u64s(void *dst, const void *src, size_t n)
{
	const __u64 *s = src;
	__u64 *d = dst;
	size_t i;

	for (i = 0; i < n; i++)
		d[i] += s[i];
}

/*
 * Device @qid's figures summed over CPUs, with what nested completions
 * added (nested_stats); false: unread.
 */
static bool sum_stats(struct ts_tracer *t, unsigned int qid,
		      struct ts_dev_stats *out)
{
	const size_t n = sizeof(struct ts_op_stats) / sizeof(__u64);
	struct ts_nested_stats nested;
	int cpu, op;

	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.dev_stats), &qid,
				t->percpu) ||
	    bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.nested_stats), &qid,
				&nested))
		return false;
	for (cpu = 0; cpu < t->ncpus; cpu++)
		add_u64s(out, &t->percpu[cpu], sizeof(*out) / sizeof(__u64));
	for (op = 0; op < TS_NR_OPS; op++)
		add_u64s(&out->op[op], &nested.op[op], n);
	out->adding = 0;
	return true;
}

/* Device @qid's access pattern (--pattern, else zeros); false: unread. */
static bool read_pattern(struct ts_tracer *t, unsigned int qid,
			 struct ts_pattern *out)
{
	memset(out, 0, sizeof(*out));
	return !t->pattern ||
	       !bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.patterns), &qid, out);
}

/* The bounds of device @d's depth, read from @st and its counters. */
static void read_bounds(struct ts_tracer *t,
			const volatile struct ts_dev_state *st,
			struct ts_dev_snap *d, __u64 now_ns)
{
	const __u64 *ev = d->stats.events;
	struct ts_bounds_read in = {
		.qid = d->qid,
		.queue = d->queue,
		.claimed_ns = d->claimed_ns,
		.device_peak_taken = st->device_peak_taken,
		.os_peak_taken = st->os_peak_taken,
		.suspects = st->suspects,
		.under = ev[TS_EV_RQ_FULL] + ev[TS_EV_UNMATCHED] +
			 ev[TS_EV_DEPTH_BELOW] + ev[TS_EV_CLAIMING] +
			 ev[TS_EV_UNORDERED] + ev[TS_EV_ISSUE_UNSEEN],
		/* a request refused a record completes as issue-unseen */
		.open = ev[TS_EV_RQ_FULL] > ev[TS_EV_ISSUE_UNSEEN] ?
				ev[TS_EV_RQ_FULL] - ev[TS_EV_ISSUE_UNSEEN] :
				0,
		.missed = ev[TS_EV_MISSED_C] + d->repairs_uncounted,
		.contended = ev[TS_EV_CONTENDED],
	};
	struct ts_bounds_out out;

	ts_bounds_device(&t->bounds, &in, now_ns, &out);
	d->suspects = in.suspects;
	d->device_span = out.span;
	d->device_run = out.run;
	d->os_peak = out.os_peak;
	d->os_peak_run = out.os_peak_run;
}

/* Issue time of the device's oldest request in flight at the sweep, or 0. */
static __u64 oldest_issue(struct ts_tracer *t, unsigned int qid)
{
	__u64 ns = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.oldest_issue), &qid,
				&ns) || ns == ~0ULL)
		return 0;
	return ns;
}

/*
 * A read of the BPF side's figures is dated by the clock read right after
 * it; a pause between the read and that clock read (this thread held up on
 * a busy host) would date it late, and the next span would hold what
 * happened before it began. So each read is bracketed: *@ns holds the
 * clock read just before try @tries, and becomes the one after. False
 * while the two are more than TS_BRACKET_NS apart and tries remain: read
 * again (the figures only grow, so the later read is as good).
 */
#define TS_BRACKET_NS 200000ULL
#define TS_BRACKET_TRIES 8

static bool bracket_tight(struct ts_tracer *t, __u64 *ns, int tries)
{
	__u64 before = *ns;

	*ns = mono_ns();
	if (*ns - before > TS_BRACKET_NS && tries < TS_BRACKET_TRIES) {
		t->reread++;
		return false;
	}
	if (*ns - before > t->bracket_max_ns)
		t->bracket_max_ns = *ns - before;
	return true;
}

/*
 * @st's depth words and level registers, as of the clock read right after
 * their copy (d->levels_ns, bracketed): the span of the depth figures runs
 * from one such read to the next, so that a pause between the copy and
 * the clock read of a report's end (a busy host) cannot stretch or shrink
 * it.
 */
static void read_levels(struct ts_tracer *t,
			const volatile struct ts_dev_state *st,
			struct ts_dev_snap *d)
{
	__u64 now;
	__u64 raw_dev[TS_LEVEL_REGS], raw_os[TS_LEVEL_REGS];
	__u64 word_dev, word_os;
	int i = 0;

	do {
		d->levels_ns = mono_ns();
		memcpy(raw_dev, (const void *)st->device_level,
		       sizeof(raw_dev));
		memcpy(raw_os, (const void *)st->os_level, sizeof(raw_os));
		word_dev = st->in_device;
		word_os = st->in_os;
	} while (!bracket_tight(t, &d->levels_ns, ++i));
	d->in_device = ts_depth_of(word_dev);
	d->in_os = ts_depth_of(word_os);
	now = d->levels_ns + t->clock_offset;
	ts_levels_at(raw_dev, word_dev, now, d->device_time);
	ts_levels_at(raw_os, word_os, now, d->os_time);
}

/*
 * Depth histogram slot @slot of the disk claimed at @claim, widened to 64
 * bits into @out. A new disk in the slot (the BPF side emptied it) counts
 * from zero.
 */
static void read_depth(struct ts_tracer *t, __u64 claim, unsigned int slot,
		       struct ts_depth_counts *out)
{
	if (t->depth_claim[slot] && t->depth_claim[slot] != claim) {
		memset(&t->depth_total[slot], 0, sizeof(t->depth_total[0]));
		memset(&t->depth_seen[slot], 0, sizeof(t->depth_seen[0]));
	}
	t->depth_claim[slot] = claim;
	ts_depth_widen(&t->depth_total[slot], &t->depth_seen[slot],
		       &t->depth_hists[slot]);
	*out = t->depth_total[slot];
}

/* Histogram slot @slot's service by size (--pattern), widened, into @s. */
static void read_sizes(struct ts_tracer *t, __u64 claim, unsigned int slot,
		       struct ts_snapshot *s)
{
	if (!t->pattern)
		return;
	if (t->size_claim[slot] && t->size_claim[slot] != claim) {
		memset(&t->size_total[slot], 0, sizeof(t->size_total[0]));
		memset(t->size_seen[slot], 0, sizeof(t->size_seen[0]));
	}
	t->size_claim[slot] = claim;
	ts_size_widen(&t->size_total[slot], t->size_seen[slot],
		      &t->size_hists[slot * TS_PATTERN_OPS]);
	s->sizes[slot] = t->size_total[slot];
	s->has_sizes = true;
}

/* Slot @qid's counters, of claim @c: the disk's own (lib/claim.h). */
static void read_counters(struct ts_tracer *t, unsigned int qid,
			  const struct ts_claim *c, struct ts_dev_snap *d)
{
	struct ts_claim_counters now;
	bool read;
	int i = 0;

	do {
		t->counted_ns = mono_ns();
		read = sum_stats(t, qid, &now.stats);
	} while (!bracket_tight(t, &t->counted_ns, ++i) && read);
	/* a map that could not be read: its counters as last read */
	if (!read)
		now.stats = t->claims[qid].last.stats;
	if (!read_pattern(t, qid, &now.pattern))
		now.pattern = t->claims[qid].last.pattern;
	ts_claim_shared(&t->claims[qid], c->claimed_ns, t->state[qid].claims,
			t->state[qid].prev_stamp,
			(t->counted_ns + t->clock_offset) & TS_CLOCK_MASK);
	ts_claim_counts(&t->claims[qid], c->claimed_ns, !d->untraced, &now);
	d->counts_shared = t->claims[qid].shared;
	d->stats = now.stats;
	d->pattern = now.pattern;
}

/* Traced disk @d's histograms into @s (none beyond TS_HIST_DEVS). */
static void read_hists(struct ts_tracer *t,
		       const volatile struct ts_dev_state *st,
		       const struct ts_claim *c, struct ts_snapshot *s,
		       struct ts_dev_snap *d)
{
	d->hist_slot = st->hist_slot <= TS_HIST_DEVS ? st->hist_slot : 0;
	if (!d->hist_slot)
		return;
	memcpy(s->hist[d->hist_slot - 1],
	       &t->hists[(d->hist_slot - 1) * TS_HIST_SETS], sizeof(s->hist[0]));
	read_depth(t, c->claimed_ns, d->hist_slot - 1,
		   &s->depth[d->hist_slot - 1]);
	read_sizes(t, c->claimed_ns, d->hist_slot - 1, s);
}

/* Whether slot @qid counted a request since its counters were last read. */
static bool counts_moved(struct ts_tracer *t, unsigned int qid)
{
	const struct ts_dev_stats *then = &t->claims[qid].last.stats;
	struct ts_dev_stats now;
	int op;

	if (!sum_stats(t, qid, &now))
		return false;
	for (op = 0; op < TS_NR_OPS; op++)
		if (now.op[op].ios != then->op[op].ios)
			return true;
	return false;
}

/*
 * Repairs of slot @qid that began (taking a request out of the depth) and
 * were not counted missed in the counters last read: read after the levels,
 * those repairs may be in them (bpf/records.bpf.h, forget_request).
 */
static __u64 repairs_uncounted(struct ts_tracer *t,
			       const volatile struct ts_dev_state *st,
			       unsigned int qid)
{
	__u64 counted = t->claims[qid].last.stats.events[TS_EV_MISSED_C], begun;

	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* after the levels' reads */
	begun = __atomic_load_n(&st->repairs_begun, __ATOMIC_RELAXED);
	return begun > counted ? begun - counted : 0;
}

/* What only a traced disk's entry @d holds, in snapshot @s. */
static void fill_traced(struct ts_tracer *t,
			const volatile struct ts_dev_state *st,
			const struct ts_claim *c, unsigned int durable,
			struct ts_snapshot *s, struct ts_dev_snap *d)
{
	int tries;

	/*
	 * The counters and the histograms are two reads: requests that
	 * complete between them are in one and not the other, and a report
	 * of a few (a short burst, the loader held up between the reads)
	 * could find them all in the previous report's histograms. Both are
	 * read again while the counters moved; three times at most: under
	 * steady I/O the few at the edges do not matter. The levels come
	 * last, with the counters again while a repair that may have changed
	 * them is not yet in missed: its span would read exact.
	 */
	for (tries = 1;; tries++) {
		read_hists(t, st, c, s, d);
		if (tries == 3 || !counts_moved(t, d->qid)) {
			read_levels(t, st, d);
			d->repairs_uncounted = repairs_uncounted(t, st, d->qid);
			if (tries == 3 || !d->repairs_uncounted)
				break;
		}
		read_counters(t, d->qid, c, d);
	}
	d->sync_in_flight = durable;
	read_bounds(t, st, d, d->levels_ns);
	d->oldest_issue_ns = oldest_issue(t, d->qid);
}

/*
 * Device @d's mean service since the slot's last read @last (since its
 * claim when that was another disk's), which dates the completions no
 * program saw (bpf/depth.bpf.h, estimated_end).
 */
static void hint_service(struct ts_tracer *t, const struct ts_dev_snap *last,
			 const struct ts_dev_snap *d)
{
	bool same = last->queue == d->queue && last->claimed_ns == d->claimed_ns;
	__u64 ios = 0, ns = 0;
	int op;

	if (d->untraced)
		return;
	for (op = 0; op < TS_NR_OPS; op++) {
		ios += d->stats.op[op].ios - (same ? last->stats.op[op].ios : 0);
		ns += d->stats.op[op].service_ns -
		      (same ? last->stats.op[op].service_ns : 0);
	}
	if (ios && ns / ios)
		bpf_map_update_elem(bpf_map__fd(t->skel->maps.service_hint),
				    &d->qid, &(__u64){ ns / ios }, BPF_ANY);
}

/* Slot @qid, of claim @c, as snapshot @s's next device. */
static void fill_slot(struct ts_tracer *t, unsigned int qid,
		      const struct ts_claim *c, unsigned int durable,
		      struct ts_snapshot *s)
{
	const volatile struct ts_dev_state *st = &t->state[qid];
	struct ts_dev_snap *d = &s->dev[s->ndev], gone;

	memset(d, 0, sizeof(*d));
	d->qid = qid;
	d->queue = c->queue;
	d->queue_id = st->queue_id;
	d->kdev = st->dev;
	d->claimed_ns = c->claimed_ns;
	d->layer = st->layer;
	d->untraced = st->mode != TS_DEV_TRACED;
	read_counters(t, qid, c, d);
	/* its repairs after the counters, before the levels */
	if (t->test_sweep_between)
		tracer_settle(t);
	if (!d->untraced)
		fill_traced(t, st, c, durable, s, d);
	hint_service(t, &t->last[qid], d);
	if (ts_slot_next(&t->last[qid], d, &gone))
		ts_snapshot_keep_gone(t->gone, &gone);
}

/*
 * Slot @qid into snapshot @s once claimed: the claim it holds once any
 * under way has ended, read again when a claim began while it was read
 * (lib/claim.h). A slot left out of one report would have its next report
 * count its disk from the slot's start.
 */
static bool read_slot(struct ts_tracer *t, unsigned int qid,
		      unsigned int durable, struct ts_snapshot *s)
{
	const volatile struct ts_dev_state *st = &t->state[qid];
	struct ts_claim c;

	do {
		if (!ts_claim_settled(st, &c, TS_CLAIM_WAIT_US)) {
			fprintf(stderr, "truestat: device slot %u still being "
				"claimed after %u s: left out of this report, "
				"counted from its start in the next\n", qid,
				TS_CLAIM_WAIT_US / 1000000);
			return false;
		}
		if (!c.queue)
			return false;
		fill_slot(t, qid, &c, durable, s);
	} while (!ts_claim_held(st, &c));
	return true;
}

void ts_tracer_snapshot(struct ts_tracer *t, struct ts_snapshot *s,
			bool span_end)
{
	static unsigned int durable[TS_MAX_DEVS];
	unsigned int qid;

	tracer_follow_stacks(t);
	tracer_test_age_stamps(t);
	if (!t->test_sweep_between)
		tracer_settle(t);
	tracer_read_repairs(t);
	tracer_durable_in_flight(t, durable);
	s->ndev = 0;
	t->counted_ns = 0;
	for (qid = 0; qid < TS_MAX_DEVS; qid++)
		if (read_slot(t, qid, durable[qid], s))
			s->ndev++;
	/* as of the counters' reads: a request that completes after the last
	 * one (while the rest of its device is read) is the next span's */
	s->mono_ns = t->counted_ns ? t->counted_ns : mono_ns();
	s->lost_events = tracer_lost_events(t);
	s->seq = 0;
	if (span_end) {
		s->seq = ++t->seq;
		ts_bounds_end_span(&t->bounds, s->mono_ns);
	}
}

void ts_tracer_gone(struct ts_tracer *t, struct ts_snapshot *gone)
{
	int i;

	for (i = 0; i < t->gone->ndev; i++)
		ts_snapshot_keep_gone(gone, &t->gone->dev[i]);
	t->gone->ndev = 0;
}

int ts_tracer_untraced(struct ts_tracer *t, unsigned int *kdevs, int max,
		       bool *more)
{
	int fd = bpf_map__fd(t->skel->maps.untraced), n = 0;
	__u32 key = ~0U, next; /* no disk is ~0: its next key is the first */

	*more = t->skel->bss->untraced_lost > 0;
	while (!bpf_map_get_next_key(fd, &key, &next)) {
		if (n < max)
			kdevs[n++] = next;
		else
			*more = true;
		key = next;
	}
	return n;
}
