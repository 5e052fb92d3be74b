/*
 * publisher.h - the publisher role: the only process that reads Kubernetes
 * credentials and talks to the API server. Modules:
 *   kubeconfig.c  kubeconfig files (libyaml); kcfg_base64.c their *-data
 *   kcfg_token.c  in-cluster config, token reads and re-reads, wiping
 *   kcfg_hide.c   the credential directories the nodeserver must not see
 *   http.c        with http_auth.c and http_watch.c the only libcurl users
 *                 (http_int.h): rate limit, Retry-After, 401, watches
 *   discovery.c   which resource.k8s.io version the server serves
 *   convert.c     ResourceSlice JSON per API version (jansson)
 *   slices.c      the ResourceSlice controller (upstream semantics)
 *   claims.c      the one GET behind a claim look-up
 *   publisher.c   publisher_main(), threads, IPC with the supervisor
 */
#ifndef KP_PUBLISHER_H
#define KP_PUBLISHER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "kubeletplugin.h"
#include "ipc.pb-c.h"
#include "ipc/ipc.h"

#define KP_SA_DIR	"/var/run/secrets/kubernetes.io/serviceaccount"
#define KP_TOKEN_REREAD_S	60	/* re-read a token file at least this often */
#define KP_HTTP_TIMEOUT_S	30	/* every request but watches, unless
					 * kp_kube_api_timeout() says */
#define KP_WATCH_TIMEOUT_S	600	/* server-side timeoutSeconds upper bound */
#define KP_CLAIM_BUDGET_S	20	/* a claim look-up, retries included */

/*
 * The largest response body each kind of request accepts (a hostile or
 * broken API server must not make the publisher buffer, then parse, 64
 * MiB). etcd refuses objects over ~1.5 MiB, so one object (a claim, a
 * slice written back, an Event, one watch event) fits 4 MiB with its
 * envelope; discovery of one API group is a few KiB; a slice LIST page
 * (SL_LIST_LIMIT items of one node or driver) gets 32 MiB, about 20
 * slices of the largest size etcd stores.
 */
#define HTTP_MAX_DISCOVERY	(256 * 1024)
#define HTTP_MAX_OBJECT		(4 * 1024 * 1024)
#define HTTP_MAX_LIST		(32 * 1024 * 1024)
/* json_guard.c: what one response may hold before jansson parses it;
 * 1M values (~150 MiB of jansson tree at most) is ~100 of the largest
 * slices; 64 deep is over twice what a Kubernetes object nests. */
#define JSON_GUARD_VALUES	1000000
#define JSON_GUARD_DEPTH	64

/*
 * Kubernetes access, from in-cluster configuration or a kubeconfig. Secret
 * material (token, key data) is wiped with explicit_bzero when replaced or
 * freed. Files are re-read by path; *_data hold inline PEM bytes.
 */
struct kube_config {
	char		*server;	/* https://host:port, no trailing '/' */
	char		*ca_file;	/* NULL if ca_data or none */
	char		*ca_data;	/* PEM, NUL-terminated */
	char		*cert_file;
	char		*cert_data;
	char		*key_file;
	char		*key_data;	/* secret */
	char		*token;		/* secret; current bearer token */
	char		*token_file;	/* re-read: 60 s, and after a 401 */
	time_t		 token_read;	/* when token_file was last read */
	int		 token_stale;	/* a 401 asks for a re-read */
	int		 insecure;	/* insecure-skip-tls-verify */
	char		*tls_server_name;
	char		*proxy_url;	/* kubeconfig proxy-url; NULL: none
					   (environment proxies are ignored) */
	pthread_mutex_t	 lock;		/* token fields */
};

/* kubeconfig.c */
int	kcfg_kubeconfig(struct kube_config *, const char *, const char *,
	    char *, size_t);

/* kcfg_base64.c */
size_t	kcfg_b64_decode(const char *, unsigned char *, size_t *);

/* kcfg_hide.c: the directories the nodeserver must not see (READY) */
struct kcfg_hide {
	char	 path[KP_IPC_MAX_HIDE][KP_IPC_PATH_MAX];
	char	*ptr[KP_IPC_MAX_HIDE];
	size_t	 n;
};
int	kcfg_hide_list(const struct kube_config *, const struct kp_options *,
	    struct kcfg_hide *, char *, size_t);

/* kcfg_token.c */
int	kcfg_in_cluster(struct kube_config *, char *, size_t);
int	kcfg_in_cluster_dir(struct kube_config *, const char *, char *,
	    size_t);
