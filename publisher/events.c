/*
 * events.c - Kubernetes Events (events.k8s.io/v1) on the Node, from the
 * only process with credentials. The supervisor asks for one of a fixed
 * list of kinds with a note it wrote (supervisor/events.c); the
 * ResourceSlice controller asks for EVENT_POOL_REJECTED itself. Like
 * client-go's recorder (tools/record EventCorrelator):
 *   - the same kind and note again is the same Event: its series.count
 *     grows (a PATCH), no new object;
 *   - more than EV_SIMILAR different notes of one kind within
 *     EV_SIMILAR_S become one Event "(combined from similar events): ...";
 *   - a token bucket per source and object, EV_BURST writes, one more
 *     every EV_REFILL_S, stops a storm from reaching the API server; what
 *     it holds back is still counted and written with the next token.
 *     The object is this plugin's Node; the source is the kind (client-go
 *     keys its filter by the Event's type too): the SyscallDenied Events
 *     a hostile nodeserver may ask for at will use up their own bucket,
 *     never the one of SocketRecreated, SocketLost or SandboxKilled
 *     (issue 24). For the same reason those kinds fill at most half the
 *     queue.
 * A thread of its own posts them: a slow API server never blocks the
 * supervisor's channel. Events are best effort: failures are logged only.
 *
 * Runs in: the publisher.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/log.h"
#include "ipc/child.h"
#include "ipc/ipc.h"
#include "publisher/pub.h"

#define EV_WARN_EVERY_S	60	/* a lasting fault: warned again */
#define EV_QUEUE	64	/* asked, not yet handled */
#define EV_CACHE	64	/* Events we may count again */
#define EV_BURST	25.0	/* client-go's spam filter: burst 25, */
#define EV_REFILL_S	300.0	/* then one every 5 minutes */
#define EV_SIMILAR	10	/* client-go's aggregator: 10 notes */
#define EV_SIMILAR_S	600	/* within 10 minutes */
#define EV_FLUSH_MS	5000	/* held-back counts: looked at again */
#define EV_NS		"default"	/* a cluster-scoped object's Events */
#define EV_COMBINED	"(combined from similar events): "
#define EV_KINDS	(KPIPC__EVENT_KIND__EVENT_SOCKET_LOST + 1)

struct ev_item {
	int	 kind;
	char	 note[KP_IPC_MAX_NOTE + 1];
};

struct ev_entry {
	int	 kind;			/* 0: free */
	int	 combined;		/* stands for every note of kind */
	char	 note[KP_IPC_MAX_NOTE + 1];
	char	 name[254];		/* "": not posted yet */
	char	 first[40];		/* eventTime, MicroTime */
	char	 last[40];
	int	 count;			/* observed */
	int	 written;		/* count the API server has */
	time_t	 seen;			/* LRU */
};

struct ev_kind_window {
	time_t	 start;
	int	 distinct;
};

struct pub_events {
	struct pub		*p;
	pthread_t		 thread;
	pthread_mutex_t		 lock;
	pthread_cond_t		 cond;
	int			 quit;
	struct ev_item		 queue[EV_QUEUE];
	size_t			 qhead, qlen;
	unsigned long long	 qdropped;
	/* the thread's own */
	struct ev_entry		 cache[EV_CACHE];
	struct ev_kind_window	 window[EV_KINDS];
	double			 tokens[EV_KINDS];	/* a bucket per kind */
	struct timespec		 refill[EV_KINDS];
	unsigned long long	 seq;
	/* Failed writes in a row: an API server that is down fails every
	 * Event too; one warning per fault, like the slices' (then V(2),
	 * a reminder every EV_WARN_EVERY_S). */
	int			 fail_streak;
	struct timespec		 fail_warned;
};

