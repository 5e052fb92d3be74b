/*
 * cdi_watch.c - tell the nodeserver when this driver's files in the CDI
 * directory change, so that it can keep a copy of the list (its
 * ns_mirror.c) instead of asking for it: a claim prepared before is
 * answered from the journal only once its CDI spec is known to be there
 * (nodeserver/journal_dra.c), and without the copy that is a CdiList
 * round trip through this process on every such call.
 *
 * One inotify watch on the directory fd opened at start (files.c),
 * through /proc/self/fd so that it is the directory we write in, not
 * whatever the path names now. Every create, rename and removal of a
 * name of this driver (base/names.c, the list's own rule) goes to the
 * nodeserver in a CdiChanged, in inotify's order; those the supervisor
 * made itself for the nodeserver's CdiWrite or CdiRemove are left out
 * (the nodeserver applied them when their CdiReply came; they are
 * matched in order, at most CDI_WATCH_OWN outstanding), unless an event
 * of the same name was sent after the change was made: that one reaches
 * the nodeserver after the reply, so ours must follow it (someone's
 * create still queued when we removed the file would otherwise be the
 * last word, and the copy would name a file that is gone). An overflow of
 * inotify's queue sends reset (the nodeserver lists again); the
 * directory moved ends the watch: list replies then say watched =
 * false, and the nodeserver asks every time, as without inotify. A
 * directory removed (rm -rf) shows as its files' removals (the open fd
 * keeps the directory's own event back); the supervisor makes it again
 * at the next request (files.c) and watches the new one, with a reset.
 * Removals by anyone else are logged, one line per batch. A list is
 * answered only after the events queued before it were sent, so its
 * reply is never older than a change sent after it.
 *
 * Bounded whatever the directory does: one read of at most
 * CDI_WATCH_READS buffers per turn of the poll loop (a flood of events
 * from another process does not keep it here: what is left is dropped
 * with the inotify instance, and the nodeserver lists again), and
 * changes go out only while the nodeserver may hold a copy (from a
 * watched list reply to the next reset) and while its channel holds
 * less than CDI_WATCH_QUEUE unsent bytes; past that it is one reset,
 * not a channel that fills until the nodeserver is killed for not
 * reading it (an init hook that runs long reads nothing).
 *
 * Runs in: the supervisor (its poll loop).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "base/log.h"
#include "base/names.h"
#include "supervisor/supervisor.h"

#define CDI_WATCH_MASK	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | \
			    IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | \
			    IN_ONLYDIR)
#define CDI_WATCH_READS	64		/* 4 KiB reads per turn */
#define CDI_WATCH_QUEUE	(256 * 1024)	/* unsent to the nodeserver */

