/*
 * http.c - with http_auth.c and http_watch.c the only libcurl users
 * (STYLE 13, http_int.h): requests and watches against the API server
 * with client-go's client-side behaviour (reference 4.5):
 * a token-bucket rate limit shared by every thread (QPS 5, burst 10 by
 * default), Retry-After on 429 and 5xx (at most 10 retries), one retry
 * with a re-read token after a 401, and the Warning header logged at V(2).
 *
 * Threads: each call takes an easy handle from a small pool of its
 * client and gives it back; a handle is only ever used by one thread at a
 * time. A handle keeps the client's fixed options (TLS, share, proxy,
 * callbacks: set once, marked by CURLOPT_PRIVATE pointing at the client)
 * after a plain GET, which sets everything it varies (URL, headers,
 * timeout, method) itself; after a watch or a request with a body it
 * goes back reset (curl_easy_reset keeps the live connection and the CA
 * store cache) and is configured anew on its next use.
 * Every handle of the process (all clients) is in one share handle for
 * TLS sessions and DNS: a handle's first connection, or one the server
 * closed while idle, resumes a session another handle made (no server
 * certificate to send, parse and verify) instead of a full handshake.
 * Connections themselves are not shared (CURL_LOCK_DATA_CONNECT across
 * threads is libcurl's known bug 11.11 up to 8.x); each handle keeps its
 * own, and the pool holds more handles than there are claim threads.
 *
 * Proxies: the environment (http_proxy, HTTPS_PROXY, ...) is ignored; only
 * a kubeconfig's proxy-url is used. client-go honours HTTPS_PROXY, but the
 * publisher holds the bearer token, and an in-cluster pod's proxy variables
 * are meant for its driver's traffic, not for the service IP of the API
 * server (a classic cause of 'proxyconnect' failures without NO_PROXY).
 *
 * Secrets: the Authorization header line is built in the transfer's own
 * buffer (on the caller's stack), wiped before every attempt and after
 * the request, and in a watch as soon as its 200 response begins (a
 * watch runs for minutes: a rotated token would outlive its wipe there);
 * the header list only points at it. Nothing here logs headers.
 * Redirects are not followed (a redirect could carry the token
 * elsewhere). libcurl builds each request (the Authorization line in
 * it) in buffers of its own that it frees without clearing: its
 * allocations go through wipe_free() (curl_global_init_mem), so no copy
 * of a token outlives the request that sent it.
 *
 * This file: the client, the handle pool, the rate limit, one exchange and
 * its retry policy, plain requests. http_auth.c: the bearer token and TLS;
 * http_watch.c: watch streams.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "publisher/curl_dl.h"

#include "base/clock.h"
#include "base/log.h"
#include "publisher/http_int.h"
#include "publisher/pub.h"

#define HTTP_MAX_RETRIES	10	/* client-go's maxRetries */
#define HTTP_MAX_RETRY_AFTER	60	/* longest Retry-After honoured, s */
#define HTTP_CONNECT_TIMEOUT_S	10
#define HTTP_DEFAULT_QPS	5.0
#define HTTP_DEFAULT_BURST	10

/* The share handle's locks, one a kind of data (CURLSHOPT_LOCKFUNC). */
static CURLSH		*share;
static pthread_mutex_t	 share_lock[CURL_LOCK_DATA_LAST];

static pthread_mutex_t *
share_mutex(curl_lock_data d)
{
	return (&share_lock[(unsigned)d < CURL_LOCK_DATA_LAST ? d : 0]);
}

static void
share_lock_fn(CURL *h, curl_lock_data d, curl_lock_access a, void *arg)
{
	(void)h;
	(void)a;
	(void)arg;
	pthread_mutex_lock(share_mutex(d));
}

static void
share_unlock_fn(CURL *h, curl_lock_data d, void *arg)
{
	(void)h;
	(void)arg;
	pthread_mutex_unlock(share_mutex(d));
}

/*
 * libcurl's allocator (curl_global_init_mem): what it frees is wiped
 * first (the top of the file says why). realloc always moves, so the old
 * block is wiped too; libcurl's buffers grow by doubling, so that is rare.
 */
static void *
wipe_malloc(size_t n)
{
	return (malloc(n));
}

static void
wipe_free(void *p)
{
	if (p != NULL) {
		explicit_bzero(p, malloc_usable_size(p));
		free(p);
	}
}

