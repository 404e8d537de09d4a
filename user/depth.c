// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "truestat.h"
#include "depth.h"

__s64 ts_level_time(__u64 reg, __u64 now_ns)
{
	/* n = round(reg / BIAS): how many times the level is open right now */
	__s64 n = ((__s64)reg + (__s64)(TS_LEVEL_BIAS / 2)) >> 60;

	return (__s64)(reg - (__u64)n * TS_LEVEL_BIAS + (__u64)n * now_ns);
}

static __s64 clamp_time(__s64 t, __u64 span_ns)
{
	if (t < 0)
		return 0;
	return (__u64)t > span_ns ? (__s64)span_ns : t;
}

/* Smallest depth D with time(depth > D) <= (1 - q) * span. */
static unsigned int percentile(const __s64 *at_least, __u64 span_ns, double q)
{
	/* not (1 - q) * span: 1 - 0.9 is 0.0999..98, so exactly 90% failed */
	double limit = (double)span_ns - q * (double)span_ns;
	unsigned int below = 0;
	int slot;

	for (slot = 0; slot < TS_LEVEL_SLOTS; slot++) {
		if ((double)clamp_time(at_least[slot], span_ns) <= limit)
			return slot < TS_LEVEL_EXACT ? ts_slot_level(slot) - 1 : below;
		below = ts_slot_level(slot);
	}
	return below;
}

void ts_depth_summarize(const __s64 *at_least, __u64 span_ns,
			struct ts_depth_summary *out)
{
	double sum = 0, here, next;
	unsigned int width;
	int slot;

	memset(out, 0, sizeof(*out));
	if (!span_ns)
		return;
	for (slot = 0; slot < TS_LEVEL_SLOTS; slot++) {
		here = clamp_time(at_least[slot], span_ns);
		if (here <= 0)
			continue;
		out->max = ts_slot_level(slot);
		out->max_exact = slot < TS_LEVEL_EXACT - 1;
		/* levels L .. next-1 share this slot's and the next one's */
		next = slot + 1 < TS_LEVEL_SLOTS ?
			       clamp_time(at_least[slot + 1], span_ns) : 0;
		width = slot + 1 < TS_LEVEL_SLOTS ?
				ts_slot_level(slot + 1) - ts_slot_level(slot) : 1;
		sum += here + (width - 1) * (here + next) / 2;
	}
	out->mean = sum / (double)span_ns;
	out->busy_share = (double)clamp_time(at_least[0], span_ns) /
			  (double)span_ns;
	out->p50 = percentile(at_least, span_ns, 0.50);
	out->p90 = percentile(at_least, span_ns, 0.90);
	out->p99 = percentile(at_least, span_ns, 0.99);
}
