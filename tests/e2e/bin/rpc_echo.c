/*
 * rpc_echo - a small gRPC server on rpc/rpc.h for tests/e2e/rpc.test.js.
 *
 * rpc_echo --socket PATH [--workers N] [--allow-uid U]... [--verbosity N]
 *     [--v N] [--interceptors]
 *
 * It creates and listens on PATH itself (the supervisor's job in the
 * product), prints READY on stdout, and serves until SIGTERM or SIGINT,
 * then exits 0. Methods of /test.Echo/: Echo (the request back), Slow
 * (sleeps the ms given as ASCII decimal, watching for cancellation), Fail
 * (INTERNAL "boom"), Later (answers from another thread after the ms given,
 * once the handler returned), Stream (N messages for request "N"), Denied
 * (OK unless the interceptors reject it) and Stats (JSON counters about
 * Slow). With
 * --interceptors, two unary interceptors and one stream interceptor write
 * "TRACE <id> <what>" lines on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "rpc/rpc.h"

#define MAX_UIDS	16

static atomic_int	 slow_running, slow_max, slow_cancelled, slow_done;

struct serve {
	struct rpc_server	*srv;
	int			 stop_fd;
	int			 result;
	pthread_t		 main;
};

/* A request as a number; -1 if it is not a small decimal. */
static long
req_number(const uint8_t *req, size_t len)
{
	char	 buf[32], *end;
	long	 n;

	if (len == 0 || len >= sizeof(buf))
		return (-1);
	memcpy(buf, req, len);
	buf[len] = '\0';
	errno = 0;
	n = strtol(buf, &end, 10);
	if (errno != 0 || *end != '\0' || n < 0 || n > 600000)
		return (-1);
	return (n);
}

static void
echo(void *user, struct rpc_call *call, const uint8_t *req, size_t len)
{
	rpc_call_reply(call, RPC_OK, NULL, req, len);
}

/* Proves in the trace whether a handler ran. */
static void
denied(void *user, struct rpc_call *call, const uint8_t *req, size_t len)
{
	fprintf(stderr, "HANDLER %s\n", rpc_call_method(call));
	rpc_call_reply(call, RPC_OK, NULL, req, len);
}

static void
note_running(int delta)
{
	int	 now, max;

	now = atomic_fetch_add(&slow_running, delta) + delta;
	max = atomic_load(&slow_max);
	while (now > max && !atomic_compare_exchange_weak(&slow_max, &max,
	    now))
		;
}

static void
slow(void *user, struct rpc_call *call, const uint8_t *req, size_t len)
{
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	char		 out[64];
	long		 ms, waited;

	if ((ms = req_number(req, len)) < 0) {
		rpc_call_reply(call, RPC_INVALID_ARGUMENT, "not a number",
		    NULL, 0);
		return;
	}
	note_running(1);
	for (waited = 0; waited < ms; waited += 10) {
		if (rpc_call_cancelled(call)) {
			atomic_fetch_add(&slow_cancelled, 1);
			note_running(-1);
			fprintf(stderr, "SLOW cancelled after %ld ms\n",
			    waited);
			rpc_call_reply(call, RPC_CANCELLED, "cancelled",
			    NULL, 0);
			return;
		}
		nanosleep(&ts, NULL);
	}
	note_running(-1);
	atomic_fetch_add(&slow_done, 1);
	snprintf(out, sizeof(out), "slept %ld", ms);
	rpc_call_reply(call, RPC_OK, NULL, (const uint8_t *)out, strlen(out));
}

struct later {
	struct rpc_call	*call;
	long		 ms;
};

/* Answers from another thread after the handler returned. */
static void *
later_main(void *arg)
{
	struct later	*l = arg;
	struct timespec	 ts;
	char		 out[64];

	ts.tv_sec = l->ms / 1000;
	ts.tv_nsec = (l->ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
	snprintf(out, sizeof(out), "later %ld", l->ms);
	fprintf(stderr, "LATER replying\n");
	rpc_call_reply(l->call, RPC_OK, NULL, (const uint8_t *)out,
	    strlen(out));
	free(l);
	return (NULL);
}

static void
later(void *user, struct rpc_call *call, const uint8_t *req, size_t len)
{
	struct later	*l;
	pthread_attr_t	 attr;
	pthread_t	 th;
	int		 rc;

	if ((l = malloc(sizeof(*l))) == NULL) {
		rpc_call_reply(call, RPC_RESOURCE_EXHAUSTED, "malloc", NULL, 0);
		return;
	}
	l->call = call;
	if ((l->ms = req_number(req, len)) < 0)
		l->ms = 0;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&th, &attr, later_main, l);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		free(l);
		rpc_call_reply(call, RPC_INTERNAL, "pthread_create", NULL, 0);
	}
}

