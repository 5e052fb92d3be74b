/*
 * http_watch.c - watch streams: a streaming GET without an overall
 * timeout whose body is cut into lines (one JSON event each) for the
 * caller, stopped by the caller's flag or by its line function.
 */
#include <string.h>

#include "publisher/curl_dl.h"

#include "base/log.h"
#include "publisher/http_int.h"

#define HTTP_MAX_LINE		HTTP_MAX_OBJECT	/* one watch event */
#define HTTP_MAX_ERRBODY	(64 * 1024)	/* non-200 body of a watch */

/* Complete lines go to line_fn; the partial tail stays in x->buf. */
static int
watch_lines(struct http_xfer *x)
{
	char	*nl, *p = x->buf;
	size_t	 left = x->len;

	while (left > 0 && (nl = memchr(p, '\n', left)) != NULL) {
		*nl = '\0';
		if (nl > p && json_guard(p, nl - p, "watch", NULL, x->guard,
		    sizeof(x->guard)) != 0)
			return (0);	/* http_watch()'s err says so */
		if (nl > p && x->line_fn(x->user, p, nl - p) != 0) {
			x->stopped = 1;
			return (0);
		}
		left -= nl + 1 - p;
		p = nl + 1;
	}
	memmove(x->buf, p, left);
	x->len = left;
	if (x->buf != NULL)
		x->buf[left] = '\0';
	return (1);
}

/*
 * The body callback of a watch: a 200 stream is cut into lines for
 * line_fn; any other status keeps a prefix of its body for the log.
 */
size_t
http_watch_body(struct http_xfer *x, char *p, size_t n)
{
	long	 code = 0;

	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
	x->max = code == 200 ? HTTP_MAX_LINE : HTTP_MAX_ERRBODY;
	if (!http_buf_add(x, p, n))
		return (code == 200 ? 0 : n);	/* keep a prefix */
	if (code == 200 && !watch_lines(x))
		return (0);
	return (n);
}

static int
on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
    curl_off_t un)
{
	struct http_xfer	*x = arg;

	if (x->stop != NULL && __atomic_load_n(x->stop, __ATOMIC_RELAXED)) {
		x->stopped = 1;
		return (1);
	}
	return (0);
}

/* A watch's own options, after the common ones (set_options() in http.c). */
void
http_watch_options(struct http_xfer *x)
{
	CURL	*h = x->h;

	/*
	 * No overall timeout. The server ends a watch within its
	 * timeoutSeconds (at most KP_WATCH_TIMEOUT_S): silence for
	 * longer means a dead connection. *stop is seen within 1 s.
	 */
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME,
	    (long)KP_WATCH_TIMEOUT_S + 30);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
}

/*
 * A watch: a streaming GET whose body lines go to fn. Returns 0 when the
 * server ended the stream cleanly, fn returned non-zero or *stop was set
 * (seen within about a second); 410 for an HTTP 410 Expired (the caller
 * re-lists); KP_EKUBE for another status other than 200, KP_EIO /
 * KP_ETIMEDOUT for transport failures, KP_ENOMEM. On an error err says
 * what happened ("HTTP 403: <body>", curl's message); the caller logs it
 * (once per fault, not once per retry), here it is only V(2).
 */
int
http_watch(struct http_client *c, const char *path, http_line_fn fn,
    void *user, volatile int *stop, char *err, size_t errsize)
{
	struct http_xfer	 x;
	int			 r;

	err[0] = '\0';
	http_xfer_init(&x, c, "GET", path);
	x.line_fn = fn;
	x.user = user;
	x.stop = stop;
	if ((x.h = http_handle_get(c)) == NULL)
		return (KP_ENOMEM);
	r = http_xfer_run(&x);
	if (r != 0)
		snprintf(err, errsize, "%s", x.errbuf);
	else if (!x.stopped && x.status != 200 && (stop == NULL ||
	    !__atomic_load_n(stop, __ATOMIC_RELAXED))) {
		snprintf(err, errsize, "HTTP %ld: %.200s", x.status,
		    x.buf != NULL ? x.buf : "");
		err[strcspn(err, "\r\n")] = '\0';
		r = x.status == 410 ? 410 : KP_EKUBE;
	} else if (!x.stopped && x.len > 0) {
		snprintf(err, errsize, "stream ended inside a line");
		r = KP_EIO;
	}
	if (r != 0)
		log_info(2, "watch %s: %s", path, err);
	http_xfer_reset(&x);
	http_handle_put(c, x.h, 0);
	return (r);
}
