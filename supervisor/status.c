/*
 * status.c - the supervisor's view of the plugin's health and its
 * counters, and the snapshots the observer serves (issue 14).
 *
 * Health inputs, each fed by one place and read only here:
 *   status_set_socket()	a socket file missing or replaced, or its
 *				socket shut down (the check of
 *				monitor, MON_SOCKET: monitor/repair.c)
 *   status_child_ok()		a child's READY or heartbeat answer
 *   status_child_down()	a child ended (reason for the restart count)
 *   status_published()		the driver's first resources
 *   sup->reg_state		kubelet's verdict (relay.c)
 *   sup->pub_status		the publisher's progress (relay.c)
 *
 * The heartbeat: every KP_HEARTBEAT_MS (2 s) each READY child gets a
 * Ping; it answers
 * from the loop that reads its channel (never a hook, never under the
 * serialization lock), so a slow prepare never fails /healthz, while a
 * stopped or wedged nodeserver, registrar or publisher does after
 * KP_HEARTBEAT_TIMEOUT_MS (the observer, which serves /healthz, only
 * answers). The answer carries the child's counters since its last answer
 * (ipc/stats.c checks them; the observer's carries none), added up here.
 * One that stays silent for kp_hung_child_timeout() is replaced (heal.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

static const char *const le_names[KP_STATS_LAT_BOUNDS + 1] = {
	"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5",
	"5", "10", "+Inf"
};

static const char *const restart_reasons[STATUS_REASONS] = {
	"exited", "signaled", "seccomp", "protocol", "hung"
};

int
status_init(struct sup *sup)
{
	if ((sup->st = calloc(1, sizeof(*sup->st))) == NULL)
		return (KP_ENOMEM);
	clock_gettime(CLOCK_MONOTONIC, &sup->st->next_tick);
	return (0);
}

void
status_free(struct sup *sup)
{
	free(sup->st);
	sup->st = NULL;
}

/* A socket file's state: ok, or the one-line reason it is not. */
void
status_set_socket(struct sup *sup, int which, int ok, const char *why)
{
	struct sup_status	*st = sup->st;

	if (st == NULL || which < 0 || which > 1)
		return;
	if (ok)
		st->sock_err[which][0] = '\0';
	else if (strcmp(st->sock_err[which], why) != 0) {
		log_errorx("%s: health fails until it is back", why);
		snprintf(st->sock_err[which], sizeof(st->sock_err[which]),
		    "%s", why);
	}
}

/* c answered (READY, a Pong): its heartbeat is fresh. */
void
status_child_ok(struct sup *sup, struct child *c)
{
	clock_gettime(CLOCK_MONOTONIC, &c->hb_ok);
	c->hb_out = 0;
	if (c->hb_warned && c->role == ROLE_OBSERVER)
		log_info(0, "%s answers the supervisor's heartbeat again",
		    c->name);
	c->hb_warned = 0;
}

/* c ended with status (waitpid's); violation: it was killed for one. */
void
status_child_down(struct sup *sup, struct child *c, int wstatus,
    int violation)
{
	struct sup_status	*st = sup->st;
	int			 r;
	size_t			 m;

	c->hb_out = 0;
	c->hb_warned = 0;
	if (st == NULL)
		return;
	if (c->hung)
		r = 4;
	else if (violation)
		r = 3;
	else if ((WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGSYS) ||
	    (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 128 + SIGSYS))
		r = 2;
	else
		r = WIFSIGNALED(wstatus) ? 1 : 0;
	if (sup->phase == PHASE_RUNNING)
		st->restarts[c->role][r]++;
	/* Its calls in progress ended with it. */
	for (m = 0; m < KP_STATS_METHODS; m++)
		if (kp_stats_method_role((int)m) == c->role)
			st->in_flight[m] = 0;
}

void
status_published(struct sup *sup)
{
	if (sup->st != NULL && sup->st->published_at == 0)
		sup->st->published_at = time(NULL);
}

static void
add_api(struct sup_status *st, const Kpipc__ApiStat *a)
{
	size_t	 i;

	for (i = 0; i < st->n_api; i++)
		if (strcmp(st->api[i].verb, a->verb) == 0 &&
		    st->api[i].code == a->code)
			break;
	if (i == st->n_api) {
		if (st->n_api == STATUS_MAX_API)
			return;		/* bounded: later pairs are dropped */
		st->n_api++;
		st->api[i].verb = kp_stats_verb(kp_stats_verb_index(a->verb));
		st->api[i].code = a->code;
		snprintf(st->api[i].code_s, sizeof(st->api[i].code_s), "%d",
		    (int)a->code);
		if (a->code == 0)
			snprintf(st->api[i].code_s, sizeof(st->api[i].code_s),
			    "<error>");
	}
	st->api[i].count += a->count;
}

