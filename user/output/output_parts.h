/* SPDX-License-Identifier: GPL-2.0 */
/* What the table (output.c) and the JSON (output_json.c) share. */
#ifndef TS_OUTPUT_PARTS_H
#define TS_OUTPUT_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/report.h"

/* Whether direction @o has anything to show: completions of any kind. */
bool ts_out_op_shown(const struct ts_op_figures *o);

/* A curve row's depths as the table and the JSON name them: 5-8, 65+. */
const char *ts_out_depths(const struct ts_curve_row *row, char *buf,
			  size_t len);

/*
 * What kept @d's device at its depths. A bio-based device has no OS queue:
 * nothing waits outside it. Under --light the OS queue is not followed.
 */
enum ts_curve_limit ts_out_dev_limit(const struct ts_dev_report *d,
				     bool light);

#endif