static void *
wipe_realloc(void *p, size_t n)
{
	size_t	 old;
	void	*q;

	if (p == NULL)
		return (malloc(n));
	if ((q = malloc(n > 0 ? n : 1)) == NULL)
		return (NULL);
	old = malloc_usable_size(p);
	memcpy(q, p, old < n ? old : n);
	wipe_free(p);
	return (q);
}

static char *
wipe_strdup(const char *s)
{
	return (strdup(s));
}

static void *
wipe_calloc(size_t n, size_t size)
{
	return (calloc(n, size));
}

/* Without a share handle requests still work, each handle on its own. */
static void
share_init(void)
{
	int	 i;

	for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&share_lock[i], NULL);
	if ((share = curl_share_init()) == NULL)
		return;
	if (curl_share_setopt(share, CURLSHOPT_LOCKFUNC, share_lock_fn) !=
	    CURLSHE_OK ||
	    curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, share_unlock_fn) !=
	    CURLSHE_OK ||
	    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) !=
	    CURLSHE_OK ||
	    curl_share_setopt(share, CURLSHOPT_SHARE,
	    CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK) {
		log_info(1, "libcurl: no share handle; TLS sessions are not "
		    "shared between connections");
		curl_share_cleanup(share);
		share = NULL;
	}
}

int
http_global_init(void)
{
	const curl_version_info_data	*v;
	char				 err[KP_ERROR_SIZE];

	/* The publisher loaded it before its sandbox (a no-op then); test
	 * tools using this client directly load it here. */
	if (curl_dl_load(err, sizeof(err)) != 0) {
		log_warnx("%s", err);
		return (KP_ENOTSUP);
	}
	if (curl_global_init_mem(CURL_GLOBAL_DEFAULT, wipe_malloc, wipe_free,
	    wipe_realloc, wipe_strdup, wipe_calloc) != CURLE_OK)
		return (KP_EIO);
	v = curl_version_info(CURLVERSION_NOW);
	/* CURLOPT_CAINFO_BLOB needs 7.77; TLS must be there. */
	if (v->version_num < 0x074d00 || !(v->features & CURL_VERSION_SSL)) {
		log_warnx("libcurl %s: 7.77 or later with TLS needed",
		    v->version);
		curl_global_cleanup();
		return (KP_ENOTSUP);
	}
	share_init();
	return (0);
}

/* After every client is freed (a share in use is not cleaned up). */
void
http_global_cleanup(void)
{
	if (share != NULL && curl_share_cleanup(share) == CURLSHE_OK)
		share = NULL;
	curl_global_cleanup();
}

/* --- rate limit and sleeps ------------------------------------------- */

static double
elapsed_s(const struct timespec *a, const struct timespec *b)
{
	return ((double)(b->tv_sec - a->tv_sec) +
	    (double)(b->tv_nsec - a->tv_nsec) / 1e9);
}

/* Seconds left of the transfer's budget; a large number without one. */
static double
budget_left(const struct http_xfer *x)
{
	struct timespec	 now;

	if (x->budget_s <= 0)
		return (1e9);
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (x->budget_s - elapsed_s(&x->started, &now));
}

/* One attempt's time limit in ms: the client's (kp_kube_api_timeout), or
 * what the budget leaves. */
static long
attempt_timeout_ms(const struct http_xfer *x)
{
	double	 left = budget_left(x) * 1000;

	if (left >= (double)x->c->timeout_ms)
		return (x->c->timeout_ms);
	return (left < 1000 ? 1000 : (long)left);
}

/* Sleep s seconds, or less when *stop is set or the client stops (both
 * wake it through c->rcond, a watch's stop within 100 ms). Returns
 * whether it was cut short. */
static int
sleep_s(struct http_client *c, double s, volatile int *stop)
{
	struct timespec	 now, end, until;
	int		 cut;

	clock_gettime(CLOCK_MONOTONIC, &end);
	ts_after_ms(&end, (long long)(s * 1000));
	pthread_mutex_lock(&c->lock);
	for (;;) {
		cut = c->stopping || (stop != NULL && *stop);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (cut || elapsed_s(&now, &end) <= 0)
			break;
		/* A watch's stop flag is set without a wake-up: look at it
		 * every 100 ms. */
		until = now;
		ts_after_ms(&until, 100);
		if (elapsed_s(&until, &end) < 0)
			until = end;
		(void)pthread_cond_timedwait(&c->rcond, &c->lock, &until);
	}
	pthread_mutex_unlock(&c->lock);
	return (cut);
}

