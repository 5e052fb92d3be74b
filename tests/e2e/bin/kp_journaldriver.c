/*
 * kp_journaldriver - a driver for tests/e2e/toolkit.test.js written the
 * way the header's journal section suggests: the prepare hook builds one
 * CDI spec per claim (kp_cdi_builder_*, kp_prepare_cdi_spec), returns its
 * CDI device ID and records driver data; the journal answers repeated
 * prepares, rewrites missing specs through write_spec, and removes specs
 * after unprepare. No Kubernetes access: claims reach the hook bare.
 * Each hook and callback logs one line through kp_log() for the tests to
 * count:
 *   "prepare hook: <ns>/<name>", "unprepare hook: <name> data=<json>",
 *   "write_spec: <name> <spec>", "previous_boot: <name>".
 * Claim names steer the hook: "badcdi-*" returns an invalid CDI device
 * ID. Options: --driver-name, --registrar-socket, --plugin-socket, -v,
 * --cdi-dir, --journal-dir, --allow-uid, --sandbox-user nodeserver:U:G,
 * --kubelet-root-dir, --rolling-update-uid (two instances side by side:
 * tests/e2e/journal-rolling.test.js).
 * Prints "ready <pid>" after kp_start(); "stop" on stdin (or its end)
 * stops, printing "stopped <code> fds 0 0".
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kubeletplugin.h"

static char	kind[128];

/* The claim's spec: one device named after the claim, an env entry. */
static struct kp_cdi_builder *
spec_for(const char *dev, const char *ns, char *err, size_t errsize)
{
	struct kp_cdi_builder	*b;
	char			 env[300];

	if (kp_cdi_builder_new(kind, &b) != 0) {
		snprintf(err, errsize, "kind %s refused", kind);
		return (NULL);
	}
	snprintf(env, sizeof(env), "TEST_CLAIM=%s/%s", ns, dev);
	if (kp_cdi_add_device(b, dev) != 0 || kp_cdi_add_env(b, dev,
	    env) != 0) {
		snprintf(err, errsize, "%s", kp_cdi_builder_last_error(b));
		kp_cdi_builder_free(b);
		return (NULL);
	}
	return (b);
}

static int
prepare(void *user, const struct kp_claim *c, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	struct kp_cdi_builder	*b;
	char			 id[300], data[300], err[KP_ERROR_SIZE];
	const char		*ids[1] = { id };
	size_t			 i;

	for (i = 0; i < n; i++) {
		kp_log(KP_LOG_INFO, 0, "prepare hook: %s/%s", c[i].namespace_,
		    c[i].name);
		if ((b = spec_for(c[i].name, c[i].namespace_, err,
		    sizeof(err))) == NULL) {
			kp_prepare_claim_error(res, i, err);
			continue;
		}
		if (strncmp(c[i].name, "badcdi-", 7) == 0)
			snprintf(id, sizeof(id), "not a cdi id %s", c[i].name);
		else
			(void)kp_cdi_device_id(kind, c[i].name, id,
			    sizeof(id));
		snprintf(data, sizeof(data), "{\"device\":\"%s\"}", c[i].name);
		struct kp_prepared_device d = { KP_PREPARED_DEVICE_INIT,
		    .pool_name = "pool-a", .device_name = c[i].name,
		    .cdi_device_ids = ids, .n_cdi_device_ids = 1 };
		if (kp_prepare_cdi_spec(res, i, b) == 0 &&
		    kp_prepare_add_device(res, i, &d) == 0)
			(void)kp_prepare_journal_data(res, i, data);
		kp_cdi_builder_free(b);
	}
	return (0);
}

static int
unprepare(void *user, const struct kp_claim *c, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	const struct kp_journal_entry	*e;
	size_t				 i;

	for (i = 0; i < n; i++) {
		e = kp_unprepare_journal_entry(res, i);
		kp_log(KP_LOG_INFO, 0, "unprepare hook: %s data=%s",
		    c[i].name, e != NULL && e->data != NULL ? e->data : "-");
	}
	return (0);
}

