// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <openssl/err.h>

#include "httpd.h"
#include "webauth.h"

struct client {
	int fd; /* -1: free */
	SSL *tls; /* NULL: plain HTTP */
	short tls_wants; /* what TLS waits for (POLLIN, POLLOUT), or 0 */
	char in[TS_HTTP_MAX_REQUEST];
	size_t in_len;
	char *out; /* reply, malloc'd; NULL while reading */
	size_t out_len, out_off;
	struct ts_peer peer;
	long long since_ns; /* accepted, CLOCK_MONOTONIC */
	long long heard_ns; /* last bytes read; since_ns before any */
	long long replied_ns; /* the reply made, 0: none yet */
};

struct ts_httpd {
	int fd;
	struct ts_web *web; /* TLS and users; NULL: plain, anyone */
	long long accept_after_ns; /* out of fds: wait before accepting */
	struct client c[TS_HTTP_MAX_CLIENTS];
};

static const char index_page[] =
	"<html><head><title>truestat</title></head><body>"
	"<h1>truestat</h1><p><a href=\"/metrics\">/metrics</a>: queue, "
	"service and total time per disk and direction, in-device "
	"concurrency, in the Prometheus text format.</p></body></html>\n";

static int fail(char *err, size_t errlen, const char *opt, const char *what,
		const char *spec)
{
	snprintf(err, errlen, "bad %s '%s': %s", opt, spec, what);
	return -1;
}

static int parse_port(const char *s, unsigned short *port)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 1 || v > 65535)
		return -1;
	*port = (unsigned short)v;
	return 0;
}

int ts_http_parse_addr(const char *opt, const char *spec,
		       struct sockaddr_storage *ss, socklen_t *len, char *err,
		       size_t errlen)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	char host[64] = "127.0.0.1";
	const char *port = spec, *colon;
	unsigned short p;

	memset(ss, 0, sizeof(*ss));
	if (spec[0] == '[') {
		colon = strstr(spec, "]:");
		if (!colon || (size_t)(colon - spec - 1) >= sizeof(host))
			return fail(err, errlen, opt, "expected [IPV6]:PORT",
				    spec);
		memcpy(host, spec + 1, colon - spec - 1);
		host[colon - spec - 1] = 0;
		port = colon + 2;
	} else if ((colon = strrchr(spec, ':'))) {
		if ((size_t)(colon - spec) >= sizeof(host) || colon == spec)
			return fail(err, errlen, opt, "expected ADDR:PORT", spec);
		memcpy(host, spec, colon - spec);
		host[colon - spec] = 0;
		port = colon + 1;
	}
	if (parse_port(port, &p))
		return fail(err, errlen, opt, "port must be 1 to 65535", spec);
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(p);
		*len = sizeof(*v4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(p);
		*len = sizeof(*v6);
		return 0;
	}
	return fail(err, errlen, opt, "not a numeric IPv4 or IPv6 address",
		    spec);
}

/* @n bytes at @s are @what after blanks, whatever its case. */
static bool is(const char *s, size_t n, const char *what)
{
	size_t w = strlen(what);

	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	return n == w && !strncasecmp(s, what, w);
}

/*
 * One media range of an Accept header (@n bytes at @r, without its
 * comma): its q (1 unless given), and in @pb whether it is the delimited
 * MetricFamily protobuf, in @text whether text would do (text/plain,
 * text/ * or * / *).
 */
static double media_range(const char *r, size_t n, bool *pb, bool *text)
{
	const char *p = r, *end = r + n, *semi;
	bool proto = false, delimited = false, first = true;
	double q = 1;

	*pb = *text = false;
	for (; p <= end; p = semi + 1, first = false) {
		semi = memchr(p, ';', end - p);
		if (!semi)
			semi = end;
		if (first) {
			*pb = is(p, semi - p, "application/vnd.google.protobuf");
			*text = is(p, semi - p, "text/plain") ||
				is(p, semi - p, "text/*") ||
				is(p, semi - p, "*/*");
		} else if (is(p, semi - p, "proto=io.prometheus.client.MetricFamily")) {
			proto = true;
		} else if (is(p, semi - p, "encoding=delimited")) {
			delimited = true;
		} else {
			while (p < semi && (*p == ' ' || *p == '\t'))
				p++;
			if (semi - p > 2 && !strncasecmp(p, "q=", 2))
				q = strtod(p + 2, NULL);
		}
	}
	*pb = *pb && proto && delimited;
	return q;
}

