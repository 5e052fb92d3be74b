/*
 * test_child_opts.c - the flat copy of the options an exec'd child gets
 * (ipc/child_opts.c): it rebuilds what the roles read, carries none of the
 * parent's pointers (no address of the supervisor's reaches the child),
 * and every short, cut or damaged copy fails with a message, not a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "ipc/child.h"
#include "test.h"

static void
log_cb(void *user, enum kp_log_level l, int v, const char *role,
    const char *text)
{
	(void)user; (void)l; (void)v; (void)role; (void)text;
}

static int
icpt(void *user, enum kp_call_phase phase, const struct kp_call *call,
    char *msg, size_t msgsize)
{
	(void)user; (void)call; (void)phase; (void)msg; (void)msgsize;
	return (0);
}

static void
err_cb(void *user, int code, const char *msg, int recovered)
{
	(void)user; (void)code; (void)msg; (void)recovered;
}

/* 1 if the 8-byte value v occurs anywhere in buf (any alignment). */
static int
has_word(const uint8_t *buf, size_t len, const void *v)
{
	uintptr_t	 w = (uintptr_t)v;
	size_t		 i;

	for (i = 0; i + sizeof(w) <= len; i++)
		if (memcmp(buf + i, &w, sizeof(w)) == 0)
			return (1);
	return (0);
}

static int
load(const uint8_t *b, size_t len, char *err, size_t errsize)
{
	struct kp_options	*o = NULL;
	int			 r;

	err[0] = '\0';
	r = child_opts_load(b, len, &o, err, errsize);
	free(o);
	return (r);
}

/* The options a run of a driver's main() builds; name and verbosity
 * vary, the functions and their user pointer are per run. */
static struct kp_options *
run(const char *name, int v, int *user)
{
	struct kp_options	*o;

	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, name), 0);
	CHECK_EQ(kp_node_name(o, "node-1"), 0);
	CHECK_EQ(kp_log_verbosity(o, v), 0);
	CHECK_EQ(kp_log_callback(o, log_cb, user), 0);
	CHECK_EQ(kp_grpc_interceptor(o, icpt, user), 0);
	return (o);
}

/*
 * child_opts_diff() of the copy fa against main()'s options declaring the
 * rule /dev/loop[0-9]* (type 0: by name only; else 'b' major, any minor).
 */
static int
rule_diff(const uint8_t *fa, size_t la, int type, unsigned int major,
    char *err, size_t errsize)
{
	struct kp_options	*b;
	uint8_t			*fb;
	size_t			 lb;
	int			 u = 1, r;

	b = run("gpu.example.com", 4, &u);
	CHECK_EQ(type == 0 ? kp_cdi_allow_device(b, "/dev/loop[0-9]*") :
	    kp_cdi_allow_device_number(b, "/dev/loop[0-9]*", type, major, 0,
	    KP_CDI_MINOR_MAX), 0);
	CHECK_EQ(child_opts_flatten(b, &fb, &lb, err, errsize), 0);
	r = child_opts_diff(fa, la, fb, lb, err, errsize);
	free(fb);
	kp_options_free(b);
	return (r);
}

/*
 * child_opts_diff(): what an exec'd nodeserver checks its main()'s
 * options with (role_exec_main.c). Equal options are equal whatever
 * their functions' user pointers; the first difference is named; a
 * damaged copy is an error, not a match.
 */
