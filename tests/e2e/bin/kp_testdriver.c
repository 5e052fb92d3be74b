/*
 * kp_testdriver - a driver for the end-to-end tests. Options map to the
 * kp_* setters; hook behaviour is chosen by flags. After kp_start it
 * prints "ready <pid>" on stdout and then reads commands on stdin:
 *   status   prints "status <state> <kubelet error>"
 *   publish  calls kp_publish_resources with one device, prints the result
 *   publish-split <devices> <sets>  one flat slice with split_slices
 *   publish-loop <count> <publish args>  publish count times in a row
 *   health <pool> <device> <status 0-2> [timeout_s [message]]
 *            calls kp_health_report with one device, prints
 *            "health <KP_NAME> <message>"
 *   state <text>   calls kp_state_set with the text, prints
 *            "state <KP_NAME> <message>"
 *   state-big <n>  the same with n bytes of 'x'
 *   publish-taint  publishes one device with a taint (DRADeviceTaints)
 *   getinfo-error [message]   kp_set_get_info_error ("" clears), prints
 *            "regerr <KP_NAME> <message>"
 *   notify-error [message]    kp_set_notify_registration_status_error
 *   restart  (with --start-twice) kp_stop, then kp_start with the same
 *            options, prints "restart <KP_NAME> <message>"
 *   stop     calls kp_stop, prints "stopped <code>", exits
 * With --channels: kp_error_callback prints "errcb <KP_NAME> rec=<0|1>
 * <message>", kp_state_callback logs "STATECB gen=<g> len=<n> <text>"
 * (nodeserver stderr), and a thread prints "statusfd reg=<state>" each
 * time kp_status_fd() is readable. Claim "state-<x>": the prepare hook
 * logs "HOOKSTATE <x> gen=<g> len=<n> <text>"; the init hook logs
 * "INITSTATE gen=<g> len=<n>"; every prepared claim logs its parsed
 * configs ("CONFIGS ...").
 * With --start-twice a second kp_start() with the same options follows the
 * first, before "ready": it prints "second <KP_NAME> <message>".
 * With --heap-marker <text> the text reversed sits in the heap;
 * --random-heap-marker one made by each run of main() ("heap-marker
 * <hex>"). --fork-hooks: kp_sandbox_exec(0). --driver-name-file <f>: the
 * driver name read from f by each run of main(). --stderr-to <f>: stderr
 * sent to f before kp_start(). --initial-state <text>: kp_state_initial().
 * --initial-state-big <n>: n bytes of 'x'; --initial-state-file <f>: read
 * from f by each run of main(), none when f does not exist.
 * --error-republish MS (with --channels): after printing "errcb ...", the
 * error function calls kp_publish_resources() (pool-0, one device) every
 * 20 ms until a call fails or MS passed, then prints "errcb-republish
 * <KP_NAME of the last call> n=<calls> ms=<elapsed>".
 * --no-qualified-names-check: kp_validate_qualified_names(o, 0).
 * --log-per-claim stderr|kplog: the prepare hook writes one line per
 * claim, "prepared <ns>/<name>", on stderr (one write) or through kp_log()
 * at V(0) (bench/run.js's hook logging row).
 * --main-confine: kp_policy_main_confine(o, 1); --main-ioctl <n>:
 * kp_policy_main_ioctl(o, n); command "loopctl" then asks
 * /dev/loop-control for a free loop device from main() (loopctl()).
 * With --exit-on-stop a thread waits in kp_plugin_wait() and prints
 * "plugin-stopped <KP_NAME> <reason>" when the plugin stops on its own.
 * End of input stops as "stop" does. Claim "hang-forever..." makes the
 * prepare hook block for good. A failed start prints
 * "error <KP_NAME> <message>" and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <linux/loop.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <seccomp.h>

/* After <jansson.h>: declares kp_config_parameters(). */
#include "kubeletplugin.h"

struct tdrv {
	char		 name[64];
	const char	*fail_claim;	/* per-claim error for this name */
	const char	*share_id;
	int		 hook_fail;
	int		 init_fail;
	int		 slow_ms;
	int		 spawn_thread;
	int		 hook_health;	/* prepare reports health */
	int		 channels;	/* --channels */
	const char	*counter;	/* --counter-file: hooks log here */
	const char	*tag;		/* --tag: names this instance there */
	int		 quiet;		/* --quiet: no ALLOC line per claim */
	int		 log_claims;	/* --log-per-claim: 1 stderr, 2 kp_log */
	int		 all_nodes;	/* publish: pools for all nodes */
	int		 exit_on_stop;	/* kp_plugin_wait: exit with it */
	int		 start_twice;	/* --start-twice */
	int		 republish_ms;	/* --error-republish */
	struct kp_options *opts;	/* kept for "restart" */
	const struct kp_hooks *hooks;
};

static struct tdrv	 drv;
/* The running plugin, for the error function (--error-republish). */
static struct kp_plugin	*_Atomic cur_plugin;
static atomic_int	 status_stop;	/* ends status_thread */
static pthread_t	 status_th;
static atomic_int	 in_hook;	/* hooks running right now */

static int
count_fds(void)
{
	DIR		*d = opendir("/proc/self/fd");
	struct dirent	*de;
	int		 n = -1;	/* the DIR's own fd */

	if (d == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return (n);
}

/*
 * --counter-file: one line per hook entry and exit, appended (O_APPEND:
 * each line lands whole, in order, whichever process writes it), so a
 * test can check across processes that hooks never overlap. Lives in a
 * state directory the nodeserver may write.
 */
static void
counter_line(const char *what)
{
	char	 line[64];
	int	 fd, n;

	if (drv.counter == NULL)
		return;
	if ((fd = open(drv.counter, O_WRONLY | O_APPEND | O_CREAT |
	    O_CLOEXEC, 0644)) == -1) {
		fprintf(stderr, "counter file: %s\n", strerror(errno));
		return;
	}
	n = snprintf(line, sizeof(line), "%s %s\n", what, drv.tag ? drv.tag :
	    "-");
	(void)!write(fd, line, (size_t)n);
	close(fd);
}

/* Serialization proof: report when two hooks ever run at once. */
static void
hook_enter(void)
{
	if (atomic_fetch_add(&in_hook, 1) > 0)
		fprintf(stderr, "OVERLAP: hooks ran concurrently\n");
	counter_line("enter");
}

static void
hook_leave(void)
{
	counter_line("leave");
	atomic_fetch_sub(&in_hook, 1);
}

/*
 * Plays compromised driver code: finds this process's channel to the
 * supervisor (the unnamed AF_UNIX stream socket) and writes a hostile
 * frame on it. The supervisor must kill and restart this nodeserver.
 */
static void
hostile(const char *kind)
{
	static const uint8_t	 oversize[4] = { 0x7f, 0xff, 0xff, 0xff };
	/* a valid frame of an unpermitted type: Stop (field 10, empty) */
	static const uint8_t	 stop[6] = { 0, 0, 0, 2, 0x52, 0x00 };
	static const uint8_t	 garbage[8] = { 0, 0, 0, 4, 0xff, 0xff,
				    0xff, 0xff };
	/* Msg.state_set (50) { generation 99999, data "EVIL" }: state
	 * flows from the driver process only */
	static const uint8_t	 state[17] = { 0, 0, 0, 13, 0x92, 0x03,
				    0x0a, 0x08, 0x9f, 0x8d, 0x06, 0x12, 0x04,
				    'E', 'V', 'I', 'L' };
	/* Msg.event (51) { kind 1, message "EVIL" }: events come from the
	 * supervisor only */
	static const uint8_t	 event[15] = { 0, 0, 0, 11, 0x9a, 0x03,
				    0x08, 0x08, 0x01, 0x1a, 0x04, 'E', 'V',
				    'I', 'L' };
	/* Msg.cdi_changed (27) { reset: true }: the supervisor's news of
	 * the CDI directory, never the nodeserver's */
	static const uint8_t	 cdichanged[9] = { 0, 0, 0, 5, 0xda, 0x01,
				    0x02, 0x10, 0x01 };
	struct sockaddr_un	 sun;
	socklen_t		 len;
	DIR			*d;
	struct dirent		*de;
	int			 fd, type, acc;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		len = sizeof(type);
		if (fd < 3 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type,
		    &len) == -1 || type != SOCK_STREAM)
			continue;
		len = sizeof(acc);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) ||
		    acc)
			continue;
		len = sizeof(sun);
		if (getsockname(fd, (struct sockaddr *)&sun, &len) == -1 ||
		    sun.sun_family != AF_UNIX || len > sizeof(sa_family_t))
			continue;
		if (strcmp(kind, "oversize") == 0)
			(void)!write(fd, oversize, sizeof(oversize));
		else if (strcmp(kind, "unpermitted") == 0)
			(void)!write(fd, stop, sizeof(stop));
		else if (strcmp(kind, "state") == 0)
			(void)!write(fd, state, sizeof(state));
		else if (strcmp(kind, "event") == 0)
			(void)!write(fd, event, sizeof(event));
		else if (strcmp(kind, "cdichanged") == 0)
			(void)!write(fd, cdichanged, sizeof(cdichanged));
		else
			(void)!write(fd, garbage, sizeof(garbage));
	}
	closedir(d);
}

/* What the claim look-up gave the hook, for the tests to read. */
static void
log_allocation(const struct kp_claim *c)
{
	size_t	 k;

	if (drv.quiet)
		return;
	fprintf(stderr, "ALLOC %s/%s results=%zu", c->namespace_, c->name,
	    c->n_results);
	for (k = 0; k < c->n_results; k++)
		fprintf(stderr, " %s:%s/%s%s", c->results[k].request,
		    c->results[k].pool, c->results[k].device,
		    c->results[k].admin_access ? ":admin" : "");
	fprintf(stderr, " config=%s\n", c->config_json ? c->config_json :
	    "(null)");
	/* The parsed view: source, requests, driver, parameters as text
	 * and through jansson (its "mode" member). */
	fprintf(stderr, "CONFIGS %s n=%zu", c->name, c->n_configs);
	for (k = 0; k < c->n_configs; k++) {
		const struct kp_config	*cf = &c->configs[k];
		const json_t		*pj = kp_config_parameters(cf);
		size_t			 q;

		fprintf(stderr, " [%s|", cf->source);
		for (q = 0; q < cf->n_requests; q++)
			fprintf(stderr, "%s%s", q ? "," : "", cf->requests[q]);
		fprintf(stderr, "|%s|%s|mode=%s]", cf->driver, cf->parameters,
		    json_is_object(pj) && json_string_value(json_object_get(
		    pj, "mode")) ? json_string_value(json_object_get(pj,
		    "mode")) : "-");
	}
	fprintf(stderr, "\n");
}

/* kp_claim_info() as JSON, for tests/e2e/claiminfo.test.js to compare
 * with the claim the emulator serves. */
static json_t *
strs_json(const char *const *v, size_t n)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return (a);
}

static json_t *
pairs_json(const struct kp_key_value *const *v, size_t n)
{
	json_t	*o = json_object();
	size_t	 i;

	for (i = 0; i < n; i++)
		json_object_set_new(o, v[i]->key, json_string(v[i]->value));
	return (o);
}

