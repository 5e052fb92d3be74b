/*
 * serve.c - the serving part every gRPC child shares: create the server,
 * report READY (or StartFailed) to the supervisor, serve on a thread, and
 * stop cleanly on SIGTERM/SIGINT/SIGHUP or when serving fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "rpc/rpc.h"
#include "rpc/serve.h"
#include "ipc/child.h"

struct serve_run {
	struct rpc_server	*srv;
	int			 stop_fd;
	int			 result;
	pthread_t		 main;
};

static void *
serve_thread(void *arg)
{
	struct serve_run	*run = arg;

	run->result = rpc_server_run(run->srv, NULL, run->stop_fd);
	/* Wake the main thread if serving ended on its own. */
	pthread_kill(run->main, SIGUSR1);
	return (NULL);
}

int
rpc_serve_child(struct child_env *env, const struct rpc_config *rc)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__Ready		 ready = KPIPC__READY__INIT;
	struct serve_run	 run;
	pthread_t		 th;
	sigset_t		 set;
	int			 stop[2], sig = 0, r;

	/* Every thread gRPC starts inherits this mask: signals reach
	 * only sigwait() below (DESIGN section 8). */
	sigfillset(&set);
	sigdelset(&set, SIGSYS);	/* seccomp's report (policy/) */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	memset(&run, 0, sizeof(run));
	run.main = pthread_self();
	if (pipe2(stop, O_CLOEXEC) == -1)
		return (child_start_fail(env, KP_EIO, "pipe: %s", strerror(errno)));
	if ((r = rpc_server_new(rc, &run.srv)) != 0) {
		close(stop[0]);
		close(stop[1]);
		return (child_start_fail(env, r, "gRPC server: %s", kp_strerror(r)));
	}
	run.stop_fd = stop[0];
	/* READY goes out before any handler can use the channel. */
	ready.pid = getpid();
	m.m_case = KPIPC__MSG__M_READY;
	m.ready = &ready;
	if (rc->ctl_lock != NULL)
		pthread_mutex_lock(rc->ctl_lock);
	r = ipc_send(&env->ctl, &m);
	if (rc->ctl_lock != NULL)
		pthread_mutex_unlock(rc->ctl_lock);
	if (r != 0 || pthread_create(&th, NULL, serve_thread, &run) != 0) {
		log_warnx("cannot start serving");
		rpc_server_free(run.srv);
		close(stop[0]);
		close(stop[1]);
		return (KP_EXIT_SERVE);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	while (sigwait(&set, &sig) != 0)
		;
	log_info(2, "stopping (%s)", strsignal(sig));
	/* The supervisor removed the registration socket first: kubelet
	 * sends no new work; what it sent already may finish. */
	if (sig == SIGTERM && rc->drain_ms > 0)
		(void)rpc_server_drain(run.srv, rc->drain_ms);
	(void)!write(stop[1], "x", 1);
	pthread_join(th, NULL);
	rpc_server_free(run.srv);
	close(stop[0]);
	close(stop[1]);
	return (run.result == 0 ? KP_EXIT_OK : KP_EXIT_SERVE);
}
