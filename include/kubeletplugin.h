/*
 * kubeletplugin.h - write Kubernetes DRA kubelet plugins in C.
 *
 * The C counterpart of Go's k8s.io/dynamic-resource-allocation/kubeletplugin
 * (Kubernetes 1.32 API as the baseline, later releases' features on top),
 * split into privilege-separated processes: kp_start() forks a supervisor,
 * which forks a registrar (kubelet plugin registration), a nodeserver (the
 * DRA gRPC services; runs the driver's hooks) and, when Kubernetes access is
 * configured, a publisher (ResourceSlices and ResourceClaim look-ups).
 *
 * Conventions used by every function below:
 *  - Functions return 0 or a negative KP_E* code; kp_strerror() names it and
 *    kp_options_last_error() / kp_plugin_last_error() hold a sentence that
 *    names the field and the rule that was broken.
 *  - Strings passed in are copied before the call returns unless the comment
 *    says otherwise; the caller keeps ownership of its memory.
 *  - Handles are opaque and checked on entry: a NULL, freed or foreign
 *    pointer gives KP_EINVAL, never a crash (as far as the memory is still
 *    mapped).
 *  - No function calls exit() or abort(); none prints to stdout.
 */
#ifndef KUBELETPLUGIN_H
#define KUBELETPLUGIN_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KP_EXTERN __attribute__((visibility("default")))
#define KP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KP_EXTERN
#define KP_PRINTF(f, a)
#endif

#define KP_VERSION_MAJOR 0
#define KP_VERSION_MINOR 1
#define KP_VERSION_PATCH 0

/* Size of every error-message buffer, in bytes including the NUL. */
#define KP_ERROR_SIZE 256

/*
 * Error codes. System errors are the negated errno; the library's own codes
 * live in a reserved block from -4000 down. Numbers are never reused.
 * XX(name, value, message)
 */
#define KP_ERRNO_MAP(XX)						\
	XX(EINVAL, -EINVAL, "invalid argument")				\
	XX(ENOMEM, -ENOMEM, "out of memory")				\
	XX(ENAMETOOLONG, -ENAMETOOLONG, "path too long")		\
	XX(EEXIST, -EEXIST, "not a socket at the path")			\
	XX(ENOENT, -ENOENT, "no such file or directory")		\
	XX(EACCES, -EACCES, "permission denied")			\
	XX(EBUSY, -EBUSY, "resource busy")				\
	XX(EIO, -EIO, "input/output error")				\
	XX(EPIPE, -EPIPE, "supervisor is gone")				\
	XX(ETIMEDOUT, -ETIMEDOUT, "timed out")				\
	XX(EPROTO, -EPROTO, "protocol violation")			\
	XX(EALREADY, -EALREADY, "already done")				\
	XX(ENOTSUP, -ENOTSUP, "not supported")				\
	XX(ENOSPC, -ENOSPC, "quota exceeded")				\
	XX(ECHILD, -4000, "a plugin process failed to start")		\
	XX(ENOCLIENT, -4001, "no Kubernetes client configured")		\
	XX(ENONODE, -4002, "no node name configured")			\
	XX(ESANDBOX, -4003, "sandbox set-up failed")			\
	XX(EKUBE, -4004, "Kubernetes API error")			\
	XX(EHOOK, -4005, "driver hook failed")

enum kp_errno {
#define KP_XX_ENUM(name, value, msg) KP_##name = (value),
	KP_ERRNO_MAP(KP_XX_ENUM)
#undef KP_XX_ENUM
	KP_ERRNO_MAX = -5000
};

/*
 * kp_strerror - a static description of an error code.
 * err: 0 or a KP_E* code. Returns a string with static lifetime; never NULL
 * ("unknown error" for codes not in KP_ERRNO_MAP).
 */
KP_EXTERN const char *kp_strerror(int err);

/*
 * kp_err_name - the code's name, e.g. "KP_EINVAL". Static lifetime; never
 * NULL ("KP_UNKNOWN" for unknown codes).
 */
KP_EXTERN const char *kp_err_name(int err);

/* ------------------------------------------------------------------------
 * Logging
 */

enum kp_log_level {
	KP_LOG_ERROR = 0,
	KP_LOG_WARNING = 1,
	KP_LOG_INFO = 2
};

/*
 * A log sink. Called once per log line with the role that logged it
 * ("driver", "supervisor", "registrar", "nodeserver", "publisher"), the
 * klog verbosity of info lines (0 for warnings and errors) and the message
 * without a trailing newline. Borrowed pointers, valid during the call.
 * The sink runs only in the driver process: for its own lines on the
 * calling thread, for the lines of the sandboxed processes (relayed,
 * sanitised and rate-limited by the broker) on the library's event thread
 * (where kp_error_callback's function runs too), role naming the process.
 * The monitor, which runs no driver code, writes its few lines to stderr
 * whatever the sink. It may be called from several threads at once.
 */
typedef void (*kp_log_fn)(void *user, enum kp_log_level level, int verbosity,
    const char *role, const char *msg);

/*
 * kp_log - write one line through the library's logger: from the driver
 * process (the "driver" role, after kp_log_verbosity() and
 * kp_log_callback() took effect at kp_start(); before it, klog lines on
 * stderr) or from a hook (the "nodeserver" role: the line travels to the
 * supervisor, which emits it sanitised and rate-limited like every line
 * of that process, where a hook's own stderr would only be relayed as
 * "stderr: ..."). level: KP_LOG_ERROR, _WARNING or _INFO (other values
 * are INFO); verbosity: an INFO line shows when the log verbosity is at
 * least this (warnings and errors always show). fmt: printf format; the
 * text is cut at 4095 bytes; control characters and invalid UTF-8 become
 * '?'. Thread-safe; never fails (a line the rate limit drops is counted).
 * Beyond upstream (Go drivers use klog directly).
 */
KP_EXTERN void kp_log(enum kp_log_level level, int verbosity,
    const char *fmt, ...) KP_PRINTF(3, 4);

/*
 * kp_version - the library's version at run time, "MAJOR.MINOR.PATCH",
 * as a static string (compare with KP_VERSION_* of the header a driver
 * was built with).
 */
KP_EXTERN const char *kp_version(void);

/* ------------------------------------------------------------------------
 * Options: struct kp_options collects every option before kp_start().
 */

struct kp_options;
struct kp_plugin;

/*
 * kp_options_new - allocate an option set holding every default.
 * On success *out owns the set; free it with kp_options_free() (kp_start()
 * copies what it needs, so the set may be freed right after kp_start()).
 * Errors: KP_EINVAL (out is NULL), KP_ENOMEM.
 */
KP_EXTERN int kp_options_new(struct kp_options **out);

/* kp_options_free - free an option set; NULL is ignored. */
KP_EXTERN void kp_options_free(struct kp_options *opts);

/*
 * kp_options_last_error - the message of the last failed call on this set,
 * including a failed kp_start() with it; "" if none failed. The string is
 * owned by the set and valid until the next call on it or its free.
 * Returns "" for an invalid handle.
 */
KP_EXTERN const char *kp_options_last_error(const struct kp_options *opts);

/*
 * kp_driver_name - the DRA driver name: PluginInfo.name at registration and
 * spec.driver of every ResourceSlice. Required.
 * Rule: a DNS subdomain of at most 63 characters, lower case (the API
 * server's driver-name rule; upstream documents "lower case" in v0.35).
 * Errors: KP_EINVAL (NULL handle, or the name breaks the rule; the message
 * names the rule), KP_ENOMEM.
 * Mirrors kubeletplugin.DriverName, Kubernetes 1.32.
 */
KP_EXTERN int kp_driver_name(struct kp_options *opts, const char *name);

/*
 * kp_node_name - the node's name: pool name of kp_publish_resources(),
 * spec.nodeName and owner of the ResourceSlices, and the node whose
 * claims are looked up. Required with Kubernetes access: kp_start() fails
 * with KP_EINVAL, naming this option, when kp_kube_client_in_cluster() or
 * kp_kube_client_kubeconfig() is set without a node name (upstream fails
 * later, in PublishResources). Optional without Kubernetes access, where
 * nothing is published.
 * Rule: a DNS subdomain, at most 253 characters (a Node name).
 * Errors: KP_EINVAL, KP_ENOMEM. Mirrors kubeletplugin.NodeName, 1.32.
 */
KP_EXTERN int kp_node_name(struct kp_options *opts, const char *name);

/*
 * kp_node_uid - the Node object's UID for the ResourceSlices' owner
 * reference; optional (the publisher looks it up once when not set).
 * Rule: a UUID in canonical lower-case form, 36 characters.
 * Errors: KP_EINVAL, KP_ENOMEM. Mirrors kubeletplugin.NodeUID, 1.32.
 */
KP_EXTERN int kp_node_uid(struct kp_options *opts, const char *uid);

/*
 * kp_kube_client_in_cluster - give the publisher Kubernetes access through
 * the pod's service account (KUBERNETES_SERVICE_HOST/PORT, the token and CA
 * under /var/run/secrets/kubernetes.io/serviceaccount). Only the publisher
 * process ever reads these; the token never enters the caller's memory.
 * Replaces an earlier kp_kube_client_kubeconfig(). Errors: KP_EINVAL.
 * Mirrors kubeletplugin.KubeClient (rest.InClusterConfig), 1.32.
 */
KP_EXTERN int kp_kube_client_in_cluster(struct kp_options *opts);

/*
 * kp_kube_client_kubeconfig - give the publisher Kubernetes access through a
 * kubeconfig file. path: absolute or relative to the current directory (made
 * absolute here); context: the context to use, or NULL for current-context.
 * The file is read only by the publisher, at its start; a missing or broken
 * file makes kp_start() fail with the publisher's error. The nodeserver
 * sees none of the directories that hold the kubeconfig or a file it names
 * (by the path as named and by the real path; a file renamed over stays
 * hidden). kp_start() fails (KP_ECHILD, the message names this option)
 * when such a file lies directly in "/", in a kp_sandbox_state_dir() or
 * in the DRA socket's directory, or when the nodeserver's uid could read
 * it while it cannot be hidden (no CAP_SYS_ADMIN) and Landlock does not
 * keep it out (none in the kernel, or a kp_sandbox_read_path() over it).
 * Errors: KP_EINVAL (empty path), KP_ENAMETOOLONG, KP_ENOMEM.
 * Mirrors kubeletplugin.KubeClient (clientcmd), 1.32.
 */
KP_EXTERN int kp_kube_client_kubeconfig(struct kp_options *opts,
    const char *path, const char *context);

/*
 * kp_kube_api_qps - the publisher's client-side rate limit: qps requests
 * per second on average (> 0, at most 1000), bursts of up to burst requests
 * (>= 1, at most 10000). Default 5 and 10, as client-go. Claim look-ups
 * (the GETs of NodePrepareResources) have a bucket of their own with the
 * same rate, so publishing never throttles a prepare (the Go helper
 * shares one client's limiter between both).
 * Errors: KP_EINVAL. Beyond upstream (client-go rest.Config QPS/Burst).
 */
KP_EXTERN int kp_kube_api_qps(struct kp_options *opts, double qps, int burst);

/*
 * kp_reconcile_pool_with_name - reconcile only the pool named pool (copied;
 * NULL or "": off, the default). The publisher then lists and watches
 * every slice of the driver without a node name (field selector
 * spec.driver=D,spec.nodeName=, even though the Node is the owner), keeps
 * those of this pool on its side, and never sets spec.nodeName: node-owned
 * slices that stay visible cluster-wide through the pool's node_selector
 * or all_nodes, or per-device node selection. Costly for the cluster:
 * every node running the driver receives all its node-less slices. The
 * slices keep the Node as controller owner. kp_publish_resources() with
 * other pools than this one (as 1.38): this pool, when given, replaces the
 * desired state (none given: nothing is published, the pool's slices are
 * deleted); each other pool is reported once to the kp_error_callback()
 * function (KP_EINVAL, recoverable 1, "pools[1] \"other\": not
 * published: ReconcilePoolWithName=\"pool\" publishes only that pool")
 * and is not published; the call itself returns 0 (1.36 and 1.37
 * rejected the whole update; this library failed the call). Each
 * slice needs a node selection of its own (else KP_EINVAL). The
 * ValidatingAdmissionPolicy in deploy/ denies node-less slices: relax it
 * to use this option.
 * Rule: '/'-separated DNS subdomains, at most 253 characters (a pool name).
 * Errors: KP_EINVAL. Mirrors kubeletplugin.ReconcilePoolWithName and
 * resourceslice.Options.ReconcilePoolWithName, Kubernetes 1.36, with the
 * 1.38 handling of other pools (kubernetes PR #141108).
 */
KP_EXTERN int kp_reconcile_pool_with_name(struct kp_options *opts,
    const char *pool);

/*
 * kp_validate_qualified_names - whether kp_publish_resources() refuses
 * attribute and capacity names qualified with the driver's own domain
 * (on: 1, the default; off: 0; any other value is on). With driver
 * "gpu.example.com", "gpu.example.com/model" names the same attribute as
 * the short "model" in CEL, and a driver that publishes both forms makes
 * the scheduler pick either: use the short name. A pool with such a name
 * is not published (its slices stay as they are in the API server, also
 * across a restart of the driver; none are created); the error is
 * reported once per call to the
 * kp_error_callback() function (KP_EINVAL, recoverable 1: the other pools
 * are published, a corrected call publishes it; logged once as a warning
 * without a function), naming the field path and the rule, e.g.
 * "pools[0] \"gpu\": slices[0].devices[1].attributes
 * [\"gpu.example.com/model\"]: qualified with the driver's own domain:
 * use the short name \"model\" (ValidateQualifiedNames)". It is not
 * retried, and kp_publish_resources() still returns 0. Names of other
 * domains ("resource.kubernetes.io/pcieRoot") are not concerned.
 * Errors: KP_EINVAL (invalid handle). Mirrors
 * kubeletplugin.ValidateQualifiedNames and
 * resourceslice.Options.ValidateQualifiedNames, Kubernetes 1.38 (PR
 * #142218).
 */
KP_EXTERN int kp_validate_qualified_names(struct kp_options *opts, int on);

/*
 * kp_kube_api_timeout - the time limit of one request of the publisher's
 * to the API server, in milliseconds (100 to 300000; default 30000): a
 * request that takes longer is abandoned as a transport error and retried
 * or reported as any other (a ResourceSlice sync backs off; a claim
 * look-up fails that claim). Watches have no such limit (the server ends
 * them). Errors: KP_EINVAL. Beyond upstream (client-go rest.Config
 * Timeout, which defaults to none).
 */
KP_EXTERN int kp_kube_api_timeout(struct kp_options *opts, int timeout_ms);

/*
 * kp_kubelet_plugin_socket_path - the DRA socket path as kubelet sees it,
 * returned as PluginInfo.endpoint. Optional: defaults to the plugin socket
 * path (upstream 1.32 requires it; later releases derive it).
 * Rule: absolute, at most 107 bytes (sun_path less the NUL).
 * Errors: KP_EINVAL, KP_ENAMETOOLONG, KP_ENOMEM.
 * Mirrors kubeletplugin.KubeletPluginSocketPath, 1.32.
 */
KP_EXTERN int kp_kubelet_plugin_socket_path(struct kp_options *opts,
    const char *path);

/*
 * kp_plugin_socket_path - where the supervisor creates the DRA socket
 * (the nodeserver's endpoint), in this process's view of the filesystem.
 * A stale socket at the path is removed; any other file type is an error at
 * kp_start(). The file is removed by kp_stop(), also when a listener was
 * given (as upstream). A path or a listener is required.
 * Rule: absolute, at most 107 bytes.
 * Errors: KP_EINVAL, KP_ENAMETOOLONG, KP_ENOMEM.
 * Mirrors kubeletplugin.PluginSocketPath, 1.32.
 */
KP_EXTERN int kp_plugin_socket_path(struct kp_options *opts, const char *path);

/*
 * kp_plugin_listener - serve the DRA services on an already listening
 * AF_UNIX SOCK_STREAM socket. fd: duplicated at once (close-on-exec), so
 * the caller may close its copy when this returns. -1 unsets.
 * Errors: KP_EINVAL (fd is not a listening Unix stream socket).
 * Mirrors kubeletplugin.PluginListener, 1.32.
 */
KP_EXTERN int kp_plugin_listener(struct kp_options *opts, int fd);

/*
 * kp_registrar_socket_path - where the supervisor creates the registration
 * socket, normally <kubelet root>/plugins_registry/<driver>-reg.sock. Rules
 * and removal as kp_plugin_socket_path(); also the base name must not start
 * with '.' (kubelet ignores such files).
 * Errors: KP_EINVAL, KP_ENAMETOOLONG, KP_ENOMEM.
 * Mirrors kubeletplugin.RegistrarSocketPath, 1.32.
 */
KP_EXTERN int kp_registrar_socket_path(struct kp_options *opts,
    const char *path);

/*
 * kp_registrar_listener - as kp_plugin_listener(), for the registrar.
 * Mirrors kubeletplugin.RegistrarListener, 1.32.
 */
KP_EXTERN int kp_registrar_listener(struct kp_options *opts, int fd);

/*
 * Directory options (Go helper v0.33+). When neither a socket path of the
 * 1.32 options above (they override) nor a listener is set, kp_start()
 * derives the sockets from these: the registration socket
 * <registrar directory>/<registrar file name>, default
 * <kubelet root>/plugins_registry/<driver>-reg.sock, and the DRA socket
 * <plugin data directory>/<plugin socket>, default
 * <kubelet root>/plugins/<driver>/dra.sock. So a driver needs no path
 * option at all on a standard node. kp_start() creates a missing plugin
 * data directory (mode 0750, when its parent exists), never the registry
 * directory (kubelet creates it; a missing one means kubelet watches
 * elsewhere), and fails with KP_ENOENT or KP_EACCES naming the path and
 * the option when a directory is missing or not writable, and with
 * KP_ENAMETOOLONG when a socket path would be >= 108 bytes (sun_path),
 * and with KP_EINVAL when a component of a socket's directory is a
 * symbolic link (the sockets are bound, repaired and removed through
 * their directory, opened without following links; a directory swapped
 * while the plugin runs stops it with the reason).
 * Every directory: absolute, clean (no '//', '.' or '..' components), no
 * trailing '/', shorter than 106 bytes; copied. Every file name: not
 * empty, no '/', not starting with '.'. A socket path that a setter can
 * already compute (directory and file name both known) is checked for
 * sun_path at set time. Errors of each: KP_EINVAL (the rule, in the
 * message), KP_ENAMETOOLONG.
 */

/*
 * kp_kubelet_root_dir - kubelet's --root-dir. Default /var/lib/kubelet.
 * Once set, a plugin data directory outside it is refused (at set time,
 * whichever is set first, and at kp_start for the default one): kubelets
 * 1.37+ refuse DRA endpoints outside their root. Beyond upstream (drivers
 * add a --kubelet-root-dir flag for relocated roots).
 */