static json_t *
result_json(const struct kp_claim_result *r)
{
	json_t	*o, *a, *x;
	size_t	 i;

	o = json_pack("{s:I,s:s,s:s,s:s?,s:s,s:s,s:s,s:b,s:s?,s:I}",
	    "struct_size", (json_int_t)r->struct_size,
	    "request", r->request, "base_request", r->base_request,
	    "subrequest", r->subrequest, "driver", r->driver,
	    "pool", r->pool, "device", r->device,
	    "admin_access", r->admin_access, "share_id", r->share_id,
	    "index", (json_int_t)r->index);
	a = json_array();
	for (i = 0; i < r->n_consumed_capacity; i++) {
		const struct kp_capacity_quantity *c = r->consumed_capacity[i];

		json_array_append_new(a, json_pack(
		    "{s:s,s:s,s:I,s:I,s:b,s:b,s:b}",
		    "name", c->name, "quantity", c->quantity,
		    "value", (json_int_t)c->value,
		    "milli_value", (json_int_t)c->milli_value,
		    "overflow", c->overflow,
		    "milli_overflow", c->milli_overflow,
		    "invalid", c->invalid));
	}
	json_object_set_new(o, "consumed_capacity", a);
	a = json_array();
	for (i = 0; i < r->n_tolerations; i++) {
		const struct kp_toleration *t = r->tolerations[i];

		x = json_pack("{s:s,s:s,s:s,s:s}", "key", t->key,
		    "operator", t->operator_, "value", t->value,
		    "effect", t->effect);
		if (t->has_toleration_seconds)
			json_object_set_new(x, "toleration_seconds",
			    json_integer(t->toleration_seconds));
		json_array_append_new(a, x);
	}
	json_object_set_new(o, "tolerations", a);
	json_object_set_new(o, "binding_conditions",
	    strs_json(r->binding_conditions, r->n_binding_conditions));
	json_object_set_new(o, "binding_failure_conditions",
	    strs_json(r->binding_failure_conditions,
	    r->n_binding_failure_conditions));
	/* The 1.38 look-up: short or qualified, either stored form. */
	x = json_object();
	{
		const struct kp_capacity_quantity *m =
		    kp_claim_capacity(r, "memory");
		char	 q[300];

		snprintf(q, sizeof(q), "%s/memory", r->driver);
		json_object_set_new(x, "memory", m ? json_string(m->quantity) :
		    json_null());
		m = kp_claim_capacity(r, q);
		json_object_set_new(x, "qualified", m ?
		    json_string(m->quantity) : json_null());
	}
	json_object_set_new(o, "capacity_lookup", x);
	return (o);
}

static void
claim_info_dump(const struct kp_claim *c)
{
	const struct kp_claim_info	*ci = kp_claim_info(c);
	struct kp_claim			 copy = *c;
	json_t				*o, *a, *full;
	char				*s;
	size_t				 i, len, off;

	if (ci == NULL) {
		fprintf(stderr, "CLAIMINFO-NULL %s\n", c->name);
		return;
	}
	o = json_pack("{s:I,s:s,s:s,s:s,s:s?,s:I,s:s?}",
	    "struct_size", (json_int_t)ci->struct_size,
	    "namespace", ci->namespace_, "name", ci->name, "uid", ci->uid,
	    "api_version", ci->api_version, "absent", (json_int_t)ci->absent,
	    "node_selector", ci->node_selector);
	a = json_array();
	for (i = 0; i < ci->n_results; i++)
		json_array_append_new(a, result_json(ci->results[i]));
	json_object_set_new(o, "results", a);
	a = json_array();
	for (i = 0; i < ci->n_configs; i++) {
		const struct kp_claim_config *cf = ci->configs[i];

		json_array_append_new(a, json_pack("{s:s,s:o,s:s,s:s,s:O?}",
		    "source", cf->source, "requests", strs_json(cf->requests,
		    cf->n_requests), "driver", cf->driver,
		    "parameters", cf->parameters, "parameters_json",
		    kp_claim_config_parameters(cf)));
	}
	json_object_set_new(o, "configs", a);
	json_object_set_new(o, "labels", pairs_json(ci->labels,
	    ci->n_labels));
	json_object_set_new(o, "annotations", pairs_json(ci->annotations,
	    ci->n_annotations));
	a = json_array();
	for (i = 0; i < ci->n_reserved_for; i++)
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s}",
		    "api_group", ci->reserved_for[i]->api_group,
		    "resource", ci->reserved_for[i]->resource,
		    "name", ci->reserved_for[i]->name,
		    "uid", ci->reserved_for[i]->uid));
	json_object_set_new(o, "reserved_for", a);
	/* The JSON text and the parsed object are the same claim. */
	full = ci->json != NULL ? json_loadb(ci->json, ci->json_len, 0,
	    NULL) : NULL;
	json_object_set_new(o, "json_matches", json_boolean(ci->json == NULL ?
	    kp_claim_json(ci) == NULL : json_equal(full, kp_claim_json(ci))));
	json_object_set_new(o, "json", full != NULL ? full : json_null());
	/* Same pointer the second time; none for a copy of the claim. */
	json_object_set_new(o, "same_again", json_boolean(kp_claim_info(c) ==
	    ci));
	json_object_set_new(o, "copy_null", json_boolean(kp_claim_info(&copy)
	    == NULL));
	json_object_set_new(o, "has_json_obj", json_boolean(KP_HAS(ci,
	    json_obj)));
	s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_SORT_KEYS);
	json_decref(o);
	if (s == NULL)
		return;
	/* The relay cuts lines at 512 bytes: chunks of 300. */
	len = strlen(s);
	for (off = 0, i = 0; off < len; off += 300, i++)
		fprintf(stderr, "CLAIMINFO %s %zu%s %.300s\n", c->name, i,
		    off + 300 >= len ? "$" : "", s + off);
	free(s);
}

/* "infoq-*" claims (tests/e2e/redteam-issue25.test.js): kp_claim_info()
 * asked "infoq-<n>" times (1 if no number), timed, one summary line, no
 * dump (the dump's own copies would hide what the library spends). */
static void
info_quiet(const struct kp_claim *c)
{
	const struct kp_claim_info	*ci = NULL;
	struct timespec			 t0, t1;
	long				 k, n = strtol(c->name + 6, NULL, 10);

	if (n < 1)
		n = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (k = 0; k < n; k++)
		ci = kp_claim_info(c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "INFOQ %s ok=%d results=%zu tolerations=%zu "
	    "labels=%zu json=%zu ms=%.1f\n", c->name, ci != NULL,
	    ci ? ci->n_results : 0, ci && ci->n_results ?
	    ci->results[0]->n_tolerations : 0, ci ? ci->n_labels : 0,
	    ci ? ci->json_len : 0, (t1.tv_sec - t0.tv_sec) * 1e3 +
	    (t1.tv_nsec - t0.tv_nsec) / 1e6);
}

/* "info-*" claims: a device per allocation result, its shareID passed
 * back (a shared-device driver), after the claim info dump. */
static int
info_devices(struct kp_prepare_results *res, size_t i,
    const struct kp_claim *c)
{
	const struct kp_claim_info	*ci = kp_claim_info(c);
	struct kp_prepared_device	 dev = { KP_PREPARED_DEVICE_INIT };
	const char			*reqs[1];
	size_t				 k;

	claim_info_dump(c);
	for (k = 0; ci != NULL && k < ci->n_results; k++) {
		reqs[0] = ci->results[k]->base_request;
		dev.request_names = reqs;
		dev.n_request_names = 1;
		dev.pool_name = ci->results[k]->pool;
		dev.device_name = ci->results[k]->device;
		dev.share_id = ci->results[k]->share_id;
		if (kp_prepare_add_device(res, i, &dev) != 0)
			return (-1);
	}
	return (0);
}

/* The state the hooks have, logged as "<tag> gen=<g> len=<n> <text>"
 * (the first 64 bytes). */
static void
log_state(const char *tag)
{
	char		*buf = malloc(KP_STATE_MAX);
	uint64_t	 gen = 0;
	size_t		 len = 0;
	int		 r;

	r = buf == NULL ? KP_ENOMEM : kp_hook_state_get(buf, KP_STATE_MAX,
	    &len, &gen);
	if (r != 0)
		fprintf(stderr, "%s %s\n", tag, kp_err_name(r));
	else
		fprintf(stderr, "%s gen=%llu len=%zu %.*s\n", tag,
		    (unsigned long long)gen, len, (int)(len > 64 ? 64 : len),
		    buf);
	free(buf);
}

static void
state_cb(void *user, const void *data, size_t len, uint64_t gen)
{
	fprintf(stderr, "STATECB gen=%llu len=%zu %.*s\n",
	    (unsigned long long)gen, len, (int)(len > 64 ? 64 : len),
	    (const char *)data);
}

/* One valid pool-0 with one device: what --error-republish sends. */
static int
publish_fixed(struct kp_plugin *p)
{
	static const struct kp_attribute a = KP_ATTR_INT("index", 0);
	struct kp_device	 d = { KP_DEVICE_INIT, .name = "dev-0",
				    .attributes = &a, .n_attributes = 1 };
	struct kp_slice		 s = { KP_SLICE_INIT, .devices = &d,
				    .n_devices = 1 };
	struct kp_pool		 pl = { KP_POOL_INIT, .name = "pool-0",
				    .slices = &s, .n_slices = 1,
				    .all_nodes = drv.all_nodes };
	struct kp_resources	 res = { KP_RESOURCES_INIT, .pools = &pl,
				    .n_pools = 1 };

	return (kp_publish_resources(p, &res));
}

/*
 * --error-republish MS: the error function calls kp_publish_resources()
 * (upstream 1.38: HandleError may call PublishResources), every 20 ms
 * until one fails or MS passed, so a kp_stop() may come meanwhile.
 */
