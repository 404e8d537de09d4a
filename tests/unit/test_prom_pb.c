// SPDX-License-Identifier: GPL-2.0
/*
 * The protobuf exposition (user/output/prom_pb.c) against the text one of
 * the same report, read back with protobuf-c: the same families, series
 * and values; each histogram's classic buckets as the text's, and its
 * native buckets holding every sample, each quantile in the bucket next to
 * the kernel buckets' own; and which requests get it (Accept).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "exporter/httpd.h"
#include "metrics.pb-c.h"
#include "output/prom.h"

typedef Io__Prometheus__Client__MetricFamily Family;
typedef Io__Prometheus__Client__Histogram Hist;

static struct ts_report *r;
static Family *fam[256];
static int nfam;

/* A report of sda's reads: service times over 200 kernel buckets, 3 of 0. */
static void report(void)
{
	__u64 *h, n = 0;
	int b;

	r = calloc(1, sizeof(*r));
	assert_non_null(r);
	r->ndev = 1;
	r->span_s = 1;
	snprintf(r->dev[0].name, sizeof(r->dev[0].name), "sda");
	r->dev[0].hist = r->hist[0];
	h = r->hist[0][0].service;
	for (b = 0; b < TS_HIST_SLOTS; b++)
		n += h[b] = b > 200 && b < 400 ? (b * 2654435761u) % 50 : 0;
	h[0] = 3; /* three of 0 ns: the zero bucket */
	n += 3;
	r->dev[0].op[TS_OP_READ].ios = n;
	r->dev[0].op[TS_OP_READ].service_ms = 1;
}

/* Unpacks the length-delimited families of @buf into fam[]. */
static void unpack(const uint8_t *buf, size_t len)
{
	size_t at = 0, n;
	int shift;

	for (nfam = 0; at < len; nfam++) {
		assert_true(nfam < 256);
		for (n = 0, shift = 0; buf[at] & 0x80; shift += 7)
			n |= (size_t)(buf[at++] & 0x7f) << shift;
		n |= (size_t)buf[at++] << shift;
		fam[nfam] = io__prometheus__client__metric_family__unpack(NULL, n,
									 buf + at);
		assert_non_null(fam[nfam]);
		at += n;
	}
	assert_int_equal(at, len);
}

static const Family *find(const char *name)
{
	int i;

	for (i = 0; i < nfam; i++)
		if (!strcmp(fam[i]->name, name))
			return fam[i];
	fail_msg("no family %s", name);
	return NULL;
}

/* The number of series of @name in @text: lines "name{" or "name ". */
static int text_series(const char *text, const char *name)
{
	char a[128], b[128];
	const char *l;
	int n = 0;

	snprintf(a, sizeof(a), "\n%s{", name);
	snprintf(b, sizeof(b), "\n%s ", name);
	for (l = text; (l = strchr(l, '\n')); l++)
		n += !strncmp(l, a, strlen(a)) || !strncmp(l, b, strlen(b));
	return n;
}

/* Every family with series in the text has them in protobuf, as many. */
static void same_families(const char *text)
{
	int i, n;

	for (i = 0; i < nfam; i++) {
		if (fam[i]->type == IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM) {
			char count[128];

			snprintf(count, sizeof(count), "%s_count", fam[i]->name);
			n = text_series(text, count);
		} else {
			n = text_series(text, fam[i]->name);
		}
		assert_int_equal(n, fam[i]->n_metric);
	}
	assert_true(nfam > 20);
}

/* The native buckets' counts back from spans and deltas, by index. */
static __u64 native_count(const Hist *h, int *index, __u64 *count, int max)
{
	__u64 total = h->zero_count;
	int64_t c = 0;
	size_t s, k = 0;
	int i, n = 0, at = 0;

	for (s = 0; s < h->n_positive_span; s++) {
		at += h->positive_span[s]->offset;
		for (i = 0; i < (int)h->positive_span[s]->length; i++, at++) {
			c += h->positive_delta[k++];
			assert_true(c >= 0 && n < max);
			index[n] = at;
			count[n++] = c;
			total += c;
		}
	}
	return total;
}

/* The upper edge of the native bucket holding quantile @q, in s. */
static double native_quantile(const Hist *h, double q)
{
	static int index[1024];
	static __u64 count[1024];
	__u64 total = native_count(h, index, count, 1024), seen = h->zero_count;
	__u64 rank = (__u64)ceil(q * total);
	int i;

	for (i = 0; seen < rank; i++)
		seen += count[i];
	return pow(2, index[i - 1] / 16.0);
}

