// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* asprintf */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "webconfig.h"

struct parse {
	yaml_document_t doc;
	const char *path;
	char *dir; /* the file's directory: relative paths start there */
	yaml_node_t *key; /* the key being read: where "not supported" points */
	struct ts_web_config *cfg;
	char *err;
	size_t errlen;
};

static const char *const client_auth_names[] = {
	[TS_CLIENT_CERT_NONE] = "NoClientCert",
	[TS_CLIENT_CERT_IF_GIVEN] = "VerifyClientCertIfGiven",
	[TS_CLIENT_CERT_REQUIRED] = "RequireAndVerifyClientCert",
};

static const char *const version_names[] = {
	[TS_TLS10] = "TLS10", [TS_TLS11] = "TLS11",
	[TS_TLS12] = "TLS12", [TS_TLS13] = "TLS13",
};

static int bad(struct parse *p, const yaml_node_t *n, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "bad --web.config.file %s:%zu: %s", p->path,
		 n ? n->start_mark.line + 1 : 1, what);
	return -1;
}

static const char *scalar(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		return NULL;
	return (const char *)n->data.scalar.value;
}

static yaml_node_t *node(struct parse *p, int id)
{
	return yaml_document_get_node(&p->doc, id);
}

/* @n's value among @names (NULL entries skipped): its index, or -1. */
static int one_of(const yaml_node_t *n, const char *const *names, int count)
{
	const char *v = scalar(n);
	int i;

	for (i = 0; v && i < count; i++)
		if (names[i] && !strcmp(v, names[i]))
			return i;
	return -1;
}

static int set_path(struct parse *p, const char *key, const yaml_node_t *n,
		    char **out)
{
	const char *v = scalar(n);

	if (*out)
		return bad(p, n, "%s given twice", key);
	if (!v || !*v)
		return bad(p, n, "%s needs a file name", key);
	if (v[0] == '/')
		*out = strdup(v);
	else if (asprintf(out, "%s/%s", p->dir, v) < 0)
		*out = NULL;
	return *out ? 0 : bad(p, n, "out of memory");
}

static int set_version(struct parse *p, const char *key, const yaml_node_t *n,
		       enum ts_tls_version *out)
{
	int v = one_of(n, version_names, 5);

	if (v < 0)
		return bad(p, n, "%s '%s': expected TLS10, TLS11, TLS12 or TLS13",
			   key, scalar(n) ? scalar(n) : "(not a word)");
	*out = v;
	return 0;
}

static int set_client_auth(struct parse *p, const yaml_node_t *n)
{
	int v = one_of(n, client_auth_names, 3);

	if (v < 0)
		return bad(p, n, "client_auth_type '%s' is not supported: NoClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert (a client certificate is verified whenever one is asked for)",
			   scalar(n) ? scalar(n) : "(not a word)");
	p->cfg->client_auth = v;
	return 0;
}

static int tls_key(struct parse *p, const char *key, yaml_node_t *v)
{
	struct ts_web_config *c = p->cfg;

	if (!strcmp(key, "cert_file"))
		return set_path(p, key, v, &c->cert_file);
	if (!strcmp(key, "key_file"))
		return set_path(p, key, v, &c->key_file);
	if (!strcmp(key, "client_ca_file"))
		return set_path(p, key, v, &c->client_ca_file);
	if (!strcmp(key, "client_auth_type"))
		return set_client_auth(p, v);
	if (!strcmp(key, "min_version"))
		return set_version(p, key, v, &c->min_version);
	if (!strcmp(key, "max_version"))
		return set_version(p, key, v, &c->max_version);
	return bad(p, p->key, "tls_server_config: '%s' is not supported by truestat (cert_file, key_file, client_auth_type, client_ca_file, min_version, max_version are)",
		   key);
}

static int user_key(struct parse *p, const char *name, yaml_node_t *v)
{
	struct ts_web_config *c = p->cfg;
	const char *hash = scalar(v);
	int i;

	for (i = 0; i < c->nusers; i++)
		if (!strcmp(c->user[i].name, name))
			return bad(p, v, "user '%s' given twice", name);
	if (c->nusers == TS_WEB_MAX_USERS)
		return bad(p, v, "more than %d users", TS_WEB_MAX_USERS);
	/* bcrypt: "$2?$" cost "$" and 53 characters of salt and hash */
	if (!hash || strlen(hash) != 60 || strncmp(hash, "$2", 2) ||
	    !strchr("aby", hash[2]) || hash[3] != '$')
		return bad(p, v, "user '%s': the password must be a bcrypt hash ($2y$..., 60 characters: htpasswd -nBC 10 '' | tr -d ':\\n')",
			   name);
	c->user[c->nusers].name = strdup(name);
	c->user[c->nusers].hash = strdup(hash);
	if (!c->user[c->nusers].name || !c->user[c->nusers].hash)
		return bad(p, v, "out of memory");
	c->nusers++;
	return 0;
}