/* Add what the time since c->last earned, up to the burst (lock held). */
static void
rate_refill(struct http_client *c, struct timespec *now)
{
	clock_gettime(CLOCK_MONOTONIC, now);
	c->tokens += elapsed_s(&c->last, now) * c->qps;
	if (c->tokens > c->burst)
		c->tokens = c->burst;
	c->last = *now;
}

/*
 * Take a token from the bucket, in arrival order (client-go's token-bucket
 * limiter, golang.org/x/time/rate's Wait). Unlike a reservation, a waiter
 * holds no token until it is its turn and one is there: one that leaves
 * (its look-up withdrawn, the publisher stopping, its time up) costs
 * nothing, and the waiters behind it move up. A reservation taken for
 * each queued look-up left the bucket in debt after kubelet cancelled a
 * call at a low QPS, so every retry's look-ups waited past their cut and
 * no attempt made progress. deadline_s (0: none) is how long the caller
 * may wait: a token that cannot come by then is not waited for (Wait with
 * a context deadline says so at once too). Returns 0 with the token,
 * KP_EALREADY when *cancel or the client's stop ended the wait,
 * KP_ETIMEDOUT past the deadline.
 */
static int
rate_wait(struct http_client *c, volatile int *cancel, double deadline_s)
{
	struct rate_waiter	 me, **pp;
	struct timespec		 now, start, until;
	double			 need, due;
	size_t			 k;
	int			 r;

	if (c->qps <= 0)
		return (c->stopping ? KP_EALREADY : 0);
	pthread_mutex_lock(&c->lock);
	me.next = NULL;
	for (pp = &c->waiters; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = &me;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		rate_refill(c, &now);
		if (c->stopping || (cancel != NULL && *cancel)) {
			r = KP_EALREADY;
			break;
		}
		for (k = 0, pp = &c->waiters; *pp != &me; pp = &(*pp)->next)
			k++;
		if (k == 0 && c->tokens >= 1) {
			c->tokens -= 1;
			r = 0;
			break;
		}
		/* The k waiters ahead take a token each before this one. */
		need = (double)k + 1 - c->tokens;
		due = need > 0 ? need / c->qps : 0;
		if (deadline_s > 0 && elapsed_s(&start, &now) + due >
		    deadline_s) {
			r = KP_ETIMEDOUT;
			break;
		}
		/* Woken early by a waiter leaving, a withdrawal or a stop;
		 * a watch's stop flag is set without a wake-up: looked at
		 * every 100 ms, as sleep_s() does. */
		until = now;
		if (due < 0.01)
			due = 0.01;
		if (cancel != NULL && due > 0.1)
			due = 0.1;
		ts_after_ms(&until, (long long)(due * 1000) + 1);
		(void)pthread_cond_timedwait(&c->rcond, &c->lock, &until);
	}
	for (pp = &c->waiters; *pp != &me; pp = &(*pp)->next)
		;
	*pp = me.next;
	pthread_cond_broadcast(&c->rcond);
	pthread_mutex_unlock(&c->lock);
	return (r);
}

/*
 * Wake whatever waits on c's rate limit so it looks at its cancel flag
 * again (a claim look-up withdrawn while waiting for its token). NULL:
 * nothing.
 */
void
http_client_wake(struct http_client *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	pthread_cond_broadcast(&c->rcond);
	pthread_mutex_unlock(&c->lock);
}

/*
 * The publisher stops: every wait for a token ends now (KP_EALREADY), and
 * no later request waits for one, so its threads can be joined within
 * the supervisor's grace rather than sleep out a low QPS. NULL: nothing.
 */
void
http_client_stop(struct http_client *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = 1;
	pthread_cond_broadcast(&c->rcond);
	pthread_mutex_unlock(&c->lock);
}

/* --- the client ------------------------------------------------------ */

/*
 * A client for cfg (borrowed until http_client_free). qps 0 and burst 0
 * mean client-go's defaults (5, 10); a negative qps disables the limit.
 */
int
http_client_new(struct kube_config *cfg, double qps, int burst,
    struct http_client **out)
{
	struct http_client	*c;
	pthread_condattr_t	 ca;
	int			 r = 0;

