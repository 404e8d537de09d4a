/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Findings: what a report's figures mean, in words. Each rule reads one
 * device's report (and the span) and may state a finding, or a "cannot
 * tell" note saying what the run has not seen. A new finding is one file
 * in this folder and one entry in ts_rules (findings.c).
 */
#ifndef TS_FINDINGS_H
#define TS_FINDINGS_H

#include <stdbool.h>
#include <stdio.h>

#include "core/report.h"
#include "lib/json.h"

/*
 * %util (BUSY%) from which a reader takes a disk for nearly full: the
 * articles' readers did at 89-97%, alert rules fire from 95%. BUSY% counts
 * from issue, %util from allocation (how-it-measures.md), so BUSY% reads
 * a little lower for the same disk: 80% keeps those readings in.
 */
#define TS_FIND_BUSY 0.80
/*
 * Below this many completions in a span no finding is drawn: the curve's
 * evidence floor for a depth class (TS_CURVE_MIN_COMPLETIONS).
 */
#define TS_FIND_MIN_IOS TS_CURVE_MIN_COMPLETIONS
/*
 * A request class weighs in the depth curve when it holds a tenth of the
 * device's service time or more (ts_finding_mixed).
 */
#define TS_FIND_MIX_SHARE 0.10
/*
 * About one at a time: half a request above serial, so the device held
 * one request or none most of the span.
 */
#define TS_SERIAL_CONC 1.5

enum ts_severity {
	TS_SEV_NOTE,   /* cannot tell: what is missing to conclude */
	TS_SEV_LOW,    /* worth knowing: who loads the disk */
	TS_SEV_MEDIUM, /* a misreading to correct, or a pattern that costs */
	TS_SEV_HIGH,   /* what limits the I/O now */
};

/* What a finding rests on, to say when those figures are not exact. */
enum ts_rests {
	TS_RESTS_DEPTH = 1,    /* the in-device depth: CONC, BUSY%, -D */
	TS_RESTS_OS_DEPTH = 2, /* the OS queue's depth */
};

#define TS_FIGURES_MAX 8
/*
 * Room for the longest sentence with a 63-byte device name (a device-mapper
 * name under -N), every clause and the caveat (test_sentences_fit).
 */
#define TS_SENTENCE_MAX 1024

struct ts_figure {
	const char *name; /* snake_case, a JSON key's style */
	double value;
	const char *unit; /* "ms", "iops", "requests", "share", ... */
};

struct ts_finding {
	const char *id; /* kebab-case, stable: busy-not-full */
	const char *device;
	const char *op;	      /* read, write, all, sync */
	enum ts_severity severity;
	bool exact;	      /* every figure it rests on is exact */
	int rank;	      /* 1: the most important; while built, the order found */
	char sentence[TS_SENTENCE_MAX];
	int nfigures;
	struct ts_figure figure[TS_FIGURES_MAX];
};

#define TS_FINDINGS_MAX 64

struct ts_findings_skip {
	const char *device;
	char reason[160];
};

/*
 * At most TS_FINDINGS_MAX of a report's findings are kept, the most
 * important: past it a finding takes the place of the least important kept
 * (the last found of the lowest severity) when it ranks above it; each one
 * not kept is counted in @not_kept and the table says so.
 */
struct ts_findings {
	double span_s; /* of the report they were drawn from */
	int n;
	int found;    /* drawn so far, kept or not */
	int not_kept; /* drawn but not among the TS_FINDINGS_MAX kept */
	struct ts_finding f[TS_FINDINGS_MAX];
	int nskipped;
	struct ts_findings_skip skipped[TS_MAX_DEVS];
};

/* What a rule reads: one device's report, the span, the run's options. */
struct ts_finding_ctx {
	const struct ts_report *r;
	const struct ts_dev_report *d;
	double span_s;
	struct ts_findings *out;
	/*
	 * The device's requests mix classes whose service differs
	 * (ts_finding_mixed): what, for a sentence; "" when one class. The
	 * depth curve sums them, so its rows compare different work.
	 */
	const char *mixed;
};

struct ts_rule {
	const char *id;
	void (*fn)(const struct ts_finding_ctx *c);
};

extern const struct ts_rule ts_rules[];
extern const int ts_nrules;

/* The findings of every active device of @r, ranked. */
void ts_findings_build(const struct ts_report *r, struct ts_findings *out);

/* "high", "medium", "low", "cannot_tell": JSON's and the exporter's. */
const char *ts_severity_name(enum ts_severity s);