/* Reason, action and type of each kind: CamelCase reasons as upstream. */
static const struct {
	const char	*reason;
	const char	*action;
	const char	*type;
} kinds[] = {
	[KPIPC__EVENT_KIND__EVENT_REGISTRATION_REJECTED] = {
	    "RegistrationFailed", "Register", "Warning" },
	[KPIPC__EVENT_KIND__EVENT_CHILD_KILLED] = {
	    "SandboxKilled", "Sandbox", "Warning" },
	[KPIPC__EVENT_KIND__EVENT_SYSCALL_DENIED] = {
	    "SyscallDenied", "Sandbox", "Warning" },
	[KPIPC__EVENT_KIND__EVENT_POOL_REJECTED] = {
	    "ResourceSliceRejected", "PublishResources", "Warning" },
	[KPIPC__EVENT_KIND__EVENT_JOURNAL_CORRUPT] = {
	    "JournalCorrupt", "Recover", "Warning" },
	[KPIPC__EVENT_KIND__EVENT_SOCKET_RECREATED] = {
	    "SocketRecreated", "Repair", "Normal" },
	[KPIPC__EVENT_KIND__EVENT_SOCKET_LOST] = {
	    "SocketLost", "Repair", "Warning" },
};

#define N_KINDS	(sizeof(kinds) / sizeof(kinds[0]))

static void
micro_time(char *out, size_t size)
{
	struct timespec	 ts;
	struct tm	 tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
	    (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100,
	    tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100,
	    tm.tm_sec % 100, (int)(ts.tv_nsec / 1000) % 1000000);
}

/* A token of kind's bucket (full at its first use). */
static int
ev_token(struct pub_events *e, int kind)
{
	struct timespec	*r = &e->refill[kind];
	double		*t = &e->tokens[kind];

	if (r->tv_sec == 0 && r->tv_nsec == 0) {
		*t = EV_BURST;
		clock_gettime(CLOCK_MONOTONIC, r);
	}
	*t += -ts_ms_until(r) / 1000.0 / EV_REFILL_S;
	clock_gettime(CLOCK_MONOTONIC, r);
	if (*t > EV_BURST)
		*t = EV_BURST;
	if (*t < 1.0)
		return (0);
	*t -= 1.0;
	return (1);
}

/* Kinds a child may ask for at will (the nodeserver's EventAsk). */
static int
ev_asked(int kind)
{
	return (kind == KPIPC__EVENT_KIND__EVENT_SYSCALL_DENIED ||
	    kind == KPIPC__EVENT_KIND__EVENT_JOURNAL_CORRUPT);
}

/* The Event's JSON for a POST. */
static char *
ev_body(struct pub_events *e, const struct ev_entry *x)
{
	const struct kp_options	*cfg = e->p->env->cfg;
	json_t			*o, *reg;
	char			 instance[129];
	char			 controller[128];
	char			*s;

	snprintf(instance, sizeof(instance), "%s", cfg->node_name);
	snprintf(controller, sizeof(controller), "%s/kubeletplugin",
	    cfg->driver_name);
	reg = json_pack("{s:s, s:s, s:s}", "apiVersion", "v1", "kind", "Node",
	    "name", cfg->node_name);
	if (reg != NULL && cfg->node_uid != NULL && cfg->node_uid[0] != '\0')
		json_object_set_new(reg, "uid", json_string(cfg->node_uid));
	o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:s, "
	    "s:s, s:s, s:o}",
	    "apiVersion", "events.k8s.io/v1", "kind", "Event",
	    "metadata", "name", x->name, "namespace", EV_NS,
	    "eventTime", x->first,
	    "reportingController", controller,
	    "reportingInstance", instance,
	    "action", kinds[x->kind].action,
	    "reason", kinds[x->kind].reason,
	    "type", kinds[x->kind].type,
	    "note", x->note,
	    "regarding", reg);
	if (o == NULL)
		return (NULL);
	if (x->count >= 2)
		json_object_set_new(o, "series", json_pack("{s:i, s:s}",
		    "count", x->count, "lastObservedTime", x->last));
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return (s);
}