typedef int (*pair_fn)(struct parse *p, const char *key, yaml_node_t *v);

/* Calls @fn on each pair of the mapping @map; its keys must be words. */
static int each_pair(struct parse *p, const char *what, yaml_node_t *map,
		     pair_fn fn)
{
	yaml_node_pair_t *pair;
	const char *key;

	if (!map || map->type != YAML_MAPPING_NODE)
		return bad(p, map, "%s must be a mapping (key: value lines)", what);
	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		p->key = node(p, pair->key);
		key = scalar(p->key);
		if (!key)
			return bad(p, p->key, "%s: a key must be a word", what);
		if (fn(p, key, node(p, pair->value)))
			return -1;
	}
	return 0;
}

static int top_key(struct parse *p, const char *key, yaml_node_t *v)
{
	if (!strcmp(key, "tls_server_config")) {
		if (p->cfg->tls)
			return bad(p, v, "tls_server_config given twice");
		p->cfg->tls = 1;
		return each_pair(p, key, v, tls_key);
	}
	if (!strcmp(key, "basic_auth_users"))
		return each_pair(p, key, v, user_key);
	return bad(p, p->key, "'%s' is not supported by truestat (tls_server_config and basic_auth_users are)",
		   key);
}

/* What the keys cannot say one at a time. */
static int check_whole(struct parse *p)
{
	struct ts_web_config *c = p->cfg;
	yaml_node_t *root = yaml_document_get_root_node(&p->doc);

	if (c->tls && (!c->cert_file || !c->key_file))
		return bad(p, root, "tls_server_config needs cert_file and key_file");
	if (c->client_auth != TS_CLIENT_CERT_NONE && !c->client_ca_file)
		return bad(p, root, "client_auth_type %s needs client_ca_file",
			   client_auth_names[c->client_auth]);
	if (c->client_auth == TS_CLIENT_CERT_NONE && c->client_ca_file)
		return bad(p, root, "client_ca_file is used only with client_auth_type VerifyClientCertIfGiven or RequireAndVerifyClientCert");
	if (c->max_version && c->max_version < c->min_version)
		return bad(p, root, "max_version %s is below min_version %s",
			   version_names[c->max_version],
			   version_names[c->min_version]);
	return 0;
}

static int parse_file(struct parse *p, FILE *f)
{
	yaml_parser_t parser;
	yaml_node_t *root;
	int rc = -1;

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &p->doc)) {
		snprintf(p->err, p->errlen, "bad --web.config.file %s:%zu: %s",
			 p->path, parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		return -1;
	}
	root = yaml_document_get_root_node(&p->doc);
	/* an empty file, as in the exporter toolkit: plain HTTP, no users */
	if (!root || (scalar(root) && !*scalar(root)))
		rc = 0;
	else if (!each_pair(p, "the file", root, top_key))
		rc = check_whole(p);
	yaml_document_delete(&p->doc);
	yaml_parser_delete(&parser);
	return rc;
}

int ts_web_config_load(const char *path, struct ts_web_config *cfg, char *err,
		       size_t errlen)
{
	struct parse p = { .path = path, .cfg = cfg, .err = err,
			   .errlen = errlen };
	const char *slash = strrchr(path, '/');
	FILE *f;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	cfg->min_version = TS_TLS12; /* the exporter toolkit's default */
	f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "cannot read --web.config.file %s: %m",
			 path);
		return -1;
	}
	p.dir = slash ? strndup(path, slash - path + !(slash - path)) :
			strdup(".");
	rc = p.dir ? parse_file(&p, f) : -1;
	fclose(f);
	free(p.dir);
	if (rc)
		ts_web_config_free(cfg);
	return rc;
}

void ts_web_config_free(struct ts_web_config *cfg)
{
	int i;

	free(cfg->cert_file);
	free(cfg->key_file);
	free(cfg->client_ca_file);
	for (i = 0; i < cfg->nusers; i++) {
		free(cfg->user[i].name);
		free(cfg->user[i].hash);
	}
	memset(cfg, 0, sizeof(*cfg));
}
