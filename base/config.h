/*
 * config.h - struct kp_options: every option of the plugin, validated by
 * the setters in api/ (the driver process). kp_start() copies it into the
 * supervisor; the children inherit that copy through fork (no
 * configuration crosses IPC). Every process reads it, so it sits in base/
 * and names nothing of a role: the interceptor and policy types it holds
 * are defined here, and the supported_versions the registrar advertises
 * are computed once by kp_start() (api/advertise.c).
 *
 * Runs in: every process (base/ is linked into all of them and includes
 * nothing above it).
 */
#ifndef KP_CONFIG_H
#define KP_CONFIG_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>

#include "kubeletplugin.h"
#include "base/names.h"

#define KP_OPTIONS_MAGIC	0x6b706f70u	/* "kpop" */
#define KP_MAX_INTERCEPTORS	16
#define KP_MAX_PEER_UIDS	16
#define KP_SUN_PATH_MAX		107	/* sun_path less the NUL */
#define KP_MAX_POD_UID		128	/* kp_rolling_update() */
#define KP_LOCK_FILE		"serialize.lock"	/* upstream's name */

/* Connections per gRPC socket (kp_grpc_max_connections, rpc/accept.c). */
#define KP_DEF_MAX_CONNS	8
#define KP_MAX_CONNS		1024
/* Time to send the HTTP/2 client preface (kp_grpc_handshake_timeout). */
#define KP_DEF_HANDSHAKE_MS	10000
#define KP_MIN_HANDSHAKE_MS	100
#define KP_MAX_HANDSHAKE_MS	600000
/* Draining shutdown (api/options_lifecycle.c, supervisor/drain.c). */
#define KP_DEF_SHUTDOWN_GRACE_MS	25000
#define KP_MAX_SHUTDOWN_GRACE_MS	600000
#define KP_DEF_HUNG_MS		10000	/* kp_hung_child_timeout */
#define KP_MIN_HUNG_MS		3000
#define KP_MAX_HUNG_MS		300000
#define KP_TERMLOG_MAX		255
#define KP_DEF_TERMLOG		"/dev/termination-log"

/* Process roles; the order is the supervisor's role table order. */
enum kp_role {
	ROLE_NODESERVER = 0,
	ROLE_REGISTRAR = 1,
	ROLE_PUBLISHER = 2,
	ROLE_OBSERVER = 3,
	ROLE_COUNT = 4,
	ROLE_DRIVER = 5,
	ROLE_SUPERVISOR = 6,	/* the monitor (kept name: its filter table) */
	ROLE_BROKER = 7
};

/* One interceptor as added (rpc/ runs them; kp_interceptor_fn is the
 * public type). */
struct interceptor {
	kp_interceptor_fn	 fn;
	void			*user;
};

#define POL_MAX_SYSCALLS	64	/* nodeserver extras; main()'s too */
#define POL_MAX_IOCTLS		32	/* main()'s ioctl commands */
#define POL_MAX_PATHS		16	/* hidden paths */
#define POL_PATH_MAX		(NAME_MAX_PATH + 1)	/* bytes of a path, NUL incl. */
#define POL_MAX_STATE_DIRS	4	/* kp_sandbox_state_dir() */
#define POL_CDI_DIR		"/var/run/cdi"	/* upstream DefaultCDIDir */
#define POL_MAX_CDI_ALLOW	16	/* each kp_cdi_allow_*() list */
#define POL_MAX_CDI_DEVS	32	/* kp_cdi_allow_device(_number)() */
#define POL_TOKEN_DIR		"/var/run/secrets/kubernetes.io/serviceaccount"

/*
 * A device node rule (kp_cdi_allow_device, kp_cdi_allow_device_number;
 * matched by supervisor/cdi_node.c): a path, or a pattern in the last
 * component (base/cdi_dev.c), and, when type is set, the node's type and
 * number range. Zero-filled before it is set: the options are compared
 * byte for byte (ipc/child_opts.c).
 */
struct pol_dev_rule {
	char		 pattern[POL_PATH_MAX];
	int		 type;		/* 0: any; 'c' or 'b' */
	unsigned int	 major;
	unsigned int	 minor_first;
	unsigned int	 minor_last;
};

/* The policy options (api/options_policy.c; applied by policy/).
 * Fixed-size on purpose: opt_copy() copies them with the struct, nothing
 * to free. */
