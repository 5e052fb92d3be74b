/*
 * policy.h - the sandbox of each process role (DESIGN section 5): a private
 * mount namespace or an empty root, the user, PR_SET_NO_NEW_PRIVS, the
 * capabilities (bounding set included) and a seccomp allowlist. Only
 * policy/ includes <seccomp.h> and <cap-ng.h> (STYLE 13).
 *
 * A child calls policy_apply() once, after its privileged set-up and right
 * before it starts serving (before grpc_init / curl_global_init).
 */
#ifndef KP_POLICY_H
#define KP_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

#include "kubeletplugin.h"
#include "base/config.h"
#include "ipc/ipc.h"
#include "ipc/child.h"

/* The action of one syscall rule of a role table. */
enum pol_action {
	POL_ALLOW = 0,
	POL_EACCES,		/* graceful denial: the gRPC core's probes */
	POL_ENOSYS,		/* clone3: glibc falls back to clone */
	POL_EPERM,
	POL_TRAP		/* a violation in every mode but off */
};

/* Argument rules: the few syscalls allowed only with some arguments. */
enum pol_arg {
	POL_ARG_NONE = 0,
	POL_ARG_CLONE_THREAD,	/* clone: CLONE_THREAD set, no CLONE_NEW*
				 * (threads only) */
	POL_ARG_SELF_TGID,	/* tgkill/kill: own thread group */
	POL_ARG_NOTIF_IOCTL,	/* ioctl: SECCOMP_IOCTL_NOTIF_* and FIONREAD
				 * only */
	POL_ARG_SOCKET_INET,	/* socket: AF_INET, AF_INET6 stream or
				 * datagram; AF_UNIX and AF_NETLINK
				 * NETLINK_ROUTE EACCES (glibc's nscd and
				 * AI_ADDRCONFIG probes fall back) */
	POL_ARG_PRCTL_NAME,	/* prctl: PR_SET_NAME, PR_GET_NAME */
	POL_ARG_FD_EMPTY_PATH,	/* newfstatat: a real fd and AT_EMPTY_PATH
				 * (fstat), else EACCES */
	POL_ARG_FCNTL,		/* fcntl: no F_SETOWN(_EX), F_SETSIG,
				 * F_SETLEASE, F_NOTIFY (signals to other
				 * processes) */
	POL_ARG_SOCKETPAIR_STREAM	/* socketpair: AF_UNIX SOCK_STREAM
					 * (a datagram pair could sendto
					 * any datagram socket path) */
};

struct pol_rule {
	const char	*name;
	enum pol_action	 action;
	enum pol_arg	 arg;
};

/* syscalls.c */
const struct pol_rule *pol_table(enum kp_role, size_t *);
const struct pol_rule *pol_table_base(size_t *);
const struct pol_rule *pol_table_sanitizer(size_t *);
const struct pol_rule *pol_table_sanitizer_driver(size_t *);
const char *pol_role_label(enum kp_role);

/* seccomp.c */
struct pol_filter;
int	pol_filter_build(enum kp_role, const struct policy_opts *, int,
	    struct pol_filter **, char *, size_t);
int	pol_filter_build_union(const struct policy_opts *,
	    struct pol_filter **, char *, size_t);
int	pol_filter_build_main(const struct policy_opts *,
	    struct pol_filter **, char *, size_t);
int	pol_filter_load(struct pol_filter *, char *, size_t);
int	pol_filter_load_tsync(struct pol_filter *, int, char *, size_t);
void	pol_filter_free(struct pol_filter *);
int	pol_syscall_number(const char *);
int	pol_syscall_name(int, char *, size_t);
extern const int pol_fcntl_allowed[];
extern const size_t pol_n_fcntl_allowed;

/* sigsys.c: the SIGSYS handler and the record of denied syscalls */
#define POL_NAMES_MAX	1024	/* native syscall numbers we can name */
#define POL_DENIED_MAX	8	/* distinct denials kept per hook call */
void	pol_sigsys_setup(const char *, int, int);
void	pol_sigsys(int, siginfo_t *, void *);
const char *pol_sigsys_name(int);
void	pol_denied_begin(void);
size_t	pol_denied_end(int *, size_t);
unsigned long pol_denied_count(int);
int	pol_denied_due(int, unsigned long *);

/* caps.c */
int	pol_cap_number(const char *);
int	pol_supervisor_caps(const struct policy_opts *, char *, size_t);
int	pol_init_caps(const struct policy_opts *, char *, size_t);
int	pol_ids_caps(enum kp_role, const struct policy_opts *, int, char *,
	    size_t);

/* fs.c */
int	pol_fs(enum kp_role, const struct child_env *, char *, size_t);
int	pol_hide(const char *, char *, size_t);
int	pol_fs_can_hide(void);

/* ids.c */
int	pol_role_ids(enum kp_role, const struct policy_opts *, uid_t *,
	    gid_t *);

/* ns.c */
int	pol_ns_proc(char *, size_t);
int	pol_ns_kubelet_dirs(enum kp_role, const struct kp_options *, char *,
	    size_t);

/* oci.c: the union of the tables (the pod's profile, the supervisor's
 * filter) */
#define POL_UNION_MAX		512
#define POL_UNION_DRIVER	0x1	/* the driver process's start-up */
#define POL_UNION_SANITIZER	0x2	/* a sanitizer build's rules */
struct pol_union_entry {
	char		 name[40];
	int		 rank;		/* 3 allow, 2 arg rule, 1 errno */
	enum pol_action	 action;
	enum pol_arg	 arg;
};
struct pol_union {
	struct pol_union_entry	 e[POL_UNION_MAX];
	size_t			 n;
};
int	pol_union_build(const struct policy_opts *, int,
	    struct pol_union **);
int	pol_oci_json(const struct policy_opts *, char **);

/* landlock.c */
int	pol_landlock(enum kp_role, const struct policy_opts *, char *,
	    size_t);
int	pol_landlock_abi(void);
const char *const *pol_landlock_ns_reads(size_t *);
int	policy_allow_read(const char *);
int	pol_landlock_write(const char *);


/* policy.c */
int	policy_apply(enum kp_role, const struct child_env *, char *,
	    size_t);

/* monitor.c: the supervisor's own privileges and filter; the nodeserver's
 * init hook under it */
int	policy_supervisor(const struct kp_options *, char *, size_t);
void	policy_init_begin(const struct child_env *);
void	policy_init_end(const struct child_env *, int, char *, size_t);

/* main.c: the driver process's own filter (kp_policy_main_confine) */
int	policy_main(const struct kp_options *, char *, size_t);

/* broker.c: the broker's sandbox */
int	policy_broker(const struct kp_options *, int, char *, size_t);

#endif /* KP_POLICY_H */