static void
error_republish(void)
{
	struct kp_plugin	*p = atomic_load(&cur_plugin);
	struct timespec		 t0, t1;
	long			 ms = 0;
	int			 r = 0, n = 0;

	if (p == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (r == 0 && ms < drv.republish_ms) {
		r = publish_fixed(p);
		n++;
		if (r == 0)
			usleep(20000);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 +
		    (t1.tv_nsec - t0.tv_nsec) / 1000000;
	}
	printf("errcb-republish %s n=%d ms=%ld\n", kp_err_name(r), n, ms);
	fflush(stdout);
}

static void
error_cb(void *user, int code, const char *msg, int recoverable)
{
	printf("errcb %s rec=%d %s\n", kp_err_name(code), recoverable, msg);
	fflush(stdout);
	if (drv.republish_ms > 0)
		error_republish();
}

/* Waits on kp_status_fd(): read it, then ask (no change is missed). */
static void *
status_thread(void *arg)
{
	struct kp_plugin		*p = arg;
	enum kp_registration_state	 st;
	struct pollfd			 pfd;
	uint64_t			 v;
	char				 err[KP_ERROR_SIZE];

	pfd.fd = kp_status_fd(p);
	pfd.events = POLLIN;
	while (!atomic_load(&status_stop) && poll(&pfd, 1, 100) >= 0) {
		if (pfd.revents & (POLLNVAL | POLLERR | POLLHUP))
			break;
		if (!(pfd.revents & POLLIN))
			continue;
		if (read(pfd.fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			continue;
		if (kp_registration_status(p, &st, err, sizeof(err)) != 0)
			break;
		printf("statusfd reg=%d\n", (int)st);
		fflush(stdout);
	}
	return (NULL);
}

/*
 * Sandbox probes (tests/e2e/sandbox.test.js). Claim "syscall-<name>" makes
 * the prepare hook call that syscall with zero arguments (a -1 return
 * fails the claim with the errno, as a driver would), claim "fork"
 * calls fork(), claim "thread-syscall-<name>" makes the syscall on a
 * thread the hook starts, claim "fcntl-signal" tries to make a pipe signal
 * $KP_TEST_SIGNAL_PID (F_SETOWN, F_SETSIG SIGKILL, O_ASYNC, a write),
 * claim "open-<x>" opens $KP_TEST_OPEN_PATH and fails the
 * claim with the outcome. In the registrar the interceptors (with
 * --interceptors) do the same on GetInfo with $KP_TEST_REGISTRAR_SYSCALL
 * and $KP_TEST_REGISTRAR_OPEN, printing the outcome on stderr.
 */
static long
probe_syscall(const char *who, const char *name, int *err)
{
	int	 nr = seccomp_syscall_resolve_name(name);
	long	 r;

	*err = ENOSYS;
	if (nr < 0) {
		fprintf(stderr, "probe: %s: unknown syscall %s\n", who, name);
		return (-1);
	}
	fprintf(stderr, "probe: %s calls %s\n", who, name);
	errno = 0;
	r = syscall(nr, 0, 0, 0, 0, 0, 0);
	*err = errno;
	fprintf(stderr, "probe: %s: %s returned %ld (%s)\n", who, name, r,
	    strerror(*err));
	return (r);
}

/* The syscall of "thread-syscall-<name>", on a thread of the hook's. */
static void *
probe_thread(void *arg)
{
	static int	 err;

	if (probe_syscall("nodeserver thread", arg, &err) != -1)
		err = 0;
	return (&err);
}

static void
probe_fcntl(char *out, size_t size)
{
	const char	*p = getenv("KP_TEST_SIGNAL_PID");
	int		 fd[2], own, sig, async;
	ssize_t		 w;

	if (p == NULL || pipe2(fd, O_CLOEXEC) == -1) {
		snprintf(out, size, "fcntl: no pid or no pipe");
		return;
	}
	own = fcntl(fd[0], F_SETOWN, (int)strtol(p, NULL, 10)) == -1 ? errno : 0;
	sig = fcntl(fd[0], F_SETSIG, SIGKILL) == -1 ? errno : 0;
	async = fcntl(fd[0], F_SETFL, O_ASYNC | O_NONBLOCK) == -1 ? errno : 0;
	w = write(fd[1], "x", 1);
	close(fd[0]);
	close(fd[1]);
	snprintf(out, size, "fcntl: F_SETOWN %s, F_SETSIG %s, O_ASYNC %s, "
	    "write %zd", strerror(own), strerror(sig), strerror(async), w);
}

static void
probe_open(const char *path, char *out, size_t size)
{
	char	 buf[64];
	ssize_t	 n;
	int	 fd;

	if (path == NULL) {
		snprintf(out, size, "open: no path");
		return;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(out, size, "open %s: %s", path, strerror(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	snprintf(out, size, "open %s: ok, read %zd bytes", path, n);
}

/*
 * A valid CDI spec of *len bytes (at least its fixed part; *len is set to
 * what it made) for the driver the file name starts with, padded in an
 * annotation value; or with invalid UTF-8 at byte 7.
 */
static char *
spec_content(const char *name, size_t *len, int bad)
{
	char	 head[512], *b;
	size_t	 dl = strcspn(name, "_"), hl;

	snprintf(head, sizeof(head), "{\"cdiVersion\":\"0.6.0\",\"kind\":"
	    "\"%.*s/test\",\"devices\":[{\"name\":\"d\",\"containerEdits\":"
	    "{\"env\":[\"KP_TEST=1\"]}}],\"annotations\":{\"pad\":\"",
	    (int)(dl < 300 ? dl : 300), name);
	hl = strlen(head);
	if (*len < hl + 3)
		*len = hl + 3;
	if ((b = malloc(*len)) == NULL)
		return (NULL);
	memcpy(b, head, hl);
	memset(b + hl, 'a', *len - hl - 3);
	memcpy(b + *len - 3, "\"}}", 3);
	if (bad)
		b[7] = (char)0xff;
	return (b);
}

/* protobuf varint. */
static size_t
varint(uint8_t *p, uint64_t v)
{
	size_t	 n = 0;

	do {
		p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v != 0);
	return (n);
}

static void	send_raw(uint8_t *, size_t);

/*
 * Plays compromised driver code that bypasses kp_cdi_spec_write: a
 * hand-encoded CdiWrite frame (Msg field 20: id 1, name, content) on the
 * channel to the supervisor. The answer goes to the reader, which drops
 * it: the test looks at the files and the supervisor's log.
 */
static void
raw_cdi(const char *name, size_t len)
{
	uint8_t		*f, hdr[16];
	char		*c = spec_content(name, &len, 0);
	size_t		 nl = strlen(name), inner, n = 4;

	if (c == NULL || (f = malloc(len + nl + 64)) == NULL)
		return;
	inner = 2 + 1 + varint(hdr, nl) + nl + 1 + varint(hdr, len) + len;
	f[n++] = 0xa2;			/* field 20, length-delimited */
	f[n++] = 0x01;
	n += varint(f + n, inner);
	f[n++] = 0x08;			/* id = 1 */
	f[n++] = 0x01;
	f[n++] = 0x12;			/* name */
	n += varint(f + n, nl);
	memcpy(f + n, name, nl);
	n += nl;
	f[n++] = 0x1a;			/* content */
	n += varint(f + n, len);
	memcpy(f + n, c, len);
	n += len;
	send_raw(f, n);
	free(f);
	free(c);
}

/* Frame f (n bytes, the first 4 the length, filled here) on every
 * connected Unix stream socket: the channel to the supervisor. */
static void
send_raw(uint8_t *f, size_t n)
{
	struct sockaddr_un sun;
	socklen_t	 sl;
	DIR		*d;
	struct dirent	*de;
	size_t		 h = n - 4;
	int		 fd, type, acc;

	f[0] = (uint8_t)(h >> 24);
	f[1] = (uint8_t)(h >> 16);
	f[2] = (uint8_t)(h >> 8);
	f[3] = (uint8_t)h;
	if ((d = opendir("/proc/self/fd")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		sl = sizeof(type);
		if (fd < 3 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type,
		    &sl) == -1 || type != SOCK_STREAM)
			continue;
		sl = sizeof(acc);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &sl) ||
		    acc)
			continue;
		sl = sizeof(sun);
		if (getsockname(fd, (struct sockaddr *)&sun, &sl) == -1 ||
		    sun.sun_family != AF_UNIX || sl > sizeof(sa_family_t))
			continue;
		(void)!write(fd, f, n);
	}
	closedir(d);
}

/* One length-delimited string field (tag < 16) at f + n; the new n. */
static size_t
put_str(uint8_t *f, size_t n, int tag, const char *v)
{
	size_t	 l = strlen(v);

	f[n++] = (uint8_t)(tag << 3 | 2);
	n += varint(f + n, l);
	memcpy(f + n, v, l);
	return (n + l);
}

/*
 * Compromised driver code again: a hand-encoded MetadataWrite (Msg
 * field 24) naming namespace ns and request req, bypassing the checks of
 * the nodeserver's wrapper. A frame the rules refuse kills the
 * nodeserver; the test looks at the files and the log.
 */
static void
raw_md(const char *ns, const char *req)
{
	uint8_t	 in[1024], f[1100];
	size_t	 n = 0, m = 4;

	in[n++] = 0x08;			/* id = 1 */
	in[n++] = 0x01;
	n = put_str(in, n, 2, ns);
	n = put_str(in, n, 3, "claim");
	n = put_str(in, n, 4, "0b6d1a4e-1111-4222-8333-944455556666");
	n = put_str(in, n, 5, req);
	n = put_str(in, n, 7, "{}");
	f[m++] = 0xc2;			/* field 24, length-delimited */
	f[m++] = 0x01;
	m += varint(f + m, n);
	memcpy(f + m, in, n);
	send_raw(f, m + n);
}

/*
 * A well-formed MetadataUpdate (the driver process's message) for
 * default/<name> (uid) request req-0: no child may send it.
 */
static void
raw_mdup(const char *name, const char *uid)
{
	uint8_t	 in[1024], f[1100];
	size_t	 n = 0, m = 4;

	n = put_str(in, n, 1, "default");
	n = put_str(in, n, 2, name);
	n = put_str(in, n, 3, uid);
	n = put_str(in, n, 4, "req-0");
	f[m++] = 0xd2;			/* field 26, length-delimited */
	f[m++] = 0x01;
	m += varint(f + m, n);
	memcpy(f + m, in, n);
	send_raw(f, m + n);
}

static int
list_name(void *user, const char *name)
{
	char	*out = user;
	size_t	 n = strlen(out);

	snprintf(out + n, 300 - n, "%s%s", n > 0 ? "," : "", name);
	return (0);
}

/*
 * Claim "probe-<n>" runs the probe in $KP_TEST_PROBE_<n> and fails the
 * claim with its outcome: write:<path>, read:<path>, rdwr:<path>,
 * mkdir:<path>, unlink:<path>, rename:<from>:<to>, kill:<pid>,
 * setown:<pid> (SIGKILL through F_SETOWN/F_SETSIG/O_ASYNC on a pipe),
 * cdi-write:<name>:<len>, cdi-write-bad:<name>, cdi-remove:<name>,
 * cdi-list, raw-cdi:<name>:<len>, raw-md:<namespace>:<request>,
 * raw-mdup:<claim name>:<claim uid>.
 */
static void
probe(const char *spec, char *out, size_t size)
{
	char		 op[32], a[256] = "", b[256] = "", err[KP_ERROR_SIZE];
	char		*c, list[300] = "";
	int		 fd, r, p[2];
	ssize_t		 n;

	if (spec == NULL || sscanf(spec, "%31[^:]:%255[^:]:%255s", op, a,
	    b) < 1) {
		snprintf(out, size, "probe: no spec");
		return;
	}
	errno = 0;
	if (strcmp(op, "write") == 0) {
		fd = open(a, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		r = fd == -1 ? -1 : (int)write(fd, "x", 1);
		if (fd != -1)
			close(fd);
	} else if (strcmp(op, "read") == 0 || strcmp(op, "rdwr") == 0) {
		fd = open(a, (op[1] == 'e' ? O_RDONLY : O_RDWR) | O_CLOEXEC);
		r = fd == -1 ? -1 : 0;
		if (fd != -1) {
			char buf[64];

			n = read(fd, buf, sizeof(buf));
			close(fd);
			snprintf(out, size, "%s %s: ok, read %zd bytes", op, a,
			    n);
			return;
		}
	} else if (strcmp(op, "mkdir") == 0)
		r = mkdir(a, 0755);
	else if (strcmp(op, "chdir") == 0)
		r = chdir(a);
	else if (strcmp(op, "unlink") == 0)
		r = unlink(a);
	else if (strcmp(op, "rename") == 0)
		r = rename(a, b);
	else if (strcmp(op, "kill") == 0)
		r = kill((pid_t)strtol(a, NULL, 10), SIGKILL);
	else if (strcmp(op, "setown") == 0) {
		r = pipe(p);
		if (r == 0 && (fcntl(p[0], F_SETOWN, (int)strtol(a, NULL,
		    10)) == -1 || fcntl(p[0], F_SETSIG, SIGKILL) == -1 ||
		    fcntl(p[0], F_SETFL, O_ASYNC) == -1 ||
		    write(p[1], "x", 1) != 1))
			r = -1;
	} else if (strncmp(op, "cdi-", 4) == 0) {
		if (strcmp(op, "cdi-list") == 0)
			r = kp_cdi_spec_list(list_name, list, err,
			    sizeof(err));
		else if (strcmp(op, "cdi-remove") == 0)
			r = kp_cdi_spec_remove(a, err, sizeof(err));
		else {
			size_t len = b[0] ? strtoul(b, NULL, 10) : 16;

			if ((c = spec_content(a, &len, op[9] == '-')) == NULL)
				return;
			r = kp_cdi_spec_write(a, c, len, err, sizeof(err));
			free(c);
		}
		snprintf(out, size, "%s %.40s: %s%s%s", op, a, r == 0 ? "ok" :
		    kp_err_name(r), r == 0 ? list : " ", r == 0 ? "" : err);
		return;
	} else if (strcmp(op, "raw-md") == 0) {
		raw_md(a, b);
		usleep(300000);
		snprintf(out, size, "raw-md %s %s: sent", a, b);
		return;
	} else if (strcmp(op, "raw-mdup") == 0) {
		raw_mdup(a, b);
		usleep(300000);
		snprintf(out, size, "raw-mdup %s: sent", a);
		return;
	} else if (strcmp(op, "raw-cdi") == 0) {
		raw_cdi(a, b[0] ? strtoul(b, NULL, 10) : 16);
		usleep(300000);
		snprintf(out, size, "raw-cdi %s: sent", a);
		return;
	} else {
		snprintf(out, size, "probe: unknown op %s", op);
		return;
	}
	snprintf(out, size, "%s %s: %s", op, a, r == -1 ? strerror(errno) :
	    "ok");
}

/*
 * Claim "isolation": what the nodeserver sees of other processes and of
 * hidden files (tests/e2e/isolation.test.js). Prints one line per finding
 * on stderr, "isolation: <what> <outcome>":
 *   proc <n>          each numeric entry of /proc (its pid namespace)
 *   mem <n> <result>  open(/proc/<n>/mem, O_RDWR)
 *   read <path> <result>   for each path in $KP_TEST_READ (':'-separated)
 *   list <path> <result>   for each path in $KP_TEST_LIST (the entries)
 *   status <line>     the Uid:, Gid:, Groups: lines of /proc/self/status
 * then "isolation: done"; the claim fails with "isolation probe".
 */
static void
probe_isolation(void)
{
	char		 path[300], line[256], list[4096], *save, *p, *env;
	struct dirent	*de;
	DIR		*d;
	FILE		*f;
	ssize_t		 n;
	int		 fd;

	if ((d = opendir("/proc")) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			fprintf(stderr, "isolation: proc %s\n", de->d_name);
			snprintf(path, sizeof(path), "/proc/%s/mem",
			    de->d_name);
			fd = open(path, O_RDWR | O_CLOEXEC);
			fprintf(stderr, "isolation: mem %s %s\n", de->d_name,
			    fd == -1 ? strerror(errno) : "opened");
			if (fd != -1)
				close(fd);
		}
		closedir(d);
	} else
		fprintf(stderr, "isolation: proc-unreadable %s\n",
		    strerror(errno));
	env = getenv("KP_TEST_READ");
	snprintf(list, sizeof(list), "%s", env ? env : "");
	for (p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":",
	    &save)) {
		if ((fd = open(p, O_RDONLY | O_CLOEXEC)) == -1) {
			fprintf(stderr, "isolation: read %s %s\n", p,
			    strerror(errno));
			continue;
		}
		n = read(fd, line, sizeof(line));
		close(fd);
		fprintf(stderr, "isolation: read %s %zd bytes\n", p, n);
	}
	env = getenv("KP_TEST_LIST");
	snprintf(list, sizeof(list), "%s", env ? env : "");
	for (p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":",
	    &save)) {
		if ((d = opendir(p)) == NULL) {
			fprintf(stderr, "isolation: list %s %s\n", p,
			    strerror(errno));
			continue;
		}
		fprintf(stderr, "isolation: list %s [", p);
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.')
				fprintf(stderr, " %s", de->d_name);
		fprintf(stderr, " ]\n");
		closedir(d);
	}
	if ((f = fopen("/proc/self/status", "re")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "Uid:", 4) == 0 ||
			    strncmp(line, "Gid:", 4) == 0 ||
			    strncmp(line, "Groups:", 7) == 0)
				fprintf(stderr, "isolation: status %s", line);
		fclose(f);
	}
	fprintf(stderr, "isolation: done\n");
}

/* 1 if claim i was a sandbox probe (answered here). */
static int
sandbox_claim(struct kp_prepare_results *res, size_t i, const char *name)
{
	char		 out[600];
	pthread_t	 th;
	void		*ret;
	pid_t		 pid;
	int		 err;

	if (strncmp(name, "syscall-", 8) == 0) {
		if (probe_syscall("nodeserver", name + 8, &err) == -1) {
			snprintf(out, sizeof(out), "%s: %s", name + 8,
			    strerror(err));
			kp_prepare_claim_error(res, i, out);
			return (1);
		}
	} else if (strncmp(name, "thread-syscall-", 15) == 0) {
		if (pthread_create(&th, NULL, probe_thread,
		    (void *)(name + 15)) != 0 || pthread_join(th, &ret) != 0)
			snprintf(out, sizeof(out), "thread: not started");
		else
			snprintf(out, sizeof(out), "thread: %s: %s", name + 15,
			    strerror(*(int *)ret));
		kp_prepare_claim_error(res, i, out);
		return (1);
	} else if (strcmp(name, "fcntl-signal") == 0) {
		probe_fcntl(out, sizeof(out));
		kp_prepare_claim_error(res, i, out);
		return (1);
	} else if (strcmp(name, "fork") == 0) {
		if ((pid = fork()) == 0)
			_exit(0);
		snprintf(out, sizeof(out), "fork: %s", pid == -1 ?
		    strerror(errno) : "a child was created");
		kp_prepare_claim_error(res, i, out);
		return (1);
	} else if (strcmp(name, "isolation") == 0) {
		probe_isolation();
		kp_prepare_claim_error(res, i, "isolation probe");
		return (1);
	} else if (strncmp(name, "open-", 5) == 0) {
		probe_open(getenv("KP_TEST_OPEN_PATH"), out, sizeof(out));
		kp_prepare_claim_error(res, i, out);
		return (1);
	} else if (strncmp(name, "probe-", 6) == 0) {
		char	 var[300], spec[600] = "", *dir;
		FILE	*f;

		/* The spec: $KP_TEST_PROBE_<n>, or the file <n> in
		 * $KP_TEST_PROBE_DIR (written by the test at any time; a
		 * --read-path directory). */
		snprintf(var, sizeof(var), "KP_TEST_PROBE_%s", name + 6);
		if (getenv(var) != NULL)
			snprintf(spec, sizeof(spec), "%s", getenv(var));
		else if ((dir = getenv("KP_TEST_PROBE_DIR")) != NULL) {
			snprintf(var, sizeof(var), "%s/%s", dir, name + 6);
			if ((f = fopen(var, "re")) != NULL) {
				if (fgets(spec, sizeof(spec), f) == NULL)
					spec[0] = '\0';
				spec[strcspn(spec, "\n")] = '\0';
				fclose(f);
			}
		}
		probe(spec[0] ? spec : NULL, out, sizeof(out));
		kp_prepare_claim_error(res, i, out);
		return (1);
	}
	return (0);
}

static void
sandbox_icpt(enum kp_call_phase phase, const struct kp_call *call)
{
	const char	*sc = getenv("KP_TEST_REGISTRAR_SYSCALL");
	const char	*path = getenv("KP_TEST_REGISTRAR_OPEN");
	char		 out[600];
	int		 err;

	if (phase != KP_CALL_BEFORE || strcmp(call->server, "registrar") ||
	    strstr(call->method, "GetInfo") == NULL)
		return;
	if (path != NULL) {
		probe_open(path, out, sizeof(out));
		fprintf(stderr, "probe: registrar %s\n", out);
	}
	if (sc != NULL)
		(void)probe_syscall("registrar", sc, &err);
}

/* --sandbox-user role:uid:gid */
static int
sandbox_user(struct kp_options *o, const char *a)
{
	static const char	*names[] = { "nodeserver", "registrar",
				    "publisher", "observer" };
	unsigned		 uid, gid;
	char			 role[32];
	int			 i;

	if (sscanf(a, "%31[a-z]:%u:%u", role, &uid, &gid) != 3)
		return (-1);
	for (i = 0; i < 4; i++)
		if (strcmp(role, names[i]) == 0)
			return (kp_sandbox_user(o, (enum kp_process)i, uid, gid));
	return (-1);
}

/* "off", "none" (on, no version: the setter's error) or a comma list. */
static int
device_metadata(struct kp_options *o, const char *a)
{
	static char	 buf[256];
	const char	*v[4];
	char		*p, *save;
	size_t		 n = 0;

	if (strcmp(a, "off") == 0)
		return (kp_device_metadata(o, 0, NULL, 0));
	snprintf(buf, sizeof(buf), "%s", strcmp(a, "none") == 0 ? "" : a);
	for (p = strtok_r(buf, ",", &save); p != NULL && n < 4;
	    p = strtok_r(NULL, ",", &save))
		v[n++] = p;
	return (kp_device_metadata(o, 1, v, n));
}

static int
sandbox_mode(struct kp_options *o, const char *a)
{
	if (strcmp(a, "enforce") == 0)
		return (kp_sandbox_mode(o, KP_SANDBOX_ENFORCE));
	if (strcmp(a, "complain") == 0)
		return (kp_sandbox_mode(o, KP_SANDBOX_COMPLAIN));
	if (strcmp(a, "off") == 0)
		return (kp_sandbox_mode(o, KP_SANDBOX_OFF));
	if (strcmp(a, "strict") == 0)
		return (kp_sandbox_mode(o, KP_SANDBOX_STRICT));
	return (kp_sandbox_mode(o, (enum kp_sandbox_mode)99));
}

/*
 * Plays a compromised hook against serialize.lock (rolling updates): finds
 * the fd the supervisor gave this nodeserver and tries to write the file,
 * truncate it, change its mode, and reopen it for writing through
 * /proc/self/fd. Prints "lockfd <found> write=<errno> ..." (0: it worked).
 */
static void
lockfd_attack(void)
{
	char		 l[300], target[512];
	DIR		*d;
	struct dirent	*de;
	ssize_t		 n;
	int		 fd = -1, w, t, m, r, nfd;

	if ((d = opendir("/proc/self/fd")) == NULL) {
		fprintf(stderr, "lockfd none opendir=%d\n", errno);
		return;
	}
	while ((de = readdir(d)) != NULL && fd == -1) {
		snprintf(l, sizeof(l), "/proc/self/fd/%s", de->d_name);
		n = readlink(l, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strlen(target) > 15 && strcmp(target + strlen(target) - 15,
		    "/serialize.lock") == 0)
			fd = atoi(de->d_name);
	}
	closedir(d);
	if (fd == -1) {
		fprintf(stderr, "lockfd none\n");
		return;
	}
	w = write(fd, "x", 1) == 1 ? 0 : errno;
	t = ftruncate(fd, 0) == 0 ? 0 : errno;
	m = fchmod(fd, 0666) == 0 ? 0 : errno;
	snprintf(l, sizeof(l), "/proc/self/fd/%d", fd);
	nfd = open(l, O_WRONLY | O_CLOEXEC);
	r = nfd >= 0 ? 0 : errno;
	if (nfd >= 0)
		close(nfd);
	fprintf(stderr, "lockfd found write=%d truncate=%d chmod=%d "
	    "reopen=%d\n", w, t, m, r);
}

static int	prepare_body(const struct kp_claim *, size_t,
		    struct kp_prepare_results *, char *, size_t);

static int
multi_devices(struct kp_prepare_results *res, size_t i, const char *name)
{
	static const char	*r0[] = { "req-0" }, *r01[] = { "req-0/sub",
				    "req-1" }, *r1[] = { "req-1" },
				*bad[] = { "Not_A_Label" };
	static const char	*const names[] = { "dev-a", "dev-b", "dev-c" };
	const char *const	*reqs[3] = { r0, r01, r1 };
	const size_t		 nreqs[3] = { 1, 2, 1 };
	struct kp_prepared_device dev;
	char			 cdi[200];
	const char		*ids[1] = { cdi };
	size_t			 k;

	for (k = 0; k < 3; k++) {
		memset(&dev, 0, sizeof(dev));
		dev.struct_size = sizeof(dev);
		dev.request_names = name[0] == 'b' ? bad : reqs[k];
		dev.n_request_names = name[0] == 'b' ? 1 : nreqs[k];
		dev.pool_name = "pool-a";
		dev.device_name = names[k];
		snprintf(cdi, sizeof(cdi), "%s/test=%s", drv.name, names[k]);
		dev.cdi_device_ids = ids;
		dev.n_cdi_device_ids = 1;
		if (kp_prepare_add_device(res, i, &dev) != 0)
			return (-1);
	}
	/* Metadata attributes of two of them (ignored with metadata off). */
	if (name[0] != 'b') {
		static const int64_t	 idx[] = { 3, 1 };
		static const char	*caps[] = { "<fast>", "a&b" };
		const struct kp_attribute a[] = {
			KP_ATTR_STRING("resource.kubernetes.io/pciBusID",
			    "0000:03:00.0"),
			KP_ATTR_INT("index", 7),
			KP_ATTR_BOOL("healthy", 1),
		};
		const struct kp_attribute b[] = {
			KP_ATTR_INTS("numa", idx, 2),
			KP_ATTR_STRINGS("caps", caps, 2),
			KP_ATTR_VERSION("driverVersion", "1.2.3"),
		};

		static const char	*ips[] = { "10.0.0.2/24",
					    "fd00::2/64" };

		if (kp_prepare_device_metadata(res, i, "pool-a", "dev-a", a,
		    3) != 0 || kp_prepare_device_metadata(res, i, "pool-a",
		    "dev-b", b, 3) != 0 ||
		    kp_prepare_device_network_data(res, i, "pool-a", "dev-b",
		    "eth1", ips, 2, "02:00:00:00:00:01") != 0 ||
		    kp_prepare_device_network_data(res, i, "pool-a", "dev-c",
		    NULL, NULL, 0, "02:00:00:00:00:02") != 0)
			return (-1);
	}
	return (0);
}

static int
prepare(void *user, const struct kp_claim *c, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	int	 r;

	hook_enter();
	r = prepare_body(c, n, res, errbuf, errsize);
	hook_leave();
	return (r);
}

static int
prepare_body(const struct kp_claim *c, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	struct kp_prepared_device	 dev;
	const char			*reqs[1] = { "req-0" };
	char				 cdi[200];
	const char			*ids[1] = { cdi };
	size_t				 i;
	int				 waited;

	for (waited = 0; waited < drv.slow_ms; waited += 10) {
		if (kp_prepare_cancelled(res))
			break;
		usleep(10000);
	}
	if (drv.hook_fail) {
		snprintf(errbuf, errsize, "test hook failure");
		return (-1);
	}
	for (i = 0; i < n; i++) {
		/* The special names below (and in sandbox_claim) start with
		 * one of these letters; others, such as the bench's load,
		 * skip the chain of compares: bare_server runs none. */
		if (strchr("bfhiklmopst", c[i].name[0]) == NULL ||
		    c[i].name[0] == '\0')
			goto plain;
		if (sandbox_claim(res, i, c[i].name))
			continue;
		if (strncmp(c[i].name, "lockfd-", 7) == 0)
			lockfd_attack();
		/* "kplog-<text>": a line through kp_log() from the hook
		 * (a warning, then an info line at V(3)). */
		if (strncmp(c[i].name, "kplog-", 6) == 0) {
			kp_log(KP_LOG_WARNING, 0, "hook says %s (library %s)",
			    c[i].name + 6, kp_version());
			kp_log(KP_LOG_INFO, 3, "hook whispers %s", c[i].name + 6);
		}
		if (strncmp(c[i].name, "state-", 6) == 0) {
			char	 tag[300];

			snprintf(tag, sizeof(tag), "HOOKSTATE %s",
			    c[i].name + 6);
			log_state(tag);
		}
		/* "hang-forever": a hook that never returns, not even when
		 * kubelet gives up (tests/e2e/exhaustion.test.js). */
		if (strncmp(c[i].name, "hang-forever", 12) == 0) {
			fprintf(stderr, "hook hangs forever\n");
			for (;;)
				pause();
		}
		if (strncmp(c[i].name, "hostile-", 8) == 0) {
			hostile(c[i].name + 8);
			sleep(5);	/* the supervisor kills us here */
		}
plain:
		if (drv.log_claims == 1)
			fprintf(stderr, "prepared %s/%s\n", c[i].namespace_,
			    c[i].name);
		else if (drv.log_claims == 2)
			kp_log(KP_LOG_INFO, 0, "prepared %s/%s",
			    c[i].namespace_, c[i].name);
		if (drv.fail_claim && strcmp(c[i].name, drv.fail_claim) == 0) {
			kp_prepare_claim_error(res, i, "test claim failure");
			continue;
		}
		if (drv.hook_health) {
			struct kp_device_health hd = { KP_DEVICE_HEALTH_INIT };
			char	 herr[KP_ERROR_SIZE];

			hd.pool = "hook-pool";
			hd.device = c[i].name;
			hd.status = KP_HEALTH_UNHEALTHY;
			hd.last_updated = 1700000000;
			hd.message = "reported by the prepare hook";
			if (kp_hook_health_report(&hd, 1, herr,
			    sizeof(herr)) != 0)
				fprintf(stderr, "hook health: %s\n", herr);
		}
		log_allocation(&c[i]);
		if (strncmp(c[i].name, "info-", 5) == 0) {
			if (info_devices(res, i, &c[i]) != 0)
				return (-1);
			continue;
		}
		if (strncmp(c[i].name, "infoq-", 6) == 0) {
			info_quiet(&c[i]);
			continue;
		}
		/* "multi-*": three devices, requests req-0 (a, b) and req-1
		 * (b, c), so per-request results can be checked. "badreq-*":
		 * a request name that is no DNS label. */
		if (strncmp(c[i].name, "multi-", 6) == 0 ||
		    strncmp(c[i].name, "badreq-", 7) == 0) {
			if (multi_devices(res, i, c[i].name) != 0)
				return (-1);
			continue;
		}
		snprintf(cdi, sizeof(cdi), "%s/test=%s", drv.name, c[i].name);
		memset(&dev, 0, sizeof(dev));
		dev.struct_size = sizeof(dev);
		dev.request_names = reqs;
		dev.n_request_names = 1;
		dev.pool_name = "pool-a";
		dev.device_name = c[i].name;
		dev.cdi_device_ids = ids;
		dev.n_cdi_device_ids = 1;
		dev.share_id = drv.share_id;
		if (kp_prepare_add_device(res, i, &dev) != 0)
			return (-1);
	}
	return (0);
}

static int
unprepare(void *user, const struct kp_claim *c, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	size_t	 i;
	int	 waited;

	hook_enter();
	for (waited = 0; waited < drv.slow_ms; waited += 10)
		usleep(10000);
	for (i = 0; i < n; i++) {
		if (drv.fail_claim && strcmp(c[i].name, drv.fail_claim) == 0)
			kp_unprepare_claim_error(res, i, "test claim failure");
		if (strncmp(c[i].name, "info-", 5) == 0) {
			const struct kp_claim_info *ci = kp_claim_info(&c[i]);

			fprintf(stderr, "UNPREPINFO %s %s absent=%u json=%s "
			    "results=%zu\n", c[i].name, ci ? ci->uid : "-",
			    ci ? ci->absent : 0, ci && ci->json ? "yes" : "no",
			    ci ? ci->n_results : 0);
		}
	}
	hook_leave();
	if (drv.hook_fail) {
		snprintf(errbuf, errsize, "test hook failure");
		return (-1);
	}
	return (0);
}

static int
init_hook(void *user, char *errbuf, size_t errsize)
{
	const char	*spec = getenv("KP_TEST_INIT_PROBE");
	char		 out[300], *all, *one, *save;
	int		 i;

	/* The init hook's CDI requests (before the reader thread runs):
	 * probes separated by ';', "wait:<path>" waits (10 s at most) for
	 * the test to make path. */
	if (spec != NULL && (all = strdup(spec)) != NULL) {
		for (one = strtok_r(all, ";", &save); one != NULL;
		    one = strtok_r(NULL, ";", &save)) {
			if (strncmp(one, "wait:", 5) == 0) {
				for (i = 0; i < 1000 && access(one + 5,
				    F_OK) != 0; i++)
					usleep(10000);
				continue;
			}
			probe(one, out, sizeof(out));
			fprintf(stderr, "init probe: %s\n", out);
		}
		free(all);
	}
	if (drv.channels)
		log_state("INITSTATE");
	if (drv.init_fail) {
		snprintf(errbuf, errsize, "test init failure");
		return (-1);
	}
	return (0);
}

/* Logs every stream message: stream interceptors see each one. */
static int
stream_icpt(void *user, enum kp_call_phase phase, const struct kp_call *call,
    char *msg, size_t msgsize)
{
	fprintf(stderr, "stream-interceptor %s %s len=%zu\n",
	    phase == KP_CALL_BEFORE ? "before" : phase == KP_CALL_AFTER ?
	    "after" : "send", call->method, call->response_len);
	return (0);
}

/* Logs every call's phase, proving interceptors run in order. */
static int
icpt(void *user, enum kp_call_phase phase, const struct kp_call *call,
    char *msg, size_t msgsize)
{
	const char	*tag = user;

	sandbox_icpt(phase, call);
	fprintf(stderr, "interceptor %s %s %s status=%d\n", tag,
	    phase == KP_CALL_BEFORE ? "before" : "after", call->method,
	    call->status);
	if (phase == KP_CALL_BEFORE && strstr(call->method, "Unprepare") &&
	    getenv("KP_TEST_DENY_UNPREPARE") != NULL && tag[0] == 'B') {
		snprintf(msg, msgsize, "denied by interceptor %s", tag);
		return (7);	/* PERMISSION_DENIED */
	}
	return (0);
}

/*
 * --heap-marker <text>: the text reversed, in this process's heap for its
 * whole life (only there: argv keeps it the right way round), so that a
 * test can tell which processes carry the driver's heap.
 */
static char	*volatile heap_mark;	/* volatile: kept, never read */

static int
heap_marker(const char *a)
{
	size_t	 i, n = strlen(a);
	char	*m;

	if ((m = malloc(n + 1)) == NULL)
		return (-1);
	for (i = 0; i < n; i++)
		m[i] = a[n - 1 - i];
	m[n] = '\0';
	heap_mark = m;
	return (0);
}

/*
 * --random-heap-marker: "kp-rnd-" and 16 random hex digits, made by this
 * run of main() and put in its heap, and printed ("heap-marker <hex>"):
 * a nodeserver whose main() ran again holds another one, a forked one
 * (--fork-hooks) holds the driver's.
 */
static int
random_heap_marker(void)
{
	unsigned char	 r[8];
	char		*m;
	size_t		 i;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r) ||
	    (m = malloc(7 + 2 * sizeof(r) + 1)) == NULL)
		return (-1);
	memcpy(m, "kp-rnd-", 7);
	for (i = 0; i < sizeof(r); i++)
		snprintf(m + 7 + 2 * i, 3, "%02x", r[i]);
	heap_mark = m;
	printf("heap-marker %s\n", m + 7);
	fflush(stdout);
	return (0);
}