KP_EXTERN int kp_kubelet_root_dir(struct kp_options *opts, const char *dir);

/*
 * kp_registrar_directory_path - where the registration socket is created;
 * default <kubelet root>/plugins_registry. Must exist at kp_start().
 * Mirrors kubeletplugin.RegistrarDirectoryPath, 1.33.
 */
KP_EXTERN int kp_registrar_directory_path(struct kp_options *opts,
    const char *dir);

/*
 * kp_registrar_socket_filename - the registration socket's file name;
 * default <driver>-reg.sock. Mirrors kubeletplugin.RegistrarSocketFilename,
 * 1.33.
 */
KP_EXTERN int kp_registrar_socket_filename(struct kp_options *opts,
    const char *name);

/*
 * kp_plugin_data_directory_path - the plugin's own directory, holding the
 * DRA socket; default <kubelet root>/plugins/<driver>; the same path
 * inside and outside the container, not shared with other plugins.
 * Mirrors kubeletplugin.PluginDataDirectoryPath, 1.33.
 */
KP_EXTERN int kp_plugin_data_directory_path(struct kp_options *opts,
    const char *dir);

/*
 * kp_plugin_socket - the DRA socket's file name in the plugin data
 * directory; default dra.sock. Mirrors kubeletplugin.PluginSocket, 1.34.
 */
KP_EXTERN int kp_plugin_socket(struct kp_options *opts, const char *name);

/*
 * kp_rolling_update - run this instance beside another instance of the
 * same driver while a DaemonSet rolls (maxSurge > 0). pod_uid is this
 * pod's UID (the downward API's metadata.uid; copied); NULL or "" turns
 * it off (the default). Rule: 1 to 128 letters, digits and '-'.
 * With it, kp_start() names the sockets per instance, as the Go helper
 * v0.37 does: the registration socket is
 * kp_rolling_update_registrar_socket_file() in the registry directory, the
 * DRA socket dra-<pod_uid>.sock in the plugin data directory (unless
 * kp_plugin_socket() names it; beyond upstream, which does not shorten
 * it (kubernetes#142002): where that path would be 108 bytes or more, as
 * with a driver name over 36 bytes under /var/lib/kubelet, the first that
 * fits of dra-<h>.sock and <h>.sock, h = base64url(SHA-256(pod_uid)[:8]),
 * 11 characters; kubelet learns the name from GetInfo), and, with
 * kp_serialize() on, the prepare
 * and unprepare hooks of all instances run one at a time: around each
 * hook the nodeserver locks <kp_flock_directory_path()>/serialize.lock
 * with flock(LOCK_EX) and then an OFD lock (F_OFD_SETLKW), so that Go
 * instances exclude C instances whichever kind the Go side takes
 * (released helpers: OFD, with a flock fallback; a newer upstream copy:
 * flock). The supervisor creates the file (0644) and hands each
 * nodeserver a read-only fd of its own (its locks die with it). On stop an instance removes only the sockets it
 * created (path and inode), never another instance's. Kubelets 1.33+
 * keep both instances registered and call the newest (1.34+: the newest
 * connected one); there is no guarantee that prepare and unprepare of a
 * claim reach the same instance, so hooks must keep shared state in files.
 * The pod must catch SIGTERM and call kp_stop(): a new instance cannot
 * tell a stale socket of an old one from a live one.
 * Errors: KP_EINVAL (the rule; or "rolling updates and explicit
 * registration socket filename are mutually exclusive" when
 * kp_registrar_socket_filename() or kp_registrar_socket_path() is set, in
 * either order). Mirrors kubeletplugin.RollingUpdate, 1.33 (socket names
 * of v0.37).
 */
KP_EXTERN int kp_rolling_update(struct kp_options *opts, const char *pod_uid);

/*
 * kp_rolling_update_registrar_socket_file - the registration socket's file
 * name that kp_rolling_update() gives an instance in registry_dir: the
 * first of <driver>-<pod_uid>-reg.sock,
 * <driver>-<base64url(SHA-256(pod_uid)[:8])>-reg.sock and
 * dra-<base64url(SHA-256(driver NUL pod_uid)[:16])>-reg.sock whose full
 * path is shorter than 108 bytes, else the last (base64url without
 * padding). registry_dir must be absolute and clean (no "//", "." or
 * ".." components, no trailing '/'). Writes the name with its NUL to out
 * (size bytes; 128 are enough). Errors: KP_EINVAL (NULL or empty
 * argument, driver_name > 63 or pod_uid > 128 bytes, registry_dir not
 * clean), KP_ENAMETOOLONG (out too small). Thread-safe.
 * Mirrors kubeletplugin.RollingUpdateRegistrarSocketFile, 1.37.
 */
KP_EXTERN int kp_rolling_update_registrar_socket_file(const char *registry_dir,
    const char *driver_name, const char *pod_uid, char *out, size_t size);

/*
 * kp_flock_directory_path - where serialize.lock is created (see
 * kp_rolling_update()); default: the plugin data directory. Must exist at
 * kp_start() (KP_ENOENT otherwise); reserved for this driver. Same rules
 * as the other directories; NULL or "" restores the default. Used only
 * with rolling updates and kp_serialize() on, as upstream.
 * Mirrors kubeletplugin.FlockDirectoryPath, 1.33.
 */
KP_EXTERN int kp_flock_directory_path(struct kp_options *opts,
    const char *dir);

/*
 * kp_registration_service / kp_dra_service - serve the registration
 * service and the DRA service (default: both, 1). With the registration
 * service off there is no registration socket and no registrar process
 * (kubelet does not learn of this instance: another process registers
 * it, e.g. a split deployment or a test). With the DRA service off there
 * is no DRA socket and no nodeserver (no hook runs); the registrar still
 * advertises the DRA endpoint, computed as usual. Errors: KP_EINVAL (not
 * 0 or 1). Mirror kubeletplugin.RegistrationService and DRAService, 1.34.
 */
KP_EXTERN int kp_registration_service(struct kp_options *opts, int enable);
KP_EXTERN int kp_dra_service(struct kp_options *opts, int enable);

/*
 * kp_node_v1alpha4 / kp_node_v1beta1 / kp_node_v1 - serve and advertise the
 * DRA API versions. Defaults: v1alpha4 off (kubelet 1.31-1.33 only; served
 * as /v1alpha3.Node/, advertised as "v1alpha3.NodeService" plus "1.0.0" so
 * 1.31 kubelets accept it), v1beta1 on (kubelet 1.32+), v1 on (1.34+).
 * At least one must be on at kp_start(). enable: 0 or 1.
 * Errors: KP_EINVAL. Mirror kubeletplugin.NodeV1alpha4/NodeV1beta1 (1.32)
 * and NodeV1 (1.34).
 */
KP_EXTERN int kp_node_v1alpha4(struct kp_options *opts, int enable);
KP_EXTERN int kp_node_v1beta1(struct kp_options *opts, int enable);
KP_EXTERN int kp_node_v1(struct kp_options *opts, int enable);

/*
 * kp_grpc_verbosity - klog verbosity of per-call logging (a request
 * counter, the method, the request and the response); failures are always
 * logged. Default 4 (the 1.32 doc comment's value). Negative disables call
 * logging. Range -1000..1000. Errors: KP_EINVAL.
 * Mirrors kubeletplugin.GRPCVerbosity, 1.32.
 */
KP_EXTERN int kp_grpc_verbosity(struct kp_options *opts, int level);

/*
 * kp_log_verbosity - the klog -v level: info lines with a higher verbosity
 * are dropped. Default 0. Range 0..10. Errors: KP_EINVAL.
 */
KP_EXTERN int kp_log_verbosity(struct kp_options *opts, int level);

/*
 * kp_log_callback - send log lines to fn instead of klog-style lines on
 * stderr. fn: NULL restores stderr. user: passed back, not touched.
 * See kp_log_fn for where it runs. Errors: KP_EINVAL (NULL handle).
 */
KP_EXTERN int kp_log_callback(struct kp_options *opts, kp_log_fn fn,
    void *user);

/* One gRPC call as interceptors see it. All pointers borrowed for the
 * duration of the interceptor call. */
struct kp_call {
	uint64_t request_id;	/* per-plugin counter, shared by servers */
	const char *server;	/* "registrar" or "nodeserver" */
	const char *method;	/* full method, e.g. "/v1.DRAPlugin/..." */
	const void *request;	/* serialized protobuf request */
	size_t request_len;	/* bytes */
	const void *response;	/* serialized response; NULL before */
	size_t response_len;	/* bytes */
	int status;		/* gRPC status code; 0 before the handler */
	const char *message;	/* status message; "" on success */
};

enum kp_call_phase {
	KP_CALL_BEFORE = 0,	/* request known, handler not run yet */
	KP_CALL_AFTER = 1,	/* response or failure known */
	KP_STREAM_SEND = 2	/* streams: one message about to be sent */
};

/*
 * An interceptor. Called with KP_CALL_BEFORE before the handler; returning
 * a gRPC status code > 0 there rejects the call with that code and the
 * message written to msg (msgsize bytes including the NUL, KP_ERROR_SIZE),
 * and later interceptors and the handler do not run. Called with
 * KP_CALL_AFTER once the result is known (its return value is ignored).
 * Stream interceptors also see KP_STREAM_SEND per message, with
 * response/response_len set to that message.
 * Runs inside the registrar or nodeserver process (after fork, sandboxed),
 * on a gRPC serving thread: it must be thread-safe and may only use the
 * system calls the role's seccomp policy permits.
 */
typedef int (*kp_interceptor_fn)(void *user, enum kp_call_phase phase,
    const struct kp_call *call, char *msg, size_t msgsize);

/*
 * kp_grpc_interceptor - add a unary interceptor; may be called several
 * times (at most 16), all run in the order added, on both servers (as
 * upstream). Errors: KP_EINVAL (NULL fn), KP_ENOMEM (more than 16).
 * Mirrors kubeletplugin.GRPCInterceptor, 1.32.
 */
KP_EXTERN int kp_grpc_interceptor(struct kp_options *opts,
    kp_interceptor_fn fn, void *user);

/*
 * kp_grpc_stream_interceptor - as kp_grpc_interceptor(), for streaming
 * calls (the health stream). Mirrors kubeletplugin.GRPCStreamInterceptor.
 */
KP_EXTERN int kp_grpc_stream_interceptor(struct kp_options *opts,
    kp_interceptor_fn fn, void *user);

/*
 * kp_socket_mode - file mode of the socket files the supervisor creates.
 * Default 0600 (kubelet connects as root). Rule: only permission bits
 * (mode & ~0777 == 0) and owner read+write set. Errors: KP_EINVAL.
 * Beyond upstream (which leaves the mode to the umask).
 */
KP_EXTERN int kp_socket_mode(struct kp_options *opts, unsigned int mode);

/*
 * kp_allowed_peer_uid - add a uid allowed to connect to both sockets
 * (checked with SO_PEERCRED before any gRPC byte is read). Default: only 0,
 * the kubelet; the first call replaces the default. At most 16 uids.
 * Errors: KP_EINVAL (uid (uid_t)-1), KP_ENOMEM (more than 16).
 * Beyond upstream.
 */
KP_EXTERN int kp_allowed_peer_uid(struct kp_options *opts, uid_t uid);

/*
 * kp_serialize - 1 (default): the prepare and unprepare hooks run one at a
 * time, as upstream since 1.33 (calls are served on kp_worker_threads()
 * threads, so the claim look-ups of concurrent calls still overlap; the
 * lock is taken after them, as upstream); with kp_rolling_update() also
 * across the driver's instances (serialize.lock, see there); 0: hooks run
 * concurrently too, and the driver must lock for itself.
 * Errors: KP_EINVAL. Mirrors kubeletplugin.Serialize, 1.33.
 */
KP_EXTERN int kp_serialize(struct kp_options *opts, int enable);

/*
 * kp_worker_threads - threads of the nodeserver serving Prepare/Unprepare
 * calls. Range 1..64, default 4. Errors: KP_EINVAL.
 */
KP_EXTERN int kp_worker_threads(struct kp_options *opts, int n);

/*
 * Connection limits of the two gRPC sockets (the registration socket and
 * the DRA socket, each on its own). A connection counts from accept until
 * it is closed, including while it has not yet sent the HTTP/2 client
 * preface. One over the limit is accepted and closed at once (logged at
 * V(2), at most once a second). What stays open: an established
 * connection (its preface arrived) that carried a call is never closed by
 * the plugin, busy or idle, for as long as its peer answers HTTP/2 PINGs
 * (sent after 60 s without traffic; no answer within 20 s closes it: a
 * peer that stopped reading). kubelet answers them, so its connection
 * lasts for hours. One that never carried a call stays open too, until a
 * new connection finds the limit reached: then the oldest of them that is
 * older than kp_grpc_handshake_timeout() is closed for it (a peer that
 * sent the preface and fell silent cannot hold a slot longer than that).
 * Trade-off: while the limit is taken by connections that have not sent
 * their preface, or that are younger than the handshake timeout and have
 * made no call, a new one, kubelet's too, is refused until they time out
 * (kp_grpc_handshake_timeout()); kubelet retries.
 */

/*
 * kp_grpc_max_connections - connections each socket holds at once, 1..1024.
 * Default 8: kubelet keeps one connection to the DRA socket (1.34+ dials
 * at registration, older ones on the first call) and dials the
 * registration socket once per registration; the rest is headroom for a
 * restarting kubelet whose old connection is still being torn down, a
 * health stream's reconnect, and a debugging client.
 * Errors: KP_EINVAL (out of range). Beyond upstream.
 */
KP_EXTERN int kp_grpc_max_connections(struct kp_options *opts, int n);

/*
 * kp_grpc_handshake_timeout - milliseconds a new connection has to send the
 * 24-byte HTTP/2 client preface before it is closed, 100..600000; one that
 * sends anything else is closed at once. Default 10000 (kubelet sends the
 * preface as soon as it is connected). Errors: KP_EINVAL (out of range).
 * Beyond upstream.
 */
KP_EXTERN int kp_grpc_handshake_timeout(struct kp_options *opts, int ms);

/* ------------------------------------------------------------------------
 * How the plugin ends (beyond upstream, issue 14).
 */

/*
 * kp_shutdown_grace - the budget, in milliseconds (0..600000), a draining
 * stop gives the calls in flight. On kp_stop() or SIGTERM to the
 * supervisor the registration socket goes first (kubelet stops routing
 * new work here; a rolling update's other instance keeps serving), new
 * DRA calls get UNAVAILABLE, calls in flight finish within this budget
 * (then they are cancelled: their hooks see kp_prepare_cancelled()),
 * then the DRA socket is closed and every process stops. Default 25000,
 * below kubelet's usual 30 s termination grace period; 0: no draining.
 * Errors: KP_EINVAL (out of range, invalid handle). Beyond upstream.
 */
KP_EXTERN int kp_shutdown_grace(struct kp_options *opts, int ms);

/*
 * kp_hung_child_timeout - milliseconds a plugin process (registrar,
 * nodeserver, publisher, observer) may leave the supervisor's heartbeat
 * unanswered before it is killed and restarted like a crashed one: 0
 * (never: a hung process only fails /healthz, e.g. while a debugger holds
 * it), or 3000..300000. The supervisor sends each process a Ping every 2 s
 * and looks at the answers as often, so a hang is acted on up to 2 s
 * after the timeout; the process answers from the loop that reads its channel, never from a
 * hook, so a slow prepare does not count. A hung nodeserver is drained
 * first (SIGTERM, calls in flight may finish; SIGKILL at most 5 s later,
 * or at kp_shutdown_grace() when that is shorter). One warning is logged
 * when the answers stop (/healthz fails then, after 5 s), one when the
 * process is killed, none in between. Default 10000: five Pings in a row
 * unanswered, twice the time /healthz waits; with the drain and the
 * restart a hung nodeserver is replaced within about 18 s, so a call
 * kubelet retries still fits its 45 s deadline (docs/reliability.md).
 * Errors: KP_EINVAL (out of range, invalid handle). Beyond upstream.
 */
KP_EXTERN int kp_hung_child_timeout(struct kp_options *opts, int ms);

/*
 * kp_termination_message_path - where a fatal exit of the plugin (a socket
 * it can no longer serve, a failed start) writes its one-line reason, as
 * kubelet's terminationMessagePath: the file is written only when it
 * exists (kubelet creates it in the container), truncated first, never
 * created or followed through a symbolic link. path: absolute, at most
 * 255 bytes, copied; NULL disables it. Default "/dev/termination-log".
 * Errors: KP_EINVAL (relative, invalid handle), KP_ENAMETOOLONG.
 * Beyond upstream.
 */
KP_EXTERN int kp_termination_message_path(struct kp_options *opts,
    const char *path);

/* ------------------------------------------------------------------------
 * Driver hooks. They run inside the nodeserver process, after fork and
 * inside its sandbox, on gRPC serving threads.
 */

/* One device of a claim's allocation for this driver (from the claim
 * look-up). */
struct kp_allocated_device {
	const char *request;	/* request name, "req" or "req/subreq" */
	const char *pool;
	const char *device;
	int admin_access;	/* 0 or 1 */
};

/*
 * One opaque configuration for this driver from the claim's allocation
 * (status.allocation.devices.config[] entries whose opaque.driver is this
 * driver, in the claim's order: the class's configs before the claim's
 * own, as the scheduler stores them). Built by the library from the
 * claim the publisher fetched; everything is borrowed for the duration
 * of the hook call.
 */
struct kp_config {
	const char *source;	/* "FromClass" or "FromClaim" */
	const char *const *requests;	/* requests it applies to; */
	size_t n_requests;		/* 0: every request of the claim */
	const char *driver;	/* opaque.driver: this driver's name */
	const char *parameters;	/* opaque.parameters as compact JSON
				 * text ("null" when absent) */
	/*
	 * The same parameters, parsed: a jansson json_t (read it with
	 * kp_config_parameters() below). Borrowed for the hook call:
	 * never decref, modify or keep it.
	 */
	const void *parameters_json;
};

/*
 * kp_config_parameters - the parsed opaque parameters of a config as a
 * jansson object (any JSON value; NULL when the claim had none), for
 * drivers that include <jansson.h> before this header. Why a getter
 * that exists only then, and not json_t in the structs: the header stays
 * usable without jansson (parameters holds the same data as text), and a
 * driver that does use jansson shares the library's copy (one libjansson
 * per process: the plugin links it anyway), so hooks read the config
 * without parsing JSON by hand. Borrowed for the hook call. A driver
 * that calls json_*() itself links jansson itself too (-ljansson, or
 * pkg-config jansson): with the shared library it is not re-exported.
 */
