/*
 * http_int.h - private interface of the HTTP client (http.c, http_auth.c,
 * http_watch.c). It includes <curl/curl.h> (through curl_dl.h: libcurl
 * is loaded, not linked), so only those three files may include it
 * (tools/check-style.sh, STYLE 13); the rest of the publisher
 * sees struct http_client as an opaque type in publisher.h.
 */
#ifndef KP_HTTP_INT_H
#define KP_HTTP_INT_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include "publisher/curl_dl.h"

#include "publisher/publisher.h"

#define HTTP_POOL		8	/* idle easy handles kept */
/* Response header bytes of one attempt (1xx responses too): a server's
 * handful of lines, Warnings included, is far below; libcurl's own cap
 * (300 KiB since 8.3 and in Debian 12's 7.88, CVE-2023-38039; none in
 * older builds) fails as a receive error, which would be retried. */
#define HTTP_MAX_HEADERS	(256 * 1024)
#define HTTP_TOKEN_MAX		16384	/* bearer token bytes, NUL included */
#define HTTP_AUTH_PREFIX	"Authorization: Bearer "
#define HTTP_AUTH_MAX		(sizeof(HTTP_AUTH_PREFIX) - 1 + HTTP_TOKEN_MAX)

struct http_client {
	struct kube_config	*cfg;
	char			*base;		/* URL prefix */
	char			*host_hdr;	/* "Host: ..." with tls-server-name */
	struct curl_slist	*connect_to;	/* tls-server-name -> server */
	char			 ua[64];
	pthread_mutex_t		 lock;		/* below */
	double			 qps, burst, tokens;
	pthread_cond_t		 rcond;		/* a waiter left, a stop */
	struct rate_waiter	*waiters;	/* for a token, in order */
	int			 stopping;	/* http_client_stop() */
	long			 timeout_ms;	/* one attempt, not watches */
	struct timespec		 last;
	CURL			*idle[HTTP_POOL];
	int			 nidle;
};

/* A thread waiting for a token (on its stack, in c->waiters). */
struct rate_waiter {
	struct rate_waiter	*next;
};

/* One exchange: a request, or a watch stream (http_watch.c). */
struct http_xfer {
	struct http_client	*c;
	const char		*method;
	const char		*path;
	const char		*body;
	size_t			 auth_len;	/* bytes of auth to wipe */
	char			*token;		/* in auth: the bearer used */
	/* watch */
	http_line_fn		 line_fn;
	void			*user;
	volatile int		*stop;
	int			 stopped;	/* *stop or line_fn ended it */
	volatile int		*cancel;	/* a request's: ends its token wait */
	/* a time budget for all attempts together (0: none), seconds */
	double			 budget_s;
	struct timespec		 started;
	/* response */
	CURL			*h;
	long			 status;
	long			 retry_after;
	char			*buf;		/* body, or a partial line */
	size_t			 len, cap, max;
	size_t			 max_body;	/* a request's; HTTP_MAX_* */
	int			 too_large;
	size_t			 hdr_bytes;	/* this attempt's */
	char			 guard[160];	/* json_guard()'s refusal */
	CURLcode		 cc;
	char			 errbuf[CURL_ERROR_SIZE];
	/* Last, left out of http_xfer_init()'s zeroing: the Authorization
	 * line, in the transfer (on its caller's stack) rather than a 16 KiB
	 * malloc a request (a large-bin request, which consolidates the
	 * fast bins every time); secret, wiped by http_xfer_reset(). */
	char			 auth[HTTP_AUTH_MAX];
};

/* http.c */
void	 http_xfer_init(struct http_xfer *, struct http_client *,
	    const char *, const char *);
CURL	*http_handle_get(struct http_client *);
void	 http_handle_put(struct http_client *, CURL *, int);
int	 http_buf_add(struct http_xfer *, const char *, size_t);
void	 http_xfer_reset(struct http_xfer *);
int	 http_xfer_run(struct http_xfer *);

/* http_auth.c */
int	 http_auth_header(struct http_xfer *, const char **);
void	 http_auth_wipe(struct http_xfer *);
int	 http_token_changed(struct http_xfer *);
int	 http_tls_name(struct http_client *, const char *, const char *);
void	 http_set_tls(struct http_client *, CURL *);

/* http_watch.c */
size_t	 http_watch_body(struct http_xfer *, char *, size_t);
void	 http_watch_options(struct http_xfer *);

#endif /* KP_HTTP_INT_H */