/* The Accept line @line (@n bytes): protobuf when it ranks above text. */
static bool accept_prefers_protobuf(const char *line, size_t n)
{
	const char *p = line + 7, *end = line + n, *comma;
	double best_pb = 0, best_text = 0, q;
	bool pb, text;

	for (; p <= end; p = comma + 1) {
		comma = memchr(p, ',', end - p);
		if (!comma)
			comma = end;
		q = media_range(p, comma - p, &pb, &text);
		if (pb && q > best_pb)
			best_pb = q;
		if (text && q > best_text)
			best_text = q;
	}
	return best_pb > 0 && best_pb >= best_text;
}

bool ts_http_wants_protobuf(const char *buf, size_t len)
{
	const char *line = buf, *eol;

	for (; line < buf + len; line = eol + 1) {
		eol = memchr(line, '\n', buf + len - line);
		if (!eol)
			eol = buf + len;
		if (eol - line > 7 && !strncasecmp(line, "Accept:", 7))
			return accept_prefers_protobuf(line, eol - line);
		if (eol - line <= 1) /* the blank line: the head ends */
			break;
	}
	return false;
}

static enum ts_http_route error(int *status, int code)
{
	*status = code;
	return TS_HTTP_ERROR;
}

enum ts_http_route ts_http_route(const char *buf, size_t len, int *status)
{
	const char *end = NULL, *sp1, *sp2, *eol, *ver;
	size_t i, path_len, ver_len;

	for (i = 0; i + 3 < len && !end; i++)
		if (!memcmp(buf + i, "\r\n\r\n", 4))
			end = buf + i;
	for (i = 0; i + 1 < len && !end; i++)
		if (!memcmp(buf + i, "\n\n", 2))
			end = buf + i;
	if (!end)
		return len >= TS_HTTP_MAX_REQUEST ? error(status, 431) :
						    TS_HTTP_INCOMPLETE;
	eol = memchr(buf, '\n', end - buf + 2); /* end: at "\r\n\r\n" or "\n\n" */
	sp1 = memchr(buf, ' ', eol - buf);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', eol - sp1 - 1) : NULL;
	if (!sp1 || !sp2 || sp1 == buf || sp2 == sp1 + 1)
		return error(status, 400);
	ver = sp2 + 1;
	ver_len = eol - ver;
	if (ver_len && ver[ver_len - 1] == '\r')
		ver_len--;
	if (ver_len != 8 || memcmp(ver, "HTTP/1.", 7))
		return error(status, ver_len >= 5 && !memcmp(ver, "HTTP/", 5) ?
					      505 : 400);
	if (sp1 - buf != 3 || memcmp(buf, "GET", 3))
		return error(status, 405);
	path_len = sp2 - sp1 - 1;
	/* a query string does not change what is served */
	for (i = 0; i < path_len; i++)
		if (sp1[1 + i] == '?')
			path_len = i;
	if (path_len == 8 && !memcmp(sp1 + 1, "/metrics", 8))
		return TS_HTTP_METRICS;
	if (path_len == 1 && sp1[1] == '/')
		return TS_HTTP_INDEX;
	return error(status, 404);
}

#define NS_PER_S 1000000000LL
#define TIMEOUT_NS (TS_HTTP_TIMEOUT_MS * 1000000LL)
#define SILENT_NS (TS_HTTP_SILENT_MS * 1000000LL)

static long long ns_of(const struct timespec *t)
{
	return t->tv_sec * NS_PER_S + t->tv_nsec;
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ns_of(&t);
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 505: return "HTTP Version Not Supported";
	}
	return "Error";
}

/* The whole reply into c->out; the body is taken over (freed later). */
static void reply(struct client *c, int status, const char *type,
		  const char *body, size_t body_len)
{
	char head[256];
	int n;

	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\n%s\r\n",
		     status, reason(status), type, body_len,
		     status == 405 ? "Allow: GET\r\n" :
		     status == 401 ? "WWW-Authenticate: Basic realm=\"truestat\", charset=\"UTF-8\"\r\n" :
		     status == 429 ? "Retry-After: 1\r\n" :
				     "");
	c->out = malloc(n + body_len);
	if (!c->out) {
		c->out_len = 0;
		return;
	}
	memcpy(c->out, head, n);
	memcpy(c->out + n, body, body_len);
	c->out_len = n + body_len;
	c->out_off = 0;
	c->replied_ns = now_ns();
}

