/*
 * sigsys.c - the SIGSYS handler of every sandboxed child and the record
 * of the syscalls it denied (DESIGN section 5).
 *
 * A syscall outside the allowlist traps (SCMP_ACT_TRAP): the kernel does
 * not run it and sends SIGSYS to the calling thread. Then either
 *
 *   kill (the registrar and the publisher, whose code is ours, and the
 *   nodeserver in KP_SANDBOX_STRICT): "kp-<role>: seccomp violation:
 *   <name>" on stderr, a pre-encoded Log datagram "<role> killed by
 *   seccomp: <name>" to the supervisor, death by SIGSYS; or
 *
 *   EPERM (the nodeserver in KP_SANDBOX_ENFORCE, where the driver's hooks
 *   run): the syscall's return value in the saved registers becomes
 *   -EPERM, as Chromium's sandbox does (x86_64 RAX, aarch64 x0), and the
 *   handler returns: the caller sees -1/EPERM. The syscall number goes to
 *   this thread's "denied during this hook call" slot (hooks.c reads it
 *   after the hook and names it in the claims' errors and the log) and to
 *   a per-syscall counter. Outside a hook call (a gRPC thread, a thread a
 *   hook started) the handler logs the first denial of each syscall
 *   itself.
 *
 * Async-signal-safe throughout: no malloc, stdio or locks. The names come
 * from a table built before the filter was loaded; the slot is
 * initial-exec TLS (no lazy allocation on first access); the counters are
 * lock-free atomics; only write(2), send(2), sigaction, raise, getpid,
 * the trapped syscall itself again (to die of it, see die()) and _exit
 * are called.
 *
 * What a hook can do against this: nothing that runs the syscall. A hook
 * that installs its own SIGSYS handler gets the trap itself (the syscall
 * was still not executed; it returns whatever that handler leaves in the
 * register: the syscall number, since the kernel rolls the registers
 * back) and the denial goes unrecorded; a hook that blocks or ignores
 * SIGSYS dies of it (the kernel forces a blocked or ignored SIGSYS to its
 * default action). The record is a diagnostic for driver authors, not a
 * security boundary: the hook shares the address space with it.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <ucontext.h>
#include <unistd.h>

#include <seccomp.h>

#include "policy/policy.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP	1	/* si_code of a seccomp trap */
#endif

#if ATOMIC_LONG_LOCK_FREE != 2 || ATOMIC_CHAR_LOCK_FREE != 2
#error "the SIGSYS handler needs lock-free atomics"
#endif

/* The denials of the current hook call on this thread. */
struct denied {
	volatile sig_atomic_t	in_hook;
	volatile sig_atomic_t	n;
	volatile int		nr[POL_DENIED_MAX];
};

/* Written once, before the filter is loaded. */
static const char	*sig_names[POL_NAMES_MAX];
static const char	*sig_role = "?";
static int		 sig_logfd = -1;
static int		 sig_eperm;	/* 1: return EPERM, 0: kill */

static __thread struct denied	 tls_denied
    __attribute__((tls_model("initial-exec")));
static atomic_ulong	 counts[POL_NAMES_MAX + 1];	/* last: others */
static atomic_ulong	 logged_at[POL_NAMES_MAX + 1];	/* hooks.c lines */
static atomic_uchar	 reported[POL_NAMES_MAX + 1];	/* handler lines */

static int
slot(int nr)
{
	return (nr >= 0 && nr < POL_NAMES_MAX ? nr : POL_NAMES_MAX);
}

/*
 * Resolve the names the handler prints (allocation: before the filter),
 * and choose what a trap does: eperm 1 returns EPERM, 0 kills.
 */
void
pol_sigsys_setup(const char *role, int logfd, int eperm)
{
	int	 nr;

	sig_role = role;
	sig_logfd = logfd;
	sig_eperm = eperm;
	for (nr = 0; nr < POL_NAMES_MAX; nr++)
		if (sig_names[nr] == NULL)
			sig_names[nr] = seccomp_syscall_resolve_num_arch(
			    SCMP_ARCH_NATIVE, nr);	/* kept for life */
}