static void
fail(void *user, struct rpc_call *call, const uint8_t *req, size_t len)
{
	rpc_call_reply(call, RPC_INTERNAL, "boom", NULL, 0);
}

static void
stats(void *user, struct rpc_call *call, const uint8_t *req, size_t len)
{
	char	 out[160];

	snprintf(out, sizeof(out), "{\"running\":%d,\"maxConcurrent\":%d,"
	    "\"cancelled\":%d,\"done\":%d}", atomic_load(&slow_running),
	    atomic_load(&slow_max), atomic_load(&slow_cancelled),
	    atomic_load(&slow_done));
	rpc_call_reply(call, RPC_OK, NULL, (const uint8_t *)out, strlen(out));
}

static void
stream(void *user, struct rpc_call *call, const uint8_t *req, size_t len)
{
	char	 msg[32];
	long	 i, n;

	if ((n = req_number(req, len)) < 0) {
		rpc_call_finish(call, RPC_INVALID_ARGUMENT, "not a number");
		return;
	}
	for (i = 0; i < n; i++) {
		snprintf(msg, sizeof(msg), "msg %ld", i);
		if (rpc_call_send(call, (const uint8_t *)msg,
		    strlen(msg)) != 0) {
			rpc_call_finish(call, RPC_CANCELLED, "client gone");
			return;
		}
	}
	rpc_call_finish(call, RPC_OK, NULL);
}

static void
format_text(const uint8_t *msg, size_t len, char *out, size_t size)
{
	size_t	 i;

	for (i = 0; i < len && i + 1 < size; i++)
		out[i] = msg[i] >= 0x20 && msg[i] < 0x7f && msg[i] != '"' ?
		    (char)msg[i] : '.';
	out[i] = '\0';
}

static const char *const phases[] = { "before", "after", "send" };

static int
trace(void *user, enum kp_call_phase phase, const struct kp_call *c,
    char *msg, size_t size)
{
	const char	*name = user;

	fprintf(stderr, "TRACE %llu %s %s %s status=%d\n",
	    (unsigned long long)c->request_id, name, phases[phase], c->method,
	    c->status);
	if (phase == KP_CALL_BEFORE && strcmp(name, "B") == 0 &&
	    strcmp(c->method, "/test.Echo/Denied") == 0) {
		snprintf(msg, size, "denied by interceptor B");
		return (RPC_PERMISSION_DENIED);
	}
	return (0);
}

static const struct rpc_method methods[] = {
	{ "/test.Echo/Echo", 0, 0, echo, NULL, format_text, format_text },
	{ "/test.Echo/Slow", 0, 0, slow, NULL, format_text, format_text },
	{ "/test.Echo/Fail", 0, 0, fail, NULL, NULL, NULL },
	{ "/test.Echo/Later", 0, 0, later, NULL, format_text, format_text },
	{ "/test.Echo/Denied", 0, 0, denied, NULL, NULL, NULL },
	{ "/test.Echo/Stats", 0, 1, stats, NULL, NULL, format_text },
	{ "/test.Echo/Stream", 1, 0, stream, NULL, format_text, format_text },
};

static const struct interceptor unary[] = {
	{ trace, "A" },
	{ trace, "B" },
};

static const struct interceptor streamic[] = {
	{ trace, "S" },
};

static int
listen_on(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "rpc_echo: socket path too long\n");
		return (-1);
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	(void)unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    chmod(path, 0666) == -1 || listen(fd, 64) == -1) {
		perror("rpc_echo: socket");
		if (fd != -1)
			close(fd);
		return (-1);
	}
	return (fd);
}

static int
number(const char *s, long min, long max, long *out)
{
	char	*end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return (errno == 0 && *end == '\0' && end != s && *out >= min &&
	    *out <= max ? 0 : -1);
}

