/*
 * config.h - struct kp_options: every option of the plugin, validated by
 * the setters in options.c, options_kube.c, options_sockets.c and
 * options_policy.c. kp_start() copies it into the supervisor; the
 * children inherit that copy through fork (no configuration crosses IPC).
 */
#ifndef KP_CONFIG_H
#define KP_CONFIG_H

#include <stdint.h>
#include <sys/types.h>

#include "kubeletplugin.h"
#include "rpc/rpc.h"
#include "policy/policy.h"

#define KP_OPTIONS_MAGIC	0x6b706f70u	/* "kpop" */
#define KP_MAX_INTERCEPTORS	16
#define KP_MAX_PEER_UIDS	16
#define KP_SUN_PATH_MAX		107	/* sun_path less the NUL */

enum kp_kube_mode {
	KP_KUBE_NONE = 0,
	KP_KUBE_IN_CLUSTER = 1,
	KP_KUBE_KUBECONFIG = 2
};

struct kp_options {
	uint32_t		 magic;
	char			*driver_name;
	char			*node_name;
	char			*node_uid;

	enum kp_kube_mode	 kube_mode;
	char			*kubeconfig;	/* absolute path */
	char			*kube_context;	/* NULL: current-context */
	double			 kube_qps;
	int			 kube_burst;

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
	struct rpc_interceptor	 unary[KP_MAX_INTERCEPTORS];
	size_t			 n_unary;
	struct rpc_interceptor	 stream[KP_MAX_INTERCEPTORS];
	size_t			 n_stream;
	int			 serialize;
	int			 workers;
	struct policy_opts	 policy;	/* options_policy.c */

	char			 errbuf[KP_ERROR_SIZE];
};

/* How each option names itself in messages: setter (Go option). */
#define OPT_DRIVER	"kp_driver_name (DriverName)"
#define OPT_NODE	"kp_node_name (NodeName)"
#define OPT_NODE_UID	"kp_node_uid (NodeUID)"
#define OPT_IN_CLUSTER	"kp_kube_client_in_cluster (KubeClient)"
#define OPT_KUBECONFIG	"kp_kube_client_kubeconfig (KubeClient)"
#define OPT_QPS		"kp_kube_api_qps (rest.Config QPS/Burst)"
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

#endif /* KP_CONFIG_H */
