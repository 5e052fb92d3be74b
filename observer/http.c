/*
 * http.c - the only user of libmicrohttpd: a daemon on the listening
 * socket the supervisor bound, driven by the observer's own loop (no
 * thread of its own: MHD_USE_EPOLL without an internal polling thread),
 * so the seccomp list has one event loop to cover. What a request gets is
 * render.c's obs_route(); nothing of the request is stored.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/log.h"
#include "observer/mhd_dl.h"
#include "observer/observer.h"

/* One open connection: when its current request began. */
struct obs_conn {
	struct obs_conn		*next, **prevp;
	struct MHD_Connection	*conn;
	int64_t			 since_ms;
	int			 cut;		/* shut down, MHD to close */
};

struct obs_http {
	struct MHD_Daemon	*d;
	struct obs_state	*st;
	int64_t			 now_ms;
	struct obs_conn		*conns;
};

static void
mhd_log(void *arg, const char *fmt, va_list ap)
{
	char	 line[256];

	/* libmicrohttpd's own format strings, as its logger is given them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	vsnprintf(line, sizeof(line), fmt, ap);
#pragma GCC diagnostic pop
	line[strcspn(line, "\n")] = '\0';
	log_info(2, "http: %s", line);
}

/* MHD_OPTION_NOTIFY_CONNECTION: track each connection for the deadline. */
static void
notify(void *cls, struct MHD_Connection *conn, void **sctx,
    enum MHD_ConnectionNotificationCode code)
{
	struct obs_http	*h = cls;
	struct obs_conn	*c = *sctx;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		/* Untracked on ENOMEM: the idle timeout still holds. */
		if ((c = calloc(1, sizeof(*c))) == NULL)
			return;
		c->conn = conn;
		c->since_ms = h->now_ms;
		if ((c->next = h->conns) != NULL)
			c->next->prevp = &c->next;
		c->prevp = &h->conns;
		h->conns = c;
		*sctx = c;
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && c != NULL) {
		if (c->next != NULL)
			c->next->prevp = c->prevp;
		*c->prevp = c->next;
		free(c);
		*sctx = NULL;
	}
}

/*
 * Close connections whose request is late: MHD has no absolute timeout
 * and no public close, so the socket is shut down and MHD, reading EOF,
 * closes it and says so through notify().
 */
static void
cut_late(struct obs_http *h)
{
	const union MHD_ConnectionInfo	*ci;
	struct obs_conn			*c;

	for (c = h->conns; c != NULL; c = c->next) {
		if (c->cut || h->now_ms - c->since_ms < OBS_REQUEST_DEADLINE_MS)
			continue;
		ci = MHD_get_connection_info(c->conn,
		    MHD_CONNECTION_INFO_CONNECTION_FD);
		if (ci == NULL)
			continue;
		(void)shutdown(ci->connect_fd, SHUT_RDWR);
		c->cut = 1;
		log_info(2, "http: closed a connection with no request "
		    "within %d ms", OBS_REQUEST_DEADLINE_MS);
	}
}

static enum MHD_Result
answer(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **ctx)
{
	struct obs_http		*h = cls;
	struct MHD_Response	*resp;
	const union MHD_ConnectionInfo	*ci;
	struct obs_conn		*c;
	struct obs_reply	 r;
	enum MHD_Result		 ret;

	/* Answered: a kept-alive connection's next request starts now. */
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci != NULL && (c = ci->socket_context) != NULL)
		c->since_ms = h->now_ms;
	/* A request body is never read: answer at the headers and let
	 * libmicrohttpd discard the rest (it closes the connection). */
	*upload_size = 0;
	obs_route(h->st, method, url, h->now_ms, &r);
	resp = MHD_create_response_from_buffer(r.len, (void *)r.body,
	    MHD_RESPMEM_MUST_COPY);
	if (resp == NULL)
		return (MHD_NO);
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    r.type);
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
	    "no-store");
	(void)MHD_add_response_header(resp, "X-Content-Type-Options",
	    "nosniff");
	ret = MHD_queue_response(conn, r.status, resp);
	MHD_destroy_response(resp);
	return (ret);
}