/* POST x as a new Event, or PATCH its series. 0 when written. */
static int
ev_write(struct pub_events *e, struct ev_entry *x)
{
	const struct kp_options	*cfg = e->p->env->cfg;
	struct http_response	 resp;
	char			 path[512], node[231];
	char			*body;
	json_t			*patch_o;
	int			 patch = x->name[0] != '\0', r;

	if (!patch) {
		/* A DNS subdomain: the node's name and a unique suffix. */
		snprintf(node, sizeof(node), "%s", cfg->node_name);
		snprintf(x->name, sizeof(x->name), "%s.%08llx%04llx", node,
		    (unsigned long long)time(NULL) & 0xffffffffULL,
		    ++e->seq & 0xffffULL);
		snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/"
		    "namespaces/" EV_NS "/events");
		body = ev_body(e, x);
	} else {
		snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/"
		    "namespaces/" EV_NS "/events/%s", x->name);
		patch_o = json_pack("{s:{s:i, s:s}}", "series", "count",
		    x->count, "lastObservedTime", x->last);
		body = patch_o != NULL ? json_dumps(patch_o, JSON_COMPACT) :
		    NULL;
		json_decref(patch_o);
	}
	if (body == NULL)
		return (KP_ENOMEM);
	r = http_request(e->p->http, patch ? "PATCH" : "POST", path, body,
	    HTTP_MAX_OBJECT, &resp);
	free(body);
	if (r == 0 && patch && resp.status == 404) {
		/* Expired (the API server keeps Events an hour): anew. */
		http_response_free(&resp);
		x->name[0] = '\0';
		return (ev_write(e, x));
	}
	if (r == 0 && resp.status >= 200 && resp.status < 300) {
		x->written = x->count;
		if (e->fail_streak > 0)
			log_info(0, "events: written again after %d failed "
			    "writes", e->fail_streak);
		e->fail_streak = 0;
		log_info(3, "event %s %s (count %d)", kinds[x->kind].reason,
		    x->name, x->count);
	} else {
		struct timespec	 now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (e->fail_streak++ == 0 || now.tv_sec -
		    e->fail_warned.tv_sec >= EV_WARN_EVERY_S) {
			e->fail_warned = now;
			log_warnx("event %s: %s %s: %s (%d failed writes)",
			    kinds[x->kind].reason, patch ? "PATCH" : "POST",
			    x->name, r != 0 ? resp.error : resp.body != NULL ?
			    resp.body : "no body", e->fail_streak);
		} else
			log_info(2, "event %s: %s %s: %s",
			    kinds[x->kind].reason, patch ? "PATCH" : "POST",
			    x->name, r != 0 ? resp.error : resp.body != NULL ?
			    resp.body : "no body");
		if (!patch)
			x->name[0] = '\0';
		r = r != 0 ? r : KP_EKUBE;
	}
	http_response_free(&resp);
	return (r);
}

static struct ev_entry *
ev_find(struct pub_events *e, int kind, const char *note, int combined)
{
	size_t	 i;

	for (i = 0; i < EV_CACHE; i++)
		if (e->cache[i].kind == kind && (combined ?
		    e->cache[i].combined : !e->cache[i].combined &&
		    strcmp(e->cache[i].note, note) == 0))
			return (&e->cache[i]);
	return (NULL);
}

/* A free slot, or the least recently seen. */
static struct ev_entry *
ev_slot(struct pub_events *e)
{
	struct ev_entry	*old = &e->cache[0];
	size_t		 i;

	for (i = 0; i < EV_CACHE; i++) {
		if (e->cache[i].kind == 0)
			return (&e->cache[i]);
		if (e->cache[i].seen < old->seen)
			old = &e->cache[i];
	}
	memset(old, 0, sizeof(*old));
	return (old);
}

