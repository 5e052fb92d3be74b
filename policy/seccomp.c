/*
 * seccomp.c - build a role's filter from the tables in syscalls.c while
 * the child is still privileged, load it last; report violations.
 *
 * Enforce and strict: anything not listed traps (SCMP_ACT_TRAP); the
 * SIGSYS handler (sigsys.c) fails the call with EPERM in the enforcing
 * nodeserver and kills every other role, and the nodeserver in strict
 * mode, with a report to the supervisor.
 *
 * Complain: anything not listed goes to a user-space listener
 * (SCMP_ACT_NOTIFY) on a thread of the child, which logs the syscall once
 * and lets it run (SECCOMP_USER_NOTIF_FLAG_CONTINUE); without kernel
 * support for that, SCMP_ACT_LOG (the kernel's audit log only).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <seccomp.h>

#include "base/log.h"
#include "policy/policy.h"

struct pol_filter {
	scmp_filter_ctx	 ctx;
	int		 notify;	/* complain mode via a listener */
	int		 mode;
};

/* Read by the complain listener; written once, before the filter is
 * loaded. */
static const char	*notify_role = "?";
static int		 notify_fd = -1;
static struct seccomp_notif	 *notify_req;
static struct seccomp_notif_resp *notify_resp;
static unsigned char	 notify_seen[POL_NAMES_MAX];

/* A syscall's native number; -1 for a name libseccomp does not know. */
int
pol_syscall_number(const char *name)
{
	int	 nr;

	if (name == NULL || name[0] == '\0')
		return (-1);
	nr = seccomp_syscall_resolve_name(name);
	return (nr == __NR_SCMP_ERROR ? -1 : nr);
}

/* The name of native syscall nr in buf; 0, or -1 if unknown. */
int
pol_syscall_name(int nr, char *buf, size_t size)
{
	char	*n;

	if ((n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr)) ==
	    NULL)
		return (-1);
	snprintf(buf, size, "%s", n);
	free(n);
	return (0);
}

/* Complain mode: log each unlisted syscall once, then let it run. */
static void *
pol_listener(void *arg)
{
	struct seccomp_notif		*req = notify_req;
	struct seccomp_notif_resp	*resp = notify_resp;
	const char			*name;
	int				 nr;

	/* Only ioctl, send and memory calls here: a syscall outside the
	 * list made by this thread would wait for itself. */
	for (;;) {
		memset(req, 0, sizeof(*req));
		if (seccomp_notify_receive(notify_fd, req) != 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			break;
		}
		memset(resp, 0, sizeof(*resp));
		resp->id = req->id;
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		(void)seccomp_notify_respond(notify_fd, resp);
		nr = req->data.nr;
		if (nr >= 0 && nr < POL_NAMES_MAX && notify_seen[nr]++)
			continue;
		if ((name = pol_sigsys_name(nr)) == NULL)
			name = "(unknown)";
		log_warnx("complain mode: %s made a syscall outside its "
		    "allowlist: %s (#%d, pid %d); enforce mode would %s",
		    notify_role, name, nr, (int)req->pid,
		    strcmp(notify_role, "nodeserver") == 0 ?
		    "fail it with EPERM" : "kill the process");
	}
	return (arg);
}

static uint32_t
violation_action(const struct pol_filter *f)
{
	if (f->mode == KP_SANDBOX_COMPLAIN)
		return (f->notify ? SCMP_ACT_NOTIFY : SCMP_ACT_LOG);
	return (SCMP_ACT_TRAP);
}

static uint32_t
rule_action(const struct pol_filter *f, enum pol_action a)
{
	switch (a) {
	case POL_ALLOW:
		return (SCMP_ACT_ALLOW);
	case POL_EACCES:
		return (SCMP_ACT_ERRNO(EACCES));
	case POL_ENOSYS:
		return (SCMP_ACT_ERRNO(ENOSYS));
	case POL_EPERM:
		return (SCMP_ACT_ERRNO(EPERM));
	default:
		return (violation_action(f));
	}
}

#define SECCOMP_NOTIF_IOCTLS	4	/* and FIONREAD */
#define LOW32		0xffffffffUL	/* an int argument as the kernel
					 * reads it (upper half ignored) */