static void
add_denial(struct sup_status *st, enum kp_role role, const char *sc,
    uint64_t n)
{
	size_t	 i;

	for (i = 0; i < st->n_denials; i++)
		if (st->denials[i].role == role &&
		    strcmp(st->denials[i].syscall, sc) == 0)
			break;
	if (i == st->n_denials) {
		if (st->n_denials == STATUS_MAX_DENIALS)
			return;
		st->n_denials++;
		st->denials[i].role = role;
		snprintf(st->denials[i].syscall,
		    sizeof(st->denials[i].syscall), "%s", sc);
	}
	st->denials[i].count += n;
}

/* A Pong from c (the state table let it through; ipc_check() passed). */
void
status_pong(struct sup *sup, struct child *c, const Kpipc__Pong *p)
{
	struct sup_status	*st = sup->st;
	char			 err[KP_ERROR_SIZE];
	size_t			 i, b;
	int			 m;

	if (!c->hb_out || p->seq != c->hb_seq) {
		sup_child_violation(sup, c, "heartbeat answer without a "
		    "heartbeat");
		return;
	}
	if (ipc_check_pong(c->role, p, err, sizeof(err)) != 0) {
		sup_child_violation(sup, c, err);
		return;
	}
	status_child_ok(sup, c);
	for (i = 0; i < p->n_rpc; i++) {
		const Kpipc__RpcStat *r = p->rpc[i];
		struct status_rpc *s;

		m = kp_stats_method_index(r->method);
		s = &st->rpc[m][r->code];
		s->count += r->count;
		for (b = 0; b < KP_STATS_LAT_BOUNDS + 1; b++)
			st->lat[m].buckets[b] += r->buckets[b];
		st->lat[m].count += r->count;
		st->lat[m].seconds += r->seconds;
	}
	for (m = 0; m < KP_STATS_METHODS; m++)
		if (kp_stats_method_role(m) == c->role)
			st->in_flight[m] = 0;
	for (i = 0; i < p->n_in_flight; i++)
		st->in_flight[kp_stats_method_index(p->in_flight[i]->method)] =
		    p->in_flight[i]->calls;
	st->lock_waits += p->lock_waits;
	st->lock_wait_seconds += p->lock_wait_seconds;
	for (i = 0; i < p->n_api; i++)
		add_api(st, p->api[i]);
	for (i = 0; i < p->n_denials; i++)
		add_denial(st, c->role, p->denials[i]->syscall,
		    p->denials[i]->count);
	if (c->role == ROLE_PUBLISHER) {
		st->n_pools = 0;
		for (i = 0; i < p->n_pools && i < STATUS_MAX_POOLS; i++) {
			snprintf(st->pools[i].name, sizeof(st->pools[i].name),
			    "%s", p->pools[i]->pool);
			st->pools[i].slices = p->pools[i]->slices;
			st->n_pools++;
		}
	}
}

/*
 * The first reason /healthz fails, or "" when it passes; *key names the
 * reason without what changes while it lasts (the seconds), so it is
 * logged once: a child that is silent, then killed and restarting, is one
 * reason (1 + role), as long as it lasts.
 */
enum {
	LIVE_OK, LIVE_SOCKET = 1 + ROLE_COUNT, LIVE_REJECTED = LIVE_SOCKET + 2,
	LIVE_STALE_SLICES
};

