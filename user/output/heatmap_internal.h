/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What heatmap.c (the columns, as reports come in) and heatmap_svg.c (the
 * picture, at exit) share: the panels and their columns. Not for the rest
 * of truestat, which sees struct ts_heatmap through heatmap.h only.
 */
#ifndef TS_HEATMAP_INTERNAL_H
#define TS_HEATMAP_INTERNAL_H

#include "heatmap.h"

/* KIND_SYNC: the durable writes' Q -> end of sequence, in op write's place */
enum { KIND_SERVICE, KIND_QUEUE, KIND_SYNC, NR_KINDS };

/* The rows lo .. lo + n - 1 of one column of one panel. */
struct hm_col {
	unsigned short lo, n;
	__u64 *c;
};

struct hm_panel {
	char dev[64];
	unsigned int major, minor;
	int op, kind;
	bool bio_layer;
	struct hm_col *cols;
	int cap;
	__u64 total;
};

/* Panels beyond this many are counted, not drawn. */
#define HM_MAX_PANELS 1024

struct ts_heatmap {
	double interval_s;
	time_t start;
	int max_cols;
	int ncols;	/* columns in use, the last one maybe not full */
	int per_col;	/* intervals a full column holds */
	int in_last;	/* intervals in the last column */
	long intervals; /* all of them */
	int npanels, cap_panels, dropped;
	struct hm_panel *p;
	FILE *file; /* ts_heatmap_open's */
	const char *path;
};

#endif
