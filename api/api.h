/*
 * api.h - the driver-side library: what runs in the driver's own process
 * (the option setters, kp_start/kp_stop, kp_publish_resources and the
 * status calls, validation and packing of the driver's resources). It has
 * the driver's privileges and no sandbox; it talks to the supervisor over
 * one socketpair (struct kp_plugin's chan).
 */
#ifndef KP_API_H
#define KP_API_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "kubeletplugin.h"
#include "base/config.h"
#include "base/health.h"
#include "base/msg.h"
#include "base/names.h"
#include "ipc/ipc.h"

#define KP_PLUGIN_MAGIC		0x6b70706cu	/* "kppl" */

/* The driver process's handle. */
struct kp_plugin {
	uint32_t	 magic;
	pid_t		 sup_pid;
	struct ipc_chan	 chan;
	pthread_mutex_t	 lock;	/* the driver may call from threads */
	int		 has_kube;
	int		 has_node;
	char		 reconcile_pool[NAME_MAX_SUBDOMAIN + 1];	/* "": off */
	char		 driver[NAME_MAX_SUBDOMAIN + 1];
	int		 qnames;	/* kp_validate_qualified_names */
	unsigned	 owed;	/* answers to timed-out requests */
	/* kp_stop() began: requests fail at once (its chan is closed
	 * under lock). */
	atomic_int	 stopping;
	/* The pools last sent (publish_rules.c), packed: a pool the rules
	 * leave out keeps this state. */
	pthread_mutex_t	 pub_lock;	/* taken before lock */
	uint8_t		*last_pub;
	size_t		 last_pub_len;
	int		 grace_ms;	/* kp_shutdown_grace */
	char		*fatal;		/* shared with the supervisor: its
					 * fatal reason (supervisor/fatal.c) */
	char		 errbuf[KP_ERROR_SIZE];
	/* Resource health (health.c): every device reported so far. */
	pthread_mutex_t	 health_lock;	/* taken before lock */
	struct health_table health;
	/* State for the hooks (state.c). */
	pthread_mutex_t	 state_lock;	/* taken before lock */
	uint64_t	 state_gen;	/* the last generation sent */
	/* The supervisor's events (events.c). */
	int		 ev_fd;		/* -1: none */
	int		 status_fd;	/* eventfd; -1: none */
	pthread_t	 ev_thread;
	int		 ev_started;
	kp_error_fn	 error_fn;
	void		*error_user;
	/* Errors of the driver process for error_fn (events.c), queued
	 * for the event thread: a call never runs the function itself. */
	pthread_mutex_t	 note_lock;
	struct api_note	*notes, **notes_tail;
	size_t		 n_notes;	/* queued, at most API_NOTES_MAX */
	unsigned long long notes_dropped;	/* over it, since the last */
	int		 note_fd;	/* eventfd: notes queued; -1: none */
};

/* Error reports waiting for the error function: a driver that publishes
 * faster than its function returns gets a count, not a growing queue. */
#define API_NOTES_MAX	64
struct api_note {
	struct api_note	*next;
	int		 code;
	char		 text[KP_ERROR_SIZE];
};

/* How each option names itself in messages: setter (Go option). */
#define OPT_DRIVER	"kp_driver_name (DriverName)"
#define OPT_NODE	"kp_node_name (NodeName)"
#define OPT_NODE_UID	"kp_node_uid (NodeUID)"
#define OPT_IN_CLUSTER	"kp_kube_client_in_cluster (KubeClient)"
#define OPT_KUBECONFIG	"kp_kube_client_kubeconfig (KubeClient)"
#define OPT_QPS		"kp_kube_api_qps (rest.Config QPS/Burst)"
#define OPT_RECONCILE	"kp_reconcile_pool_with_name (ReconcilePoolWithName)"
#define OPT_TIMEOUT	"kp_kube_api_timeout (rest.Config Timeout)"
#define OPT_KUBELET_PATH \
    "kp_kubelet_plugin_socket_path (KubeletPluginSocketPath)"
#define OPT_PLUGIN_PATH	"kp_plugin_socket_path (PluginSocketPath)"
#define OPT_PLUGIN_LSN	"kp_plugin_listener (PluginListener)"
#define OPT_REG_PATH	"kp_registrar_socket_path (RegistrarSocketPath)"
#define OPT_REG_LSN	"kp_registrar_listener (RegistrarListener)"
#define OPT_V1ALPHA4	"kp_node_v1alpha4 (NodeV1alpha4)"
#define OPT_V1BETA1	"kp_node_v1beta1 (NodeV1beta1)"
#define OPT_V1		"kp_node_v1 (NodeV1)"
#define OPT_GRPC_V	"kp_grpc_verbosity (GRPCVerbosity)"
#define OPT_LOG_V	"kp_log_verbosity (klog -v)"
#define OPT_LOG_CB	"kp_log_callback (klog output)"
#define OPT_UNARY	"kp_grpc_interceptor (GRPCInterceptor)"
#define OPT_STREAM	"kp_grpc_stream_interceptor (GRPCStreamInterceptor)"
#define OPT_MODE	"kp_socket_mode (beyond upstream)"
#define OPT_PEER	"kp_allowed_peer_uid (beyond upstream)"
#define OPT_SERIALIZE	"kp_serialize (Serialize)"
#define OPT_WORKERS	"kp_worker_threads (beyond upstream)"
#define OPT_MAX_CONNS	"kp_grpc_max_connections (beyond upstream)"
#define OPT_HANDSHAKE	"kp_grpc_handshake_timeout (beyond upstream)"
#define OPT_GRACE	"kp_shutdown_grace (beyond upstream)"
#define OPT_HUNG	"kp_hung_child_timeout (beyond upstream)"
#define OPT_TERMLOG	"kp_termination_message_path (beyond upstream)"
#define OPT_ROOT	"kp_kubelet_root_dir (beyond upstream: kubelet --root-dir)"
#define OPT_REG_DIR	"kp_registrar_directory_path (RegistrarDirectoryPath)"
#define OPT_REG_FILE	"kp_registrar_socket_filename (RegistrarSocketFilename)"
#define OPT_PLUGIN_DIR	"kp_plugin_data_directory_path (PluginDataDirectoryPath)"
#define OPT_PLUGIN_FILE	"kp_plugin_socket (PluginSocket)"
#define OPT_HEALTH	"kp_health_service (HealthService)"
#define OPT_ROLLING	"kp_rolling_update (RollingUpdate)"
#define OPT_FLOCK_DIR	"kp_flock_directory_path (FlockDirectoryPath)"
#define OPT_REG_SVC	"kp_registration_service (RegistrationService)"
#define OPT_DRA_SVC	"kp_dra_service (DRAService)"
#define OPT_HEALTH_V1	"kp_health_v1 (HealthV1)"
#define OPT_HEALTH_V1A1	"kp_health_v1alpha1 (HealthV1alpha1)"
#define OPT_HTTP	"kp_http_endpoint (beyond upstream)"

