/*
 * syscalls.c - the seccomp allowlists, one table per role (STYLE 12): a
 * comment per group, alphabetical within a group, graceful denials
 * (EACCES, ENOSYS) first, argument rules next to their syscall, a reason
 * on every one-off. Anything not listed is a violation (SIGSYS trap in
 * enforce mode, logged and allowed in complain mode).
 *
 * A role's filter is base[] + its own table (+ the driver's extra syscalls
 * for the nodeserver). The union of all of them is the supervisor's
 * filter, and with driver[] the pod's OCI profile (oci.c). The supervisor's
 * table holds what a child does before its own filter too, the exec of
 * the publisher and the observer included.
 *
 * Measured with strace -f under the end-to-end suite and the concurrent
 * stress client (tests/e2e/stress.js), normal and ASan builds; the
 * syscalls that only appear under lock contention (sched_yield,
 * clock_nanosleep, sched_getaffinity) are in base[].
 */
#include <stddef.h>
#include <sys/syscall.h>

#include "policy/policy.h"

#define N(t)	(sizeof(t) / sizeof((t)[0]))

/* Every sandboxed role: memory, threads, signals, time, plain fd I/O. */
static const struct pol_rule base[] = {
	/* process creation: threads only (clone3 has its flags in memory a
	 * BPF filter cannot read: ENOSYS makes glibc 2.36's pthread_create
	 * fall back to clone, as Chromium and containerd do) */
	{ "clone3", POL_ENOSYS, POL_ARG_NONE },
	{ "clone", POL_ALLOW, POL_ARG_CLONE_THREAD },

	/* memory */
	{ "brk", POL_ALLOW, POL_ARG_NONE },
	{ "madvise", POL_ALLOW, POL_ARG_NONE },
	{ "mmap", POL_ALLOW, POL_ARG_NONE },
	{ "mprotect", POL_ALLOW, POL_ARG_NONE },
	{ "mremap", POL_ALLOW, POL_ARG_NONE },
	{ "munmap", POL_ALLOW, POL_ARG_NONE },

	/* threads and locks (sched_* and clock_nanosleep: lock contention
	 * in gRPC's absl mutexes) */
	{ "exit", POL_ALLOW, POL_ARG_NONE },
	{ "exit_group", POL_ALLOW, POL_ARG_NONE },
	{ "futex", POL_ALLOW, POL_ARG_NONE },
	{ "get_robust_list", POL_ALLOW, POL_ARG_NONE },
	{ "getpid", POL_ALLOW, POL_ARG_NONE },
	{ "gettid", POL_ALLOW, POL_ARG_NONE },
	{ "membarrier", POL_ALLOW, POL_ARG_NONE },
	{ "rseq", POL_ALLOW, POL_ARG_NONE },
	{ "sched_getaffinity", POL_ALLOW, POL_ARG_NONE },
	{ "sched_getparam", POL_ALLOW, POL_ARG_NONE },
	{ "sched_getscheduler", POL_ALLOW, POL_ARG_NONE },
	{ "sched_yield", POL_ALLOW, POL_ARG_NONE },
	{ "set_robust_list", POL_ALLOW, POL_ARG_NONE },

	/* signals (tgkill and kill: own thread group only, for
	 * pthread_kill and raise; tkill, which names a tid of any process,
	 * is not listed) */
	{ "kill", POL_ALLOW, POL_ARG_SELF_TGID },
	{ "rt_sigaction", POL_ALLOW, POL_ARG_NONE },
	{ "rt_sigprocmask", POL_ALLOW, POL_ARG_NONE },
	{ "restart_syscall", POL_ALLOW, POL_ARG_NONE },	/* SIGSTOP then
							 * SIGCONT resumes
							 * a sleeping call */
	{ "rt_sigreturn", POL_ALLOW, POL_ARG_NONE },
	{ "rt_sigtimedwait", POL_ALLOW, POL_ARG_NONE },
	{ "sigaltstack", POL_ALLOW, POL_ARG_NONE },
	{ "tgkill", POL_ALLOW, POL_ARG_SELF_TGID },

	/* one-off: glibc's qsort asks for the physical memory size
	 * (sysinfo) before sorting large arrays (the nodeserver sorts a
	 * request's claim UIDs, the publisher its JSON); read-only */
	{ "sysinfo", POL_ALLOW, POL_ARG_NONE },

	/* time (the vDSO answers most; these are its fallbacks) */
	{ "clock_getres", POL_ALLOW, POL_ARG_NONE },
	{ "clock_gettime", POL_ALLOW, POL_ARG_NONE },
	{ "clock_nanosleep", POL_ALLOW, POL_ARG_NONE },
	{ "gettimeofday", POL_ALLOW, POL_ARG_NONE },
	{ "nanosleep", POL_ALLOW, POL_ARG_NONE },

	/* event loop */
	{ "epoll_create1", POL_ALLOW, POL_ARG_NONE },
	{ "epoll_ctl", POL_ALLOW, POL_ARG_NONE },
	{ "epoll_pwait", POL_ALLOW, POL_ARG_NONE },
	{ "epoll_wait", POL_ALLOW, POL_ARG_NONE },
	{ "eventfd2", POL_ALLOW, POL_ARG_NONE },
	{ "pipe2", POL_ALLOW, POL_ARG_NONE },
	{ "poll", POL_ALLOW, POL_ARG_NONE },
	{ "ppoll", POL_ALLOW, POL_ARG_NONE },

	/* fds and connected sockets (fcntl: no command that signals
	 * another process, seccomp.c pol_fcntl_allowed) */
	{ "close", POL_ALLOW, POL_ARG_NONE },
	{ "fcntl", POL_ALLOW, POL_ARG_FCNTL },
#ifdef __NR_fcntl64
	{ "fcntl64", POL_ALLOW, POL_ARG_FCNTL },	/* 32-bit ABIs */
#endif
	{ "getpeername", POL_ALLOW, POL_ARG_NONE },
	{ "getsockname", POL_ALLOW, POL_ARG_NONE },
	{ "getsockopt", POL_ALLOW, POL_ARG_NONE },
	{ "read", POL_ALLOW, POL_ARG_NONE },
	{ "readv", POL_ALLOW, POL_ARG_NONE },
	{ "recvfrom", POL_ALLOW, POL_ARG_NONE },
	{ "recvmsg", POL_ALLOW, POL_ARG_NONE },
	{ "sendmsg", POL_ALLOW, POL_ARG_NONE },
	{ "sendto", POL_ALLOW, POL_ARG_NONE },
	{ "setsockopt", POL_ALLOW, POL_ARG_NONE },
	{ "shutdown", POL_ALLOW, POL_ARG_NONE },
	{ "write", POL_ALLOW, POL_ARG_NONE },
	{ "writev", POL_ALLOW, POL_ARG_NONE },

	/* one-offs */
	{ "getrandom", POL_ALLOW, POL_ARG_NONE },	/* absl, OpenSSL seeds */
	/* complain mode's listener; FIONREAD: glibc's resolver sizes a
	 * DNS answer with it (a kubeconfig host name killed the
	 * publisher without it) */
	{ "ioctl", POL_ALLOW, POL_ARG_NOTIF_IOCTL },
	{ "prctl", POL_ALLOW, POL_ARG_PRCTL_NAME },	/* gRPC names its
							 * threads */
	{ "uname", POL_ALLOW, POL_ARG_NONE },	/* gRPC core at start */
};

