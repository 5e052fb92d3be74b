/*
 * events.c - the supervisor's events in the driver process: errors for
 * kp_error_callback() (upstream HandleError) and status changes for
 * kp_status_fd(). The supervisor sends them one way on a socketpair of
 * their own (requests keep theirs); a library thread reads them, calls
 * the driver's error function and makes the status eventfd readable.
 *
 * The driver process's own errors for the function (pools that
 * kp_publish_resources() leaves out) are queued here (events_note) and
 * called by the same thread, never by the call that found them: the
 * function may call kp_publish_resources() again (upstream 1.38's
 * HandleError may call PublishResources).
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
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/*
 * Until fd has bytes or is closed (1), or notes are queued on nfd (2, or
 * 3 for both); -1 when it cannot be polled.
 */
static int
wait_readable(int fd, int nfd)
{
	struct pollfd	 pfd[2] = { { .fd = fd, .events = POLLIN },
			    { .fd = nfd, .events = POLLIN } };

	while (poll(pfd, 2, -1) == -1)
		if (errno != EINTR)
			return (-1);
	if (pfd[0].revents & POLLNVAL)
		return (-1);
	return ((pfd[0].revents != 0) | (pfd[1].revents & POLLIN ? 2 : 0));
}

/*
 * Queue an error of the driver process for the error function: the event
 * thread calls it. Without a function (or a thread), logged once here, as
 * the default of kp_error_callback() says.
 */
void
events_note(struct kp_plugin *p, int code, const char *fmt, ...)
{
	struct api_note	*n;
	uint64_t	 one = 1;
	va_list		 ap;

	/* A stopping plugin reports nothing more: the error function may
	 * be what keeps publishing, and kp_stop() waits for its thread. */
	if (atomic_load(&p->stopping))
		return;
	if ((n = calloc(1, sizeof(*n))) == NULL)
		return;
	va_start(ap, fmt);
	(void)msg_vfmt(n->text, sizeof(n->text), fmt, ap);
	va_end(ap);
	n->code = code;
	if (p->error_fn == NULL || p->note_fd == -1) {
		log_warnx("%s", n->text);
		free(n);
		return;
	}
	pthread_mutex_lock(&p->note_lock);
	if (p->n_notes >= API_NOTES_MAX) {
		p->notes_dropped++;
		pthread_mutex_unlock(&p->note_lock);
		free(n);
		return;
	}
	*p->notes_tail = n;
	p->notes_tail = &n->next;
	p->n_notes++;
	pthread_mutex_unlock(&p->note_lock);
	(void)write(p->note_fd, &one, sizeof(one));
}

/* Every queued note to the error function, in order; the function runs
 * without note_lock (it may queue more). */
static void
notes_run(struct kp_plugin *p)
{
	struct api_note		*n;
	uint64_t		 v;
	char			 text[KP_ERROR_SIZE];
	unsigned long long	 dropped;

	(void)read(p->note_fd, &v, sizeof(v));
	while (!atomic_load(&p->stopping)) {
		pthread_mutex_lock(&p->note_lock);
		if ((n = p->notes) != NULL) {
			if ((p->notes = n->next) == NULL)
				p->notes_tail = &p->notes;
			p->n_notes--;
		}
		dropped = n == NULL ? p->notes_dropped : 0;
		if (n == NULL)
			p->notes_dropped = 0;
		pthread_mutex_unlock(&p->note_lock);
		if (n == NULL) {
			/* The queue drained: what did not fit, counted. */
			if (dropped > 0) {
				snprintf(text, sizeof(text), "kp_publish_"
				    "resources: %llu more reports of pools "
				    "left out dropped (more than %d waited "
				    "for the error function)", dropped,
				    API_NOTES_MAX);
				p->error_fn(p->error_user, KP_EINVAL, text, 1);
			}
			break;
		}
		p->error_fn(p->error_user, n->code, n->text, 1);
		free(n);
	}
}

static void
notes_free(struct kp_plugin *p)
{
	struct api_note	*n;

	while ((n = p->notes) != NULL) {
		p->notes = n->next;
		free(n);
	}
	p->notes_tail = &p->notes;
	p->n_notes = 0;
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
		if (c.rlen == 0) {
			if ((r = wait_readable(c.fd, p->note_fd)) < 0)
				break;
			if (r & 2) {
				pthread_rwlock_rdlock(&fork_lock);
				notes_run(p);
				pthread_rwlock_unlock(&fork_lock);
			}
			if (!(r & 1))
				continue;
		}
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
	p->notes = NULL;
	p->notes_tail = &p->notes;
	p->note_fd = -1;
	if ((p->status_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1 ||
	    (p->note_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1) {
		if (p->status_fd != -1)
			close(p->status_fd);
		close(fd);
		p->ev_fd = p->status_fd = -1;
		return (KP_EIO);
	}
	pthread_mutex_init(&p->note_lock, NULL);
	sigfillset(&all);
	(void)sem_init(&started, 0, 0);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&p->ev_thread, NULL, events_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		(void)sem_destroy(&started);
		close(p->status_fd);
		close(p->note_fd);
		close(fd);
		pthread_mutex_destroy(&p->note_lock);
		p->status_fd = p->ev_fd = p->note_fd = -1;
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
	if (p->note_fd != -1) {
		close(p->note_fd);
		notes_free(p);
		pthread_mutex_destroy(&p->note_lock);
	}
	p->ev_fd = p->status_fd = p->note_fd = -1;
}

int
kp_status_fd(struct kp_plugin *p)
{
	if (p == NULL || p->magic != KP_PLUGIN_MAGIC || p->status_fd == -1)
		return (KP_EINVAL);
	return (p->status_fd);
}
