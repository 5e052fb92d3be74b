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
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "supervisor/config.h"

/* How each option names itself in messages: setter (Go option). */
#define O_DRIVER	"kp_driver_name (DriverName)"
#define O_NODE		"kp_node_name (NodeName)"
#define O_NODE_UID	"kp_node_uid (NodeUID)"
#define O_IN_CLUSTER	"kp_kube_client_in_cluster (KubeClient)"
#define O_KUBECONFIG	"kp_kube_client_kubeconfig (KubeClient)"
#define O_QPS		"kp_kube_api_qps (rest.Config QPS/Burst)"
#define O_KUBELET_PATH	\
    "kp_kubelet_plugin_socket_path (KubeletPluginSocketPath)"
#define O_PLUGIN_PATH	"kp_plugin_socket_path (PluginSocketPath)"
#define O_PLUGIN_LSN	"kp_plugin_listener (PluginListener)"
#define O_REG_PATH	"kp_registrar_socket_path (RegistrarSocketPath)"
#define O_REG_LSN	"kp_registrar_listener (RegistrarListener)"
#define O_V1ALPHA4	"kp_node_v1alpha4 (NodeV1alpha4)"
#define O_V1BETA1	"kp_node_v1beta1 (NodeV1beta1)"
#define O_V1		"kp_node_v1 (NodeV1)"
#define O_GRPC_V	"kp_grpc_verbosity (GRPCVerbosity)"
#define O_LOG_V		"kp_log_verbosity (klog -v)"
#define O_LOG_CB	"kp_log_callback (klog output)"
#define O_UNARY		"kp_grpc_interceptor (GRPCInterceptor)"
#define O_STREAM	"kp_grpc_stream_interceptor (GRPCStreamInterceptor)"
#define O_MODE		"kp_socket_mode (beyond upstream)"
#define O_PEER		"kp_allowed_peer_uid (beyond upstream)"
#define O_SERIALIZE	"kp_serialize (Serialize)"
#define O_WORKERS	"kp_worker_threads (beyond upstream)"

#define QUOTE_MAX	64	/* characters of a value in a message */
#define QUOTE_SIZE	(QUOTE_MAX * 4 + 8)

/*
 * A value as messages show it: quoted, control and non-ASCII bytes as
 * \xNN, cut after QUOTE_MAX characters with "...".
 */
static const char *
quote(const char *s, char *buf, size_t size)
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
		if (n == QUOTE_MAX) {
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
static int
errno_code(int e)
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
	vsnprintf(opts->errbuf, sizeof(opts->errbuf), fmt, ap);
	va_end(ap);
	return (code);
}

/*
 * Why s is not a DNS-1123 subdomain (dots allowed) or label (no dots) of at
 * most maxlen characters, in why; NULL when it is one.
 */
static const char *
dns_problem(const char *s, size_t maxlen, int dots, char *why, size_t size)
{
	size_t	len, i;
	char	c, prev;

	if (s == NULL || s[0] == '\0')
		return ("must not be empty");
	len = strlen(s);
	for (i = 0; i < len; i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			return ("must be lower case");
	for (i = 0; i < len; i++) {
		c = s[i];
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || (dots && c == '.'))
			continue;
		return (dots ? "must contain only lower-case letters, digits, "
		    "'-' and '.'" : "must contain only lower-case letters, "
		    "digits and '-'");
	}
	if (len > maxlen) {
		snprintf(why, size, "is %zu characters long", len);
		return (why);
	}
	prev = '.';
	for (i = 0; i <= len; i++) {
		c = s[i] == '\0' ? '.' : s[i];
		if (c == '.' && prev == '.')
			return ("must not have an empty part between dots");
		if ((c == '-' && prev == '.') || (c == '.' && prev == '-'))
			return (dots ? "must start and end each dot-separated "
			    "part with a letter or digit" :
			    "must start and end with a letter or digit");
		prev = c;
	}
	return (NULL);
}

