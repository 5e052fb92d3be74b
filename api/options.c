/*
 * options.c - struct kp_options and one validating setter per option.
 *
 * Every setter checks the handle's magic, checks its value against the rule
 * the header documents, and only then replaces the stored value: a failed
 * call leaves the previous value in place and a message in errbuf that
 * names the setter, the Go option it mirrors and the rule (curl's
 * CURLOPT_ERRORBUFFER). Strings are copied; the last call wins. The
 * cross-field checks that need every option wait for kp_start()
 * (opt_check()).
 *
 * This file: the handle (new, free, copy, the checks at kp_start()), the
 * helpers every setter uses, the node's identity and the gRPC and logging
 * setters. The Kubernetes client setters are in options_kube.c, the
 * sockets in options_sockets.c, the sandbox in options_policy.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"

/*
 * A value as messages show it: quoted, control and non-ASCII bytes as
 * \xNN, cut after OPT_QUOTE_MAX characters with "...".
 */
const char *
opt_quote(const char *s, char *buf, size_t size)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 o = 0, n;
	unsigned char		 c;

	if (s == NULL) {
		snprintf(buf, size, "NULL");
		return (buf);
	}
	buf[o++] = '"';
	for (n = 0; s[n] != '\0' && o + 8 < size; n++) {
		if (n == OPT_QUOTE_MAX) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		c = (unsigned char)s[n];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 0xf];
		} else
			buf[o++] = (char)c;
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return (buf);
}

/* A KP_E* code for an errno from the system. */
int
opt_errno_code(int e)
{
	switch (e) {
	case ENOMEM:
		return (KP_ENOMEM);
	case ENAMETOOLONG:
	case ERANGE:
		return (KP_ENAMETOOLONG);
	case ENOENT:
		return (KP_ENOENT);
	case EACCES:
		return (KP_EACCES);
	default:
		return (KP_EIO);
	}
}

int
opt_valid_handle(const struct kp_options *opts)
{
	return (opts != NULL && opts->magic == KP_OPTIONS_MAGIC);
}

int
opt_fail(struct kp_options *opts, int code, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	(void)msg_vfmt(opts->errbuf, sizeof(opts->errbuf), fmt, ap);
	va_end(ap);
	return (code);
}

/* Append one broken rule to why, " and "-separated. */
static void
why_add(char *why, size_t size, const char *rule)
{
	size_t	n = strlen(why);

	if (n < size)
		snprintf(why + n, size - n, "%s%s", n ? " and " : "", rule);
}

/*
 * Why s is not a DNS-1123 subdomain (dots allowed) or label (no dots) of at
 * most maxlen characters, in why: every rule it breaks at once, so a
 * driver fixes the value in one go ("Node_1": case and '_'). NULL when it
 * is one.
 */
static const char *
dns_problem(const char *s, size_t maxlen, int dots, char *why, size_t size)
{
	size_t	len, i;
	char	c, prev, n[48];
	int	upper = 0, other = 0, empty = 0, edge = 0;

	if (s == NULL || s[0] == '\0')
		return ("must not be empty");
	why[0] = '\0';
	len = strlen(s);
	prev = '.';
	for (i = 0; i <= len; i++) {
		c = s[i] == '\0' ? '.' : s[i];
		if (c >= 'A' && c <= 'Z')
			upper = 1;
		else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || (c == '.' && (dots || i == len))))
			other = 1;
		if (c == '.' && prev == '.' && dots)
			empty = 1;
		if ((c == '-' && prev == '.') || (c == '.' && prev == '-'))
			edge = 1;
		prev = c;
	}
	if (upper)
		why_add(why, size, "must be lower case");
	if (other)
		why_add(why, size, dots ? "must contain only lower-case "
		    "letters, digits, '-' and '.'" : "must contain only "
		    "lower-case letters, digits and '-'");
	if (len > maxlen) {
		snprintf(n, sizeof(n), "is %zu characters long", len);
		why_add(why, size, n);
	}
	if (empty)
		why_add(why, size, "must not have an empty part between dots");
	if (edge)
		why_add(why, size, dots ? "must start and end each "
		    "dot-separated part with a letter or digit" :
		    "must start and end with a letter or digit");
	return (why[0] != '\0' ? why : NULL);
}

int
opt_check_subdomain(const char *s, size_t maxlen)
{
	char	why[256];

	return (dns_problem(s, maxlen, 1, why, sizeof(why)) ? KP_EINVAL : 0);
}

int
opt_check_label(const char *s, size_t maxlen)
{
	char	why[256];

	return (dns_problem(s, maxlen, 0, why, sizeof(why)) ? KP_EINVAL : 0);
}