struct policy_opts {
	int		 mode;		/* enum kp_sandbox_mode */
	uint64_t	 ns_caps;	/* bit n: nodeserver keeps cap n */
	int		 ns_syscalls[POL_MAX_SYSCALLS];	/* native numbers */
	size_t		 n_ns_syscalls;
	/* The driver process's own needs (kp_policy_main_syscall/ioctl):
	 * in the pod's profile only, never in a filter of ours. */
	int		 main_syscalls[POL_MAX_SYSCALLS];	/* native */
	size_t		 n_main_syscalls;
	uint32_t	 main_ioctls[POL_MAX_IOCTLS];	/* as the kernel
							 * reads cmd */
	size_t		 n_main_ioctls;
	int		 main_confine;	/* kp_policy_main_confine: the
					 * driver process loads the union */
	char		 hidden[POL_MAX_PATHS][POL_PATH_MAX];
	size_t		 n_hidden;
	struct {
		uid_t	 uid;
		gid_t	 gid;
		int	 set;
	}		 user[ROLE_COUNT];
	/* The nodeserver's files (api/options_policy.c; prepared by
	 * supervisor/files.c, confined by policy/landlock.c). */
	char		 state_dirs[POL_MAX_STATE_DIRS][POL_PATH_MAX];
	size_t		 n_state_dirs;
	char		 read_paths[POL_MAX_PATHS][POL_PATH_MAX];
	size_t		 n_read_paths;
	char		 cdi_dir[POL_PATH_MAX];	/* "": POL_CDI_DIR */
	/* What a CDI spec may ask of the container runtime (the
	 * kp_cdi_allow_*() setters; checked by supervisor/cdi_check.c). */
	char		 cdi_dev[POL_MAX_CDI_ALLOW][POL_PATH_MAX];
	size_t		 n_cdi_dev;
	struct pol_dev_rule cdi_devs[POL_MAX_CDI_DEVS];
	size_t		 n_cdi_devs;
	char		 cdi_mnt[POL_MAX_CDI_ALLOW][POL_PATH_MAX];
	size_t		 n_cdi_mnt;
	char		 cdi_hook[POL_MAX_CDI_ALLOW][POL_PATH_MAX];
	size_t		 n_cdi_hook;
	uid_t		 ns_uid;	/* the nodeserver's ids, resolved */
	gid_t		 ns_gid;	/* by kp_start() (pol_role_ids) */
	/* Identities (policy/ids.c): each role's default uid and gid is
	 * uid_base + its POL_ID_OFF_* (kp_sandbox_uid_base). */
	uid_t		 uid_base;
};

/* Per-role offsets from uid_base (KP_SANDBOX_UID_BASE by default). */
#define POL_ID_OFF_NODESERVER	0
#define POL_ID_OFF_REGISTRAR	1
#define POL_ID_OFF_PUBLISHER	2
#define POL_ID_OFF_OBSERVER	3
#define POL_ID_OFF_BROKER	4
#define POL_ID_COUNT		5

/* Device metadata (KEP-5304): versions, and the subdirectory of the plugin
 * data directory (upstream metadataSubDir). */
#define KP_MAX_METADATA_VERSIONS	2
#define KP_METADATA_SUBDIR	"dra-device-metadata"

/* supported_versions entries: v1, v1beta1, v1alpha4's two. */
#define KP_MAX_ADVERTISED	8

enum kp_kube_mode {
	KP_KUBE_NONE = 0,
	KP_KUBE_IN_CLUSTER = 1,
	KP_KUBE_KUBECONFIG = 2
};

/* A state's bytes (kp_state_initial()). */
struct kp_state_blob {
	size_t		 len;
	unsigned char	 data[];
};

struct kp_options {
	uint32_t		 magic;
	char			*driver_name;
	char			*node_name;
	char			*node_uid;
	char			 reconcile_pool[NAME_MAX_SUBDOMAIN + 1];
	int			 qnames_off;	/* kp_validate_qualified_names */

	enum kp_kube_mode	 kube_mode;
	char			*kubeconfig;	/* absolute path */
	char			*kube_context;	/* NULL: current-context */
	double			 kube_qps;
	int			 kube_burst;
	int			 kube_timeout_ms;	/* one request */

	char			*kubelet_plugin_socket_path;
	char			*plugin_socket_path;
	int			 plugin_listener;	/* -1: none */
	char			*registrar_socket_path;
	int			 registrar_listener;	/* -1: none */
	unsigned int		 socket_mode;
	uid_t			 peer_uids[KP_MAX_PEER_UIDS];
	size_t			 n_peer_uids;
	int			 peer_uids_set;	/* first call replaces 0 */

