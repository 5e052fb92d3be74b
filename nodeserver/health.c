/*
 * health.c - the resource health service of the nodeserver (KEP-4680):
 * /v1.DRAResourceHealth/NodeWatchResources and its v1alpha1 twin (the
 * messages are identical on the wire, so one codec, v1alpha1's, serves
 * both), as the Go helper v0.37 bridges WatchHealthStatus to them.
 *
 * One table holds the latest state of every device, merged from the
 * driver process's reports (HealthReport frames from the supervisor) and
 * from hooks (kp_hook_health_report). Every change bumps the table's
 * generation. One thread, the pump, sends each stream the complete table
 * whenever the stream is behind and has no message in flight
 * (rpc_call_send_async): a slow or stuck reader keeps one message in
 * flight and then gets only the newest table, so it holds up no other
 * stream, no worker and no prepare call, and costs one buffer. The
 * handler only registers its call and returns its worker.
 *
 * With kp_health_service(0) the methods are still served (kubelets
 * 1.34-1.36 open the stream for every plugin; 1.36 logs an ERROR every
 * 5 s for UNIMPLEMENTED), but the streams stay idle until kubelet or the
 * server ends them.
 *
 * Runs in: the nodeserver, inside its sandbox.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "nodeserver/health.h"
#include "dra_health_v1alpha1.pb-c.h"

#define V1_PATH		"/v1.DRAResourceHealth/NodeWatchResources"
#define V1ALPHA1_PATH	"/v1alpha1.DRAResourceHealth/NodeWatchResources"

/* kp_hook_health_report()'s way in: one nodeserver per process. */
static struct ns_health	*ns_health_self;

static long long
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

int
ns_health_init(struct ns_health *h, const struct kp_options *cfg)
{
	memset(h, 0, sizeof(*h));
	h->cfg = cfg;
	h->gen = 1;	/* a new stream (sent_gen 0) gets the list at once */
	if (pthread_mutex_init(&h->lock, NULL) != 0)
		return (KP_ENOMEM);
	if (pthread_cond_init(&h->cond, NULL) != 0) {
		pthread_mutex_destroy(&h->lock);
		return (KP_ENOMEM);
	}
	ns_health_self = h;
	return (0);
}

/* The complete table as one NodeWatchResourcesResponse; lock held. */
static int
encode(struct ns_health *h, uint8_t **out, size_t *len)
{
	V1alpha1__NodeWatchResourcesResponse	 resp =
	    V1ALPHA1__NODE_WATCH_RESOURCES_RESPONSE__INIT;
	V1alpha1__DeviceHealth			*dh, **dp;
	V1alpha1__DeviceIdentifier		*id;
	size_t					 i, n = h->table.n;

	dh = calloc(n + 1, sizeof(*dh));
	dp = calloc(n + 1, sizeof(*dp));
	id = calloc(n + 1, sizeof(*id));
	if (dh == NULL || dp == NULL || id == NULL) {
		free(dh);
		free(dp);
		free(id);
		return (KP_ENOMEM);
	}
	for (i = 0; i < n; i++) {
		v1alpha1__device_identifier__init(&id[i]);
		id[i].pool_name = h->table.e[i].pool;
		id[i].device_name = h->table.e[i].device;
		v1alpha1__device_health__init(&dh[i]);
		dh[i].device = &id[i];
		dh[i].health = (V1alpha1__HealthStatus)h->table.e[i].status;
		dh[i].last_updated_time = h->table.e[i].last_updated;
		dh[i].health_check_timeout_seconds = h->table.e[i].timeout_s;
		dh[i].message = h->table.e[i].message;
		dp[i] = &dh[i];
	}
	resp.n_devices = n;
	resp.devices = dp;
	*len = v1alpha1__node_watch_resources_response__get_packed_size(&resp);
	if ((*out = malloc(*len > 0 ? *len : 1)) != NULL)
		v1alpha1__node_watch_resources_response__pack(&resp, *out);
	free(dh);
	free(dp);
	free(id);
	return (*out != NULL ? 0 : KP_ENOMEM);
}