static void
live_reason(struct sup *sup, char *why, size_t size, int *key)
{
	struct sup_status	*st = sup->st;
	struct child		*c;
	long long		 ms;
	time_t			 now = time(NULL), since;
	int			 i;

	why[0] = '\0';
	*key = LIVE_OK;
	for (i = 0; i < 2; i++)
		if (st->sock_err[i][0] != '\0') {
			snprintf(why, size, "%s", st->sock_err[i]);
			*key = LIVE_SOCKET + i;
			return;
		}
	for (i = 0; i < ROLE_COUNT; i++) {
		c = &sup->children[i];
		if (!c->enabled || c->role == ROLE_OBSERVER)
			continue;
		ms = -ts_ms_until(&c->hb_ok);
		if (ms < KP_HEARTBEAT_TIMEOUT_MS)
			continue;
		*key = 1 + i;
		if (c->pid > 0 && c->state == CS_READY)
			snprintf(why, size, "%s has not answered the "
			    "supervisor's heartbeat for %lld s", c->name,
			    ms / 1000);
		else
			snprintf(why, size, "%s is not running (restarting "
			    "for %lld s)", c->name, ms / 1000);
		return;
	}
	if (sup->reg_state == KP_REGISTRATION_FAILED) {
		snprintf(why, size, "kubelet rejected the registration: %.200s",
		    sup->reg_error);
		why[strcspn(why, "\n")] = '\0';
		*key = LIVE_REJECTED;
		return;
	}
	if (sup->children[ROLE_PUBLISHER].enabled && st->published_at != 0 &&
	    sup->pub_status.pending_pools > 0) {
		since = sup->pub_status.last_sync > st->published_at ?
		    (time_t)sup->pub_status.last_sync : st->published_at;
		if (now - since >= KP_SYNC_STALE_S) {
			snprintf(why, size, "the publisher has not synced its "
			    "ResourceSlices for %lld s (%d pools pending)",
			    (long long)(now - since),
			    (int)sup->pub_status.pending_pools);
			*key = LIVE_STALE_SLICES;
		}
	}
}

/* The snapshot under construction: fixed tables, no allocation. */
struct snap {
	Kpipc__Family	 fam[STATUS_FAMILIES];
	Kpipc__Family	*famp[STATUS_FAMILIES];
	size_t		 n_fam;
	Kpipc__Sample	 smp[STATUS_SAMPLES];
	Kpipc__Sample	*smpp[STATUS_SAMPLES];
	char		*lab[STATUS_SAMPLES][6];
	size_t		 n_smp;
	Kpipc__Family	*cur;
	char		 nums[8][32];
};

static void
family(struct snap *s, const char *name, const char *type, const char *help)
{
	Kpipc__Family	*f;

	if (s->n_fam == STATUS_FAMILIES)
		return;
	f = &s->fam[s->n_fam];
	kpipc__family__init(f);
	f->name = (char *)name;
	f->type = (char *)type;
	f->help = (char *)help;
	f->samples = &s->smpp[s->n_smp];
	s->famp[s->n_fam++] = f;
	s->cur = f;
}

/* A sample of the current family: n label pairs (name, value, ...). */
static void
sample(struct snap *s, const char *suffix, double v, int n, ...)
{
	Kpipc__Sample	*x;
	va_list		 ap;
	int		 i;

	if (s->cur == NULL || s->n_smp == STATUS_SAMPLES || n > 3)
		return;
	x = &s->smp[s->n_smp];
	kpipc__sample__init(x);
	x->suffix = (char *)suffix;
	x->value = v;
	x->labels = s->lab[s->n_smp];
	x->n_labels = (size_t)n * 2;
	va_start(ap, n);
	for (i = 0; i < n * 2; i++)
		x->labels[i] = va_arg(ap, char *);
	va_end(ap);
	s->smpp[s->n_smp++] = x;
	s->cur->n_samples++;
}

static void
snap_grpc(struct sup *sup, struct snap *s)
{
	struct sup_status	*st = sup->st;
	const char		*mn;
	uint64_t		 cum;
	int			 m, c, b;

	family(s, "kubeletplugin_grpc_requests_total", "counter",
	    "gRPC calls answered, by method and status code.");
	for (m = 0; m < KP_STATS_METHODS; m++)
		for (c = 0; c < KP_STATS_CODES; c++)
			if (st->rpc[m][c].count > 0)
				sample(s, "", (double)st->rpc[m][c].count, 2,
				    "method", kp_stats_method(m), "code",
				    kp_stats_code_name(c));
	family(s, "kubeletplugin_grpc_request_duration_seconds", "histogram",
	    "Time from a gRPC call's arrival to its answer, by method.");
	for (m = 0; m < KP_STATS_METHODS; m++) {
		if (st->lat[m].count == 0)
			continue;
		mn = kp_stats_method(m);
		for (b = 0, cum = 0; b < KP_STATS_LAT_BOUNDS + 1; b++) {
			cum += st->lat[m].buckets[b];
			sample(s, "_bucket", (double)cum, 2, "method", mn,
			    "le", le_names[b]);
		}
		sample(s, "_sum", st->lat[m].seconds, 1, "method", mn);
		sample(s, "_count", (double)st->lat[m].count, 1, "method", mn);
	}
	family(s, "kubeletplugin_grpc_requests_in_flight", "gauge",
	    "gRPC calls in progress, by method.");
	for (m = 0; m < KP_STATS_METHODS; m++)
		if (sup->children[kp_stats_method_role(m)].enabled)
			sample(s, "", st->in_flight[m], 1, "method",
			    kp_stats_method(m));
	family(s, "kubeletplugin_health_stream_clients", "gauge",
	    "Resource health streams kubelet holds open.");
	sample(s, "", (double)(st->in_flight[kp_stats_method_index(
	    "/v1.DRAResourceHealth/NodeWatchResources")] +
	    st->in_flight[kp_stats_method_index(
	    "/v1alpha1.DRAResourceHealth/NodeWatchResources")]), 0);
	family(s, "kubeletplugin_serialization_lock_wait_seconds_total",
	    "counter", "Time calls waited for the serialization lock "
	    "(kp_serialize) before their hook ran.");
	sample(s, "", st->lock_wait_seconds, 0);
	family(s, "kubeletplugin_serialization_lock_waits_total", "counter",
	    "Times a call took the serialization lock.");
	sample(s, "", (double)st->lock_waits, 0);
}