	*out = NULL;
	if (cfg == NULL || cfg->server == NULL)
		return (KP_EINVAL);
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return (KP_ENOMEM);
	c->cfg = cfg;
	c->qps = qps == 0 ? HTTP_DEFAULT_QPS : qps;
	c->burst = burst <= 0 ? HTTP_DEFAULT_BURST : burst;
	c->tokens = c->burst;
	c->timeout_ms = KP_HTTP_TIMEOUT_S * 1000L;
	clock_gettime(CLOCK_MONOTONIC, &c->last);
	snprintf(c->ua, sizeof(c->ua), "kubeletplugin/%d.%d.%d",
	    KP_VERSION_MAJOR, KP_VERSION_MINOR, KP_VERSION_PATCH);
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->rcond, &ca);
	pthread_condattr_destroy(&ca);
	if (cfg->tls_server_name != NULL)
		r = http_tls_name(c, cfg->server, cfg->tls_server_name);
	else if ((c->base = strdup(cfg->server)) == NULL)
		r = KP_ENOMEM;
	if (r != 0) {
		http_client_free(c);
		return (r);
	}
	*out = c;
	return (0);
}

/* Each request's time limit (not watches'), from kp_kube_api_timeout. */
void
http_client_timeout(struct http_client *c, int ms)
{
	if (ms > 0)
		c->timeout_ms = ms;
}

void
http_client_free(struct http_client *c)
{
	int	 i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nidle; i++)
		curl_easy_cleanup(c->idle[i]);
	curl_slist_free_all(c->connect_to);
	free(c->host_hdr);
	free(c->base);
	pthread_cond_destroy(&c->rcond);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

CURL *
http_handle_get(struct http_client *c)
{
	CURL	*h = NULL;

	pthread_mutex_lock(&c->lock);
	if (c->nidle > 0)
		h = c->idle[--c->nidle];
	pthread_mutex_unlock(&c->lock);
	return (h != NULL ? h : curl_easy_init());
}

/* keep: the transfer was a plain GET (see the top of the file). */
void
http_handle_put(struct http_client *c, CURL *h, int keep)
{
	if (keep) {
		/* The transfer's own buffers and callback data were on its
		 * stack; nothing may point there once it returned. */
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, NULL);
		curl_easy_setopt(h, CURLOPT_HEADERDATA, NULL);
	} else
		curl_easy_reset(h);
	pthread_mutex_lock(&c->lock);
	if (c->nidle < HTTP_POOL) {
		c->idle[c->nidle++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	if (h != NULL)
		curl_easy_cleanup(h);
}

/* --- callbacks ------------------------------------------------------- */

/* Append to x->buf, keeping it NUL-terminated; 0 when over x->max. */
int
http_buf_add(struct http_xfer *x, const char *p, size_t n)
{
	char	*nb;
	size_t	 ncap;

	if (x->len + n > x->max) {
		x->too_large = 1;
		return (0);
	}
	if (x->len + n + 1 > x->cap) {
		for (ncap = x->cap ? x->cap : 4096; ncap < x->len + n + 1;)
			ncap *= 2;
		if ((nb = realloc(x->buf, ncap)) == NULL)
			return (0);
		x->buf = nb;
		x->cap = ncap;
	}
	memcpy(x->buf + x->len, p, n);
	x->len += n;
	x->buf[x->len] = '\0';
	return (1);
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct http_xfer	*x = arg;

	n *= size;
	if (x->line_fn != NULL)
		return (http_watch_body(x, p, n));
	return (http_buf_add(x, p, n) ? n : 0);
}

/* Retry-After as client-go reads it: an integer number of seconds. */
static long
retry_after(const char *v, size_t n)
{
	long	 s = 0;
	size_t	 i, digits = 0;

	for (i = 0; i < n && (v[i] == ' ' || v[i] == '\t'); i++)
		;
	for (; i < n && v[i] >= '0' && v[i] <= '9' && digits < 9; i++) {
		s = s * 10 + (v[i] - '0');
		digits++;
	}
	while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == '\r' ||
	    v[i] == '\n'))
		i++;
	return (digits > 0 && i == n ? s : -1);
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct http_xfer	*x = arg;
	size_t			 len = size * n, i;
	long			 code = 0;
	char			 text[512];

	if ((x->hdr_bytes += len) > HTTP_MAX_HEADERS)
		return (0);	/* the attempt fails: xfer_once() says why */
	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0)
		x->retry_after = -1;	/* a new response (after 100, ...) */
	else if (x->line_fn != NULL && x->auth_len > 0 && len <= 2 &&
	    curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code) ==
	    CURLE_OK && code == 200)
		http_auth_wipe(x);	/* a watch's stream begins */
	else if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0)
		x->retry_after = retry_after(p + 12, len - 12);
	else if (len > 8 && strncasecmp(p, "Warning:", 8) == 0 &&
	    log_enabled(2)) {
		for (i = 8; i < len && p[i] == ' '; i++)
			;
		snprintf(text, sizeof(text), "%.*s", (int)(len - i), p + i);
		text[strcspn(text, "\r\n")] = '\0';
		log_info(2, "%s %s: warning: %s", x->method, x->path, text);
	}
	return (len);
}

