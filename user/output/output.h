/* SPDX-License-Identifier: GPL-2.0 */
/* Printing a report: an iostat-like table, or one JSON object per line. */
#ifndef TS_OUTPUT_H
#define TS_OUTPUT_H

#include <stdio.h>
#include <time.h>

#include "core/report.h"

void ts_print_table(FILE *f, const struct ts_report *r, time_t when);
void ts_print_json(FILE *f, const struct ts_report *r, time_t when);

#endif