void
cdi_watch_init(struct sup *sup)
{
	char	 path[64];

	sup->cdi_wfd = -1;
	sup->cdi_own_n = 0;
	if (sup->cdi_fd == -1)
		return;
	if ((sup->cdi_wfd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1) {
		log_warn("inotify_init1: the nodeserver lists the CDI specs "
		    "on every call");
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", sup->cdi_fd);
	if (inotify_add_watch(sup->cdi_wfd, path, CDI_WATCH_MASK) == -1) {
		log_warn("inotify on the CDI directory: the nodeserver lists "
		    "the CDI specs on every call");
		close(sup->cdi_wfd);
		sup->cdi_wfd = -1;
	}
}

void
cdi_watch_close(struct sup *sup)
{
	if (sup->cdi_wfd != -1)
		close(sup->cdi_wfd);
	sup->cdi_wfd = -1;
	sup->cdi_own_n = 0;
}

/* files.c: the directory was made again; watch the new one. */
void
cdi_watch_reopen(struct sup *sup)
{
	cdi_watch_close(sup);
	cdi_watch_init(sup);
	cdi_watch_reset(sup);
}

int
cdi_watch_live(const struct sup *sup)
{
	return (sup->cdi_wfd != -1);
}

/* files.c: the supervisor itself made name present (1) or gone (0). */
void
cdi_watch_own(struct sup *sup, const char *name, int present)
{
	struct sup_cdi_own	*o;

	if (sup->cdi_wfd == -1 || sup->cdi_own_n == CDI_WATCH_OWN)
		return;		/* not matched: sent, which is harmless */
	o = &sup->cdi_own[sup->cdi_own_n++];
	snprintf(o->name, sizeof(o->name), "%s", name);
	o->present = present;
	o->send = 0;
}

/* The event is the oldest of our own: drop it from the list; 1 when it
 * is left unsent. */
static int
own_event(struct sup *sup, const char *name, int present)
{
	int	 send;

	if (sup->cdi_own_n == 0 || sup->cdi_own[0].present != present ||
	    strcmp(sup->cdi_own[0].name, name) != 0)
		return (0);
	send = sup->cdi_own[0].send;
	memmove(&sup->cdi_own[0], &sup->cdi_own[1], (sup->cdi_own_n - 1) *
	    sizeof(sup->cdi_own[0]));
	sup->cdi_own_n--;
	return (!send);
}

/* An event of name goes out: our changes of name still to come were
 * applied before it by the nodeserver, so they go out after it too. */
static void
own_sent(struct sup *sup, const char *name)
{
	size_t	 i;

	for (i = 0; i < sup->cdi_own_n; i++)
		if (strcmp(sup->cdi_own[i].name, name) == 0)
			sup->cdi_own[i].send = 1;
}

static void
send_changes(struct sup *sup, Kpipc__CdiChange *ch, size_t n, int reset)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__CdiChanged	 c = KPIPC__CDI_CHANGED__INIT;
	Kpipc__CdiChange	*p[KP_IPC_MAX_CDI_CHANGES];
	struct child		*ns = &sup->children[ROLE_NODESERVER];
	size_t			 i;

	if (n == 0 && !reset)
		return;
	if (!sup->cdi_copy)
		return;		/* it has none to keep or drop */
	if (!reset && ns->ctl.wlen > CDI_WATCH_QUEUE) {
		log_warnx("CDI directory: the nodeserver has %zu bytes of "
		    "changes unread: it lists the CDI specs again",
		    ns->ctl.wlen);
		n = 0;
		reset = 1;
	}
	if (reset)
		sup->cdi_copy = 0;
	for (i = 0; i < n; i++)
		p[i] = &ch[i];
	c.changes = p;
	c.n_changes = n;
	c.reset = reset;
	m.m_case = KPIPC__MSG__M_CDI_CHANGED;
	m.cdi_changed = &c;
	sup_queue(sup, ns, &m);
}

/* The nodeserver's copy cannot be kept: it lists again. */
void
cdi_watch_reset(struct sup *sup)
{
	sup->cdi_own_n = 0;
	send_changes(sup, NULL, 0, 1);
}

/* Read what inotify has and send it on; at once before a list reply. */
void
cdi_watch_read(struct sup *sup)
{
	char			 buf[4096]
				    __attribute__((aligned(__alignof__(
				    struct inotify_event))));
	char			 names[KP_IPC_MAX_CDI_CHANGES]
				    [NAME_MAX_CDI_SPEC + 1];
	Kpipc__CdiChange	 ch[KP_IPC_MAX_CDI_CHANGES];
	const struct inotify_event *ev;
	size_t			 off, n = 0, removed = 0;
	ssize_t			 len;
	int			 present, reset = 0, gone = 0, reads = 0;

	if (sup->cdi_wfd == -1)
		return;
	while ((len = read(sup->cdi_wfd, buf, sizeof(buf))) > 0) {
		if (++reads > CDI_WATCH_READS) {
			if (sup->cdi_copy)
				log_warnx("CDI directory: more than %d KiB of "
				    "inotify events at once: the nodeserver "
				    "lists the CDI specs again",
				    CDI_WATCH_READS * 4);
			cdi_watch_close(sup);
			cdi_watch_init(sup);
			n = 0;
			reset = 1;
			break;
		}
		for (off = 0; off + sizeof(*ev) <= (size_t)len;
		    off += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			if (ev->mask & IN_Q_OVERFLOW) {
				reset = 1;
				n = 0;
				sup->cdi_own_n = 0;
				continue;
			}
			if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF |
			    IN_IGNORED | IN_UNMOUNT)) {
				gone = 1;
				continue;
			}
			if (ev->len == 0 || reset || !name_is_cdi_spec(
			    sup->cfg->driver_name, ev->name, strlen(ev->name)))
				continue;
			present = (ev->mask & (IN_CREATE | IN_MOVED_TO)) != 0;
			if (own_event(sup, ev->name, present))
				continue;
			own_sent(sup, ev->name);
			removed += !present;
			snprintf(names[n], sizeof(names[n]), "%s", ev->name);
			kpipc__cdi_change__init(&ch[n]);
			ch[n].name = names[n];
			ch[n].present = present;
			if (++n == KP_IPC_MAX_CDI_CHANGES) {
				send_changes(sup, ch, n, 0);
				n = 0;
			}
		}
	}
	if (len == -1 && errno != EAGAIN && errno != EINTR)
		gone = 1;
	if (removed > 0)
		log_info(1, "CDI directory: %zu spec%s of this driver removed "
		    "by someone else", removed, removed == 1 ? "" : "s");
	if (gone) {
		log_warnx("CDI directory moved or removed: the nodeserver "
		    "lists the CDI specs on every call");
		cdi_watch_close(sup);
	}
	send_changes(sup, ch, n, reset || gone);
}