int
opt_check_subdomain(const char *s, size_t maxlen)
{
	char	why[64];

	return (dns_problem(s, maxlen, 1, why, sizeof(why)) ? KP_EINVAL : 0);
}

int
opt_check_label(const char *s, size_t maxlen)
{
	char	why[64];

	return (dns_problem(s, maxlen, 0, why, sizeof(why)) ? KP_EINVAL : 0);
}

/* Replace *field with a copy of s (NULL clears it). */
static int
set_string(struct kp_options *opts, const char *what, char **field,
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
	char		 q[QUOTE_SIZE], why[64];
	const char	*p;

	if ((p = dns_problem(s, maxlen, 1, why, sizeof(why))) != NULL)
		return (opt_fail(opts, KP_EINVAL, "%s: %s %s: a DNS subdomain "
		    "of at most %zu characters", what,
		    quote(s, q, sizeof(q)), p, maxlen));
	return (set_string(opts, what, field, s));
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
	pol_opts_init(&opts->policy);
	*out = opts;
	return (0);
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
	opts->driver_name = opts->node_name = opts->node_uid = NULL;
	opts->kubeconfig = opts->kube_context = NULL;
	opts->kubelet_plugin_socket_path = NULL;
	opts->plugin_socket_path = opts->registrar_socket_path = NULL;
	if (opts->plugin_listener >= 0)
		close(opts->plugin_listener);
	if (opts->registrar_listener >= 0)
		close(opts->registrar_listener);
	opts->plugin_listener = opts->registrar_listener = -1;
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
dup_fd(int *dst, int src)
{
	if (src >= 0 && (*dst = fcntl(src, F_DUPFD_CLOEXEC, 3)) == -1) {
		*dst = -1;
		return (errno_code(errno));
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
		dst->plugin_listener = dst->registrar_listener = -1;
		return (KP_EINVAL);
	}
	memcpy(dst, src, sizeof(*dst));
	dst->driver_name = dst->node_name = dst->node_uid = NULL;
	dst->kubeconfig = dst->kube_context = NULL;
	dst->kubelet_plugin_socket_path = NULL;
	dst->plugin_socket_path = dst->registrar_socket_path = NULL;
	dst->plugin_listener = dst->registrar_listener = -1;
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
	    src->registrar_listener)) != 0) {
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
		    O_DRIVER));
	if (opts->kubelet_plugin_socket_path == NULL &&
	    opts->plugin_socket_path == NULL)
		return (opt_fail(opts, KP_EINVAL, "%s: DRA address must be set "
		    "(it defaults to kp_plugin_socket_path, which is not set "
		    "either)", O_KUBELET_PATH));
	if (opts->plugin_socket_path == NULL && opts->plugin_listener < 0)
		return (opt_fail(opts, KP_EINVAL, "%s / %s: a Unix domain "
		    "socket path and/or listener must be set for the kubelet "
		    "plugin", O_PLUGIN_PATH, O_PLUGIN_LSN));
	if (opts->registrar_socket_path == NULL &&
	    opts->registrar_listener < 0)
		return (opt_fail(opts, KP_EINVAL, "%s / %s: a Unix domain "
		    "socket path and/or listener must be set for the "
		    "registrar", O_REG_PATH, O_REG_LSN));
	if (opts->plugin_socket_path != NULL &&
	    opts->registrar_socket_path != NULL &&
	    strcmp(opts->plugin_socket_path, opts->registrar_socket_path) == 0)
		return (opt_fail(opts, KP_EINVAL, "%s / %s: the two servers "
		    "must not share one socket path", O_PLUGIN_PATH,
		    O_REG_PATH));
	if (!opts->v1alpha4 && !opts->v1beta1 && !opts->v1)
		return (opt_fail(opts, KP_EINVAL, "%s / %s / %s: no supported "
		    "DRA gRPC API is implemented and enabled", O_V1ALPHA4,
		    O_V1BETA1, O_V1));
	return (0);
}