/* The registrar: serving gRPC on an inherited listener, nothing else. */
static const struct pol_rule registrar[] = {
	/* graceful denials: the gRPC core and glibc probe files
	 * (/etc/localtime, /sys/devices/system/cpu/online, /proc/stat) */
	{ "access", POL_EACCES, POL_ARG_NONE },
	{ "faccessat", POL_EACCES, POL_ARG_NONE },
	{ "faccessat2", POL_EACCES, POL_ARG_NONE },
	{ "open", POL_EACCES, POL_ARG_NONE },
	{ "openat", POL_EACCES, POL_ARG_NONE },
	{ "readlink", POL_EACCES, POL_ARG_NONE },
	{ "stat", POL_EACCES, POL_ARG_NONE },
	{ "statx", POL_EACCES, POL_ARG_NONE },

	/* sockets: kubelet's connections on the inherited listener */
	{ "accept4", POL_ALLOW, POL_ARG_NONE },

	/* fds (fstat is newfstatat(fd, "", AT_EMPTY_PATH) in glibc 2.36;
	 * AT_FDCWD or no AT_EMPTY_PATH is EACCES as open; why a path
	 * string it cannot read is harmless: seccomp.c fstat_rules) */
	{ "fstat", POL_ALLOW, POL_ARG_NONE },
	{ "lseek", POL_ALLOW, POL_ARG_NONE },
	{ "newfstatat", POL_ALLOW, POL_ARG_FD_EMPTY_PATH },
};