/* --- one exchange ---------------------------------------------------- */

/* A GET without a body and not a watch: the only kind that keeps a
 * configured handle (the top of the file). */
static int
xfer_plain(const struct http_xfer *x)
{
	return (x->line_fn == NULL && x->body == NULL &&
	    strcmp(x->method, "GET") == 0);
}

/* What every request of client c has: once per handle (or after a reset). */
static void
set_fixed(struct http_client *c, CURL *h)
{
	if (share != NULL)
		curl_easy_setopt(h, CURLOPT_SHARE, share);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTPS |
	    CURLPROTO_HTTP));
#endif
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, c->ua);
	curl_easy_setopt(h, CURLOPT_PROXY, c->cfg->proxy_url != NULL ?
	    c->cfg->proxy_url : "");
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)HTTP_CONNECT_TIMEOUT_S);
	/* libcurl's default since 7.50.2, said for the record: a GET
	 * waiting for Nagle costs a prepare up to 40 ms (issue 17). */
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 10L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	http_set_tls(c, h);
	curl_easy_setopt(h, CURLOPT_PRIVATE, (void *)c);
}

static void
set_options(struct http_xfer *x, const char *url, struct curl_slist *hdrs)
{
	struct http_client	*c = x->c;
	CURL			*h = x->h;
	char			*priv = NULL;

	if (curl_easy_getinfo(h, CURLINFO_PRIVATE, &priv) != CURLE_OK)
		priv = NULL;
	/* Only a plain GET runs on what the last one left. */
	if (priv == (char *)c && !xfer_plain(x)) {
		curl_easy_reset(h);
		priv = NULL;
	}
	if (priv != (char *)c)
		set_fixed(c, h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	if (x->line_fn != NULL)
		http_watch_options(x);
	else
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, attempt_timeout_ms(x));
	if (x->body != NULL) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, x->body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)strlen(x->body));
	}
	if (strcmp(x->method, "GET") == 0)
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	else if (strcmp(x->method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	else if (strcmp(x->method, "POST") != 0 || x->body == NULL)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, x->method);
}

/* Zero x but its auth buffer (nothing in it yet); method, path borrowed. */
void
http_xfer_init(struct http_xfer *x, struct http_client *c,
    const char *method, const char *path)
{
	memset(x, 0, offsetof(struct http_xfer, auth));
	x->c = c;
	x->method = method;
	x->path = path;
}

/* Wipe and drop what one attempt left; keep the handle. */
void
http_xfer_reset(struct http_xfer *x)
{
	http_auth_wipe(x);
	free(x->buf);
	x->buf = NULL;
	x->len = x->cap = 0;
	x->too_large = 0;
	x->hdr_bytes = 0;
	x->guard[0] = '\0';
	x->status = 0;
	x->retry_after = -1;
	x->cc = CURLE_OK;
	x->errbuf[0] = '\0';
}

/*
 * Perform one attempt. Returns 0 when a response came (x->status), or an
 * error with x->errbuf filled (curl's own message).
 */