#ifdef JANSSON_H
static inline const json_t *
kp_config_parameters(const struct kp_config *c)
{
	return ((const json_t *)c->parameters_json);
}
#endif

/* A claim to prepare or unprepare. All pointers borrowed for the duration
 * of the hook call. */
struct kp_claim {
	const char *namespace_;
	const char *name;
	const char *uid;
	/*
	 * Prepare only, and only with Kubernetes access configured: the
	 * allocation results for this driver and its opaque configuration.
	 * config_json is the configs as one JSON array, compact, in the
	 * claim's order, "[]" when none:
	 *	[{"source":"FromClass"|"FromClaim",
	 *	  "requests":["req",...],	(absent: every request)
	 *	  "parameters":<opaque.parameters, any JSON>}, ...]
	 * configs/n_configs is the same, parsed (struct kp_config); a claim
	 * whose configuration does not parse fails before the hook runs.
	 * Without Kubernetes access n_results and n_configs are 0 and
	 * config_json is NULL.
	 */
	const struct kp_allocated_device *results;
	size_t n_results;
	const char *config_json;
	const struct kp_config *configs;
	size_t n_configs;
};

/* ------------------------------------------------------------------------
 * Everything about a claim: kp_claim_info() (beyond struct kp_claim, which
 * stays as it is for drivers compiled against the first release). What
 * Go's PrepareResourceClaims hook finds in its *resourceapi.ResourceClaim:
 * each allocation result of this driver with every field, the configs,
 * labels, annotations, reservedFor, the allocation's node selector and the
 * claim itself as the API server returned it.
 *
 * How this data grows without breaking compiled drivers (the other
 * direction of "How this data grows" below): these structs are the
 * library's. Each starts with size_t struct_size, set by the library to
 * its own sizeof, and each is reached through a pointer (lists are arrays
 * of pointers), never by stride: a later release appends fields at the
 * end and every field a compiled driver knows stays where it was. A
 * driver compiled against a newer header than the library it runs with
 * tests a field before reading it: KP_HAS(p, field) is 1 when the
 * library's struct has it. Everything is borrowed, read-only, until the
 * hook returns (results, configs, strings, JSON).
 *
 * Absent or empty: fields the API server has no place for in the version
 * the claim was fetched in (a 1.32 server serves v1beta1 without
 * tolerations; shareID, consumedCapacity and binding conditions arrive
 * with 1.34 and resource.k8s.io/v1) are reported in
 * kp_claim_info.absent (KP_CLAIM_ABSENT_* bits), so a driver can tell
 * "the allocation has none" from "this API server cannot say". A field
 * that is set never has its bit set.
 */
#define KP_HAS(p, field)						\
	((p) != NULL && (size_t)((const char *)&(p)->field -		\
	    (const char *)(p)) + sizeof((p)->field) <= (p)->struct_size)

/* One resourceapi.DeviceToleration of an allocation result (1.33+). */
struct kp_toleration {
	size_t struct_size;
	const char *key;	/* "" : every taint key (operator Exists) */
	const char *operator_;	/* "Equal" or "Exists" */
	const char *value;	/* "" when none */
	const char *effect;	/* "NoSchedule", "NoExecute", "": every
				 * effect */
	int has_toleration_seconds;	/* 0: tolerate for ever */
	int64_t toleration_seconds;	/* NoExecute only */
};

/*
 * One entry of an allocation result's consumedCapacity (1.34+, KEP-5075:
 * the share of a device's capacity this claim consumes).
 *   name: the capacity's name as the scheduler stored it, qualified
 *     ("dra.example.com/memory") or not ("memory"); 1.38 drivers publish
 *     short names: compare with kp_claim_capacity() which accepts both.
 *   quantity: the quantity's text as the API server wrote it (its
 *     canonical form: "1Gi", "500m").
 *   value: Quantity.Value() (rounded up to an integer); beyond int64 it
 *     is INT64_MAX (INT64_MIN when negative) and overflow is 1.
 *   milli_value: Quantity.MilliValue() (rounded up), the same way with
 *     milli_overflow ("10E" has a value, no milli value).
 *   invalid: 1 when quantity is no Kubernetes quantity (an API server
 *     never stores one): value and milli_value are 0.
 */
struct kp_capacity_quantity {
	size_t struct_size;
	const char *name;
	const char *quantity;
	int64_t value;
	int64_t milli_value;
	int overflow;
	int milli_overflow;
	int invalid;
};

/*
 * One allocation result of this driver: an element of the claim's
 * status.allocation.devices.results whose driver is this driver
 * (resourceapi.DeviceRequestAllocationResult), in the claim's order.
 *   request: "req", or "req/sub" for a subrequest of a firstAvailable
 *     list; base_request "req" and subrequest "sub" (NULL when none)
 *     are the same, split.
 *   driver, pool, device: the device (driver is this driver).
 *   admin_access: 1 for an admin-access allocation (1.32+).
 *   share_id: the share of a device that allows multiple allocations
 *     (1.34+, KEP-5075), NULL when none; return it in
 *     kp_prepared_device.share_id.
 *   consumed_capacity: 1.34+, see struct kp_capacity_quantity.
 *   tolerations: copies of the request's tolerations at allocation time
 *     (1.33+).
 *   binding_conditions, binding_failure_conditions: condition types of
 *     the device the scheduler waits for (1.34+, KEP-5007).
 *   index: this result's index in status.allocation.devices.results
 *     (every driver's), for reading the claim's JSON.
 */
struct kp_claim_result {
	size_t struct_size;
	const char *request;
	const char *base_request;
	const char *subrequest;
	const char *driver;
	const char *pool;
	const char *device;
	int admin_access;
	const char *share_id;
	const struct kp_capacity_quantity *const *consumed_capacity;
	size_t n_consumed_capacity;
	const struct kp_toleration *const *tolerations;
	size_t n_tolerations;
	const char *const *binding_conditions;
	size_t n_binding_conditions;
	const char *const *binding_failure_conditions;
	size_t n_binding_failure_conditions;
	size_t index;
};

/*
 * One opaque configuration for this driver (as struct kp_config above,
 * growable): status.allocation.devices.config entries whose
 * opaque.driver is this driver, in the claim's order.
 *   source: "FromClass" or "FromClaim".
 *   requests: the requests it applies to; none: every request.
 *   parameters: opaque.parameters as compact JSON ("null" when absent);
 *   parameters_json the same parsed (a jansson json_t: read it with
 *   kp_claim_config_parameters() below).
 */
struct kp_claim_config {
	size_t struct_size;
	const char *source;
	const char *const *requests;
	size_t n_requests;
	const char *driver;
	const char *parameters;
	const void *parameters_json;
};

/* A label or annotation of the claim (metadata.labels, .annotations),
 * in the order the API server wrote them (sorted by key). */
struct kp_key_value {
	size_t struct_size;
	const char *key;
	const char *value;
};

/* One status.reservedFor entry (resourceapi.ResourceClaimConsumerReference):
 * who consumes the claim, a pod usually (api_group "", resource "pods"). */
struct kp_consumer_ref {
	size_t struct_size;
	const char *api_group;
	const char *resource;
	const char *name;
	const char *uid;
};

/* kp_claim_info.absent bits. */
#define KP_CLAIM_ABSENT_TOLERATIONS		(1u << 0)  /* before 1.33 */
#define KP_CLAIM_ABSENT_BINDING_CONDITIONS	(1u << 1)  /* before 1.34 */
#define KP_CLAIM_ABSENT_SHARE_ID		(1u << 2)  /* before 1.34 */
#define KP_CLAIM_ABSENT_CONSUMED_CAPACITY	(1u << 3)  /* before 1.34 */
/* Nothing was fetched (an unprepare, or no Kubernetes access): every
 * field of the allocation, labels, annotations, reservedFor, JSON. */
#define KP_CLAIM_ABSENT_ALLOCATION		(1u << 4)

/*
 * Everything about one claim of a hook call.
 *   namespace_, name, uid: as in struct kp_claim.
 *   api_version: the version the publisher fetched the claim in
 *     ("resource.k8s.io/v1"; "resource.k8s.io/v1beta2" from a 1.33,
 *     "resource.k8s.io/v1beta1" from a 1.32 API server); NULL when
 *     nothing was fetched (absent has KP_CLAIM_ABSENT_ALLOCATION).
 *   absent: KP_CLAIM_ABSENT_* bits, see "Absent or empty" above.
 *   results: this driver's allocation results; configs: its opaque
 *     configurations.
 *   labels, annotations: the claim's metadata.
 *   reserved_for: status.reservedFor: the consumers (pods) the claim is
 *     reserved for.
 *   node_selector: status.allocation.nodeSelector as compact JSON, NULL
 *     when none; node_selector_json the same parsed (json_t).
 *   json, json_len: the claim as the API server returned it, compact
 *     JSON (metadata, spec and status, every field the library does not
 *     model included; metadata.managedFields left out, as kubectl shows
 *     a claim); json_obj the same parsed (json_t, read it with
 *     kp_claim_json() below). NULL when nothing was fetched.
 */
struct kp_claim_info {
	size_t struct_size;
	const char *namespace_;
	const char *name;
	const char *uid;
	const char *api_version;
	unsigned int absent;
	const struct kp_claim_result *const *results;
	size_t n_results;
	const struct kp_claim_config *const *configs;
	size_t n_configs;
	const struct kp_key_value *const *labels;
	size_t n_labels;
	const struct kp_key_value *const *annotations;
	size_t n_annotations;
	const struct kp_consumer_ref *const *reserved_for;
	size_t n_reserved_for;
	const char *node_selector;
	const void *node_selector_json;
	const char *json;
	size_t json_len;
	const void *json_obj;
};

/*
 * kp_claim_info - everything about claim, one element of the claims array
 * a prepare or unprepare hook got, while that hook runs (from any
 * thread). The first call for a claim parses its JSON (once, outside
 * any lock other calls wait on; the same pointer comes back after), so a
 * driver that never asks pays nothing. Lifetime: until the hook call
 * that got claim returns; never free or modify it. For an unprepare, or
 * without Kubernetes access, only namespace_, name and uid are set
 * (absent has KP_CLAIM_ABSENT_ALLOCATION). Returns NULL when claim is not
 * one of a running hook call's claims (a copy of the struct; a claim
 * kept after its hook returned is a dangling pointer: it may even find a
 * later call's claim), out of memory, or when the claim's JSON cannot be
 * used: it does not parse, names another claim (a publisher that broke
 * the protocol) or holds more than KP_CLAIM_MAX_VALUES JSON values (a
 * bound on what one claim may cost the nodeserver; no claim a pod uses
 * comes near it). Each of those is logged once. Mirrors the
 * *resourceapi.ResourceClaim of Go's PrepareResourceClaims
 * (kubeletplugin/draplugin.go).
 */
KP_EXTERN const struct kp_claim_info *kp_claim_info(
    const struct kp_claim *claim);
#define KP_CLAIM_MAX_VALUES	16384	/* JSON values (and keys) in a claim */

/*
 * kp_claim_capacity - the consumedCapacity entry of result r named name,
 * matched as upstream's LookupByQualifiedName (1.38): name may be short
 * ("memory") or qualified with the driver's domain
 * ("dra.example.com/memory"), and an entry stored in either form matches;
 * a qualified entry wins over a short one. NULL when none. Borrowed as r.
 */
KP_EXTERN const struct kp_capacity_quantity *kp_claim_capacity(
    const struct kp_claim_result *r, const char *name);

#ifdef JANSSON_H
/* The claim as a jansson object (NULL when nothing was fetched). Borrowed
 * for the hook call: never decref, modify or keep it. */
static inline const json_t *
kp_claim_json(const struct kp_claim_info *i)
{
	return ((const json_t *)i->json_obj);
}

/* A config's parsed opaque parameters (NULL when none); as above. */
static inline const json_t *
kp_claim_config_parameters(const struct kp_claim_config *c)
{
	return ((const json_t *)c->parameters_json);
}
#endif

/*
 * A device prepared for a claim, as returned to kubelet. struct_size:
 * sizeof(struct kp_prepared_device) as the caller compiled it (start from
 * KP_PREPARED_DEVICE_INIT), so fields can be appended without breaking
 * compiled drivers; kp_prepare_add_device() reads only the fields that
 * fit in it (see "How this data grows" below). All strings borrowed for
 * the call.
 *   request_names: the requests it serves; empty: all requests.
 *   pool_name, device_name: required.
 *   cdi_device_ids: fully qualified CDI device names,
 *     "<vendor>/<class>=<name>" (kp_cdi_device_id() forms one): vendor
 *     and class a letter, then letters, digits, '_', '-' or '.', ending
 *     with a letter or digit; name a letter or digit, then letters,
 *     digits, '_', '-', '.' or ':', ending with a letter or digit (the
 *     rule of container-device-interface pkg/parser); at most 512 bytes.
 *   share_id: the share this device serves, NULL when none: return
 *     kp_claim_result.share_id (the claim carries it from Kubernetes
 *     1.34). kubelet gets it over the v1 DRA service of kubelet 1.35+;
 *     a kubelet that speaks v1beta1 (1.32-1.33, or 1.34 choosing it) has
 *     no field for it and the answer goes without it.
 */
struct kp_prepared_device {
	size_t struct_size;		/* KP_PREPARED_DEVICE_INIT */
	const char *const *request_names;
	size_t n_request_names;
	const char *pool_name;
	const char *device_name;
	const char *const *cdi_device_ids;
	size_t n_cdi_device_ids;
	const char *share_id;
};
#define KP_PREPARED_DEVICE_INIT \
	.struct_size = sizeof(struct kp_prepared_device)

struct kp_prepare_results;
struct kp_unprepare_results;

/*
 * kp_prepare_add_device - add a prepared device to claim number claim
 * (index into the claims array of the hook call). Everything is copied;
 * request names are cut at the first '/' (a subrequest's base request, as
 * upstream). Strings must be valid UTF-8; each CDI device ID must follow
 * the rule above (kubelet passes them to the runtime, which would fail
 * the container much later, far from the cause).
 * Errors: KP_EINVAL (bad index; dev's struct_size 0, smaller than this
 * first release's struct or with a field set this library does not know;
 * NULL or empty pool/device name, a NULL string in the arrays, invalid
 * UTF-8, an invalid CDI device ID: the claim's error names the ID and the
 * rule), KP_ENOMEM. A failed call with a valid index fails that claim, so
 * a driver that ignores the code cannot report a claim prepared with a
 * device missing.
 */
KP_EXTERN int kp_prepare_add_device(struct kp_prepare_results *res,
    size_t claim, const struct kp_prepared_device *dev);

/*
 * kp_prepare_claim_error - mark claim number claim as failed with msg
 * (copied; cut to 1023 bytes at a character boundary, invalid UTF-8 bytes
 * become '?'). Its devices are dropped, as kubelet ignores them. A NULL or
 * empty msg still fails the claim, with a generic text, and returns
 * KP_EINVAL. Errors: KP_EINVAL, KP_ENOMEM.
 */
KP_EXTERN int kp_prepare_claim_error(struct kp_prepare_results *res,
    size_t claim, const char *msg);

/*
 * kp_unprepare_claim_error - mark claim number claim of an unprepare call
 * as failed with msg (copied, with the rules of kp_prepare_claim_error()).
 * Errors: KP_EINVAL, KP_ENOMEM.
 */
KP_EXTERN int kp_unprepare_claim_error(struct kp_unprepare_results *res,
    size_t claim, const char *msg);

/*
 * kp_prepare_cancelled / kp_unprepare_cancelled - 1 once kubelet cancelled
 * the call or its deadline (45 s in kubelet) passed, else 0. A long hook
 * should poll it and stop early; its results are then discarded. Returns 0
 * for a NULL res.
 */
KP_EXTERN int kp_prepare_cancelled(const struct kp_prepare_results *res);
KP_EXTERN int kp_unprepare_cancelled(const struct kp_unprepare_results *res);

/*
 * The driver's hooks. user is passed back to each hook.
 *
 * prepare: prepare n claims (n >= 1). Fill res with kp_prepare_add_device()
 * / kp_prepare_claim_error(); a claim left untouched succeeds with no
 * devices. Return 0, or a negative code to fail the whole call: the gRPC
 * status is then INTERNAL with the message written to errbuf (errsize
 * bytes). Must be idempotent: kubelet retries. Required.
 *
 * unprepare: undo prepare; a claim that is not prepared is not an error.
 * Never needs the API server. Return as for prepare. Required.
 *
 * init: optional; run once in each new nodeserver process after fork, before
 * the nodeserver's own sandbox and before serving. Non-zero fails the start
 * (kp_start() returns KP_ECHILD with errbuf's message) or, on a restart,
 * the restart. It runs as the user the plugin was started as (root on a
 * node) but not with every capability: with the supervisor's (CHOWN,
 * KILL, SETGID, SETUID, SETPCAP, SYS_CHROOT, SYS_ADMIN, those it holds)
 * plus the kp_sandbox_capability() ones, under NO_NEW_PRIVS and under the
 * supervisor's seccomp filter, the union of every process's allowlist and
 * the kp_sandbox_syscall() names: a syscall outside it returns -1/EPERM
 * (killed in KP_SANDBOX_STRICT), is logged ("init hook: sandbox denied
 * bpf (EPERM): the supervisor's filter; ...") and named in the start's
 * error when the hook fails. List with kp_sandbox_syscall() and
 * kp_sandbox_capability() what it needs (a device ioctl, a capability to
 * open a device). docs/security.md, "The supervisor's filter".
 * It runs in every nodeserver the supervisor starts: after a crash, a kill
 * for a protocol violation or a restart, too. From the second start on,
 * whatever it reads from the state directories (kp_sandbox_state_dir(),
 * kp_journal_dir()) or from any other place a nodeserver may write is
 * untrusted input: an earlier nodeserver, which ran the hooks and may have
 * been compromised, wrote it. Parse it as hostile, open nothing there by a
 * path it names, follow no symlink there (O_NOFOLLOW, or openat2() with
 * RESOLVE_BENEATH) and do nothing privileged that it asks for. The working
 * directory is "/" in every hook (the driver's is never inherited), so
 * relative paths start there.
 */
struct kp_hooks {
	void *user;
	int (*prepare)(void *user, const struct kp_claim *claims, size_t n,
	    struct kp_prepare_results *res, char *errbuf, size_t errsize);
	int (*unprepare)(void *user, const struct kp_claim *claims, size_t n,
	    struct kp_unprepare_results *res, char *errbuf, size_t errsize);
	int (*init)(void *user, char *errbuf, size_t errsize);
};

