/*
 * kubeconfig.c - Kubernetes access from a kubeconfig file, with client-go's
 * rules (reference/resourceslice.md 5). The in-cluster configuration and
 * the bearer token (read at load, re-read every KP_TOKEN_REREAD_S and
 * after a 401, keeping the last good token: 4.5, field failure 36) are in
 * kcfg_token.c.
 *
 * The kubeconfig is parsed with libyaml's document loader, so block and
 * flow styles, quoted scalars and anchors all work as kubectl writes them.
 * Secrets (token, key data) are wiped with explicit_bzero when replaced or
 * freed, and so are the file buffer and the parsed scalars.
 * XXX libyaml's own scanner buffers are freed without wiping.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <yaml.h>

#include "base/log.h"
#include "publisher/publisher.h"

#define KCFG_MAX_FILE	(16 * 1024 * 1024)	/* kubeconfig bytes */

/* One kubeconfig being loaded. */
struct kc {
	const char	*path;
	char		 dir[PATH_MAX];	/* relative paths start here */
	yaml_document_t	 doc;
	yaml_node_t	*root;
	const char	*context;	/* the chosen context's name */
	char		*err;
	size_t		 size;
};

/* Format "kubeconfig <path>: ..." into the caller's buffer; returns code. */
static int KP_PRINTF(3, 4)
kc_fail(struct kc *k, int code, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	n = snprintf(k->err, k->size, "kubeconfig %s: ", k->path);
	if (n < 0 || (size_t)n >= k->size)
		return (code);
	va_start(ap, fmt);
	vsnprintf(k->err + n, k->size - n, fmt, ap);
	va_end(ap);
	return (code);
}

/* *-data: base64 of PEM. Decoded into *out (NUL-terminated). */
static int
kc_data(struct kc *k, const char *where, const char *field, const char *b64,
    char **out)
{
	unsigned char	*buf;
	size_t		 len = 0, bad;
	size_t		 cap = strlen(b64) / 4 * 3 + 4;

	if ((buf = malloc(cap)) == NULL)
		return (kc_fail(k, KP_ENOMEM, "out of memory"));
	if ((bad = kcfg_b64_decode(b64, buf, &len)) != 0) {
		explicit_bzero(buf, cap);
		free(buf);
		return (kc_fail(k, KP_EINVAL, "%s: %s: illegal base64 data at "
		    "input byte %zu", where, field, bad - 1));
	}
	if (strlen((char *)buf) != len ||
	    strstr((char *)buf, "-----BEGIN ") == NULL) {
		explicit_bzero(buf, cap);
		free(buf);
		return (kc_fail(k, KP_EINVAL, "%s: %s: not PEM data", where,
		    field));
	}
	*out = (char *)buf;
	return (0);
}

/* --- YAML access ----------------------------------------------------- */