/*
 * Serve on lfd (listening, owned by the caller). *epfd: the fd the loop
 * polls for MHD_run(). 0, or KP_EIO with the reason in err.
 */
int
obs_http_start(int lfd, struct obs_state *st, struct obs_http **out,
    int *epfd, char *err, size_t errsize)
{
	const union MHD_DaemonInfo	*di;
	struct obs_http			*h;
	/* lfd -1: connections come from obs_http_add() only (the fuzzer);
	 * the listening socket, the last option, is then cut. */
	struct MHD_OptionItem		 opts[] = {
		{ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, NULL },
		{ MHD_OPTION_CONNECTION_LIMIT, OBS_MAX_CONNS, NULL },
		{ MHD_OPTION_PER_IP_CONNECTION_LIMIT, OBS_PER_IP_CONNS, NULL },
		{ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify, NULL },
		{ MHD_OPTION_CONNECTION_TIMEOUT, OBS_CONN_TIMEOUT_S, NULL },
		{ MHD_OPTION_CONNECTION_MEMORY_LIMIT, 16384, NULL },
		{ MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1, NULL },
		{ MHD_OPTION_LISTEN_SOCKET, lfd, NULL },
		{ MHD_OPTION_END, 0, NULL },
	};
	int				 code;

	/* The observer loaded it before its sandbox (a no-op then); the
	 * fuzzer loads it here. */
	if ((code = mhd_dl_load(err, errsize)) != 0)
		return (code);
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		snprintf(err, errsize, "out of memory");
		return (KP_ENOMEM);
	}
	h->st = st;
	opts[3].ptr_value = h;
	if (lfd == -1)
		opts[7].option = MHD_OPTION_END;
	h->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
	    MHD_USE_SUPPRESS_DATE_NO_CLOCK | (lfd == -1 ?
	    MHD_USE_NO_LISTEN_SOCKET : 0), 0, NULL, NULL, answer, h,
	    MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (h->d == NULL) {
		snprintf(err, errsize, "libmicrohttpd: cannot serve on the "
		    "listening socket");
		free(h);
		return (KP_EIO);
	}
	if ((di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD)) ==
	    NULL) {
		snprintf(err, errsize, "libmicrohttpd: no epoll fd");
		obs_http_stop(h);
		return (KP_EIO);
	}
	*epfd = di->epoll_fd;
	*out = h;
	return (0);
}

/* Serve the connected stream socket fd (taken) as if it was accepted. */
int
obs_http_add(struct obs_http *h, int fd)
{
	struct sockaddr_in	 sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return (MHD_add_connection(h->d, fd, (struct sockaddr *)&sin,
	    sizeof(sin)) == MHD_YES ? 0 : KP_EIO);
}

/* Milliseconds until libmicrohttpd wants MHD_run() anyway; -1: never. */
int
obs_http_timeout_ms(struct obs_http *h)
{
	MHD_UNSIGNED_LONG_LONG	 t;

	if (MHD_get_timeout(h->d, &t) != MHD_YES)
		t = h->conns != NULL ? 1000 : (MHD_UNSIGNED_LONG_LONG)-1;
	/* A tracked connection: wake for its deadline (cut_late()). */
	if (h->conns != NULL && t > 250)
		t = 250;
	if (t == (MHD_UNSIGNED_LONG_LONG)-1)
		return (-1);
	return (t > 1000 ? 1000 : (int)t);
}

void
obs_http_run(struct obs_http *h, int64_t now_ms)
{
	h->now_ms = now_ms;
	cut_late(h);
	(void)MHD_run(h->d);
}

/* Stop serving; closes this process's copy of the listening fd (the
 * supervisor keeps its own). */
void
obs_http_stop(struct obs_http *h)
{
	if (h == NULL)
		return;
	MHD_stop_daemon(h->d);
	/* MHD reports each close on stop; anything left was not started. */
	while (h->conns != NULL) {
		struct obs_conn	*c = h->conns;

		h->conns = c->next;
		free(c);
	}
	free(h);
}