#define SOCK_TYPE_MASK	0xf		/* socket(2)'s type without
					 * SOCK_NONBLOCK, SOCK_CLOEXEC */
#define FD_MAX		0x7fffffffUL	/* a real fd: not AT_FDCWD, not
					 * negative */
#define CLONE_NEW_ANY	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | \
	CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

/*
 * The fcntl commands allowed (POL_ARG_FCNTL): what our code, glibc,
 * gRPC, libcurl, OpenSSL and the usual hook code use. Not listed, so a
 * violation (EPERM in the nodeserver): F_SETOWN, F_SETOWN_EX, F_SETSIG
 * (signals to any process the uid may signal on I/O, or SIGKILL as the
 * signal), F_SETLEASE, F_NOTIFY (signals on another process's file
 * activity), and the rarely used rest (F_SETPIPE_SZ, write hints).
 * F_SETFL with O_ASYNC stays allowed: without F_SETOWN the open file has
 * no owner (f_owner.pid NULL), and send_sigio() (fs/fcntl.c) signals
 * nobody then; tests/e2e/sandbox.test.js checks that the target lives.
 */
const int pol_fcntl_allowed[] = {
	F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_GETLK, F_SETLK,
	F_SETLKW, F_GETOWN, F_GETSIG, F_GETOWN_EX, F_OFD_GETLK,
	F_OFD_SETLK, F_OFD_SETLKW, F_GETLEASE, F_DUPFD_CLOEXEC,
	F_GETPIPE_SZ, F_ADD_SEALS, F_GET_SEALS
};
const size_t pol_n_fcntl_allowed = sizeof(pol_fcntl_allowed) /
    sizeof(pol_fcntl_allowed[0]);

static const struct scmp_arg_cmp none;	/* an unused comparison */

/* seccomp_rule_add, where an identical rule already there is no error. */
static int
add(struct pol_filter *f, uint32_t act, int nr, unsigned n,
    struct scmp_arg_cmp a, struct scmp_arg_cmp b)
{
	int	 e;

	if (n == 0)
		e = seccomp_rule_add(f->ctx, act, nr, 0);
	else if (n == 1)
		e = seccomp_rule_add(f->ctx, act, nr, 1, a);
	else
		e = seccomp_rule_add(f->ctx, act, nr, 2, a, b);
	return (e == -EEXIST ? 0 : e);
}

/*
 * socket (publisher): TCP and UDP over IPv4 and IPv6 only. AF_UNIX is
 * EACCES, not a violation: glibc probes nscd's socket
 * (/var/run/nscd/socket) on every look-up and falls back to files and DNS
 * when it cannot; AF_NETLINK NETLINK_ROUTE likewise (getaddrinfo with
 * AI_ADDRCONFIG asks for the local addresses and, without an answer,
 * assumes both families). Any other family is a violation.
 */
static int
socket_rules(struct pol_filter *f, uint32_t act, int nr)
{
	static const int	 fam[] = { AF_INET, AF_INET6 };
	static const int	 type[] = { SOCK_STREAM, SOCK_DGRAM };
	size_t			 i, k;
	int			 e;

	for (i = 0; i < sizeof(fam) / sizeof(fam[0]); i++)
		for (k = 0; k < sizeof(type) / sizeof(type[0]); k++)
			if ((e = add(f, act, nr, 2,
			    SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, fam[i]),
			    SCMP_A1(SCMP_CMP_MASKED_EQ, SOCK_TYPE_MASK,
			    type[k]))) != 0)
				return (e);
	if ((e = add(f, SCMP_ACT_ERRNO(EACCES), nr, 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, AF_UNIX), none)) !=
	    0)
		return (e);
	return (add(f, SCMP_ACT_ERRNO(EACCES), nr, 2,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, AF_NETLINK),
	    SCMP_A2(SCMP_CMP_MASKED_EQ, LOW32, NETLINK_ROUTE)));
}