static void
diff_checks(void)
{
	struct kp_options	*a, *b;
	uint8_t			*fa, *fb;
	size_t			 la, lb;
	char			 err[KP_ERROR_SIZE];
	int			 u1 = 1, u2 = 2;

	a = run("gpu.example.com", 4, &u1);
	CHECK_EQ(child_opts_flatten(a, &fa, &la, err, sizeof(err)), 0);
	b = run("gpu.example.com", 4, &u2);
	CHECK_EQ(child_opts_flatten(b, &fb, &lb, err, sizeof(err)), 0);
	CHECK_EQ(child_opts_diff(fa, la, fb, lb, err, sizeof(err)), 0);
	free(fb);
	kp_options_free(b);

	b = run("other.example.com", 4, &u1);
	CHECK_EQ(child_opts_flatten(b, &fb, &lb, err, sizeof(err)), 0);
	CHECK_EQ(child_opts_diff(fa, la, fb, lb, err, sizeof(err)),
	    KP_EINVAL);
	CHECK_CONTAINS(err, "driver_name: \"gpu.example.com\" in the "
	    "plugin, \"other.example.com\" here");
	free(fb);
	kp_options_free(b);

	b = run("gpu.example.com", 5, &u1);
	CHECK_EQ(child_opts_flatten(b, &fb, &lb, err, sizeof(err)), 0);
	CHECK_EQ(child_opts_diff(fa, la, fb, lb, err, sizeof(err)),
	    KP_EINVAL);
	CHECK_CONTAINS(err, "log_verbosity differs");
	/* A cut copy is not a match. */
	CHECK_EQ(child_opts_diff(fa, la, fb, lb - 1, err, sizeof(err)),
	    KP_EPROTO);
	free(fb);
	kp_options_free(b);

	/* An initial state: its bytes never cross (a re-run of main() may
	 * find other devices), whether one is set does. */
	b = run("gpu.example.com", 4, &u1);
	CHECK_EQ(kp_state_initial(a, "one", 3), 0);
	CHECK_EQ(kp_state_initial(b, "other", 5), 0);
	free(fa);
	CHECK_EQ(child_opts_flatten(a, &fa, &la, err, sizeof(err)), 0);
	CHECK_EQ(child_opts_flatten(b, &fb, &lb, err, sizeof(err)), 0);
	CHECK_EQ(child_opts_diff(fa, la, fb, lb, err, sizeof(err)), 0);
	CHECK(memmem(fa, la, "one", 3) == NULL);
	free(fb);
	CHECK_EQ(kp_state_initial(b, NULL, 0), 0);
	CHECK_EQ(child_opts_flatten(b, &fb, &lb, err, sizeof(err)), 0);
	CHECK_EQ(child_opts_diff(fa, la, fb, lb, err, sizeof(err)),
	    KP_EINVAL);
	CHECK_CONTAINS(err, "initial_state_set differs");
	free(fb);
	kp_options_free(b);
	free(fa);
	kp_options_free(a);

	/* The CDI device rules cross and are compared: a main() that
	 * declares another pattern or another number range is not the
	 * plugin (issue 26). */
	a = run("gpu.example.com", 4, &u1);
	CHECK_EQ(kp_cdi_allow_device_number(a, "/dev/loop[0-9]*", 'b', 7, 0,
	    KP_CDI_MINOR_MAX), 0);
	CHECK_EQ(child_opts_flatten(a, &fa, &la, err, sizeof(err)), 0);
	CHECK_EQ(rule_diff(fa, la, 'b', 7, err, sizeof(err)), 0);
	CHECK_EQ(rule_diff(fa, la, 'b', 8, err, sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "policy differs");
	CHECK_EQ(rule_diff(fa, la, 0, 0, err, sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "policy differs");
	free(fa);
	kp_options_free(a);
}

int
main(void)
{
	struct kp_options	*o, *c = NULL;
	uint8_t			*b, *d;
	size_t			 len, i;
	char			 err[KP_ERROR_SIZE];
	int			 user = 7;

	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, "gpu.example.com"), 0);
	CHECK_EQ(kp_node_name(o, "node-1"), 0);
	CHECK_EQ(kp_node_uid(o, "5f0e8a1c-0000-4000-8000-000000000001"), 0);
	CHECK_EQ(kp_kube_client_kubeconfig(o, "/etc/kp/kubeconfig", "ctx"),
	    0);
	CHECK_EQ(kp_plugin_socket_path(o, "/run/kp/dra.sock"), 0);
	CHECK_EQ(kp_sandbox_hide_path(o, "/etc/secret"), 0);
	CHECK_EQ(kp_log_verbosity(o, 4), 0);
	CHECK_EQ(kp_log_callback(o, log_cb, &user), 0);
	CHECK_EQ(kp_grpc_interceptor(o, icpt, &user), 0);
	CHECK_EQ(kp_error_callback(o, err_cb, &user), 0);
	o->advertised[0] = "v1.DRAPlugin";	/* kp_start() sets these */
	o->n_advertised = 1;

	CHECK_EQ(child_opts_flatten(o, &b, &len, err, sizeof(err)), 0);
	CHECK(len > sizeof(*o));
	/* None of the parent's pointers: the strings', the callbacks',
	 * their user pointer's, the options' own address. */
	CHECK(!has_word(b, len, o->driver_name));
	CHECK(!has_word(b, len, o->node_name));
	CHECK(!has_word(b, len, o->kubeconfig));
	CHECK(!has_word(b, len, o->kube_context));
	CHECK(!has_word(b, len, o->plugin_socket_path));
	CHECK(!has_word(b, len, o->advertised[0]));
	CHECK(!has_word(b, len, (void *)(uintptr_t)log_cb));
	CHECK(!has_word(b, len, (void *)(uintptr_t)icpt));
	CHECK(!has_word(b, len, (void *)(uintptr_t)err_cb));
	CHECK(!has_word(b, len, &user));
	CHECK(!has_word(b, len, o));

	/* What the roles read comes back; the callbacks do not. */
	CHECK_EQ(child_opts_load(b, len, &c, err, sizeof(err)), 0);
	if (c != NULL) {
		CHECK_STREQ(c->driver_name, "gpu.example.com");
		CHECK_STREQ(c->node_name, "node-1");
		CHECK_STREQ(c->node_uid, o->node_uid);
		CHECK_STREQ(c->kubeconfig, "/etc/kp/kubeconfig");
		CHECK_STREQ(c->kube_context, "ctx");
		CHECK_STREQ(c->plugin_socket_path, "/run/kp/dra.sock");
		CHECK(c->registrar_socket_path == NULL);
		CHECK(c->kubelet_plugin_socket_path == NULL);
		CHECK_EQ(c->kube_mode, KP_KUBE_KUBECONFIG);
		CHECK_EQ(c->log_verbosity, 4);
		CHECK_EQ(c->policy.n_hidden, 1);
		CHECK_STREQ(c->policy.hidden[0], "/etc/secret");
		CHECK(c->log_fn == NULL && c->log_user == NULL);
		CHECK(c->error_fn == NULL && c->error_user == NULL);
		CHECK_EQ(c->n_unary, 0);
		CHECK(c->unary[0].fn == NULL && c->unary[0].user == NULL);
		/* Derived again from the options (a registrar run from the
		 * constructor advertises them): the defaults, v1 first. */
		CHECK(c->n_advertised >= 2);
		CHECK(c->advertised[0] != NULL &&
		    strcmp(c->advertised[0], "v1.DRAPlugin") == 0);
		free(c);
	}

	/* Every cut copy fails, naming why. */
	for (i = 0; i < len; i += (i < 256 ? 1 : 997)) {
		CHECK(load(b, i, err, sizeof(err)) == KP_EPROTO);
		CHECK_CONTAINS(err, "options copy: ");
	}
	CHECK(load(b, 0, err, sizeof(err)) == KP_EPROTO);
	CHECK_CONTAINS(err, "shorter than its header");
	/* A byte more, or any byte flipped: refused. */
	d = malloc(len + 1);
	memcpy(d, b, len);
	d[len] = 0;
	CHECK(load(d, len + 1, err, sizeof(err)) == KP_EPROTO);
	CHECK_CONTAINS(err, "expected");
	for (i = 0; i < len; i += 131) {
		memcpy(d, b, len);
		d[i] ^= 0x40;
		CHECK(load(d, len, err, sizeof(err)) == KP_EPROTO);
		CHECK(err[0] != '\0');
	}
	/* Another build's struct or version: named as such. */
	memcpy(d, b, len);
	d[8] ^= 1;			/* opts_size */
	CHECK(load(d, len, err, sizeof(err)) == KP_EPROTO);
	CHECK_CONTAINS(err, "another build");
	free(d);
	free(b);

	/* Without any string option: all NULL again. */
	kp_options_free(o);
	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(child_opts_flatten(o, &b, &len, err, sizeof(err)), 0);
	CHECK_EQ(child_opts_load(b, len, &c, err, sizeof(err)), 0);
	if (c != NULL) {
		CHECK(c->driver_name == NULL && c->kubeconfig == NULL);
		free(c);
	}
	free(b);
	kp_options_free(o);
	diff_checks();
	return (test_done("test_child_opts"));
}
