/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exposition's sinks: prom.c says what /metrics holds, family by family
 * and series by series, through these callbacks, and each format writes it
 * its way: the text format (prom.c), protobuf's messages (prom_pb.c). No
 * format is made from another.
 */
#ifndef TS_EXPO_H
#define TS_EXPO_H

#include <linux/types.h>

/* How the text format writes a value (protobuf takes the double). */
enum ts_expo_fmt {
	TS_EXPO_G17, /* %.17g: any double, round-trip exact */
	TS_EXPO_U64, /* a count */
	TS_EXPO_F9,  /* seconds counted in ns: 9 decimals, exact */
};

struct ts_expo_label {
	const char *name, *value; /* as it is (NULL: ""): each sink escapes */
};

#define TS_EXPO_LABELS 4

/* A series: its metric's name and its labels, in the text's order. */
struct ts_expo_series {
	const char *name;
	int n;
	struct ts_expo_label l[TS_EXPO_LABELS];
};

/* A histogram series' figures. */
struct ts_expo_hist {
	const __u64 *counts; /* the kernel's buckets (TS_HIST_SLOTS): native */
	const __u64 *edges;  /* the classic buckets' upper bounds, ns */
	const __u64 *cum;    /* the count at or below each edge */
	int nedges;
	__u64 count; /* all of them: +Inf's */
	double sum_s;
};

struct ts_expo_ops {
	/* a family: its name, type ("counter", "gauge", "histogram"), help */
	void (*family)(void *ctx, const char *name, const char *type,
		       const char *help);
	void (*sample)(void *ctx, const struct ts_expo_series *s, double v,
		       enum ts_expo_fmt fmt);
	void (*histogram)(void *ctx, const struct ts_expo_series *s,
			  const struct ts_expo_hist *h);
};

struct ts_expo {
	const struct ts_expo_ops *ops;
	void *ctx;
};

#endif