/*
 * newfstatat (registrar): only fstat, i.e. a real fd (not AT_FDCWD, not
 * negative) with AT_EMPTY_PATH; everything else EACCES, as open. The
 * filter cannot read the path string: with AT_EMPTY_PATH and a non-empty
 * path the kernel still resolves it. A relative one resolves against the
 * fd, and the registrar holds no directory fd (ENOTDIR); an absolute one
 * against the root, which as root is an empty removed directory (policy
 * fs.c), so nothing is found. Without root there is no chroot, and such
 * a call stats any host path the uid can reach (metadata, not contents):
 * docs/security.md, "Without root".
 */
static int
fstat_rules(struct pol_filter *f, uint32_t act, int nr)
{
	int	 e;

	if ((e = add(f, act, nr, 2, SCMP_A0(SCMP_CMP_LE, FD_MAX, 0),
	    SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH))) != 0)
		return (e);
	if ((e = add(f, SCMP_ACT_ERRNO(EACCES), nr, 2,
	    SCMP_A0(SCMP_CMP_GT, FD_MAX, 0),
	    SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH))) != 0)
		return (e);
	return (add(f, SCMP_ACT_ERRNO(EACCES), nr, 1,
	    SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, 0), none));
}

/* Add one table rule, with its argument rule. */
static int
rule_add(struct pol_filter *f, const struct pol_rule *r, int nr)
{
	static const unsigned long notif[SECCOMP_NOTIF_IOCTLS] = {
		SECCOMP_IOCTL_NOTIF_RECV, SECCOMP_IOCTL_NOTIF_SEND,
		SECCOMP_IOCTL_NOTIF_ID_VALID, FIONREAD
	};
	uint32_t		 act = rule_action(f, r->action);
	size_t			 i;
	int			 e;

	switch (r->arg) {
	case POL_ARG_CLONE_THREAD:
		/* A thread, and no namespace for it (a driver granted
		 * CAP_SYS_ADMIN could otherwise give one a new mount or
		 * network namespace). */
		return (add(f, act, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ,
		    CLONE_THREAD | CLONE_NEW_ANY, CLONE_THREAD), none));
	case POL_ARG_SELF_TGID:
		/* getpid() here, in the child after its fork: the pid as
		 * the child sees it, also in a pid namespace of its own
		 * (where it is 1). Full 64-bit compare: kill(-1, ...) and
		 * kill(0, ...) (every process, the process group) differ. */
		return (add(f, act, nr, 1,
		    SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid(), 0), none));
	case POL_ARG_NOTIF_IOCTL:
		for (i = 0; i < SECCOMP_NOTIF_IOCTLS; i++)
			if ((e = add(f, act, nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ,
			    LOW32, notif[i] & LOW32), none)) != 0)
				return (e);
		return (0);
	case POL_ARG_SOCKET_INET:
		return (socket_rules(f, act, nr));
	case POL_ARG_SOCKETPAIR_STREAM:
		return (add(f, act, nr, 2,
		    SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, AF_UNIX),
		    SCMP_A1(SCMP_CMP_MASKED_EQ, SOCK_TYPE_MASK, SOCK_STREAM)));
	case POL_ARG_PRCTL_NAME:
		if ((e = add(f, act, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32,
		    PR_SET_NAME), none)) != 0)
			return (e);
		return (add(f, act, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32,
		    PR_GET_NAME), none));
	case POL_ARG_FD_EMPTY_PATH:
		return (fstat_rules(f, act, nr));
	case POL_ARG_FCNTL:
		/* The kernel reads cmd as an unsigned int. */
		for (i = 0; i < pol_n_fcntl_allowed; i++)
			if ((e = add(f, act, nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ,
			    LOW32, (scmp_datum_t)pol_fcntl_allowed[i]),
			    none)) != 0)
				return (e);
		return (0);
	default:
		return (add(f, act, nr, 0, none, none));
	}
}

static int
is_extra(const struct policy_opts *po, enum kp_role role, int nr)
{
	size_t	 i;

	if (role != ROLE_NODESERVER)
		return (0);
	for (i = 0; i < po->n_ns_syscalls; i++)
		if (po->ns_syscalls[i] == nr)
			return (1);
	return (0);
}

/* Add a table; a syscall the driver listed as extra is allowed without
 * the table's argument rule (the driver's explicit choice). */