/* A missing spec: the same spec again, from the journal's entry. */
static int
write_spec(void *user, const struct kp_journal_entry *e, char *err,
    size_t errsize)
{
	struct kp_cdi_builder	*b;
	int			 r;

	kp_log(KP_LOG_INFO, 0, "write_spec: %s %s", e->name, e->cdi_spec);
	if ((b = spec_for(e->name, e->namespace_, err, errsize)) == NULL)
		return (KP_EINVAL);
	r = kp_cdi_builder_write(b, e->cdi_spec, err, errsize);
	kp_cdi_builder_free(b);
	return (r);
}

static int
previous_boot(void *user, const struct kp_journal_entry *e, char *err,
    size_t errsize)
{
	kp_log(KP_LOG_INFO, 0, "previous_boot: %s", e->name);
	return (strncmp(e->name, "forget-", 7) == 0 ? KP_JOURNAL_FORGET : 0);
}

static int
apply(struct kp_options *o, int ch, const char *a)
{
	unsigned	 uid, gid;

	switch (ch) {
	case 'd':
		snprintf(kind, sizeof(kind), "%s/test", a);
		return (kp_driver_name(o, a));
	case 'r': return (kp_registrar_socket_path(o, a));
	case 'p': return (kp_plugin_socket_path(o, a));
	case 'v': return (kp_log_verbosity(o, (int)strtol(a, 0, 10)));
	case 'c': return (kp_cdi_directory(o, a));
	case 'j': return (kp_journal_dir(o, a));
	case 'u': return (kp_allowed_peer_uid(o, (uid_t)strtoul(a, 0, 10)));
	case 'k': return (kp_kubelet_root_dir(o, a));
	case 'R': return (kp_rolling_update(o, a));
	case 's':
		if (sscanf(a, "nodeserver:%u:%u", &uid, &gid) != 2)
			return (-1);
		return (kp_sandbox_user(o, KP_PROCESS_NODESERVER, uid, gid));
	default: return (-1);
	}
}

/* Errors after kp_start: "errcb <KP_NAME> rec=<0|1> <message>". */
static void
on_error(void *user, int code, const char *message, int recoverable)
{
	(void)user;
	printf("errcb %s rec=%d %s\n", kp_err_name(code), recoverable,
	    message);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "driver-name", 1, 0, 'd' }, { "registrar-socket", 1, 0, 'r' },
		{ "plugin-socket", 1, 0, 'p' }, { "cdi-dir", 1, 0, 'c' },
		{ "journal-dir", 1, 0, 'j' }, { "allow-uid", 1, 0, 'u' },
		{ "sandbox-user", 1, 0, 's' }, { "kubelet-root-dir", 1, 0, 'k' },
		{ "rolling-update-uid", 1, 0, 'R' }, { 0, 0, 0, 0 }
	};
	struct kp_journal_hooks	 jh = { KP_JOURNAL_HOOKS_INIT,
				    .previous_boot = previous_boot,
				    .write_spec = write_spec };
	struct kp_hooks		 hooks = { NULL, prepare, unprepare, NULL };
	struct kp_options	*o;
	struct kp_plugin	*p;
	char			 line[256];
	int			 ch, r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (kp_options_new(&o) != 0)
		return (1);
	while ((ch = getopt_long(argc, argv, "v:", lo, NULL)) != -1)
		if (apply(o, ch, optarg) != 0) {
			printf("error KP_EINVAL %s\n", kp_options_last_error(o));
			return (1);
		}
	if (kp_journal_hooks(o, &jh) != 0 ||
	    kp_error_callback(o, on_error, NULL) != 0 ||
	    (r = kp_start(o, &hooks, &p)) != 0) {
		printf("error %s %s\n", kp_err_name(KP_EINVAL),
		    kp_options_last_error(o));
		return (1);
	}
	kp_options_free(o);
	printf("ready %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin) != NULL &&
	    strncmp(line, "stop", 4) != 0)
		;
	r = kp_stop(p);
	printf("stopped %d fds 0 0\n", r);
	return (0);
}