/*
 * The observer: HTTP on an inherited TCP listener with libmicrohttpd in
 * the observer's own epoll loop (observer/http.c), nothing else: no
 * socket, connect or bind (Landlock refuses TCP bind and connect too),
 * no file. Its signalfd is made before the filter.
 */
static const struct pol_rule observer[] = {
	/* graceful denials: glibc probes files (/etc/localtime) */
	{ "access", POL_EACCES, POL_ARG_NONE },
	{ "open", POL_EACCES, POL_ARG_NONE },
	{ "openat", POL_EACCES, POL_ARG_NONE },
	{ "stat", POL_EACCES, POL_ARG_NONE },
	{ "statx", POL_EACCES, POL_ARG_NONE },

	/* sockets: HTTP clients on the inherited listener */
	{ "accept4", POL_ALLOW, POL_ARG_NONE },

	/* fds (fstat as in the registrar's list) */
	{ "fstat", POL_ALLOW, POL_ARG_NONE },
	{ "newfstatat", POL_ALLOW, POL_ARG_FD_EMPTY_PATH },
};

/* The nodeserver: serving gRPC, plus the file work drivers' hooks do
 * (CDI specs, checkpoints, sysfs reads, the serialize lock). The token
 * directory is hidden by the mount namespace, not by this table. */
static const struct pol_rule nodeserver[] = {
	/* sockets: kubelet's connections on the inherited listener */
	{ "accept4", POL_ALLOW, POL_ARG_NONE },

	/* files: reading */
	{ "access", POL_ALLOW, POL_ARG_NONE },
	{ "faccessat", POL_ALLOW, POL_ARG_NONE },
	{ "faccessat2", POL_ALLOW, POL_ARG_NONE },
	{ "fstat", POL_ALLOW, POL_ARG_NONE },
	{ "getcwd", POL_ALLOW, POL_ARG_NONE },
	{ "getdents64", POL_ALLOW, POL_ARG_NONE },
	{ "lseek", POL_ALLOW, POL_ARG_NONE },
	{ "lstat", POL_ALLOW, POL_ARG_NONE },
	{ "newfstatat", POL_ALLOW, POL_ARG_NONE },
	{ "open", POL_ALLOW, POL_ARG_NONE },
	{ "openat", POL_ALLOW, POL_ARG_NONE },
	{ "pread64", POL_ALLOW, POL_ARG_NONE },
	{ "readlink", POL_ALLOW, POL_ARG_NONE },
	{ "readlinkat", POL_ALLOW, POL_ARG_NONE },
	{ "stat", POL_ALLOW, POL_ARG_NONE },
	{ "statfs", POL_ALLOW, POL_ARG_NONE },
	{ "statx", POL_ALLOW, POL_ARG_NONE },

	/* files: writing (CDI specs are written to a temporary name, synced
	 * and renamed; checkpoints likewise) */
	{ "fchmod", POL_ALLOW, POL_ARG_NONE },
	{ "fdatasync", POL_ALLOW, POL_ARG_NONE },
	{ "flock", POL_ALLOW, POL_ARG_NONE },
	{ "fsync", POL_ALLOW, POL_ARG_NONE },
	{ "ftruncate", POL_ALLOW, POL_ARG_NONE },
	{ "mkdir", POL_ALLOW, POL_ARG_NONE },
	{ "mkdirat", POL_ALLOW, POL_ARG_NONE },
	{ "pwrite64", POL_ALLOW, POL_ARG_NONE },
	{ "rename", POL_ALLOW, POL_ARG_NONE },
	{ "renameat", POL_ALLOW, POL_ARG_NONE },
	{ "renameat2", POL_ALLOW, POL_ARG_NONE },
	{ "unlink", POL_ALLOW, POL_ARG_NONE },
	{ "unlinkat", POL_ALLOW, POL_ARG_NONE },

	/* fds */
	{ "dup", POL_ALLOW, POL_ARG_NONE },
	{ "dup3", POL_ALLOW, POL_ARG_NONE },
};