/*
 * --driver-name-file <f>: the driver name read from f at each run of
 * main() (as a driver reading its config file): an exec'd nodeserver's
 * main() sees what f holds then. Empty: no driver name set.
 */
static int
driver_name_file(struct kp_options *o, const char *f)
{
	char	 b[256] = "";
	FILE	*fp;

	if ((fp = fopen(f, "r")) == NULL)
		return (-1);
	if (fgets(b, sizeof(b), fp) == NULL)
		b[0] = '\0';
	fclose(fp);
	b[strcspn(b, "\n")] = '\0';
	snprintf(drv.name, sizeof(drv.name), "%s", b);
	return (kp_driver_name(o, b));
}

/* --log-callback: every line the driver's log function gets, with the
 * pid it runs in (the driver process, or another). */
static void
log_cb(void *user, enum kp_log_level level, int verbosity, const char *role,
    const char *msg)
{
	(void)user;
	fprintf(stderr, "CB pid=%d level=%d v=%d role=%s: %s\n", (int)getpid(),
	    (int)level, verbosity, role, msg);
}

static int
apply(struct kp_options *o, int ch, const char *a)
{
	switch (ch) {
	case 'd':
		snprintf(drv.name, sizeof(drv.name), "%s", a);
		return (kp_driver_name(o, a));
	case 'n': return (kp_node_name(o, a));
	case 'r': return (kp_registrar_socket_path(o, a));
	case 'p': return (kp_plugin_socket_path(o, a));
	case 'k': return (kp_kubelet_plugin_socket_path(o, a));
	case 'c': return (kp_kube_client_kubeconfig(o, a, NULL));
	case 'U': return (kp_node_uid(o, a));
	case 'u': return (kp_allowed_peer_uid(o, (uid_t)strtoul(a, 0, 10)));
	case 'm': return (kp_socket_mode(o, (unsigned)strtoul(a, 0, 8)));
	case 'g': return (kp_grpc_verbosity(o, (int)strtol(a, 0, 10)));
	case 'v': return (kp_log_verbosity(o, (int)strtol(a, 0, 10)));
	case 'w': return (kp_serialize(o, 0) ||
	    kp_worker_threads(o, (int)strtol(a, 0, 10)));
	case '1': return (kp_node_v1alpha4(o, 1));
	case '2': return (kp_node_v1beta1(o, 0));
	case '3': return (kp_node_v1(o, 0));
	case 'F': drv.fail_claim = a; return (0);
	case 'S': drv.share_id = a; return (0);
	case 'H': drv.hook_fail = 1; return (0);
	case 'I': drv.init_fail = 1; return (0);
	case 'W': drv.slow_ms = (int)strtol(a, 0, 10); return (0);
	case 'T': drv.spawn_thread = 1; return (0);
	case 300: return (sandbox_mode(o, a));
	case 301: return (kp_sandbox_capability(o, a));
	case 302: return (kp_sandbox_syscall(o, a));
	case 303: return (kp_sandbox_hide_path(o, a));
	case 304: return (sandbox_user(o, a));
	case 305: return (kp_grpc_max_connections(o, (int)strtol(a, 0, 10)));
	case 306:
		return (kp_grpc_handshake_timeout(o, (int)strtol(a, 0, 10)));
	case 330: return (kp_sandbox_state_dir(o, a));
	case 333: return (kp_journal_dir(o, a));
	case 331: return (kp_sandbox_read_path(o, a));
	case 332: return (kp_cdi_directory(o, a));
	case 340: return (kp_sandbox_uid_base(o, (uid_t)strtoul(a, 0, 10)));
	case 341: return (kp_kube_client_in_cluster(o));
	case 342: return (kp_kube_api_qps(o, strtod(a, NULL),
	    strchr(a, ':') ? (int)strtol(strchr(a, ':') + 1, 0, 10) : 10));
	case 343: return (kp_kube_api_timeout(o, (int)strtol(a, 0, 10)));
	case 383: return (kp_http_endpoint(o, a));
	case 'i':
		return (kp_grpc_interceptor(o, icpt, "A") ||
		    kp_grpc_interceptor(o, icpt, "B"));
	case 310: return (kp_health_service(o, 0));
	case 311: return (kp_health_v1(o, 0));
	case 312: return (kp_health_v1alpha1(o, 0));
	case 313: return (kp_grpc_stream_interceptor(o, stream_icpt, NULL));
	case 314: drv.hook_health = 1; return (0);
	case 370:
		drv.channels = 1;
		return (kp_state_callback(o, state_cb, NULL) ||
		    kp_error_callback(o, error_cb, NULL));
	case 320: return (kp_kubelet_root_dir(o, a));
	case 321: return (kp_registrar_directory_path(o, a));
	case 322: return (kp_registrar_socket_filename(o, a));
	case 323: return (kp_plugin_data_directory_path(o, a));
	case 324: return (kp_plugin_socket(o, a));
	case 325: return (device_metadata(o, a));
	case 350: return (kp_rolling_update(o, a));
	case 351: return (kp_flock_directory_path(o, a));
	case 352: return (kp_registration_service(o, 0));
	case 353: return (kp_dra_service(o, 0));
	case 354: drv.counter = a; return (0);
	case 355: drv.tag = a; return (0);
	case 356:
		drv.all_nodes = 1;
		return (kp_reconcile_pool_with_name(o, a));
	case 380: return (kp_shutdown_grace(o, (int)strtol(a, 0, 10)));
	case 404: return (kp_hung_child_timeout(o, (int)strtol(a, 0, 10)));
	case 381: return (kp_termination_message_path(o, a[0] ? a : NULL));
	case 382: drv.exit_on_stop = 1; return (0);
	case 384: return (kp_validate_qualified_names(o, 0));
	case 385:
		drv.republish_ms = (int)strtol(a, 0, 10);
		return (0);
	case 390: drv.quiet = 1; return (0);
	case 427:
		if (strcmp(a, "stderr") != 0 && strcmp(a, "kplog") != 0)
			return (-1);
		drv.log_claims = a[0] == 's' ? 1 : 2;
		return (0);
	case 391: drv.start_twice = 1; return (0);
	case 392: return (heap_marker(a));
	case 393: return (kp_log_callback(o, log_cb, NULL));
	case 394: return (random_heap_marker());
	case 395: return (kp_sandbox_exec(o, 0));
	case 398: return (kp_state_initial(o, a, strlen(a)));
	case 399: {
		/* --initial-state-big N: N bytes of 'x' (red team). */
		size_t	 n = (size_t)strtoul(a, NULL, 10);
		char	*b = malloc(n + 1);
		int	 rr;

		if (b == NULL)
			return (-1);
		memset(b, 'x', n);
		rr = kp_state_initial(o, b, n);
		free(b);
		return (rr);
	}
	case 400: {
		/* --initial-state-file F: the state read from F by each
		 * run of main(); none when F does not exist (red team). */
		char	 b[256];
		size_t	 n;
		FILE	*fp;

		if ((fp = fopen(a, "r")) == NULL)
			return (0);
		n = fread(b, 1, sizeof(b), fp);
		fclose(fp);
		return (kp_state_initial(o, b, n));
	}
	case 396: return (driver_name_file(o, a));
	case 397: {
		/* --stderr-to <f>: main() sends its stderr to a file, as a
		 * daemon might, before kp_start(). */
		int fd = open(a, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		    0600);

		return (fd == -1 || dup2(fd, 2) == -1 ? -1 : close(fd));
	}
	case 402: return (kp_policy_main_confine(o, 1));
	case 403: return (kp_policy_main_ioctl(o, strtoul(a, NULL, 0)));
	case 401: {
		/* --ioctl-before-start: a device call main() makes before
		 * kp_start(), which the exec'd nodeserver's run refuses. */
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd != -1) {
			(void)ioctl(fd, 0x4C82);	/* LOOP_CTL_GET_FREE */
			close(fd);
		}
		return (0);
	}
	default: return (-1);
	}
}