static int
is_null(const yaml_node_t *n)
{
	const char	*v;

	if (n == NULL)
		return (1);
	if (n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return (0);
	v = (const char *)n->data.scalar.value;
	return (*v == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
	    strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0);
}

static int
scalar_is(const yaml_node_t *n, const char *s)
{
	return (n != NULL && n->type == YAML_SCALAR_NODE &&
	    n->data.scalar.length == strlen(s) &&
	    memcmp(n->data.scalar.value, s, n->data.scalar.length) == 0);
}

/* The value of key in a mapping node; NULL if absent or not a mapping. */
static yaml_node_t *
kc_get(struct kc *k, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t	*pr;

	if (map == NULL || map->type != YAML_MAPPING_NODE)
		return (NULL);
	for (pr = map->data.mapping.pairs.start;
	    pr < map->data.mapping.pairs.top; pr++) {
		if (scalar_is(yaml_document_get_node(&k->doc, pr->key), key))
			return (yaml_document_get_node(&k->doc, pr->value));
	}
	return (NULL);
}

/* A string field: *out is NULL when absent, null or empty. */
static int
kc_str(struct kc *k, yaml_node_t *map, const char *where, const char *key,
    const char **out)
{
	yaml_node_t	*n = kc_get(k, map, key);

	*out = NULL;
	if (is_null(n))
		return (0);
	if (n->type != YAML_SCALAR_NODE ||
	    strlen((char *)n->data.scalar.value) != n->data.scalar.length)
		return (kc_fail(k, KP_EINVAL, "%s: %s: not a string", where,
		    key));
	if (n->data.scalar.length > 0)
		*out = (const char *)n->data.scalar.value;
	return (0);
}

/* A string field copied into *out (left alone when absent). */
static int
kc_strdup(struct kc *k, yaml_node_t *map, const char *where, const char *key,
    char **out)
{
	const char	*s;
	int		 r;

	if ((r = kc_str(k, map, where, key, &s)) != 0 ||
	    (s != NULL && (*out = strdup(s)) == NULL))
		return (r != 0 ? r : kc_fail(k, KP_ENOMEM, "out of memory"));
	return (0);
}

/* A boolean field as YAML 1.1 (go-yaml v2) reads a plain scalar. */
static int
kc_bool(struct kc *k, yaml_node_t *map, const char *where, const char *key,
    int *out)
{
	static const char	*yes[] = { "true", "True", "TRUE", "yes", "Yes",
	    "YES", "on", "On", "ON", "y", "Y" };
	static const char	*no[] = { "false", "False", "FALSE", "no", "No",
	    "NO", "off", "Off", "OFF", "n", "N" };
	yaml_node_t		*n = kc_get(k, map, key);
	size_t			 i;

	*out = 0;
	if (is_null(n))
		return (0);
	if (n->type == YAML_SCALAR_NODE &&
	    n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			if (scalar_is(n, yes[i]))
				return (*out = 1, 0);
			if (scalar_is(n, no[i]))
				return (0);
		}
	}
	return (kc_fail(k, KP_EINVAL, "%s: %s: not a boolean", where, key));
}

/*
 * The `field` mapping of the entry named `name` in the top-level list
 * `list` (clusters, users, contexts). Returns 1 found (*out may be NULL
 * for an empty entry), 0 not found, or an error code.
 */
static int
kc_find(struct kc *k, const char *list, const char *field, const char *name,
    yaml_node_t **out)
{
	yaml_node_t		*seq, *item;
	yaml_node_item_t	*it;

	*out = NULL;
	seq = kc_get(k, k->root, list);
	if (is_null(seq))
		return (0);
	if (seq->type != YAML_SEQUENCE_NODE)
		return (kc_fail(k, KP_EINVAL, "%s: not a list", list));
	for (it = seq->data.sequence.items.start;
	    it < seq->data.sequence.items.top; it++) {
		item = yaml_document_get_node(&k->doc, *it);
		if (!scalar_is(kc_get(k, item, "name"), name))
			continue;
		*out = kc_get(k, item, field);
		if (is_null(*out))
			*out = NULL;
		else if ((*out)->type != YAML_MAPPING_NODE)
			return (kc_fail(k, KP_EINVAL, "%s \"%s\": %s: not a "
			    "mapping", field, name, field));
		return (1);
	}
	return (0);
}

/* A path from the kubeconfig, resolved against the file's directory. */
static int
kc_path(struct kc *k, const char *p, char **out)
{
	int	 n;

	if (p[0] == '/')
		n = asprintf(out, "%s", p);
	else
		n = asprintf(out, "%s/%s", k->dir, p);
	if (n == -1) {
		*out = NULL;
		return (kc_fail(k, KP_ENOMEM, "out of memory"));
	}
	return (0);
}

/* A referenced file must be readable now (client-go checks at load). */
static int
kc_readable(struct kc *k, const char *where, const char *field,
    const char *path)
{
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (kc_fail(k, kcfg_file_code(-errno), "%s: %s %s: %s",
		    where, field, path, strerror(errno)));
	close(fd);
	return (0);
}