static int
table_add(struct pol_filter *f, enum kp_role role,
    const struct policy_opts *po, const struct pol_rule *t, size_t n,
    char *err, size_t errsize)
{
	size_t	 i;
	int	 nr, e;

	for (i = 0; i < n; i++) {
		if ((nr = seccomp_syscall_resolve_name(t[i].name)) ==
		    __NR_SCMP_ERROR) {
			snprintf(err, errsize, "seccomp: unknown syscall %s "
			    "in the %s table", t[i].name, ipc_role_name(role));
			return (KP_ESANDBOX);
		}
		if (is_extra(po, role, nr))
			continue;
		if ((e = rule_add(f, &t[i], nr)) != 0 && e != -EEXIST) {
			snprintf(err, errsize, "seccomp: rule for %s: %s",
			    t[i].name, strerror(-e));
			return (KP_ESANDBOX);
		}
	}
	return (0);
}

/*
 * Build role's filter (not loaded). Runs while the child is privileged:
 * it allocates, and resolves the syscall names the SIGSYS handler needs.
 */
int
pol_filter_build(enum kp_role role, const struct policy_opts *po, int logfd,
    struct pol_filter **out, char *err, size_t errsize)
{
	struct pol_filter	*f;
	const struct pol_rule	*t;
	struct pol_rule		 extra;
	size_t			 n, i;
	int			 r, e;

	*out = NULL;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return (KP_ENOMEM);
	f->mode = po->mode;
	f->notify = f->mode == KP_SANDBOX_COMPLAIN &&
	    seccomp_api_get() >= 6;
	notify_role = ipc_role_name(role);
	/* EPERM for the driver's hooks; our own code is killed (its
	 * allowlist is complete, so a violation there is an attack). */
	pol_sigsys_setup(notify_role, logfd, role == ROLE_NODESERVER &&
	    f->mode == KP_SANDBOX_ENFORCE);
	if (f->notify && seccomp_notify_alloc(&notify_req, &notify_resp) != 0)
		f->notify = 0;
	if ((f->ctx = seccomp_init(violation_action(f))) == NULL) {
		free(f);
		snprintf(err, errsize, "seccomp: seccomp_init failed");
		return (KP_ESANDBOX);
	}
	(void)seccomp_attr_set(f->ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS);
	/* All threads get the filter (threads an init hook started). */
	(void)seccomp_attr_set(f->ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (f->mode == KP_SANDBOX_COMPLAIN && !f->notify)
		(void)seccomp_attr_set(f->ctx, SCMP_FLTATR_CTL_LOG, 1);
	t = pol_table_base(&n);
	if ((r = table_add(f, role, po, t, n, err, errsize)) != 0)
		goto fail;
	t = pol_table(role, &n);
	if ((r = table_add(f, role, po, t, n, err, errsize)) != 0)
		goto fail;
	t = pol_table_sanitizer(&n);
	if ((r = table_add(f, role, po, t, n, err, errsize)) != 0)
		goto fail;
	for (i = 0; role == ROLE_NODESERVER && i < po->n_ns_syscalls; i++) {
		extra.name = NULL;
		extra.action = POL_ALLOW;
		extra.arg = POL_ARG_NONE;
		if ((e = rule_add(f, &extra, po->ns_syscalls[i])) != 0 &&
		    e != -EEXIST) {
			snprintf(err, errsize, "seccomp: extra syscall #%d: %s",
			    po->ns_syscalls[i], strerror(-e));
			r = KP_ESANDBOX;
			goto fail;
		}
	}
	*out = f;
	return (0);
fail:
	pol_filter_free(f);
	return (r);
}

/*
 * The supervisor's filter (not loaded): the union of every table
 * (oci.c), so that each child, which inherits it, keeps everything its
 * own filter allows and its set-up before that needs. Outside it a call
 * traps: the supervisor's SIGSYS handler (sigsys.c) fails it with EPERM
 * and logs it once; a child before its sandbox has SIGSYS blocked and
 * dies of it, but for the nodeserver's init hook (policy_init_begin).
 * Complain mode logs (SCMP_ACT_LOG) instead: a child's listener would
 * never see a call the supervisor's filter already refused.
 */
/* The union's rules (oci.c) into f: 0, or KP_ESANDBOX with err set. */
static int
union_rules(struct pol_filter *f, const struct pol_union *u, char *err,
    size_t errsize)
{
	struct pol_rule		 r;
	size_t			 i;
	int			 nr, e;

	for (i = 0; i < u->n; i++) {
		if ((nr = seccomp_syscall_resolve_name(u->e[i].name)) ==
		    __NR_SCMP_ERROR) {
			snprintf(err, errsize, "seccomp: unknown syscall %s "
			    "in the union of the tables", u->e[i].name);
			return (KP_ESANDBOX);
		}
		r.name = u->e[i].name;
		r.action = u->e[i].action;
		r.arg = u->e[i].arg;
		if ((e = rule_add(f, &r, nr)) != 0) {
			snprintf(err, errsize, "seccomp: rule for %s: %s",
			    u->e[i].name, strerror(-e));
			return (KP_ESANDBOX);
		}
	}
	return (0);
}

/*
 * The union of the tables (pol_union_build with flags) as a filter whose
 * default action is what the process can take: the supervisor's traps
 * to its SIGSYS handler (violation_action), the driver process's (eperm)
 * fails the call with EPERM; complain mode logs either way.
 */
static int
union_filter(const struct policy_opts *po, int flags, int eperm,
    struct pol_filter **out, char *err, size_t errsize)
{
	struct pol_filter	*f;
	struct pol_union	*u;
	int			 r;

