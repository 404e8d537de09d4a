// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <string.h>

#include "units.h"

int ts_units_parse(const char *s, enum ts_unit *out)
{
	if (!strcmp(s, "us"))
		*out = TS_UNIT_US;
	else if (!strcmp(s, "ms"))
		*out = TS_UNIT_MS;
	else
		return -1;
	return 0;
}

void ts_tmin_see(double *min_ms, double ms)
{
	if (isfinite(ms) && ms > 0 && ms < *min_ms)
		*min_ms = ms;
}

/*
 * Decimals that give @v (in the unit) three significant digits, within
 * @lo..@hi. Rounding error in log10 can only add a digit, never take one.
 */
static int decimals_for(double v, int lo, int hi)
{
	int d = isfinite(v) ? 2 - (int)floor(log10(v)) : lo;

	return d < lo ? lo : d > hi ? hi : d;
}

struct ts_tfmt ts_tfmt_pick(double min_ms, enum ts_unit fixed)
{
	struct ts_tfmt t = { .unit = fixed };

	if (t.unit == TS_UNIT_AUTO)
		t.unit = min_ms < 0.1 ? TS_UNIT_US : TS_UNIT_MS;
	if (t.unit == TS_UNIT_US)
		t.decimals = decimals_for(min_ms * 1e3, 1, 3);
	else
		t.decimals = decimals_for(min_ms, 3, 6);
	return t;
}

const char *ts_tfmt_unit(const struct ts_tfmt *t)
{
	return t->unit == TS_UNIT_US ? "us" : "ms";
}

static double in_unit(const struct ts_tfmt *t, double ms)
{
	return t->unit == TS_UNIT_US ? ms * 1e3 : ms;
}

void ts_tfmt_put(FILE *f, const struct ts_tfmt *t, double ms, int width)
{
	if (isnan(ms))
		fprintf(f, " %*s", width, "-");
	else
		fprintf(f, " %*.*f", width, t->decimals, in_unit(t, ms));
}

const char *ts_time_str(char *buf, size_t len, double ms, enum ts_unit fixed)
{
	struct ts_tfmt t = ts_tfmt_pick(ms > 0 ? ms : INFINITY, fixed);

	if (isnan(ms))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f %s", t.decimals, in_unit(&t, ms),
			 ts_tfmt_unit(&t));
	return buf;
}
