// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter: its request parsing and address parsing (user/exporter/httpd.c),
 * and the counters of its exposition (user/output/prom.c).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "exporter/httpd.h"
#include "output/prom.h"

static int route(const char *req, int *status)
{
	*status = 0;
	return ts_http_route(req, strlen(req), status);
}

static void test_routes(void **state)
{
	int st;

	assert_int_equal(route("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &st),
			 TS_HTTP_METRICS);
	assert_int_equal(route("GET /metrics?x=1 HTTP/1.0\r\n\r\n", &st),
			 TS_HTTP_METRICS);
	assert_int_equal(route("GET / HTTP/1.1\n\n", &st), TS_HTTP_INDEX);
	/* not finished yet: keep reading */
	assert_int_equal(route("GET /metrics HTTP/1.1\r\nHost:", &st),
			 TS_HTTP_INCOMPLETE);
	assert_int_equal(route("", &st), TS_HTTP_INCOMPLETE);
	assert_int_equal(route("GET /metricsx HTTP/1.1\r\n\r\n", &st),
			 TS_HTTP_ERROR);
	assert_int_equal(st, 404);
	assert_int_equal(route("POST /metrics HTTP/1.1\r\n\r\n", &st),
			 TS_HTTP_ERROR);
	assert_int_equal(st, 405);
	assert_int_equal(route("GET /metrics HTTP/2.0\r\n\r\n", &st),
			 TS_HTTP_ERROR);
	assert_int_equal(st, 505);
	assert_int_equal(route("GARBAGE\r\n\r\n", &st), TS_HTTP_ERROR);
	assert_int_equal(st, 400);
	assert_int_equal(route("GET  HTTP/1.1\r\n\r\n", &st), TS_HTTP_ERROR);
	assert_int_equal(st, 400);
	assert_int_equal(route(" / HTTP/1.1\r\n\r\n", &st), TS_HTTP_ERROR);
	assert_int_equal(st, 400);
	/* found by tests/fuzz: a short version read past the request */
	assert_int_equal(route("GET / H\n\n", &st), TS_HTTP_ERROR);
	assert_int_equal(st, 400);
	assert_int_equal(route("GET / HTTP/\n\n", &st), TS_HTTP_ERROR);
	assert_int_equal(st, 505);
}

static void test_too_large(void **state)
{
	static char buf[TS_HTTP_MAX_REQUEST];
	int st = 0;

	memset(buf, 'a', sizeof(buf));
	memcpy(buf, "GET / HTTP/1.1\r\nX: ", 19);
	assert_int_equal(ts_http_route(buf, sizeof(buf), &st), TS_HTTP_ERROR);
	assert_int_equal(st, 431);
	assert_int_equal(ts_http_route(buf, sizeof(buf) - 1, &st),
			 TS_HTTP_INCOMPLETE);
}

static struct ts_peer peer4(const char *ip)
{
	struct sockaddr_storage ss = { 0 };
	struct ts_peer p;

	if (inet_pton(AF_INET, ip, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
	} else {
		ss.ss_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, ip,
				 &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
	}
	ts_peer_of(&ss, &p);
	return p;
}

static void test_peers(void **state)
{
	struct ts_peer a = peer4("192.0.2.1"), b = peer4("::ffff:192.0.2.1");
	struct ts_peer c = peer4("2001:db8::1"), d = peer4("2001:db8::2:3");
	struct ts_peer e = peer4("2001:db8:0:1::1"), f = peer4("192.0.2.2");

	assert_true(ts_peer_equal(&a, &b)); /* IPv4, mapped or not */
	assert_true(ts_peer_equal(&c, &d)); /* one /64 */
	assert_false(ts_peer_equal(&c, &e));
	assert_false(ts_peer_equal(&a, &f));
}

#define MS 1000000LL

/* Slot i: open, from @ip, accepted at @since ms, last heard at @heard ms. */
static struct ts_http_conn conn(const char *ip, long long since,
				long long heard, bool replying)
{
	return (struct ts_http_conn){ .open = true, .replying = replying,
				      .peer = peer4(ip), .since_ns = since * MS,
				      .heard_ns = heard * MS };
}

static void test_evictee(void **state)
{
	struct ts_http_conn c[5] = {
		conn("10.0.0.1", 0, 50, false),	 /* the scraper */
		conn("10.0.0.2", 10, 10, false), /* the flood's, */
		conn("10.0.0.2", 5, 5, false),	 /* this one quiet longest */
		conn("10.0.0.2", 1, 1, true),	 /* being answered */
		conn("10.0.0.3", 2, 2, false),
	};
	struct ts_peer scraper = peer4("10.0.0.1"), flood = peer4("10.0.0.2");
	struct ts_peer other = peer4("10.0.0.4");

	/* the peer with the most slots gives up its quietest, for anyone */
	assert_int_equal(ts_http_evictee(c, 5, &scraper, 100 * MS), 2);
	assert_int_equal(ts_http_evictee(c, 5, &flood, 100 * MS), 2);
	/* none accepted in this round (not yet polled, no chance to speak);
	 * equal holders: the quietest */
	assert_int_equal(ts_http_evictee(c, 5, &other, 3 * MS), 4);
	/* a peer's new connection counts: its own oldest goes first */
	assert_int_equal(ts_http_evictee(c, 5, &scraper, 3 * MS), 0);
	/* a reply on its way is never cut */
	c[1].replying = c[2].replying = true;
	/* now 10.0.0.2 sending more (4 with the new one) than anyone it
	 * could evict holds: the new one goes, not another's */
	assert_int_equal(ts_http_evictee(c, 5, &flood, 100 * MS), -1);
	/* another peer still takes the quietest of equal holders */
	assert_int_equal(ts_http_evictee(c, 5, &other, 100 * MS), 4);
	c[0].replying = c[4].replying = true;
	assert_int_equal(ts_http_evictee(c, 5, &other, 100 * MS), -1);
}

static void test_fail_budget(void **state)
{
	static struct ts_fail_budget b;
	struct ts_peer x = peer4("10.0.0.2"), y = peer4("10.0.0.3");
	struct ts_peer z = peer4("10.0.0.4");
	long long t = 1000 * MS;
	int i;

	/* a peer's burst, then one a TS_WEB_FAIL_PEER_NS */
	for (i = 0; i < TS_WEB_FAIL_PEER_BURST; i++) {
		assert_true(ts_fail_budget_allows(&b, &x, t));
		ts_fail_budget_charge(&b, &x, t);
	}
	assert_false(ts_fail_budget_allows(&b, &x, t));
	assert_false(ts_fail_budget_allows(&b, &x, t + TS_WEB_FAIL_PEER_NS - 1));
	/* x's first try came from the bucket of peers without a failure,
	 * its second from that of the peers that failed lately */
	assert_true(ts_fail_budget_allows(&b, &y, t));
	ts_fail_budget_charge(&b, &y, t);
	assert_false(ts_fail_budget_allows(&b, &z, t)); /* no failure: spent */
	assert_true(ts_fail_budget_allows(&b, &y, t)); /* failed lately: one */
	ts_fail_budget_charge(&b, &y, t);
	assert_false(ts_fail_budget_allows(&b, &y, t));
	t += TS_WEB_FAIL_PEER_NS;
	assert_true(ts_fail_budget_allows(&b, &x, t));
	ts_fail_budget_charge(&b, &x, t);
	assert_false(ts_fail_budget_allows(&b, &x, t));
	/* many addresses do not buy more: the shared buckets limit them */
	for (i = 0, t += 10 * TS_WEB_FAIL_PEER_NS; i < 50; i++) {
		struct ts_peer p = peer4(i % 2 ? "10.1.0.1" : "10.1.0.2");

		p.addr[13] = (unsigned char)i;
		if (ts_fail_budget_allows(&b, &p, t))
			ts_fail_budget_charge(&b, &p, t);
	}
	assert_false(ts_fail_budget_allows(&b, &z, t));
	assert_true(ts_fail_budget_allows(&b, &z, t + TS_WEB_FAIL_PEER_NS));
}

/*
 * Three peers at one wrong password a second each, a third of a second
 * apart, do not lock out a fourth that has not failed (a scraper after a
 * restart: its password not remembered yet) at any moment of a minute
 * after their first tries;
 * and the bcrypts spent stay within the two shared buckets' bursts and
 * rates, however many addresses guess.
 */
static void test_fail_budget_guessers_leave_room(void **state)
{
	static struct ts_fail_budget b;
	struct ts_peer g[3] = { peer4("10.2.0.1"), peer4("10.2.0.2"),
				peer4("10.2.0.3") };
	struct ts_peer scraper = peer4("10.0.0.9");
	long long t = 1000 * MS, t0, spent = 0, at;
	int s, i, refused = 0;

	for (s = 0; s < 60; s++, t += TS_WEB_FAIL_PEER_NS) {
		for (i = 0; i < 3; i++) {
			at = t + i * 333 * MS;
			if (ts_fail_budget_allows(&b, &g[i], at))
				ts_fail_budget_charge(&b, &g[i], at);
			/*
			 * the scraper right after each guess, once the bucket of
			 * the peers without a failure is back from the guessers'
			 * first tries (as new as the scraper's: 3 steps of it)
			 */
			if (s >= 3)
				refused += !ts_fail_budget_allows(&b, &scraper,
								  at + 1);
		}
	}
	assert_int_equal(refused, 0);
	/* a flood from 5000 addresses, each new */
	for (i = 0, t0 = t; i < 5000; i++, t += MS) {
		struct ts_peer p = peer4("10.3.0.0");

		p.addr[14] = (unsigned char)(i >> 8);
		p.addr[15] = (unsigned char)i;
		if (ts_fail_budget_allows(&b, &p, t)) {
			ts_fail_budget_charge(&b, &p, t);
			spent++;
		}
	}
	assert_true(spent <= TS_WEB_FAIL_ALL_BURST + TS_WEB_FAIL_CLEAN_BURST +
				     (t - t0) / TS_WEB_FAIL_ALL_NS +
				     (t - t0) / TS_WEB_FAIL_CLEAN_STEP_NS);
}

/* An address as --web.listen-address gives it. */
#define PARSE(spec)                                                           \
	ts_http_parse_addr("--web.listen-address", spec, &ss, &len, err,       \
			   sizeof(err))

static void test_addresses(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	char err[128];
	socklen_t len;

	/* a port alone binds to loopback */
	assert_int_equal(PARSE("9101"), 0);
	assert_int_equal(v4->sin_family, AF_INET);
	assert_int_equal(ntohl(v4->sin_addr.s_addr), INADDR_LOOPBACK);
	assert_int_equal(ntohs(v4->sin_port), 9101);
	assert_int_equal(PARSE("0.0.0.0:80"), 0);
	assert_int_equal(v4->sin_addr.s_addr, INADDR_ANY);
	assert_int_equal(PARSE("[::1]:9101"), 0);
	assert_int_equal(v6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(v6->sin6_port), 9101);
	assert_int_equal(PARSE("::1:9101"), 0);
	assert_int_equal(v6->sin6_family, AF_INET6);

	assert_int_equal(PARSE("0"), -1);
	assert_string_equal(err, "bad --web.listen-address '0': port must be 1 to 65535");
	assert_int_equal(PARSE("65536"), -1);
	assert_int_equal(PARSE(""), -1);
	assert_int_equal(PARSE("localhost:80"), -1);
	assert_string_equal(err, "bad --web.listen-address 'localhost:80': not a numeric IPv4 or IPv6 address");
	assert_int_equal(PARSE(":80"), -1);
	assert_int_equal(PARSE("[::1]80"), -1);
	assert_int_equal(PARSE("1.2.3.4:x"), -1);
}

/* The value of the series @series (name and labels) in @text, or -1. */
static double series_value(const char *text, const char *series)
{
	size_t n = strlen(series);
	const char *line;

	for (line = text; line; line = strchr(line, '\n'), line += !!line)
		if (!strncmp(line, series, n) && line[n] == ' ')
			return strtod(line + n + 1, NULL);
	return -1;
}

/* One disk, sda, that read @ios requests in @span_s at depth @mean. */
static void one_disk(struct ts_report *r, double span_s, __u64 ios,
		     double mean, double busy_share)
{
	struct ts_dev_report *d = &r->dev[0];

	r->totals = true;
	r->span_s = span_s;
	r->ndev = 1;
	snprintf(d->name, sizeof(d->name), "sda");
	d->op[0].ios = ios;
	d->device.mean = mean;
	d->device.busy_share = busy_share;
	d->os.mean = mean / 2;
}

static char *render(struct ts_prom *p, struct ts_report *r)
{
	size_t len;
	char *text = ts_prom_render(p, r, &len);

	assert_non_null(text);
	return text;
}

/*
 * A late repair takes a request out of the depth at an estimated earlier
 * end: the second scrape's integrals are lower than the first's. What is
 * printed must not go down (Prometheus would read a counter reset), and
 * must go up again once the run's totals pass what was printed.
 */
static void test_counters_never_go_down(void **state)
{
	static const char *const names[] = {
		"truestat_device_inflight_seconds_total{device=\"sda\",layer=\"request\"}",
		"truestat_os_queued_seconds_total{device=\"sda\",layer=\"request\"}",
		"truestat_device_busy_seconds_total{device=\"sda\",layer=\"request\"}",
	};
	struct ts_report *r = calloc(1, sizeof(*r));
	struct ts_prom *p = calloc(1, sizeof(*p));
	double first[3];
	char *a, *b, *c;
	int i;

	assert_non_null(r);
	assert_non_null(p);
	one_disk(r, 10.0, 1000, 4.0, 0.9);
	a = render(p, r);
	one_disk(r, 10.5, 1000, 3.5, 0.8); /* repaired: 36.75 < 40 */
	b = render(p, r);
	one_disk(r, 20.0, 2000, 4.0, 0.9); /* caught up: 80 > 40 */
	c = render(p, r);
	for (i = 0; i < 3; i++) {
		first[i] = series_value(a, names[i]);
		assert_true(first[i] > 0);
		assert_true(series_value(b, names[i]) >= first[i]);
		assert_true(series_value(c, names[i]) > first[i]);
	}
	assert_true(series_value(c, "truestat_device_inflight_seconds_total"
				    "{device=\"sda\",layer=\"request\"}") == 80.0);
	free(a), free(b), free(c), free(r), free(p);
}

/* A depth counter that missed requests: the run's max between bounds. */
static void test_concurrency_bounds(void **state)
{
	struct ts_report *r = calloc(1, sizeof(*r));
	struct ts_prom *p = calloc(1, sizeof(*p));
	char *text;

	assert_non_null(r);
	assert_non_null(p);
	one_disk(r, 10.0, 1000, 4.0, 0.9);
	r->dev[0].device.max = 9;
	r->dev[0].device.max_min = 7;
	text = render(p, r);
	assert_true(series_value(text, "truestat_device_concurrency_max"
				       "{device=\"sda\",layer=\"request\"}") == 9);
	assert_true(series_value(text, "truestat_device_concurrency_max_min"
				       "{device=\"sda\",layer=\"request\"}") == 7);
	free(text), free(r), free(p);
}

/* A report of one disk (one_disk) rendered by a new exporter state @p. */
static struct ts_dev_report *fresh(struct ts_report **r, struct ts_prom **p,
				   __u64 ios, double mean, double busy_share)
{
	*r = calloc(1, sizeof(**r));
	*p = calloc(1, sizeof(**p));
	assert_non_null(*r);
	assert_non_null(*p);
	one_disk(*r, 10.0, ios, mean, busy_share);
	return &(*r)->dev[0];
}

/*
 * A histogram's _sum is the counted ns, not the mean times the count: 3
 * requests of 1,000,000,007 ns in all give 1.000000007 s, to the ns.
 */
static void test_exact_sums(void **state)
{
	struct ts_report *r;
	struct ts_prom *p;
	struct ts_dev_report *d = fresh(&r, &p, 3, 1.0, 0.5);
	char *text;

	d->op[0].service_ns = 1000000007;
	d->op[0].service_ms = 1000000007 / 3 / 1e6;
	d->op[0].queued_ios = 3;
	d->hist = r->hist[0];
	r->hist[0][0].service[ts_hist_bucket(333333335)] = 3;
	text = render(p, r);
	assert_non_null(strstr(text, "truestat_service_seconds_sum"
				     "{device=\"sda\",layer=\"request\",op=\"read\"} 1.000000007\n"));
	free(text), free(r), free(p);
}

/*
 * A bio-based device: its series say layer="bio"; it has no OS queue and
 * no queue histogram, and when stacked a layer-time histogram whose sum and
 * count are its layer time and mapped bios.
 */
static void test_bio_layer_series(void **state)
{
	struct ts_report *r;
	struct ts_prom *p;
	struct ts_dev_report *d = fresh(&r, &p, 1000, 4.0, 0.9);
	char *text;

	snprintf(d->name, sizeof(d->name), "md0");
	d->bio_layer = true;
	d->stack.nmembers = 1;
	snprintf(d->stack.member[0].name, TS_STACK_NAME, "sda");
	d->op[0].layer_ios = 800;
	d->op[0].layer_ms = 0.025;
	d->op[0].layer_ns = 800 * 25000; /* the sum the mean came from */
	d->op[0].queue_ms = NAN;
	d->hist = r->hist[0];
	r->hist[0][0].layer[ts_hist_bucket(25000)] = 800;
	text = render(p, r);
	assert_true(series_value(text, "truestat_device_inflight"
				       "{device=\"md0\",layer=\"bio\"}") == 0);
	assert_null(strstr(text, "truestat_os_queued{"));
	assert_null(strstr(text, "truestat_os_queued_seconds_total{"));
	assert_null(strstr(text, "truestat_queue_seconds_count{"));
	assert_true(series_value(text, "truestat_layer_seconds_count"
				       "{device=\"md0\",layer=\"bio\",op=\"read\"}") == 800);
	assert_true(fabs(series_value(text, "truestat_layer_seconds_sum"
					    "{device=\"md0\",layer=\"bio\",op=\"read\"}") -
			 0.02) < 1e-9);
	free(text);
	/* without members (zram) there is no layer above one: no layer time */
	d->stack.nmembers = 0;
	text = render(p, r);
	assert_null(strstr(text, "truestat_layer_seconds_count{"));
	free(text), free(r), free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_peers),
		cmocka_unit_test(test_evictee),
		cmocka_unit_test(test_fail_budget),
		cmocka_unit_test(test_fail_budget_guessers_leave_room),
		cmocka_unit_test(test_counters_never_go_down),
		cmocka_unit_test(test_concurrency_bounds),
		cmocka_unit_test(test_exact_sums),
		cmocka_unit_test(test_bio_layer_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