static void
snap_processes(struct sup *sup, struct snap *s)
{
	struct sup_status	*st = sup->st;
	size_t			 i;
	int			 r, c;

	family(s, "kubeletplugin_process_restarts_total", "counter",
	    "Child processes restarted, by role and why they ended.");
	for (r = 0; r < ROLE_COUNT; r++)
		for (c = 0; c < STATUS_REASONS; c++)
			if (sup->children[r].enabled)
				sample(s, "", (double)st->restarts[r][c], 2,
				    "role", sup->children[r].name, "reason",
				    restart_reasons[c]);
	family(s, "kubeletplugin_process_up", "gauge",
	    "1 when the child runs and answers the heartbeat.");
	for (r = 0; r < ROLE_COUNT; r++) {
		struct child *ch = &sup->children[r];

		if (!ch->enabled)
			continue;
		sample(s, "", ch->pid > 0 && ch->state == CS_READY &&
		    (ch->role == ROLE_OBSERVER || -ts_ms_until(&ch->hb_ok) <
		    KP_HEARTBEAT_TIMEOUT_MS) ? 1 : 0, 1, "role", ch->name);
	}
	family(s, "kubeletplugin_dropped_total", "counter",
	    "What a child's frames caused and its budget refused (log lines, "
	    "error function calls, Events, claim_cancel frames), by role; the supervisor's lines "
	    "its stderr could not take, as role supervisor.");
	for (r = 0; r < ROLE_COUNT; r++) {
		struct child *ch = &sup->children[r];

		if (!ch->enabled)
			continue;
		sample(s, "", (double)ch->log.total, 2, "role", ch->name,
		    "what", "log_lines");
		sample(s, "", (double)ch->errs.total, 2, "role", ch->name,
		    "what", "error_reports");
		sample(s, "", (double)ch->events.total, 2, "role", ch->name,
		    "what", "events");
		if (r == ROLE_NODESERVER)
			sample(s, "", (double)ch->cancels.total, 2, "role",
			    ch->name, "what", "claim_cancels");
	}
	sample(s, "", (double)log_stderr_dropped(), 2, "role", "supervisor",
	    "what", "log_lines");
	sample(s, "", (double)sup->own_events.total, 2, "role", "supervisor",
	    "what", "events");
	family(s, "kubeletplugin_sandbox_denials_total", "counter",
	    "Syscalls the sandbox denied, by role and syscall.");
	for (i = 0; i < st->n_denials; i++)
		sample(s, "", (double)st->denials[i].count, 2, "role",
		    ipc_role_name(st->denials[i].role), "syscall",
		    st->denials[i].syscall);
}

