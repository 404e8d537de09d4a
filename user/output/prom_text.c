// SPDX-License-Identifier: GPL-2.0
/* The text exposition: a sink of the render (expo.h), what /metrics holds. */
#include <stdio.h>
#include <stdlib.h>

#include "expo.h"
#include "prom.h"

/*
 * A label's value as the text format escapes it: a backslash, a double
 * quote and a line feed (a device-mapper name under -N may hold any).
 */
static void label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

/* The text format: each family's HELP and TYPE, then its series. */
static void text_family(void *ctx, const char *name, const char *type,
			const char *help)
{
	fprintf(ctx, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* @s's labels, then le="@le" when not NULL; nothing when neither. */
static void text_labels(FILE *f, const struct ts_expo_series *s,
			const char *le)
{
	int i;

	if (!s->n && !le)
		return;
	fputc('{', f);
	for (i = 0; i < s->n; i++) {
		fprintf(f, "%s%s=\"", i ? "," : "", s->l[i].name);
		label_value(f, s->l[i].value ?: "");
		fputc('"', f);
	}
	if (le)
		fprintf(f, "%sle=\"%s\"", s->n ? "," : "", le);
	fputc('}', f);
}

static void text_sample(void *ctx, const struct ts_expo_series *s, double v,
			enum ts_expo_fmt fmt)
{
	FILE *f = ctx;

	fputs(s->name, f);
	text_labels(f, s, NULL);
	if (fmt == TS_EXPO_U64)
		fprintf(f, " %llu\n", (unsigned long long)v);
	else
		fprintf(f, fmt == TS_EXPO_F9 ? " %.9f\n" : " %.17g\n", v);
}

/* A suffixed series of histogram @s (_bucket, _sum, _count): a count. */
static void text_count(FILE *f, const struct ts_expo_series *s,
		       const char *suffix, const char *le, __u64 n)
{
	fprintf(f, "%s%s", s->name, suffix);
	text_labels(f, s, le);
	fprintf(f, " %llu\n", (unsigned long long)n);
}

static void text_histogram(void *ctx, const struct ts_expo_series *s,
			   const struct ts_expo_hist *h)
{
	FILE *f = ctx;
	char le[32];
	int i;

	for (i = 0; i < h->nedges; i++) {
		snprintf(le, sizeof(le), "%.12g", h->edges[i] / 1e9);
		text_count(f, s, "_bucket", le, h->cum[i]);
	}
	text_count(f, s, "_bucket", "+Inf", h->count);
	fprintf(f, "%s_sum", s->name);
	text_labels(f, s, NULL);
	fprintf(f, " %.9f\n", h->sum_s);
	text_count(f, s, "_count", NULL, h->count);
}

static const struct ts_expo_ops text_ops = {
	.family = text_family,
	.sample = text_sample,
	.histogram = text_histogram,
};

char *ts_prom_render(struct ts_prom *p, const struct ts_report *r, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct ts_expo x = { &text_ops, f };
	int err;

	if (!f)
		return NULL;
	err = ts_prom_render_to(p, r, &x);
	if (fclose(f) || err) {
		free(buf);
		return NULL;
	}
	return buf;
}