/* ------------------------------------------------------------------------
 * Driver resources for kp_publish_resources(): plain C data, borrowed for
 * the duration of the call (deep-copied before it returns).
 *
 * How this data grows without breaking compiled drivers (data the driver
 * passes in; what the library hands to hooks grows the other way, see
 * kp_claim_info() above): every struct
 * below starts with size_t struct_size, set by its KP_*_INIT macro to
 * sizeof the struct as the driver was compiled. Write them with
 * designated initialisers:
 *
 *	static const struct kp_attribute attrs[] = {
 *		KP_ATTR_STRING("model", "A100"),
 *		KP_ATTR_INT("index", 0),
 *	};
 *	static const struct kp_device devs[] = {
 *		{ KP_DEVICE_INIT, .name = "gpu-0", .attributes = attrs,
 *		    .n_attributes = 2 },
 *	};
 *
 * or in a loop: devs[i] = (struct kp_device){ KP_DEVICE_INIT, .name = n };
 * Arrays are pointer + count. The library walks an array with its first
 * element's struct_size as the stride and reads from each element only
 * the fields that fit in it: fields a later release adds sit at the end,
 * so a driver compiled against this header keeps working (the new fields
 * read as zero, which always means "unset"). A driver compiled against a
 * newer header and run with this library works as long as it leaves the
 * fields this library does not know zero; a non-zero one is refused
 * rather than silently dropped. kp_publish_resources() fails with
 * KP_EINVAL, naming the field path (pools[0].slices[1].devices[3]...),
 * when a struct_size is 0 (not initialised), smaller than this first
 * release's struct, not a multiple of the struct's alignment, or differs
 * between elements of one array. Why size fields and not builders: a
 * driver with a static table of devices keeps it static (no calls, no
 * frees, no error paths per field), one that builds devices in a loop
 * fills an array, and both read like the Go structs they mirror.
 *
 * Zero means unset everywhere: NULL (or "") strings and lists, 0 flags,
 * 0 times. Only what is set is published.
 *
 * The same scheme, for the data types of other parts of the API:
 *  - health reports (in this release): struct kp_device_health and
 *    KP_DEVICE_HEALTH_INIT ("Resource health" below), passed as
 *    (const struct kp_device_health *, n) to kp_health_report() and
 *    kp_hook_health_report() and walked by struct_size like devices.
 *  - prepared devices: struct kp_prepared_device and
 *    KP_PREPARED_DEVICE_INIT, one at a time to kp_prepare_add_device(),
 *    which reads the fields that fit in the caller's struct_size; the CDI
 *    edits of the spec builder (struct kp_cdi_device_node, kp_cdi_mount,
 *    kp_cdi_hook) likewise.
 * Every such struct: struct_size first, new fields only appended, zero
 * means unset, an _INIT macro, arrays walked with the caller's stride.
 */

/* Set struct_size of a struct of type T: { KP_STRUCT_INIT(T), ... }. */
#define KP_STRUCT_INIT(T)	.struct_size = sizeof(T)

enum kp_attribute_type {
	KP_ATTR_TYPE_INT = 0,
	KP_ATTR_TYPE_BOOL = 1,
	KP_ATTR_TYPE_STRING = 2,	/* at most 64 bytes */
	KP_ATTR_TYPE_VERSION = 3,	/* semver 2.0.0, at most 64 bytes */
	/* List types (1.36+, DRAListTypeAttributes): n_values values of
	 * the list below; at most 48 list values per device in all. */
	KP_ATTR_TYPE_INTS = 4,		/* int_values */
	KP_ATTR_TYPE_BOOLS = 5,		/* bool_values */
	KP_ATTR_TYPE_STRINGS = 6,	/* string_values, each <= 64 bytes */
	KP_ATTR_TYPE_VERSIONS = 7	/* string_values, semver each */
};

/* A device attribute (DeviceAttribute): exactly one typed value. */
struct kp_attribute {
	size_t struct_size;		/* KP_ATTRIBUTE_INIT */
	const char *name;	/* [domain/]identifier: the short
				 * identifier for this driver's own
				 * ("model"; its own domain is refused,
				 * kp_validate_qualified_names()), a
				 * domain only for another's
				 * ("resource.kubernetes.io/pcieRoot") */
	enum kp_attribute_type type;
	int64_t int_value;		/* INT */
	int bool_value;			/* BOOL: 0 or 1 */
	const char *string_value;	/* STRING and VERSION */
	const int64_t *int_values;	/* INTS */
	const int *bool_values;		/* BOOLS */
	const char *const *string_values;	/* STRINGS and VERSIONS */
	size_t n_values;		/* list types: >= 1 */
};
#define KP_ATTRIBUTE_INIT	KP_STRUCT_INIT(struct kp_attribute)

/* Attribute initialisers, for tables and for compound literals:
 * struct kp_attribute a = KP_ATTR_INT("example.com/index", 3); */
#define KP_ATTR_INT(n, v)	{ KP_ATTRIBUTE_INIT, .name = (n),	\
	.type = KP_ATTR_TYPE_INT, .int_value = (v) }
#define KP_ATTR_BOOL(n, v)	{ KP_ATTRIBUTE_INIT, .name = (n),	\
	.type = KP_ATTR_TYPE_BOOL, .bool_value = (v) }
#define KP_ATTR_STRING(n, v)	{ KP_ATTRIBUTE_INIT, .name = (n),	\
	.type = KP_ATTR_TYPE_STRING, .string_value = (v) }
#define KP_ATTR_VERSION(n, v)	{ KP_ATTRIBUTE_INIT, .name = (n),	\
	.type = KP_ATTR_TYPE_VERSION, .string_value = (v) }
#define KP_ATTR_INTS(n, a, c)	{ KP_ATTRIBUTE_INIT, .name = (n),	\
	.type = KP_ATTR_TYPE_INTS, .int_values = (a), .n_values = (c) }
#define KP_ATTR_BOOLS(n, a, c)	{ KP_ATTRIBUTE_INIT, .name = (n),	\
	.type = KP_ATTR_TYPE_BOOLS, .bool_values = (a), .n_values = (c) }
#define KP_ATTR_STRINGS(n, a, c) { KP_ATTRIBUTE_INIT, .name = (n),	\
	.type = KP_ATTR_TYPE_STRINGS, .string_values = (a), .n_values = (c) }
#define KP_ATTR_VERSIONS(n, a, c) { KP_ATTRIBUTE_INIT, .name = (n),	\
	.type = KP_ATTR_TYPE_VERSIONS, .string_values = (a), .n_values = (c) }

/*
 * How a request consumes a capacity of a device that allows multiple
 * allocations (CapacityRequestPolicy, DRAConsumableCapacity). Quantities
 * as strings. At most one of valid_values and the range.
 */
struct kp_request_policy {
	size_t struct_size;		/* KP_REQUEST_POLICY_INIT */
	const char *default_value;	/* NULL: unset; required with the
					 * values or the range */
	const char *const *valid_values;	/* <= 10, ascending */
	size_t n_valid_values;
	const char *range_min;		/* non-NULL: validRange is set */
	const char *range_max;		/* NULL: no maximum */
	const char *range_step;		/* NULL: no step */
};
#define KP_REQUEST_POLICY_INIT	KP_STRUCT_INIT(struct kp_request_policy)

struct kp_capacity {
	size_t struct_size;		/* KP_CAPACITY_INIT */
	const char *name;	/* as kp_attribute.name: "memory",
				 * not "<driver>/memory" */
	const char *quantity;	/* Kubernetes quantity, e.g. "80Gi" */
	const struct kp_request_policy *request_policy;	/* NULL: none */
};
#define KP_CAPACITY_INIT	KP_STRUCT_INIT(struct kp_capacity)
#define KP_CAPACITY(n, q)	{ KP_CAPACITY_INIT, .name = (n),	\
	.quantity = (q) }

/* One counter of a counter set or of a consumption (Counter). */
struct kp_counter {
	size_t struct_size;		/* KP_COUNTER_INIT */
	const char *name;	/* DNS label */
	const char *quantity;
};
#define KP_COUNTER_INIT		KP_STRUCT_INIT(struct kp_counter)
#define KP_COUNTER(n, q)	{ KP_COUNTER_INIT, .name = (n),		\
	.quantity = (q) }

/* A counter set of a slice (CounterSet, DRAPartitionableDevices). */
struct kp_counter_set {
	size_t struct_size;		/* KP_COUNTER_SET_INIT */
	const char *name;	/* DNS label, unique in the pool */
	const struct kp_counter *counters;
	size_t n_counters;	/* 1 .. 32 */
};
#define KP_COUNTER_SET_INIT	KP_STRUCT_INIT(struct kp_counter_set)

/* What a device takes from one counter set (DeviceCounterConsumption). */
struct kp_counter_consumption {
	size_t struct_size;		/* KP_COUNTER_CONSUMPTION_INIT */
	const char *counter_set;	/* a counter set of the pool */
	const struct kp_counter *counters;	/* its counters, 1 .. 32 */
	size_t n_counters;
};
#define KP_COUNTER_CONSUMPTION_INIT \
	KP_STRUCT_INIT(struct kp_counter_consumption)

enum kp_taint_effect {
	KP_TAINT_UNSET = 0,		/* invalid: effect is required */
	KP_TAINT_NONE = 1,		/* "None" (1.35+) */
	KP_TAINT_NO_SCHEDULE = 2,	/* "NoSchedule" */
	KP_TAINT_NO_EXECUTE = 3		/* "NoExecute" */
};

/* A device taint (DeviceTaint, DRADeviceTaints). */
struct kp_taint {
	size_t struct_size;		/* KP_TAINT_INIT */
	const char *key;	/* label key */
	const char *value;	/* label value; NULL or "": none */
	enum kp_taint_effect effect;
	int64_t time_added;	/* Unix seconds; 0: the server's time (the
				 * controller keeps a stored one) */
};
#define KP_TAINT_INIT		KP_STRUCT_INIT(struct kp_taint)

/*
 * How allocating the device adds to a node-allocatable resource
 * (NodeAllocatableResource, 1.37 name, DRANodeAllocatableResources):
 * a mapping (capacity_key with capacity_multiplier, or
 * device_multiplier) and/or an overhead (per_pod, per_container).
 */
struct kp_node_allocatable {
	size_t struct_size;		/* KP_NODE_ALLOCATABLE_INIT */
	const char *resource;	/* "cpu", "memory", "hugepages-2Mi", ... */
	const char *capacity_key;	/* mapping.capacityKey */
	const char *capacity_multiplier;	/* mapping, quantity */
	const char *device_multiplier;	/* mapping, quantity */
	const char *per_pod;		/* overhead, quantity */
	const char *per_container;	/* overhead, quantity */
};
#define KP_NODE_ALLOCATABLE_INIT KP_STRUCT_INIT(struct kp_node_allocatable)

/* One requirement of a node selector term (core/v1). */
struct kp_node_selector_requirement {
	size_t struct_size;		/* KP_NODE_SELECTOR_REQUIREMENT_INIT */
	const char *key;
	const char *op;		/* In, NotIn, Exists, DoesNotExist, Gt, Lt */
	const char *const *values;
	size_t n_values;
};
#define KP_NODE_SELECTOR_REQUIREMENT_INIT \
	KP_STRUCT_INIT(struct kp_node_selector_requirement)

/* A node selector with exactly one term, as ResourceSlices require. */
struct kp_node_selector {
	size_t struct_size;		/* KP_NODE_SELECTOR_INIT */
	const struct kp_node_selector_requirement *match_expressions;
	size_t n_match_expressions;
	const struct kp_node_selector_requirement *match_fields;
	size_t n_match_fields;
};
#define KP_NODE_SELECTOR_INIT	KP_STRUCT_INIT(struct kp_node_selector)

/* A device of a ResourceSlice (resource.k8s.io/v1 Device, 1.37). */
struct kp_device {
	size_t struct_size;		/* KP_DEVICE_INIT */
	const char *name;	/* DNS label, unique in the pool */
	const struct kp_attribute *attributes;
	size_t n_attributes;
	const struct kp_capacity *capacities;
	size_t n_capacities;	/* attributes + capacities <= 32 */
	/* DRAPartitionableDevices: <= 2, one per counter set */
	const struct kp_counter_consumption *consumes_counters;
	size_t n_consumes_counters;
	/* Per-device node selection: exactly one of these three when the
	 * slice has per_device_node_selection, none otherwise. */
	const char *node_name;
	const struct kp_node_selector *node_selector;
	int all_nodes;
	const struct kp_taint *taints;	/* DRADeviceTaints, <= 16 */
	size_t n_taints;
	/* DRADeviceBindingConditions: */
	int binds_to_node;
	const char *const *binding_conditions;	/* <= 4 */
	size_t n_binding_conditions;
	const char *const *binding_failure_conditions;	/* <= 4 */
	size_t n_binding_failure_conditions;
	int allow_multiple_allocations;	/* DRAConsumableCapacity */
	/* DRANodeAllocatableResources, one per resource: */
	const struct kp_node_allocatable *node_allocatable;
	size_t n_node_allocatable;
};
#define KP_DEVICE_INIT		KP_STRUCT_INIT(struct kp_device)

/*
 * One ResourceSlice of a pool (ResourceSliceSpec less what the pool and
 * the controller fill in). A slice holds devices or shared counters,
 * never both (1.35). At most 128 devices, 64 when any device has taints,
 * consumes counters or has a list attribute.
 */
struct kp_slice {
	size_t struct_size;		/* KP_SLICE_INIT */
	const struct kp_device *devices;
	size_t n_devices;
	const struct kp_counter_set *shared_counters;	/* <= 8 */
	size_t n_shared_counters;
	int per_device_node_selection;	/* devices choose their nodes */
	/* DRAPartitionableDevicesType (1.37): the fully qualified name of
	 * a string attribute every partition device carries. */
	const char *partition_type_attribute;
	/* DRAOptionalNodeOperations (1.37): "NodePrepareResources",
	 * "NodeUnprepareResources" or "*" (Prepare only with Unprepare). */
	const char *const *skip_node_operations;
	size_t n_skip_node_operations;
};
#define KP_SLICE_INIT		KP_STRUCT_INIT(struct kp_slice)

/*
 * A pool. Node selection of its slices: node_selector, else all_nodes,
 * else this node (spec.nodeName), unless a slice selects per device.
 * The order of slices is the allocator's preference: each slice's name
 * starts with its index (resourceslice v0.36), and the scheduler tries
 * slices by name, first fit.
 *
 * split_slices (beyond upstream): take the devices and counter sets of
 * all slices, in order, as one flat list and cut it into slices of the
 * sizes the API server allows: counter sets in slices of their own (the
 * 1.35 rule), at most 8 per slice, then the devices, at most 128 per
 * slice and 64 in a slice where any device has taints, consumes counters
 * or has a list attribute. The slices must then agree on
 * per_device_node_selection, partition_type_attribute and
 * skip_node_operations, which every resulting slice carries. Validation
 * runs on the result: an error names the slice of the result
 * (pools[0].slices[3]...). A driver with a table of devices can then pass
 * it as one slice, whatever its size.
 */
struct kp_pool {
	size_t struct_size;		/* KP_POOL_INIT */
	const char *name;	/* '/'-separated DNS subdomains, <= 253 */
	int64_t generation;	/* >= 0; the controller bumps it */
	const struct kp_node_selector *node_selector;	/* NULL: none */
	const struct kp_slice *slices;
	size_t n_slices;
	int all_nodes;		/* Pool.AllNodes (1.36): every node */
	int split_slices;	/* 1: re-cut slices[] to the allowed sizes */
};
#define KP_POOL_INIT		KP_STRUCT_INIT(struct kp_pool)

struct kp_resources {
	size_t struct_size;		/* KP_RESOURCES_INIT */
	const struct kp_pool *pools;
	size_t n_pools;
};
#define KP_RESOURCES_INIT	KP_STRUCT_INIT(struct kp_resources)

/* ------------------------------------------------------------------------
 * The plugin
 */

/*
 * kp_start - validate the options, create the listening sockets, fork the
 * supervisor and its children, and return once the nodeserver and the
 * registrar (and the publisher, when configured) report READY.
 * opts: read and copied; may be freed afterwards. On failure its last error
 * names the option, the rule or the child's error. hooks: copied; the hook
 * functions and hooks->user must stay valid until kp_stop() returns.
 * On success *out owns the plugin; release it with kp_stop().
 * Refuses when the calling process has more than one thread (fork safety):
 * call it before starting threads. SIGCHLD of the supervisor is delivered
 * to the caller when it exits; kp_stop() reaps it.
 * A live socket of another process at a socket path (a stale instance, the
 * old one of a rolling update) is replaced with a warning; one a plugin of
 * this process still serves is refused (KP_EBUSY; kp_stop() it first).
 * Errors: KP_EINVAL (an option breaks a rule; NULL argument; missing
 * prepare/unprepare hook), KP_EBUSY (several threads; a socket path of a
 * plugin this process started and has not stopped), KP_EEXIST
 * (a non-socket file at a socket path), KP_ENAMETOOLONG, KP_EACCES,
 * KP_ECHILD (a child failed to start; the message is its error),
 * KP_ETIMEDOUT (no READY within 30 s), KP_ENOMEM, KP_EIO, KP_ESANDBOX
 * (kp_policy_main_confine(): the driver process's filter could not be
 * loaded; the plugin was stopped, *out stays NULL).
 * Mirrors kubeletplugin.Start, Kubernetes 1.32.
 */
KP_EXTERN int kp_start(struct kp_options *opts, const struct kp_hooks *hooks,
    struct kp_plugin **out);

/*
 * kp_stop - stop every process of the plugin, draining first (see
 * kp_shutdown_grace()): the registration socket file is removed, new DRA
 * calls get UNAVAILABLE, calls in flight get the grace budget to finish;
 * then the DRA socket file is removed, everything is reaped and the
 * plugin freed. Blocks until done (at most the grace budget plus about
 * 15 s: children that do not exit within 5 s of SIGTERM get SIGKILL).
 * Never deletes ResourceSlices. NULL is ignored. After it returns, plugin
 * is invalid. Also to be called after kp_plugin_wait() returned.
 * Errors: KP_EINVAL (invalid handle), KP_EIO (the supervisor did not exit
 * cleanly; everything is freed and reaped anyway).
 * Mirrors kubeletplugin.DRAPlugin.Stop, 1.32.
 */
KP_EXTERN int kp_stop(struct kp_plugin *plugin);

/*
 * kp_plugin_wait - wait until the plugin stops on its own, at most
 * timeout_ms milliseconds (-1: no limit). The plugin stops on its own
 * when it cannot stay reachable (a socket file it can neither keep nor
 * re-create, another live instance serving at its socket path), when its
 * supervisor is killed, or on SIGTERM to the supervisor. A driver should
 * then call kp_stop() and exit non-zero: it never stays up while kubelet
 * cannot reach it. The one-line reason (also written to the termination
 * message path) is copied into reason (size bytes, truncated; may be NULL)
 * and is the plugin's last error.
 * Returns KP_ETIMEDOUT while the plugin still runs; 0 once it stopped
 * cleanly (SIGTERM); KP_ECHILD once it stopped on a failure; KP_EINVAL
 * (invalid handle).
 * Beyond upstream.
 */
