/*
 * kp_httpcheck - drives publisher/http.c, kubeconfig.c and discovery.c for
 * tests/e2e/http.test.js, against tests/apiserver-emu.
 *
 *   kp_httpcheck --kubeconfig F [--context C] [--qps Q] [--burst B] [-v N]
 *       [--timeout MS] COMMAND... (run in order)
 *
 * Commands and their output lines (stdout, flushed per line):
 *   get PATH                  "status N", then "body <text>"; or "error <msg>"
 *   request METHOD PATH BODY  the same (BODY "-" for none)
 *   burst N PATH              N GETs from 4 threads: "burst ok=K err=E"
 *   watch PATH SECONDS        "line <text>" per line; "watch-end rc=R"
 *   discover                  "version v1" or "error <msg>"
 *   escape TEXT               "escaped <http_escape(TEXT)>"
 *   claim NS NAME UID DRIVER  claims_get() in v1 (the publisher's claim
 *                             look-up): "claim code=<KP_E name or 0>
 *                             msg=<message> results=<request:pool/device,...>
 *                             config=<json>"
 *   wait                      prints "waiting", reads one line of stdin
 * Exit: 0 when every command ran (whatever the HTTP statuses), 1 on a
 * load error or a transport error, 2 on usage errors.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "publisher/publisher.h"

#define BURST_THREADS	4

static struct http_client	*client;

struct burst {
	pthread_mutex_t	 lock;
	int		 left, ok, err;
	const char	*path;
};

static void
usage(void)
{
	fprintf(stderr, "usage: kp_httpcheck --kubeconfig F [--context C] "
	    "[--qps Q] [--burst B] [-v N] [--timeout MS] command...\n");
	exit(2);
}

static int
cmd_request(const char *method, const char *path, const char *body)
{
	struct http_response	 resp;
	int			 r;

	r = http_request(client, method, path, body, HTTP_MAX_LIST, &resp);
	if (r != 0)
		printf("error %s\n", resp.error);
	else
		printf("status %ld\nbody %s\n", resp.status, resp.body);
	http_response_free(&resp);
	return (r == 0 ? 0 : 1);
}

static void *
burst_thread(void *arg)
{
	struct burst		*b = arg;
	struct http_response	 resp;
	int			 r;

	for (;;) {
		pthread_mutex_lock(&b->lock);
		if (b->left == 0) {
			pthread_mutex_unlock(&b->lock);
			return (NULL);
		}
		b->left--;
		pthread_mutex_unlock(&b->lock);
		r = http_request(client, "GET", b->path, NULL, HTTP_MAX_LIST,
		    &resp);
		pthread_mutex_lock(&b->lock);
		if (r == 0 && resp.status == 200)
			b->ok++;
		else
			b->err++;
		pthread_mutex_unlock(&b->lock);
		http_response_free(&resp);
	}
}

static int
cmd_burst(int n, const char *path)
{
	struct burst	 b;
	pthread_t	 t[BURST_THREADS];
	int		 i;

	memset(&b, 0, sizeof(b));
	pthread_mutex_init(&b.lock, NULL);
	b.left = n;
	b.path = path;
	for (i = 0; i < BURST_THREADS; i++)
		pthread_create(&t[i], NULL, burst_thread, &b);
	for (i = 0; i < BURST_THREADS; i++)
		pthread_join(t[i], NULL);
	printf("burst ok=%d err=%d\n", b.ok, b.err);
	pthread_mutex_destroy(&b.lock);
	return (b.err == 0 ? 0 : 1);
}

struct watch {
	const char	*path;
	volatile int	 stop;
	volatile int	 done;
	int		 rc;
};

static int
watch_line(void *user, const char *line, size_t len)
{
	printf("line %.*s\n", (int)len, line);
	return (0);
}

static void *
watch_thread(void *arg)
{
	struct watch	*w = arg;
	char		 err[KP_ERROR_SIZE];

	w->rc = http_watch(client, w->path, watch_line, w, &w->stop, err,
	    sizeof(err));
	if (w->rc != 0)
		fprintf(stderr, "watch %s: %s\n", w->path, err);
	w->done = 1;
	return (NULL);
}

/* Watch for at most seconds; then *stop ends it. */
static int
cmd_watch(const char *path, double seconds)
{
	struct watch	 w;
	struct timespec	 start, now, tick = { 0, 20 * 1000 * 1000 };
	pthread_t	 t;

	memset(&w, 0, sizeof(w));
	w.path = path;
	clock_gettime(CLOCK_MONOTONIC, &start);
	pthread_create(&t, NULL, watch_thread, &w);
	while (!w.done) {
		nanosleep(&tick, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!w.stop && (double)(now.tv_sec - start.tv_sec) +
		    (double)(now.tv_nsec - start.tv_nsec) / 1e9 > seconds) {
			printf("stopping\n");
			w.stop = 1;
		}
	}
	pthread_join(t, NULL);
	printf("watch-end rc=%d\n", w.rc);
	return (0);
}

