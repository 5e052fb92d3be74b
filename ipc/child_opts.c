/*
 * child_opts.c - struct kp_options as a flat, self-contained copy for a
 * child started by exec (role_exec.c): no pointer of the parent's crosses,
 * so the child learns nothing of the supervisor's layout, and the child
 * checks every size and offset before it rebuilds the struct.
 *
 * The copy: a header (magic, version, sizes, one offset per string
 * option, a checksum), the struct with every pointer cleared, then the
 * strings, each NUL-terminated. The callbacks, their user pointers and the
 * interceptors are dropped: the roles that are exec'd call none of them
 * (their log lines go to the supervisor as frames, never to kp_log_fn).
 *
 * Runs in: the supervisor (child_opts_flatten, before an exec) and the
 * exec'd child (child_opts_load, in role_exec.c's constructor).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/child.h"

#define CHILD_OPTS_MAGIC	0x6b70666fu	/* "kpfo" */

/* The string options, by their place in the struct. */
static const struct {
	size_t		 off;
	const char	*name;
} child_opts_strs[] = {
	{ offsetof(struct kp_options, driver_name), "driver_name" },
	{ offsetof(struct kp_options, node_name), "node_name" },
	{ offsetof(struct kp_options, node_uid), "node_uid" },
	{ offsetof(struct kp_options, kubeconfig), "kubeconfig" },
	{ offsetof(struct kp_options, kube_context), "kube_context" },
	{ offsetof(struct kp_options, kubelet_plugin_socket_path),
	    "kubelet_plugin_socket_path" },
	{ offsetof(struct kp_options, plugin_socket_path),
	    "plugin_socket_path" },
	{ offsetof(struct kp_options, registrar_socket_path),
	    "registrar_socket_path" },
};
#define CHILD_OPTS_NSTR	(sizeof(child_opts_strs) / sizeof(child_opts_strs[0]))

struct child_opts_hdr {
	uint32_t	 magic;
	uint32_t	 version;	/* CHILD_EXEC_VERSION */
	uint32_t	 opts_size;	/* sizeof(struct kp_options) */
	uint32_t	 n_str;
	uint32_t	 str_off[CHILD_OPTS_NSTR];	/* in the area, + 1;
							 * 0: NULL */
	uint32_t	 area_len;
	uint32_t	 pad;
	uint64_t	 sum;		/* FNV-1a of the copy, this
					 * field 0 */
};

static char **
opt_str(struct kp_options *o, size_t i)
{
	return ((char **)(void *)((char *)o + child_opts_strs[i].off));
}

static uint64_t
fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ull;
	return (h);
}

/* The checksum of a copy whose header is h (its sum not counted). */
static uint64_t
opts_sum(struct child_opts_hdr h, const uint8_t *rest, size_t n)
{
	h.sum = 0;
	return (fnv1a(fnv1a(0xcbf29ce484222325ull, (const uint8_t *)&h,
	    sizeof(h)), rest, n));
}

/* Every pointer of the struct cleared (the strings are set apart). */
static void
opts_strip(struct kp_options *o)
{
	size_t	 i;

	for (i = 0; i < CHILD_OPTS_NSTR; i++)
		*opt_str(o, i) = NULL;
	o->log_fn = NULL;
	o->log_user = NULL;
	memset(o->unary, 0, sizeof(o->unary));
	o->n_unary = 0;
	memset(o->stream, 0, sizeof(o->stream));
	o->n_stream = 0;
	memset(o->advertised, 0, sizeof(o->advertised));
	o->n_advertised = 0;
	o->state_fn = NULL;
	o->state_user = NULL;
	o->initial_state = NULL;	/* the flag stays */
	o->error_fn = NULL;
	o->error_user = NULL;
	memset(&o->journal_hooks, 0, sizeof(o->journal_hooks));
	memset(o->errbuf, 0, sizeof(o->errbuf));
}

/*
 * The flat copy of o in a new buffer (*buf, *len; free it). KP_ENOMEM or
 * KP_EINVAL (a string over 64 KiB) with the reason in err.
 */
