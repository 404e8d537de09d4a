/* SPDX-License-Identifier: GPL-2.0 */
/* What prom.c's render takes from prom_hold.c. */
#ifndef TS_PROM_PARTS_H
#define TS_PROM_PARTS_H

#include "prom.h"

/*
 * @p->dev[i] becomes what to print for @r->dev[i]: each counter the larger
 * of its total now and what was printed last of the same disk. 0, or -1:
 * out of memory.
 */
int ts_prom_hold(struct ts_prom *p, const struct ts_report *r);

/* @d's window at this scrape, NULL: none taken (ts_prom_window). */
const struct ts_prom_window *ts_prom_window_of(const struct ts_prom *p,
					       const struct ts_dev_report *d);

#endif