KP_EXTERN int kp_plugin_wait(struct kp_plugin *plugin, int timeout_ms,
    char *reason, size_t size);

/*
 * kp_plugin_last_error - message of the last failed call on the plugin;
 * owned by the plugin, valid until the next call on it. "" if none.
 */
KP_EXTERN const char *kp_plugin_last_error(const struct kp_plugin *plugin);

enum kp_registration_state {
	KP_REGISTRATION_NONE = 0,	/* kubelet has not reported yet */
	KP_REGISTRATION_REGISTERED = 1,
	KP_REGISTRATION_FAILED = 2	/* see the error text */
};

/*
 * kp_registration_status - the last NotifyRegistrationStatus kubelet sent.
 * state: out. err: out buffer for kubelet's error text (errsize bytes,
 * KP_ERROR_SIZE is enough for most; longer text is truncated), may be NULL.
 * Errors: KP_EINVAL, KP_EPIPE (supervisor gone), KP_ETIMEDOUT.
 * Mirrors kubeletplugin.DRAPlugin.RegistrationStatus, 1.32.
 */
KP_EXTERN int kp_registration_status(struct kp_plugin *plugin,
    enum kp_registration_state *state, char *err, size_t errsize);

/*
 * kp_set_get_info_error - from now on, kubelet's GetInfo calls on the
 * registration socket fail with status UNKNOWN and this message (copied);
 * NULL or "" makes them succeed again. A test knob, as upstream's: kubelet
 * then does not register the plugin (1.36+ retries with backoff; older
 * kubelets wait until the socket is re-created). Kept across registrar
 * restarts. Rule: at most 1024 bytes of UTF-8.
 * Errors: KP_EINVAL (invalid handle, the rule, or the registration service
 * is off), KP_EPIPE, KP_ETIMEDOUT.
 * Mirrors kubeletplugin.Helper.SetGetInfoError, 1.34.
 */
KP_EXTERN int kp_set_get_info_error(struct kp_plugin *plugin,
    const char *message);

/*
 * kp_set_notify_registration_status_error - as kp_set_get_info_error(),
 * for NotifyRegistrationStatus: kubelet's verdict is answered with status
 * UNKNOWN and this message and is not recorded (kp_registration_status()
 * keeps the previous one: a 1.36+ kubelet treats the failed call as a
 * failed registration and retries). Same rule and errors.
 * Mirrors kubeletplugin.Helper.SetNotifyRegistrationStatusError, 1.36.
 */
KP_EXTERN int kp_set_notify_registration_status_error(
    struct kp_plugin *plugin, const char *message);

/*
 * kp_publish_resources - publish the driver's devices as ResourceSlices.
 * Checks every struct_size (see "How this data grows" above) and validates
 * res synchronously against the API server's 1.38 rules and the 1.35
 * controller's pool rules (the message names the field path, e.g.
 * "pools[0].slices[1].devices[3].consumesCounters[0].counterSet: ..."),
 * deep-copies it and hands it to the publisher; returns without waiting
 * for the API server (see kp_publish_status()). A later call replaces the
 * earlier resources; pools that disappear get their slices deleted.
 * Pools the 1.38 controller rules leave out (kp_validate_qualified_names(),
 * kp_reconcile_pool_with_name()) are reported to the kp_error_callback()
 * function, once per call, and the others are published (returns 0).
 * May be called from the error function (also while kp_stop() runs:
 * KP_EPIPE at once then).
 * Asynchronous conditions reported in kp_publish_status().last_error
 * (beyond upstream, which logs): a field the served API version lacks
 * (the pool is not written), fields the server dropped because a feature
 * gate is off (named, as upstream's DroppedFieldsError; the stored slice
 * is then taken as the desired state and not rewritten).
 * Errors: KP_EINVAL (struct_size or validation), KP_ENOCLIENT (no
 * Kubernetes access configured), KP_ENONODE (no node name), KP_EPIPE,
 * KP_ENOMEM.
 * Mirrors kubeletplugin.DRAPlugin.PublishResources, 1.33 shape (pools),
 * with the resource.k8s.io/v1 fields of 1.37.
 */
KP_EXTERN int kp_publish_resources(struct kp_plugin *plugin,
    const struct kp_resources *res);

/* What the publisher reported last; see kp_publish_status(). */
struct kp_publish_status {
	int64_t		 last_sync;	/* Unix seconds of the last complete
					 * sync pass; 0: none yet */
	int		 pending_pools;	/* pools not yet in sync */
	uint64_t	 creates, updates, deletes;	/* API writes so far */
	int		 publisher_running;	/* 0: restarting or none */
	char		 last_error[KP_ERROR_SIZE];	/* the last API or
					 * connection error; "" once every
					 * pool is in sync again */
};

/*
 * kp_publish_status - how publishing goes (beyond upstream, which only
 * logs): the publisher's last sync time, the pools still pending and the
 * last API error. out: filled by the call.
 * Errors: KP_EINVAL, KP_ENOCLIENT (no Kubernetes access configured),
 * KP_EPIPE (supervisor gone), KP_ETIMEDOUT.
 */
KP_EXTERN int kp_publish_status(struct kp_plugin *plugin,
    struct kp_publish_status *out);

/* ------------------------------------------------------------------------
 * Sandbox. Every child process starts in a pid namespace of its own and
 * confines itself right before it serves (see docs/security.md), in this
 * order: filesystem (the registrar's and the observer's root is an empty
 * removed directory; the nodeserver and the publisher get a private mount
 * namespace with a fresh /proc, hiding the service-account token, the
 * directories of the credential files, kubelet's plugin directories and
 * the kp_sandbox_hide_path() paths; every child works in "/"),
 * PR_SET_NO_NEW_PRIVS, its own uid and gid (kp_sandbox_uid_base(),
 * kp_sandbox_user()) and capabilities (bounding set included), Landlock
 * (the nodeserver writes only its kp_sandbox_state_dir() directories and
 * reads only its read set), not dumpable, then a seccomp allowlist per
 * role. The supervisor, which forks them, keeps only the capabilities
 * that needs, sets NO_NEW_PRIVS and loads a filter of its own that every
 * child inherits. The driver's init hook runs before the nodeserver's
 * sandbox, under the supervisor's (struct kp_hooks); the prepare and unprepare
 * hooks run inside the nodeserver's sandbox, and the interceptors inside
 * the sandbox of the process serving the call (the nodeserver, or the
 * registrar, whose allowlist cannot be extended: a syscall outside it
 * there kills the registrar).
 */

enum kp_sandbox_mode {
	KP_SANDBOX_ENFORCE = 0,	/* a syscall outside the allowlist fails
				 * with EPERM in the nodeserver (the
				 * driver's hooks: logged once with the
				 * hook and syscall names, named in the
				 * claims' errors) and kills the registrar
				 * and the publisher (SIGSYS; logged with
				 * its name, the child restarts) */
	KP_SANDBOX_COMPLAIN = 1,	/* such syscalls are logged once each
					 * ("complain mode: nodeserver made a
					 * syscall outside its allowlist:
					 * <name>") and allowed */
	KP_SANDBOX_OFF = 2,	/* no seccomp filter (the other steps stay);
				 * for debugging, logged as an error */
	KP_SANDBOX_STRICT = 3	/* as ENFORCE, but a violation kills the
				 * nodeserver too (SIGSYS, restart): for
				 * drivers that prefer a crash to a hook
				 * that carries on after a denied call */
};

/* The sandboxed processes, for kp_sandbox_user(); the observer runs only
 * with kp_http_endpoint(). */
enum kp_process {
	KP_PROCESS_NODESERVER = 0,
	KP_PROCESS_REGISTRAR = 1,
	KP_PROCESS_PUBLISHER = 2,
	KP_PROCESS_OBSERVER = 3
};

/*
 * kp_sandbox_mode - what a syscall outside a process's allowlist does.
 * Default KP_SANDBOX_ENFORCE: in the nodeserver the call returns -1 with
 * errno EPERM to the hook (or to whatever thread made it), the syscall is
 * logged ("prepare hook: sandbox denied socket (EPERM); add it with
 * kp_sandbox_syscall() if the driver needs it") once, then at 10, 100,
 * ... denials, and "; sandbox denied <name>" is appended to the error of
 * every claim the hook failed in that call (and to the call's error when
 * the hook returned one; claims the hook prepared stay prepared). The
 * registrar and the publisher, which run only the library's code, are
 * killed and restarted in every mode but complain and off.
 * KP_SANDBOX_STRICT kills the nodeserver too (beyond upstream, as all
 * modes). Complain mode helps a driver author find the syscalls their
 * hooks need (then list them with kp_sandbox_syscall()); it needs Linux
 * 5.5 for its own log line, else only the kernel's audit log shows the
 * syscalls. Errors: KP_EINVAL (NULL handle, unknown mode).
 * Beyond upstream.
 */
KP_EXTERN int kp_sandbox_mode(struct kp_options *opts,
    enum kp_sandbox_mode mode);

/*
 * kp_sandbox_exec - how the nodeserver (the driver's hooks) and a
 * registrar with interceptors are started. on 1 (the default): by fork +
 * exec of the driver's own binary (/proc/self/exe) with the driver's
 * argv, so that each generation gets a fresh address space (a
 * crash-restart loop learns nothing of the monitor's layout or of an
 * earlier child's) and none of the driver process's heap after
 * kp_start(). The driver's main() then runs again in that process, and
 * its first kp_start() whose options pass becomes the role, without
 * returning: main() must reach kp_start() with the same options on every
 * run, single-threaded, doing nothing before it that must happen once per
 * node; a kp_start() whose options differ from the plugin's fails that
 * child's start with a message naming the option (docs/driver-guide.md,
 * "main() runs more than once"). Only a process's first plugin is
 * started so; a second kp_start() in one process (two plugins, or a
 * restart after kp_stop()) forks them. on 0: always fork them from the
 * monitor, for a main() that cannot run twice (weaker: every generation
 * shares the monitor's layout and the driver's memory as it was at
 * kp_start()). The publisher, the observer, the broker and a registrar
 * without interceptors run no driver code and are always exec'd.
 * Errors: KP_EINVAL (NULL handle, on not 0 or 1).
 * Beyond upstream (OpenSSH's re-exec of sshd-session).
 */
KP_EXTERN int kp_sandbox_exec(struct kp_options *opts, int on);

/*
 * kp_sandbox_capability - let the nodeserver (the driver's hooks) keep a
 * capability; the registrar and the publisher keep none. name: a libcap-ng
 * name with or without the "CAP_" prefix, any case ("CAP_SYS_ADMIN",
 * "sys_admin"), or its number ("21"); copied. May be called several times;
 * each call adds one. Default: none. A capability the process does not
 * hold at kp_start() is skipped with a warning in the log. The supervisor
 * keeps these in its permitted and bounding sets to pass them on; the
 * init hook has them effective too.
 * Errors: KP_EINVAL (NULL handle, unknown name; the message names it).
 * Beyond upstream.
 */
KP_EXTERN int kp_sandbox_capability(struct kp_options *opts,
    const char *name);

/*
 * kp_sandbox_syscall - add a syscall to the nodeserver's allowlist (the
 * driver's hooks need it). name: as libseccomp names it for this
 * architecture ("ioctl", "mount"); copied (resolved to a number now).
 * Listing a syscall that the allowlist restricts by argument (clone to
 * threads, kill and tgkill to the own process, ioctl, prctl, fcntl
 * without F_SETOWN and F_SETSIG) allows it with any argument. The name is
 * allowed in the supervisor's filter too, which the init hook runs under.
 * What only the driver process's own main() needs goes to
 * kp_policy_main_syscall() instead (the pod's profile only).
 * Each call adds one, at most 64.
 * Errors: KP_EINVAL (NULL handle; the name is unknown: the message names
 * it), KP_ENOMEM (more than 64). Beyond upstream.
 */
KP_EXTERN int kp_sandbox_syscall(struct kp_options *opts, const char *name);

/*
 * kp_sandbox_hide_path - hide a path from the nodeserver: an empty,
 * read-only tmpfs over a directory, /dev/null over a file, in the
 * nodeserver's private mount namespace. What the nodeserver may use
 * beneath a hidden directory stays visible there (bound back): its state
 * directories, its read paths, the DRA socket's directory and the default
 * read set. Hide directories, not files: a rename(2) onto a hidden
 * file's name (what a token refresher does) detaches the cover in every
 * mount namespace. The service-account token directory
 * (/var/run/secrets/kubernetes.io/serviceaccount) and each directory that
 * holds the kubeconfig or a file it names are always hidden (see
 * kp_kube_client_kubeconfig()). Needs CAP_SYS_ADMIN at kp_start() (else a
 * warning, and the paths stay readable); a path that does not exist then
 * is skipped.
 * path: absolute, at most 255 bytes; copied. Each call adds one, at most
 * 16. Errors: KP_EINVAL (NULL handle, relative path),
 * KP_ENAMETOOLONG, KP_ENOMEM (more than 16). Beyond upstream.
 */
KP_EXTERN int kp_sandbox_hide_path(struct kp_options *opts,
    const char *path);

/*
 * kp_sandbox_user - the uid and gid process proc runs as, overriding the
 * default of kp_sandbox_uid_base(); supplementary groups are emptied.
 * The nodeserver keeps its kp_sandbox_capability() set across the change.
 * Changing ids needs CAP_SETUID and CAP_SETGID at kp_start() (else
 * kp_start() fails with KP_ECHILD naming the process). No check that two
 * processes get different ids: the caller chose them. Last call per
 * process wins. Errors: KP_EINVAL (NULL handle, unknown proc, uid or gid
 * (uid_t)-1). Beyond upstream.
 */
KP_EXTERN int kp_sandbox_user(struct kp_options *opts, enum kp_process proc,
    uid_t uid, gid_t gid);

/* ------------------------------------------------------------------------
 * The nodeserver's files (docs/security.md, "The nodeserver's
 * filesystem"). Where the kernel has Landlock, the driver's prepare and
 * unprepare hooks may write only beneath the state directories and read
 * only beneath a default set (/sys, /dev, /proc, time zones, libraries)
 * and the read paths; this holds for a nodeserver running as uid 0 too.
 * CDI spec files, which live in a directory every driver of the node
 * shares, are written by the supervisor on the hooks' request
 * (kp_cdi_spec_write()).
 */

/*
 * kp_sandbox_state_dir - a directory the driver's hooks own: checkpoints,
 * journals, anything they create, write, rename and remove. At kp_start()
 * the supervisor creates it when missing (mode 0700; its parent must
 * exist), refuses a symlink, a non-directory, or one owned by another uid
 * than root or the nodeserver's, and chowns it to the nodeserver's uid and
 * gid; Landlock then allows writes beneath it and nowhere else.
 * path: absolute, no "." or ".." component, no trailing '/', not "/", at
 * most 255 bytes; copied. Each call adds one, at most 4; a repeated path
 * is ignored. It must not contain, or lie beneath, the CDI directory, and
 * must not contain the plugin or registrar socket or the kubeconfig
 * (checked by kp_start(), KP_EINVAL). kp_start() fails with KP_EIO or
 * KP_EACCES, naming the directory, when it cannot be prepared. Default:
 * none (the hooks can write no file). Errors: KP_EINVAL (NULL handle, a rule broken: the message
 * names it), KP_ENAMETOOLONG, KP_ENOMEM (more than 4). Beyond upstream.
 */
KP_EXTERN int kp_sandbox_state_dir(struct kp_options *opts,
    const char *path);

/*
 * kp_sandbox_read_path - let the driver's hooks read (and list, and
 * execute) files beneath path, in addition to the default set. A path
 * that does not exist when the nodeserver starts is skipped. path: the
 * rules of kp_sandbox_state_dir(); copied. Each call adds one, at most 16.
 * Errors: KP_EINVAL, KP_ENAMETOOLONG, KP_ENOMEM (more than 16). Beyond
 * upstream.
 */
KP_EXTERN int kp_sandbox_read_path(struct kp_options *opts,
    const char *path);

/*
 * kp_cdi_directory - the CDI spec directory kp_cdi_spec_write() writes
 * to. Default "/var/run/cdi" (upstream's DefaultCDIDir). The supervisor
 * opens it once at kp_start(), creating it (mode 0755; its parent must
 * exist) when missing; when that fails for the default, CDI requests fail
 * with the reason, for a directory set here kp_start() fails (KP_EIO, the
 * message names the directory).
 * path: the rules of kp_sandbox_state_dir(); copied; last call wins.
 * Errors: KP_EINVAL (NULL handle, a rule broken), KP_ENAMETOOLONG.
 * Mirrors upstream's CDIDirectory option.
 */
KP_EXTERN int kp_cdi_directory(struct kp_options *opts, const char *path);

/*
 * kp_cdi_spec_write - write a CDI spec file into the CDI directory, from
 * a hook. The nodeserver may not write that directory itself (it is
 * shared by every driver of the node): the supervisor does, atomically
 * (a temporary dot-file, fsync, rename, fsync of the directory), owned by
 * root, mode 0644. An existing file of that name is replaced.
 * name: "<driver name>_" then 1 to 200 letters, digits, '.', '_' or '-'
 * starting with a letter or digit, then ".json", at most 243 bytes in
 * all (so a driver can only name its own files; container runtimes do
 * not read subdirectories). data, len: the content, at most 256 KiB of
 * valid UTF-8, a CDI spec in JSON that the supervisor parses and checks
 * before writing it, since the runtime applies it as root on the host:
 * only the fields of CDI 0.3.0 to 0.8.0, cdiVersion one of those, kind
 * exactly "<driver name>/<class>", at least one device, and in each
 * containerEdits only env, device nodes beneath a kp_cdi_allow_device_
 * prefix() (type, major and minor left to the runtime), bind mounts of
 * host paths beneath a kp_cdi_allow_mount_prefix(), and hooks whose path
 * is a kp_cdi_allow_hook(); additionalGids, intelRdt and netDevices are
 * refused. Both borrowed for the call. err, errsize: where the reason
 * goes on failure (may be NULL, 0), naming the JSON path and the rule,
 * e.g. "devices[0].containerEdits.mounts[0].hostPath \"/\": not beneath a
 * declared mount prefix (kp_cdi_allow_mount_prefix)".
 * Callable from the init, prepare and unprepare hooks and from threads
 * they start, concurrently (requests go one at a time); blocks until the
 * supervisor answered (at most 10 s). Writes and removals are paced (50
 * a second, bursts of 100): one over that waits for its turn in the
 * supervisor, up to 8 s; a spec identical to the file already there is
 * not written again and does not count. A driver's specs are bounded: at
 * most 1024 files and 16 MiB in all under its prefix (counted at
 * kp_start(), a replaced file counts once). With kp_device_metadata() on,
 * the device metadata files and the directories made for them count in
 * the same quota (a directory as 4096 bytes), and the limit is 4096
 * files and directories.
 * Errors: KP_EINVAL (a rule broken; NULL name or data), KP_ENOTSUP
 * (called outside the nodeserver), KP_EBUSY (waited 8 s for the pace;
 * retry),
 * KP_ENOSPC (the quota; remove specs first), KP_EIO (the supervisor's
 * write failed; the message says why), KP_EPIPE (supervisor gone),
 * KP_ETIMEDOUT. Beyond upstream.
 */
