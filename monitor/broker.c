/*
 * broker.c - the monitor forks and execs the broker once, at start: the
 * process that reads every child's bytes (supervisor/), with the
 * driver's two channels, a control and a files channel to the monitor,
 * and nothing else. The exec (child_exec.c, ipc/role_exec.c) gives it a
 * fresh address space: nothing of the driver's heap or of the monitor's
 * layout. It prepares its directories while it still has the monitor's
 * capabilities, then drops to its own uid, no capability, NO_NEW_PRIVS,
 * Landlock and its own seccomp filter (policy/broker.c) before it reads
 * a child's first frame. The broker is not restarted: it holds the
 * driver's desired state (slices, health, state), which lives nowhere
 * else; its end ends the plugin (monitor.c), as sshd's monitor ends the
 * session when its unprivileged child dies.
 *
 * Runs in: the monitor, and in the new broker until its exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "monitor/monitor.h"

int
broker_spawn(struct mon *mon, int driver_fd, int events_fd, char *err,
    size_t errsize)
{
	int	 ctl[2], files[2];
	pid_t	 pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) == -1)
		goto fail0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    files) == -1) {
		close(ctl[0]);
		close(ctl[1]);
		goto fail0;
	}
	if ((pid = spawn_fork(mon, "broker")) == -1) {
		close(ctl[0]);
		close(ctl[1]);
		close(files[0]);
		close(files[1]);
		goto fail0;
	}
	if (pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		child_set_name("broker");
		/* A fresh address space: nothing of the driver's heap. */
		child_exec_broker(mon, ctl[1], files[1], driver_fd, events_fd);
	}
	close(ctl[1]);
	close(files[1]);
	(void)fcntl(ctl[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(files[0], F_SETFL, O_NONBLOCK);
	mon->ctl = ctl[0];
	mon->files = files[0];
	mon->broker_pid = pid;
	log_info(2, "started broker, pid %d", (int)pid);
	return (0);
fail0:
	snprintf(err, errsize, "monitor: start the broker: %s",
	    strerror(errno));
	return (KP_EIO);
}
