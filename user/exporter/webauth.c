// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* strncasecmp */
#include <arpa/inet.h>
#include <crypt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "webauth.h"
#include "webconfig.h"

/*
 * bcrypt costs tens of ms a check by design: the credentials that passed
 * are remembered as HMAC-SHA-256 digests under a key made at start (a
 * digest in memory is no offline guess of the password), so that a scrape
 * every second does not pay it each time. Failures are not remembered
 * (a guesser changes its guess); they are rationed (ts_fail_budget).
 */
#define PASSED_CACHE 8
#define MAX_CREDENTIALS 512 /* "user:password", decoded */
#define DIGEST_KEY 32

struct ts_web {
	struct ts_web_config cfg;
	SSL_CTX *tls;
	unsigned char key[DIGEST_KEY];
	unsigned char passed[PASSED_CACHE][EVP_MAX_MD_SIZE];
	int npassed, next;
	struct ts_fail_budget failed;
};

static int fail(char *err, size_t errlen, const char *what, const char *path)
{
	unsigned long e = ERR_get_error();

	snprintf(err, errlen, "bad --web.config.file: %s %s: %s", what, path,
		 e ? ERR_reason_error_string(e) : "rejected");
	ERR_clear_error();
	return -1;
}

static int readable(const char *what, const char *path, char *err,
		    size_t errlen)
{
	FILE *f = fopen(path, "re");

	if (!f) {
		snprintf(err, errlen, "bad --web.config.file: cannot read %s %s: %m",
			 what, path);
		return -1;
	}
	fclose(f);
	return 0;
}

static int tls_version(enum ts_tls_version v)
{
	static const int map[] = { 0, TLS1_VERSION, TLS1_1_VERSION,
				   TLS1_2_VERSION, TLS1_3_VERSION };

	return map[v];
}

static int tls_client_ca(SSL_CTX *ctx, const struct ts_web_config *c,
			 char *err, size_t errlen)
{
	STACK_OF(X509_NAME) *names;
	int mode = SSL_VERIFY_PEER;

	if (c->client_auth == TS_CLIENT_CERT_NONE)
		return 0;
	if (readable("client_ca_file", c->client_ca_file, err, errlen))
		return -1;
	names = SSL_load_client_CA_file(c->client_ca_file);
	if (!names ||
	    SSL_CTX_load_verify_locations(ctx, c->client_ca_file, NULL) != 1) {
		sk_X509_NAME_pop_free(names, X509_NAME_free);
		return fail(err, errlen, "client_ca_file", c->client_ca_file);
	}
	SSL_CTX_set_client_CA_list(ctx, names);
	if (c->client_auth == TS_CLIENT_CERT_REQUIRED)
		mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
	SSL_CTX_set_verify(ctx, mode, NULL);
	return 0;
}

static SSL_CTX *tls_new(const struct ts_web_config *c, char *err, size_t errlen)
{
	SSL_CTX *ctx;

	if (readable("cert_file", c->cert_file, err, errlen) ||
	    readable("key_file", c->key_file, err, errlen))
		return NULL;
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx) {
		fail(err, errlen, "TLS", "context");
		return NULL;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	/* with client certificates, a TLS 1.2 session resumed without one
	 * would be refused rather than treated as a cache miss */
	SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"truestat",
				       sizeof("truestat") - 1);
	if (!SSL_CTX_set_min_proto_version(ctx, tls_version(c->min_version)) ||
	    !SSL_CTX_set_max_proto_version(ctx, tls_version(c->max_version)))
		fail(err, errlen, "min_version/max_version", "");
	else if (SSL_CTX_use_certificate_chain_file(ctx, c->cert_file) != 1)
		fail(err, errlen, "cert_file", c->cert_file);
	else if (SSL_CTX_use_PrivateKey_file(ctx, c->key_file,
					     SSL_FILETYPE_PEM) != 1)
		fail(err, errlen, "key_file", c->key_file);
	else if (SSL_CTX_check_private_key(ctx) != 1)
		fail(err, errlen, "key_file does not match cert_file", c->key_file);
	else if (!tls_client_ca(ctx, c, err, errlen))
		return ctx;
	SSL_CTX_free(ctx);
	return NULL;
}

/* Whether crypt(@password, @hash) gives @hash back. */
static bool hash_matches(const char *hash, const char *password)
{
	static struct crypt_data data; /* 32 KiB: not on the stack */
	const char *got;

	memset(&data, 0, sizeof(data));
	got = crypt_r(password, hash, &data);
	return got && strlen(got) == strlen(hash) &&
	       !CRYPTO_memcmp(got, hash, strlen(hash));
}

/* libcrypt takes every hash (a bad one gives "*0"): checked at start. */
static int hashes_usable(const struct ts_web_config *c, char *err,
			 size_t errlen)
{
	static struct crypt_data data;
	const char *got;
	int i;

	for (i = 0; i < c->nusers; i++) {
		memset(&data, 0, sizeof(data));
		got = crypt_r("", c->user[i].hash, &data);
		if (!got || got[0] == '*') {
			snprintf(err, errlen, "bad --web.config.file: user '%s': libcrypt does not take its bcrypt hash",
				 c->user[i].name);
			return -1;
		}
	}
	return 0;
}