static int
parse(int argc, char **argv, struct kp_options *o)
{
	static const struct option lo[] = {
		{ "driver-name", 1, 0, 'd' }, { "node-name", 1, 0, 'n' },
		{ "registrar-socket", 1, 0, 'r' },
		{ "plugin-socket", 1, 0, 'p' },
		{ "kubelet-plugin-socket", 1, 0, 'k' },
		{ "kubeconfig", 1, 0, 'c' }, { "allow-uid", 1, 0, 'u' },
		{ "socket-mode", 1, 0, 'm' }, { "grpc-verbosity", 1, 0, 'g' },
		{ "workers", 1, 0, 'w' }, { "v1alpha4", 0, 0, '1' },
		{ "no-v1beta1", 0, 0, '2' }, { "no-v1", 0, 0, '3' },
		{ "fail-claim", 1, 0, 'F' }, { "share-id", 1, 0, 'S' },
		{ "hook-fail", 0, 0, 'H' }, { "init-fail", 0, 0, 'I' },
		{ "slow-ms", 1, 0, 'W' }, { "interceptors", 0, 0, 'i' },
		{ "sandbox-mode", 1, 0, 300 }, { "sandbox-cap", 1, 0, 301 },
		{ "sandbox-syscall", 1, 0, 302 }, { "hide-path", 1, 0, 303 },
		{ "sandbox-user", 1, 0, 304 },
		{ "max-connections", 1, 0, 305 },
		{ "handshake-timeout-ms", 1, 0, 306 },
		{ "state-dir", 1, 0, 330 }, { "read-path", 1, 0, 331 },
		{ "cdi-dir", 1, 0, 332 }, { "journal-dir", 1, 0, 333 },
		{ "uid-base", 1, 0, 340 }, { "in-cluster", 0, 0, 341 },
		{ "kube-qps", 1, 0, 342 }, { "kube-timeout-ms", 1, 0, 343 },
		{ "http-endpoint", 1, 0, 383 },
		{ "spawn-thread", 0, 0, 'T' }, { "node-uid", 1, 0, 'U' },
		{ "no-health", 0, 0, 310 }, { "no-health-v1", 0, 0, 311 },
		{ "no-health-v1alpha1", 0, 0, 312 },
		{ "stream-interceptor", 0, 0, 313 },
		{ "hook-health", 0, 0, 314 }, { "channels", 0, 0, 370 },
		{ "kubelet-root-dir", 1, 0, 320 }, { "registrar-dir", 1, 0, 321 },
		{ "registrar-file", 1, 0, 322 },
		{ "plugin-data-dir", 1, 0, 323 },
		{ "plugin-socket-name", 1, 0, 324 },
		{ "device-metadata", 1, 0, 325 },
		{ "rolling-update-uid", 1, 0, 350 },
		{ "flock-dir", 1, 0, 351 },
		{ "no-registration", 0, 0, 352 }, { "no-dra", 0, 0, 353 },
		{ "counter-file", 1, 0, 354 }, { "tag", 1, 0, 355 },
		{ "reconcile-pool", 1, 0, 356 },
		{ "shutdown-grace-ms", 1, 0, 380 },
		{ "hung-ms", 1, 0, 404 },
		{ "termination-log", 1, 0, 381 },
		{ "exit-on-stop", 0, 0, 382 },
		{ "no-qualified-names-check", 0, 0, 384 },
		{ "error-republish", 1, 0, 385 },
		{ "quiet", 0, 0, 390 }, { "start-twice", 0, 0, 391 },
		{ "log-per-claim", 1, 0, 427 },
		{ "heap-marker", 1, 0, 392 },
		{ "log-callback", 0, 0, 393 },
		{ "random-heap-marker", 0, 0, 394 },
		{ "fork-hooks", 0, 0, 395 },
		{ "driver-name-file", 1, 0, 396 },
		{ "stderr-to", 1, 0, 397 },
		{ "ioctl-before-start", 0, 0, 401 },
		{ "initial-state", 1, 0, 398 },
		{ "initial-state-big", 1, 0, 399 },
		{ "initial-state-file", 1, 0, 400 },
		{ "main-confine", 0, 0, 402 }, { "main-ioctl", 1, 0, 403 },
		{ 0, 0, 0, 0 }
	};
	int	 ch;

	while ((ch = getopt_long(argc, argv, "v:", lo, NULL)) != -1) {
		if (apply(o, ch, optarg) != 0) {
			printf("error %s %s\n", "KP_EINVAL",
			    kp_options_last_error(o));
			return (-1);
		}
	}
	return (0);
}