	int			 v1alpha4, v1beta1, v1;
	int			 grpc_verbosity;
	int			 log_verbosity;
	kp_log_fn		 log_fn;
	void			*log_user;
	/* Set by kp_start() for the broker, which is exec'd and gets no
	 * pointer: the driver set a log or error function, so its lines
	 * and errors go to the driver process, which calls it. */
	int			 log_forward;
	int			 error_forward;
	/* kp_sandbox_exec(opts, 0): the nodeserver and the registrar are
	 * forked, not exec'd; exec_hooks is kp_start()'s verdict (1: exec
	 * them, main() runs again; role_exec.c). */
	int			 fork_hooks;
	int			 exec_hooks;
	struct interceptor	 unary[KP_MAX_INTERCEPTORS];
	size_t			 n_unary;
	struct interceptor	 stream[KP_MAX_INTERCEPTORS];
	size_t			 n_stream;
	int			 serialize;
	int			 workers;
	/* Connection limits of both gRPC sockets (options_rpc.c). */
	int			 max_conns;
	int			 handshake_ms;
	/* Lifecycle (api/options_lifecycle.c): the drain budget and
	 * where a fatal exit leaves its reason; "" = KP_DEF_TERMLOG. */
	int			 shutdown_grace_ms;
	int			 hung_ms;	/* kp_hung_child_timeout; 0:
						 * never killed for it */
	int			 termlog_off;
	char			 termlog[KP_TERMLOG_MAX + 1];
	struct policy_opts	 policy;	/* options_policy.c */
	/* Filled by kp_start() from v1/v1beta1/v1alpha4 (advertise.c). */
	const char		*advertised[KP_MAX_ADVERTISED];
	size_t			 n_advertised;

	/* Resource health (api/options_health.c). Stored inverted, so the
	 * zeroed set holds upstream v0.37's defaults (all on). */
	int			 health_off;
	int			 health_v1_off;
	int			 health_v1alpha1_off;

	/* Directory options (api/options_dirs.c), upstream v0.33+ names;
	 * "" = the default derived from the kubelet root and the driver
	 * name at kp_start(). Fixed size: copied with the struct. */
	char			 kubelet_root[KP_SUN_PATH_MAX + 1];
	char			 registrar_dir[KP_SUN_PATH_MAX + 1];
	char			 registrar_file[KP_SUN_PATH_MAX + 1];
	char			 plugin_dir[KP_SUN_PATH_MAX + 1];
	char			 plugin_file[KP_SUN_PATH_MAX + 1];
	int			 plugin_path_derived;	/* kp_start() set */
	int			 registrar_path_derived;	/* the paths */

	/* Device metadata (api/options_metadata.c, KEP-5304): the
	 * versions in the order written; the directory from kp_start(). */
	int			 metadata;
	char			 metadata_versions[KP_MAX_METADATA_VERSIONS]
				    [48];
	size_t			 n_metadata_versions;
	char			 metadata_dir[POL_PATH_MAX];
	/* The observer (api/options_http.c): off when http_len is 0. */
	struct sockaddr_storage	 http_addr;
	socklen_t		 http_len;
	char			 http_endpoint[64];	/* as given */
	/* Channels (api/options_channels.c): the nodeserver's state
	 * function, the driver process's error function. */
	kp_state_fn		 state_fn;
	void			*state_user;
	/* kp_state_initial(): the state the first nodeserver starts with
	 * (a copy; NULL: none) and whether one is set: the flag crosses
	 * into the children's copy of the options, the bytes go to the
	 * supervisor as the first state (api/api.c). */
	struct kp_state_blob	*initial_state;
	int			 initial_state_set;
	kp_error_fn		 error_fn;
	void			*error_user;
	/* Rolling updates and service selection (api/options_rolling.c,
	 * upstream v0.33 RollingUpdate, FlockDirectoryPath, v0.34
	 * RegistrationService, DRAService). "" = off / the default. */
	char			 rolling_uid[KP_MAX_POD_UID + 1];
	char			 flock_dir[KP_SUN_PATH_MAX + 1];
	int			 registration_off;	/* inverted: zeroed */
	int			 dra_off;		/* = upstream defaults */
	/* Filled by kp_start(): <flock dir>/serialize.lock when rolling
	 * updates and serialization are both on, else "". */
	char			 lock_path[KP_SUN_PATH_MAX + 96];
	/* The prepared-claim journal (api/options_journal.c; run by
	 * nodeserver/journal_dra.c). "": none. */
	char			 journal_dir[POL_PATH_MAX];
	struct kp_journal_hooks	 journal_hooks;	/* zeroed: none */

	char			 errbuf[KP_ERROR_SIZE];
};

/* advertise.c */
void	opt_advertise(struct kp_options *);

#endif /* KP_CONFIG_H */