/* One observation: correlate, then write within the spam filter. */
static void
ev_observe(struct pub_events *e, const struct ev_item *it)
{
	struct ev_kind_window	*w = &e->window[it->kind];
	struct ev_entry		*x;
	time_t			 now = time(NULL);

	if ((x = ev_find(e, it->kind, it->note, 0)) == NULL &&
	    (x = ev_find(e, it->kind, NULL, 1)) == NULL) {
		if (now - w->start > EV_SIMILAR_S) {
			w->start = now;
			w->distinct = 0;
		}
		x = ev_slot(e);
		x->kind = it->kind;
		if (++w->distinct > EV_SIMILAR) {
			x->combined = 1;
			snprintf(x->note, sizeof(x->note), "%s%.*s",
			    EV_COMBINED, (int)(KP_IPC_MAX_NOTE -
			    strlen(EV_COMBINED)), it->note);
		} else
			snprintf(x->note, sizeof(x->note), "%s", it->note);
		micro_time(x->first, sizeof(x->first));
	}
	x->count++;
	x->seen = now;
	micro_time(x->last, sizeof(x->last));
	if (x->count > x->written && ev_token(e, x->kind))
		(void)ev_write(e, x);
}

/* Counts the spam filter held back, written as tokens come. */
static void
ev_flush(struct pub_events *e)
{
	size_t	 i;

	for (i = 0; i < EV_CACHE; i++)
		if (e->cache[i].kind != 0 &&
		    e->cache[i].count > e->cache[i].written &&
		    ev_token(e, e->cache[i].kind))
			(void)ev_write(e, &e->cache[i]);
}

static void *
ev_thread(void *arg)
{
	struct pub_events	*e = arg;
	struct ev_item		*it;
	struct timespec		 until;

	if ((it = malloc(sizeof(*it))) == NULL)
		return (NULL);
	pthread_mutex_lock(&e->lock);
	while (!e->quit) {
		if (e->qlen == 0) {
			ts_deadline(&until, CLOCK_REALTIME, EV_FLUSH_MS);
			if (pthread_cond_timedwait(&e->cond, &e->lock,
			    &until) == ETIMEDOUT) {
				pthread_mutex_unlock(&e->lock);
				ev_flush(e);
				pthread_mutex_lock(&e->lock);
			}
			continue;
		}
		*it = e->queue[e->qhead];
		e->qhead = (e->qhead + 1) % EV_QUEUE;
		e->qlen--;
		pthread_mutex_unlock(&e->lock);
		ev_observe(e, it);
		pthread_mutex_lock(&e->lock);
	}
	pthread_mutex_unlock(&e->lock);
	free(it);
	return (NULL);
}

int
pub_events_start(struct pub *p)
{
	struct pub_events	*e;

	/* Without a node name there is no object to report on. */
	if (p->env->cfg->node_name == NULL)
		return (0);
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return (KP_ENOMEM);
	e->p = p;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	if (pthread_create(&e->thread, NULL, ev_thread, e) != 0) {
		pthread_cond_destroy(&e->cond);
		pthread_mutex_destroy(&e->lock);
		free(e);
		return (KP_ENOMEM);
	}
	p->events = e;
	return (0);
}

/*
 * Queue one Event of kind with note (copied); any thread. Dropped when
 * the queue is full (half full for a kind a child asks for) or the kind
 * unknown (the supervisor's frame passed
 * ipc_check(): kind in range, note bounded).
 */
void
pub_events_post(struct pub *p, int kind, const char *note)
{
	struct pub_events	*e = p->events;
	struct ev_item		*it;

	if (e == NULL || kind <= 0 || (size_t)kind >= N_KINDS ||
	    kinds[kind].reason == NULL)
		return;
	pthread_mutex_lock(&e->lock);
	if (e->qlen == EV_QUEUE ||
	    (ev_asked(kind) && e->qlen >= EV_QUEUE / 2)) {
		if (e->qdropped++ == 0)
			log_warnx("events: queue full; dropping");
	} else {
		it = &e->queue[(e->qhead + e->qlen) % EV_QUEUE];
		it->kind = kind;
		/* Whole characters, no controls: the API server wants
		 * UTF-8, at most 1 KiB. */
		log_sanitize(note, it->note, sizeof(it->note));
		e->qlen++;
		pthread_cond_signal(&e->cond);
	}
	pthread_mutex_unlock(&e->lock);
}

void
pub_events_stop(struct pub *p)
{
	struct pub_events	*e = p->events;

	if (e == NULL)
		return;
	pthread_mutex_lock(&e->lock);
	e->quit = 1;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	pthread_join(e->thread, NULL);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e);
	p->events = NULL;
}
