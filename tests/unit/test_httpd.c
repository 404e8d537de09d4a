// SPDX-License-Identifier: GPL-2.0
/* The exporter's request parsing and address parsing (user/httpd.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "httpd.h"

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

static void test_addresses(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	char err[128];
	socklen_t len;

	/* a port alone binds to loopback */
	assert_int_equal(ts_http_parse_addr("9101", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(v4->sin_family, AF_INET);
	assert_int_equal(ntohl(v4->sin_addr.s_addr), INADDR_LOOPBACK);
	assert_int_equal(ntohs(v4->sin_port), 9101);
	assert_int_equal(ts_http_parse_addr("0.0.0.0:80", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(v4->sin_addr.s_addr, INADDR_ANY);
	assert_int_equal(ts_http_parse_addr("[::1]:9101", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(v6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(v6->sin6_port), 9101);
	assert_int_equal(ts_http_parse_addr("::1:9101", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(v6->sin6_family, AF_INET6);

	assert_int_equal(ts_http_parse_addr("0", &ss, &len, err, sizeof(err)), -1);
	assert_string_equal(err, "bad --prometheus '0': port must be 1 to 65535");
	assert_int_equal(ts_http_parse_addr("65536", &ss, &len, err, sizeof(err)), -1);
	assert_int_equal(ts_http_parse_addr("", &ss, &len, err, sizeof(err)), -1);
	assert_int_equal(ts_http_parse_addr("localhost:80", &ss, &len, err, sizeof(err)), -1);
	assert_string_equal(err, "bad --prometheus 'localhost:80': not a numeric IPv4 or IPv6 address");
	assert_int_equal(ts_http_parse_addr(":80", &ss, &len, err, sizeof(err)), -1);
	assert_int_equal(ts_http_parse_addr("[::1]80", &ss, &len, err, sizeof(err)), -1);
	assert_int_equal(ts_http_parse_addr("1.2.3.4:x", &ss, &len, err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_addresses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
