/*
 * events.c - the supervisor's events in the driver process: errors for
 * kp_error_callback() (upstream HandleError) and status changes for
 * kp_status_fd(). The supervisor sends them one way on a socketpair of
 * their own (requests keep theirs); a library thread reads them, calls
 * the driver's error function and makes the status eventfd readable.
 *
 * The thread is the only one the library starts in the driver process.
 * kp_start() of another plugin in the same process does not count it as
 * a driver thread, and forks under fork_lock's write side while this
 * thread holds the read side whenever it runs anything but a wait (the
 * decoding, the driver's function, the logger): the monitor it forks can
 * then never inherit a lock this thread held.
 *
 * Runs in: the driver process.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/api.h"
#include "base/log.h"

static pthread_rwlock_t	 fork_lock = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int	 n_threads;
/* Posted by a new thread once in events_main() (events_start waits). */
static sem_t		 started;

int
events_threads(void)
{
	return (atomic_load(&n_threads));
}

void
events_fork_lock(int lock)
{
	if (lock)
		pthread_rwlock_wrlock(&fork_lock);
	else
		pthread_rwlock_unlock(&fork_lock);
}

static void
dispatch(struct kp_plugin *p, const Kpipc__Event *e)
{
	uint64_t	 one = 1;

	switch (e->kind) {
	case IPC_EVENT_ERROR:
		/* Sent only when the driver set a function (channels.c). */
		if (p->error_fn != NULL)
			p->error_fn(p->error_user, e->code, e->message,
			    e->recoverable);
		break;
	case IPC_EVENT_REGISTRATION:
	case IPC_EVENT_PUBLISH:
		/* An eventfd counter: readable until read, coalescing. */
		(void)write(p->status_fd, &one, sizeof(one));
		break;
	default:
		break;
	}
}

/*
 * A line of the broker's (its own or a child's) for the driver's log
 * function: the role one of ours, the text sanitised again (the broker
 * parses hostile bytes; its frames are checked here as any other's).
 */
static void
relay_log(const Kpipc__Log *l)
{
	static const char *const roles[] = { "broker", "monitor",
	    "nodeserver", "registrar", "publisher", "observer" };
	const char	*role = roles[0];
	size_t		 i;

	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (strcmp(l->role, roles[i]) == 0)
			role = roles[i];
	log_emit(role, 0, l->level, l->verbosity, l->text);
}

/* Until fd has bytes or is closed: 0; -1 when it cannot be polled. */
static int
wait_readable(int fd)
{
	struct pollfd	 pfd = { .fd = fd, .events = POLLIN };

	while (poll(&pfd, 1, -1) == -1)
		if (errno != EINTR)
			return (-1);
	return (0);
}

static void *
events_main(void *arg)
{
	struct kp_plugin	*p = arg;
	struct ipc_chan		 c;
	Kpipc__Msg		*m;
	char			 err[KP_ERROR_SIZE];
	int			 r;

	/* Past the thread's own start-up (a sanitizer's allocations):
	 * from here on a fork can only find it outside fork_lock in a
	 * wait. */
	(void)sem_post(&started);
	ipc_chan_init(&c, p->ev_fd, KP_IPC_SMALL_FRAME);
	/*
	 * Ends when the supervisor closes its end or kp_stop() shuts ours
	 * down. Everything but the wait for the next bytes runs under the
	 * read side of fork_lock, the decoding's and freeing's allocations
	 * too: an allocator whose locks fork does not take (ASan's, before
	 * LLVM 17) would leave the next plugin's monitor waiting forever
	 * on one this thread held (seen: seccomp_load's realloc).
	 */
	for (;;) {
		if (c.rlen == 0 && wait_readable(c.fd) != 0)
			break;
		pthread_rwlock_rdlock(&fork_lock);
		r = ipc_recv(&c, &m, -1, err, sizeof(err));
		if (r == 0) {
			if (m->m_case == KPIPC__MSG__M_EVENT)
				dispatch(p, m->event);
			else if (m->m_case == KPIPC__MSG__M_LOG)
				relay_log(m->log);
			ipc_free(m);
		}
		pthread_rwlock_unlock(&fork_lock);
		if (r != 0)
			break;
	}
	c.fd = -1;	/* closed by events_stop() */
	pthread_rwlock_rdlock(&fork_lock);
	ipc_chan_close(&c);
	pthread_rwlock_unlock(&fork_lock);
	return (NULL);
}

/*
 * Start the thread on fd (the driver's end of the event socketpair,
 * owned from here on). Every signal is blocked in it: the driver's
 * signals stay with the driver's threads.
 */
int
events_start(struct kp_plugin *p, int fd, const struct kp_options *o)
{
	sigset_t	 all, old;
	int		 r;

	p->ev_fd = fd;
	p->error_fn = o->error_fn;
	p->error_user = o->error_user;
	if ((p->status_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1) {
		close(fd);
		p->ev_fd = -1;
		return (KP_EIO);
	}
	sigfillset(&all);
	(void)sem_init(&started, 0, 0);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&p->ev_thread, NULL, events_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		(void)sem_destroy(&started);
		close(p->status_fd);
		close(fd);
		p->status_fd = p->ev_fd = -1;
		return (KP_ENOMEM);
	}
	/* Until it runs: the next kp_start() may fork at once (a thread
	 * still starting may hold an allocator's lock then). */
	while (sem_wait(&started) == -1 && errno == EINTR)
		;
	(void)sem_destroy(&started);
	atomic_fetch_add(&n_threads, 1);
	p->ev_started = 1;
	return (0);
}

/* Called from the event thread itself (its error function)? */
int
events_on_thread(const struct kp_plugin *p)
{
	return (p->ev_started && pthread_equal(pthread_self(), p->ev_thread));
}

/* After the supervisor is gone: end the thread, close both fds. */
void
events_stop(struct kp_plugin *p)
{
	if (p->ev_started) {
		(void)shutdown(p->ev_fd, SHUT_RDWR);
		pthread_join(p->ev_thread, NULL);
		atomic_fetch_sub(&n_threads, 1);
		p->ev_started = 0;
	}
	if (p->ev_fd != -1)
		close(p->ev_fd);
	if (p->status_fd != -1)
		close(p->status_fd);
	p->ev_fd = p->status_fd = -1;
}

int
kp_status_fd(struct kp_plugin *p)
{
	if (p == NULL || p->magic != KP_PLUGIN_MAGIC || p->status_fd == -1)
		return (KP_EINVAL);
	return (p->status_fd);
}