	*out = NULL;
#ifdef KP_SANITIZE_SYSCALLS
	flags |= POL_UNION_SANITIZER;
#endif
	if (pol_union_build(po, flags, &u) != 0)
		return (KP_ENOMEM);
	if ((f = calloc(1, sizeof(*f))) == NULL) {
		free(u);
		return (KP_ENOMEM);
	}
	f->mode = po->mode == KP_SANDBOX_COMPLAIN ? KP_SANDBOX_COMPLAIN :
	    KP_SANDBOX_ENFORCE;
	if ((f->ctx = seccomp_init(!eperm ? violation_action(f) :
	    f->mode == KP_SANDBOX_COMPLAIN ? SCMP_ACT_LOG :
	    SCMP_ACT_ERRNO(EPERM))) == NULL) {
		free(u);
		free(f);
		snprintf(err, errsize, "seccomp: seccomp_init failed");
		return (KP_ESANDBOX);
	}
	(void)seccomp_attr_set(f->ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS);
	r = union_rules(f, u, err, errsize);
	free(u);
	if (r != 0) {
		pol_filter_free(f);
		return (r);
	}
	*out = f;
	return (0);
}

/*
 * The supervisor's filter (not loaded): the union of every table
 * (oci.c), so that each child, which inherits it, keeps everything its
 * own filter allows and its set-up before that needs. Outside it a call
 * traps: the supervisor's SIGSYS handler (sigsys.c) fails it with EPERM
 * and logs it once; a child before its sandbox has SIGSYS blocked and
 * dies of it, but for the nodeserver's init hook (policy_init_begin).
 * Complain mode logs (SCMP_ACT_LOG) instead: a child's listener would
 * never see a call the supervisor's filter already refused.
 */
int
pol_filter_build_union(const struct policy_opts *po, struct pol_filter **out,
    char *err, size_t errsize)
{
	pol_sigsys_setup("supervisor", -1, 1);
	/* Every syscall of every child passes this filter too; no binary
	 * tree (SCMP_FLTATR_CTL_OPTIMIZE): the kernel's action cache
	 * (5.11+) skips it for every unconditional allow, all but fcntl and
	 * ioctl, and a tree measured no faster (docs/security.md). */
	return (union_filter(po, 0, 0, out, err, errsize));
}

/*
 * The driver process's filter (kp_policy_main_confine; not loaded): the
 * pod's profile (oci.c pol_oci_json) as a filter of the process's own,
 * the same union with POL_UNION_DRIVER, the driver's declared ioctl
 * commands beside the library's, and EPERM for the rest, as the
 * profile's defaultAction: the driver process has no SIGSYS handler of
 * ours, and a trap would kill it. Complain mode logs (SCMP_ACT_LOG) what
 * enforce would refuse. With the sanitizer's rules in a sanitizer build,
 * as the supervisor's.
 */
int
pol_filter_build_main(const struct policy_opts *po, struct pol_filter **out,
    char *err, size_t errsize)
{
	struct pol_filter	*f;
	size_t			 i;
	int			 r, nr;

	if ((r = union_filter(po, POL_UNION_DRIVER, 1, &f, err,
	    errsize)) != 0)
		return (r);
	/* The union keeps ioctl's argument rule when any command is
	 * declared (oci.c); the commands join the library's here. */
	nr = seccomp_syscall_resolve_name("ioctl");
	for (i = 0; r == 0 && i < po->n_main_ioctls; i++)
		if ((r = add(f, SCMP_ACT_ALLOW, nr, 1,
		    SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, po->main_ioctls[i]),
		    none)) != 0) {
			snprintf(err, errsize, "seccomp: ioctl %#x: %s",
			    (unsigned)po->main_ioctls[i], strerror(-r));
			r = KP_ESANDBOX;
		}
	if (r != 0) {
		pol_filter_free(f);
		return (r);
	}
	*out = f;
	return (0);
}

