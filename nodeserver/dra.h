/*
 * dra.h - the nodeserver's DRA translation layer: gRPC requests of the DRA
 * kubelet services (v1alpha4, v1beta1, v1) to the driver's hooks and back.
 *
 * The three APIs are identical on the wire except v1's Device.share_id
 * (field 5, Kubernetes 1.35). One codec (dra_v1.c, on the v1 messages)
 * therefore serves all of them; an older version is encoded with share_id
 * never set, which gives exactly that version's bytes. The per-version
 * files only hold what differs: method paths, advertised names, share_id.
 *
 * Every response has exactly one map entry per distinct claim UID of the
 * request, whatever the hook did: claims the hook left untouched succeed
 * with no devices, and builder calls that fail leave their claim failed.
 */
#ifndef KP_DRA_H
#define KP_DRA_H

#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "kubeletplugin.h"
#include "rpc/rpc.h"
#include "base/config.h"
#include "base/mdjson.h"

#define DRA_MAX_ERROR	1024	/* bytes of a claim's error text */

/* Short names for the generated v1 code (dra_v1.pb-c.h). */
#define V1(f)	k8s__io__kubelet__pkg__apis__dra__v1__##f
#define V1T(t)	K8s__Io__Kubelet__Pkg__Apis__Dra__V1__##t
#define V1_SHARE_ID_SET \
	K8S__IO__KUBELET__PKG__APIS__DRA__V1__DEVICE___SHARE_ID_SHARE_ID
#define V1_SHARE_ID_NOT_SET \
	K8S__IO__KUBELET__PKG__APIS__DRA__V1__DEVICE___SHARE_ID__NOT_SET

enum dra_version {
	DRA_V1ALPHA4 = 0,	/* /v1alpha3.Node/ (kubelet 1.31-1.33) */
	DRA_V1BETA1 = 1,	/* kubelet 1.32+ */
	DRA_V1 = 2,		/* kubelet 1.34+ */
	DRA_NVERSIONS = 3
};

/* What differs between the versions. */
struct dra_version_info {
	const char	*name;		/* "v1", for messages */
	const char	*prepare_path;	/* "/pkg.Service/Method" */
	const char	*unprepare_path;
	int		 share_id;	/* Device.share_id exists */
};

/*
 * A claim's allocation for this driver, filled by a dra_lookup_fn. Every
 * string is owned (use dra_claim_alloc_add/_config to fill it) and freed by
 * dra_claim_alloc_free().
 */
struct dra_claim_alloc {
	struct kp_allocated_device	*results;
	size_t				 n_results;
	char				*config_json; /* NULL: "[]" */
	char				*pod_claim_name; /* NULL: none */
	/* config_json parsed (dra_alloc.c): configs[i] borrow from
	 * config_root (a json_t) and own their requests[] and
	 * parameters text. */
	struct kp_config		*configs;
	size_t				 n_configs;
	void				*config_root;
	/* For kp_claim_info() (claim_info.c): the claim as compact JSON
	 * (NULL: none) and the version it was fetched in (static). */
	char				*claim_json;
	size_t				 claim_json_len;
	const char			*api_version;
};

/*
 * Looks up claim ns/name with the given UID (through the supervisor and the
 * publisher). out is zeroed on entry. Returns 0 with out filled, or
 * non-zero with a message for this claim in err (errsize bytes), e.g.
 * "claim ns/name got replaced". out is freed by the caller either way.
 * Called from several handler threads at once unless serialized.
 */
typedef int (*dra_lookup_fn)(void *user, const char *ns, const char *name,
    const char *uid, struct dra_claim_alloc *out, char *err, size_t errsize);

/*
 * Looks up the n claims c[] at once (all asked before the first answer is
 * awaited): rc[i] and out[i] as a dra_lookup_fn's return and out for
 * claim i, its message in err + i * errsize. Optional: without it the
 * claims are looked up one after the other with the dra_lookup_fn.
 */
typedef void (*dra_lookup_many_fn)(void *user, const struct kp_claim *c,
    size_t n, struct dra_claim_alloc *out, int *rc, char *err,
    size_t errsize);

struct dra_ctx;