int
kp_driver_name(struct kp_options *opts, const char *name)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	return (set_subdomain(opts, O_DRIVER, &opts->driver_name, name, 63));
}

int
kp_node_name(struct kp_options *opts, const char *name)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	return (set_subdomain(opts, O_NODE, &opts->node_name, name, 253));
}

int
kp_node_uid(struct kp_options *opts, const char *uid)
{
	char	q[QUOTE_SIZE];
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
		    "characters)", O_NODE_UID, quote(uid, q, sizeof(q))));
	return (set_string(opts, O_NODE_UID, &opts->node_uid, uid));
}

int
kp_kube_client_in_cluster(struct kp_options *opts)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	free(opts->kubeconfig);
	free(opts->kube_context);
	opts->kubeconfig = opts->kube_context = NULL;
	opts->kube_mode = KP_KUBE_IN_CLUSTER;
	return (0);
}

int
kp_kube_client_kubeconfig(struct kp_options *opts, const char *path,
    const char *context)
{
	char	 cwd[PATH_MAX], q[QUOTE_SIZE];
	char	*apath = NULL, *ctx = NULL;
	size_t	 len, clen;
	int	 n;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (path == NULL || path[0] == '\0')
		return (opt_fail(opts, KP_EINVAL, "%s: the kubeconfig path "
		    "must not be empty", O_KUBECONFIG));
	if (context != NULL && context[0] == '\0')
		return (opt_fail(opts, KP_EINVAL, "%s: the context must be "
		    "NULL (current-context) or a non-empty name",
		    O_KUBECONFIG));
	len = strlen(path);
	if (path[0] == '/') {
		if (len >= PATH_MAX)
			return (opt_fail(opts, KP_ENAMETOOLONG, "%s: %s is %zu "
			    "bytes, at most %d", O_KUBECONFIG,
			    quote(path, q, sizeof(q)), len, PATH_MAX - 1));
		apath = strdup(path);
	} else {
		/* Relative to the current directory now, as documented. */
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			n = errno;
			return (opt_fail(opts, errno_code(n), "%s: making %s "
			    "absolute: getcwd: %s", O_KUBECONFIG,
			    quote(path, q, sizeof(q)), strerror(n)));
		}
		clen = strcmp(cwd, "/") == 0 ? 0 : strlen(cwd);
		if (clen + 1 + len >= PATH_MAX)
			return (opt_fail(opts, KP_ENAMETOOLONG, "%s: %s made "
			    "absolute is longer than %d bytes", O_KUBECONFIG,
			    quote(path, q, sizeof(q)), PATH_MAX - 1));
		if ((apath = malloc(clen + 1 + len + 1)) != NULL) {
			memcpy(apath, cwd, clen);
			apath[clen] = '/';
			memcpy(apath + clen + 1, path, len + 1);
		}
	}
	if (apath == NULL || (context != NULL && (ctx = strdup(context)) ==
	    NULL)) {
		free(apath);
		return (opt_fail(opts, KP_ENOMEM, "%s: out of memory",
		    O_KUBECONFIG));
	}
	free(opts->kubeconfig);
	free(opts->kube_context);
	opts->kubeconfig = apath;
	opts->kube_context = ctx;
	opts->kube_mode = KP_KUBE_KUBECONFIG;
	return (0);
}

int
kp_kube_api_qps(struct kp_options *opts, double qps, int burst)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (!isfinite(qps) || qps <= 0 || qps > 1000)
		return (opt_fail(opts, KP_EINVAL, "%s: qps %g must be > 0 and "
		    "at most 1000", O_QPS, qps));
	if (burst < 1 || burst > 10000)
		return (opt_fail(opts, KP_EINVAL, "%s: burst %d must be "
		    "between 1 and 10000", O_QPS, burst));
	opts->kube_qps = qps;
	opts->kube_burst = burst;
	return (0);
}