static void reply_error(struct client *c, int status)
{
	char body[96];
	int n = snprintf(body, sizeof(body), "%d %s\n", status, reason(status));

	reply(c, status, "text/plain; charset=utf-8", body, n);
}

static void close_client(struct client *c)
{
	if (c->tls) {
		/* close_notify, if it goes at once; a handshake cut short
		 * has no session to close (OpenSSL would queue an error) */
		if (SSL_is_init_finished(c->tls))
			SSL_shutdown(c->tls);
		ERR_clear_error();
		SSL_free(c->tls);
	}
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->fd = -1;
	c->tls = NULL;
	c->tls_wants = 0;
	c->out = NULL;
	c->in_len = c->out_len = c->out_off = 0;
	c->replied_ns = 0;
}

/*
 * A request that parsed (even to a wrong path or method) needs a user:
 * 0, or the status that refuses it (401, 429).
 */
static int refusal(struct ts_web *web, const struct client *c,
		   enum ts_http_route route, int status)
{
	if (route == TS_HTTP_ERROR && status != 404 && status != 405)
		return 0;
	switch (ts_web_authorize(web, c->in, c->in_len, &c->peer, now_ns())) {
	case TS_AUTH_OK:
		return 0;
	case TS_AUTH_LIMITED:
		return 429;
	case TS_AUTH_DENIED:
		break;
	}
	return 401;
}

static void on_request(struct client *c, struct ts_web *web,
		       ts_http_render_fn render, void *ctx)
{
	enum ts_http_route route;
	char *body;
	size_t len;
	int status = 0, refused;
	bool proto;

	route = ts_http_route(c->in, c->in_len, &status);
	if (route == TS_HTTP_INCOMPLETE)
		return;
	refused = refusal(web, c, route, status);
	if (refused) {
		reply_error(c, refused);
		return;
	}
	switch (route) {
	case TS_HTTP_INCOMPLETE:
		return;
	case TS_HTTP_ERROR:
		reply_error(c, status);
		return;
	case TS_HTTP_INDEX:
		reply(c, 200, "text/html; charset=utf-8", index_page,
		      sizeof(index_page) - 1);
		return;
	case TS_HTTP_METRICS:
		proto = ts_http_wants_protobuf(c->in, c->in_len);
		body = render(ctx, proto, &len);
		if (!body) {
			reply_error(c, 500);
			return;
		}
		reply(c, 200, proto ? TS_HTTP_PROTOBUF_TYPE :
			      "text/plain; version=0.0.4; charset=utf-8", body,
		      len);
		free(body);
		return;
	}
}

/*
 * OpenSSL's error queue is the thread's, and SSL_get_error reads it: it is
 * emptied before each call whose result it explains, so that no earlier
 * client's error ends this one.
 *
 * After SSL_read or SSL_write returned @n <= 0: -1 with errno EAGAIN and
 * c->tls_wants set when TLS waits for the socket (a handshake in
 * progress, a record half read), 0 at the peer's close_notify, -1 with
 * errno EPROTO on a TLS error (no certificate, wrong version, not TLS).
 */
static ssize_t tls_result(struct client *c, int n)
{
	switch (SSL_get_error(c->tls, n)) {
	case SSL_ERROR_WANT_READ:
		c->tls_wants = POLLIN;
		break;
	case SSL_ERROR_WANT_WRITE:
		c->tls_wants = POLLOUT;
		break;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	default:
		ERR_clear_error();
		errno = EPROTO;
		return -1;
	}
	errno = EAGAIN;
	return -1;
}

static ssize_t client_read(struct client *c, void *buf, size_t len)
{
	int n;

	if (!c->tls)
		return read(c->fd, buf, len);
	c->tls_wants = 0;
	ERR_clear_error();
	n = SSL_read(c->tls, buf, (int)len);
	return n > 0 ? n : tls_result(c, n);
}

static ssize_t client_write(struct client *c, const void *buf, size_t len)
{
	int n;

	if (!c->tls)
		return write(c->fd, buf, len);
	c->tls_wants = 0;
	ERR_clear_error();
	n = SSL_write(c->tls, buf, (int)len);
	return n > 0 ? n : tls_result(c, n);
}

static void on_readable(struct client *c, struct ts_web *web,
			ts_http_render_fn render, void *ctx)
{
	ssize_t n = client_read(c, c->in + c->in_len,
				sizeof(c->in) - c->in_len);

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			close_client(c);
		return;
	}
	c->in_len += n;
	on_request(c, web, render, ctx);
	if (c->out && !c->tls)
		shutdown(c->fd, SHUT_RD);
}