/* The rpc_method user of one method. */
struct dra_binding {
	struct dra_ctx		*ctx;
	enum dra_version	 version;
	int			 prepare;	/* 0: unprepare */
};

/*
 * Set up with dra_init(), then set lookup/lookup_user (NULL lookup: no
 * Kubernetes access; claims reach the hook without allocation data).
 * Everything is borrowed and must outlive the context.
 */
/*
 * Device metadata requests to the supervisor (ns_wrap.c). Each returns 0
 * or non-zero with the reason in err.
 */
typedef int (*dra_md_write_fn)(void *user, const char *ns, const char *name,
    const char *uid, const char *request, const char *pod_claim_name,
    const char *content, size_t len, char *err, size_t errsize);
typedef int (*dra_md_remove_fn)(void *user, const char *ns, const char *name,
    const char *uid, char *err, size_t errsize);

/*
 * A prepare's look-ups without a thread waiting for them (optional; see
 * nodeserver/ns_lookup.c): lookup_new(user, c, n, until_ms, done, arg)
 * makes a batch (NULL: out of memory; c borrowed until lookup_end);
 * lookup_start sends; done(arg) is called once, from another thread or
 * from lookup_start/_cancel, when every claim was answered, the monotonic
 * time until_ms passed (-1: never) or lookup_cancel was called;
 * lookup_end then fills out/rc/err as a dra_lookup_many_fn does and frees
 * the batch (out NULL: only frees; also for a batch never started).
 */
struct dra_lookup_async {
	void	*(*lookup_new)(void *, const struct kp_claim *, size_t,
		    int64_t, void (*)(void *), void *);
	void	 (*lookup_start)(void *);
	void	 (*lookup_cancel)(void *);
	void	 (*lookup_end)(void *, struct dra_claim_alloc *, int *,
		    char *, size_t);
};

struct dra_ctx {
	const struct kp_options	*cfg;
	const struct kp_hooks	*hooks;
	dra_lookup_fn		 lookup;
	dra_lookup_many_fn	 lookup_many;	/* optional */
	const struct dra_lookup_async *lookup_async;	/* optional */
	void			*lookup_user;
	/* Device metadata (metadata.c); NULL md_write: off. */
	dra_md_write_fn		 md_write;
	dra_md_remove_fn	 md_remove;
	void			*md_user;
	pthread_mutex_t		 lock;	/* serializes hooks */
	int			 lock_fd;	/* serialize.lock, or -1 */
	struct dra_binding	 bind[2 * DRA_NVERSIONS];
	struct journal		*journal;	/* NULL: none (journal_dra.c) */
};

/* One device of a claim's result (all strings owned). */
struct dra_device {
	char	**request_names;
	size_t	  n_request_names;
	char	 *pool;
	char	 *device;
	char	**cdi_ids;
	size_t	  n_cdi_ids;
	char	 *share_id;	/* NULL: absent */
	void	 *mem;		/* one block: every pointer above; NULL:
				 * in the results' arena */
};

/* Device metadata members of one device (metadata_attrs.c). */
#define MD_ATTRS	0	/* "attributes" */
#define MD_NET		1	/* "networkData" */
struct md_attrs {
	char	*pool;
	char	*device;
	int	 kind;		/* MD_ATTRS, MD_NET */
	char	*json;		/* the member, indented, no last newline */
};

/* The result of one claim: one map entry of the response. */
struct dra_result {
	const char		*uid;		/* borrowed: request */
	char			*error;		/* NULL: success */
	int			 error_static;	/* not owned */
	struct dra_device	*devices;
	size_t			 n_devices;
	size_t			 cap_devices;
	/* Room for the first device, in the results' own block
	 * (dra_results_init; NULL elsewhere): a claim's usual one device
	 * costs no array of its own. */
	struct dra_device	*slot;
	/* Where the hook's devices are copied (the results' arena;
	 * NULL: each its own malloc). */
	struct dra_arena_chunk	**arena;
	/* kp_prepare_device_metadata(): dropped with the devices */
	struct md_attrs		*md_attrs;
	size_t			 n_md_attrs;
	/* For the journal (journal_dra.c): */
	char			*cdi_spec;	/* kp_prepare_cdi_spec */
	char			*jdata;		/* kp_prepare_journal_data */
	struct journal_view	*view;		/* unprepare: its entry */
};