/*
 * The rules every socket path follows: set, absolute, naming a file, short
 * enough for sun_path. An empty string is refused: in sun_path a leading
 * NUL would mean Linux's abstract namespace, not a file.
 */
static int
check_socket_path(struct kp_options *opts, const char *what,
    const char *path)
{
	char	q[QUOTE_SIZE];
	size_t	len;

	if (path == NULL || path[0] == '\0')
		return (opt_fail(opts, KP_EINVAL, "%s: the socket path must "
		    "not be empty", what));
	quote(path, q, sizeof(q));
	if (path[0] != '/')
		return (opt_fail(opts, KP_EINVAL, "%s: %s must be an absolute "
		    "path", what, q));
	len = strlen(path);
	if (len > KP_SUN_PATH_MAX)
		return (opt_fail(opts, KP_ENAMETOOLONG, "%s: %s is %zu bytes, "
		    "at most %d (sun_path)", what, q, len, KP_SUN_PATH_MAX));
	if (path[len - 1] == '/')
		return (opt_fail(opts, KP_EINVAL, "%s: %s must name a file, "
		    "not end in '/'", what, q));
	return (0);
}

int
kp_kubelet_plugin_socket_path(struct kp_options *opts, const char *path)
{
	int	rc;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if ((rc = check_socket_path(opts, O_KUBELET_PATH, path)) != 0)
		return (rc);
	return (set_string(opts, O_KUBELET_PATH,
	    &opts->kubelet_plugin_socket_path, path));
}

int
kp_plugin_socket_path(struct kp_options *opts, const char *path)
{
	int	rc;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if ((rc = check_socket_path(opts, O_PLUGIN_PATH, path)) != 0)
		return (rc);
	return (set_string(opts, O_PLUGIN_PATH, &opts->plugin_socket_path,
	    path));
}

int
kp_registrar_socket_path(struct kp_options *opts, const char *path)
{
	char	q[QUOTE_SIZE];
	int	rc;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if ((rc = check_socket_path(opts, O_REG_PATH, path)) != 0)
		return (rc);
	if (strrchr(path, '/')[1] == '.')
		return (opt_fail(opts, KP_EINVAL, "%s: %s: the base name must "
		    "not start with '.' (kubelet ignores such files)",
		    O_REG_PATH, quote(path, q, sizeof(q))));
	return (set_string(opts, O_REG_PATH, &opts->registrar_socket_path,
	    path));
}

/*
 * Take a copy of a listening AF_UNIX stream socket now, so that the
 * caller's fd is borrowed only for the call. -1 unsets.
 */
static int
set_listener(struct kp_options *opts, const char *what, int *field, int fd)
{
	static const char	*rule = "must be a listening AF_UNIX "
	    "SOCK_STREAM socket";
	int			 val, nfd;
	socklen_t		 len;

	if (fd == -1) {
		if (*field >= 0)
			close(*field);
		*field = -1;
		return (0);
	}
	if (fd < 0)
		return (opt_fail(opts, KP_EINVAL, "%s: fd %d %s or -1", what,
		    fd, rule));
	len = sizeof(val);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &val, &len) == -1)
		return (opt_fail(opts, KP_EINVAL, "%s: fd %d %s: %s", what, fd,
		    rule, errno == ENOTSOCK ? "not a socket" :
		    strerror(errno)));
	if (val != SOCK_STREAM)
		return (opt_fail(opts, KP_EINVAL, "%s: fd %d %s: not "
		    "SOCK_STREAM", what, fd, rule));
	len = sizeof(val);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &val, &len) == -1 ||
	    val != AF_UNIX)
		return (opt_fail(opts, KP_EINVAL, "%s: fd %d %s: not AF_UNIX",
		    what, fd, rule));
	len = sizeof(val);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &val, &len) == -1 ||
	    val == 0)
		return (opt_fail(opts, KP_EINVAL, "%s: fd %d %s: not listening "
		    "(call listen() first)", what, fd, rule));
	if ((nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) == -1)
		return (opt_fail(opts, errno_code(errno), "%s: duplicating fd "
		    "%d: %s", what, fd, strerror(errno)));
	if (*field >= 0)
		close(*field);
	*field = nfd;
	return (0);
}

