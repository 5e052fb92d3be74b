/*
 * http_auth.c - how a request proves who it is and checks whom it talks
 * to: the bearer token in the Authorization header (and whether a 401
 * brought a new one), the CA, client certificate and key, and the
 * tls-server-name mapping. Secrets are built in buffers that are wiped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publisher/curl_dl.h"

#include "publisher/http_int.h"

/*
 * The Authorization header line in x->auth (x->token is the bearer in it),
 * *line pointing there, or NULL without a token; x->errbuf set on failure.
 * http_xfer_reset() wipes it.
 */
int
http_auth_header(struct http_xfer *x, const char **line)
{
	size_t	 pre = sizeof(HTTP_AUTH_PREFIX) - 1;
	int	 r;

	*line = NULL;
	/* kcfg_bearer() writes the token and its NUL, and only those bytes
	 * are wiped again. */
	memcpy(x->auth, HTTP_AUTH_PREFIX, pre);
	x->auth_len = pre;
	x->token = x->auth + pre;
	if ((r = kcfg_bearer(x->c->cfg, x->token, HTTP_TOKEN_MAX)) != 0) {
		/* kcfg_bearer() wiped what it had written. */
		snprintf(x->errbuf, sizeof(x->errbuf), "bearer token longer "
		    "than %d bytes", HTTP_TOKEN_MAX - 1);
		return (r);
	}
	x->auth_len = pre + strlen(x->token) + 1;
	if (x->token[0] != '\0')
		*line = x->auth;
	return (0);
}

/* Wipe the Authorization line; x->token is gone with it. */
void
http_auth_wipe(struct http_xfer *x)
{
	explicit_bzero(x->auth, x->auth_len);
	x->auth_len = 0;
	x->token = NULL;
}

/* After a 401: did the re-read give another token than the one used? */
int
http_token_changed(struct http_xfer *x)
{
	char	*now;
	int	 changed;

	kcfg_token_stale(x->c->cfg);
	if (x->c->cfg->token_file == NULL ||
	    (now = calloc(1, HTTP_TOKEN_MAX)) == NULL)
		return (0);
	changed = kcfg_bearer(x->c->cfg, now, HTTP_TOKEN_MAX) == 0 &&
	    x->token != NULL && strcmp(now, x->token) != 0;
	explicit_bzero(now, HTTP_TOKEN_MAX);
	free(now);
	return (changed);
}

/*
 * With tls-server-name, curl must send that name (SNI) and verify it while
 * connecting to the server's address: the URL names the TLS name, a
 * CONNECT_TO entry maps it to the real host and port, and Host: keeps the
 * server's own name, as Go's http.Transport does.
 */
int
http_tls_name(struct http_client *c, const char *server, const char *name)
{
	const char	*hp, *end, *rest, *port;
	char		 entry[600];
	int		 https = strncmp(server, "https://", 8) == 0;
	int		 plen;

	hp = server + (https ? 8 : 7);
	rest = hp + strcspn(hp, "/");
	if (*hp == '[') {
		if ((end = memchr(hp, ']', rest - hp)) == NULL)
			return (KP_EINVAL);
		end++;
	} else if ((end = memchr(hp, ':', rest - hp)) == NULL)
		end = rest;
	if (end < rest && *end != ':')
		return (KP_EINVAL);
	port = end < rest ? end + 1 : https ? "443" : "80";
	plen = end < rest ? (int)(rest - port) : (int)strlen(port);
	if (end - hp > 256 || strlen(name) > 253 || plen > 5)
		return (KP_EINVAL);
	snprintf(entry, sizeof(entry), "%s:%.*s:%.*s:%.*s", name, plen, port,
	    (int)(end - hp), hp, plen, port);
	if ((c->connect_to = curl_slist_append(NULL, entry)) == NULL)
		return (KP_ENOMEM);
	if (asprintf(&c->host_hdr, "Host: %.*s", (int)(rest - hp), hp) == -1) {
		c->host_hdr = NULL;
		return (KP_ENOMEM);
	}
	if (asprintf(&c->base, "%s://%s:%.*s%s", https ? "https" : "http",
	    name, plen, port, rest) == -1) {
		c->base = NULL;
		return (KP_ENOMEM);
	}
	return (0);
}

/*
 * A PEM string as a blob option. curl copies the struct at once, and the
 * PEM too with CURL_BLOB_COPY.
 */
static void
set_blob(CURL *h, CURLoption opt, char *pem, unsigned int flags)
{
	struct curl_blob	 b;

	b.data = pem;
	b.len = strlen(pem);
	b.flags = flags;
	curl_easy_setopt(h, opt, &b);
}

void
http_set_tls(struct http_client *c, CURL *h)
{
	struct kube_config	*cfg = c->cfg;

	if (cfg->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (cfg->ca_file != NULL || cfg->ca_data != NULL) {
		/* Only the configured CA: no system bundle, no CA path. */
		curl_easy_setopt(h, CURLOPT_CAINFO, cfg->ca_file);
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
		if (cfg->ca_data != NULL)
			set_blob(h, CURLOPT_CAINFO_BLOB, cfg->ca_data,
			    CURL_BLOB_COPY);
	}
	if (cfg->cert_file != NULL)
		curl_easy_setopt(h, CURLOPT_SSLCERT, cfg->cert_file);
	else if (cfg->cert_data != NULL)
		set_blob(h, CURLOPT_SSLCERT_BLOB, cfg->cert_data,
		    CURL_BLOB_COPY);
	if (cfg->key_file != NULL)
		curl_easy_setopt(h, CURLOPT_SSLKEY, cfg->key_file);
	else if (cfg->key_data != NULL) {
		/* No copy: the key stays in cfg only, wiped at kcfg_free. */
		set_blob(h, CURLOPT_SSLKEY_BLOB, cfg->key_data,
		    CURL_BLOB_NOCOPY);
	}
	if (c->connect_to != NULL)
		curl_easy_setopt(h, CURLOPT_CONNECT_TO, c->connect_to);
}
