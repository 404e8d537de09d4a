// SPDX-License-Identifier: GPL-2.0
/*
 * --web.config.file: the exporter toolkit's keys are read, relative paths
 * start at the file's directory, what truestat does not implement is
 * refused by name and line; the "Authorization: Basic" header is decoded
 * as RFC 7617 says, and anything malformed is no credentials at all.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "exporter/webauth.h"
#include "exporter/webconfig.h"

#define HASH "$2y$10$Q6VbmRDrD6fq2HzXB6wMyOHDHsOrH2R7dIj1ZYwGm8y5RbIvsWW3O"

static char path[] = "/tmp/truestat-webconfig-XXXXXX";

static int load(const char *text, struct ts_web_config *c, char *err)
{
	int fd = mkstemp(path);
	int rc;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	rc = ts_web_config_load(path, c, err, 256);
	unlink(path);
	strcpy(path + strlen(path) - 6, "XXXXXX");
	return rc;
}

static void test_full_file(void **state)
{
	struct ts_web_config c;
	char err[256] = "", want[300];

	assert_int_equal(load("# a fleet's file\n"
			      "tls_server_config:\n"
			      "  cert_file: server.crt\n"
			      "  key_file: /etc/k.key\n"
			      "  client_auth_type: RequireAndVerifyClientCert\n"
			      "  client_ca_file: \"ca.crt\"\n"
			      "  min_version: TLS13\n"
			      "basic_auth_users:\n"
			      "  prometheus: '" HASH "'\n"
			      "  grafana: " HASH "\n",
			      &c, err),
			 0);
	assert_true(c.tls);
	snprintf(want, sizeof(want), "/tmp/server.crt");
	assert_string_equal(c.cert_file, want);
	assert_string_equal(c.key_file, "/etc/k.key");
	assert_string_equal(c.client_ca_file, "/tmp/ca.crt");
	assert_int_equal(c.client_auth, TS_CLIENT_CERT_REQUIRED);
	assert_int_equal(c.min_version, TS_TLS13);
	assert_int_equal(c.max_version, TS_TLS_ANY);
	assert_int_equal(c.nusers, 2);
	assert_string_equal(c.user[1].name, "grafana");
	assert_string_equal(c.user[1].hash, HASH);
	ts_web_config_free(&c);
}

static void test_defaults(void **state)
{
	struct ts_web_config c;
	char err[256] = "";

	/* empty: plain HTTP, nobody asked for a password */
	assert_int_equal(load("", &c, err), 0);
	assert_false(c.tls);
	assert_int_equal(c.nusers, 0);
	ts_web_config_free(&c);
	assert_int_equal(load("basic_auth_users:\n  a: " HASH "\n", &c, err), 0);
	assert_false(c.tls);
	assert_int_equal(c.nusers, 1);
	ts_web_config_free(&c);
	assert_int_equal(load("tls_server_config:\n  cert_file: a\n  key_file: b\n",
			      &c, err),
			 0);
	assert_int_equal(c.min_version, TS_TLS12); /* the toolkit's default */
	assert_int_equal(c.client_auth, TS_CLIENT_CERT_NONE);
	ts_web_config_free(&c);
}

/* @text is refused, and the one line names @line and holds @what. */
static void refused(const char *text, int line, const char *what)
{
	struct ts_web_config c;
	char err[256] = "", at[16];

	assert_int_equal(load(text, &c, err), -1);
	snprintf(at, sizeof(at), ":%d: ", line);
	if (!strstr(err, at) || !strstr(err, what) || strchr(err, '\n'))
		fail_msg("'%s' for:\n%s", err, text);
}

static void test_refused(void **state)
{
	refused("tls_server_config:\n  cert_file: a\n", 1, "needs cert_file and key_file");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [x]\n",
		4, "'cipher_suites' is not supported");
	refused("tls_server_config:\n  cert_file: a\n  cert_file: b\n", 3, "given twice");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAnyClientCert\n",
		4, "'RequireAnyClientCert' is not supported");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: VerifyClientCertIfGiven\n",
		1, "needs client_ca_file");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n",
		1, "client_ca_file is used only with");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n  max_version: TLS12\n",
		1, "below min_version");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: tls12\n",
		4, "expected TLS10");
	refused("http_server_config:\n  http2: false\n", 1, "'http_server_config' is not supported");
	refused("basic_auth_users:\n  a: secret\n", 2, "bcrypt hash");
	refused("basic_auth_users:\n  a: " HASH "\n  a: " HASH "\n", 3, "given twice");
	refused("basic_auth_users: [a, b]\n", 1, "must be a mapping");
	refused("tls_server_config: {\n", 2, "bad --web.config.file");
	refused("- a\n- b\n", 1, "must be a mapping");
}

static int creds(const char *head, char *buf, const char **u, const char **p)
{
	return ts_http_basic_credentials(head, strlen(head), buf, 64, u, p);
}

static void test_basic_credentials(void **state)
{
	const char *u, *p, *h;
	char buf[64];

	/* "Aladdin:open sesame", RFC 7617's example; the scheme any case */
	assert_int_equal(creds("GET / HTTP/1.1\r\nHost: x\r\nauthorization: basic "
			       "QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n\r\n",
			       buf, &u, &p),
			 0);
	assert_string_equal(u, "Aladdin");
	assert_string_equal(p, "open sesame");
	/* a colon in the password is the password's */
	assert_int_equal(creds("GET / HTTP/1.1\nAuthorization: Basic YTpiOmM=\n\n",
			       buf, &u, &p),
			 0);
	assert_string_equal(u, "a");
	assert_string_equal(p, "b:c");
	/* none, another scheme, no colon, bad base64, a NUL, too long */
	assert_int_equal(creds("GET / HTTP/1.1\r\nHost: x\r\n\r\n", buf, &u, &p), -1);
	assert_int_equal(creds("GET / HTTP/1.1\r\nAuthorization: Bearer YTpi\r\n\r\n", buf, &u, &p), -1);
	assert_int_equal(creds("GET / HTTP/1.1\r\nAuthorization: Basic YWJj\r\n\r\n", buf, &u, &p), -1);
	assert_int_equal(creds("GET / HTTP/1.1\r\nAuthorization: Basic YT*i\r\n\r\n", buf, &u, &p), -1);
	assert_int_equal(creds("GET / HTTP/1.1\r\nAuthorization: Basic YQBiOmM=\r\n\r\n", buf, &u, &p), -1);
	h = "GET / HTTP/1.1\r\nAuthorization: Basic YWFhYWFhYWFhYWFhYWFhYWFhOmI=\r\n\r\n";
	assert_int_equal(ts_http_basic_credentials(h, strlen(h), buf, 22, &u, &p), 0);
	assert_int_equal(ts_http_basic_credentials(h, strlen(h), buf, 20, &u, &p), -1);
	/* a header after the blank line is the body's, not the head's */
	assert_int_equal(creds("GET / HTTP/1.1\r\n\r\nAuthorization: Basic YTpi\r\n",
			       buf, &u, &p),
			 -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_basic_credentials),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
