/*
 * options_metadata.c - device metadata (KEP-5304; Go helper v0.36
 * EnableDeviceMetadata and MetadataVersions, merged into one call as in
 * upstream's master: EnableDeviceMetadata(enabled, versions)). Off by
 * default. At kp_start() the metadata directory is derived from the
 * plugin data directory (opt_metadata_resolve).
 *
 * Runs in: the driver process.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"

#define OPT_METADATA	"kp_device_metadata (EnableDeviceMetadata)"

static const char *const known[] = {
	KP_METADATA_V1ALPHA1,
	KP_METADATA_V1BETA1,
};

int
kp_device_metadata(struct kp_options *opts, int enable,
    const char *const *versions, size_t n)
{
	char	 q[OPT_QUOTE_SIZE];
	int	 v[KP_MAX_METADATA_VERSIONS];
	size_t	 i, j, k;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (enable != 0 && enable != 1)
		return (opt_fail(opts, KP_EINVAL, "%s: enable %d must be 0 "
		    "or 1", OPT_METADATA, enable));
	if (!enable) {
		opts->metadata = 0;
		opts->n_metadata_versions = 0;
		return (0);
	}
	/* upstream: "metadata versions must be explicitly selected in
	 * EnableDeviceMetadata, none chosen" */
	if (n == 0 || versions == NULL)
		return (opt_fail(opts, KP_EINVAL, "%s: metadata versions "
		    "must be explicitly selected, none chosen (%s, %s)",
		    OPT_METADATA, KP_METADATA_V1BETA1, KP_METADATA_V1ALPHA1));
	if (n > KP_MAX_METADATA_VERSIONS)
		return (opt_fail(opts, KP_EINVAL, "%s: %zu versions, at most "
		    "%d", OPT_METADATA, n, KP_MAX_METADATA_VERSIONS));
	for (i = 0; i < n; i++) {
		if (versions[i] == NULL)
			return (opt_fail(opts, KP_EINVAL, "%s: versions[%zu] "
			    "is NULL", OPT_METADATA, i));
		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (strcmp(versions[i], known[k]) == 0)
				break;
		if (k == sizeof(known) / sizeof(known[0]))
			return (opt_fail(opts, KP_EINVAL, "%s: metadata "
			    "version %s is not supported (%s, %s)",
			    OPT_METADATA, opt_quote(versions[i], q, sizeof(q)),
			    KP_METADATA_V1BETA1, KP_METADATA_V1ALPHA1));
		for (j = 0; j < i; j++)
			if (v[j] == (int)k)
				return (opt_fail(opts, KP_EINVAL, "%s: "
				    "metadata version %s listed twice",
				    OPT_METADATA, versions[i]));
		v[i] = (int)k;
	}
	opts->metadata = 1;
	for (i = 0; i < n; i++)
		snprintf(opts->metadata_versions[i],
		    sizeof(opts->metadata_versions[i]), "%s", known[v[i]]);
	opts->n_metadata_versions = n;
	return (0);
}

/* dir is p or p lies beneath dir. */
static int
beneath(const char *dir, const char *p)
{
	size_t	 n = strlen(dir);

	return (strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/' ||
	    (n > 0 && dir[n - 1] == '/')));
}

/*
 * At kp_start(), after opt_dirs_resolve(): the metadata directory,
 * <plugin data directory>/dra-device-metadata, where the plugin data
 * directory is kp_plugin_data_directory_path(), else the directory of
 * the DRA socket (the 1.32 path option), else the default. It must not
 * lie within a state directory: the nodeserver owns those, and could
 * turn the metadata file into a link to any host file, which the
 * runtime would then mount into the container.
 */
int
opt_metadata_resolve(struct kp_options *o)
{
	const struct policy_opts	*po = &o->policy;
	char				 dir[POL_PATH_MAX];
	const char			*s;
	size_t				 i;
	int				 n;

	o->metadata_dir[0] = '\0';
	if (!o->metadata || o->driver_name == NULL)
		return (0);
	if (o->plugin_dir[0] != '\0')
		n = snprintf(dir, sizeof(dir), "%s", o->plugin_dir);
	else if (o->plugin_socket_path != NULL &&
	    (s = strrchr(o->plugin_socket_path, '/')) != NULL)
		n = snprintf(dir, sizeof(dir), "%.*s",
		    (int)(s - o->plugin_socket_path), o->plugin_socket_path);
	else
		n = snprintf(dir, sizeof(dir), "%s/plugins/%s",
		    o->kubelet_root[0] != '\0' ? o->kubelet_root :
		    "/var/lib/kubelet", o->driver_name);
	if (n <= 0 || (size_t)n >= sizeof(dir) ||
	    (n = snprintf(o->metadata_dir, sizeof(o->metadata_dir), "%s/%s",
	    n > 1 ? dir : "", KP_METADATA_SUBDIR)) <= 0 ||
	    (size_t)n >= sizeof(o->metadata_dir))
		return (opt_fail(o, KP_ENAMETOOLONG, "%s: the metadata "
		    "directory under %.64s is longer than %d bytes",
		    OPT_METADATA, dir, POL_PATH_MAX - 1));
	for (i = 0; i < po->n_state_dirs; i++)
		if (beneath(po->state_dirs[i], o->metadata_dir) ||
		    beneath(o->metadata_dir, po->state_dirs[i]))
			return (opt_fail(o, KP_EINVAL, "%s: the metadata "
			    "directory %s and the state directory %s "
			    "(kp_sandbox_state_dir) overlap: the nodeserver "
			    "owns a state directory and could link the "
			    "mounted files anywhere", OPT_METADATA,
			    o->metadata_dir, po->state_dirs[i]));
	return (0);
}