static int
xfer_once(struct http_xfer *x)
{
	/* The header list on the stack: curl only reads it, and nothing
	 * but the Authorization line (wiped with x->auth) is secret. */
	struct curl_slist	 hdr[5];
	char			 url_buf[512], *url = url_buf, *url_heap = NULL;
	const char		*auth;
	size_t			 n = 0, i, blen = strlen(x->c->base);
	size_t			 plen = strlen(x->path);
	int			 r;

	http_xfer_reset(x);
	if (blen + plen < sizeof(url_buf)) {
		memcpy(url_buf, x->c->base, blen);
		memcpy(url_buf + blen, x->path, plen + 1);
	} else if (asprintf(&url_heap, "%s%s", x->c->base, x->path) == -1)
		return (KP_ENOMEM);
	else
		url = url_heap;
	if ((r = http_auth_header(x, &auth)) == 0) {
		if (auth != NULL)
			hdr[n++].data = (char *)auth;
		hdr[n++].data = (char *)"Accept: application/json";
		hdr[n++].data = (char *)"Expect:";
		if (x->body != NULL)
			hdr[n++].data = strcmp(x->method, "PATCH") == 0 ?
			    (char *)"Content-Type: application/merge-patch+json" :
			    (char *)"Content-Type: application/json";
		if (x->c->host_hdr != NULL)
			hdr[n++].data = x->c->host_hdr;
		for (i = 0; i < n; i++)
			hdr[i].next = i + 1 < n ? &hdr[i + 1] : NULL;
		x->max = x->max_body;
		set_options(x, url, hdr);
		x->cc = curl_easy_perform(x->h);
		curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &x->status);
		curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, NULL);
		pub_stats_api(x->method, x->cc == CURLE_OK ||
		    x->stopped ? x->status : 0);
	}
	free(url_heap);
	if (r != 0 && x->errbuf[0] == '\0')
		snprintf(x->errbuf, sizeof(x->errbuf), "%s", kp_strerror(r));
	if (r != 0 || x->cc == CURLE_OK || (x->stopped && x->line_fn != NULL))
		return (r);
	if (x->guard[0] != '\0')
		snprintf(x->errbuf, sizeof(x->errbuf), "%s", x->guard);
	else if (x->too_large)
		snprintf(x->errbuf, sizeof(x->errbuf), "%s %s: response "
		    "larger than %zu bytes: refused", x->method, x->path,
		    x->max);
	else if (x->hdr_bytes > HTTP_MAX_HEADERS)
		snprintf(x->errbuf, sizeof(x->errbuf), "%s %s: response "
		    "headers larger than %d bytes: refused", x->method,
		    x->path, HTTP_MAX_HEADERS);
	else if (x->errbuf[0] == '\0')
		snprintf(x->errbuf, sizeof(x->errbuf), "%s",
		    curl_easy_strerror(x->cc));
	x->status = 0;
	return (x->cc == CURLE_OPERATION_TIMEDOUT ? KP_ETIMEDOUT :
	    x->cc == CURLE_OUT_OF_MEMORY ? KP_ENOMEM : KP_EIO);
}

/* Transport errors client-go retries on a GET (reset, EOF; a body cut
 * short is an unexpected EOF; an HTTP/2 connection the server closed
 * with a GOAWAY while the request went out on it, as kube-apiserver's
 * --goaway-chance does: libcurl says "Error in the HTTP2 framing
 * layer", Go "http2: server sent GOAWAY and closed the connection"). */
static int
retryable_transport(struct http_xfer *x, int r)
{
	return (r == KP_EIO && strcmp(x->method, "GET") == 0 &&
	    x->line_fn == NULL && (x->cc == CURLE_RECV_ERROR ||
	    x->cc == CURLE_SEND_ERROR || x->cc == CURLE_GOT_NOTHING ||
	    x->cc == CURLE_PARTIAL_FILE || x->cc == CURLE_HTTP2));
}

/*
 * The retry policy around xfer_once: every attempt waits for the rate
 * limiter; a 401 gets one more try when the token file had a new token;
 * 429 and 5xx with Retry-After are retried after that many seconds.
 */