static void on_writable(struct client *c)
{
	ssize_t n = client_write(c, c->out + c->out_off,
				 c->out_len - c->out_off);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close_client(c);
		return;
	}
	c->out_off += n;
	if (c->out_off == c->out_len)
		close_client(c);
}

static void summarize(const struct client *c, struct ts_http_conn *out)
{
	*out = (struct ts_http_conn){ .open = c->fd >= 0,
				      .replying = c->out != NULL,
				      .peer = c->peer,
				      .since_ns = c->since_ns,
				      .heard_ns = c->heard_ns };
}

/* The slots @p holds. */
static int peer_slots(const struct ts_http_conn *c, int n,
		      const struct ts_peer *p)
{
	int i, held = 0;

	for (i = 0; i < n; i++)
		held += c[i].open && ts_peer_equal(&c[i].peer, p);
	return held;
}

static bool evictable(const struct ts_http_conn *c, long long round_ns)
{
	return c->open && !c->replying && c->since_ns < round_ns;
}

int ts_http_evictee(const struct ts_http_conn *c, int n,
		    const struct ts_peer *peer, long long round_ns)
{
	int i, held, best = -1, best_held = 0;

	for (i = 0; i < n; i++) {
		if (!evictable(&c[i], round_ns))
			continue;
		held = peer_slots(c, n, &c[i].peer) +
		       ts_peer_equal(&c[i].peer, peer);
		if (best < 0 || held > best_held ||
		    (held == best_held && c[i].heard_ns < c[best].heard_ns)) {
			best = i;
			best_held = held;
		}
	}
	if (best >= 0 && !ts_peer_equal(&c[best].peer, peer) &&
	    peer_slots(c, n, peer) + 1 > best_held)
		return -1;
	return best;
}

/* A free slot, one to evict for a connection from @peer, or -1. */
static int slot_for(const struct ts_httpd *h, const struct ts_peer *peer,
		    long long round_ns)
{
	struct ts_http_conn c[TS_HTTP_MAX_CLIENTS];
	int i;

	for (i = 0; i < TS_HTTP_MAX_CLIENTS; i++) {
		if (h->c[i].fd < 0)
			return i;
		summarize(&h->c[i], &c[i]);
	}
	return ts_http_evictee(c, TS_HTTP_MAX_CLIENTS, peer, round_ns);
}

static void start_client(struct ts_httpd *h, struct client *c, int fd,
			 const struct ts_peer *peer)
{
	c->fd = fd;
	c->since_ns = c->heard_ns = now_ns();
	c->peer = *peer;
	if (!ts_web_tls(h->web))
		return;
	c->tls = SSL_new(ts_web_tls(h->web));
	if (!c->tls || !SSL_set_fd(c->tls, fd))
		close_client(c);
	else
		SSL_set_accept_state(c->tls);
}

/*
 * Takes the backlog while there is room: a free slot, or a connection
 * still silent or sending that one from a peer with fewer slots may take
 * (ts_http_evictee). Draining it keeps the kernel from dropping the next
 * SYN, which the client would resend only a second later.
 */
static void accept_clients(struct ts_httpd *h, long long round_ns)
{
	struct sockaddr_storage ss;
	struct ts_peer peer;
	socklen_t len;
	int i, fd, slot;

	for (i = 0; i < 2 * TS_HTTP_MAX_CLIENTS; i++) {
		len = sizeof(ss);
		fd = accept4(h->fd, (struct sockaddr *)&ss, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			/* the connection stays queued: not again at once */
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				h->accept_after_ns = now_ns() + NS_PER_S / 10;
			return;
		}
		ts_peer_of(&ss, &peer);
		slot = slot_for(h, &peer, round_ns);
		if (slot < 0) {
			close(fd);
			continue;
		}
		close_client(&h->c[slot]);
		start_client(h, &h->c[slot], fd, &peer);
	}
}

struct ts_httpd *ts_httpd_open(const char *spec, struct ts_web *web,
			       char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct ts_httpd *h;
	socklen_t len;
	int one = 1, i;

	if (ts_http_parse_addr("--web.listen-address", spec, &ss, &len, err,
			       errlen))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (i = 0; i < TS_HTTP_MAX_CLIENTS; i++)
		h->c[i].fd = -1;
	h->web = web;
	h->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0);
	if (h->fd < 0 ||
	    setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(h->fd, (struct sockaddr *)&ss, len) ||
	    listen(h->fd, SOMAXCONN)) {
		snprintf(err, errlen, "cannot listen on %s: %s", spec,
			 strerror(errno));
		ts_httpd_close(h);
		return NULL;
	}
	return h;
}