/*
 * "publish <devices> [pools] [tag] [changed] [qual]": pools named pool-0..,
 * each with <devices> devices (at most 4096) in slices of at most 128,
 * attributes from tag (so a republish with another tag changes every
 * device); the first <changed> devices of pool-0 get "<tag>-x" instead
 * (bench/run.js: a republish with one device changed); device 0 of pool
 * <qual> gets an attribute "<driver>/model" (ValidateQualifiedNames).
 */
#define PUB_MAX_POOL	4096
#define PUB_MAX_POOLS	8

static int
publish(struct kp_plugin *p, const char *args)
{
	static struct kp_device		 devs[PUB_MAX_POOLS * PUB_MAX_POOL];
	static struct kp_attribute	 attrs[PUB_MAX_POOLS * PUB_MAX_POOL][3];
	static struct kp_capacity	 caps[PUB_MAX_POOLS * PUB_MAX_POOL][1];
	static char			 names[PUB_MAX_POOLS * PUB_MAX_POOL][32];
	static char			 pools[PUB_MAX_POOLS][16];
	static char			 tag[64], xtag[72], own[80];
	static struct kp_slice		 slices[PUB_MAX_POOLS][PUB_MAX_POOL /
					    128];
	struct kp_pool			 pl[PUB_MAX_POOLS];
	struct kp_resources		 res;
	int				 n = 0, np = 1, changed = 0, i, k, d = 0;
	int				 qual = -1;

	tag[0] = '\0';
	sscanf(args, "%d %d %63s %d %d", &n, &np, tag, &changed, &qual);
	snprintf(own, sizeof(own), "%s/model", drv.name);
	if (n < 0 || n > PUB_MAX_POOL || np < 0 || np > PUB_MAX_POOLS)
		return (-1);
	snprintf(xtag, sizeof(xtag), "%s-x", tag[0] ? tag : "none");
	memset(pl, 0, sizeof(pl));
	for (k = 0; k < np; k++) {
		snprintf(pools[k], sizeof(pools[k]), "pool-%d", k);
		pl[k] = (struct kp_pool){ KP_POOL_INIT, .name = pools[k],
		    .slices = slices[k], .all_nodes = drv.all_nodes };
		for (i = 0; i < n; i++, d++) {
			snprintf(names[d], sizeof(names[d]), "dev-%d", i);
			attrs[d][0] = (struct kp_attribute)KP_ATTR_INT(
			    "index", i);
			attrs[d][1] = (struct kp_attribute)KP_ATTR_STRING(
			    "example.com/tag", k == 0 && i < changed ? xtag :
			    tag[0] ? tag : "none");
			attrs[d][2] = (struct kp_attribute)KP_ATTR_VERSION(
			    "example.com/version", "1.2.3");
			if (k == qual && i == 0)
				attrs[d][2] = (struct kp_attribute)
				    KP_ATTR_STRING(own, "x");
			caps[d][0] = (struct kp_capacity)KP_CAPACITY("memory",
			    "1Gi");
			devs[d] = (struct kp_device){ KP_DEVICE_INIT,
			    .name = names[d], .attributes = attrs[d],
			    .n_attributes = 3, .capacities = caps[d],
			    .n_capacities = 1 };
			if (i % 128 == 0)
				slices[k][pl[k].n_slices++] = (struct kp_slice){
				    KP_SLICE_INIT, .devices = &devs[d] };
			slices[k][pl[k].n_slices - 1].n_devices++;
		}
	}
	res = (struct kp_resources){ KP_RESOURCES_INIT, .pools = pl,
	    .n_pools = (size_t)np };
	return (kp_publish_resources(p, &res));
}

