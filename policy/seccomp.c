/*
 * seccomp.c - build a role's filter from the tables in syscalls.c while
 * the child is still privileged, load it last; report violations.
 *
 * Enforce: anything not listed traps (SCMP_ACT_TRAP). The SIGSYS handler
 * is async-signal-safe: it looks the name up in a table built before the
 * filter was loaded, writes "kp-<role>: seccomp violation: <name>" to
 * stderr, sends a pre-encoded Log datagram "<role> killed by seccomp:
 * <name>" on the log channel (send(2) is async-signal-safe) and ends the
 * process with SIGSYS, so the supervisor logs the death and restarts it.
 *
 * Complain: anything not listed goes to a user-space listener
 * (SCMP_ACT_NOTIFY) on a thread of the child, which logs the syscall once
 * and lets it run (SECCOMP_USER_NOTIF_FLAG_CONTINUE); without kernel
 * support for that, SCMP_ACT_LOG (the kernel's audit log only).
 */
#include <errno.h>
#include <fcntl.h>
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

#define NAMES_MAX	1024	/* native syscall numbers we can name */

struct pol_filter {
	scmp_filter_ctx	 ctx;
	int		 notify;	/* complain mode via a listener */
	int		 mode;
};

/* Read by the SIGSYS handler and the complain listener; written once,
 * before the filter is loaded. */
static const char	*sig_names[NAMES_MAX];
static const char	*sig_role = "?";
static int		 sig_logfd = -1;
static int		 notify_fd = -1;
static struct seccomp_notif	 *notify_req;
static struct seccomp_notif_resp *notify_resp;
static unsigned char	 notify_seen[NAMES_MAX];

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

static void
names_build(void)
{
	int	 nr;

	for (nr = 0; nr < NAMES_MAX; nr++)
		if (sig_names[nr] == NULL)
			sig_names[nr] = seccomp_syscall_resolve_num_arch(
			    SCMP_ARCH_NATIVE, nr);	/* kept for life */
}

/* Async-signal-safe string helpers for the handler. */
static size_t
put(char *d, size_t o, size_t cap, const char *s)
{
	while (*s != '\0' && o < cap)
		d[o++] = *s++;
	return (o);
}

static size_t
put_num(char *d, size_t o, size_t cap, unsigned long v)
{
	char	 t[24];
	size_t	 n = 0;

	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0 && n < sizeof(t));
	while (n > 0 && o < cap)
		d[o++] = t[--n];
	return (o);
}

static size_t
put_name(char *d, size_t o, size_t cap, int nr)
{
	if (nr >= 0 && nr < NAMES_MAX && sig_names[nr] != NULL)
		return (put(d, o, cap, sig_names[nr]));
	o = put(d, o, cap, "syscall #");
	return (put_num(d, o, cap, (unsigned long)(unsigned)nr));
}

/*
 * A kpipc.Msg { log = 11: Log { level = 1: ERROR (0, omitted), text = 3 } }
 * encoded by hand: no allocation, no locks. text is < 128 bytes, so each
 * length is one varint byte.
 */
static size_t
log_datagram(uint8_t *d, const char *text, size_t len)
{
	d[0] = 0x5a;			/* field 11, length-delimited */
	d[1] = (uint8_t)(len + 2);
	d[2] = 0x1a;			/* Log.text: field 3 */
	d[3] = (uint8_t)len;
	memcpy(d + 4, text, len);
	return (len + 4);
}

/* The trapped syscall again, with its arguments (so that an argument
 * rule traps it the same way). */
static void
trap_again(int nr, void *uctx)
{
#if defined(__x86_64__)
	const greg_t	*g = ((ucontext_t *)uctx)->uc_mcontext.gregs;

	(void)syscall(nr, g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10],
	    g[REG_R8], g[REG_R9]);
#elif defined(__aarch64__)
	const unsigned long long *x = ((ucontext_t *)uctx)->uc_mcontext.regs;

	(void)syscall(nr, x[0], x[1], x[2], x[3], x[4], x[5]);
#else
	(void)uctx;
	(void)syscall(nr, 0, 0, 0, 0, 0, 0);
#endif
}