int	kcfg_bearer(struct kube_config *, char *, size_t);
void	kcfg_token_stale(struct kube_config *);
void	kcfg_free(struct kube_config *);
void	kcfg_release(struct kube_config *);
void	kcfg_wipe_free(char *);
int	kcfg_file_code(int);
int	kcfg_read_file(const char *, size_t, char **, size_t *);
size_t	kcfg_token_span(const char *, size_t);
int	kcfg_token_read_file(const char *, char **, char *, size_t);

/* One HTTP response; body is NUL-terminated (malloc'd, owned). */
struct http_response {
	long		 status;	/* 0: transport error (see error) */
	char		*body;
	size_t		 body_len;
	long		 retry_after_s;	/* -1: none */
	char		 error[KP_ERROR_SIZE];
};

struct http_client;

/*
 * A watch stream's consumer: one complete line (a JSON event, without the
 * newline) per call; return non-zero to end the stream.
 */
typedef int (*http_line_fn)(void *user, const char *line, size_t len);

/* curl_dl.c: libcurl is loaded, not linked; the publisher calls this
 * before its sandbox (publisher/curl_dl.h). 0 or KP_ENOTSUP, reason in
 * the buffer. */
int	curl_dl_load(char *, size_t);

/* http.c: everything below is thread-safe unless noted. The publisher
 * calls http_global_init() once (curl_global_init) after its sandbox is
 * in place, and http_global_cleanup() at its end. */
int	http_global_init(void);
void	http_global_cleanup(void);
int	http_client_new(struct kube_config *, double, int,
	    struct http_client **);
void	http_client_timeout(struct http_client *, int);
void	http_client_free(struct http_client *);
int	http_request(struct http_client *, const char *, const char *,
	    const char *, size_t, struct http_response *);
int	http_request_within(struct http_client *, const char *,
	    const char *, const char *, size_t, double, volatile int *,
	    struct http_response *);
void	http_client_wake(struct http_client *);
void	http_client_stop(struct http_client *);
void	http_response_free(struct http_response *);
char	*http_escape(const char *);

/* json_guard.c */
int	json_guard(const char *, size_t, const char *, const char *, char *,
	    size_t);

/* http_watch.c */
int	http_watch(struct http_client *, const char *, http_line_fn, void *,
	    volatile int *, char *, size_t);

/* discovery.c */
enum kube_version {
	KUBE_V1BETA1 = 0,
	KUBE_V1BETA2 = 1,
	KUBE_V1 = 2
};
int	disc_resource_version(struct http_client *, enum kube_version *,
	    char *, size_t);
const char *disc_version_name(enum kube_version);

/* claims.c */
int	claims_get(struct http_client *, enum kube_version, const char *,
	    const Kpipc__ClaimGet *, double, volatile int *,
	    Kpipc__ClaimReply *);
void	claims_reply_free(Kpipc__ClaimReply *);
int	claims_parse(const char *, const char *, const Kpipc__ClaimGet *,
	    Kpipc__ClaimReply *);

/*
 * The ResourceSlice controller (slices.c). It owns threads of its own (a
 * watch and a sync worker); the desired state is a Kpipc__Publish message
 * (the driver's resources as validated and sent on by the supervisor).
 */
struct slice_ctl;

struct slice_ctl_config {
	struct http_client	*http;
	enum kube_version	 version;
	const char		*driver;	/* spec.driver */
	const char		*node;		/* spec.nodeName, pool owner */
	const char		*node_uid;	/* NULL: GET the Node once */
	const char		*reconcile_pool;	/* ReconcilePoolWithName;
						 * NULL or "": off */
	int			 sync_delay_ms;	/* after a watch event; 0: 1000 */
	/* A pool the API server keeps rejecting (EVENT_POOL_REJECTED):
	 * called with the controller's lock held; must not block. */
	void			(*event)(void *, int, const char *);
	void			*event_user;
};

struct slice_stats {
	time_t		 last_sync;	/* 0: never */
	int		 pending_pools;
	uint64_t	 creates, updates, deletes;
	char		 last_error[KP_ERROR_SIZE];
	uint64_t	 errors;	/* sl_set_error/_sticky calls */
};

/* The latest errors, for the driver's error callback (slices.c). */
#define SL_RECENT	8

int	slice_ctl_errors(struct slice_ctl *, uint64_t, char (*)[KP_ERROR_SIZE],
	    int);

int	slice_ctl_start(const struct slice_ctl_config *, struct slice_ctl **);
int	slice_ctl_update(struct slice_ctl *, const Kpipc__Publish *);
void	slice_ctl_stats(struct slice_ctl *, struct slice_stats *);
size_t	slice_ctl_pools(struct slice_ctl *, char (*)[KP_IPC_MAX_POOL + 1],
	    uint32_t *, size_t);
void	slice_ctl_stop(struct slice_ctl *);

#endif /* KP_PUBLISHER_H */