/* The name of native syscall nr, or NULL; async-signal-safe. */
const char *
pol_sigsys_name(int nr)
{
	return (nr >= 0 && nr < POL_NAMES_MAX ? sig_names[nr] : NULL);
}

/* Async-signal-safe string helpers. */
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
	const char	*n = pol_sigsys_name(nr);

	if (n != NULL)
		return (put(d, o, cap, n));
	o = put(d, o, cap, "syscall #");
	return (put_num(d, o, cap, (unsigned long)(unsigned)nr));
}

/*
 * A kpipc.Msg { log = 11: Log { level = 1, text = 3 } } encoded by hand:
 * no allocation, no locks. text is < 120 bytes, so each length is one
 * varint byte.
 */
static void
log_send(enum kp_log_level level, const char *text, size_t len)
{
	uint8_t	 d[128];

	if (sig_logfd == -1 || len > sizeof(d) - 6)
		return;
	d[0] = 0x5a;			/* field 11, length-delimited */
	d[1] = (uint8_t)(len + 4);
	d[2] = 0x08;			/* Log.level: field 1, varint */
	d[3] = (uint8_t)level;
	d[4] = 0x1a;			/* Log.text: field 3 */
	d[5] = (uint8_t)len;
	memcpy(d + 6, text, len);
	(void)send(sig_logfd, d, len + 6, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Set the interrupted syscall's return value; -1 on an unknown layout. */
static int
set_return(void *uctx, long v)
{
	ucontext_t	*uc = uctx;

#if defined(__x86_64__)
	uc->uc_mcontext.gregs[REG_RAX] = v;
	return (0);
#elif defined(__aarch64__)
	uc->uc_mcontext.regs[0] = (unsigned long long)v;
	return (0);
#else
	(void)uc;
	(void)v;
	return (-1);	/* no EPERM mode here: a trap kills */
#endif
}

/* Count and record a denial that returned EPERM. */
static void
record(int nr)
{
	struct denied	*d = &tls_denied;
	char		 text[112];
	sig_atomic_t	 i;
	size_t		 o;

	atomic_fetch_add_explicit(&counts[slot(nr)], 1, memory_order_relaxed);
	if (d->in_hook) {
		for (i = 0; i < d->n; i++)
			if (d->nr[i] == nr)
				return;
		if (d->n < POL_DENIED_MAX) {
			d->nr[d->n] = nr;
			d->n = d->n + 1;
		}
		return;
	}
	/* Outside a hook call no one else will say it: once per syscall. */
	if (atomic_exchange(&reported[slot(nr)], 1) != 0)
		return;
	if (sig_logfd == -1) {
		/* The supervisor's own filter: no log channel above it,
		 * its stderr (one write, as base/log.c). */
		o = put(text, 0, sizeof(text) - 1, "kp-");
		o = put(text, o, sizeof(text) - 1, sig_role);
		o = put(text, o, sizeof(text) - 1, ": seccomp denied ");
		o = put_name(text, o, sizeof(text) - 1, nr);
		o = put(text, o, sizeof(text) - 1, " (EPERM)");
		text[o++] = '\n';
		(void)!write(STDERR_FILENO, text, o);
		return;
	}
	o = put(text, 0, sizeof(text), "sandbox denied ");
	o = put_name(text, o, sizeof(text), nr);
	o = put(text, o, sizeof(text), " (EPERM) outside a hook call");
	log_send(KP_LOG_WARNING, text, o);
}

/* The trapped syscall again, with its arguments, so that the filter
 * traps it the same way (an argument rule included). */
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

/* Report a violation and die of SIGSYS. */
static void
die(int nr, int seccomp, void *uctx)
{
	struct sigaction	 dfl;
	char			 line[128], text[112];
	size_t			 o;

	o = put(line, 0, sizeof(line) - 1, "kp-");
	o = put(line, o, sizeof(line) - 1, sig_role);
	o = put(line, o, sizeof(line) - 1, seccomp ?
	    ": seccomp violation: " : ": SIGSYS not from seccomp");
	if (seccomp)
		o = put_name(line, o, sizeof(line) - 1, nr);
	line[o++] = '\n';
	(void)!write(STDERR_FILENO, line, o);

	if (seccomp) {
		o = put(text, 0, sizeof(text), sig_role);
		o = put(text, o, sizeof(text), " killed by seccomp: ");
		o = put_name(text, o, sizeof(text), nr);
		log_send(KP_LOG_ERROR, text, o);
	}

	/*
	 * Die of SIGSYS. Every child is pid 1 of its pid namespace, and an
	 * init ignores a default-action signal it sends itself: raise()
	 * would not kill it. A seccomp trap's own SIGSYS is forced, and with
	 * SIG_DFL the kernel clears the init's immunity: so the trapped
	 * syscall is made again. raise() covers a SIGSYS that seccomp did
	 * not send (outside a pid namespace it kills on return).
	 */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	(void)sigaction(SIGSYS, &dfl, NULL);
	if (seccomp)
		trap_again(nr, uctx);
	(void)raise(SIGSYS);
	/* Pid 1 of its own pid namespace drops a default-action signal it
	 * sends itself (SIGNAL_UNKILLABLE): it would carry on. Exit as a
	 * shell reports a death by SIGSYS. */
	if (getpid() == 1)
		_exit(128 + SIGSYS);
}

void
pol_sigsys(int sig, siginfo_t *si, void *uctx)
{
	int	 saved = errno;

	(void)sig;
	/* Only a seccomp trap has a syscall to fail; a SIGSYS sent with
	 * kill or raise (own process only) is the sender's own end. */
	if (si->si_code != SYS_SECCOMP)
		die(0, 0, uctx);
	else if (sig_eperm && set_return(uctx, -EPERM) == 0)
		record(si->si_syscall);
	else
		die(si->si_syscall, 1, uctx);
	errno = saved;
}

/* A hook call starts on this thread: its denials go to the slot. */
void
pol_denied_begin(void)
{
	tls_denied.n = 0;
	tls_denied.in_hook = 1;
	atomic_signal_fence(memory_order_seq_cst);
}

/*
 * The hook call ended: the distinct syscalls denied during it on this
 * thread (at most max stored in nrs, at most POL_DENIED_MAX kept).
 */
size_t
pol_denied_end(int *nrs, size_t max)
{
	size_t	 i, n;

	atomic_signal_fence(memory_order_seq_cst);
	tls_denied.in_hook = 0;
	n = (size_t)tls_denied.n;
	for (i = 0; i < n && i < max; i++)
		nrs[i] = tls_denied.nr[i];
	tls_denied.n = 0;
	return (n < max ? n : max);
}

/* How often syscall nr was denied with EPERM in this process. */
unsigned long
pol_denied_count(int nr)
{
	return (atomic_load(&counts[slot(nr)]));
}

/*
 * 1 if a log line about syscall nr is due, with the count so far in
 * *count: at the first denial, then each time the count has reached the
 * next power of ten (10, 100, ...), so a hook that keeps calling it stays
 * visible without flooding the log. Each milestone is due once.
 */
int
pol_denied_due(int nr, unsigned long *count)
{
	unsigned long	 c = pol_denied_count(nr), m = 1, last;

	*count = c;
	while (m <= c / 10)
		m *= 10;
	last = atomic_load(&logged_at[slot(nr)]);
	do {
		if (c == 0 || last >= m)
			return (0);
	} while (!atomic_compare_exchange_weak(&logged_at[slot(nr)], &last,
	    m));
	return (1);
}