/*
 * When @c's time is up: silent since its accept, not done by now, or its
 * reply not read at TS_HTTP_MIN_RATE.
 */
static long long deadline_of(const struct client *c)
{
	if (c->heard_ns == c->since_ns && !c->out)
		return c->since_ns + SILENT_NS;
	if (c->out && c->replied_ns)
		return c->replied_ns + TIMEOUT_NS +
		       (long long)c->out_len * NS_PER_S / TS_HTTP_MIN_RATE;
	return c->since_ns + TIMEOUT_NS;
}

/*
 * Drops the clients whose time is up, pulls *wake (ns) in to the first
 * moment another one's will be, and says whether to accept more: only
 * with a slot free or one to evict (accept_clients), else the listening
 * socket stays readable and poll() returns at once, over and over.
 */
static bool expire(struct ts_httpd *h, long long now, long long *wake)
{
	bool room = false;
	int i;

	for (i = 0; i < TS_HTTP_MAX_CLIENTS; i++) {
		struct client *c = &h->c[i];

		if (c->fd >= 0 && now >= deadline_of(c))
			close_client(c); /* slow, stuck or silent: drop it */
		if (c->fd < 0 || !c->out)
			room = true; /* free, or to evict */
		if (c->fd >= 0 && deadline_of(c) < *wake)
			*wake = deadline_of(c);
	}
	if (now < h->accept_after_ns) {
		*wake = h->accept_after_ns < *wake ? h->accept_after_ns : *wake;
		return false;
	}
	return room;
}

/* p[0]: the listening socket when @accept, p[1 + i]: client i. */
static void watch(const struct ts_httpd *h, bool accept, struct pollfd *p)
{
	int i;

	p[0] = (struct pollfd){ .fd = accept ? h->fd : -1, .events = POLLIN };
	for (i = 0; i < TS_HTTP_MAX_CLIENTS; i++)
		p[i + 1] = (struct pollfd){
			.fd = h->c[i].fd,
			.events = h->c[i].tls_wants ? h->c[i].tls_wants :
				  h->c[i].out	     ? POLLOUT :
							POLLIN,
		};
}

static void serve_ready(struct ts_httpd *h, const struct pollfd *p,
			long long round_ns, ts_http_render_fn render, void *ctx)
{
	int i;

	for (i = 0; i < TS_HTTP_MAX_CLIENTS; i++) {
		struct client *c = &h->c[i];

		if (c->fd < 0 || !p[i + 1].revents)
			continue;
		if (p[i + 1].revents & POLLIN)
			c->heard_ns = now_ns();
		if (p[i + 1].revents & (POLLERR | POLLNVAL))
			close_client(c);
		else if (c->out)
			on_writable(c);
		else
			on_readable(c, h->web, render, ctx);
	}
	if (p[0].revents & POLLIN)
		accept_clients(h, round_ns);
}

int ts_httpd_serve(struct ts_httpd *h, const struct timespec *deadline,
		   volatile sig_atomic_t *stop, const sigset_t *wait_mask,
		   ts_http_render_fn render, void *ctx)
{
	struct pollfd p[TS_HTTP_MAX_CLIENTS + 1];
	long long now, wake;
	struct timespec left;
	nfds_t n = 0;

	while (!*stop) {
		now = now_ns();
		wake = ns_of(deadline);
		if (now >= wake)
			return 0;
		if (h) {
			watch(h, expire(h, now, &wake), p);
			n = TS_HTTP_MAX_CLIENTS + 1;
		}
		left = (struct timespec){ .tv_sec = (wake - now) / NS_PER_S,
					  .tv_nsec = (wake - now) % NS_PER_S };
		/* @wait_mask lets the stop signals in here, and only here */
		if (ppoll(p, n, &left, wait_mask) < 0) {
			if (errno != EINTR)
				return -1;
			continue;
		}
		if (h)
			serve_ready(h, p, now_ns(), render, ctx);
	}
	return 0;
}

void ts_httpd_close(struct ts_httpd *h)
{
	int i;

	if (!h)
		return;
	for (i = 0; i < TS_HTTP_MAX_CLIENTS; i++)
		close_client(&h->c[i]);
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}