/* The publisher: HTTPS to the API server with libcurl (threaded DNS
 * resolver), reading the kubeconfig, token, CA and client cert files (the
 * token again every 60 s). */
static const struct pol_rule publisher[] = {
	/* sockets: TCP to the API server, UDP and TCP to DNS servers;
	 * AF_UNIX (nscd's probe) and NETLINK_ROUTE (AI_ADDRCONFIG) get
	 * EACCES and glibc falls back (seccomp.c socket_rules); no Unix
	 * socket can be created, so connect reaches no local service */
	{ "bind", POL_ALLOW, POL_ARG_NONE },	/* glibc's resolver binds
						 * its UDP socket */
	{ "connect", POL_ALLOW, POL_ARG_NONE },
	/* glibc's resolver sends the A and AAAA queries in one sendmmsg:
	 * without it a kubeconfig host name killed the publisher
	 * (tests/e2e/faults.test.js, the DNS fault) */
	{ "sendmmsg", POL_ALLOW, POL_ARG_NONE },
	{ "socket", POL_ALLOW, POL_ARG_SOCKET_INET },
	/* one-off: curl's wakeup pair (stream only: a datagram pair
	 * could sendto(2) any datagram socket by path) */
	{ "socketpair", POL_ALLOW, POL_ARG_SOCKETPAIR_STREAM },

	/* files: config, token, CA and certificates; /etc/resolv.conf,
	 * /etc/hosts, /etc/nsswitch.conf for getaddrinfo */
	{ "access", POL_ALLOW, POL_ARG_NONE },
	{ "faccessat", POL_ALLOW, POL_ARG_NONE },
	{ "faccessat2", POL_ALLOW, POL_ARG_NONE },
	{ "fstat", POL_ALLOW, POL_ARG_NONE },
	{ "getdents64", POL_ALLOW, POL_ARG_NONE },	/* OpenSSL CA
							 * directories */
	{ "lseek", POL_ALLOW, POL_ARG_NONE },
	{ "lstat", POL_ALLOW, POL_ARG_NONE },
	{ "newfstatat", POL_ALLOW, POL_ARG_NONE },
	{ "open", POL_ALLOW, POL_ARG_NONE },
	{ "openat", POL_ALLOW, POL_ARG_NONE },
	{ "pread64", POL_ALLOW, POL_ARG_NONE },
	{ "readlink", POL_ALLOW, POL_ARG_NONE },
	{ "stat", POL_ALLOW, POL_ARG_NONE },
	{ "statx", POL_ALLOW, POL_ARG_NONE },

	/* fds */
	{ "dup", POL_ALLOW, POL_ARG_NONE },
	{ "dup3", POL_ALLOW, POL_ARG_NONE },
};

