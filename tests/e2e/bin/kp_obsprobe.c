/*
 * kp_obsprobe.c - attacks from inside the observer's sandbox (issue 14,
 * tests/e2e/observer.test.js). The observer runs no driver code, so
 * there is no hook to attack from; this program builds the observer's
 * sandbox with the library's own policy_apply(ROLE_OBSERVER) (what
 * observer_main() calls, same options, same order) in a forked child and
 * then makes one attempt there, as a compromised observer would:
 *
 *	kp_obsprobe <probe> [arg]
 *
 * probes: tcp-connect PORT (127.0.0.1:PORT), unix-connect PATH,
 * open PATH, ls-root, ptrace, fork, kill-parent, tcp-bind PORT, listen
 * (a TCP socket), accept4, write PATH (create it), ls PATH, mounted PATH
 * (a mount point in /proc/self/mountinfo: SUCCEEDED means covered).
 *
 * KP_PROBE_ROLE=publisher builds the publisher's sandbox instead (it runs
 * no driver code either), with the socket paths of a kubelet directory
 * $KP_PROBE_KUBELET_DIR (plugins_registry/, plugins/<driver>/) when set.
 * KP_PROBE_MODE=off loads no seccomp filter (kp_sandbox_mode OFF; every
 * other step stays), so that the Landlock domain alone answers.
 * Prints one line: "PROBE <probe>: DENIED: <how>" (an errno, or killed
 * by seccomp) or "PROBE <probe>: SUCCEEDED: <what>". Needs root (the
 * sandbox changes uid and chroots); exits 2 when it could not set up.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "kubeletplugin.h"
#include "base/config.h"
#include "ipc/child.h"
#include "policy/policy.h"

static int
attempt(const char *probe, const char *arg, char *out, size_t size)
{
	struct sockaddr_in	 sin;
	struct sockaddr_un	 sun;
	DIR			*d;
	int			 fd, r;

	errno = 0;
	if (strcmp(probe, "tcp-connect") == 0 ||
	    strcmp(probe, "tcp-bind") == 0) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)atoi(arg));	/* test tool */
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
			return (snprintf(out, size, "socket: %s",
			    strerror(errno)), 0);
		r = probe[4] == 'c' ? connect(fd, (struct sockaddr *)&sin,
		    sizeof(sin)) : bind(fd, (struct sockaddr *)&sin,
		    sizeof(sin));
		snprintf(out, size, "%s: %s", probe + 4, r == 0 ? "connected" :
		    strerror(errno));
		return (r == 0);
	}
	if (strcmp(probe, "unix-connect") == 0) {
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", arg);
		if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
			return (snprintf(out, size, "socket: %s",
			    strerror(errno)), 0);
		r = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
		snprintf(out, size, "connect: %s", r == 0 ? "connected" :
		    strerror(errno));
		return (r == 0);
	}
	if (strcmp(probe, "listen") == 0) {
		if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
			return (snprintf(out, size, "socket: %s",
			    strerror(errno)), 0);
		r = listen(fd, 1);
		snprintf(out, size, "listen: %s", r == 0 ? "listening" :
		    strerror(errno));
		return (r == 0);
	}
	if (strcmp(probe, "accept4") == 0) {
		/* Any return means the filter let it run (fd 0 is no
		 * listener): only the seccomp kill denies it. */
		r = accept4(0, NULL, NULL, 0);
		snprintf(out, size, "accept4: ran (%s)", r >= 0 ? "accepted" :
		    strerror(errno));
		return (1);
	}
	if (strcmp(probe, "write") == 0) {
		fd = open(arg, O_WRONLY | O_CREAT | O_EXCL, 0600);
		snprintf(out, size, "create %s: %s", arg, fd >= 0 ? "created" :
		    strerror(errno));
		return (fd >= 0);
	}
	if (strcmp(probe, "ls") == 0) {
		struct dirent	*e;
		int		 n = 0;

		if ((d = opendir(arg)) == NULL)
			return (snprintf(out, size, "opendir %s: %s", arg,
			    strerror(errno)), 0);
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				n++;
		closedir(d);
		snprintf(out, size, "%s has %d entries", arg, n);
		return (n > 0);
	}
	if (strcmp(probe, "mounted") == 0) {
		char	 l[4096], pt[4096];
		FILE	*mf;
		int	 found = 0;

		if ((mf = fopen("/proc/self/mountinfo", "r")) == NULL)
			return (snprintf(out, size, "mountinfo: %s",
			    strerror(errno)), -1);
		while (fgets(l, sizeof(l), mf) != NULL)
			if (sscanf(l, "%*s %*s %*s %*s %4095s", pt) == 1 &&
			    strcmp(pt, arg) == 0)
				found = 1;
		fclose(mf);
		snprintf(out, size, "%s %s", arg, found ? "is covered" :
		    "is not a mount point");
		return (found);
	}
	if (strcmp(probe, "open") == 0) {
		fd = open(arg, O_RDONLY);
		snprintf(out, size, "open %s: %s", arg, fd >= 0 ? "opened" :
		    strerror(errno));
		return (fd >= 0);
	}
	if (strcmp(probe, "ls-root") == 0) {
		struct dirent	*e;
		int		 n = 0;

		if ((d = opendir("/")) == NULL)
			return (snprintf(out, size, "opendir /: %s",
			    strerror(errno)), 0);
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				n++;
		closedir(d);
		snprintf(out, size, "/ has %d entries", n);
		return (n > 0);
	}
	if (strcmp(probe, "ptrace") == 0) {
		r = (int)ptrace(PTRACE_ATTACH, getppid(), NULL, NULL);
		snprintf(out, size, "ptrace: %s", r == 0 ? "attached" :
		    strerror(errno));
		return (r == 0);
	}
	if (strcmp(probe, "fork") == 0) {
		r = fork();
		if (r == 0)
			_exit(0);
		snprintf(out, size, "fork: %s", r > 0 ? "forked" :
		    strerror(errno));
		return (r > 0);
	}
	if (strcmp(probe, "kill-parent") == 0) {
		r = kill((pid_t)atoi(arg), SIGCONT);
		snprintf(out, size, "kill: %s", r == 0 ? "delivered" :
		    strerror(errno));
		return (r == 0);
	}
	snprintf(out, size, "unknown probe");
	return (-1);
}