static int
cmd_discover(void)
{
	enum kube_version	 v;
	char			 err[KP_ERROR_SIZE];

	if (disc_resource_version(client, &v, err, sizeof(err)) != 0) {
		printf("error %s\n", err);
		return (1);
	}
	printf("version %s\n", disc_version_name(v));
	return (0);
}

static int
cmd_escape(const char *s)
{
	char	*e;

	if ((e = http_escape(s)) == NULL)
		return (1);
	printf("escaped %s\n", e);
	free(e);
	return (0);
}

static int
cmd_claim(const char *ns, const char *name, const char *uid,
    const char *driver)
{
	Kpipc__ClaimGet		 g = KPIPC__CLAIM_GET__INIT;
	Kpipc__ClaimReply	 r = KPIPC__CLAIM_REPLY__INIT;
	size_t			 i;
	int			 rc;

	g.id = 1;
	g.namespace_ = (char *)ns;
	g.name = (char *)name;
	g.uid = (char *)uid;
	rc = claims_get(client, KUBE_V1, driver, &g, KP_CLAIM_BUDGET_S, NULL,
	    &r);
	printf("claim code=%s msg=%s results=", rc == 0 ? "0" :
	    kp_err_name(rc), r.result != NULL ? r.result->message : "");
	for (i = 0; i < r.n_results; i++)
		printf("%s%s:%s/%s", i ? "," : "", r.results[i]->request,
		    r.results[i]->pool, r.results[i]->device);
	printf(" config=%s\n", r.config_json);
	claims_reply_free(&r);
	return (0);
}

/* Run the commands from argv[i]; returns the exit status. */
static int
run(int argc, char **argv, int i)
{
	char	 buf[64];
	int	 rc = 0;

	for (; i < argc; i++) {
		if (strcmp(argv[i], "get") == 0 && i + 1 < argc) {
			rc |= cmd_request("GET", argv[i + 1], NULL);
			i += 1;
		} else if (strcmp(argv[i], "request") == 0 && i + 3 < argc) {
			rc |= cmd_request(argv[i + 1], argv[i + 2],
			    strcmp(argv[i + 3], "-") == 0 ? NULL : argv[i + 3]);
			i += 3;
		} else if (strcmp(argv[i], "burst") == 0 && i + 2 < argc) {
			rc |= cmd_burst((int)strtol(argv[i + 1], NULL, 10),
			    argv[i + 2]);
			i += 2;
		} else if (strcmp(argv[i], "watch") == 0 && i + 2 < argc) {
			rc |= cmd_watch(argv[i + 1], strtod(argv[i + 2], NULL));
			i += 2;
		} else if (strcmp(argv[i], "escape") == 0 && i + 1 < argc) {
			rc |= cmd_escape(argv[i + 1]);
			i += 1;
		} else if (strcmp(argv[i], "claim") == 0 && i + 4 < argc) {
			rc |= cmd_claim(argv[i + 1], argv[i + 2], argv[i + 3],
			    argv[i + 4]);
			i += 4;
		} else if (strcmp(argv[i], "discover") == 0)
			rc |= cmd_discover();
		else if (strcmp(argv[i], "wait") == 0) {
			printf("waiting\n");
			if (fgets(buf, sizeof(buf), stdin) == NULL)
				return (1);
		} else
			usage();
	}
	return (rc);
}

int
main(int argc, char **argv)
{
	struct kube_config	 cfg;
	const char		*kubeconfig = NULL, *context = NULL;
	char			 err[KP_ERROR_SIZE];
	double			 qps = 0;
	int			 burst = 0, v = 0, timeout_ms = 0, i, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc && argv[i][0] == '-'; i += 2) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--kubeconfig") == 0)
			kubeconfig = argv[i + 1];
		else if (strcmp(argv[i], "--context") == 0)
			context = argv[i + 1];
		else if (strcmp(argv[i], "--qps") == 0)
			qps = strtod(argv[i + 1], NULL);
		else if (strcmp(argv[i], "--burst") == 0)
			burst = (int)strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--timeout") == 0)
			timeout_ms = (int)strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "-v") == 0)
			v = (int)strtol(argv[i + 1], NULL, 10);
		else
			usage();
	}
	if (kubeconfig == NULL)
		usage();
	log_init(v, NULL, NULL);
	if (kcfg_kubeconfig(&cfg, kubeconfig, context, err,
	    sizeof(err)) != 0) {
		printf("load-error %s\n", err);
		return (1);
	}
	if (http_global_init() != 0 ||
	    http_client_new(&cfg, qps, burst, &client) != 0) {
		printf("load-error http client\n");
		kcfg_free(&cfg);
		return (1);
	}
	http_client_timeout(client, timeout_ms);
	rc = run(argc, argv, i);
	http_client_free(client);
	http_global_cleanup();
	kcfg_free(&cfg);
	return (rc);
}