/*
 * The broker (supervisor/): a poll loop over sockets it was given, the
 * CDI directory read and watched, the metadata directory written; no
 * process, socket or exec of its own. Its CDI specs are written by the
 * monitor from a sealed memfd (monitor/cdi_put.c).
 */
static const struct pol_rule broker[] = {
	/* signals: SIGTERM from the monitor */
	{ "signalfd4", POL_ALLOW, POL_ARG_NONE },

	/* ids, in its log lines */
	{ "getegid", POL_ALLOW, POL_ARG_NONE },
	{ "geteuid", POL_ALLOW, POL_ARG_NONE },
	{ "getgid", POL_ALLOW, POL_ARG_NONE },
	{ "getuid", POL_ALLOW, POL_ARG_NONE },

	/* files: read the CDI directory, write the metadata directory */
	{ "dup", POL_ALLOW, POL_ARG_NONE },	/* a directory fd to read
						 * again (metadata.c) */
	{ "fchmod", POL_ALLOW, POL_ARG_NONE },
	{ "fdatasync", POL_ALLOW, POL_ARG_NONE },
	{ "fstat", POL_ALLOW, POL_ARG_NONE },
	{ "fsync", POL_ALLOW, POL_ARG_NONE },
	{ "ftruncate", POL_ALLOW, POL_ARG_NONE },
	{ "getdents64", POL_ALLOW, POL_ARG_NONE },
	{ "lseek", POL_ALLOW, POL_ARG_NONE },
	{ "mkdirat", POL_ALLOW, POL_ARG_NONE },
	{ "newfstatat", POL_ALLOW, POL_ARG_NONE },
	{ "openat", POL_ALLOW, POL_ARG_NONE },
	{ "pread64", POL_ALLOW, POL_ARG_NONE },
	{ "renameat", POL_ALLOW, POL_ARG_NONE },
	{ "renameat2", POL_ALLOW, POL_ARG_NONE },
	{ "unlinkat", POL_ALLOW, POL_ARG_NONE },
	{ "inotify_add_watch", POL_ALLOW, POL_ARG_NONE },
	{ "inotify_init1", POL_ALLOW, POL_ARG_NONE },
	{ "inotify_rm_watch", POL_ALLOW, POL_ARG_NONE },

	/* the content of a spec and the driver's state, to the monitor */
	{ "memfd_create", POL_ALLOW, POL_ARG_NONE },
};

/*
 * The supervisor's needs and what a child does before its own filter. The
 * supervisor's filter is not this table but the union of every table
 * (oci.c pol_union_build): each child inherits it, so it allows whatever
 * any child does too (docs/security.md, "The supervisor's filter").
 */