int
main(int argc, char **argv)
{
	struct kp_options	*o;
	struct child_env	 env;
	const char		*kdir = getenv("KP_PROBE_KUBELET_DIR");
	enum kp_role		 role = ROLE_OBSERVER;
	char			 err[KP_ERROR_SIZE], out[512], line[600];
	char			 p[600];
	int			 ctl[2], logp[2], res[2], status;
	ssize_t			 n;
	pid_t			 pid;

	if (argc < 2 || kp_options_new(&o) != 0 ||
	    kp_driver_name(o, "probe.example.com") != 0)
		return (2);
	if (getenv("KP_PROBE_ROLE") != NULL &&
	    strcmp(getenv("KP_PROBE_ROLE"), "publisher") == 0)
		role = ROLE_PUBLISHER;
	if (getenv("KP_PROBE_MODE") != NULL &&
	    strcmp(getenv("KP_PROBE_MODE"), "off") == 0 &&
	    kp_sandbox_mode(o, KP_SANDBOX_OFF) != 0)
		return (2);
	if (kdir != NULL) {
		snprintf(p, sizeof(p), "%s/plugins_registry/probe.sock", kdir);
		if (kp_registrar_socket_path(o, p) != 0)
			return (2);
		snprintf(p, sizeof(p), "%s/plugins/probe.example.com/dra.sock",
		    kdir);
		if (kp_plugin_socket_path(o, p) != 0)
			return (2);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, ctl) == -1 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, logp) == -1 ||
	    pipe(res) == -1)
		return (2);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		close(ctl[0]);
		close(res[0]);
		memset(&env, 0, sizeof(env));
		env.cfg = o;
		ipc_chan_init(&env.ctl, ctl[1], KP_IPC_CHILD_FRAME);
		env.logfd = logp[1];
		env.listen_fd = -1;
		/* snprintf and write(2), not dprintf (glibc's seeks) */
		if (policy_apply(role, &env, err, sizeof(err)) != 0) {
			snprintf(out, sizeof(out), "SETUP %s", err);
			(void)!write(res[1], out, strlen(out));
			_exit(2);
		}
		n = attempt(argv[1], argc > 2 ? argv[2] : "", out,
		    sizeof(out));
		snprintf(line, sizeof(line), "%s: %s", n == 1 ? "SUCCEEDED" :
		    "DENIED", out);
		(void)!write(res[1], line, strlen(line));
		_exit(0);
	}
	close(res[1]);
	n = read(res[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = '\0';
	(void)waitpid(pid, &status, 0);
	if (strncmp(out, "SETUP", 5) == 0) {
		printf("PROBE %s: ERROR: %s\n", argv[1], out);
		return (2);
	}
	if (out[0] == '\0' && WIFSIGNALED(status) &&
	    WTERMSIG(status) == SIGSYS)
		printf("PROBE %s: DENIED: killed by seccomp (SIGSYS)\n",
		    argv[1]);
	else if (out[0] == '\0' && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 128 + SIGSYS)
		printf("PROBE %s: DENIED: killed by seccomp (exit 159)\n",
		    argv[1]);
	else if (out[0] == '\0')
		printf("PROBE %s: ERROR: status 0x%x\n", argv[1], status);
	else
		printf("PROBE %s: %s\n", argv[1], out);
	kp_options_free(o);
	return (0);
}
