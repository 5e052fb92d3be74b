/*
 * repair.c - socket files that repair themselves. A cleanup script,
 * another instance or an operator may remove or replace the DRA or the
 * registration socket file while the plugin runs; kubelet then cannot
 * reach it, and nothing would say so. The supervisor watches both
 * directories (inotify: a name of ours deleted, moved or created; looked
 * at 250 ms later, so that a script removing the whole directory is done
 * rather than fought) and checks the two files' inodes every second (the
 * fallback: inotify may be unavailable or overflow). A file that is gone
 * or no longer the socket we bound is re-created: a new bind, the child
 * restarted on the new listener (the nodeserver drained first,
 * drain.c), and, after the DRA socket, the registration socket too, so
 * kubelet's plugin watcher sees a new socket, registers again and dials
 * the new endpoint.
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
 * Runs in: the supervisor.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/log.h"
#include "supervisor/supervisor.h"

#define REPAIR_CHECK_MS	1000
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
watch(struct sup *sup, const char *path)
{
	char	 dir[KP_SUN_PATH_MAX + 1], base[KP_SUN_PATH_MAX + 1];

	if (path == NULL || split(path, dir, base) != 0)
		return;
	if (inotify_add_watch(sup->repair_fd, dir, REPAIR_MASK) == -1)
		log_warn("inotify on %s: the socket file there is checked "
		    "every %d ms only", dir, REPAIR_CHECK_MS);
}

void
repair_init(struct sup *sup)
{
	clock_gettime(CLOCK_MONOTONIC, &sup->repair_next);
	ts_after_ms(&sup->repair_next, REPAIR_CHECK_MS);
	sup->repair_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (sup->repair_fd == -1) {
		log_warn("inotify_init1: socket files are checked every "
		    "%d ms only", REPAIR_CHECK_MS);
		return;
	}
	if (sup->plugin_sock.bound)
		watch(sup, sup->plugin_sock.path);
	/* Bound later (supervisor.c), by the same rules. */
	if (sup->cfg->registrar_listener == -1)
		watch(sup, sup->cfg->registrar_socket_path);
}

/* Does an event name one of our files? Anything else is not ours. */
static int
ours(const struct sup *sup, const char *name)
{
	char		 dir[KP_SUN_PATH_MAX + 1], base[KP_SUN_PATH_MAX + 1];
	const char	*paths[2] = { sup->plugin_sock.path,
			    sup->cfg->registrar_socket_path };
	int		 i;

	for (i = 0; i < 2; i++)
		if (paths[i] != NULL && split(paths[i], dir, base) == 0 &&
		    strcmp(base, name) == 0)
			return (1);
	return (0);
}