/* Replace *field with a copy of s (NULL clears it). */
int
opt_set_string(struct kp_options *opts, const char *what, char **field,
    const char *s)
{
	char	*copy = NULL;

	if (s != NULL && (copy = strdup(s)) == NULL)
		return (opt_fail(opts, KP_ENOMEM, "%s: out of memory", what));
	free(*field);
	*field = copy;
	return (0);
}

static int
set_subdomain(struct kp_options *opts, const char *what, char **field,
    const char *s, size_t maxlen)
{
	char		 q[OPT_QUOTE_SIZE], why[256];
	const char	*p;

	if (s == NULL)
		return (opt_fail(opts, KP_EINVAL, "%s: must be set: a DNS "
		    "subdomain of at most %zu characters", what, maxlen));
	if ((p = dns_problem(s, maxlen, 1, why, sizeof(why))) != NULL)
		return (opt_fail(opts, KP_EINVAL, "%s: %s %s: a DNS subdomain "
		    "of at most %zu characters", what,
		    opt_quote(s, q, sizeof(q)), p, maxlen));
	return (opt_set_string(opts, what, field, s));
}

int
kp_options_new(struct kp_options **out)
{
	struct kp_options	*opts;

	if (out == NULL)
		return (KP_EINVAL);
	*out = NULL;
	if ((opts = calloc(1, sizeof(*opts))) == NULL)
		return (KP_ENOMEM);
	opts->magic = KP_OPTIONS_MAGIC;
	opts->kube_mode = KP_KUBE_NONE;
	opts->kube_qps = 5;
	opts->kube_burst = 10;
	opts->kube_timeout_ms = 30000;
	opts->plugin_listener = -1;
	opts->registrar_listener = -1;
	opts->socket_mode = 0600;
	opts->peer_uids[0] = 0;
	opts->n_peer_uids = 1;
	opts->peer_uids_set = 0;
	opts->v1alpha4 = 0;
	opts->v1beta1 = 1;
	opts->v1 = 1;
	opts->grpc_verbosity = 4;
	opts->log_verbosity = 0;
	opts->serialize = 1;
	opts->workers = 4;
	opts->max_conns = KP_DEF_MAX_CONNS;
	opts->handshake_ms = KP_DEF_HANDSHAKE_MS;
	opts->shutdown_grace_ms = KP_DEF_SHUTDOWN_GRACE_MS;
	opts->hung_ms = KP_DEF_HUNG_MS;
	pol_opts_init(&opts->policy);
	*out = opts;
	return (0);
}

/*
 * Drop every reference to an owned resource (strings, listeners) without
 * freeing it: after a memcpy() the copy must not share them, and after
 * opt_clear() freed them nothing may point at them.
 */
static void
forget_resources(struct kp_options *opts)
{
	opts->driver_name = opts->node_name = opts->node_uid = NULL;
	opts->kubeconfig = opts->kube_context = NULL;
	opts->kubelet_plugin_socket_path = NULL;
	opts->plugin_socket_path = opts->registrar_socket_path = NULL;
	opts->plugin_listener = opts->registrar_listener = -1;
	opts->initial_state = NULL;
}

void
opt_clear(struct kp_options *opts)
{
	free(opts->driver_name);
	free(opts->node_name);
	free(opts->node_uid);
	free(opts->kubeconfig);
	free(opts->kube_context);
	free(opts->kubelet_plugin_socket_path);
	free(opts->plugin_socket_path);
	free(opts->registrar_socket_path);
	if (opts->plugin_listener >= 0)
		close(opts->plugin_listener);
	if (opts->registrar_listener >= 0)
		close(opts->registrar_listener);
	free(opts->initial_state);
	forget_resources(opts);
}

void
kp_options_free(struct kp_options *opts)
{
	if (!opt_valid_handle(opts))
		return;
	opt_clear(opts);
	/* A stale pointer to this set must fail the magic check. */
	opts->magic = 0;
	free(opts);
}

const char *
kp_options_last_error(const struct kp_options *opts)
{
	if (!opt_valid_handle(opts))
		return ("");
	return (opts->errbuf);
}

static int
dup_string(char **dst, const char *src)
{
	if (src != NULL && (*dst = strdup(src)) == NULL)
		return (KP_ENOMEM);
	return (0);
}

static int
opt_state_copy(struct kp_state_blob **dst, const struct kp_state_blob *src)
{
	if (src == NULL)
		return (0);
	if ((*dst = malloc(sizeof(**dst) + src->len)) == NULL)
		return (KP_ENOMEM);
	memcpy(*dst, src, sizeof(**dst) + src->len);
	return (0);
}