/*
 * Load f on every thread of the process (SCMP_FLTATR_CTL_TSYNC), without
 * the SIGSYS handler or a listener (the driver process's filter is
 * EPERM or log only). nnp: set NO_NEW_PRIVS first (the caller has no
 * CAP_SYS_ADMIN); the kernel gives it to every thread with the filter.
 * A thread that runs a filter of its own the caller's is not an ancestor
 * of cannot be synchronized: nothing is loaded then.
 */
int
pol_filter_load_tsync(struct pol_filter *f, int nnp, char *err,
    size_t errsize)
{
	int	 e;

	if ((e = seccomp_attr_set(f->ctx, SCMP_FLTATR_CTL_TSYNC, 1)) != 0) {
		snprintf(err, errsize, "seccomp: SCMP_FLTATR_CTL_TSYNC: %s",
		    strerror(-e));
		return (KP_ESANDBOX);
	}
	/* NO_NEW_PRIVS by the caller's choice, not libseccomp's default;
	 * the kernel's own error (ESRCH: a thread could not be synced),
	 * not libseccomp's ECANCELED for any. */
	(void)seccomp_attr_set(f->ctx, SCMP_FLTATR_CTL_NNP, 0);
	(void)seccomp_attr_set(f->ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	if (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		snprintf(err, errsize, "PR_SET_NO_NEW_PRIVS: %s",
		    strerror(errno));
		return (KP_ESANDBOX);
	}
	if ((e = seccomp_load(f->ctx)) != 0) {
		snprintf(err, errsize, "seccomp_load (every thread, TSYNC): "
		    "%s%s", strerror(-e), e == -ESRCH ? ": a thread of this "
		    "process runs a seccomp filter of its own, and cannot "
		    "take this one" : "");
		return (KP_ESANDBOX);
	}
	return (0);
}

/* Load the filter: the last step of the sandbox. */
int
pol_filter_load(struct pol_filter *f, char *err, size_t errsize)
{
	struct sigaction	 sa;
	sigset_t		 set;
	pthread_t		 th;
	int			 e;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = pol_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) == -1) {
		snprintf(err, errsize, "sigaction SIGSYS: %s", strerror(errno));
		return (KP_ESANDBOX);
	}
	/* A blocked SIGSYS would kill without the report. */
	sigemptyset(&set);
	sigaddset(&set, SIGSYS);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if ((e = seccomp_load(f->ctx)) != 0) {
		snprintf(err, errsize, "seccomp_load: %s", strerror(-e));
		return (KP_ESANDBOX);
	}
	if (f->notify) {
		if ((notify_fd = seccomp_notify_fd(f->ctx)) < 0) {
			snprintf(err, errsize, "seccomp: no notify fd");
			return (KP_ESANDBOX);
		}
		if (pthread_create(&th, NULL, pol_listener, NULL) != 0) {
			snprintf(err, errsize, "seccomp: listener thread");
			return (KP_ESANDBOX);
		}
		pthread_detach(th);
	}
	return (0);
}

void
pol_filter_free(struct pol_filter *f)
{
	if (f == NULL)
		return;
	if (f->ctx != NULL)
		seccomp_release(f->ctx);
	free(f);
}