static const struct pol_rule supervisor[] = {
	/* processes: forking and reaping the children */
	{ "clone", POL_ALLOW, POL_ARG_NONE },
	{ "fork", POL_ALLOW, POL_ARG_NONE },
	{ "getppid", POL_ALLOW, POL_ARG_NONE },
	{ "kill", POL_ALLOW, POL_ARG_NONE },
	{ "setns", POL_ALLOW, POL_ARG_NONE },	/* back from a child's pid ns */
	{ "wait4", POL_ALLOW, POL_ARG_NONE },
	{ "waitid", POL_ALLOW, POL_ARG_NONE },

	/* sockets: the listeners and the channels */
	{ "bind", POL_ALLOW, POL_ARG_NONE },
	{ "listen", POL_ALLOW, POL_ARG_NONE },
	{ "signalfd4", POL_ALLOW, POL_ARG_NONE },
	{ "socket", POL_ALLOW, POL_ARG_NONE },
	{ "socketpair", POL_ALLOW, POL_ARG_NONE },

	/* a child's stdio at fork (children.c child_stdio) */
	{ "dup2", POL_ALLOW, POL_ARG_NONE },

	/* a child's Landlock domain (policy/landlock.c), before its own
	 * filter is loaded: only the pod's profile sees these */
	{ "landlock_add_rule", POL_ALLOW, POL_ARG_NONE },
	{ "landlock_create_ruleset", POL_ALLOW, POL_ARG_NONE },
	{ "landlock_restrict_self", POL_ALLOW, POL_ARG_NONE },

	/* files: socket paths */
	{ "close_range", POL_ALLOW, POL_ARG_NONE },
	{ "fchmod", POL_ALLOW, POL_ARG_NONE },
	{ "fchmodat", POL_ALLOW, POL_ARG_NONE },
	{ "newfstatat", POL_ALLOW, POL_ARG_NONE },
	{ "openat", POL_ALLOW, POL_ARG_NONE },
	{ "umask", POL_ALLOW, POL_ARG_NONE },
	{ "unlink", POL_ALLOW, POL_ARG_NONE },
	{ "unlinkat", POL_ALLOW, POL_ARG_NONE },

	/* files: the state directories it hands to the nodeserver and the
	 * CDI specs it writes for it (supervisor/files.c) */
	{ "fchown", POL_ALLOW, POL_ARG_NONE },
	{ "fdatasync", POL_ALLOW, POL_ARG_NONE },
	{ "fsync", POL_ALLOW, POL_ARG_NONE },
	{ "getdents64", POL_ALLOW, POL_ARG_NONE },
	{ "mkdirat", POL_ALLOW, POL_ARG_NONE },
	{ "renameat", POL_ALLOW, POL_ARG_NONE },
	{ "renameat2", POL_ALLOW, POL_ARG_NONE },
	/* watching the socket directories (repair.c) and the CDI directory
	 * (cdi_watch.c) */
	{ "inotify_add_watch", POL_ALLOW, POL_ARG_NONE },
	{ "inotify_init1", POL_ALLOW, POL_ARG_NONE },

	/* the children's libraries, mapped before their sandbox (dlopen of
	 * libcurl, libmicrohttpd) */
	{ "access", POL_ALLOW, POL_ARG_NONE },
	{ "pread64", POL_ALLOW, POL_ARG_NONE },

	/* the children's sandbox set-up, which runs before their filter:
	 * ids are read to decide the user switch (policy.c, caps.c) */
	{ "capget", POL_ALLOW, POL_ARG_NONE },
	{ "getegid", POL_ALLOW, POL_ARG_NONE },
	{ "geteuid", POL_ALLOW, POL_ARG_NONE },
	{ "getgid", POL_ALLOW, POL_ARG_NONE },
	{ "getuid", POL_ALLOW, POL_ARG_NONE },
	{ "capset", POL_ALLOW, POL_ARG_NONE },
	{ "chdir", POL_ALLOW, POL_ARG_NONE },
	/* the publisher's check that a credential file it cannot hide
	 * carries no ACL the nodeserver's uid could read it by
	 * (publisher/kcfg_hide.c), before its READY */
	{ "getgroups", POL_ALLOW, POL_ARG_NONE },
	{ "getxattr", POL_ALLOW, POL_ARG_NONE },
	/* the socket files, bound inside their directory's fd (sockets.c) */
	{ "fchdir", POL_ALLOW, POL_ARG_NONE },
	{ "chmod", POL_ALLOW, POL_ARG_NONE },
	{ "chroot", POL_ALLOW, POL_ARG_NONE },
	{ "mkdir", POL_ALLOW, POL_ARG_NONE },
	{ "mount", POL_ALLOW, POL_ARG_NONE },
	{ "prctl", POL_ALLOW, POL_ARG_NONE },	/* NNP, KEEPCAPS, PDEATHSIG */
	{ "rmdir", POL_ALLOW, POL_ARG_NONE },	/* the registrar's root */
	{ "seccomp", POL_ALLOW, POL_ARG_NONE },
	{ "setgroups", POL_ALLOW, POL_ARG_NONE },
	{ "setresgid", POL_ALLOW, POL_ARG_NONE },
	{ "setresuid", POL_ALLOW, POL_ARG_NONE },
	{ "setrlimit", POL_ALLOW, POL_ARG_NONE },
	{ "prlimit64", POL_ALLOW, POL_ARG_NONE },
	{ "unshare", POL_ALLOW, POL_ARG_NONE },

	/* the publisher and the observer, started by exec of the driver's
	 * binary (child_exec.c), up to the role's main: the exec, the
	 * dynamic loader's thread pointer and tid, libcap-ng's constructor
	 * (fstatfs of /proc/sys/kernel/cap_last_cap) */
	{ "arch_prctl", POL_ALLOW, POL_ARG_NONE },
	{ "execve", POL_ALLOW, POL_ARG_NONE },
	{ "fstatfs", POL_ALLOW, POL_ARG_NONE },
	{ "set_tid_address", POL_ALLOW, POL_ARG_NONE },
};