static int
dup_fd(int *dst, int src)
{
	if (src >= 0 && (*dst = fcntl(src, F_DUPFD_CLOEXEC, 3)) == -1) {
		*dst = -1;
		return (opt_errno_code(errno));
	}
	return (0);
}

/*
 * Deep copy for kp_start(): dst gets its own strings and its own duplicates
 * of the listeners. dst is overwritten, not freed; on failure it holds no
 * resources (opt_clear() is still safe) and its errbuf says why.
 */
int
opt_copy(struct kp_options *dst, const struct kp_options *src)
{
	int	rc;

	if (!opt_valid_handle(src)) {
		memset(dst, 0, sizeof(*dst));
		forget_resources(dst);
		return (KP_EINVAL);
	}
	memcpy(dst, src, sizeof(*dst));
	forget_resources(dst);
	dst->errbuf[0] = '\0';
	if ((rc = dup_string(&dst->driver_name, src->driver_name)) != 0 ||
	    (rc = dup_string(&dst->node_name, src->node_name)) != 0 ||
	    (rc = dup_string(&dst->node_uid, src->node_uid)) != 0 ||
	    (rc = dup_string(&dst->kubeconfig, src->kubeconfig)) != 0 ||
	    (rc = dup_string(&dst->kube_context, src->kube_context)) != 0 ||
	    (rc = dup_string(&dst->kubelet_plugin_socket_path,
	    src->kubelet_plugin_socket_path)) != 0 ||
	    (rc = dup_string(&dst->plugin_socket_path,
	    src->plugin_socket_path)) != 0 ||
	    (rc = dup_string(&dst->registrar_socket_path,
	    src->registrar_socket_path)) != 0 ||
	    (rc = dup_fd(&dst->plugin_listener, src->plugin_listener)) != 0 ||
	    (rc = dup_fd(&dst->registrar_listener,
	    src->registrar_listener)) != 0 ||
	    (rc = opt_state_copy(&dst->initial_state,
	    src->initial_state)) != 0) {
		opt_clear(dst);
		return (opt_fail(dst, rc, "copying the options: %s",
		    kp_strerror(rc)));
	}
	return (0);
}

/*
 * The checks that need every option, run by kp_start() in upstream's order.
 * opts is const because the caller's set is only read; the error buffer is
 * the one field a check writes (as kp_options_last_error() promises for a
 * failed kp_start()). Sets are always heap objects from kp_options_new(),
 * never const-defined, so writing it is well defined.
 */
int
opt_check(const struct kp_options *copts)
{
	struct kp_options	*opts = (struct kp_options *)copts;

	if (!opt_valid_handle(copts))
		return (KP_EINVAL);
	if (opts->driver_name == NULL)
		return (opt_fail(opts, KP_EINVAL, "%s: driver name must be set",
		    OPT_DRIVER));
	if (opts->kubelet_plugin_socket_path == NULL &&
	    opts->plugin_socket_path == NULL)
		return (opt_fail(opts, KP_EINVAL, "%s: DRA address must be set "
		    "(it defaults to kp_plugin_socket_path, which is not set "
		    "either)", OPT_KUBELET_PATH));
	if (opts->plugin_socket_path == NULL && opts->plugin_listener < 0)
		return (opt_fail(opts, KP_EINVAL, "%s / %s: a Unix domain "
		    "socket path and/or listener must be set for the kubelet "
		    "plugin", OPT_PLUGIN_PATH, OPT_PLUGIN_LSN));
	if (opts->registrar_socket_path == NULL &&
	    opts->registrar_listener < 0 && !opts->registration_off)
		return (opt_fail(opts, KP_EINVAL, "%s / %s: a Unix domain "
		    "socket path and/or listener must be set for the "
		    "registrar", OPT_REG_PATH, OPT_REG_LSN));
	if (opts->plugin_socket_path != NULL &&
	    opts->registrar_socket_path != NULL &&
	    strcmp(opts->plugin_socket_path, opts->registrar_socket_path) == 0)
		return (opt_fail(opts, KP_EINVAL, "%s / %s: the two servers "
		    "must not share one socket path", OPT_PLUGIN_PATH,
		    OPT_REG_PATH));
	if (!opts->v1alpha4 && !opts->v1beta1 && !opts->v1)
		return (opt_fail(opts, KP_EINVAL, "%s / %s / %s: no supported "
		    "DRA gRPC API is implemented and enabled", OPT_V1ALPHA4,
		    OPT_V1BETA1, OPT_V1));
	return (pol_opts_check(opts));
}