/*
 * A file/data pair (certificate-authority, client-certificate,
 * client-key): both set is an error, as in client-go's validation.
 */
static int
kc_pem(struct kc *k, yaml_node_t *map, const char *where, const char *field,
    char **file, char **data)
{
	char		 dfield[64];
	const char	*f, *d;
	int		 r;

	snprintf(dfield, sizeof(dfield), "%s-data", field);
	if ((r = kc_str(k, map, where, field, &f)) != 0 ||
	    (r = kc_str(k, map, where, dfield, &d)) != 0)
		return (r);
	if (f != NULL && d != NULL)
		return (kc_fail(k, KP_EINVAL, "%s: %s and %s are both "
		    "specified", where, dfield, field));
	if (d != NULL)
		return (kc_data(k, where, dfield, d, data));
	if (f == NULL)
		return (0);
	if ((r = kc_path(k, f, file)) != 0)
		return (r);
	return (kc_readable(k, where, field, *file));
}

/* --- clusters and users ---------------------------------------------- */

static int
kc_cluster(struct kc *k, struct kube_config *cfg, const char *name)
{
	yaml_node_t	*c;
	char		 where[128];
	const char	*s;
	int		 r;

	if (name == NULL || (r = kc_find(k, "clusters", "cluster", name,
	    &c)) == 0)
		return (name == NULL ? kc_fail(k, KP_EINVAL, "no server for "
		    "context %s", k->context) : kc_fail(k, KP_EINVAL,
		    "cluster \"%s\" of context \"%s\" not found", name,
		    k->context));
	if (r < 0)
		return (r);
	snprintf(where, sizeof(where), "cluster \"%s\"", name);
	if ((r = kc_str(k, c, where, "server", &s)) != 0)
		return (r);
	if (s == NULL)
		return (kc_fail(k, KP_EINVAL, "no server for context %s",
		    k->context));
	if (asprintf(&cfg->server, "%s%s", strstr(s, "://") ? "" :
	    "https://", s) == -1) {
		cfg->server = NULL;
		return (kc_fail(k, KP_ENOMEM, "out of memory"));
	}
	while (strlen(cfg->server) > 8 &&
	    cfg->server[strlen(cfg->server) - 1] == '/')
		cfg->server[strlen(cfg->server) - 1] = '\0';
	if (strncmp(cfg->server, "https://", 8) != 0 &&
	    strncmp(cfg->server, "http://", 7) != 0)
		return (kc_fail(k, KP_EINVAL, "%s: server %s: not an http or "
		    "https URL", where, s));
	if ((r = kc_bool(k, c, where, "insecure-skip-tls-verify",
	    &cfg->insecure)) != 0 ||
	    (r = kc_pem(k, c, where, "certificate-authority", &cfg->ca_file,
	    &cfg->ca_data)) != 0)
		return (r);
	if (cfg->insecure && (cfg->ca_file != NULL || cfg->ca_data != NULL))
		return (kc_fail(k, KP_EINVAL, "%s: specifying a root "
		    "certificates file with the insecure flag is not allowed",
		    where));
	if ((r = kc_strdup(k, c, where, "tls-server-name",
	    &cfg->tls_server_name)) != 0)
		return (r);
	return (kc_strdup(k, c, where, "proxy-url", &cfg->proxy_url));
}

/* What we do not implement is refused by name, never silently ignored. */
static int
kc_unsupported(struct kc *k, yaml_node_t *u, const char *where)
{
	static const struct {
		const char	*key, *what;
	} no[] = {
		{ "exec", "exec credential plugins" },
		{ "auth-provider", "auth-provider plugins" },
		{ "username", "basic authentication (username/password)" },
		{ "password", "basic authentication (username/password)" },
		{ "as", "impersonation (as)" },
		{ "as-uid", "impersonation (as-uid)" },
		{ "as-groups", "impersonation (as-groups)" },
		{ "as-user-extra", "impersonation (as-user-extra)" },
	};
	size_t	 i;

	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		if (!is_null(kc_get(k, u, no[i].key)))
			return (kc_fail(k, KP_ENOTSUP, "%s: %s are not "
			    "supported", where, no[i].what));
	}
	return (0);
}

