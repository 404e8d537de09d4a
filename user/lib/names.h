/* SPDX-License-Identifier: GPL-2.0 */
/* The names userspace prints for the directions and the events. */
#ifndef TS_NAMES_H
#define TS_NAMES_H

#include "truestat.h"

extern const char *const ts_op_names[TS_NR_OPS];
/* include/events.def: the JSON keys, and the help of each */
extern const char *const ts_event_names[TS_NR_EVENTS];
extern const char *const ts_event_help[TS_NR_EVENTS];

#endif
