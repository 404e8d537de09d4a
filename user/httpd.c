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
#include <unistd.h>

#include "httpd.h"

struct client {
	int fd; /* -1: free */
	char in[TS_HTTP_MAX_REQUEST];
	size_t in_len;
	char *out; /* reply, malloc'd; NULL while reading */
	size_t out_len, out_off;
	long long since_ms;
};

struct ts_httpd {
	int fd;
	struct client c[TS_HTTP_MAX_CLIENTS];
};

static const char index_page[] =
	"<html><head><title>truestat</title></head><body>"
	"<h1>truestat</h1><p><a href=\"/metrics\">/metrics</a>: queue, "
	"service and total time per disk and direction, in-device "
	"concurrency, in the Prometheus text format.</p></body></html>\n";

static int fail(char *err, size_t errlen, const char *what, const char *spec)
{
	snprintf(err, errlen, "bad --prometheus '%s': %s", spec, what);
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

int ts_http_parse_addr(const char *spec, struct sockaddr_storage *ss,
		       socklen_t *len, char *err, size_t errlen)
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
			return fail(err, errlen, "expected [IPV6]:PORT", spec);
		memcpy(host, spec + 1, colon - spec - 1);
		host[colon - spec - 1] = 0;
		port = colon + 2;
	} else if ((colon = strrchr(spec, ':'))) {
		if ((size_t)(colon - spec) >= sizeof(host) || colon == spec)
			return fail(err, errlen, "expected ADDR:PORT", spec);
		memcpy(host, spec, colon - spec);
		host[colon - spec] = 0;
		port = colon + 1;
	}
	if (parse_port(port, &p))
		return fail(err, errlen, "port must be 1 to 65535", spec);
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
	return fail(err, errlen, "not a numeric IPv4 or IPv6 address", spec);
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

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
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
		     status == 405 ? "Allow: GET\r\n" : "");
	c->out = malloc(n + body_len);
	if (!c->out) {
		c->out_len = 0;
		return;
	}
	memcpy(c->out, head, n);
	memcpy(c->out + n, body, body_len);
	c->out_len = n + body_len;
	c->out_off = 0;
}

static void reply_error(struct client *c, int status)
{
	char body[96];
	int n = snprintf(body, sizeof(body), "%d %s\n", status, reason(status));

	reply(c, status, "text/plain; charset=utf-8", body, n);
}

static void close_client(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->in_len = c->out_len = c->out_off = 0;
}

static void on_request(struct client *c, ts_http_render_fn render, void *ctx)
{
	enum ts_http_route route;
	char *body;
	size_t len;
	int status = 0;

	route = ts_http_route(c->in, c->in_len, &status);
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
		body = render(ctx, &len);
		if (!body) {
			reply_error(c, 500);
			return;
		}
		reply(c, 200, "text/plain; version=0.0.4; charset=utf-8", body,
		      len);
		free(body);
		return;
	}
}

static void on_readable(struct client *c, ts_http_render_fn render, void *ctx)
{
	ssize_t n = read(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len);

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			close_client(c);
		return;
	}
	c->in_len += n;
	on_request(c, render, ctx);
	if (c->out)
		shutdown(c->fd, SHUT_RD);
}

static void on_writable(struct client *c)
{
	ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);

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

static void accept_clients(struct ts_httpd *h)
{
	int i, fd;

	for (i = 0; i < TS_HTTP_MAX_CLIENTS; i++) {
		if (h->c[i].fd >= 0)
			continue;
		fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		h->c[i].fd = fd;
		h->c[i].since_ms = now_ms();
	}
}

struct ts_httpd *ts_httpd_open(const char *spec, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct ts_httpd *h;
	socklen_t len;
	int one = 1, i;

	if (ts_http_parse_addr(spec, &ss, &len, err, errlen))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (i = 0; i < TS_HTTP_MAX_CLIENTS; i++)
		h->c[i].fd = -1;
	h->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0);
	if (h->fd < 0 ||
	    setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(h->fd, (struct sockaddr *)&ss, len) || listen(h->fd, 64)) {
		snprintf(err, errlen, "cannot listen on %s: %s", spec,
			 strerror(errno));
		ts_httpd_close(h);
		return NULL;
	}
	return h;
}

static int ms_until(const struct timespec *deadline)
{
	struct timespec t;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &t);
	ms = (deadline->tv_sec - t.tv_sec) * 1000LL +
	     (deadline->tv_nsec - t.tv_nsec) / 1000000;
	return ms < 0 ? 0 : ms > 1000 ? 1000 : (int)ms;
}

static bool past(const struct timespec *deadline)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec > deadline->tv_sec ||
	       (t.tv_sec == deadline->tv_sec && t.tv_nsec >= deadline->tv_nsec);
}

int ts_httpd_serve(struct ts_httpd *h, const struct timespec *deadline,
		   volatile sig_atomic_t *stop, ts_http_render_fn render,
		   void *ctx)
{
	struct pollfd p[TS_HTTP_MAX_CLIENTS + 1];
	int i, n;

	while (!*stop && !past(deadline)) {
		p[0] = (struct pollfd){ .fd = h->fd, .events = POLLIN };
		for (i = 0; i < TS_HTTP_MAX_CLIENTS; i++) {
			struct client *c = &h->c[i];

			if (c->fd >= 0 && now_ms() - c->since_ms > TS_HTTP_TIMEOUT_MS)
				close_client(c); /* slow or stuck: drop it */
			p[i + 1] = (struct pollfd){
				.fd = c->fd,
				.events = c->out ? POLLOUT : POLLIN,
			};
		}
		n = poll(p, TS_HTTP_MAX_CLIENTS + 1, ms_until(deadline));
		if (n < 0 && errno != EINTR)
			return -1;
		if (n <= 0)
			continue;
		for (i = 0; i < TS_HTTP_MAX_CLIENTS; i++) {
			struct client *c = &h->c[i];

			if (c->fd < 0 || !p[i + 1].revents)
				continue;
			if (p[i + 1].revents & (POLLERR | POLLNVAL))
				close_client(c);
			else if (c->out)
				on_writable(c);
			else
				on_readable(c, render, ctx);
		}
		if (p[0].revents & POLLIN)
			accept_clients(h);
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
