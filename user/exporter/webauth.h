/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the exporter's web configuration asks of each connection: TLS
 * (OpenSSL) and a user and password (bcrypt hashes checked by libcrypt).
 */
#ifndef TS_WEBAUTH_H
#define TS_WEBAUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <openssl/ssl.h>

struct ts_web;

/*
 * Who a connection comes from, as limits count it: an IPv4 address (also
 * one mapped into IPv6) or an IPv6 /64, the least a host is given.
 */
struct ts_peer {
	unsigned char addr[16];
};

void ts_peer_of(const struct sockaddr_storage *ss, struct ts_peer *p);
bool ts_peer_equal(const struct ts_peer *a, const struct ts_peer *b);

/*
 * Wrong passwords a bcrypt is spent on: per peer, a burst and then one per
 * interval (the generic cell rate algorithm: one time per bucket, when it
 * is full again), and for all peers together, in two buckets: one for the
 * peers that failed in the last TS_WEB_FAIL_LATELY_NS, one for the others
 * (a peer's first try, as a scraper's after a restart). Past either the
 * request gets 429 without a bcrypt, so that guesses cost the one thread
 * at most the two buckets' bcrypts a second, whoever sends them, and
 * guessers that keep failing do not lock out a peer that has not: that
 * takes more guessing addresses than the table remembers.
 */
#define TS_WEB_FAIL_PEERS 64 /* peers remembered: a new one takes the fullest */
#define TS_WEB_FAIL_PEER_BURST 2
#define TS_WEB_FAIL_PEER_NS 1000000000LL
#define TS_WEB_FAIL_ALL_BURST 2
#define TS_WEB_FAIL_ALL_NS 500000000LL
#define TS_WEB_FAIL_CLEAN_BURST 2
#define TS_WEB_FAIL_CLEAN_STEP_NS 1000000000LL
#define TS_WEB_FAIL_LATELY_NS 60000000000LL /* a failure remembered a minute */

struct ts_fail_peer {
	struct ts_peer peer;
	long long full_ns;   /* CLOCK_MONOTONIC: all its burst back */
	long long failed_ns; /* its last failure, 0: none */
};

struct ts_fail_budget {
	struct ts_fail_peer peer[TS_WEB_FAIL_PEERS];
	long long all_full_ns;	 /* the peers that failed lately */
	long long clean_full_ns; /* the others */
};

/* Whether a check of @p's password may be spent now. */
bool ts_fail_budget_allows(struct ts_fail_budget *b, const struct ts_peer *p,
			   long long now_ns);
/* A check of @p's failed: counted against @p and against all. */
void ts_fail_budget_charge(struct ts_fail_budget *b, const struct ts_peer *p,
			   long long now_ns);

/*
 * Reads the web configuration at @path and everything it names (the
 * certificate and key, the client CA): NULL with one line in @err when any
 * of it is wrong, so that a bad file stops truestat at start, not at the
 * first scrape.
 */
struct ts_web *ts_web_open(const char *path, char *err, size_t errlen);

/* The TLS context each connection is made from; NULL: plain HTTP. */
SSL_CTX *ts_web_tls(const struct ts_web *w);

enum ts_auth {
	TS_AUTH_OK,	 /* no users, or a user and its password */
	TS_AUTH_DENIED,	 /* 401 */
	TS_AUTH_LIMITED, /* 429: the failure budget is spent, nothing checked */
};

/*
 * Whether the request head in @head (@len bytes) from @peer may be served:
 * the head's "Authorization: Basic" must name a user whose password
 * matches its hash. A pair that passed is remembered (keyed digest), so
 * that a scrape a second costs no bcrypt.
 */
enum ts_auth ts_web_authorize(struct ts_web *w, const char *head, size_t len,
			      const struct ts_peer *peer, long long now_ns);

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
