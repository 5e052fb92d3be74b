/*
 * mdjson.h - the device metadata file's JSON (KEP-5304), as upstream's
 * Go encoder writes it (mdjson.c): shared by the nodeserver and the
 * supervisor.
 */
#ifndef KP_BASE_MDJSON_H
#define KP_BASE_MDJSON_H

#include <stddef.h>

#include "kubeletplugin.h"

struct kp_options;

#define MD_MAX_ATTRS	32	/* v1beta1 maxProperties */
#define MD_MAX_CONTENT	(64u * 1024)	/* KP_IPC_MAX_METADATA */

/* One device of a request (all borrowed). */
struct md_device {
	const char	*pool;
	const char	*name;
	const char	*attrs;		/* md_attrs_json(); NULL: none */
	const char	*net;		/* md_net_json(); NULL: none */
};

/*
 * What md_encode() writes for one request (all borrowed); the driver name
 * and the versions come from the options.
 */
struct md_input {
	const char		 *namespace_;
	const char		 *name;
	const char		 *uid;
	long long		  generation;
	const char		 *pod_claim_name;	/* NULL or "": none */
	const char		 *request;
	const struct md_device	 *devices;
	size_t			  n_devices;
};

/* A growing NUL-terminated buffer; oom set once an allocation failed. */
struct md_buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
	int	 oom;
};

int	md_encode(const struct kp_options *, const struct md_input *,
	    char **, size_t *);
void	md_put(struct md_buf *, const char *, size_t);
void	md_json_string(struct md_buf *, const char *);
const char *md_copy_attrs(const struct kp_attribute *, size_t,
	    struct kp_attribute *);
const char *md_attrs_json(struct md_buf *, const struct kp_attribute *,
	    size_t);
const char *md_net_json(struct md_buf *, const char *, const char *const *,
	    size_t, const char *);

#endif
