/*
 * repair.c - socket files that repair themselves. A cleanup script,
 * another instance or an operator may remove or replace the DRA or the
 * registration socket file while the plugin runs; kubelet then cannot
 * reach it, and nothing would say so. The supervisor watches both
 * directories (inotify: a name of ours deleted, moved or created; looked
 * at 250 ms later, so that a script removing the whole directory is done
 * rather than fought) and checks the two files' inodes every 10 s (the
 * fallback: a mount over a directory is no inotify event; an overflow is
 * one, and is looked at at once), every second when inotify is missing.
 * A file that is gone or no longer the socket we bound is re-created: a
 * new bind, the child restarted on the new listener (the nodeserver
 * drained first, drain.c), and, after the DRA socket, the registration
 * socket too, so kubelet's plugin watcher sees a new socket, registers
 * again and dials the new endpoint.
 *
 * What is never done: fight another live instance. A live socket at our
 * path (someone accepts connections there) belongs to another instance
 * of the plugin; per-instance socket names keep rolling-update siblings
 * apart, so one at our name took over: we step aside. That, a directory
 * at the path, or a bind that fails (the directory removed, no
 * permission) ends the plugin with a non-zero status and the reason in
 * the termination message (fatal.c): it never stays up unreachable.
 * Only our own two paths are ever looked at, removed or bound, and only
 * in the directories they were first bound in (sockets.c): a path that
 * no longer leads there (the directory renamed away, a symlink in its
 * place) is not repaired; the plugin stops.
 *
 * A listener a child shut down (shutdown(2) refuses every later
 * connection, for good) is repaired the same way, at once:
 * repair_listener_shut(), called from the supervisor's poll of its own
 * copy of each shared listener.
 *
 * Runs in: the monitor.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "monitor/monitor.h"

#define REPAIR_CHECK_MS	1000	/* without inotify on both directories */
#define REPAIR_WATCHED_MS	10000	/* with it: the check is the fallback
					 * for what inotify cannot see (a
					 * mount over a directory); a wake-up
					 * a second of an idle node is not */
#define REPAIR_SETTLE_MS	250	/* after an event, before looking: an
					 * rm -rf of the directory finishes
					 * first (no fight with a cleanup) */
#define REPAIR_MASK	(IN_DELETE | IN_MOVED_FROM | IN_CREATE | \
			    IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF)

/* path's directory and base name, or -1 if path is no file path. */
static int
split(const char *path, char *dir, char *base)
{
	const char	*slash = strrchr(path, '/');

	if (slash == NULL || slash[1] == '\0' ||
	    strlen(path) > KP_SUN_PATH_MAX)
		return (-1);
	if (slash == path)
		snprintf(dir, KP_SUN_PATH_MAX + 1, "/");
	else
		snprintf(dir, KP_SUN_PATH_MAX + 1, "%.*s", (int)(slash - path),
		    path);
	snprintf(base, KP_SUN_PATH_MAX + 1, "%s", slash + 1);
	return (0);
}

static void
watch(struct mon *mon, const char *path)
{
	char	 dir[KP_SUN_PATH_MAX + 1], base[KP_SUN_PATH_MAX + 1];

	if (path == NULL || split(path, dir, base) != 0)
		return;
	if (inotify_add_watch(mon->repair_fd, dir, REPAIR_MASK) == -1) {
		mon->repair_blind = 1;
		log_warn("inotify on %s: the socket file there is checked "
		    "every %d ms only", dir, REPAIR_CHECK_MS);
	}
}

void
repair_init(struct mon *mon)
{
	clock_gettime(CLOCK_MONOTONIC, &mon->repair_next);
	ts_after_ms(&mon->repair_next, REPAIR_CHECK_MS);
	mon->repair_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (mon->repair_fd == -1) {
		mon->repair_blind = 1;
		log_warn("inotify_init1: socket files are checked every "
		    "%d ms only", REPAIR_CHECK_MS);
		return;
	}
	if (mon->plugin_sock.bound)
		watch(mon, mon->plugin_sock.path);
	/* Bound later (supervisor.c), by the same rules. */
	if (mon->cfg->registrar_listener == -1)
		watch(mon, mon->cfg->registrar_socket_path);
}

/* Does an event name one of our files? Anything else is not ours. */
static int
ours(const struct mon *mon, const char *name)
{
	char		 dir[KP_SUN_PATH_MAX + 1], base[KP_SUN_PATH_MAX + 1];
	const char	*paths[2] = { mon->plugin_sock.path,
			    mon->cfg->registrar_socket_path };
	int		 i;

	for (i = 0; i < 2; i++)
		if (paths[i] != NULL && split(paths[i], dir, base) == 0 &&
		    strcmp(base, name) == 0)
			return (1);
	return (0);
}