/*
 * "publish-split <devices> <sets>": pool-0 as one flat slice with
 * split_slices set: <sets> counter sets set-0.. (memory 8Gi each) and
 * <devices> devices, device i consuming 1Gi of set-(i % sets).
 */
static int
publish_split(struct kp_plugin *p, const char *args)
{
	static struct kp_device			devs[512];
	static struct kp_counter_consumption	use[512];
	static struct kp_counter_set		sets[64];
	static char				names[512][32], snames[64][16];
	static const struct kp_counter		one[] = {
		KP_COUNTER("memory", "1Gi") };
	static const struct kp_counter		all[] = {
		KP_COUNTER("memory", "8Gi") };
	struct kp_slice				sl;
	struct kp_pool				pl;
	struct kp_resources			res;
	int					n = 0, ns = 0, i;

	sscanf(args, "%d %d", &n, &ns);
	if (n < 0 || n > 512 || ns < 0 || ns > 64)
		return (-1);
	for (i = 0; i < ns; i++) {
		snprintf(snames[i], sizeof(snames[i]), "set-%d", i);
		sets[i] = (struct kp_counter_set){ KP_COUNTER_SET_INIT,
		    .name = snames[i], .counters = all, .n_counters = 1 };
	}
	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "dev-%d", i);
		devs[i] = (struct kp_device){ KP_DEVICE_INIT,
		    .name = names[i] };
		if (ns > 0) {
			use[i] = (struct kp_counter_consumption){
			    KP_COUNTER_CONSUMPTION_INIT,
			    .counter_set = snames[i % ns], .counters = one,
			    .n_counters = 1 };
			devs[i].consumes_counters = &use[i];
			devs[i].n_consumes_counters = 1;
		}
	}
	sl = (struct kp_slice){ KP_SLICE_INIT, .devices = devs,
	    .n_devices = (size_t)n, .shared_counters = sets,
	    .n_shared_counters = (size_t)ns };
	pl = (struct kp_pool){ KP_POOL_INIT, .name = "pool-0", .slices = &sl,
	    .n_slices = 1, .split_slices = 1 };
	res = (struct kp_resources){ KP_RESOURCES_INIT, .pools = &pl,
	    .n_pools = 1 };
	return (kp_publish_resources(p, &res));
}

/* "health <pool> <device> <status> [timeout_s [message]]" */
static int
health(struct kp_plugin *p, const char *args)
{
	struct kp_device_health	 d = { KP_DEVICE_HEALTH_INIT };
	char			 pool[300], dev[100], msg[2100];
	int			 st = 0, timeout = 0, n;

	msg[0] = '\0';
	n = sscanf(args, "%299s %99s %d %d %2099[^\n]", pool, dev, &st,
	    &timeout, msg);
	if (n < 3)
		return (KP_EINVAL);
	d.pool = pool;
	d.device = dev;
	d.status = (enum kp_health_status)st;
	d.last_updated = (int64_t)time(NULL);
	d.timeout_s = timeout;
	d.message = msg;
	return (kp_health_report(p, &d, 1));
}

/*
 * "md-update <ns> <name> <uid> <request> <device|-> [dup]": the device's
 * metadata after prepare (kp_update_request_metadata), as an NRI hook
 * would write it: two attributes and network data; "-" for no device,
 * "dup" for a repeated attribute name (refused).
 */