static void test_protobuf_is_the_text(void **state)
{
	struct ts_prom *p = calloc(1, sizeof(*p)), *q = calloc(1, sizeof(*q));
	const Family *f;
	const Hist *h;
	char *text, *pb;
	size_t len, tlen;
	double qs[] = { 0.5, 0.9, 0.99 }, want, got;
	int i;

	(void)state;
	report();
	/* a label value with what the text escapes, braces and spaces */
	p->kernel = q->kernel = "6.1 \"x\\y\" {z}";
	text = ts_prom_render(p, r, &tlen);
	pb = ts_prom_render_protobuf(q, r, &len);
	assert_non_null(text);
	assert_non_null(pb);
	unpack((const uint8_t *)pb, len);
	same_families(text);
	f = find("truestat_service_seconds");
	assert_int_equal(f->n_metric, 1);
	h = f->metric[0]->histogram;
	assert_int_equal(h->schema, 4);
	assert_int_equal(h->sample_count, r->dev[0].op[TS_OP_READ].ios);
	assert_int_equal(h->n_bucket, TS_PROM_SHORT_EDGES);
	assert_int_equal(h->zero_count, 3);
	{
		int idx[1024];
		__u64 cnt[1024];

		assert_int_equal(native_count(h, idx, cnt, 1024), h->sample_count);
	}
	for (i = 0; i < 3; i++) {
		want = ts_hist_quantile(r->hist[0][0].service, qs[i]) / 1e9;
		got = native_quantile(h, qs[i]);
		/* its bucket's upper edge: within two buckets of the truth */
		assert_true(got >= want / pow(2, 2 / 16.0));
		assert_true(got <= want * pow(2, 2 / 16.0));
	}
	find("truestat_device_concurrency_max");
	f = find("truestat_build_info");
	assert_int_equal(f->metric[0]->n_label, 3);
	assert_string_equal(f->metric[0]->label[2]->name, "kernel");
	assert_string_equal(f->metric[0]->label[2]->value, "6.1 \"x\\y\" {z}");
	assert_true(f->metric[0]->gauge->value == 1);
	for (i = 0; i < nfam; i++)
		io__prometheus__client__metric_family__free_unpacked(fam[i], NULL);
	free(text), free(pb), free(p), free(q), free(r);
}

/*
 * Prometheus' Accept with native histograms on gets protobuf; others text,
 * as does one that ranks protobuf below text or refuses it (q=0).
 */
static void test_accept(void **state)
{
	static const char proto[] =
		"GET /metrics HTTP/1.1\r\nHost: x\r\n"
		"Accept: application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.1\r\n\r\n";
	static const char text[] =
		"GET /metrics HTTP/1.1\r\nHost: x\r\n"
		"Accept: text/plain;version=0.0.4;q=1,*/*;q=0.1\r\n\r\n";
	static const char open_metrics[] =
		"GET /metrics HTTP/1.1\r\naccept: application/openmetrics-text; version=1.0.0\r\n\r\n";
	static const char in_body[] =
		"GET /metrics HTTP/1.1\r\n\r\nAccept: application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited\r\n";
	/* q=0: not acceptable; text ranked above it; the parameters of one
	 * range do not make another protobuf */
	static const char refused[] =
		"GET /metrics HTTP/1.1\r\nAccept: application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0,text/plain;q=0.3\r\n\r\n";
	static const char below_text[] =
		"GET /metrics HTTP/1.1\r\nAccept: application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited; q=0.2, text/plain; q=0.9\r\n\r\n";
	static const char mixed[] =
		"GET /metrics HTTP/1.1\r\nAccept: application/vnd.google.protobuf;q=0.9,text/plain;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.1\r\n\r\n";
	static const char alone[] =
		"GET /metrics HTTP/1.1\r\nAccept: application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited\r\n\r\n";

	(void)state;
	assert_true(ts_http_wants_protobuf(proto, sizeof(proto) - 1));
	assert_false(ts_http_wants_protobuf(text, sizeof(text) - 1));
	assert_false(ts_http_wants_protobuf(open_metrics, sizeof(open_metrics) - 1));
	assert_false(ts_http_wants_protobuf(in_body, sizeof(in_body) - 1));
	assert_false(ts_http_wants_protobuf(refused, sizeof(refused) - 1));
	assert_false(ts_http_wants_protobuf(below_text, sizeof(below_text) - 1));
	assert_false(ts_http_wants_protobuf(mixed, sizeof(mixed) - 1));
	assert_true(ts_http_wants_protobuf(alone, sizeof(alone) - 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_protobuf_is_the_text),
		cmocka_unit_test(test_accept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