KP_EXTERN int kp_cdi_spec_write(const char *name, const void *data,
    size_t len, char *err, size_t errsize);

/*
 * kp_cdi_spec_remove - remove a CDI spec file written by
 * kp_cdi_spec_write(); a file that does not exist is not an error. name:
 * the rule of kp_cdi_spec_write(). Same context, errors and limits.
 * Beyond upstream.
 */
KP_EXTERN int kp_cdi_spec_remove(const char *name, char *err,
    size_t errsize);

/*
 * kp_cdi_spec_list - call fn once for each CDI spec file of this driver
 * in the CDI directory (names following the rule of kp_cdi_spec_write(),
 * in no particular order), for reconciliation after a restart. name is
 * valid during the call only; fn returning non-zero stops the walk (and
 * kp_cdi_spec_list returns 0). At most 1024 names. Answered from the
 * nodeserver's copy of the list when the supervisor watches the directory
 * (inotify: a change made a moment before may not be in it yet), else
 * asked of the supervisor. Same context and errors as
 * kp_cdi_spec_write(). Beyond upstream.
 */
KP_EXTERN int kp_cdi_spec_list(int (*fn)(void *user, const char *name),
    void *user, char *err, size_t errsize);

/*
 * What the driver's CDI specs may ask of the container runtime. The
 * runtime (containerd, CRI-O) applies a spec as root on the host: a
 * device node or a mount gives the container a host file, a hook runs a
 * host program as root. The nodeserver runs the driver's hooks and may
 * be compromised, so the supervisor writes only specs within what the
 * driver declared here, before kp_start(), in its own trusted process.
 * Default: none of the three (specs may set env only). Beyond upstream.
 */

/*
 * kp_cdi_allow_device - let CDI specs add the device nodes whose path
 * (and hostPath, when set) is pattern: one node ("/dev/loop-control") or
 * a shell pattern in the last component ("/dev/loop[0-9]*",
 * "/dev/dri/renderD*", "/dev/vfio/[0-9]*"; fnmatch(3) with FNM_PATHNAME
 * and FNM_PERIOD: '*', '?' and "[...]" match no '/' and no leading '.').
 * The directory part is written out: absolute, no wildcard, no empty,
 * "." or ".." component; no '\' anywhere; brackets closed. Copied. Each
 * call adds one rule, shared with kp_cdi_allow_device_number(): at most
 * 32 in all; a repeated one is ignored.
 *
 * A spec's node passes when each of its names matches a rule (this one,
 * a kp_cdi_allow_device_number() one, or beneath a
 * kp_cdi_allow_device_prefix()) and, where the supervisor finds a node at
 * it (lstat(2) of path and of hostPath), that node is a character or
 * block device (not a symbolic link, a regular file, a directory...)
 * whose type and number a rule matching the name takes (this one takes
 * any) and the spec's own type, major and minor, where set, agree with.
 * A name with no node (ENOENT: a module not loaded yet) passes by name;
 * the spec may then set type and numbers only within a
 * kp_cdi_allow_device_number() rule's range. The runtime looks again
 * when it creates the container: a node replaced after the check is not
 * seen (only numbers set in the spec, within a number rule, pin the
 * device). The supervisor looks in the plugin's own mount namespace: in
 * a pod, mount the host's nodes at the same paths, else they look
 * absent. docs/security.md, "The CDI spec broker".
 * Errors: KP_EINVAL (NULL handle, a rule broken: the message names it;
 * an exact path that is a directory), KP_ENAMETOOLONG (255 bytes),
 * KP_ENOMEM (more than 32 rules). Beyond upstream.
 */
KP_EXTERN int kp_cdi_allow_device(struct kp_options *opts,
    const char *pattern);

/* The highest minor number (20 bits, as Linux's MINORBITS). */
#define KP_CDI_MINOR_MAX	1048575u

/*
 * kp_cdi_allow_device_number - as kp_cdi_allow_device(), but a node
 * found at a matching name must also be of type ('c' a character device,
 * 'b' a block device) with that major (0 to 4095) and a minor from
 * minor_first to minor_last (at most KP_CDI_MINOR_MAX), e.g.
 * ("/dev/loop[0-9]*", 'b', 7, 0, KP_CDI_MINOR_MAX): a node at /dev/loop9
 * with sda's 8:0 is refused. For drivers whose nodes could be made by
 * others, and for specs that set type and numbers themselves. The same
 * pattern may be given several ranges (one call each); a name-only rule
 * for the same name takes any number. Errors: as kp_cdi_allow_device(),
 * and KP_EINVAL for a type other than 'c' or 'b', a major above 4095 or
 * minors that are not a range. Beyond upstream.
 */
KP_EXTERN int kp_cdi_allow_device_number(struct kp_options *opts,
    const char *pattern, int type, unsigned int major,
    unsigned int minor_first, unsigned int minor_last);

/*
 * kp_cdi_allow_device_prefix - let CDI specs add device nodes whose path
 * (and hostPath, when set) lies beneath prefix, e.g. "/dev/vfio/": every
 * node of a directory; prefer kp_cdi_allow_device() to name the nodes.
 * prefix: a directory, the rules of kp_sandbox_state_dir() but one
 * trailing '/' allowed; copied. A path that exists and is not a directory
 * is refused ("/dev/loop" would match no /dev/loopN: the message points
 * at kp_cdi_allow_device("/dev/loop[0-9]*")); one that does not exist is
 * taken (/dev/vfio appears when vfio is loaded). Each call adds one, at
 * most 16; a repeated one is ignored. A node's path must name a file
 * beneath it, not the directory itself, and hold no "." or ".."
 * component; a node found there is checked as kp_cdi_allow_device()
 * says (a character or block device, agreeing with the spec's numbers).
 * Errors: KP_EINVAL (NULL handle, a rule broken: the message names it),
 * KP_ENAMETOOLONG, KP_ENOMEM (more than 16). Beyond upstream.
 */
KP_EXTERN int kp_cdi_allow_device_prefix(struct kp_options *opts,
    const char *prefix);

/*
 * kp_cdi_allow_mount_prefix - let CDI specs bind-mount host paths that
 * are prefix or lie beneath it into containers (read-write unless the
 * spec's options say "ro": choose the directory with that in mind). A
 * mount's options may only be bind, rbind, ro, rw, nosuid, nodev,
 * noexec, private, rprivate, slave, rslave. A device or mount prefix may
 * not contain or lie beneath a kp_sandbox_state_dir(), nor may the
 * directory of a kp_cdi_allow_device() rule lie in one (kp_start() fails
 * with KP_EINVAL): the nodeserver could plant links or nodes there, and
 * the runtime follows links on the host.
 * prefix: the rules of kp_cdi_allow_device_prefix(); copied; at most 16.
 * Errors: as kp_cdi_allow_device_prefix(). Beyond upstream.
 */
KP_EXTERN int kp_cdi_allow_mount_prefix(struct kp_options *opts,
    const char *prefix);

/*
 * kp_cdi_allow_hook - let CDI specs declare OCI hooks (createRuntime,
 * ...) that run exactly the program at path, which the runtime executes
 * as root on the host with arguments the spec chooses: the program must
 * treat them as untrusted. A hook may not have an environment of its own
 * in a spec (LD_PRELOAD, BASH_ENV and the like act before the program's
 * first line). path: the rules of
 * kp_sandbox_state_dir(); copied; at most 16; a repeated one is ignored.
 * Errors: as kp_cdi_allow_device_prefix(). Beyond upstream.
 */
KP_EXTERN int kp_cdi_allow_hook(struct kp_options *opts, const char *path);

/* ------------------------------------------------------------------------
 * Device metadata (KEP-5304; Go helper v0.36). With it on, for every
 * request of a prepared claim that has devices (a device counts for each
 * of its request_names; one without is in no request), the library
 * writes the metadata file
 *   <plugin data directory>/dra-device-metadata/<namespace>_<claim>/
 *   <request>/metadata.json
 * (a JSON stream: the same DeviceMetadata object once per chosen version,
 * in the order given, each pretty-printed and ended by a newline; devices
 * with driver, pool, name and the attributes and network data
 * kp_prepare_device_metadata() and kp_prepare_device_network_data() gave),
 * and
 * the CDI spec <CDI directory>/<driver>_metadata_<claim UID>_<request>.json
 * (cdiVersion 0.5.0, kind "<driver>/metadata", device
 * "<claim UID>_<request>") that bind-mounts the file read-only at
 *   /var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claim>/
 *   <request>/<driver>-metadata.json
 * (resourceclaimtemplates/<pod claim name>/... for a claim made from a
 * template, whose annotation resource.kubernetes.io/pod-claim-name the
 * claim look-up returns: with Kubernetes access only; the file then holds
 * podClaimName too) and appends the CDI ID
 * "<driver>/metadata=<claim UID>_<request>" to the first device of the
 * request in the response, after the prepare hook ran. Both files are written atomically (temporary file, fsync, rename,
 * fsync of the directory) by the supervisor, in a directory the
 * nodeserver cannot write, so hooks cannot redirect the mount. Unprepare
 * removes both for each claim after the unprepare hook; a removal failure
 * is that claim's error ("clean up device metadata: ..."). A write
 * failure in prepare is that claim's error too ("write device metadata
 * for request ...": upstream only logs it, and the container would start
 * without its file); so is a request name that is not a DNS label.
 * The plugin data directory is kp_plugin_data_directory_path(), else the
 * directory of kp_plugin_socket_path(), else the default; kp_start()
 * creates dra-device-metadata there (root's, mode 0755; its parents must
 * be root's and not writable by others) and fails naming the directory
 * when it cannot. A driver that learns a request's metadata only after
 * prepare (an interface's address after CNI) leaves it out there and
 * calls kp_update_request_metadata() later.
 * kp_cdi_spec_list() lists the metadata specs too (names
 * <driver>_metadata_<claim UID>_<request>.json): a driver that
 * reconciles its specs after a restart must leave those to the library.
 * Bounds: the metadata files, their directories and specs count in
 * kp_cdi_spec_write()'s quota (4096 files and directories, 16 MiB, a
 * directory as 4096 bytes, what is on disk counted at kp_start()); a
 * request is checked for all it would add before anything is written
 * (KP_ENOSPC, "remove some first"), and a file whose spec cannot be
 * written is removed again, with the directories made for it. With
 * Kubernetes access the supervisor writes metadata only for a claim
 * the publisher looked up for the nodeserver in the last 60 s (a claim
 * of a prepare call in progress; kubelet's deadline for a call is 45 s),
 * with the pod claim name the API server gave; any other is refused
 * with KP_EACCES, "not a claim of a prepare call in progress". Without
 * Kubernetes access only the quota and the pace bound it.
 */

/* The metadata versions (the GroupVersion strings upstream writes). */
#define KP_METADATA_V1ALPHA1	"metadata.resource.k8s.io/v1alpha1"
#define KP_METADATA_V1BETA1	"metadata.resource.k8s.io/v1beta1"

/*
 * kp_device_metadata - turn device metadata on (enable 1) with the
 * versions to write, in that order (newest first is upstream's habit), or
 * off (enable 0; versions and n ignored). Default off.
 * versions: n strings, each KP_METADATA_V1ALPHA1 or KP_METADATA_V1BETA1,
 * no repeats, 1 <= n <= 2; copied. The metadata directory must not lie
 * within, or contain, a kp_sandbox_state_dir() (kp_start() fails with
 * KP_EINVAL).
 * Errors: KP_EINVAL (NULL handle, enable not 0 or 1, no version chosen:
 * "metadata versions must be explicitly selected", an unknown version:
 * "metadata version ... is not supported", a repeated one).
 * Mirrors kubeletplugin.EnableDeviceMetadata and MetadataVersions, 1.36
 * (as one call, like upstream's later EnableDeviceMetadata(enabled,
 * versions)).
 */
KP_EXTERN int kp_device_metadata(struct kp_options *opts, int enable,
    const char *const *versions, size_t n);

/*
 * kp_prepare_device_metadata - the attributes of device pool/device of
 * claim number claim for its device metadata file (with
 * kp_device_metadata() on; ignored otherwise), after
 * kp_prepare_add_device() added that device; a later call for the same
 * device replaces them. attrs: n (1 to 32) attributes built with
 * KP_ATTR_* / KP_ATTRIBUTE_INIT, names unique, qualified names as in
 * ResourceSlices ("model", "resource.kubernetes.io/pciBusID"); values as
 * for kp_publish_resources() (strings at most 64 bytes of UTF-8, at most
 * 48 list values in all; versions are not checked for semver here).
 * Everything is copied. They appear in the file as upstream's
 * Device.Metadata.Attributes, keys sorted.
 * Errors: KP_EINVAL (bad index; NULL pool or device, no such device in
 * the claim, a bad attribute: the claim fails with a message naming the
 * rule), KP_ENOMEM (the claim fails). Mirrors
 * kubeletplugin.Device.Metadata.Attributes (DeviceMetadata), 1.36.
 */
KP_EXTERN int kp_prepare_device_metadata(struct kp_prepare_results *res,
    size_t claim, const char *pool, const char *device,
    const struct kp_attribute *attrs, size_t n);

/*
 * kp_prepare_device_network_data - the network data of device pool/device
 * of claim number claim for its device metadata file (upstream
 * Device.Metadata.NetworkData, resource.k8s.io NetworkDeviceData), with
 * the rules of kp_prepare_device_metadata() (after kp_prepare_add_device;
 * a later call replaces it; ignored with metadata off). interface_name
 * (at most 256 bytes), ips (n_ips, at most 16, each at most 64 bytes,
 * e.g. "10.0.0.2/24"; not checked as CIDR here) and hardware_address (at
 * most 128 bytes): UTF-8 without control characters; NULL or empty ones
 * and n_ips 0 are left out, as Go's omitempty does. Copied.
 * Errors: KP_EINVAL (bad index; a rule broken: the claim fails naming
 * it), KP_ENOMEM (the claim fails). Mirrors
 * kubeletplugin.Device.Metadata.NetworkData, 1.36.
 */
KP_EXTERN int kp_prepare_device_network_data(struct kp_prepare_results *res,
    size_t claim, const char *pool, const char *device,
    const char *interface_name, const char *const *ips, size_t n_ips,
    const char *hardware_address);

/*
 * struct kp_metadata_device - one device of kp_update_request_metadata()
 * (upstream kubeletplugin.Device with its Metadata): start from
 * KP_METADATA_DEVICE_INIT. All pointers borrowed for the call.
 *   pool, device: as the request's prepared device (required; device a
 *     DNS label, pool 1 to 253 bytes).
 *   attributes, n_attributes: Metadata.Attributes, as
 *     kp_prepare_device_metadata() takes them (n_attributes 0: none).
 *   interface_name, ips, n_ips, hardware_address: Metadata.NetworkData,
 *     as kp_prepare_device_network_data() takes them; left out when all
 *     are NULL / 0 (Go's nil NetworkData), written as {} when only empty
 *     strings are given.
 */
struct kp_metadata_device {
	size_t				 struct_size;
	const char			*pool;
	const char			*device;
	const struct kp_attribute	*attributes;
	size_t				 n_attributes;
	const char			*interface_name;
	const char *const		*ips;
	size_t				 n_ips;
	const char			*hardware_address;
};

/* Designated, as every _INIT: struct kp_metadata_device d =
 * { KP_METADATA_DEVICE_INIT, .pool = "p", .device = "d" }; */
#define KP_METADATA_DEVICE_INIT	KP_STRUCT_INIT(struct kp_metadata_device)

/*
 * kp_update_request_metadata - rewrite the device metadata file of
 * request request of the prepared claim claim_namespace/claim_name (UID
 * claim_uid) with devices[0 .. n-1], from the driver process (any thread;
 * a synchronous request to the supervisor, which writes the file
 * atomically). For a driver whose prepare hook left a device's metadata
 * out because it is known only later (an NRI hook after CNI). As
 * upstream: the file must be there (the claim was prepared with device
 * metadata on and not unprepared since), its generation goes up by one,
 * its pod claim name is kept, the request may name a subrequest
 * ("req/sub": the file is req's, the name recorded as given), devices
 * should be the request's prepared devices (not checked), and the CDI
 * spec is not touched. Beyond upstream: claim_uid must be the one the
 * file was prepared with. Strings and devices borrowed for the call.
 * n: 0 to 128; devices may be NULL when n is 0.
 * Errors: KP_EINVAL (plugin NULL or not started; a rule broken: the last
 * error names the field and the rule, e.g. "devices[1].attributes:
 * name: repeated"), KP_ENOTSUP (device metadata off: "device metadata is
 * not enabled"), KP_ENOENT ("request \"r\" not found in prepared claim
 * ns/name", also for another UID), KP_EIO (reading the old file or
 * writing the new one), KP_ENOMEM, KP_EPIPE / KP_ETIMEDOUT (the
 * supervisor). Mirrors kubeletplugin.Helper.UpdateRequestMetadata (and
 * metadataWriter.updateRequestMetadata, metadata.go), 1.36.
 */
KP_EXTERN int kp_update_request_metadata(struct kp_plugin *plugin,
    const char *claim_namespace, const char *claim_name,
    const char *claim_uid, const char *request,
    const struct kp_metadata_device *devices, size_t n);

/* ------------------------------------------------------------------------
 * CDI spec builder: valid CDI JSON for kp_cdi_spec_write(), with the
 * lowest cdiVersion the fields used require, so drivers do not write
 * JSON by hand. Mirrors the Go types of
 * github.com/cncf-tags/container-device-interface specs-go (Spec,
 * Device, ContainerEdits, DeviceNode, Mount, Hook) and its version rules
 * (specs-go/version.go MinimumRequiredVersion): 0.3.0, 0.4.0 with a
 * mount's type, 0.5.0 with a device node's host_path or a device name
 * starting with a digit, 0.6.0 with annotations or a '.' in the class.
 * A builder is one thread's: calls on one builder must not overlap.
 * Beyond upstream (Go drivers use the CDI module's types).
 */
struct kp_cdi_builder;