int
child_opts_flatten(const struct kp_options *o, uint8_t **buf, size_t *len,
    char *err, size_t errsize)
{
	struct child_opts_hdr	 h;
	struct kp_options	*copy;
	const char		*s;
	size_t			 i, n, area = 0;
	uint8_t			*b;

	*buf = NULL;
	*len = 0;
	memset(&h, 0, sizeof(h));
	for (i = 0; i < CHILD_OPTS_NSTR; i++) {
		s = *opt_str((struct kp_options *)(uintptr_t)o, i);
		if (s == NULL)
			continue;
		if ((n = strlen(s)) > 65535) {
			snprintf(err, errsize, "options copy: %s is %zu bytes "
			    "(at most 65535)", child_opts_strs[i].name, n);
			return (KP_EINVAL);
		}
		h.str_off[i] = (uint32_t)area + 1;
		area += n + 1;
	}
	*len = sizeof(h) + sizeof(*o) + area;
	if ((b = calloc(1, *len)) == NULL) {
		snprintf(err, errsize, "options copy: out of memory");
		return (KP_ENOMEM);
	}
	copy = (struct kp_options *)(void *)(b + sizeof(h));
	memcpy(copy, o, sizeof(*o));
	opts_strip(copy);
	for (i = 0; i < CHILD_OPTS_NSTR; i++) {
		s = *opt_str((struct kp_options *)(uintptr_t)o, i);
		if (s != NULL)
			memcpy(b + sizeof(h) + sizeof(*o) + h.str_off[i] - 1,
			    s, strlen(s) + 1);
	}
	h.magic = CHILD_OPTS_MAGIC;
	h.version = CHILD_EXEC_VERSION;
	h.opts_size = sizeof(*o);
	h.n_str = CHILD_OPTS_NSTR;
	h.area_len = (uint32_t)area;
	h.sum = opts_sum(h, b + sizeof(h), *len - sizeof(h));
	memcpy(b, &h, sizeof(h));
	*buf = b;
	return (0);
}

/*
 * Rebuild the options from the flat copy buf (len bytes) into a new
 * struct (*out; its strings point into the same allocation, one free()).
 * The copy comes from our own parent, but a short or damaged one fails
 * here with a message naming what is wrong, never later in a role.
 */
int
child_opts_load(const uint8_t *buf, size_t len, struct kp_options **out,
    char *err, size_t errsize)
{
	struct child_opts_hdr	 h;
	struct kp_options	*o;
	char			*area;
	size_t			 i, off;

	*out = NULL;
	if (len < sizeof(h)) {
		snprintf(err, errsize, "options copy: %zu bytes, shorter "
		    "than its header (%zu)", len, sizeof(h));
		return (KP_EPROTO);
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != CHILD_OPTS_MAGIC || h.version != CHILD_EXEC_VERSION ||
	    h.opts_size != sizeof(*o) || h.n_str != CHILD_OPTS_NSTR) {
		snprintf(err, errsize, "options copy: magic 0x%x version %u "
		    "struct %u bytes %u strings, expected 0x%x %u %zu %zu "
		    "(a driver binary or library of another build?)",
		    (unsigned)h.magic, (unsigned)h.version,
		    (unsigned)h.opts_size, (unsigned)h.n_str,
		    CHILD_OPTS_MAGIC, CHILD_EXEC_VERSION, sizeof(*o),
		    CHILD_OPTS_NSTR);
		return (KP_EPROTO);
	}
	if (len != sizeof(h) + sizeof(*o) + h.area_len) {
		snprintf(err, errsize, "options copy: %zu bytes, expected "
		    "%zu", len, sizeof(h) + sizeof(*o) + (size_t)h.area_len);
		return (KP_EPROTO);
	}
	if (opts_sum(h, buf + sizeof(h), len - sizeof(h)) != h.sum) {
		snprintf(err, errsize, "options copy: checksum mismatch");
		return (KP_EPROTO);
	}
	area = (char *)(uintptr_t)(buf + sizeof(h) + sizeof(*o));
	for (i = 0; i < CHILD_OPTS_NSTR; i++) {
		if (h.str_off[i] == 0)
			continue;
		off = h.str_off[i] - 1;
		if (off >= h.area_len ||
		    memchr(area + off, '\0', h.area_len - off) == NULL) {
			snprintf(err, errsize, "options copy: %s at %zu, "
			    "outside the %u bytes of strings or unterminated",
			    child_opts_strs[i].name, off,
			    (unsigned)h.area_len);
			return (KP_EPROTO);
		}
	}
	if ((o = malloc(sizeof(*o) + h.area_len)) == NULL) {
		snprintf(err, errsize, "options copy: out of memory");
		return (KP_ENOMEM);
	}
	memcpy(o, buf + sizeof(h), sizeof(*o) + h.area_len);
	if (o->magic != KP_OPTIONS_MAGIC) {
		free(o);
		snprintf(err, errsize, "options copy: not a struct kp_options");
		return (KP_EPROTO);
	}
	/* No pointer from the copy is ever used, whatever it holds. */
	opts_strip(o);
	area = (char *)(o + 1);
	for (i = 0; i < CHILD_OPTS_NSTR; i++)
		*opt_str(o, i) = h.str_off[i] == 0 ? NULL :
		    area + h.str_off[i] - 1;
	opt_advertise(o);	/* derived: pointers to constant names */
	*out = o;
	return (0);
}

