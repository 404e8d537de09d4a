/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the exporter's web configuration asks of each connection: TLS
 * (OpenSSL) and a user and password (bcrypt hashes checked by libcrypt).
 */
#ifndef TS_WEBAUTH_H
#define TS_WEBAUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <openssl/ssl.h>

struct ts_web;

/*
 * Reads the web configuration at @path and everything it names (the
 * certificate and key, the client CA): NULL with one line in @err when any
 * of it is wrong, so that a bad file stops truestat at start, not at the
 * first scrape.
 */
struct ts_web *ts_web_open(const char *path, char *err, size_t errlen);

/* The TLS context each connection is made from; NULL: plain HTTP. */
SSL_CTX *ts_web_tls(const struct ts_web *w);

/*
 * Whether the request head in @head (@len bytes) may be served: true when
 * the configuration has no users, or the head's "Authorization: Basic"
 * names a user whose password matches its hash.
 */
bool ts_web_authorized(struct ts_web *w, const char *head, size_t len);

/*
 * The user and password in the head's "Authorization: Basic" header,
 * decoded into @buf (@buflen bytes) as "user\0password": 0, or -1 when
 * there is none, it is malformed or does not fit.
 */
int ts_http_basic_credentials(const char *head, size_t len, char *buf,
			      size_t buflen, const char **user,
			      const char **password);

void ts_web_close(struct ts_web *w);

#endif