/*
 * The driver process before kp_start(): idling (its start-up, the exec
 * and the loader, is in the supervisor's table: the exec'd children do
 * it too). Only the pod's OCI profile has these.
 */
static const struct pol_rule driver[] = {
	{ "pause", POL_ALLOW, POL_ARG_NONE },
};

#ifdef KP_SANITIZE_SYSCALLS
/*
 * AddressSanitizer and UBSan at run time (as Chromium's sanitizer
 * allowances): the allocator's shadow and quarantine, its internal
 * thread registry, and the reports it writes before dying. Compiled in
 * only when the library is built with KP_SANITIZE.
 */
static const struct pol_rule sanitizer[] = {
	{ "getrlimit", POL_ALLOW, POL_ARG_NONE },
	{ "prlimit64", POL_ALLOW, POL_ARG_NONE },
	{ "sched_getaffinity", POL_ALLOW, POL_ARG_NONE },
};

/*
 * The driver process's own filter (kp_policy_main_confine) in a
 * sanitizer build: LeakSanitizer checks the driver process when it
 * exits (the monitor and the children leave by _exit): a tracer it
 * clones lists the threads with the old getdents (not getdents64) and
 * stops them with ptrace; without them the check fails ("LeakSanitizer
 * has encountered a fatal error") and the driver aborts. Never in the
 * pod's profile (pol_oci_json) or a normal build.
 */
static const struct pol_rule sanitizer_driver[] = {
	{ "getdents", POL_ALLOW, POL_ARG_NONE },
	{ "ptrace", POL_ALLOW, POL_ARG_NONE },
};
#endif

const struct pol_rule *
pol_table_base(size_t *n)
{
	*n = N(base);
	return (base);
}

const struct pol_rule *
pol_table(enum kp_role role, size_t *n)
{
	switch (role) {
	case ROLE_REGISTRAR:
		*n = N(registrar);
		return (registrar);
	case ROLE_NODESERVER:
		*n = N(nodeserver);
		return (nodeserver);
	case ROLE_PUBLISHER:
		*n = N(publisher);
		return (publisher);
	case ROLE_OBSERVER:
		*n = N(observer);
		return (observer);
	case ROLE_SUPERVISOR:
		*n = N(supervisor);
		return (supervisor);
	case ROLE_DRIVER:
		*n = N(driver);
		return (driver);
	case ROLE_BROKER:
		*n = N(broker);
		return (broker);
	default:
		*n = 0;
		return (NULL);
	}
}

/* Rules a sanitizer build adds to every role; none otherwise. */
const struct pol_rule *
pol_table_sanitizer(size_t *n)
{
#ifdef KP_SANITIZE_SYSCALLS
	*n = N(sanitizer);
	return (sanitizer);
#else
	*n = 0;
	return (NULL);
#endif
}

/* Rules a sanitizer build adds to the driver process's own filter. */
const struct pol_rule *
pol_table_sanitizer_driver(size_t *n)
{
#ifdef KP_SANITIZE_SYSCALLS
	*n = N(sanitizer_driver);
	return (sanitizer_driver);
#else
	*n = 0;
	return (NULL);
#endif
}

const char *
pol_role_label(enum kp_role role)
{
	return (ipc_role_name(role));
}