/*
 * Token precedence (5.2): a non-empty token is used, and a tokenFile next
 * to it is preferred whenever readable; a tokenFile alone must be readable
 * at load.
 */
static int
kc_token(struct kc *k, struct kube_config *cfg, yaml_node_t *u,
    const char *where)
{
	const char	*tok, *file;
	char		 err[KP_ERROR_SIZE], *t;
	size_t		 n;
	int		 r;

	if ((r = kc_str(k, u, where, "token", &tok)) != 0 ||
	    (r = kc_str(k, u, where, "tokenFile", &file)) != 0)
		return (r);
	if (tok != NULL && (n = kcfg_token_span(tok, strlen(tok))) !=
	    strlen(tok))
		return (kc_fail(k, KP_EINVAL, "%s: token: invalid character "
		    "at byte %zu", where, n));
	if (tok != NULL && (cfg->token = strdup(tok)) == NULL)
		return (kc_fail(k, KP_ENOMEM, "out of memory"));
	if (file == NULL)
		return (0);
	if ((r = kc_path(k, file, &cfg->token_file)) != 0)
		return (r);
	cfg->token_read = time(NULL);
	if ((r = kcfg_token_read_file(cfg->token_file, &t, err,
	    sizeof(err))) != 0) {
		if (cfg->token == NULL)
			return (kc_fail(k, r, "%s: %s", where, err));
		log_info(2, "%s: %s; using the inline token", where, err);
		return (0);
	}
	kcfg_wipe_free(cfg->token);
	cfg->token = t;
	return (0);
}

static int
kc_user(struct kc *k, struct kube_config *cfg, const char *name)
{
	yaml_node_t	*u;
	char		 where[128];
	int		 r;

	if (name == NULL)
		return (0);	/* no credentials: anonymous */
	if ((r = kc_find(k, "users", "user", name, &u)) == 0)
		return (kc_fail(k, KP_EINVAL, "user \"%s\" of context \"%s\" "
		    "not found", name, k->context));
	if (r < 0)
		return (r);
	snprintf(where, sizeof(where), "user \"%s\"", name);
	if ((r = kc_unsupported(k, u, where)) != 0 ||
	    (r = kc_pem(k, u, where, "client-certificate", &cfg->cert_file,
	    &cfg->cert_data)) != 0 ||
	    (r = kc_pem(k, u, where, "client-key", &cfg->key_file,
	    &cfg->key_data)) != 0)
		return (r);
	if ((cfg->cert_file || cfg->cert_data) &&
	    !(cfg->key_file || cfg->key_data))
		return (kc_fail(k, KP_EINVAL, "%s: client-key-data or "
		    "client-key must be specified to use the clientCert "
		    "authentication method", where));
	if ((cfg->key_file || cfg->key_data) &&
	    !(cfg->cert_file || cfg->cert_data))
		return (kc_fail(k, KP_EINVAL, "%s: client-certificate-data or "
		    "client-certificate must be specified to use the "
		    "clientCert authentication method", where));
	return (kc_token(k, cfg, u, where));
}

