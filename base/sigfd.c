/*
 * sigfd.c - the signals of a single-threaded poll loop on a signalfd in
 * its own poll slot: nothing runs in signal context, and a pending signal
 * is seen even while other fds keep poll() busy (ppoll() would not
 * deliver it then). SIGPIPE is ignored: a peer gone is an error return.
 *
 * Runs in: the monitor and the broker; sig_reset_all() in each new
 * child.
 */
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>

#include "base/sigfd.h"

/* sigs[n] blocked, default actions, read from the returned fd (-1). */
int
sigfd_open(const int *sigs, size_t n)
{
	struct sigaction	 sa;
	sigset_t		 set;
	size_t			 i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&set);
	for (i = 0; i < n; i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&set, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &set, NULL);
	return (signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
}

/* A new process's start: every handler back to its default, every
 * signal blocked (each role then takes its own: sigwait, signalfd). */
void
sig_reset_all(void)
{
	struct sigaction	 sa;
	sigset_t		 all;
	int			 s;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (s = 1; s < NSIG; s++)
		(void)sigaction(s, &sa, NULL);
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
}