/*
 * A device node (DeviceNode). path: in the container, absolute,
 * required; host_path: on the host, NULL: path (0.5.0); permissions:
 * NULL or 1 to 3 of "rwm"; file_mode: 0 unset, else 1..0777. Start from
 * KP_CDI_DEVICE_NODE_INIT.
 *   type, major, minor (added after the first release; a caller whose
 *     struct_size ends before them leaves them unset): the node's
 *     "type", "major" and "minor" (DeviceNode.Type, Major, Minor;
 *     cdiVersion 0.3.0). type: 0 unset, 'c' (character) or 'b' (block).
 *     major: 0 unset (as CDI's omitempty: the runtime then takes type,
 *     major and minor from lstat of host_path), else 1 to 4095, and
 *     then type is required; minor: 0 to KP_CDI_MINOR_MAX, only with a
 *     major (a minor alone: refused; a major without one writes minor
 *     0, the number the runtime would use). Numbers set here are what
 *     the runtime creates in the container without looking at the host,
 *     so they pin the device against a node swapped after the
 *     supervisor's check; the check wants them to agree with the host's
 *     node, or, where there is none, to lie within a
 *     kp_cdi_allow_device_number() rule. type alone makes the runtime
 *     refuse a host node of the other type.
 */
struct kp_cdi_device_node {
	size_t		 struct_size;
	const char	*path;
	const char	*host_path;
	const char	*permissions;
	unsigned int	 file_mode;
	int		 type;
	unsigned int	 major;
	unsigned int	 minor;
};
#define KP_CDI_DEVICE_NODE_INIT \
	.struct_size = sizeof(struct kp_cdi_device_node)

/*
 * A bind mount (Mount): host_path and container_path absolute,
 * required; type NULL or "bind" (0.4.0); options: n_options strings
 * such as "ro", "nosuid" (what the broker allows: kp_cdi_allow_mount_
 * prefix()). Start from KP_CDI_MOUNT_INIT.
 */
struct kp_cdi_mount {
	size_t			 struct_size;
	const char		*host_path;
	const char		*container_path;
	const char		*type;
	const char *const	*options;
	size_t			 n_options;
};
#define KP_CDI_MOUNT_INIT	.struct_size = sizeof(struct kp_cdi_mount)

/*
 * An OCI hook (Hook): hook_name one of prestart, createRuntime,
 * createContainer, startContainer, poststart, poststop; path absolute,
 * required (a kp_cdi_allow_hook() program); args: n_args strings (args[0]
 * is the program's name, as OCI); timeout_s: 0 unset, else seconds.
 * Start from KP_CDI_HOOK_INIT.
 */
struct kp_cdi_hook {
	size_t			 struct_size;
	const char		*hook_name;
	const char		*path;
	const char *const	*args;
	size_t			 n_args;
	int			 timeout_s;
};
#define KP_CDI_HOOK_INIT	.struct_size = sizeof(struct kp_cdi_hook)

/*
 * kp_cdi_builder_new - start a spec of kind "<vendor>/<class>" (a
 * driver's specs use its driver name as vendor: the broker refuses other
 * kinds). Vendor and class: a letter, then letters, digits, '_', '-' or
 * '.', ending with a letter or digit. kind: copied. On success *out owns
 * the builder; free it with kp_cdi_builder_free(). Usable in any process
 * (only kp_cdi_builder_write() needs the nodeserver).
 * Errors: KP_EINVAL (NULL out, kind breaks the rule), KP_ENOMEM.
 */
KP_EXTERN int kp_cdi_builder_new(const char *kind,
    struct kp_cdi_builder **out);

/* kp_cdi_builder_free - free a builder; NULL is ignored. */
KP_EXTERN void kp_cdi_builder_free(struct kp_cdi_builder *b);

/*
 * kp_cdi_builder_last_error - the message of the last failed call on b,
 * naming the field and the rule; "" if none. Owned by b, valid until
 * the next call on it. "" for NULL.
 */
KP_EXTERN const char *kp_cdi_builder_last_error(
    const struct kp_cdi_builder *b);

/*
 * kp_cdi_add_device - add a device named name (copied): a letter or
 * digit, then letters, digits, '_', '-', '.' or ':', ending with a
 * letter or digit, at most 128 bytes, unique in the spec. Its CDI device
 * ID is "<kind>=<name>" (kp_cdi_device_id()).
 * Errors: KP_EINVAL (the rule, a repeated name, NULL), KP_ENOMEM.
 */
KP_EXTERN int kp_cdi_add_device(struct kp_cdi_builder *b, const char *name);

/*
 * Container edits. device: the name of a device added before, or NULL
 * for the spec's own containerEdits (applied with any of its devices).
 * Everything is copied. Errors of each: KP_EINVAL (NULL b, unknown
 * device, a field breaking its rule: the message names it; a
 * struct_size 0, too small or with fields this library does not know
 * set), KP_ENOMEM.
 */

/* kp_cdi_add_env - "NAME=value", NAME a letter or '_' then letters,
 * digits or '_'; valid UTF-8. */
KP_EXTERN int kp_cdi_add_env(struct kp_cdi_builder *b, const char *device,
    const char *env);
KP_EXTERN int kp_cdi_add_device_node(struct kp_cdi_builder *b,
    const char *device, const struct kp_cdi_device_node *node);
KP_EXTERN int kp_cdi_add_mount(struct kp_cdi_builder *b, const char *device,
    const struct kp_cdi_mount *mount);
KP_EXTERN int kp_cdi_add_hook(struct kp_cdi_builder *b, const char *device,
    const struct kp_cdi_hook *hook);
/* kp_cdi_add_annotation - key: [DNS subdomain/]name of 1 to 63
 * letters, digits, '-', '_' or '.'; value: UTF-8 (0.6.0). */
KP_EXTERN int kp_cdi_add_annotation(struct kp_cdi_builder *b,
    const char *device, const char *key, const char *value);

/*
 * kp_cdi_builder_version - the cdiVersion the spec needs as built so
 * far, e.g. "0.3.0". Static string; "" for NULL.
 */
KP_EXTERN const char *kp_cdi_builder_version(const struct kp_cdi_builder *b);

/*
 * kp_cdi_builder_json - the spec as JSON text (cdiVersion, kind,
 * devices, containerEdits when the spec has its own). On success *out
 * is a NUL-terminated string the caller frees with free().
 * Errors: KP_EINVAL (NULL argument; no device yet: a spec defines at
 * least one), KP_ENOMEM.
 */
KP_EXTERN int kp_cdi_builder_json(const struct kp_cdi_builder *b,
    char **out);

/*
 * kp_cdi_builder_write - kp_cdi_builder_json(), then kp_cdi_spec_write()
 * of it as file name (the rule there). Same context, errors and limits
 * as kp_cdi_spec_write(); err, errsize as there.
 */
KP_EXTERN int kp_cdi_builder_write(const struct kp_cdi_builder *b,
    const char *name, char *err, size_t errsize);

/*
 * kp_cdi_device_id - write the CDI device ID "<kind>=<name>" into out
 * (size bytes, NUL included), checking both rules above; what
 * kp_prepared_device.cdi_device_ids takes.
 * Errors: KP_EINVAL (NULL, a rule broken), KP_ENAMETOOLONG (does not fit
 * in size, or more than 512 bytes). Mirrors parser.QualifiedName of the
 * CDI module.
 */
KP_EXTERN int kp_cdi_device_id(const char *kind, const char *name, char *out,
    size_t size);

/*
 * kp_cdi_claim_spec_name - the file name of the CDI spec the library
 * writes for one claim (kp_prepare_cdi_spec()):
 * "<driver>_claim-<claim uid>.json". The "claim-" names of a driver are
 * the journal's: at start, one whose claim is not in the journal is
 * removed (kp_journal_dir()); other names are left alone.
 * Errors: KP_EINVAL (NULL, a claim UID not following the claim UID
 * rule), KP_ENAMETOOLONG (size too small, or the name breaks the 243
 * byte limit of kp_cdi_spec_write()).
 */
KP_EXTERN int kp_cdi_claim_spec_name(const char *driver, const char *uid,
    char *out, size_t size);

/* ------------------------------------------------------------------------
 * Prepared-claim journal (beyond upstream: Go drivers each write their
 * own checkpoint). With kp_journal_dir() set, the library keeps the
 * claims this driver prepared in <dir>/kubeletplugin-journal.json, in
 * the nodeserver, and does around the driver's hooks what every driver
 * otherwise writes by hand:
 *  - prepare: a claim already in the journal gets its recorded devices
 *    again without the prepare hook (kubelet retries, and calls prepare
 *    again after a reboot or its own restart), its CDI spec rewritten
 *    through write_spec first when the file is gone (a reboot empties
 *    /var/run/cdi; a removal while the plugin runs counts once the
 *    supervisor's inotify watch of the directory reported it, normally
 *    within a millisecond, and at once where inotify is unavailable). A claim the hook prepared (no error, the call did
 *    not fail) is recorded: its devices, the CDI spec written with
 *    kp_prepare_cdi_spec() and the data of kp_prepare_journal_data().
 *    The claim succeeds only once the journal is on disk; a failed
 *    write fails it (kubelet retries).
 *  - unprepare: a claim the journal does not know succeeds without the
 *    hook; for a known one the hook sees its entry
 *    (kp_unprepare_journal_entry()), and when the hook did not fail it,
 *    the library removes its CDI spec and its entry.
 *  - at the nodeserver's start (after the init hook, in the sandbox,
 *    before serving; also after a restart of the nodeserver): entries
 *    recorded in an earlier boot of the node (boot ID
 *    /proc/sys/kernel/random/boot_id) go to previous_boot, then every
 *    entry whose CDI spec is missing goes to write_spec, and this
 *    driver's claim specs (kp_cdi_claim_spec_name()) without an entry
 *    are removed. Other drivers' files are never listed or touched.
 * The files: the snapshot kubeletplugin-journal.json (schema 1: written
 * atomically, temporary file, fsync, rename, fsync of the directory; a
 * schema version, the driver name, the boot ID and a CRC-32 of the
 * content) and beside it the change log kubeletplugin-journal.log
 * (schema 2: a header naming the snapshot's checksum and a generation,
 * then one line a change, each with its CRC-32). A change is one append
 * and one fdatasync, whatever the number of claims; the log is compacted
 * into the snapshot when it passes twice the snapshot's size, at the
 * nodeserver's start and at a clean stop. A torn last line (a crash in
 * an append) is dropped, the lines before it kept. Nothing is written
 * for a claim answered from the journal, an unprepare of a claim it
 * does not know, or a restart within the same boot with an empty log.
 * A snapshot that cannot be read, does not parse, fails
 * its checksum or names another schema or driver is renamed to
 * kubeletplugin-journal.json.corrupt-<unix time> beside it, logged as an
 * error with the reason, and the nodeserver starts with an empty journal
 * (never a crash loop); orphaned specs are then kept, since their claims
 * may still be in use. At most 8 MiB; a claim's data at most 64 KiB.
 * Unprepare removes the entry before the spec (a failed write keeps
 * both). Two instances of the driver in a rolling update
 * (kp_rolling_update()) share the files: every change is written to the
 * snapshot (an older release beside this one reads only that), under
 * the hooks' locks (serialize.lock across instances), and each instance
 * reads again what the other wrote, told by the log's generation and
 * length and the snapshot's checksum, so neither drops the other's
 * entries (docs/reliability.md, "The journal").
 */

/*
 * A claim's journal entry as the driver's code sees it. Made by the
 * library and passed by pointer only (fields may be appended); every
 * pointer is valid during the call it is passed to.
 *   uid, namespace_, name: the claim.
 *   devices: n_devices pointers to the devices prepared for it.
 *   cdi_spec: the file name of its CDI spec (kp_prepare_cdi_spec()),
 *     NULL: none.
 *   data: the driver's data (kp_prepare_journal_data()) as compact JSON
 *     text, NULL: none.
 *   previous_boot: 1 when recorded in an earlier boot of the node.
 */
struct kp_journal_entry {
	const char				*uid;
	const char				*namespace_;
	const char				*name;
	const struct kp_prepared_device *const	*devices;
	size_t					 n_devices;
	const char				*cdi_spec;
	const char				*data;
	int					 previous_boot;
};

/* previous_boot's return value: drop the entry (its claim is prepared
 * anew, by the hook, when kubelet asks). */
#define KP_JOURNAL_FORGET	1

/*
 * The journal's callbacks; each runs in the nodeserver, in its sandbox,
 * at its start (write_spec also in a prepare call), one at a time with
 * the hooks when kp_serialize() is on. err: errsize bytes for a message.
 *   previous_boot: an entry from an earlier boot. Return 0 to keep it
 *     (its devices are still valid after the reboot; the driver may set
 *     them up again here), KP_JOURNAL_FORGET to drop it, a negative code
 *     to keep it and log err. NULL: entries are kept.
 *   write_spec: the entry's CDI spec file is missing: write it again
 *     (kp_cdi_builder_write() with e->cdi_spec). 0 or a negative code (in
 *     a prepare call, that claim then fails with err). NULL: a missing
 *     spec is logged, and prepare fails the claim.
 * struct_size: start from KP_JOURNAL_HOOKS_INIT; user is passed back.
 */
struct kp_journal_hooks {
	size_t	 struct_size;
	void	*user;
	int	(*previous_boot)(void *user, const struct kp_journal_entry *e,
		    char *err, size_t errsize);
	int	(*write_spec)(void *user, const struct kp_journal_entry *e,
		    char *err, size_t errsize);
};
#define KP_JOURNAL_HOOKS_INIT	.struct_size = sizeof(struct kp_journal_hooks)

/*
 * kp_journal_dir - keep the journal in dir, which becomes a
 * kp_sandbox_state_dir() (its rules; a state directory already added is
 * not added twice). Default: no journal (the hooks see every claim).
 * Errors: as kp_sandbox_state_dir(). Beyond upstream.
 */
KP_EXTERN int kp_journal_dir(struct kp_options *opts, const char *dir);

/*
 * kp_journal_hooks - the journal's callbacks; copied (the functions and
 * user must stay valid until kp_stop()); NULL unsets. Last call wins.
 * Errors: KP_EINVAL (NULL handle; struct_size 0, smaller than this
 * release's or with fields this library does not know set).
 */
KP_EXTERN int kp_journal_hooks(struct kp_options *opts,
    const struct kp_journal_hooks *hooks);

/*
 * kp_prepare_cdi_spec - from the prepare hook: write spec as claim
 * number claim's CDI spec file, kp_cdi_claim_spec_name() of the driver
 * and the claim UID, through kp_cdi_spec_write(), and record it for the
 * journal (unprepare then removes it; the start rewrites it when it is
 * missing; a claim that fails, or a call the hook fails, has it
 * removed). Without kp_journal_dir() the file is the driver's to remove
 * (kp_cdi_spec_remove() of kp_cdi_claim_spec_name()). A failure fails
 * the claim with the reason.
 * Errors: KP_EINVAL (bad index, NULL, a spec breaking a rule), and those
 * of kp_cdi_spec_write(). Beyond upstream.
 */
KP_EXTERN int kp_prepare_cdi_spec(struct kp_prepare_results *res,
    size_t claim, const struct kp_cdi_builder *spec);

/*
 * kp_prepare_journal_data - from the prepare hook: data to record with
 * claim number claim (what unprepare needs to undo it: addresses,
 * handles), JSON text of at most 64 KiB (copied, stored compact); the
 * last call per claim wins. Only kept with kp_journal_dir().
 * Errors: KP_EINVAL (bad index, NULL, not one JSON value: the claim
 * fails), KP_ENOMEM. Beyond upstream.
 */
KP_EXTERN int kp_prepare_journal_data(struct kp_prepare_results *res,
    size_t claim, const char *json);

/*
 * kp_unprepare_journal_entry - from the unprepare hook: the journal
 * entry of claim number claim, valid during the hook call; NULL for a bad
 * index or without kp_journal_dir() (with it, every claim the hook sees
 * has one). Beyond upstream.
 */
KP_EXTERN const struct kp_journal_entry *kp_unprepare_journal_entry(
    const struct kp_unprepare_results *res, size_t claim);

/*
 * Identities. Started as root, each sandboxed process runs as its own
 * non-root uid and gid, KP_SANDBOX_UID_BASE (61000) plus an offset: 0 the
 * nodeserver, 1 the registrar, 2 the publisher, 3 the observer
 * (kp_http_endpoint()), 4 the broker (which reads every process's
 * messages; docs/security.md). Neither /etc/passwd nor /etc/group is consulted. The range
 * lies in what systemd documents as unused (60578-61183): above the
 * regular users (login.defs UID_MAX 60000) and systemd-homed
 * (60001-60513), below systemd's dynamic users (61184-65519), the
 * distroless "nonroot" 65532 and nobody 65534, and inside the first 65536
 * ids, so it maps in a container user namespace of that size and never
 * meets the 65536-aligned ranges kubelet gives pods with user namespaces.
 * Started without root, every process keeps the caller's ids (a warning
 * says so).
 */
#define KP_SANDBOX_UID_BASE	61000

/*
 * kp_sandbox_uid_base - move the default ids of the processes (the
 * Identities table above) to base .. base + 4, uids and gids alike, for
 * clusters that allocate ids. kp_sandbox_user() still overrides a single
 * process. Default KP_SANDBOX_UID_BASE. Errors: KP_EINVAL (NULL handle,
 * base 0, base + 4 not below (uid_t)-1). Beyond upstream.
 */
KP_EXTERN int kp_sandbox_uid_base(struct kp_options *opts, uid_t base);

/*
 * The pod's seccomp profile. The container runtime loads it before the
 * driver's main() runs, so it binds every process of the pod: the driver
 * process (its main(), before and after kp_start(), and any thread it
 * starts), the monitor and every child. The children add their own
 * filters on top (the kernel runs all of them, the strictest answer
 * wins): for the hooks the nodeserver's filter and kp_sandbox_syscall()
 * are the boundary, not this profile. What the driver's main() does
 * beyond the library's own calls (a device's ioctl commands, say) is
 * declared with kp_policy_main_syscall() and kp_policy_main_ioctl():
 * into the profile only (docs/security.md, "The pod's profile").
 * A privileged pod gets no profile from its runtime:
 * kp_policy_main_confine() makes the driver process load the same
 * allowlist on itself.
 */

/*
 * kp_policy_main_syscall - a syscall the driver process itself makes (its
 * main(), before or after kp_start()), for the pod's profile
 * (kp_policy_export_oci()) and the driver process's own filter
 * (kp_policy_main_confine()) only: no other filter of the library's gets
 * it, so the hooks, the init hook and a main() run again in a nodeserver
 * (kp_sandbox_exec()) still get EPERM for it; declare what the hooks need
 * with kp_sandbox_syscall(). name: as libseccomp names it for this
 * architecture ("mknodat"); copied (resolved to a number now). A syscall
 * the profile restricts by argument (ioctl, fcntl) is then allowed with
 * any argument: for one device's ioctl commands use
 * kp_policy_main_ioctl(). Each call adds one (a repeated name is no
 * error), at most 64.
 * Errors: KP_EINVAL (NULL handle; the name is unknown: the message names
 * it), KP_ENOMEM (more than 64). Beyond upstream.
 */