void
repair_read(struct mon *mon)
{
	char			 buf[4096]
				    __attribute__((aligned(__alignof__(
				    struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t			 n;
	size_t			 off;

	while ((n = read(mon->repair_fd, buf, sizeof(buf))) > 0)
		for (off = 0; off + sizeof(*ev) <= (size_t)n;
		    off += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			if ((ev->mask & (IN_Q_OVERFLOW | IN_IGNORED |
			    IN_DELETE_SELF | IN_MOVE_SELF)) ||
			    (ev->len > 0 && ours(mon, ev->name))) {
				if (!mon->repair_pending) {
					clock_gettime(CLOCK_MONOTONIC,
					    &mon->repair_next);
					ts_after_ms(&mon->repair_next,
					    REPAIR_SETTLE_MS);
				}
				mon->repair_pending = 1;
			}
		}
}

/* Which listener s is (MON_SOCKET's role). */
static int
which_of(const struct mon *mon, const struct sup_socket *s)
{
	return (s == &mon->reg_sock ? SUP_LISTEN_REG : SUP_LISTEN_DRA);
}

/* Bind s again at its path; 0, or fatal. what: "DRA", "registration". */
static int
rebind(struct mon *mon, struct sup_socket *s, const char *what)
{
	struct sup_socket	 n;
	struct stat		 st;
	char			 err[KP_ERROR_SIZE];
	const char		*path = s->path;

	if (sock_listen_again(&n, s, mon->cfg->socket_mode, err,
	    sizeof(err)) != 0) {
		/* Raced: a directory appeared since check() looked. */
		if (fstatat(s->dirfd, s->base, &st, AT_SYMLINK_NOFOLLOW) ==
		    0 && S_ISDIR(st.st_mode)) {
			mon_fatal(mon, "%s socket %s was replaced by a "
			    "directory; not removing it", what, path);
			return (-1);
		}
		mon_tell(mon, MON_SOCKET, which_of(mon, s), 0, MON_SOCK_LOST,
		    "the %s "
		    "socket %s is gone and cannot be re-created: %s", what,
		    path, err);
		mon_fatal(mon, "%s socket %s is gone and cannot be "
		    "re-created: %s", what, path, err);
		return (-1);
	}
	/* Not sock_remove(): the file at path is the new one. */
	sock_close(s);
	*s = n;
	return (0);
}

/*
 * Is s still the file we bound? 0: yes or repaired; -1: fatal (said).
 * Returns 1 when it was re-created.
 */
static int
check(struct mon *mon, struct sup_socket *s, const char *what)
{
	struct stat	 st;
	char		 err[KP_ERROR_SIZE];
	int		 r;

	if (s->fd == -1 || !s->bound || s->path == NULL)
		return (0);
	/*
	 * The path must still lead to the directory we bound in: a
	 * directory renamed away and a symlink (or another directory) in
	 * its place would make a repair remove and bind in a directory
	 * that is not ours. That is not repaired: the plugin stops.
	 */
	if ((r = sock_dir_same(s, err, sizeof(err))) == KP_ENOENT) {
		mon_tell(mon, MON_SOCKET, which_of(mon, s), 0, MON_SOCK_LOST,
		    "the %s "
		    "socket %s is gone and cannot be re-created: %s", what,
		    s->path, err);
		mon_fatal(mon, "%s socket %s is gone and cannot be "
		    "re-created: %s", what, s->path, err);
		return (-1);
	} else if (r != 0) {
		mon_tell(mon, MON_SOCKET, which_of(mon, s), 0, MON_SOCK_LOST,
		    "the %s "
		    "socket %s: %s", what, s->path, err);
		mon_fatal(mon, "%s socket %s: %s; not repairing it there",
		    what, s->path, err);
		return (-1);
	}
	if (fstatat(s->dirfd, s->base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISSOCK(st.st_mode) && st.st_dev == s->dev &&
		    st.st_ino == s->ino)
			return (0);
		if (S_ISDIR(st.st_mode)) {
			mon_fatal(mon, "%s socket %s was replaced by a "
			    "directory; not removing it", what, s->path);
			return (-1);
		}
		if (S_ISSOCK(st.st_mode) && sock_live(s)) {
			mon_tell(mon, MON_SOCKET, which_of(mon, s), 0, MON_SOCK_LOST,
			    "another live instance serves at the %s socket "
			    "%s; this one steps aside", what, s->path);
			mon_fatal(mon, "%s socket %s: another live instance "
			    "serves there; stepping aside, not fighting it",
			    what, s->path);
			return (-1);
		}
		/* A stale socket, a file, a symbolic link: not serving,
		 * in the way of ours. */
		if (unlinkat(s->dirfd, s->base, 0) == -1 && errno != ENOENT) {
			mon_fatal(mon, "%s socket %s was replaced and cannot "
			    "be removed: %s", what, s->path, strerror(errno));
			return (-1);
		}
		log_warnx("%s socket %s was replaced from outside; "
		    "re-creating it", what, s->path);
	} else if (errno == ENOENT)
		log_warnx("%s socket %s was removed from outside; "
		    "re-creating it", what, s->path);
	else {
		mon_fatal(mon, "%s socket %s cannot be checked: %s", what,
		    s->path, strerror(errno));
		return (-1);
	}
	if (rebind(mon, s, what) != 0)
		return (-1);
	return (1);
}

/*
 * The DRA socket is new: a new registration socket too, so kubelet's
 * plugin watcher registers again and dials the new socket (its
 * connection to the old one may sit in a reconnect backoff). The broker
 * restarts the nodeserver (drained) and the registrar on them.
 */
static void
dra_recreated(struct mon *mon)
{
	char	 err[KP_ERROR_SIZE];

	if (mon->reg_sock.fd == -1 || !mon->reg_sock.bound)
		return;
	if (sock_dir_same(&mon->reg_sock, err, sizeof(err)) != 0) {
		mon_fatal(mon, "registration socket %s: %s; not re-creating "
		    "it there", mon->cfg->registrar_socket_path, err);
		return;
	}
	sock_remove(&mon->reg_sock);
	if (sock_listen(&mon->reg_sock, mon->cfg->registrar_socket_path,
	    mon->cfg->socket_mode, err, sizeof(err)) != 0)
		mon_fatal(mon, "registration socket %s cannot be re-created: "
		    "%s", mon->cfg->registrar_socket_path, err);
}

void
repair_tick(struct mon *mon)
{
	int	 r;

	if (ts_ms_until(&mon->repair_next) > 0)
		return;
	mon->repair_pending = 0;
	clock_gettime(CLOCK_MONOTONIC, &mon->repair_next);
	ts_after_ms(&mon->repair_next, mon->repair_blind ? REPAIR_CHECK_MS :
	    REPAIR_WATCHED_MS);
	if ((r = check(mon, &mon->plugin_sock, "DRA")) < 0)
		return;
	if (r == 1) {
		dra_recreated(mon);
		if (mon->stopping)
			return;
		mon_tell(mon, MON_SOCKET, SUP_LISTEN_DRA, 0,
		    MON_SOCK_RECREATED, "the DRA socket %s was removed or "
		    "replaced from outside and has been re-created",
		    mon->plugin_sock.path);
	}
	if ((r = check(mon, &mon->reg_sock, "registration")) == 1)
		mon_tell(mon, MON_SOCKET, SUP_LISTEN_REG, 0,
		    MON_SOCK_RECREATED, "the registration socket %s was "
		    "removed or replaced from outside and has been "
		    "re-created", mon->reg_sock.path);
}

/*
 * A listener the supervisor shares with one child was shut down
 * (supervisor.c polls each for POLLRDHUP/POLLHUP): every connect() is
 * refused from now on, for this child and every later one, and nothing
 * undoes a shutdown on that socket. Only the holder and this process
 * have the description (the driver closed its copy in kp_start(), unless
 * it gave the listener itself): the holder broke it. It is killed for the
 * violation, a new socket is bound in the same directory and renamed
 * over the path (the file never disappears), and the next generation
 * gets the new fd. A listener the driver gave (kp_*_listener) cannot be
 * bound again by us: the plugin stops, saying why, rather than stay up
 * unreachable.
 */
void
repair_listener_shut(struct mon *mon, int which)
{
	static const char *const what[SUP_LISTENERS] = { "DRA",
	    "registration", "HTTP (kp_http_endpoint)" };
	static const enum kp_role holder[SUP_LISTENERS] = { ROLE_NODESERVER,
	    ROLE_REGISTRAR, ROLE_OBSERVER };
	struct sup_socket	*s = which == SUP_LISTEN_DRA ? &mon->plugin_sock :
				    which == SUP_LISTEN_REG ? &mon->reg_sock : NULL;
	struct mon_child	*c = &mon->children[holder[which]];
	char			 err[KP_ERROR_SIZE];

	log_errorx("the %s listening socket%s%s was shut down: every "
	    "connection is refused; re-creating it", what[which],
	    s != NULL && s->path != NULL ? " " : "",
	    s != NULL && s->path != NULL ? s->path : "");
	/* The holder broke it: killed here, at once; the broker counts
	 * the violation and restarts it (MON_SOCK_SHUT). */
	if (c->pid > 0)
		(void)kill(c->pid, SIGKILL);
	if (mon->stopping)
		return;
	if (which == SUP_LISTEN_HTTP) {
		if (sock_tcp_again(&mon->http_fd, &mon->cfg->http_addr,
		    mon->cfg->http_len, err, sizeof(err)) != 0)
			mon_fatal(mon, "the %s listening socket was shut down "
			    "and cannot be re-created: %s", what[which], err);
		else
			mon_tell(mon, MON_SOCKET, which, c->pid, MON_SOCK_SHUT,
			    "the %s listening socket was shut down by the %s "
			    "(a violation; killed) and has been re-created",
			    what[which], c->name);
		return;
	}
	if (!s->bound || s->path == NULL) {
		mon_tell(mon, MON_SOCKET, which, c->pid, MON_SOCK_LOST,
		    "the %s "
		    "listening socket the driver gave was shut down by the %s "
		    "and cannot be re-created", what[which], c->name);
		mon_fatal(mon, "the %s listening socket the driver gave was "
		    "shut down by the %s: it refuses every connection and "
		    "cannot be bound again here", what[which], c->name);
		return;
	}
	if (rebind(mon, s, what[which]) != 0)
		return;
	if (which == SUP_LISTEN_DRA)
		dra_recreated(mon);
	mon_tell(mon, MON_SOCKET, which, c->pid, MON_SOCK_SHUT, "the %s "
	    "socket %s was shut down by the %s (a violation; killed) and has "
	    "been re-created", what[which], s->path, c->name);
}

/* Milliseconds until repair_tick() has work; -1: none (not running). */
long long
repair_next_ms(struct mon *mon)
{
	if (!mon->running || mon->stopping)
		return (-1);
	return (ts_ms_until(&mon->repair_next));
}

void
repair_close(struct mon *mon)
{
	if (mon->repair_fd != -1)
		close(mon->repair_fd);
	mon->repair_fd = -1;
}

/*
 * The socket check /healthz rests on, once a second: is the file at the
 * path still the socket we bound, and does that socket take connections
 * (not shut down)? repair_tick() re-creates a removed or dead-replaced
 * socket within its interval and a shut-down one at once, so a failure
 * shows at most until then: a safety net should repair be delayed or
 * fail without stopping the plugin. No connect(): it would cost the
 * child an accept a second. The broker hears of each change
 * (MON_SOCK_OK, MON_SOCK_BAD).
 */
void
repair_check_sockets(struct mon *mon)
{
	const struct sup_socket	*socks[2] = { &mon->plugin_sock,
				    &mon->reg_sock };
	const struct sup_socket	*s;
	struct stat		 sb;
	char			 why[KP_ERROR_SIZE];
	int			 i;

	for (i = 0; i < 2; i++) {
		s = socks[i];
		why[0] = '\0';
		if (s->fd == -1 || s->path == NULL || !s->created)
			continue;
		if ((s->dir_open ? fstatat(s->dirfd, s->base, &sb,
		    AT_SYMLINK_NOFOLLOW) : lstat(s->path, &sb)) == -1)
			snprintf(why, sizeof(why), "socket %s is missing",
			    s->path);
		else if (!S_ISSOCK(sb.st_mode) || sb.st_dev != s->dev ||
		    sb.st_ino != s->ino)
			snprintf(why, sizeof(why), "socket %s is no longer the "
			    "one the plugin bound", s->path);
		else if (sock_refuses(s->fd))
			snprintf(why, sizeof(why), "socket %s refuses "
			    "connections (its listening socket was shut down)",
			    s->path);
		if (mon->sock_ok[i] == (why[0] == '\0') &&
		    strcmp(mon->sock_why[i], why) == 0)
			continue;
		mon->sock_ok[i] = why[0] == '\0';
		snprintf(mon->sock_why[i], sizeof(mon->sock_why[i]), "%s", why);
		mon_tell(mon, MON_SOCKET, i, 0, why[0] == '\0' ? MON_SOCK_OK :
		    MON_SOCK_BAD, "%s", why);
	}
}