/*
 * The "cannot tell" notes a run's table has said: each at most once per
 * device, in the first report that has it (the totals say it again; JSON
 * keeps it in every report). Past TS_MAX_DEVS devices a note is said
 * every time.
 */
struct ts_notes_said {
	int n;
	struct {
		char device[64];
		unsigned int rules; /* bit k: ts_rules[k]'s note */
	} dev[TS_MAX_DEVS];
};

/*
 * The table's block: nothing when there is nothing to say. @said: the
 * notes said so far, updated; NULL says every note. @totals: the run's
 * totals, which say every note.
 */
void ts_findings_print(FILE *f, const struct ts_findings *fs,
		       struct ts_notes_said *said, bool totals);

/* The report's "findings" and "findings_skipped" arrays. */
void ts_findings_json(struct tj *j, const struct ts_findings *fs);

/* For the rules. */

/*
 * A new finding of rule @id about @c's device and @op, its sentence from
 * @fmt; NULL when the list is full of findings as important. @rests: enum ts_rests bits, checked
 * against the report's exactness; the sentence says what is not exact.
 */
struct ts_finding *ts_finding_add(const struct ts_finding_ctx *c,
				  const char *id, const char *op,
				  enum ts_severity sev, unsigned int rests,
				  const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

void ts_finding_figure(struct ts_finding *f, const char *name, double value,
		       const char *unit);

/* The direction of device-wide figures: the one active, else "all". */
const char *ts_finding_dev_op(const struct ts_dev_report *d);

/* "reads", "writes", ... for a sentence; "I/O" for all. */
const char *ts_finding_op_words(const char *op);

/*
 * The curve's knee when the device itself was the limit (throughput
 * stopped growing while it held more): its row, else -1.
 */
int ts_finding_knee(const struct ts_dev_report *d, bool light);

/*
 * Whether @d's requests mix classes the depth curve cannot compare: two
 * ops (reads, writes, flushes, discards), each with at least
 * TS_FIND_MIN_IOS completions and TS_FIND_MIX_SHARE of the device's
 * service time, whose own costs, each measured alone in the device
 * (issued at depth 1: the curve's alone[]), differ by the curve's growth
 * rule (TS_CURVE_GROWTH) or more, or one of which was too seldom alone to
 * measure. The curve sums them, and may hold one at some depths and the
 * other at others (small writes in deep bursts, flushes alone), so that a
 * change from row to row may be the mix's. Says which in @why. A class
 * below that share (flushes a cache answers at once) moves the device's
 * mean service by less than it; where it gathers in one row, the rules
 * that exempt the knee's row already allow for it. Sizes within a
 * direction are not told apart.
 */
bool ts_finding_mixed(const struct ts_dev_report *d, char *why, size_t len);

/* The shallowest evidenced row's service: depth 1's when it has one. */
int ts_finding_base_row(const struct ts_curve *c);

/*
 * The longest a working disk of any class takes to serve a read of
 * @mean_bytes alone, in ms (doc/diagnosis.md, "Slower than any disk"): a
 * bound linear in the size, so a mean over any mix of sizes is held to the
 * bound of their mean size.
 */
double ts_finding_slowest_read_ms(double mean_bytes);

/*
 * Reads that spent longer in device @d, on average and while it held more
 * than about one at a time, than any working disk takes to serve one alone
 * (*@bound_ms): the time is not its work on each, they waited inside it
 * (waiting-in-device), or it is failing.
 */
bool ts_finding_waits_by_physics(const struct ts_dev_report *d,
				 double *bound_ms);

/* Row @row's depths as the curve prints them: "1", "5-8". */
const char *ts_finding_depths(const struct ts_curve *c, int row, char *buf,
			      size_t len);

/* Rules, one file each. */
void ts_rule_busy_not_full(const struct ts_finding_ctx *c);
void ts_rule_waiting_in_device(const struct ts_finding_ctx *c);
void ts_rule_waiting_in_os(const struct ts_finding_ctx *c);
void ts_rule_flush_wait(const struct ts_finding_ctx *c);
void ts_rule_random_reads(const struct ts_finding_ctx *c);
void ts_rule_capped(const struct ts_finding_ctx *c);
void ts_rule_slow_not_busy(const struct ts_finding_ctx *c);
void ts_rule_one_submitter(const struct ts_finding_ctx *c);

/* capped.c: the plateau that capped-volume names, for waiting-in-device */
bool ts_finding_capped(const struct ts_dev_report *d, bool light,
		       int *first, int *last);

#endif