static void
snap_kube(struct sup *sup, struct snap *s)
{
	struct sup_status	*st = sup->st;
	size_t			 i;

	family(s, "kubeletplugin_registration_state", "gauge",
	    "Kubelet's registration verdict: 1 for the current state.");
	sample(s, "", sup->reg_state == KP_REGISTRATION_NONE, 1, "state",
	    "none");
	sample(s, "", sup->reg_state == KP_REGISTRATION_REGISTERED, 1,
	    "state", "registered");
	sample(s, "", sup->reg_state == KP_REGISTRATION_FAILED, 1, "state",
	    "failed");
	if (!sup->children[ROLE_PUBLISHER].enabled)
		return;
	family(s, "kubeletplugin_api_requests_total", "counter",
	    "Requests to the API server, by HTTP verb and status code "
	    "(<error>: no response).");
	for (i = 0; i < st->n_api; i++)
		sample(s, "", (double)st->api[i].count, 2, "verb",
		    st->api[i].verb, "code", st->api[i].code_s);
	family(s, "kubeletplugin_resourceslices", "gauge",
	    "ResourceSlices of each pool as the publisher last saw them.");
	for (i = 0; i < st->n_pools; i++)
		sample(s, "", st->pools[i].slices, 1, "pool",
		    st->pools[i].name);
	family(s, "kubeletplugin_resourceslice_pending_pools", "gauge",
	    "Pools whose ResourceSlices are not in sync yet.");
	sample(s, "", sup->pub_status.pending_pools, 0);
	if (sup->pub_status.last_sync > 0) {
		family(s, "kubeletplugin_resourceslice_sync_age_seconds",
		    "gauge", "Seconds since the last successful "
		    "ResourceSlice sync.");
		sample(s, "", (double)(time(NULL) -
		    (time_t)sup->pub_status.last_sync), 0);
	}
}

/* Build and queue the observer's snapshot. */
static void
status_send(struct sup *sup, const char *live, const char *ready)
{
	struct child	*o = &sup->children[ROLE_OBSERVER];
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Status	 s = KPIPC__STATUS__INIT;
	struct snap	*sn;

	/* One snapshot in flight at most: an observer that stopped reading
	 * (SIGSTOP) costs one, not one a second. */
	if (!o->enabled || o->pid <= 0 || o->state != CS_READY ||
	    o->ctl.wlen > 0)
		return;
	if ((sn = calloc(1, sizeof(*sn))) == NULL)
		return;
	s.live = live[0] == '\0';
	s.live_reason = (char *)live;
	s.ready = ready[0] == '\0';
	s.ready_reason = (char *)ready;
	snap_grpc(sup, sn);
	snap_processes(sup, sn);
	snap_kube(sup, sn);
	s.families = sn->famp;
	s.n_families = sn->n_fam;
	m.m_case = KPIPC__MSG__M_STATUS;
	m.status = &s;
	sup_queue(sup, o, &m);
	free(sn);
}

/* Heartbeats to the children, the observer too (heal.c). */
static void
status_ping(struct sup *sup)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Ping	 p = KPIPC__PING__INIT;
	struct child	*c;
	int		 i;

	for (i = 0; i < ROLE_COUNT; i++) {
		c = &sup->children[i];
		if (c->pid <= 0 || c->state != CS_READY || c->hb_out)
			continue;
		c->hb_seq++;
		c->hb_out = 1;
		clock_gettime(CLOCK_MONOTONIC, &c->hb_sent);
		p.seq = c->hb_seq;
		m.m_case = KPIPC__MSG__M_PING;
		m.ping = &p;
		sup_queue(sup, c, &m);
	}
}

/* Every KP_HEARTBEAT_MS while running: sockets, heartbeats, the
 * snapshot. */
void
status_tick(struct sup *sup)
{
	struct sup_status	*st = sup->st;
	char			 live[STATUS_REASON_MAX + 64];
	char			 ready[STATUS_REASON_MAX + 64];
	int			 key;

	if (st == NULL || sup->phase != PHASE_RUNNING ||
	    ts_ms_until(&st->next_tick) > 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &st->next_tick);
	ts_after_ms(&st->next_tick, KP_HEARTBEAT_MS);
	/* Before the Pings: a Ping sent now is not yet due. */
	heal_tick(sup);
	live_reason(sup, live, sizeof(live), &key);
	if (live[0] != '\0')
		snprintf(ready, sizeof(ready), "%s", live);
	else if (sup->children[ROLE_REGISTRAR].enabled &&
	    sup->reg_state != KP_REGISTRATION_REGISTERED)
		snprintf(ready, sizeof(ready), "not registered with kubelet "
		    "yet");
	else
		ready[0] = '\0';
	if (key != st->last_live_key) {
		if (key != LIVE_OK)
			log_warnx("health: %s", live);
		else
			log_info(0, "health: ok again");
		st->last_live_key = key;
	}
	/* The snapshot before the Ping: it is skipped while the observer's
	 * channel holds unsent bytes, as the Ping just queued would be. */
	status_send(sup, live, ready);
	status_ping(sup);
}

long long
status_next_ms(struct sup *sup)
{
	if (sup->st == NULL || sup->phase != PHASE_RUNNING)
		return (-1);
	return (ts_ms_until(&sup->st->next_tick));
}