struct ts_web *ts_web_open(const char *path, char *err, size_t errlen)
{
	struct ts_web *w = calloc(1, sizeof(*w));

	if (!w) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (RAND_bytes(w->key, sizeof(w->key)) != 1) {
		snprintf(err, errlen, "no random bytes for the password cache");
		ts_web_close(w);
		return NULL;
	}
	if (ts_web_config_load(path, &w->cfg, err, errlen) ||
	    hashes_usable(&w->cfg, err, errlen) ||
	    (w->cfg.tls && !(w->tls = tls_new(&w->cfg, err, errlen)))) {
		ts_web_close(w);
		return NULL;
	}
	return w;
}

SSL_CTX *ts_web_tls(const struct ts_web *w)
{
	return w ? w->tls : NULL;
}

/* Decodes base64 @in (@len characters) into @out: its length, or -1. */
static int base64_decode(const char *in, size_t len, char *out, size_t outlen)
{
	int n;

	if (!len || len % 4 || len / 4 * 3 >= outlen)
		return -1;
	n = EVP_DecodeBlock((unsigned char *)out, (const unsigned char *)in,
			    (int)len);
	if (n < 0)
		return -1;
	n -= (in[len - 1] == '=') + (in[len - 2] == '='); /* padding */
	out[n] = 0;
	return (int)strlen(out) == n ? n : -1; /* no NUL inside */
}

/* The value of the head's Authorization header, and its length. */
static const char *authorization(const char *head, size_t len, size_t *vlen)
{
	const char *line = memchr(head, '\n', len), *end = head + len, *eol;
	static const char name[] = "authorization:";

	while (line && ++line < end) {
		eol = memchr(line, '\n', end - line);
		if (!eol || eol - line <= 1) /* the blank line: no more */
			return NULL;
		if ((size_t)(eol - line) > sizeof(name) &&
		    !strncasecmp(line, name, sizeof(name) - 1)) {
			line += sizeof(name) - 1;
			while (line < eol && (*line == ' ' || *line == '\t'))
				line++;
			*vlen = eol - line - (eol[-1] == '\r');
			return line;
		}
		line = eol;
	}
	return NULL;
}

int ts_http_basic_credentials(const char *head, size_t len, char *buf,
			      size_t buflen, const char **user,
			      const char **password)
{
	const char *v, *colon;
	size_t vlen;
	int n;

	v = authorization(head, len, &vlen);
	if (!v || vlen < 6 || strncasecmp(v, "Basic ", 6))
		return -1;
	v += 6;
	vlen -= 6;
	while (vlen && v[vlen - 1] == ' ')
		vlen--;
	n = base64_decode(v, vlen, buf, buflen);
	colon = n > 0 ? memchr(buf, ':', n) : NULL;
	if (!colon)
		return -1;
	buf[colon - buf] = 0;
	*user = buf;
	*password = colon + 1;
	return 0;
}

/* The keyed digest of the pair into @out: false if OpenSSL failed. */
static bool digest(const struct ts_web *w, const char *user,
		   const char *password, unsigned char *out)
{
	char pair[MAX_CREDENTIALS];
	size_t ulen = strlen(user), plen = strlen(password);
	unsigned int n = 0;
	bool ok;

	memset(out, 0, EVP_MAX_MD_SIZE);
	if (ulen + 1 + plen > sizeof(pair))
		return false;
	/* the NUL between them: "a" + "b:c" is not "a:b" + "c" */
	memcpy(pair, user, ulen + 1);
	memcpy(pair + ulen + 1, password, plen);
	ok = HMAC(EVP_sha256(), w->key, sizeof(w->key),
		  (const unsigned char *)pair, ulen + 1 + plen, out, &n) &&
	     n > 0;
	OPENSSL_cleanse(pair, sizeof(pair));
	ERR_clear_error();
	return ok;
}

static bool passed_before(struct ts_web *w, const unsigned char *d)
{
	int i;

	for (i = 0; i < w->npassed; i++)
		if (!CRYPTO_memcmp(w->passed[i], d, EVP_MAX_MD_SIZE))
			return true;
	return false;
}

static void remember_passed(struct ts_web *w, const unsigned char *d)
{
	memcpy(w->passed[w->next], d, EVP_MAX_MD_SIZE);
	w->next = (w->next + 1) % PASSED_CACHE;
	if (w->npassed < PASSED_CACHE)
		w->npassed++;
}

static bool check_password(struct ts_web *w, const char *user,
			   const char *password)
{
	const struct ts_web_config *c = &w->cfg;
	int i;

	for (i = 0; i < c->nusers; i++)
		if (!strcmp(c->user[i].name, user))
			return hash_matches(c->user[i].hash, password);
	/* an unknown user costs what a known one does: no timing tells */
	hash_matches(c->user[0].hash, password);
	return false;
}