int
kp_driver_name(struct kp_options *opts, const char *name)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	return (set_subdomain(opts, OPT_DRIVER, &opts->driver_name, name, 63));
}

int
kp_node_name(struct kp_options *opts, const char *name)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	return (set_subdomain(opts, OPT_NODE, &opts->node_name, name, 253));
}

int
kp_node_uid(struct kp_options *opts, const char *uid)
{
	char	q[OPT_QUOTE_SIZE];
	size_t	i;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	for (i = 0; uid != NULL && i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (uid[i] != '-')
				break;
		} else if (!((uid[i] >= '0' && uid[i] <= '9') ||
		    (uid[i] >= 'a' && uid[i] <= 'f')))
			break;
	}
	if (uid == NULL || i != 36 || uid[36] != '\0')
		return (opt_fail(opts, KP_EINVAL, "%s: %s must be a UUID in "
		    "canonical lower-case form (8-4-4-4-12 hex digits, 36 "
		    "characters)", OPT_NODE_UID, opt_quote(uid, q, sizeof(q))));
	return (opt_set_string(opts, OPT_NODE_UID, &opts->node_uid, uid));
}

static int
set_bool(struct kp_options *opts, const char *what, int *field, int v)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (v != 0 && v != 1)
		return (opt_fail(opts, KP_EINVAL, "%s: %d must be 0 or 1", what,
		    v));
	*field = v;
	return (0);
}

static int
set_range(struct kp_options *opts, const char *what, const char *name,
    int *field, int v, int lo, int hi)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (v < lo || v > hi)
		return (opt_fail(opts, KP_EINVAL, "%s: %s %d must be between "
		    "%d and %d", what, name, v, lo, hi));
	*field = v;
	return (0);
}

int
kp_node_v1alpha4(struct kp_options *opts, int enable)
{
	return (set_bool(opts, OPT_V1ALPHA4, opts ? &opts->v1alpha4 : NULL,
	    enable));
}

int
kp_node_v1beta1(struct kp_options *opts, int enable)
{
	return (set_bool(opts, OPT_V1BETA1, opts ? &opts->v1beta1 : NULL,
	    enable));
}

int
kp_node_v1(struct kp_options *opts, int enable)
{
	return (set_bool(opts, OPT_V1, opts ? &opts->v1 : NULL, enable));
}

int
kp_serialize(struct kp_options *opts, int enable)
{
	return (set_bool(opts, OPT_SERIALIZE, opts ? &opts->serialize : NULL,
	    enable));
}

int
kp_grpc_verbosity(struct kp_options *opts, int level)
{
	return (set_range(opts, OPT_GRPC_V, "level",
	    opts ? &opts->grpc_verbosity : NULL, level, -1000, 1000));
}

int
kp_log_verbosity(struct kp_options *opts, int level)
{
	return (set_range(opts, OPT_LOG_V, "level",
	    opts ? &opts->log_verbosity : NULL, level, 0, 10));
}

int
kp_worker_threads(struct kp_options *opts, int n)
{
	return (set_range(opts, OPT_WORKERS, "thread count",
	    opts ? &opts->workers : NULL, n, 1, 64));
}

int
kp_log_callback(struct kp_options *opts, kp_log_fn fn, void *user)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	opts->log_fn = fn;
	opts->log_user = fn != NULL ? user : NULL;
	return (0);
}

static int
add_interceptor(struct kp_options *opts, const char *what,
    struct interceptor *list, size_t *n, kp_interceptor_fn fn,
    void *user)
{
	if (fn == NULL)
		return (opt_fail(opts, KP_EINVAL, "%s: the interceptor "
		    "function must not be NULL", what));
	if (*n >= KP_MAX_INTERCEPTORS)
		return (opt_fail(opts, KP_ENOMEM, "%s: at most %d interceptors",
		    what, KP_MAX_INTERCEPTORS));
	list[*n].fn = fn;
	list[*n].user = user;
	(*n)++;
	return (0);
}

int
kp_grpc_interceptor(struct kp_options *opts, kp_interceptor_fn fn,
    void *user)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	return (add_interceptor(opts, OPT_UNARY, opts->unary, &opts->n_unary,
	    fn, user));
}

int
kp_grpc_stream_interceptor(struct kp_options *opts, kp_interceptor_fn fn,
    void *user)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	return (add_interceptor(opts, OPT_STREAM, opts->stream, &opts->n_stream,
	    fn, user));
}
