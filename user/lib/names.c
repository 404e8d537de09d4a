// SPDX-License-Identifier: GPL-2.0
#include "names.h"

const char *const ts_op_names[TS_NR_OPS] = { "read", "write", "discard",
					     "flush", "other" };

const char *const ts_event_names[TS_NR_EVENTS] = {
#define TS_EVENT(id, name, help) [TS_EV_##id] = name,
#include "events.def"
#undef TS_EVENT
};

const char *const ts_event_help[TS_NR_EVENTS] = {
#define TS_EVENT(id, name, help) [TS_EV_##id] = help,
#include "events.def"
#undef TS_EVENT
};
