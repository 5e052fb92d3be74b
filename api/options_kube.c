/*
 * options_kube.c - the setters of the Kubernetes client (KubeClient and
 * rest.Config's QPS/Burst): in-cluster configuration or a kubeconfig, and
 * the client-side rate limit. The rules of every setter are options.c's.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/names.h"
#include "api/api.h"

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
	char	 cwd[PATH_MAX], q[OPT_QUOTE_SIZE];
	char	*apath = NULL, *ctx = NULL;
	size_t	 len, clen;
	int	 n;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (path == NULL || path[0] == '\0')
		return (opt_fail(opts, KP_EINVAL, "%s: the kubeconfig path "
		    "must not be empty", OPT_KUBECONFIG));
	if (context != NULL && context[0] == '\0')
		return (opt_fail(opts, KP_EINVAL, "%s: the context must be "
		    "NULL (current-context) or a non-empty name",
		    OPT_KUBECONFIG));
	len = strlen(path);
	if (path[0] == '/') {
		if (len >= PATH_MAX)
			return (opt_fail(opts, KP_ENAMETOOLONG, "%s: %s is %zu "
			    "bytes, at most %d", OPT_KUBECONFIG,
			    opt_quote(path, q, sizeof(q)), len, PATH_MAX - 1));
		apath = strdup(path);
	} else {
		/* Relative to the current directory now, as documented. */
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			n = errno;
			return (opt_fail(opts, opt_errno_code(n), "%s: making "
			    "%s absolute: getcwd: %s", OPT_KUBECONFIG,
			    opt_quote(path, q, sizeof(q)), strerror(n)));
		}
		clen = strcmp(cwd, "/") == 0 ? 0 : strlen(cwd);
		if (clen + 1 + len >= PATH_MAX)
			return (opt_fail(opts, KP_ENAMETOOLONG, "%s: %s made "
			    "absolute is longer than %d bytes", OPT_KUBECONFIG,
			    opt_quote(path, q, sizeof(q)), PATH_MAX - 1));
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
		    OPT_KUBECONFIG));
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
		    "at most 1000", OPT_QPS, qps));
	if (burst < 1 || burst > 10000)
		return (opt_fail(opts, KP_EINVAL, "%s: burst %d must be "
		    "between 1 and 10000", OPT_QPS, burst));
	opts->kube_qps = qps;
	opts->kube_burst = burst;
	return (0);
}

/*
 * A pool name: '/'-separated DNS subdomains, at most 253 characters (the
 * API server's rule for spec.pool.name, as validate.c applies it).
 */
static int
pool_name_ok(const char *name)
{
	const char	*s, *slash;
	size_t		 n;

	if (strlen(name) > NAME_MAX_SUBDOMAIN)
		return (0);
	for (s = name;; s = slash + 1) {
		slash = strchr(s, '/');
		n = slash != NULL ? (size_t)(slash - s) : strlen(s);
		if (!name_is_subdomain(s, n))
			return (0);
		if (slash == NULL)
			return (1);
	}
}

int
kp_reconcile_pool_with_name(struct kp_options *opts, const char *pool)
{
	char	q[OPT_QUOTE_SIZE];

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (pool == NULL || pool[0] == '\0') {
		opts->reconcile_pool[0] = '\0';
		return (0);
	}
	if (!pool_name_ok(pool))
		return (opt_fail(opts, KP_EINVAL, "%s: %s must be a pool name "
		    "('/'-separated DNS subdomains, at most 253 characters)",
		    OPT_RECONCILE, opt_quote(pool, q, sizeof(q))));
	snprintf(opts->reconcile_pool, sizeof(opts->reconcile_pool), "%s",
	    pool);
	return (0);
}

int
kp_validate_qualified_names(struct kp_options *opts, int on)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	opts->qnames_off = on == 0;
	return (0);
}

int
kp_kube_api_timeout(struct kp_options *opts, int timeout_ms)
{
	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (timeout_ms < 100 || timeout_ms > 300000)
		return (opt_fail(opts, KP_EINVAL, "%s: %d ms must be between "
		    "100 and 300000", OPT_TIMEOUT, timeout_ms));
	opts->kube_timeout_ms = timeout_ms;
	return (0);
}
