/*
 * fuzz_http.c - libFuzzer target for the observer's request path: the
 * input, up to a NUL, is the raw bytes an HTTP client sends; the rest, if
 * any, is a packed kpipc.Status taken as the supervisor's snapshot. The
 * request goes through libmicrohttpd (observer/http.c, a socketpair end
 * added as an accepted connection) to obs_route(), exactly as a TCP
 * client's would; the snapshot through obs_state_update().
 * Invariants checked (trap on a breach):
 *  - whatever the bytes, the observer answers with an HTTP/1.x status
 *    line or closes; it never answers 200 to a path other than /healthz,
 *    /livez, /readyz or /metrics, nor to a method other than GET or HEAD;
 *  - a rendered /metrics page is text lines, each a "# HELP ", "# TYPE "
 *    or a sample line starting with a metric name: no label value ever
 *    breaks a line;
 *  - /healthz is 200 only when the snapshot says live.
 * Run: ./tests/fuzz/fuzz_http -max_total_time=60 corpus/
 */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "observer/observer.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
silent(void *user, enum kp_log_level level, int verbosity, const char *role,
    const char *msg)
{
}

static void
check_page(const char *p, size_t len)
{
	const char	*l = p, *nl;

	if (strlen(p) != len)
		__builtin_trap();
	while (*l != '\0') {
		if ((nl = strchr(l, '\n')) == NULL)
			__builtin_trap();	/* every line ends */
		if (strncmp(l, "# HELP ", 7) != 0 &&
		    strncmp(l, "# TYPE ", 7) != 0 &&
		    !((*l >= 'a' && *l <= 'z') || (*l >= 'A' && *l <= 'Z') ||
		    *l == '_' || *l == ':'))
			__builtin_trap();
		l = nl + 1;
	}
}

/* The request line's path, if the bytes start with one. */
static int
allowed_200(const uint8_t *req, size_t n)
{
	static const char *const ok[] = { "GET /healthz ", "GET /livez ",
	    "GET /readyz ", "GET /metrics ", "HEAD /healthz ", "HEAD /livez ",
	    "HEAD /readyz ", "HEAD /metrics " };
	size_t	 i, k;

	/* libmicrohttpd skips empty lines before the request line. */
	for (k = 0; k < n && (req[k] == '\r' || req[k] == '\n'); k++)
		;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (n - k >= strlen(ok[i]) && memcmp(req + k, ok[i],
		    strlen(ok[i])) == 0)
			return (1);
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int		 inited;
	struct obs_state	 st;
	struct obs_http		*h;
	struct obs_reply	 r;
	Kpipc__Status		*snap = NULL;
	const uint8_t		*nul;
	char			 err[256], resp[4096];
	size_t			 reqlen, got = 0;
	ssize_t			 n;
	int			 sv[2], epfd, i;

	if (!inited) {
		/* FUZZ_VERBOSE=1: the log and each response on stderr */
		log_init(getenv("FUZZ_VERBOSE") ? 9 : 100,
		    getenv("FUZZ_VERBOSE") ? NULL : silent, NULL);
		inited = 1;
	}
	memset(&st, 0, sizeof(st));
	nul = memchr(data, '\0', size);
	reqlen = nul != NULL ? (size_t)(nul - data) : size;
	/* A Status as ipc_next() takes it in the observer (walked). */
	if (nul != NULL && ipc_wire_check(&kpipc__status__descriptor,
	    nul + 1, size - reqlen - 1, err, sizeof(err)) == 0 &&
	    (snap = kpipc__status__unpack(NULL, size - reqlen - 1,
	    nul + 1)) != NULL) {
		if (obs_state_update(&st, snap, 0) == 0) {
			check_page(st.metrics, st.metrics_len);
			obs_route(&st, "GET", "/healthz", 0, &r);
			if (r.status == 200 && !snap->live)
				__builtin_trap();
			obs_route(&st, "GET", "/metrics", 0, &r);
			if (r.status != 200 || r.len != st.metrics_len)
				__builtin_trap();
		}
	}
	if (obs_http_start(-1, &st, &h, &epfd, err, sizeof(err)) != 0)
		__builtin_trap();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		__builtin_trap();
	(void)fcntl(sv[1], F_SETFL, O_NONBLOCK);
	if (obs_http_add(h, sv[0]) != 0)
		__builtin_trap();
	if (reqlen > 0 && write(sv[1], data, reqlen) != (ssize_t)reqlen)
		__builtin_trap();	/* fits the socket buffer */
	shutdown(sv[1], SHUT_WR);
	for (i = 0; i < 64; i++) {
		obs_http_run(h, 0);
		while (got < sizeof(resp) - 1 &&
		    (n = read(sv[1], resp + got, sizeof(resp) - 1 - got)) > 0)
			got += (size_t)n;
		if (n == 0)
			break;		/* closed by the observer */
	}
	resp[got] = '\0';
	if (getenv("FUZZ_VERBOSE") != NULL)
		fprintf(stderr, "response: %s\n", resp);
	if (got > 0 && strncmp(resp, "HTTP/1.", 7) != 0)
		__builtin_trap();
	if (got >= 12 && strncmp(resp + 9, "200", 3) == 0 &&
	    !allowed_200(data, reqlen))
		__builtin_trap();
	close(sv[1]);
	obs_http_stop(h);
	obs_state_free(&st);
	kpipc__status__free_unpacked(snap, NULL);
	return (0);
}