int
kp_plugin_listener(struct kp_options *opts, int fd)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	return (set_listener(opts, O_PLUGIN_LSN, &opts->plugin_listener, fd));
}

int
kp_registrar_listener(struct kp_options *opts, int fd)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	return (set_listener(opts, O_REG_LSN, &opts->registrar_listener, fd));
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
	return (set_bool(opts, O_V1ALPHA4, opts ? &opts->v1alpha4 : NULL,
	    enable));
}

int
kp_node_v1beta1(struct kp_options *opts, int enable)
{
	return (set_bool(opts, O_V1BETA1, opts ? &opts->v1beta1 : NULL,
	    enable));
}

int
kp_node_v1(struct kp_options *opts, int enable)
{
	return (set_bool(opts, O_V1, opts ? &opts->v1 : NULL, enable));
}

int
kp_serialize(struct kp_options *opts, int enable)
{
	return (set_bool(opts, O_SERIALIZE, opts ? &opts->serialize : NULL,
	    enable));
}

int
kp_grpc_verbosity(struct kp_options *opts, int level)
{
	return (set_range(opts, O_GRPC_V, "level",
	    opts ? &opts->grpc_verbosity : NULL, level, -1000, 1000));
}

int
kp_log_verbosity(struct kp_options *opts, int level)
{
	return (set_range(opts, O_LOG_V, "level",
	    opts ? &opts->log_verbosity : NULL, level, 0, 10));
}

int
kp_worker_threads(struct kp_options *opts, int n)
{
	return (set_range(opts, O_WORKERS, "thread count",
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
    struct rpc_interceptor *list, size_t *n, kp_interceptor_fn fn,
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
	return (add_interceptor(opts, O_UNARY, opts->unary, &opts->n_unary,
	    fn, user));
}

int
kp_grpc_stream_interceptor(struct kp_options *opts, kp_interceptor_fn fn,
    void *user)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	return (add_interceptor(opts, O_STREAM, opts->stream, &opts->n_stream,
	    fn, user));
}

int
kp_socket_mode(struct kp_options *opts, unsigned int mode)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if ((mode & ~0777u) != 0)
		return (opt_fail(opts, KP_EINVAL, "%s: mode %#o must have only "
		    "permission bits (mode & ~0777 == 0)", O_MODE, mode));
	if ((mode & 0600) != 0600)
		return (opt_fail(opts, KP_EINVAL, "%s: mode %#o must let the "
		    "owner read and write (0600)", O_MODE, mode));
	opts->socket_mode = mode;
	return (0);
}

int
kp_allowed_peer_uid(struct kp_options *opts, uid_t uid)
{
	size_t	i;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (uid == (uid_t)-1)
		return (opt_fail(opts, KP_EINVAL, "%s: uid (uid_t)-1 is not a "
		    "user", O_PEER));
	if (!opts->peer_uids_set) {
		/* The first call replaces the default, root only. */
		opts->n_peer_uids = 0;
		opts->peer_uids_set = 1;
	}
	for (i = 0; i < opts->n_peer_uids; i++)
		if (opts->peer_uids[i] == uid)
			return (0);
	if (opts->n_peer_uids >= KP_MAX_PEER_UIDS)
		return (opt_fail(opts, KP_ENOMEM, "%s: at most %d uids",
		    O_PEER, KP_MAX_PEER_UIDS));
	opts->peer_uids[opts->n_peer_uids++] = uid;
	return (0);
}