/* Parse the file into k->doc; the file buffer is wiped either way. */
static int
kc_parse(struct kc *k)
{
	yaml_parser_t	 parser;
	char		*buf;
	size_t		 len;
	int		 r, ok;

	if ((r = kcfg_read_file(k->path, KCFG_MAX_FILE, &buf, &len)) != 0)
		return (kc_fail(k, kcfg_file_code(r), "%s", r == -EFBIG ?
		    "file too large" : strerror(-r)));
	if (!yaml_parser_initialize(&parser)) {
		explicit_bzero(buf, len);
		free(buf);
		return (kc_fail(k, KP_ENOMEM, "out of memory"));
	}
	yaml_parser_set_input_string(&parser, (unsigned char *)buf, len);
	ok = yaml_parser_load(&parser, &k->doc);
	if (!ok)
		r = kc_fail(k, KP_EINVAL, "line %zu column %zu: %s",
		    parser.problem_mark.line + 1,
		    parser.problem_mark.column + 1,
		    parser.problem ? parser.problem : "YAML error");
	yaml_parser_delete(&parser);
	explicit_bzero(buf, len);
	free(buf);
	if (!ok)
		return (r);
	k->root = yaml_document_get_root_node(&k->doc);
	if (k->root != NULL && !is_null(k->root) &&
	    k->root->type != YAML_MAPPING_NODE) {
		r = kc_fail(k, KP_EINVAL, "not a kubeconfig (the top level "
		    "is not a mapping)");
		yaml_document_delete(&k->doc);
		return (r);
	}
	return (0);
}

/* Wipe every scalar (keys and tokens among them), then free the tree. */
static void
kc_doc_free(struct kc *k)
{
	yaml_node_t	*n;

	for (n = k->doc.nodes.start; n < k->doc.nodes.top; n++) {
		if (n->type == YAML_SCALAR_NODE)
			explicit_bzero(n->data.scalar.value,
			    n->data.scalar.length);
	}
	yaml_document_delete(&k->doc);
}

static int
kc_load(struct kc *k, struct kube_config *cfg, const char *context)
{
	yaml_node_t	*ctx;
	const char	*cluster, *user;
	int		 r;

	if (context == NULL || *context == '\0') {
		if ((r = kc_str(k, k->root, "top level", "current-context",
		    &context)) != 0)
			return (r);
		if (context == NULL)
			return (kc_fail(k, KP_EINVAL, "no context chosen "
			    "(current-context is empty)"));
	}
	k->context = context;
	if ((r = kc_find(k, "contexts", "context", context, &ctx)) == 0)
		return (kc_fail(k, KP_EINVAL, "context \"%s\" not found",
		    context));
	if (r < 0)
		return (r);
	if ((r = kc_str(k, ctx, "context", "cluster", &cluster)) != 0 ||
	    (r = kc_str(k, ctx, "context", "user", &user)) != 0)
		return (r);
	if ((r = kc_cluster(k, cfg, cluster)) != 0 ||
	    (r = kc_user(k, cfg, user)) != 0)
		return (r);
	return (0);
}

/*
 * Load a kubeconfig (path; context NULL: its current-context). On error
 * cfg is left empty (nothing to free) and err names the file, the entry
 * and the field.
 */
int
kcfg_kubeconfig(struct kube_config *cfg, const char *path,
    const char *context, char *err, size_t size)
{
	struct kc	 k;
	const char	*slash;
	int		 r;

	memset(cfg, 0, sizeof(*cfg));
	memset(&k, 0, sizeof(k));
	k.path = path != NULL ? path : "(null)";
	k.err = err;
	k.size = size;
	if (path == NULL || *path == '\0')
		return (kc_fail(&k, KP_EINVAL, "no path given"));
	if ((slash = strrchr(path, '/')) == NULL)
		snprintf(k.dir, sizeof(k.dir), ".");
	else if (slash == path)
		snprintf(k.dir, sizeof(k.dir), "/");
	else if ((size_t)(slash - path) >= sizeof(k.dir))
		return (kc_fail(&k, KP_ENAMETOOLONG, "path too long"));
	else
		snprintf(k.dir, sizeof(k.dir), "%.*s", (int)(slash - path),
		    path);
	if ((r = kc_parse(&k)) != 0)
		return (r);
	r = kc_load(&k, cfg, context);
	kc_doc_free(&k);
	if (r != 0) {
		kcfg_release(cfg);
		return (r);
	}
	pthread_mutex_init(&cfg->lock, NULL);
	return (0);
}