#define OPT_QUOTE_MAX	64	/* characters of a value in a message */
#define OPT_QUOTE_SIZE	(OPT_QUOTE_MAX * 4 + 8)	/* opt_quote()'s buffer */

/* options.c */
int	opt_check(const struct kp_options *);
int	opt_fail(struct kp_options *, int, const char *, ...)
	    KP_PRINTF(3, 4);
int	opt_copy(struct kp_options *, const struct kp_options *);
void	opt_clear(struct kp_options *);
int	opt_valid_handle(const struct kp_options *);
int	opt_check_subdomain(const char *, size_t);
int	opt_check_label(const char *, size_t);
const char *opt_quote(const char *, char *, size_t);
int	opt_errno_code(int);
int	opt_set_string(struct kp_options *, const char *, char **,
	    const char *);

/* options_policy.c */
void	pol_opts_init(struct policy_opts *);
int	pol_opts_check(struct kp_options *);

/* options_dirs.c */
int	opt_dirs_resolve(struct kp_options *);
int	opt_check_dir(struct kp_options *, const char *, const char *);

/* options_rolling.c */
int	opt_rolling_check(struct kp_options *);

/* rolling_name.c */
int	rolling_plugin_socket_file(const char *dir, const char *pod_uid,
	    char *out, size_t size);

/* options_metadata.c */
int	opt_metadata_resolve(struct kp_options *);

/* advertise.c */

/* events.c */
int	events_threads(void);
void	events_fork_lock(int);
int	events_start(struct kp_plugin *, int, const struct kp_options *);
int	events_on_thread(const struct kp_plugin *);
void	events_stop(struct kp_plugin *);
void	events_note(struct kp_plugin *, int, const char *, ...)
	    KP_PRINTF(3, 4);

/* publish_rules.c: the 1.38 controller's rules that leave pools out. */
int	publish_rules(struct kp_plugin *, const Kpipc__Publish *,
	    Kpipc__Publish *, Kpipc__Publish **, char *, size_t);
void	publish_rules_sent(struct kp_plugin *, const Kpipc__Publish *);

/* live.c: the socket paths this process's plugins serve */
#define LIVE_MAX	2
int	live_claim(const struct kp_plugin *, const char *const *,
	    const char *const *, size_t, char *, size_t);
void	live_release(const struct kp_plugin *);

/* api.c */
int	sup_threads(void);
int	api_request(struct kp_plugin *, const Kpipc__Msg *, const char *);
int	api_fail(struct kp_plugin *, int, const char *, ...) KP_PRINTF(3, 4);

/* validate.c: the API server's rules, applied in the driver process. */
int	validate_publish(const Kpipc__Publish *, char *, size_t);
int	validate_resources(const struct kp_resources *, char *, size_t);
int	validate_reconcile(const Kpipc__Publish *, const char *, char *,
	    size_t);

/* Limits and rule texts that validate.c and validate_names.c share. */
#define VAL_MAX_LABEL		NAME_MAX_LABEL
#define VAL_MAX_SUBDOMAIN	NAME_MAX_SUBDOMAIN
#define VAL_R_SUBDOMAIN	"must be a DNS subdomain (lower case " \
			"alphanumerics, '-' and '.', alphanumeric at both " \
			"ends)"
#define VAL_R_LABEL	"must be a DNS label (lower case " \
			"alphanumerics and '-', alphanumeric at both ends)"

/* validate_names.c */
const char *val_key_why(const char *);
const char *val_label_key_why(const char *);
const char *val_label_value_why(const char *);

/* validate_value.c */
int	validate_quantity(const char *);
int	validate_semver(const char *);
const char *val_quantity_why(const char *);

/*
 * pack.c: struct kp_resources -> a Kpipc__Publish tree (driver side), to
 * send with ipc_send(); pack_free() frees what pack_resources() built.
 */
int	pack_resources(const struct kp_resources *, Kpipc__Publish **,
	    char *, size_t);
void	pack_free(Kpipc__Publish *);

/* pack_split.c: kp_pool.split_slices, on a packed pool. */
int	pack_split_pool(Kpipc__Pool *, const char *,
	    void *(*)(void *, size_t), void *, char *, size_t);

#endif /* KP_API_H */