KP_EXTERN int kp_policy_main_syscall(struct kp_options *opts,
    const char *name);

/*
 * kp_policy_main_ioctl - an ioctl command the driver process itself
 * issues (LOOP_CTL_GET_FREE, 0x4C82, on /dev/loop-control, say), for the
 * pod's profile only, as kp_policy_main_syscall(): the profile then
 * allows ioctl with this command besides the library's own
 * (SECCOMP_IOCTL_NOTIF_*, FIONREAD), on any fd, as does the driver
 * process's own filter (kp_policy_main_confine()); no other filter of
 * the library's allows it. request: the command as ioctl(2) takes it; the
 * kernel reads it as 32 bits, so it must fit in them and be non-zero.
 * Each call adds one (a repeated command is no error), at most 32.
 * Errors: KP_EINVAL (NULL handle, request 0 or wider than 32 bits: the
 * message names it), KP_ENOMEM (more than 32). Beyond upstream.
 */
KP_EXTERN int kp_policy_main_ioctl(struct kp_options *opts,
    unsigned long request);

/*
 * kp_policy_main_confine - on 1: the driver process applies the pod's
 * profile to itself. kp_start(), in the driver process, once the plugin
 * started and before it returns, loads on every thread of the process
 * (SECCOMP_FILTER_FLAG_TSYNC; threads started later inherit it) a
 * seccomp filter built from the same union as kp_policy_export_oci() for
 * these options: the library's needs, the driver's start-up and its
 * kp_policy_main_syscall() and kp_policy_main_ioctl() declarations, with
 * EPERM for every other call, as the profile's defaultAction (no trap:
 * the driver process has no SIGSYS handler of the library's). For
 * privileged pods (deploy/components/device-driver), which the container
 * runtime runs without any profile: this is then what binds main()
 * after kp_start(). It cannot be undone; what main() does before
 * kp_start() is not bound by it, later kp_start() calls load theirs on
 * top (the kernel runs both). Held CAP_SYS_ADMIN (root in a privileged
 * pod) loads it as it is; without it the process sets NO_NEW_PRIVS
 * first, as the kernel requires: a later exec then gains no privilege
 * (setuid, file capabilities). KP_SANDBOX_COMPLAIN logs to the kernel's
 * audit log (SCMP_ACT_LOG) what enforce would refuse; KP_SANDBOX_OFF
 * loads nothing (logged). A main() run again in an exec'd nodeserver
 * (kp_sandbox_exec()) never returns from kp_start() and loads nothing;
 * its options must match (this one included). on: 0 (the default) or 1.
 * Errors: KP_EINVAL (NULL handle; on neither 0 nor 1). kp_start() fails
 * with KP_ESANDBOX when the filter cannot be loaded (a thread runs a
 * filter of its own that TSYNC cannot replace, NO_NEW_PRIVS refused):
 * the plugin it started is stopped first, and the message says why.
 * Beyond upstream.
 */
KP_EXTERN int kp_policy_main_confine(struct kp_options *opts, int on);

/*
 * kp_policy_export_oci - an OCI seccomp profile (JSON) for the pod's
 * Localhost seccompProfile: the union of every process's allowlist, the
 * supervisor's needs, the nodeserver's extra syscalls
 * (kp_sandbox_syscall()) and the driver process's own
 * (kp_policy_main_syscall(), kp_policy_main_ioctl()) from opts, and
 * SCMP_ACT_ERRNO (EPERM) as the default action. Being a union, it keeps
 * an argument rule only where every role restricts the syscall alike
 * (fcntl, ioctl; clone3 stays ENOSYS): the others become plain allows, and
 * the processes' own filters stay the real boundary. Not in it: the
 * container runtime's own calls before the entrypoint, which
 * tools/kubeletplugin-policy adds. Privileged pods run unconfined
 * whatever their profile: the processes' own filters apply either way,
 * and kp_policy_main_confine() loads this union on the driver process.
 * opts: read only; NULL means the defaults. On success *out is a
 * NUL-terminated string the caller frees with free().
 * Errors: KP_EINVAL (out is NULL, invalid handle), KP_ENOMEM.
 * Beyond upstream.
 */
KP_EXTERN int kp_policy_export_oci(const struct kp_options *opts,
    char **out);

/* ------------------------------------------------------------------------
 * Resource health (KEP-4680; issue 11). The nodeserver serves
 * v1.DRAResourceHealth and v1alpha1.DRAResourceHealth/NodeWatchResources
 * (server streaming) on the DRA socket: each stream kubelet opens gets the
 * complete current list of devices at once, then the complete list again
 * after every change. A stream whose reader is slow gets only the latest
 * list when it can take one (older lists are dropped, never queued), so no
 * reader can hold up another stream or a prepare call. Mirrors the Go
 * helper v0.37 (DRAPlugin.WatchHealthStatus, DeviceHealth).
 */

enum kp_health_status {
	KP_HEALTH_UNKNOWN = 0,
	KP_HEALTH_HEALTHY = 1,
	KP_HEALTH_UNHEALTHY = 2
};

#define KP_HEALTH_MESSAGE_MAX	1024	/* bytes of kp_device_health.message */
#define KP_HEALTH_MAX_DEVICES	512	/* devices in the list */

/*
 * One device's health. struct_size: sizeof(struct kp_device_health) as the
 * caller compiled it, so later fields can be added without breaking old
 * callers; start from KP_DEVICE_HEALTH_INIT. All strings borrowed for the
 * call.
 *   pool, device: the ResourceSlice pool and device name (a pool name is
 *     DNS subdomains joined by '/', at most 253 bytes; a device name a DNS
 *     label); required.
 *   status: enum kp_health_status.
 *   last_updated: Unix seconds when the driver last determined the status;
 *     0 = unknown (sent as 0, as upstream for a zero time); >= 0.
 *   timeout_s: seconds after which kubelet treats the state as stale
 *     (health_check_timeout_seconds); 0 = kubelet's default (30 s);
 *     0..86400.
 *   message: optional detail (NULL or ""), valid UTF-8, at most
 *     KP_HEALTH_MESSAGE_MAX bytes (kubelet truncates longer ones).
 */
struct kp_device_health {
	size_t			 struct_size;
	const char		*pool;
	const char		*device;
	enum kp_health_status	 status;
	int64_t			 last_updated;
	int			 timeout_s;
	const char		*message;
};

/* Designated, as every _INIT: struct kp_device_health h =
 * { KP_DEVICE_HEALTH_INIT, .pool = "p", .device = "d" }; (status 0 is
 * KP_HEALTH_UNKNOWN) */
#define KP_DEVICE_HEALTH_INIT	KP_STRUCT_INIT(struct kp_device_health)

/*
 * kp_health_service - serve and advertise resource health. Default 1 (as
 * upstream v0.37 HealthService). 0: "v1.DRAResourceHealth" and
 * "v1alpha1.DRAResourceHealth" are not advertised, but a stream kubelet
 * opens anyway (kubelets 1.34-1.36 open it for every plugin, and 1.36
 * logs an ERROR every 5 s for a plugin that answers UNIMPLEMENTED) is kept
 * open and idle: it never gets a message. enable: 0 or 1.
 * Errors: KP_EINVAL. Mirrors kubeletplugin.HealthService, 1.37.
 */
KP_EXTERN int kp_health_service(struct kp_options *opts, int enable);

/*
 * kp_health_v1 / kp_health_v1alpha1 - serve and advertise each version of
 * the health service (with kp_health_service() on). Defaults 1 and 1, as
 * upstream v0.37 (HealthV1, HealthV1alpha1; kubelet 1.37 prefers v1,
 * 1.34-1.36 know only v1alpha1). A version turned off is not served:
 * kubelet gets UNIMPLEMENTED. enable: 0 or 1. Errors: KP_EINVAL.
 * Mirror kubeletplugin.HealthV1 and HealthV1alpha1, 1.37.
 */
KP_EXTERN int kp_health_v1(struct kp_options *opts, int enable);
KP_EXTERN int kp_health_v1alpha1(struct kp_options *opts, int enable);

/* ------------------------------------------------------------------------
 * The observer (docs/health-and-metrics.md): an optional fifth process,
 * sandboxed like the registrar, that serves HTTP on the endpoint below:
 * GET /healthz and /readyz answer 200 "ok" or 503 with a one-line reason,
 * /metrics the Prometheus text format. It never talks to kubelet, the API
 * server or the hooks: the supervisor sends it status snapshots. Beyond
 * upstream (the Go helper has no health endpoint).
 */

/*
 * kp_http_endpoint - serve /healthz, /readyz and /metrics on addr, a TCP
 * address "IPV4:PORT", "[IPV6]:PORT" or ":PORT" (every IPv4 address),
 * port 1..65535; copied. NULL or "" turns the observer off (the
 * default). kp_start() binds the address (an address in use fails it with
 * KP_EIO naming this option) and keeps it bound for the plugin's life.
 * /healthz is 503 when a socket file is missing or is no longer the one
 * the plugin bound (device and inode), a process has not answered the
 * supervisor's heartbeat within 5 s (a slow hook does not count: the
 * answer comes from each process's event loop), kubelet rejected the
 * registration, or the publisher has pools it has not synced for 5
 * minutes; /readyz is also 503 until kubelet accepted the registration.
 * Errors: KP_EINVAL (NULL handle; the message names the rule broken:
 * syntax, address literal, port range). Beyond upstream.
 */
KP_EXTERN int kp_http_endpoint(struct kp_options *opts, const char *addr);

/*
 * kp_health_report - report the health of n devices from the driver
 * process (any thread; calls are serialized). Each device's state
 * replaces what was reported for it before (same pool and device); other
 * devices keep theirs, so several sources may report subsets. Every open
 * stream then gets the complete list. Report again within each device's
 * timeout: when no report (from here or kp_hook_health_report()) came
 * within the smallest timeout of the listed devices (30 s when none is
 * set) while kubelet watches, a warning is logged ("device health reports
 * are stale") once per stale period, checked every 10 s, as upstream.
 * devices: n entries, borrowed for the call; n may be 0 (only refreshes
 * the report time). Nothing is sent unless every entry is valid.
 * Errors: KP_EINVAL (invalid handle or entry: the message names the
 * index, field and rule), KP_ENOMEM (more than KP_HEALTH_MAX_DEVICES
 * devices in all), KP_EPIPE (supervisor gone). Mirrors the reports of
 * DRAPlugin.WatchHealthStatus, 1.37.
 */
KP_EXTERN int kp_health_report(struct kp_plugin *plugin,
    const struct kp_device_health *devices, size_t n);

/*
 * kp_hook_health_report - as kp_health_report(), from the driver's code in
 * the nodeserver (hooks, and threads they started): the report goes
 * straight to the streams, without the supervisor. Reports from here are
 * lost when the nodeserver restarts (those of kp_health_report() are
 * re-sent to it). errbuf: errsize bytes for the message, may be NULL.
 * Errors: KP_EINVAL (an entry breaks a rule), KP_ENOMEM, KP_ENOTSUP
 * (called outside the nodeserver). Beyond upstream.
 */
KP_EXTERN int kp_hook_health_report(const struct kp_device_health *devices,
    size_t n, char *errbuf, size_t errsize);

/* ------------------------------------------------------------------------
 * Channels between the driver process, the library and the hooks (beyond
 * upstream, where hooks are methods of the driver's own object). Hooks run
 * in the nodeserver, a process forked at kp_start() whose memory is frozen
 * then; these calls let main() keep discovering devices after kp_start()
 * and hand the result to the hooks, and let main() hear about errors and
 * status changes without polling.
 */

/* The largest state kp_state_set() takes, in bytes (256 KiB). */
#define KP_STATE_MAX	(256u * 1024)

/*
 * kp_state_set - hand len bytes of state from the driver process (any
 * thread) to the hooks: the supervisor checks the size and order, keeps
 * the latest copy and passes it to the nodeserver, where
 * kp_hook_state_get() returns it and the kp_state_callback() function
 * sees it. Each call replaces the whole state (send everything the hooks
 * need: a device list, say, as JSON) and gets the next generation number
 * (1, 2, ...): hooks see the states in the order of the calls and never
 * an older one after a newer one. A nodeserver that restarts (a crash, a
 * protocol violation) starts with the latest state, before its init hook
 * and before it serves a call. The state flows one way: no child can
 * change it. data: len bytes, copied; may be NULL when len is 0 (an empty
 * state). Returns once the supervisor has the state (the nodeserver gets
 * it asynchronously, in order). Errors: KP_EINVAL (invalid handle, data
 * NULL with len > 0, len above KP_STATE_MAX: the message names the limit),
 * KP_EPIPE (supervisor gone), KP_ETIMEDOUT. Beyond upstream.
 */
KP_EXTERN int kp_state_set(struct kp_plugin *plugin, const void *data,
    size_t len);

/*
 * kp_state_initial - the state the first nodeserver starts with, set
 * before kp_start(): kp_start() hands it to the supervisor as generation
 * 1 before the nodeserver exists, so the init hook, the journal's start
 * repair (kp_journal_hooks()) and the first call all see it through
 * kp_hook_state_get(); kp_state_set() after kp_start() goes on from
 * generation 2. data: len bytes, copied (at most KP_STATE_MAX); an empty
 * state is a non-NULL data with len 0; NULL clears it (no initial
 * state: kp_hook_state_get() says KP_ENOENT until kp_state_set()). A
 * driver whose main() runs again in the nodeserver (kp_sandbox_exec)
 * must set one there too (the bytes may differ: only the supervisor's
 * copy counts). Errors: KP_EINVAL (invalid handle, data NULL with len >
 * 0, len above KP_STATE_MAX), KP_ENOMEM. Beyond upstream.
 */
KP_EXTERN int kp_state_initial(struct kp_options *opts, const void *data,
    size_t len);

/*
 * A state-change function (kp_state_callback()): called in the
 * nodeserver, on the thread that reads the supervisor's frames, once per
 * kp_state_set() in generation order (the state a restarted nodeserver
 * starts with is not announced: read it with kp_hook_state_get() in the
 * init hook). When the nodeserver falls more than 4 MiB of frames behind,
 * the states in between are skipped and only the latest is delivered: a
 * generation can jump, never go back. data: len bytes, borrowed for the call. Return quickly:
 * claim look-ups and CDI answers wait behind it, so it must not call
 * kp_cdi_spec_*() or block on a hook.
 */
typedef void (*kp_state_fn)(void *user, const void *data, size_t len,
    uint64_t generation);

/*
 * kp_state_callback - the function the nodeserver calls for each new state
 * (see kp_state_fn); NULL (the default) for none. user: passed to fn,
 * borrowed for the plugin's life. Last call wins. Errors: KP_EINVAL
 * (invalid handle). Beyond upstream.
 */
KP_EXTERN int kp_state_callback(struct kp_options *opts, kp_state_fn fn,
    void *user);

/*
 * kp_hook_state_get - copy the latest state the hooks have into buf, from
 * the driver's code in the nodeserver (hooks, the init hook, threads they
 * started; thread-safe). size: bytes of buf (buf may be NULL when size is
 * 0, to ask for the length). *len: set to the state's length (also on
 * KP_ENOSPC); generation: set to its generation unless NULL (0 with
 * KP_ENOENT). Errors: KP_ENOENT (kp_state_set() was never called),
 * KP_ENOSPC (size < the state's length: nothing copied, *len says what is
 * needed), KP_EINVAL (len NULL), KP_ENOTSUP (called outside the
 * nodeserver). Beyond upstream.
 */
KP_EXTERN int kp_hook_state_get(void *buf, size_t size, size_t *len,
    uint64_t *generation);

/*
 * An error function (kp_error_callback()): an error the plugin hit after
 * kp_start() returned, with code (a negative KP_E* code), a message
 * naming what failed (borrowed for the call) and recoverable: 1 when the
 * library retries or already recovered (ResourceSlice create, update or
 * delete errors and fields the API server dropped, KP_EKUBE; stale
 * health reports, KP_ETIMEDOUT; a child killed for a protocol violation
 * and restarted, KP_EPROTO), 0 when the plugin cannot do its job until
 * something changes (a child crash-looping or a restarted child that
 * cannot start: KP_ECHILD). Pools kp_publish_resources() does not
 * publish (kp_validate_qualified_names(), kp_reconcile_pool_with_name())
 * come as KP_EINVAL, recoverable 1, once per call. Called in the driver
 * process, on a thread of the library, one call at a time and in the
 * order the errors happened. It may call kp_publish_resources() and the
 * other calls on the plugin (as upstream 1.38's HandleError may call
 * PublishResources), also while kp_stop() runs in another thread: once
 * kp_stop() began they fail at once with KP_EPIPE instead of waiting.
 * It must not call kp_stop() (that waits for this thread: KP_EBUSY) nor
 * kp_start() (a new plugin's fork waits for this thread). At most 64
 * reports of left-out pools wait for it; more are counted and reported
 * as one when it catches up. Other threads of the driver must not call
 * the plugin's functions once kp_stop() has returned (the handle is
 * freed), and should not while it runs.
 */
typedef void (*kp_error_fn)(void *user, int code, const char *message,
    int recoverable);

/*
 * kp_error_callback - where errors after kp_start() go (see kp_error_fn).
 * NULL (the default): each is logged once, as a warning or error line of
 * the process that saw it (the publisher's "resourceslices: ...", the
 * supervisor's "nodeserver is crash-looping ...", the nodeserver's
 * "device health reports are stale ..."), as upstream's default handler
 * logs what HandleError gets.
 * user: passed to fn, borrowed for the plugin's life.
 * Last call wins. Errors: KP_EINVAL (invalid handle). Mirrors
 * DRAPlugin.HandleError and ErrRecoverable (kubeletplugin v0.34+).
 */
KP_EXTERN int kp_error_callback(struct kp_options *opts, kp_error_fn fn,
    void *user);

/*
 * kp_status_fd - a file descriptor that becomes readable when
 * kp_registration_status() or kp_publish_status() may return something
 * new (kubelet's verdict or its error text changed; the publisher
 * started, stopped, synced with a different outcome or counts; a pass
 * that changed only last_sync is not a change), for a driver's event loop
 * (poll, epoll, select). Level-triggered with coalescing: it stays
 * readable until read, and any number of changes since the last read make
 * it readable once. To use it: read 8 bytes from it (this resets it;
 * EAGAIN when nothing changed, it is non-blocking), then call the status
 * functions: a change after the read makes it readable again, so none is
 * missed. Owned by the plugin: do not close it; it is closed by
 * kp_stop(). Returns the fd (>= 0) or KP_EINVAL (invalid handle). Beyond
 * upstream (Go drivers would poll).
 */
KP_EXTERN int kp_status_fd(struct kp_plugin *plugin);

#ifdef __cplusplus
}
#endif

#endif /* KUBELETPLUGIN_H */