/* Fields by their place, to name where two copies differ. */
#define F(x)	{ offsetof(struct kp_options, x), #x }
static const struct {
	size_t		 off;
	const char	*name;
} child_opts_fields[] = {
	F(magic), F(reconcile_pool), F(qnames_off), F(kube_mode), F(kube_qps),
	F(kube_burst), F(kube_timeout_ms), F(plugin_listener),
	F(registrar_listener), F(socket_mode), F(peer_uids),
	F(n_peer_uids), F(peer_uids_set), F(v1alpha4), F(v1beta1), F(v1),
	F(grpc_verbosity), F(log_verbosity), F(log_forward),
	F(error_forward), F(fork_hooks), F(exec_hooks), F(serialize), F(workers), F(max_conns),
	F(handshake_ms), F(shutdown_grace_ms), F(hung_ms), F(termlog_off), F(termlog),
	F(policy), F(health_off), F(health_v1_off), F(health_v1alpha1_off),
	F(kubelet_root), F(registrar_dir), F(registrar_file), F(plugin_dir),
	F(plugin_file), F(plugin_path_derived), F(registrar_path_derived),
	F(metadata), F(metadata_versions), F(n_metadata_versions),
	F(metadata_dir), F(http_addr), F(http_len), F(http_endpoint),
	F(rolling_uid), F(flock_dir), F(registration_off), F(dra_off),
	F(lock_path), F(journal_dir), F(initial_state_set),
};
#undef F

/*
 * Whether two flat copies (a: the plugin's, b: another run's) hold the
 * same options: 0, or KP_EINVAL with the first difference named in err
 * ("driver_name: \"a\" in the plugin, \"b\" here"); KP_EPROTO or
 * KP_ENOMEM when either does not load. Callbacks, interceptors and
 * other pointers are not compared (a copy holds none).
 */
int
child_opts_diff(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
    char *err, size_t errsize)
{
	struct kp_options	*oa = NULL, *ob = NULL;
	const char		*sa, *sb, *name = "the start";
	size_t			 i, at;
	int			 r;

	if ((r = child_opts_load(a, alen, &oa, err, errsize)) != 0 ||
	    (r = child_opts_load(b, blen, &ob, err, errsize)) != 0)
		goto out;
	for (i = 0; i < CHILD_OPTS_NSTR; i++) {
		sa = *opt_str(oa, i);
		sb = *opt_str(ob, i);
		if (sa == sb || (sa != NULL && sb != NULL &&
		    strcmp(sa, sb) == 0))
			continue;
		snprintf(err, errsize, "%s: \"%.80s\" in the plugin, "
		    "\"%.80s\" here", child_opts_strs[i].name,
		    sa ? sa : "(unset)", sb ? sb : "(unset)");
		r = KP_EINVAL;
		goto out;
	}
	opts_strip(oa);
	opts_strip(ob);
	for (at = 0; at < sizeof(*oa); at++)
		if (((uint8_t *)oa)[at] != ((uint8_t *)ob)[at])
			break;
	if (at < sizeof(*oa)) {
		for (i = 0; i < sizeof(child_opts_fields) /
		    sizeof(child_opts_fields[0]); i++)
			if (child_opts_fields[i].off <= at)
				name = child_opts_fields[i].name;
		snprintf(err, errsize, "%s differs (byte %zu of the options)",
		    name, at);
		r = KP_EINVAL;
	}
out:
	free(oa);
	free(ob);
	return (r);
}
