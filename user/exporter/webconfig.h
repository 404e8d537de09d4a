/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --web.config.file: TLS and basic auth for the exporter, in the file
 * format of the Prometheus exporter toolkit (web-configuration.md), so one
 * file serves a fleet's exporters alike:
 *
 *   tls_server_config:
 *     cert_file: server.crt        # relative: to the file's directory
 *     key_file: server.key
 *     client_auth_type: RequireAndVerifyClientCert
 *     client_ca_file: ca.crt
 *     min_version: TLS12
 *   basic_auth_users:
 *     prometheus: $2y$10$...      # bcrypt hash (htpasswd -nBC 10)
 *
 * What truestat does not implement (cipher_suites, http_server_config,
 * ...) is refused by name, never ignored.
 */
#ifndef TS_WEBCONFIG_H
#define TS_WEBCONFIG_H

#include <stddef.h>

enum ts_client_auth {
	TS_CLIENT_CERT_NONE,	    /* NoClientCert */
	TS_CLIENT_CERT_IF_GIVEN,    /* VerifyClientCertIfGiven */
	TS_CLIENT_CERT_REQUIRED,    /* RequireAndVerifyClientCert */
};

enum ts_tls_version { TS_TLS_ANY, TS_TLS10, TS_TLS11, TS_TLS12, TS_TLS13 };

#define TS_WEB_MAX_USERS 64

struct ts_web_user {
	char *name;
	char *hash; /* bcrypt: $2a$, $2b$ or $2y$ */
};

struct ts_web_config {
	int tls; /* tls_server_config given */
	char *cert_file, *key_file, *client_ca_file; /* paths made absolute */
	enum ts_client_auth client_auth;
	enum ts_tls_version min_version, max_version;
	struct ts_web_user user[TS_WEB_MAX_USERS];
	int nusers;
};

/*
 * Reads @path into @cfg: 0, or -1 with one line in @err naming the file,
 * the line and what is wrong. The TLS files are only named here: they are
 * read when the server starts (ts_web_tls_new).
 */
int ts_web_config_load(const char *path, struct ts_web_config *cfg, char *err,
		       size_t errlen);

void ts_web_config_free(struct ts_web_config *cfg);

#endif