static int
md_update(struct kp_plugin *p, const char *args)
{
	static const char		*ips[] = { "10.1.0.5/24" };
	struct kp_attribute		 a[] = {
		KP_ATTR_STRING("ifName", "net1"),
		KP_ATTR_INT("vlan", 42),
	};
	struct kp_metadata_device	 d = { KP_METADATA_DEVICE_INIT };
	char				 ns[80], name[300], uid[140], req[140];
	char				 dev[80], extra[16] = "";

	if (sscanf(args, "%79s %299s %139s %139s %79s %15s", ns, name, uid,
	    req, dev, extra) < 5)
		return (KP_EINVAL);
	if (strcmp(extra, "dup") == 0)
		a[1].name = "ifName";
	d.pool = "pool-a";
	d.device = dev;
	d.attributes = a;
	d.n_attributes = 2;
	d.interface_name = "net1";
	d.ips = ips;
	d.n_ips = 1;
	d.hardware_address = "02:00:00:00:01:05";
	return (kp_update_request_metadata(p, ns, name, uid, req, &d,
	    strcmp(dev, "-") == 0 ? 0 : 1));
}

/* One device with a taint: dropped where DRADeviceTaints is off. */
static int
publish_taint(struct kp_plugin *p)
{
	static const struct kp_taint	 taints[] = { { KP_TAINT_INIT,
					    .key = "example.com/broken",
					    .value = "yes",
					    .effect = KP_TAINT_NO_SCHEDULE } };
	struct kp_device		 d = { KP_DEVICE_INIT,
					    .name = "tainted-0",
					    .taints = taints,
					    .n_taints = 1 };
	struct kp_slice			 s = { KP_SLICE_INIT, .devices = &d,
					    .n_devices = 1 };
	struct kp_pool			 pl = { KP_POOL_INIT,
					    .name = "pool-t", .slices = &s,
					    .n_slices = 1 };
	struct kp_resources		 res = { KP_RESOURCES_INIT,
					    .pools = &pl, .n_pools = 1 };

	return (kp_publish_resources(p, &res));
}

/* "state <text>" or "state-big <n>" */
static int
state_cmd(struct kp_plugin *p, const char *line)
{
	static char	 big[KP_STATE_MAX + 4096];
	size_t		 n;

	if (strncmp(line, "state-big", 9) == 0) {
		n = strtoul(line + 9, NULL, 10);
		if (n > sizeof(big))
			n = sizeof(big);
		memset(big, 'x', n);
		return (kp_state_set(p, big, n));
	}
	line += 5;
	line += strspn(line, " ");
	n = strcspn(line, "\n");
	return (kp_state_set(p, line, n));
}

/*
 * --exit-on-stop: what a driver's main does: when the plugin stops on its
 * own (it can no longer be reached), print "plugin-stopped <KP_NAME>
 * <reason>", kp_stop, exit 3 (0 after a clean SIGTERM stop).
 */
static pthread_mutex_t	 plugin_lock = PTHREAD_MUTEX_INITIALIZER;
static int		 plugin_gone;

static void *
wait_thread(void *arg)
{
	struct kp_plugin	*p = arg;
	char			 reason[KP_ERROR_SIZE];
	int			 r;

	/* One look at a time, under the lock the final kp_stop takes. */
	for (;;) {
		pthread_mutex_lock(&plugin_lock);
		if (plugin_gone) {
			pthread_mutex_unlock(&plugin_lock);
			return (NULL);
		}
		r = kp_plugin_wait(p, 0, reason, sizeof(reason));
		if (r != KP_ETIMEDOUT)
			break;
		pthread_mutex_unlock(&plugin_lock);
		usleep(50000);
	}
	printf("plugin-stopped %s %s\n", kp_err_name(r), reason);
	fflush(stdout);
	(void)kp_stop(p);
	_exit(r == 0 ? 0 : 3);
	return (NULL);
}

static void *
idle_thread(void *arg)
{
	pause();
	return (arg);
}

/*
 * "loopctl": what a loop-device driver's main() asks of /dev/loop-control
 * after kp_start() (LOOP_CTL_GET_FREE), printed as "loopctl loop<n>" or
 * "loopctl <errno name> <open|ioctl>" (confine.test.js).
 */
static void
loopctl(void)
{
	int	 fd, n;

	if ((fd = open("/dev/loop-control", O_RDWR | O_CLOEXEC)) == -1) {
		printf("loopctl %s open\n", strerrorname_np(errno));
		return;
	}
	if ((n = ioctl(fd, LOOP_CTL_GET_FREE)) < 0)
		printf("loopctl %s ioctl\n", strerrorname_np(errno));
	else
		printf("loopctl loop%d\n", n);
	close(fd);
}

static void
commands(struct kp_plugin *p, int fds_before)
{
	enum kp_registration_state	 st;
	char				 line[4096], err[KP_ERROR_SIZE];
	size_t				 len;
	int				 r, junk = 0;

	while (fgets(line, sizeof(line), stdin) != NULL) {
		/* A stdin that is no command channel (< /dev/zero: NULs, no
		 * newline) would spin here on one core: after 64 KiB without
		 * a newline, stop reading and just serve until a signal. */
		len = strlen(line);
		if (len == 0 || line[len - 1] != '\n') {
			if (++junk < 16)
				continue;
			fprintf(stderr, "kp_testdriver: no command on stdin "
			    "(64 KiB without a newline): serving until a "
			    "signal\n");
			for (;;)
				pause();
		}
		junk = 0;
		if (strncmp(line, "status", 6) == 0) {
			r = kp_registration_status(p, &st, err, sizeof(err));
			if (r != 0)
				printf("status-error %s\n", kp_err_name(r));
			else
				printf("status %d %s\n", (int)st, err);
		} else if (strncmp(line, "publish-status", 14) == 0) {
			struct kp_publish_status ps;

			r = kp_publish_status(p, &ps);
			printf("pstatus %s sync=%lld pending=%d creates=%llu "
			    "updates=%llu deletes=%llu running=%d error=%s\n",
			    kp_err_name(r), (long long)ps.last_sync,
			    ps.pending_pools, (unsigned long long)ps.creates,
			    (unsigned long long)ps.updates,
			    (unsigned long long)ps.deletes,
			    ps.publisher_running, ps.last_error);
		} else if (strncmp(line, "publish-taint", 13) == 0) {
			r = publish_taint(p);
			printf("publish %s %s\n", kp_err_name(r),
			    r ? kp_plugin_last_error(p) : "");
		} else if (strncmp(line, "state", 5) == 0) {
			r = state_cmd(p, line);
			printf("state %s %s\n", kp_err_name(r),
			    r ? kp_plugin_last_error(p) : "");
		} else if (strncmp(line, "publish-split", 13) == 0) {
			r = publish_split(p, line + 13);
			printf("publish %s %s\n", kp_err_name(r),
			    r ? kp_plugin_last_error(p) : "");
		} else if (strncmp(line, "publish-loop", 12) == 0) {
			/* "publish-loop <count> <publish args>": publish
			 * count times in a row (red team: a driver that
			 * publishes in a loop), the last result printed. */
			char	*rest = NULL;
			long	 cnt = strtol(line + 12, &rest, 10), i;

			for (r = 0, i = 0; i < cnt && r == 0; i++)
				r = publish(p, rest);
			printf("publish %s n=%ld %s\n", kp_err_name(r), i,
			    r ? kp_plugin_last_error(p) : "");
		} else if (strncmp(line, "publish", 7) == 0) {
			r = publish(p, line + 7);
			printf("publish %s %s\n", kp_err_name(r),
			    r ? kp_plugin_last_error(p) : "");
		} else if (strncmp(line, "md-update", 9) == 0) {
			r = md_update(p, line + 9);
			printf("md-update %s %s\n", kp_err_name(r),
			    r ? kp_plugin_last_error(p) : "");
		} else if (strncmp(line, "health", 6) == 0) {
			r = health(p, line + 6);
			printf("health %s %s\n", kp_err_name(r),
			    r ? kp_plugin_last_error(p) : "");
		} else if (strncmp(line, "getinfo-error", 13) == 0 ||
		    strncmp(line, "notify-error", 12) == 0) {
			char	*a = strchr(line, ' ');

			line[strcspn(line, "\n")] = '\0';
			a = a != NULL ? a + 1 : "";
			r = line[0] == 'g' ? kp_set_get_info_error(p, a) :
			    kp_set_notify_registration_status_error(p, a);
			printf("regerr %s %s\n", kp_err_name(r),
			    r ? kp_plugin_last_error(p) : "");
		} else if (strncmp(line, "restart", 7) == 0 &&
		    drv.opts != NULL) {
			atomic_store(&cur_plugin, NULL);
			(void)kp_stop(p);
			p = NULL;
			r = kp_start(drv.opts, drv.hooks, &p);
			atomic_store(&cur_plugin, p);
			printf("restart %s %s\n", kp_err_name(r),
			    r ? kp_options_last_error(drv.opts) : "");
			if (r != 0)
				break;
		} else if (strncmp(line, "loopctl", 7) == 0) {
			loopctl();
		} else if (strncmp(line, "stop", 4) == 0)
			break;
		fflush(stdout);
	}
	if (drv.channels) {
		atomic_store(&status_stop, 1);
		pthread_join(status_th, NULL);
	}
	pthread_mutex_lock(&plugin_lock);
	r = kp_stop(p);
	plugin_gone = 1;
	pthread_mutex_unlock(&plugin_lock);
	printf("stopped %d fds %d %d\n", r, fds_before, count_fds());
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct kp_options	*o;
	struct kp_plugin	*p;
	struct kp_hooks		 h = { NULL, prepare, unprepare, init_hook };
	pthread_t		 th;
	int			 r, fds;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (kp_options_new(&o) != 0)
		return (2);
	if (getenv("KP_TEST_SANDBOX_MODE") != NULL)
		(void)sandbox_mode(o, getenv("KP_TEST_SANDBOX_MODE"));
	if (parse(argc, argv, o) != 0)
		return (2);
	if (drv.spawn_thread)
		pthread_create(&th, NULL, idle_thread, NULL);
	fds = count_fds();
	if ((r = kp_start(o, &h, &p)) != 0) {
		printf("error %s %s\n", kp_err_name(r),
		    kp_options_last_error(o));
		kp_options_free(o);
		return (1);
	}
	if (drv.start_twice) {
		struct kp_plugin	*p2 = NULL;

		r = kp_start(o, &h, &p2);
		printf("second %s %s\n", kp_err_name(r),
		    r ? kp_options_last_error(o) : "");
		if (r == 0)
			(void)kp_stop(p2);
		drv.opts = o;
		drv.hooks = &h;
	} else
		kp_options_free(o);
	if (drv.channels)
		pthread_create(&status_th, NULL, status_thread, p);
	if (drv.exit_on_stop)
		pthread_create(&th, NULL, wait_thread, p);
	atomic_store(&cur_plugin, p);
	printf("ready %d\n", (int)getpid());
	commands(p, fds);
	if (drv.opts != NULL)
		kp_options_free(drv.opts);
	return (0);
}
