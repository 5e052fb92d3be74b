/*
 * kcfg_token.c - the secrets of a struct kube_config on disk and in
 * memory: files read whole and wiped, the bearer token (read at load,
 * re-read every KP_TOKEN_REREAD_S and after a 401, keeping the last good
 * token: reference 4.5, field failure 36), the in-cluster configuration
 * (a service-account token) and freeing with explicit_bzero. The
 * kubeconfig file itself is parsed in kubeconfig.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "publisher/publisher.h"

#define KCFG_MAX_TOKEN	(64 * 1024)		/* token file bytes */

/* Free a secret string, wiped first; NULL is fine. */
void
kcfg_wipe_free(char *s)
{
	if (s != NULL) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

/* A file error as one of our codes (-errno where the map has it). */
int
kcfg_file_code(int r)
{
	if (r == -ENOENT || r == -EACCES || r == -ENOMEM)
		return (r);
	return (KP_EIO);
}

/*
 * Read a whole file, at most max bytes, NUL-terminated. Growth copies and
 * wipes the old buffer: the file may hold keys. Returns 0 or -errno.
 */
int
kcfg_read_file(const char *path, size_t max, char **out, size_t *outlen)
{
	char	*buf, *nbuf;
	size_t	 len = 0, cap = 4096;
	ssize_t	 n;
	int	 fd, e;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-errno);
	if ((buf = malloc(cap)) == NULL) {
		close(fd);
		return (-ENOMEM);
	}
	for (;;) {
		if (cap - len < 2) {
			if (cap > max || (nbuf = malloc(cap * 2)) == NULL) {
				e = cap > max ? -EFBIG : -ENOMEM;
				goto fail;
			}
			memcpy(nbuf, buf, len);
			explicit_bzero(buf, cap);
			free(buf);
			buf = nbuf;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			e = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += n;
		if (len > max) {
			e = -EFBIG;
			goto fail;
		}
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return (0);
fail:
	close(fd);
	explicit_bzero(buf, cap);
	free(buf);
	return (e);
}

/*
 * How many leading bytes of s (n long) a token may have: a token goes into
 * a header line, so visible ASCII only (no spaces, no controls). n when
 * all of them are.
 */
size_t
kcfg_token_span(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n && s[i] >= 0x21 && s[i] <= 0x7e; i++)
		;
	return (i);
}

/*
 * Read a token file: whitespace trimmed, not empty, visible ASCII only (a
 * token goes into a header line). The message names the file, never the
 * token.
 */
int
kcfg_token_read_file(const char *path, char **out, char *err, size_t size)
{
	char	*buf, *s, *e;
	size_t	 len, i;
	int	 r;

	if ((r = kcfg_read_file(path, KCFG_MAX_TOKEN, &buf, &len)) != 0) {
		snprintf(err, size, "token file %s: %s", path,
		    r == -EFBIG ? "too large" : strerror(-r));
		return (kcfg_file_code(r));
	}
	for (s = buf; *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r';)
		s++;
	for (e = buf + len; e > s && (e[-1] == ' ' || e[-1] == '\t' ||
	    e[-1] == '\n' || e[-1] == '\r');)
		e--;
	r = 0;
	if (e == s) {
		snprintf(err, size, "token file %s: empty", path);
		r = KP_EINVAL;
	}
	if (r == 0 && (i = kcfg_token_span(s, e - s)) != (size_t)(e - s)) {
		snprintf(err, size, "token file %s: invalid character at byte "
		    "%zu", path, (size_t)(s - buf) + i);
		r = KP_EINVAL;
	}
	if (r == 0 && (*out = strndup(s, e - s)) == NULL) {
		snprintf(err, size, "token file %s: out of memory", path);
		r = KP_ENOMEM;
	}
	explicit_bzero(buf, len);
	free(buf);
	return (r);
}

/*
 * In-cluster configuration (rest.InClusterConfig) with the service-account
 * files in dir: tests call this directly with a directory of their own.
 */
int
kcfg_in_cluster_dir(struct kube_config *cfg, const char *dir, char *err,
    size_t size)
{
	const char	*host, *port;
	char		 e[KP_ERROR_SIZE];
	int		 r;

	memset(cfg, 0, sizeof(*cfg));
	host = getenv("KUBERNETES_SERVICE_HOST");
	port = getenv("KUBERNETES_SERVICE_PORT");
	if (host == NULL || *host == '\0' || port == NULL || *port == '\0') {
		snprintf(err, size, "in-cluster: KUBERNETES_SERVICE_HOST and "
		    "KUBERNETES_SERVICE_PORT must be set");
		return (KP_ENOCLIENT);
	}
	if (asprintf(&cfg->server, strchr(host, ':') != NULL ?
	    "https://[%s]:%s" : "https://%s:%s", host, port) == -1 ||
	    asprintf(&cfg->token_file, "%s/token", dir) == -1 ||
	    asprintf(&cfg->ca_file, "%s/ca.crt", dir) == -1) {
		snprintf(err, size, "in-cluster: out of memory");
		kcfg_release(cfg);
		return (KP_ENOMEM);
	}
	cfg->token_read = time(NULL);
	if ((r = kcfg_token_read_file(cfg->token_file, &cfg->token, e,
	    sizeof(e))) != 0) {
		snprintf(err, size, "in-cluster: %s", e);
		kcfg_release(cfg);
		return (r);
	}
	/* As client-go: a missing CA is logged, the system roots remain. */
	if (access(cfg->ca_file, R_OK) != 0) {
		log_warn("in-cluster: CA %s (using the system roots)",
		    cfg->ca_file);
		free(cfg->ca_file);
		cfg->ca_file = NULL;
	}
	pthread_mutex_init(&cfg->lock, NULL);
	return (0);
}

int
kcfg_in_cluster(struct kube_config *cfg, char *err, size_t size)
{
	return (kcfg_in_cluster_dir(cfg, KP_SA_DIR, err, size));
}

/*
 * The current bearer token into out ("" when none is configured). A token
 * file is re-read when KP_TOKEN_REREAD_S old or after kcfg_token_stale();
 * a failed re-read keeps the last good token. Errors: KP_ENAMETOOLONG
 * (out too small; out is wiped).
 */
int
kcfg_bearer(struct kube_config *cfg, char *out, size_t size)
{
	char	 err[KP_ERROR_SIZE], *t;
	time_t	 now;
	size_t	 len;
	int	 r = 0;

	pthread_mutex_lock(&cfg->lock);
	now = time(NULL);
	if (cfg->token_file != NULL && (cfg->token_stale ||
	    now - cfg->token_read >= KP_TOKEN_REREAD_S ||
	    now < cfg->token_read)) {
		if (kcfg_token_read_file(cfg->token_file, &t, err,
		    sizeof(err)) == 0) {
			if (cfg->token == NULL || strcmp(t, cfg->token) != 0)
				log_info(2, "bearer token from %s changed",
				    cfg->token_file);
			kcfg_wipe_free(cfg->token);
			cfg->token = t;
		} else if (cfg->token != NULL)
			log_warnx("%s; keeping the last token", err);
		else
			log_warnx("%s", err);
		cfg->token_read = now;
		cfg->token_stale = 0;
	}
	len = cfg->token != NULL ? strlen(cfg->token) : 0;
	if (len >= size) {
		explicit_bzero(out, size);
		r = KP_ENAMETOOLONG;
	} else {
		memcpy(out, len ? cfg->token : "", len);
		out[len] = '\0';
	}
	pthread_mutex_unlock(&cfg->lock);
	return (r);
}

/* A 401 came back: the next kcfg_bearer() re-reads the token file. */
void
kcfg_token_stale(struct kube_config *cfg)
{
	pthread_mutex_lock(&cfg->lock);
	cfg->token_stale = 1;
	pthread_mutex_unlock(&cfg->lock);
}

/* Free the fields (not the lock) and zero the config. */
void
kcfg_release(struct kube_config *cfg)
{
	free(cfg->server);
	free(cfg->ca_file);
	free(cfg->ca_data);
	free(cfg->cert_file);
	free(cfg->cert_data);
	free(cfg->key_file);
	kcfg_wipe_free(cfg->key_data);
	kcfg_wipe_free(cfg->token);
	free(cfg->token_file);
	free(cfg->tls_server_name);
	free(cfg->proxy_url);
	explicit_bzero(cfg, sizeof(*cfg));
}

/* Free and wipe; a zeroed (never loaded, or failed) config is fine. */
void
kcfg_free(struct kube_config *cfg)
{
	if (cfg->server != NULL)
		pthread_mutex_destroy(&cfg->lock);
	kcfg_release(cfg);
}
