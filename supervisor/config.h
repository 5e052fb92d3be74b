/*
 * config.h - struct kp_options: every option of the plugin, validated by
 * the setters in options.c. kp_start() copies it into the supervisor; the
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

/* options.c */
int	opt_check(const struct kp_options *);
int	opt_fail(struct kp_options *, int, const char *, ...)
	    KP_PRINTF(3, 4);
int	opt_copy(struct kp_options *, const struct kp_options *);
void	opt_clear(struct kp_options *);
int	opt_valid_handle(const struct kp_options *);
int	opt_check_subdomain(const char *, size_t);
int	opt_check_label(const char *, size_t);

#endif /* KP_CONFIG_H */