void
repair_read(struct sup *sup)
{
	char			 buf[4096]
				    __attribute__((aligned(__alignof__(
				    struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t			 n;
	size_t			 off;

	while ((n = read(sup->repair_fd, buf, sizeof(buf))) > 0)
		for (off = 0; off + sizeof(*ev) <= (size_t)n;
		    off += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			if ((ev->mask & (IN_Q_OVERFLOW | IN_IGNORED |
			    IN_DELETE_SELF | IN_MOVE_SELF)) ||
			    (ev->len > 0 && ours(sup, ev->name))) {
				if (!sup->repair_pending) {
					clock_gettime(CLOCK_MONOTONIC,
					    &sup->repair_next);
					ts_after_ms(&sup->repair_next,
					    REPAIR_SETTLE_MS);
				}
				sup->repair_pending = 1;
			}
		}
}

/* Bind s again at its path; 0, or fatal. what: "DRA", "registration". */
static int
rebind(struct sup *sup, struct sup_socket *s, const char *what)
{
	struct sup_socket	 n;
	struct stat		 st;
	char			 err[KP_ERROR_SIZE];
	const char		*path = s->path;

	if (sock_listen_again(&n, s, sup->cfg->socket_mode, err,
	    sizeof(err)) != 0) {
		/* Raced: a directory appeared since check() looked. */
		if (fstatat(s->dirfd, s->base, &st, AT_SYMLINK_NOFOLLOW) ==
		    0 && S_ISDIR(st.st_mode)) {
			sup_fatal(sup, "%s socket %s was replaced by a "
			    "directory; not removing it", what, path);
			return (-1);
		}
		sup_event(sup, KPIPC__EVENT_KIND__EVENT_SOCKET_LOST, "the %s "
		    "socket %s is gone and cannot be re-created: %s", what,
		    path, err);
		sup_fatal(sup, "%s socket %s is gone and cannot be "
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
check(struct sup *sup, struct sup_socket *s, const char *what)
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
		sup_event(sup, KPIPC__EVENT_KIND__EVENT_SOCKET_LOST, "the %s "
		    "socket %s is gone and cannot be re-created: %s", what,
		    s->path, err);
		sup_fatal(sup, "%s socket %s is gone and cannot be "
		    "re-created: %s", what, s->path, err);
		return (-1);
	} else if (r != 0) {
		sup_event(sup, KPIPC__EVENT_KIND__EVENT_SOCKET_LOST, "the %s "
		    "socket %s: %s", what, s->path, err);
		sup_fatal(sup, "%s socket %s: %s; not repairing it there",
		    what, s->path, err);
		return (-1);
	}
	if (fstatat(s->dirfd, s->base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISSOCK(st.st_mode) && st.st_dev == s->dev &&
		    st.st_ino == s->ino)
			return (0);
		if (S_ISDIR(st.st_mode)) {
			sup_fatal(sup, "%s socket %s was replaced by a "
			    "directory; not removing it", what, s->path);
			return (-1);
		}
		if (S_ISSOCK(st.st_mode) && sock_live(s)) {
			sup_event(sup, KPIPC__EVENT_KIND__EVENT_SOCKET_LOST,
			    "another live instance serves at the %s socket "
			    "%s; this one steps aside", what, s->path);
			sup_fatal(sup, "%s socket %s: another live instance "
			    "serves there; stepping aside, not fighting it",
			    what, s->path);
			return (-1);
		}
		/* A stale socket, a file, a symbolic link: not serving,
		 * in the way of ours. */
		if (unlinkat(s->dirfd, s->base, 0) == -1 && errno != ENOENT) {
			sup_fatal(sup, "%s socket %s was replaced and cannot "
			    "be removed: %s", what, s->path, strerror(errno));
			return (-1);
		}
		log_warnx("%s socket %s was replaced from outside; "
		    "re-creating it", what, s->path);
	} else if (errno == ENOENT)
		log_warnx("%s socket %s was removed from outside; "
		    "re-creating it", what, s->path);
	else {
		sup_fatal(sup, "%s socket %s cannot be checked: %s", what,
		    s->path, strerror(errno));
		return (-1);
	}
	if (rebind(sup, s, what) != 0)
		return (-1);
	sup_event(sup, KPIPC__EVENT_KIND__EVENT_SOCKET_RECREATED, "the %s "
	    "socket %s was removed or replaced from outside and has been "
	    "re-created", what, s->path);
	return (1);
}

/* The registrar serves the new registration socket: kubelet registers
 * again. */
static void
restart_registrar(struct sup *sup)
{
	struct child	*reg = &sup->children[ROLE_REGISTRAR];

	if (reg->pid > 0)
		child_kill(reg, SIGTERM);
}

/*
 * The DRA socket is new: a new registration too, so kubelet dials the new
 * socket (its connection to the old one may sit in a reconnect backoff).
 * drain: restart the nodeserver on the new listener, draining it.
 */
static void
dra_recreated(struct sup *sup, int drain)
{
	char	 err[KP_ERROR_SIZE];

	if (drain)
		drain_restart(sup, &sup->children[ROLE_NODESERVER]);
	if (sup->reg_sock.fd == -1 || !sup->reg_sock.bound)
		return;
	if (sock_dir_same(&sup->reg_sock, err, sizeof(err)) != 0) {
		sup_fatal(sup, "registration socket %s: %s; not re-creating "
		    "it there", sup->cfg->registrar_socket_path, err);
		return;
	}
	sock_remove(&sup->reg_sock);
	if (sock_listen(&sup->reg_sock, sup->cfg->registrar_socket_path,
	    sup->cfg->socket_mode, err, sizeof(err)) != 0) {
		sup_fatal(sup, "registration socket %s cannot be re-created: "
		    "%s", sup->cfg->registrar_socket_path, err);
		return;
	}
	restart_registrar(sup);
}

void
repair_tick(struct sup *sup)
{
	int	 r;

	if (sup->phase != PHASE_RUNNING)
		return;
	if (ts_ms_until(&sup->repair_next) > 0)
		return;
	sup->repair_pending = 0;
	clock_gettime(CLOCK_MONOTONIC, &sup->repair_next);
	ts_after_ms(&sup->repair_next, REPAIR_CHECK_MS);
	if ((r = check(sup, &sup->plugin_sock, "DRA")) < 0)
		return;
	if (r == 1)
		dra_recreated(sup, 1);
	if ((r = check(sup, &sup->reg_sock, "registration")) == 1)
		restart_registrar(sup);
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
repair_listener_shut(struct sup *sup, int which)
{
	static const char *const what[SUP_LISTENERS] = { "DRA",
	    "registration", "HTTP (kp_http_endpoint)" };
	static const enum kp_role holder[SUP_LISTENERS] = { ROLE_NODESERVER,
	    ROLE_REGISTRAR, ROLE_OBSERVER };
	struct sup_socket	*s = which == SUP_LISTEN_DRA ? &sup->plugin_sock :
				    which == SUP_LISTEN_REG ? &sup->reg_sock : NULL;
	struct child		*c = &sup->children[holder[which]];
	char			 err[KP_ERROR_SIZE];

	log_errorx("the %s listening socket%s%s was shut down: every "
	    "connection is refused; re-creating it", what[which],
	    s != NULL && s->path != NULL ? " " : "",
	    s != NULL && s->path != NULL ? s->path : "");
	if (c->pid > 0 && c->state != CS_STOPPING)
		sup_child_violation(sup, c, "shut down its listening socket");
	if (sup->phase == PHASE_STOPPING)
		return;
	if (which == SUP_LISTEN_HTTP) {
		if (sock_tcp_again(&sup->http_fd, &sup->cfg->http_addr,
		    sup->cfg->http_len, err, sizeof(err)) != 0)
			sup_fatal(sup, "the %s listening socket was shut down "
			    "and cannot be re-created: %s", what[which], err);
		return;
	}
	if (!s->bound || s->path == NULL) {
		sup_event(sup, KPIPC__EVENT_KIND__EVENT_SOCKET_LOST, "the %s "
		    "listening socket the driver gave was shut down by the %s "
		    "and cannot be re-created", what[which], c->name);
		sup_fatal(sup, "the %s listening socket the driver gave was "
		    "shut down by the %s: it refuses every connection and "
		    "cannot be bound again here", what[which], c->name);
		return;
	}
	if (rebind(sup, s, what[which]) != 0)
		return;
	sup_event(sup, KPIPC__EVENT_KIND__EVENT_SOCKET_RECREATED, "the %s "
	    "socket %s was shut down by the %s (a violation; killed) and has "
	    "been re-created", what[which], s->path, c->name);
	if (which == SUP_LISTEN_DRA)
		dra_recreated(sup, 0);
}

/* Milliseconds until repair_tick() has work; -1: none (not running). */
long long
repair_next_ms(struct sup *sup)
{
	if (sup->phase != PHASE_RUNNING)
		return (-1);
	return (ts_ms_until(&sup->repair_next));
}

void
repair_close(struct sup *sup)
{
	if (sup->repair_fd != -1)
		close(sup->repair_fd);
	sup->repair_fd = -1;
}