/*
 * The results of a call. claims[0 .. n_hook-1] are the claims passed to the
 * hook, in its order; the rest failed before the hook (look-ups).
 */
struct dra_results {
	struct dra_result	*claims;
	size_t			 n;
	size_t			 n_hook;
	int			(*cancelled)(void *);
	void			*cancel_arg;
	const char		*driver;	/* the driver's name */
	struct dra_arena_chunk	*arena;		/* devices, freed with r */
};

/* A decoded request: the distinct claims, in order of first appearance. */
struct dra_arena_chunk;
struct dra_request {
	void		*msg;		/* owns the strings */
	/* Where msg and the claims live (dra_v1.c): freed at once. */
	struct dra_arena_chunk *arena;
	struct kp_claim	*claims;	/* strings borrowed from msg */
	size_t		 n_claims;
	size_t		 n_requested;	/* with repeats */
};

/*
 * Where an encoded response goes: alloc(arg, n) gives n bytes for it
 * (rpc_call_reply_buf: packed straight into gRPC's slice) or NULL, and
 * then, as with no dra_out at all, it is malloc'd and malloced is set
 * (the caller frees it).
 */
struct dra_out {
	uint8_t	*(*alloc)(void *, size_t);
	void	 *arg;
	int	  malloced;
};

/*
 * A prepare's claims split by the journal: known[i] for those it answers
 * (prepared before, same UID: no look-up), todo[] the others, whose
 * look-ups fill tmp[], rc[] and err (KP_ERROR_SIZE each) in todo's order.
 */
struct dra_split {
	unsigned char		*known;
	struct kp_claim		*todo;
	size_t			 n_todo;
	struct dra_claim_alloc	*tmp;
	int			*rc;
	char			*err;
};

/* dra.c */
extern _Atomic uint64_t	dra_lock_waits;
extern _Atomic uint64_t	dra_lock_wait_ns;
int	dra_init(struct dra_ctx *, const struct kp_options *,
	    const struct kp_hooks *);
void	dra_free(struct dra_ctx *);
int	dra_prepare(struct dra_ctx *, enum dra_version, const uint8_t *,
	    size_t, int (*)(void *), void *, uint8_t **, size_t *, char *,
	    size_t);
int	dra_unprepare(struct dra_ctx *, enum dra_version, const uint8_t *,
	    size_t, int (*)(void *), void *, uint8_t **, size_t *, char *,
	    size_t);
size_t	dra_methods(struct dra_ctx *, struct rpc_method *, size_t);
int	dra_split_known(struct dra_ctx *, const struct dra_request *,
	    struct dra_split *);
void	dra_split_free(struct dra_split *);
void	dra_lookup_sync(struct dra_ctx *, struct dra_split *);
int	dra_prepare_finish(struct dra_ctx *, const struct dra_version_info *,
	    const struct dra_request *, struct dra_split *,
	    struct dra_results *, struct dra_out *, uint8_t **, size_t *,
	    char *, size_t);
int	dra_decode_status(int, const char *, char *, size_t);
int	dra_call_cancelled(void *);
uint8_t	*dra_reply_buf(void *, size_t);

/* dra_async.c: a prepare whose look-ups hold no thread */
int	dra_prepare_async(struct dra_binding *, struct rpc_call *,
	    const uint8_t *, size_t);
const struct dra_version_info *dra_version(enum dra_version);

/* flock.c */
int	dra_flock_take(int, char *, size_t);
void	dra_flock_release(int);

struct json_t;
/* claim_info.c: the hook calls kp_claim_info() can find a claim in. */
enum ci_state { CI_EMPTY, CI_BUILDING, CI_DONE, CI_FAILED };
struct ci_slot {			/* one claim's, built on first use */
	enum ci_state			 state;
	struct kp_claim_info		*info;	/* CI_DONE */
	struct json_t			*root;
	struct dra_arena_chunk		*arena;
};
struct ci_call {
	struct ci_call			*next;
	const struct kp_claim		*claims;
	size_t				 n;
	const struct dra_claim_alloc	*al;	/* NULL: nothing fetched */
	const char			*driver;
	struct ci_slot			*slots;	/* n, on first use */
	int				 busy;	/* threads in kp_claim_info */
};
void	ci_call_begin(struct ci_call *, const struct kp_claim *, size_t,
	    const struct dra_claim_alloc *, const char *);