static void
pol_sigsys(int sig, siginfo_t *si, void *uctx)
{
	struct sigaction	 dfl;
	char			 line[128], text[120];
	uint8_t			 dg[128];
	size_t			 o;
	int			 saved = errno;

	o = put(line, 0, sizeof(line) - 1, "kp-");
	o = put(line, o, sizeof(line) - 1, sig_role);
	o = put(line, o, sizeof(line) - 1, ": seccomp violation: ");
	o = put_name(line, o, sizeof(line) - 1, si->si_syscall);
	line[o++] = '\n';
	(void)!write(STDERR_FILENO, line, o);

	o = put(text, 0, sizeof(text), sig_role);
	o = put(text, o, sizeof(text), " killed by seccomp: ");
	o = put_name(text, o, sizeof(text), si->si_syscall);
	if (sig_logfd != -1)
		(void)send(sig_logfd, dg, log_datagram(dg, text, o),
		    MSG_NOSIGNAL | MSG_DONTWAIT);

	/*
	 * Die of SIGSYS: the default action, then the same syscall again.
	 * Not raise(): every child is pid 1 of its pid namespace, and an
	 * init ignores a signal it sent itself that has no handler, SIGKILL
	 * included. The seccomp trap's own SIGSYS is forced: with SIG_DFL
	 * the kernel clears the init's immunity and unblocks it (it is
	 * blocked inside this handler), so the process dies of it.
	 */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	(void)sigaction(SIGSYS, &dfl, NULL);
	trap_again(si->si_syscall, uctx);
	/* NOTREACHED unless the syscall became allowed meanwhile */
	_exit(128 + SIGSYS);
	errno = saved;
}

/* Complain mode: log each unlisted syscall once, then let it run. */
static void *
pol_listener(void *arg)
{
	struct seccomp_notif		*req = notify_req;
	struct seccomp_notif_resp	*resp = notify_resp;
	char				 name[64];
	size_t				 o;
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
		if (nr >= 0 && nr < NAMES_MAX && notify_seen[nr]++)
			continue;
		o = put_name(name, 0, sizeof(name) - 1, nr);
		name[o] = '\0';
		log_warnx("complain mode: %s made a syscall outside its "
		    "allowlist: %s (pid %d); enforce mode would kill it",
		    sig_role, name, (int)req->pid);
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

#define SECCOMP_NOTIF_IOCTLS	3

/* Add one table rule, with its argument rule. */
static int
rule_add(struct pol_filter *f, const struct pol_rule *r, int nr)
{
	static const unsigned long notif[SECCOMP_NOTIF_IOCTLS] = {
		SECCOMP_IOCTL_NOTIF_RECV, SECCOMP_IOCTL_NOTIF_SEND,
		SECCOMP_IOCTL_NOTIF_ID_VALID
	};
	static const int	 families[] = { AF_UNIX, AF_INET, AF_INET6,
	    AF_NETLINK };
	uint32_t		 act = rule_action(f, r->action);
	size_t			 i;
	int			 e;

	switch (r->arg) {
	case POL_ARG_CLONE_THREAD:
		return (seccomp_rule_add(f->ctx, act, nr, 1,
		    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)));
	case POL_ARG_SELF_TGID:
		return (seccomp_rule_add(f->ctx, act, nr, 1,
		    SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid(), 0)));
	case POL_ARG_NOTIF_IOCTL:
		for (i = 0; i < SECCOMP_NOTIF_IOCTLS; i++)
			if ((e = seccomp_rule_add(f->ctx, act, nr, 1,
			    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
			    notif[i] & 0xffffffffUL))) != 0)
				return (e);
		return (0);
	case POL_ARG_AF_UNIX_INET:
		for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
			if ((e = seccomp_rule_add(f->ctx, act, nr, 1,
			    SCMP_A0(SCMP_CMP_EQ, families[i], 0))) != 0)
				return (e);
		return (0);
	case POL_ARG_PRCTL_NAME:
		if ((e = seccomp_rule_add(f->ctx, act, nr, 1,
		    SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME, 0))) != 0)
			return (e);
		return (seccomp_rule_add(f->ctx, act, nr, 1,
		    SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME, 0)));
	case POL_ARG_EMPTY_PATH:
		if ((e = seccomp_rule_add(f->ctx, act, nr, 1,
		    SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH,
		    AT_EMPTY_PATH))) != 0)
			return (e);
		return (seccomp_rule_add(f->ctx, SCMP_ACT_ERRNO(EACCES), nr, 1,
		    SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, 0)));
	default:
		return (seccomp_rule_add(f->ctx, act, nr, 0));
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
	sig_role = ipc_role_name(role);
	sig_logfd = logfd;
	names_build();
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
