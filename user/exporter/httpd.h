/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small, defensive HTTP server for the Prometheus exporter: one thread,
 * poll(), GET /metrics and GET / only, bounded requests, timeouts, a
 * bounded number of connections shared fairly between peers, nothing
 * changed through HTTP. With a web configuration (webauth.h): TLS by
 * OpenSSL, 401 without a user, 429 past the budget of wrong passwords.
 */
#ifndef TS_HTTPD_H
#define TS_HTTPD_H

#include <signal.h>
#include <stddef.h>
#include <time.h>
#include <sys/socket.h>

#include "webauth.h"

#define TS_HTTP_MAX_REQUEST 4096 /* bytes of request head: more is 431 */
#define TS_HTTP_MAX_CLIENTS 64	 /* connections at once (ts_http_evictee) */
#define TS_HTTP_TIMEOUT_MS 5000	 /* from accept to the reply read: then closed */
/*
 * A reply is given TS_HTTP_TIMEOUT_MS more from its first byte, and its
 * size at this rate (bytes a second): a full-bucket /metrics of many disks
 * over a slow link is read whole, a reader slower than this is dropped.
 */
#define TS_HTTP_MIN_RATE 65536
#define TS_HTTP_SILENT_MS 1000	 /* from accept to a first byte: then closed */

enum ts_http_route {
	TS_HTTP_INCOMPLETE, /* keep reading */
	TS_HTTP_METRICS,
	TS_HTTP_INDEX,
	TS_HTTP_ERROR, /* *status says which */
};

/*
 * "PORT", "ADDR:PORT" or "[IPV6]:PORT" into @ss. Without an address it
 * binds to 127.0.0.1: any other address only when given. 0 or -1 with a
 * one-line message in @err that names option @opt.
 */
int ts_http_parse_addr(const char *opt, const char *spec,
		       struct sockaddr_storage *ss, socklen_t *len, char *err,
		       size_t errlen);

/*
 * What the request head in @buf (@len bytes so far) asks for; on
 * TS_HTTP_ERROR, *status is 400, 404, 405, 431 or 505.
 */
enum ts_http_route ts_http_route(const char *buf, size_t len, int *status);

/* What the server knows of a connection when it must choose one to drop. */
struct ts_http_conn {
	bool open;
	bool replying; /* its request was read: the reply is on its way */
	struct ts_peer peer;
	long long since_ns; /* accepted, CLOCK_MONOTONIC */
	long long heard_ns; /* last bytes read; since_ns before any */
};

/*
 * With all @n slots taken, a connection from @peer accepted: the slot to
 * free for it, or -1 to close it instead. A connection still sending its
 * request goes, never one being answered, nor one accepted at or after
 * @round_ns (not yet polled: it had no chance to speak). Of those, one of
 * the peer holding the most slots (the new one counted), the one quiet
 * the longest: an address that floods the server evicts its own, and
 * others keep theirs. -1 when the new one's peer would hold more than the
 * victim's (its own are all being answered).
 */
int ts_http_evictee(const struct ts_http_conn *c, int n,
		    const struct ts_peer *peer, long long round_ns);

struct ts_httpd;

/*
 * Whether the request head in @buf (@len bytes, whole) asks for Prometheus'
 * protobuf exposition (io.prometheus.client.MetricFamily, delimited): its
 * Accept ranks that range at least as high as text (text/plain, text/ *,
 * * / *), by q (1 unless given; q=0: not acceptable).
 */
bool ts_http_wants_protobuf(const char *buf, size_t len);

#define TS_HTTP_PROTOBUF_TYPE                                                  \
	"application/vnd.google.protobuf; "                                    \
	"proto=io.prometheus.client.MetricFamily; encoding=delimited"

/*
 * The /metrics body: malloc'd, its length in *len; NULL on failure. In
 * the protobuf exposition when @protobuf, else the text one.
 */
typedef char *(*ts_http_render_fn)(void *ctx, bool protobuf, size_t *len);

/* @web: TLS and users, kept by the caller; NULL: plain HTTP, anyone. */
struct ts_httpd *ts_httpd_open(const char *spec, struct ts_web *web,
			       char *err, size_t errlen);

/*
 * Serves until @deadline (CLOCK_MONOTONIC) or until *stop is set; with @h
 * NULL, only waits. The caller blocks the signals that set *stop, and
 * @wait_mask is the mask while waiting (ppoll): one cannot come between
 * the check of *stop and the wait. Returns 0, or -1 when polling failed.
 */
int ts_httpd_serve(struct ts_httpd *h, const struct timespec *deadline,
		   volatile sig_atomic_t *stop, const sigset_t *wait_mask,
		   ts_http_render_fn render, void *ctx);

void ts_httpd_close(struct ts_httpd *h);

#endif