enum ts_auth ts_web_authorize(struct ts_web *w, const char *head, size_t len,
			      const struct ts_peer *peer, long long now_ns)
{
	char buf[MAX_CREDENTIALS];
	unsigned char d[EVP_MAX_MD_SIZE];
	const char *user, *password;
	bool digested;

	if (!w || !w->cfg.nusers)
		return TS_AUTH_OK;
	if (ts_http_basic_credentials(head, len, buf, sizeof(buf), &user,
				      &password))
		return TS_AUTH_DENIED;
	digested = digest(w, user, password, d);
	if (digested && passed_before(w, d))
		return TS_AUTH_OK;
	if (!ts_fail_budget_allows(&w->failed, peer, now_ns))
		return TS_AUTH_LIMITED;
	if (!check_password(w, user, password)) {
		ts_fail_budget_charge(&w->failed, peer, now_ns);
		return TS_AUTH_DENIED;
	}
	if (digested)
		remember_passed(w, d);
	return TS_AUTH_OK;
}

void ts_peer_of(const struct sockaddr_storage *ss, struct ts_peer *p)
{
	const struct sockaddr_in *v4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)ss;

	memset(p, 0, sizeof(*p));
	if (ss->ss_family == AF_INET) {
		p->addr[10] = p->addr[11] = 0xff; /* as ::ffff:a.b.c.d */
		memcpy(p->addr + 12, &v4->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr))
			memcpy(p->addr, &v6->sin6_addr, 16);
		else
			memcpy(p->addr, &v6->sin6_addr, 8); /* its /64 */
	}
}

bool ts_peer_equal(const struct ts_peer *a, const struct ts_peer *b)
{
	return !memcmp(a->addr, b->addr, sizeof(a->addr));
}

/* GCRA: one left while the bucket is full again within burst - 1 steps. */
static bool bucket_allows(long long full_ns, long long now, int burst,
			  long long step_ns)
{
	return full_ns - now <= (burst - 1) * step_ns;
}

static long long bucket_take(long long full_ns, long long now, long long step_ns)
{
	return (full_ns > now ? full_ns : now) + step_ns;
}

/*
 * @p's entry; a peer not in the table takes the entry that is fullest
 * (soonest full again): one already full loses nothing by it.
 */
static struct ts_fail_peer *peer_entry(struct ts_fail_budget *b,
				       const struct ts_peer *p)
{
	int i, fullest = 0;

	for (i = 0; i < TS_WEB_FAIL_PEERS; i++) {
		if (ts_peer_equal(&b->peer[i].peer, p))
			return &b->peer[i];
		if (b->peer[i].full_ns < b->peer[fullest].full_ns)
			fullest = i;
	}
	b->peer[fullest].peer = *p;
	b->peer[fullest].full_ns = 0;
	b->peer[fullest].failed_ns = 0;
	return &b->peer[fullest];
}

/* A shared bucket: where it is full again, its burst and its step. */
struct shared {
	long long *full_ns;
	int burst;
	long long step_ns;
};

/* The shared bucket @e's peer draws on: the failed lately's, or the others'. */
static struct shared shared_of(struct ts_fail_budget *b,
			       const struct ts_fail_peer *e, long long now_ns)
{
	if (e->failed_ns && now_ns - e->failed_ns < TS_WEB_FAIL_LATELY_NS)
		return (struct shared){ &b->all_full_ns, TS_WEB_FAIL_ALL_BURST,
					TS_WEB_FAIL_ALL_NS };
	return (struct shared){ &b->clean_full_ns, TS_WEB_FAIL_CLEAN_BURST,
				TS_WEB_FAIL_CLEAN_STEP_NS };
}

bool ts_fail_budget_allows(struct ts_fail_budget *b, const struct ts_peer *p,
			   long long now_ns)
{
	struct ts_fail_peer *e = peer_entry(b, p);
	struct shared all = shared_of(b, e, now_ns);

	return bucket_allows(e->full_ns, now_ns, TS_WEB_FAIL_PEER_BURST,
			     TS_WEB_FAIL_PEER_NS) &&
	       bucket_allows(*all.full_ns, now_ns, all.burst, all.step_ns);
}

void ts_fail_budget_charge(struct ts_fail_budget *b, const struct ts_peer *p,
			   long long now_ns)
{
	struct ts_fail_peer *e = peer_entry(b, p);
	struct shared all = shared_of(b, e, now_ns);

	*all.full_ns = bucket_take(*all.full_ns, now_ns, all.step_ns);
	e->full_ns = bucket_take(e->full_ns, now_ns, TS_WEB_FAIL_PEER_NS);
	e->failed_ns = now_ns;
}

void ts_web_close(struct ts_web *w)
{
	if (!w)
		return;
	SSL_CTX_free(w->tls);
	ts_web_config_free(&w->cfg);
	OPENSSL_cleanse(w->passed, sizeof(w->passed));
	OPENSSL_cleanse(w->key, sizeof(w->key));
	free(w);
}