static int
parse(int argc, char **argv, struct rpc_config *cfg, uid_t *uids,
    const char **path, int *logv)
{
	long	 n;
	int	 i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--interceptors") == 0) {
			cfg->unary = unary;
			cfg->n_unary = 2;
			cfg->stream = streamic;
			cfg->n_stream = 1;
			continue;
		}
		if (i + 1 >= argc)
			return (-1);
		if (strcmp(argv[i], "--socket") == 0)
			*path = argv[++i];
		else if (strcmp(argv[i], "--workers") == 0 &&
		    number(argv[++i], 1, 64, &n) == 0)
			cfg->workers = (int)n;
		else if (strcmp(argv[i], "--allow-uid") == 0 &&
		    cfg->n_allowed_uids < MAX_UIDS &&
		    number(argv[++i], 0, UINT_MAX - 1, &n) == 0)
			uids[cfg->n_allowed_uids++] = (uid_t)n;
		else if (strcmp(argv[i], "--verbosity") == 0 &&
		    number(argv[++i], -1, 100, &n) == 0)
			cfg->verbosity = (int)n;
		else if (strcmp(argv[i], "--max-connections") == 0 &&
		    number(argv[++i], 0, INT_MAX, &n) == 0)
			cfg->max_conns = (int)n;
		else if (strcmp(argv[i], "--handshake-ms") == 0 &&
		    number(argv[++i], 0, INT_MAX, &n) == 0)
			cfg->handshake_ms = (int)n;
		else if (strcmp(argv[i], "--keepalive-ms") == 0 &&
		    number(argv[++i], 0, INT_MAX, &n) == 0)
			cfg->keepalive_ms = (int)n;
		else if (strcmp(argv[i], "--v") == 0 &&
		    number(argv[++i], 0, 100, &n) == 0)
			*logv = (int)n;
		else
			return (-1);
	}
	return (*path == NULL ? -1 : 0);
}

static void *
serve_main(void *arg)
{
	struct serve	*s = arg;

	s->result = rpc_server_run(s->srv, NULL, s->stop_fd);
	/* Serving ended on its own: wake sigwait() in main. */
	pthread_kill(s->main, SIGUSR1);
	return (NULL);
}

/* Serve on a thread; the main thread only waits for a signal. */
static int
serve(struct rpc_server *srv)
{
	struct serve	 s;
	pthread_t	 th;
	sigset_t	 set;
	int		 stop[2], sig;

	if (pipe2(stop, O_CLOEXEC) == -1)
		return (1);
	s.srv = srv;
	s.stop_fd = stop[0];
	s.result = 0;
	s.main = pthread_self();
	if (pthread_create(&th, NULL, serve_main, &s) != 0)
		return (1);
	printf("READY\n");
	fflush(stdout);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	while (sigwait(&set, &sig) != 0)
		;
	(void)!write(stop[1], "x", 1);
	pthread_join(th, NULL);
	close(stop[0]);
	close(stop[1]);
	fprintf(stderr, "rpc_echo: stopped by signal %d, result %d\n", sig,
	    s.result);
	return (s.result == 0 ? 0 : 1);
}

int
main(int argc, char **argv)
{
	struct rpc_config	 cfg;
	struct rpc_server	*srv;
	const char		*path = NULL;
	uid_t			 uids[MAX_UIDS];
	sigset_t		 all;
	int			 fd, logv = 0, rv;

	memset(&cfg, 0, sizeof(cfg));
	cfg.name = "rpc_echo";
	cfg.workers = 1;
	cfg.verbosity = 4;
	cfg.methods = methods;
	cfg.n_methods = sizeof(methods) / sizeof(methods[0]);
	cfg.allowed_uids = uids;
	if (parse(argc, argv, &cfg, uids, &path, &logv) != 0) {
		fprintf(stderr, "usage: rpc_echo --socket PATH [--workers N]"
		    " [--allow-uid U]... [--verbosity N] [--v N]"
		    " [--interceptors] [--max-connections N]"
		    " [--handshake-ms MS] [--keepalive-ms MS]\n");
		return (2);
	}
	if (cfg.n_allowed_uids == 0)
		uids[cfg.n_allowed_uids++] = getuid();
	log_init(logv, NULL, NULL);
	log_procinit("rpc_echo");
	/* Before rpc_server_new: gRPC's threads inherit the mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if ((fd = listen_on(path)) == -1)
		return (1);
	cfg.listen_fd = fd;
	if ((rv = rpc_server_new(&cfg, &srv)) != 0) {
		fprintf(stderr, "rpc_echo: rpc_server_new: %d\n", rv);
		return (1);
	}
	rv = serve(srv);
	rpc_server_free(srv);
	close(fd);
	(void)unlink(path);
	return (rv);
}