void	ci_call_end(struct ci_call *);
int	ci_parse(struct dra_arena_chunk **, const char *, size_t,
	    const char *, const char *, const struct kp_claim *, struct json_t **,
	    struct kp_claim_info **);

/* dra_arena.c */
struct dra_arena_chunk;
int	dra_arena_grow(struct dra_arena_chunk **, size_t);
void	*dra_arena_alloc(void *, size_t);
void	dra_arena_free(struct dra_arena_chunk *);

/* dra_alloc.c */
int	dra_claim_alloc_add(struct dra_claim_alloc *, const char *,
	    const char *, const char *, int);
int	dra_claim_alloc_config(struct dra_claim_alloc *, const char *,
	    const char *, char *, size_t);
void	dra_claim_alloc_free(struct dra_claim_alloc *);

/* hooks.c */
int	dra_results_init(struct dra_results *, size_t, int (*)(void *),
	    void *);
void	dra_results_free(struct dra_results *);
int	dra_result_fail(struct dra_results *, size_t, const char *);
int	dra_result_fail_one(struct dra_result *, const char *);
int	dra_hook_call(const struct kp_hooks *, int, const struct kp_claim *,
	    struct dra_results *, char *, size_t);
struct dra_result *dra_prepare_claim(struct kp_prepare_results *, size_t);
int	dra_result_add(struct dra_result *, const struct kp_prepared_device *);
int	dra_device_add_cdi_id(struct dra_device *, const char *);
void	dra_result_reset(struct dra_result *);

/* journal_dra.c: the prepared-claim journal around the hooks */
struct journal;
struct journal_view;
/* The CDI spec names of this driver, listed once per call. */
struct jr_specs {
	int	  listed;	/* 1: names is this driver's list */
	char	**names;
	size_t	  n;
};
void	jr_specs_free(struct jr_specs *);
int	jr_start(struct dra_ctx *, char *, size_t);
void	jr_stop(struct dra_ctx *);
int	jr_known(struct dra_ctx *, const char *, int);
void	jr_replay(struct dra_ctx *, const struct kp_claim *,
	    struct dra_result *, struct jr_specs *);
void	jr_record(struct dra_ctx *, const struct kp_claim *,
	    struct dra_results *);
void	jr_discard(struct dra_ctx *, struct dra_results *);
void	jr_after(struct dra_ctx *, int, const struct kp_claim *,
	    struct dra_results *, int);
void	jr_unprepare_begin(struct dra_ctx *, struct dra_results *);
void	jr_unprepare_end(struct dra_ctx *, struct dra_results *);


/* dra_v1.c: the codec shared by all versions */
int	dra_decode_request(const uint8_t *, size_t, struct dra_request *,
	    char *, size_t);
void	dra_request_free(struct dra_request *);
int	dra_encode_prepare(const struct dra_results *, int,
	    struct dra_out *, uint8_t **, size_t *);
int	dra_encode_unprepare(const struct dra_results *, struct dra_out *,
	    uint8_t **, size_t *);
extern const struct dra_version_info dra_v1_info;

/* dra_v1beta1.c, dra_v1alpha4.c */
extern const struct dra_version_info dra_v1beta1_info;
extern const struct dra_version_info dra_v1alpha4_info;

/* metadata.c: device metadata (KEP-5304) */
void	md_prepare(struct dra_ctx *, const struct kp_claim *,
	    const struct dra_claim_alloc *, struct dra_results *);
void	md_unprepare(struct dra_ctx *, const struct kp_claim *,
	    struct dra_results *);

/* metadata_attrs.c */
void	md_attrs_free(struct dra_result *);
const char *md_attrs_find(const struct dra_result *, const char *,
	    const char *, int);

/* dra_format.c: call-logging renderers (rpc_format_fn) */
void	dra_format_request(const uint8_t *, size_t, char *, size_t);
void	dra_format_prepare_response(const uint8_t *, size_t, char *,
	    size_t);
void	dra_format_unprepare_response(const uint8_t *, size_t, char *,
	    size_t);

#endif /* KP_DRA_H */