/* A send completed, on the completion-queue thread: never blocks long. */
static void
sent(void *arg, int ok)
{
	struct ns_health_stream	*s = arg;
	struct ns_health	*h = s->h;

	pthread_mutex_lock(&h->lock);
	s->busy = 0;
	if (!ok)
		s->failed = 1;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

/* A stream's client end closed, on the completion-queue thread: the
 * pump reaps it. */
static void
closed(void *arg)
{
	struct ns_health	*h = arg;

	pthread_mutex_lock(&h->lock);
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

/*
 * Send s the current table if it is behind; lock held on entry and exit,
 * dropped around the send (interceptors run driver code, which may report
 * health itself).
 */
static void
pump_one(struct ns_health *h, struct ns_health_stream *s)
{
	uint8_t	*buf = NULL;
	size_t	 len = 0;
	int	 rv;

	if (s->idle || s->busy || s->failed || s->sent_gen == h->gen)
		return;
	if (encode(h, &buf, &len) != 0) {
		s->sent_gen = h->gen;	/* retried at the next change */
		log_warnx("health: out of memory, stream update dropped");
		return;
	}
	s->busy = 1;
	s->sent_gen = h->gen;
	pthread_mutex_unlock(&h->lock);
	rv = rpc_call_send_async(s->call, buf, len, sent, s);
	free(buf);
	pthread_mutex_lock(&h->lock);
	if (rv != 0) {
		s->busy = 0;
		s->failed = 1;
	}
}

/* Streams that ended (client gone, server stopping) get their status. */
static void
reap(struct ns_health *h)
{
	struct ns_health_stream	**sp, *s;

	for (sp = &h->streams; (s = *sp) != NULL; ) {
		if (s->busy || (!s->failed && !rpc_call_cancelled(s->call))) {
			sp = &s->next;
			continue;
		}
		*sp = s->next;
		h->n_streams--;
		pthread_mutex_unlock(&h->lock);
		/* Nobody reads this status: the client is gone or the
		 * server stops; OK keeps kubelet-side cancels out of the
		 * error log. */
		(void)rpc_call_finish(s->call, RPC_OK, NULL);
		free(s);
		pthread_mutex_lock(&h->lock);
		sp = &h->streams;
	}
}

/*
 * Upstream (kubeletplugin/health.go): every 10 s, when no report came for
 * longer than the smallest per-device timeout (30 s if none), HandleError
 * with ErrRecoverable, once; the driver must resend. Only while kubelet
 * watches a non-idle stream.
 */
static void
stale_check(struct ns_health *h, long long now)
{
	struct ns_health_stream	*s;
	long long		 since, limit;
	char			 msg[KP_ERROR_SIZE];
	int			 watched = 0;

	if (now < h->next_check_ms)
		return;
	h->next_check_ms = now + NS_HEALTH_CHECK_MS;
	for (s = h->streams; s != NULL; s = s->next)
		if (!s->idle)
			watched = 1;
	if (!watched || h->warned)
		return;
	since = h->last_report_ms > h->watch_since_ms ? h->last_report_ms :
	    h->watch_since_ms;
	limit = (long long)health_table_min_timeout(&h->table) * 1000;
	if (now - since <= limit)
		return;
	h->warned = 1;
	snprintf(msg, sizeof(msg), "device health reports are stale: none "
	    "for %lld s, more than the smallest health check timeout (%lld "
	    "s); report again with kp_health_report", (now - since) / 1000,
	    limit / 1000);
	pthread_mutex_unlock(&h->lock);
	log_warnx("%s", msg);
	if (h->stale != NULL)
		h->stale(h->stale_user, msg);
	pthread_mutex_lock(&h->lock);
}

static void *
pump(void *arg)
{
	struct ns_health	*h = arg;
	struct ns_health_stream	*s;
	struct timespec		 ts;

	pthread_mutex_lock(&h->lock);
	while (!h->quit) {
		/* A send may drop the lock: restart after each one. */
		do {
			for (s = h->streams; s != NULL; s = s->next) {
				if (!s->idle && !s->busy && !s->failed &&
				    s->sent_gen != h->gen) {
					pump_one(h, s);
					break;
				}
			}
		} while (s != NULL && !h->quit);
		reap(h);
		stale_check(h, now_ms());
		/* No stream: nothing to look at until one comes (handle()
		 * signals) or the end; an idle nodeserver does not wake
		 * for it (issue 27). */
		if (h->streams == NULL) {
			if (!h->quit)
				pthread_cond_wait(&h->cond, &h->lock);
			continue;
		}
		/* A stream's end wakes us (closed()), so the timer is
		 * only for the stale check: not four wake-ups a second
		 * while kubelet watches (issue 27). */
		ts_deadline(&ts, CLOCK_REALTIME, NS_HEALTH_CHECK_MS);
		(void)pthread_cond_timedwait(&h->cond, &h->lock, &ts);
	}
	pthread_mutex_unlock(&h->lock);
	return (NULL);
}

/* After the sandbox, before serving. */
int
ns_health_start(struct ns_health *h)
{
	if (pthread_create(&h->thread, NULL, pump, h) != 0)
		return (KP_ENOMEM);
	h->started = 1;
	return (0);
}

/* After the server stopped (every call finished): the pump ends. */
void
ns_health_stop(struct ns_health *h)
{
	if (h->started) {
		pthread_mutex_lock(&h->lock);
		h->quit = 1;
		pthread_cond_broadcast(&h->cond);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->thread, NULL);
		h->started = 0;
	}
}

/* After ns_health_stop() and after the frame reader stopped. */
void
ns_health_free(struct ns_health *h)
{
	struct ns_health_stream	*s;

	ns_health_stop(h);
	while ((s = h->streams) != NULL) {
		h->streams = s->next;
		free(s);
	}
	if (ns_health_self == h)
		ns_health_self = NULL;
	health_table_free(&h->table);
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
}

/*
 * The handler of both versions: register the call and return the worker
 * at once; the pump sends and finishes.
 */
static void
handle(void *user, struct rpc_call *call, const uint8_t *req, size_t len)
{
	struct ns_health		*h = user;
	struct ns_health_stream		*s;
	V1alpha1__NodeWatchResourcesRequest *rq;
	char				 why[KP_ERROR_SIZE];

	/* Reserved for future use, but it must be a message. */
	if (ipc_wire_check(&v1alpha1__node_watch_resources_request__descriptor,
	    req, len, why, sizeof(why)) != 0 ||
	    (rq = v1alpha1__node_watch_resources_request__unpack(NULL, len,
	    req)) == NULL) {
		(void)rpc_call_finish(call, RPC_INVALID_ARGUMENT,
		    "NodeWatchResources: malformed request");
		return;
	}
	v1alpha1__node_watch_resources_request__free_unpacked(rq, NULL);
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		(void)rpc_call_finish(call, RPC_RESOURCE_EXHAUSTED,
		    "out of memory");
		return;
	}
	s->h = h;
	s->call = call;
	s->idle = h->cfg->health_off;
	/* Before it is listed: a close from now on wakes the pump, one
	 * before is seen by its next look (rpc_call_cancelled). */
	rpc_call_on_close(call, closed, h);
	pthread_mutex_lock(&h->lock);
	if (h->n_streams >= NS_HEALTH_MAX_STREAMS) {
		pthread_mutex_unlock(&h->lock);
		free(s);
		(void)rpc_call_finish(call, RPC_RESOURCE_EXHAUSTED,
		    "NodeWatchResources: too many streams");
		return;
	}
	if (!s->idle && h->watch_since_ms == 0)
		h->watch_since_ms = now_ms();
	s->next = h->streams;
	h->streams = s;
	h->n_streams++;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

/* A short rendering of a response for call logging. */
static void
format_response(const uint8_t *msg, size_t len, char *out, size_t size)
{
	V1alpha1__NodeWatchResourcesResponse	*r;
	size_t					 i, o;
	int					 k;

	if ((r = v1alpha1__node_watch_resources_response__unpack(NULL, len,
	    msg)) == NULL) {
		snprintf(out, size, "<malformed>");
		return;
	}
	k = snprintf(out, size, "devices:");
	o = k > 0 ? (size_t)k : 0;
	for (i = 0; i < r->n_devices && o < size; i++) {
		k = snprintf(out + o, size - o, " %s/%s=%d",
		    r->devices[i]->device != NULL ?
		    r->devices[i]->device->pool_name : "",
		    r->devices[i]->device != NULL ?
		    r->devices[i]->device->device_name : "",
		    (int)r->devices[i]->health);
		if (k < 0)
			break;
		o += (size_t)k;
	}
	v1alpha1__node_watch_resources_response__free_unpacked(r, NULL);
}

/*
 * The health methods: v1 then v1alpha1, each when enabled; both when the
 * service is off (idle streams). Returns the number stored (at most max).
 */
size_t
ns_health_methods(struct ns_health *h, struct rpc_method *out, size_t max)
{
	const char	*paths[2];
	size_t		 i, n = 0, np = 0;

	if (h->cfg->health_off || !h->cfg->health_v1_off)
		paths[np++] = V1_PATH;
	if (h->cfg->health_off || !h->cfg->health_v1alpha1_off)
		paths[np++] = V1ALPHA1_PATH;
	for (i = 0; i < np && n < max; i++, n++) {
		memset(&out[n], 0, sizeof(out[n]));
		out[n].path = paths[i];
		out[n].server_streaming = 1;
		out[n].handler = handle;
		out[n].user = h;
		out[n].format_response = format_response;
	}
	return (n);
}

/* Merge a checked report and wake the pump. */
static int
merge(struct ns_health *h, const struct kp_device_health *d, size_t n)
{
	int	 rv;

	pthread_mutex_lock(&h->lock);
	rv = health_table_merge(&h->table, d, n);
	h->gen++;
	h->last_report_ms = now_ms();
	h->warned = 0;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	return (rv);
}

int
ns_health_report(struct ns_health *h, const struct kp_device_health *d,
    size_t n, char *err, size_t errsize)
{
	int	 rv;

	if ((rv = health_check_all(d, n, err, errsize)) != 0)
		return (rv);
	if ((rv = merge(h, d, n)) != 0)
		snprintf(err, errsize, "devices: more than %d in all",
		    KP_HEALTH_MAX_DEVICES);
	return (rv);
}

/*
 * A HealthReport from the supervisor (the driver process's devices,
 * checked by ipc/check.c on the way in); takes ownership of m.
 */
void
ns_health_ipc(void *user, Kpipc__Msg *m)
{
	struct ns_health		*h = user;
	struct kp_device_health		*d;
	const Kpipc__DeviceHealth	*x;
	size_t				 i, n;

	if (m->m_case != KPIPC__MSG__M_HEALTH_REPORT) {
		ipc_free(m);
		return;
	}
	n = m->health_report->n_devices;
	if ((d = calloc(n + 1, sizeof(*d))) == NULL) {
		log_warnx("health: out of memory, driver report dropped");
		ipc_free(m);
		return;
	}
	for (i = 0; i < n; i++) {
		x = m->health_report->devices[i];
		d[i].struct_size = sizeof(d[i]);
		d[i].pool = x->pool;
		d[i].device = x->device;
		d[i].status = (enum kp_health_status)x->status;
		d[i].last_updated = x->last_updated;
		d[i].timeout_s = (int)x->timeout_seconds;
		d[i].message = x->message;
	}
	if (merge(h, d, n) != 0)
		log_warnx("health: more than %d devices, report cut",
		    KP_HEALTH_MAX_DEVICES);
	free(d);
	ipc_free(m);
}

int
kp_hook_health_report(const struct kp_device_health *devices, size_t n,
    char *errbuf, size_t errsize)
{
	char	 err[KP_ERROR_SIZE];
	int	 rv;

	err[0] = '\0';
	if (ns_health_self == NULL) {
		snprintf(err, sizeof(err), "kp_hook_health_report: only in the "
		    "nodeserver (hooks); use kp_health_report in the driver "
		    "process");
		rv = KP_ENOTSUP;
	} else if ((rv = ns_health_report(ns_health_self, devices, n, err,
	    sizeof(err))) != 0) {
		char	 tmp[KP_ERROR_SIZE];

		snprintf(tmp, sizeof(tmp), "kp_hook_health_report: %s", err);
		memcpy(err, tmp, sizeof(err));
	}
	if (rv != 0 && errbuf != NULL && errsize > 0)
		snprintf(errbuf, errsize, "%s", err);
	return (rv);
}