int
http_xfer_run(struct http_xfer *x)
{
	int	 r, tries = 0, did401 = 0;
	double	 wait;

	for (;;) {
		/* With a budget, a token that cannot come in time is not
		 * waited for: 1 s is left for the request itself. */
		r = rate_wait(x->c, x->stop != NULL ? x->stop : x->cancel,
		    x->budget_s > 0 ?
		    (budget_left(x) > 1 ? budget_left(x) - 1 : 0.001) : 0);
		if (r == KP_EALREADY && x->stop != NULL && *x->stop)
			return (0);
		if (r != 0) {
			snprintf(x->errbuf, sizeof(x->errbuf), "%s %s: %s",
			    x->method, x->path, r == KP_ETIMEDOUT ? "no API "
			    "token (kp_kube_api_qps) within its time: not sent" :
			    "withdrawn or stopped before it was sent");
			return (r);
		}
		r = xfer_once(x);
		wait = -1;
		if (r != 0 && retryable_transport(x, r))
			wait = 1;
		else if (r == 0 && x->status == 401 && !did401) {
			did401 = 1;
			if (http_token_changed(x)) {
				log_info(2, "%s %s: 401, retrying with the "
				    "re-read token", x->method, x->path);
				continue;
			}
		} else if (r == 0 && (x->status == 429 || x->status >= 500) &&
		    x->retry_after >= 0)
			wait = x->retry_after > HTTP_MAX_RETRY_AFTER ?
			    HTTP_MAX_RETRY_AFTER : x->retry_after;
		/* With a budget, a retry that cannot finish in time is not
		 * started: the caller's own deadline comes first. */
		if (wait < 0 || tries >= HTTP_MAX_RETRIES ||
		    (x->stop != NULL && *x->stop) ||
		    wait + 1 > budget_left(x))
			return (r);
		tries++;
		if (r != 0)
			log_info(2, "%s %s: %s; retry %d in %.0f s", x->method,
			    x->path, x->errbuf, tries, wait);
		else
			log_info(2, "%s %s: HTTP %ld; retry %d in %.0f s",
			    x->method, x->path, x->status, tries, wait);
		if (sleep_s(x->c, wait, x->stop) && x->stop == NULL) {
			snprintf(x->errbuf, sizeof(x->errbuf), "%s %s: stopped "
			    "before its retry", x->method, x->path);
			return (KP_EALREADY);
		}
	}
}

/* --- entry points ---------------------------------------------------- */

/*
 * One request (method, path with query, JSON body or NULL; a PATCH body is
 * a JSON merge patch). Returns 0 when
 * a response arrived, whatever its status (resp->status, resp->body); or
 * KP_EIO / KP_ETIMEDOUT with resp->status 0 and resp->error holding curl's
 * message; KP_ENOMEM. resp is always initialised: free it with
 * http_response_free().
 */
int
http_request(struct http_client *c, const char *method, const char *path,
    const char *body, size_t max, struct http_response *resp)
{
	return (http_request_within(c, method, path, body, max, 0, NULL,
	    resp));
}

/*
 * http_request() within budget_s seconds for every attempt and retry
 * together (0: no budget): a claim look-up must answer before kubelet's
 * deadline, even when the API server throttles. While it waits for a
 * token (kp_kube_api_qps), a set *cancel (NULL: none) ends the wait: the
 * request is not sent and costs no token (KP_EALREADY, resp->error says
 * so); once sent, it finishes. No token due within the budget:
 * KP_ETIMEDOUT at once, nothing sent. http_client_stop() ends the wait
 * as *cancel does.
 */
int
http_request_within(struct http_client *c, const char *method,
    const char *path, const char *body, size_t max, double budget_s,
    volatile int *cancel, struct http_response *resp)
{
	struct http_xfer	 x;
	int			 r;

	memset(resp, 0, sizeof(*resp));
	resp->retry_after_s = -1;
	http_xfer_init(&x, c, method, path);
	x.body = body;
	x.budget_s = budget_s;
	x.cancel = cancel;
	x.max_body = max;
	clock_gettime(CLOCK_MONOTONIC, &x.started);
	if ((x.h = http_handle_get(c)) == NULL) {
		snprintf(resp->error, sizeof(resp->error), "out of memory");
		return (KP_ENOMEM);
	}
	r = http_xfer_run(&x);
	if (r == 0 && json_guard(x.buf, x.len, method, path, x.errbuf,
	    sizeof(x.errbuf)) != 0) {
		r = KP_EIO;
		x.status = 0;
	}
	resp->status = x.status;
	resp->retry_after_s = x.retry_after;
	if (r != 0)
		snprintf(resp->error, sizeof(resp->error), "%s", x.errbuf);
	else {
		resp->body = x.buf != NULL ? x.buf : strdup("");
		resp->body_len = x.len;
		x.buf = NULL;
		if (resp->body == NULL)
			r = KP_ENOMEM;
	}
	http_xfer_reset(&x);
	http_handle_put(c, x.h, xfer_plain(&x));
	return (r);
}

void
http_response_free(struct http_response *resp)
{
	free(resp->body);
	resp->body = NULL;
	resp->body_len = 0;
}

/* A query value, percent-encoded; free() it. NULL: out of memory. */
char *
http_escape(const char *s)
{
	char	*e, *out;

	if ((e = curl_easy_escape(NULL, s, 0)) == NULL)
		return (NULL);
	out = strdup(e);
	curl_free(e);
	return (out);
}
