// SPDX-License-Identifier: GPL-2.0
#include <math.h>

#include "json.h"

static void put_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* Comma and key before a value at the current depth. */
static void start_value(struct tj *j, const char *key)
{
	if (j->comma[j->depth])
		fputc(',', j->f);
	j->comma[j->depth] = true;
	if (key) {
		put_string(j->f, key);
		fputc(':', j->f);
	}
}

void tj_open(struct tj *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->comma[0] = false;
}

static void open_nested(struct tj *j, const char *key, char bracket)
{
	start_value(j, key);
	fputc(bracket, j->f);
	if (j->depth + 1 < TJ_MAX_DEPTH)
		j->depth++;
	j->comma[j->depth] = false;
}

void tj_obj(struct tj *j, const char *key)
{
	open_nested(j, key, '{');
}

void tj_arr(struct tj *j, const char *key)
{
	open_nested(j, key, '[');
}

static void close_nested(struct tj *j, char bracket)
{
	fputc(bracket, j->f);
	if (j->depth > 0)
		j->depth--;
}

void tj_end_obj(struct tj *j)
{
	close_nested(j, '}');
}

void tj_end_arr(struct tj *j)
{
	close_nested(j, ']');
}

void tj_str(struct tj *j, const char *key, const char *val)
{
	start_value(j, key);
	put_string(j->f, val);
}

void tj_u64(struct tj *j, const char *key, unsigned long long val)
{
	start_value(j, key);
	fprintf(j->f, "%llu", val);
}

void tj_s64(struct tj *j, const char *key, long long val)
{
	start_value(j, key);
	fprintf(j->f, "%lld", val);
}

void tj_num(struct tj *j, const char *key, double val, int decimals)
{
	start_value(j, key);
	if (!isfinite(val))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.*f", decimals, val);
}

void tj_null(struct tj *j, const char *key)
{
	start_value(j, key);
	fputs("null", j->f);
}

void tj_bool(struct tj *j, const char *key, bool val)
{
	start_value(j, key);
	fputs(val ? "true" : "false", j->f);
}

void tj_close(struct tj *j)
{
	fputc('\n', j->f);
	j->depth = 0;
	j->comma[0] = false;
}
