/*
 * test_cdi_watch.c - the supervisor's watch of the CDI directory
 * (supervisor/cdi_watch.c) against the nodeserver's copy of the list
 * (nodeserver/ns_mirror.c), with a real directory and real inotify: the
 * frames the supervisor queues for the nodeserver are applied to a copy
 * as ns_wrap.c applies them, and the copy must name what is on disk
 * once every event was read. Another root process's changes are made
 * here between the supervisor's steps, where a race would put them.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "base/names.h"
#include "ipc/ipc.h"
#include "nodeserver/ns_wrap.h"
#include "supervisor/supervisor.h"

#define DRV	"test.example.com"

static struct kp_options	 opts;
static char			 dir[64];
static pid_t			 sleeper;
static size_t			 changes;	/* delivered so far */

static struct sup *
sup_new(void)
{
	struct sup	*sup;
	struct child	*c;

	if ((sup = calloc(1, sizeof(*sup))) == NULL)
		abort();
	opts.driver_name = DRV;
	sup->cfg = &opts;
	sup->mon = sup->mon_files = -1;
	sup->cdi_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(sup->cdi_fd != -1);
	sup->meta_fd = -1;
	c = &sup->children[ROLE_NODESERVER];
	c->name = "nodeserver";
	c->pid = sleeper;	/* never killed: the queue stays small */
	/* Frames are read from the queue, never written to the fd. */
	ipc_chan_init(&c->ctl, open("/dev/null", O_WRONLY | O_CLOEXEC),
	    KP_IPC_MAX_FRAME);
	cdi_watch_init(sup);
	CHECK(cdi_watch_live(sup));
	return (sup);
}

static void
sup_free(struct sup *sup)
{
	cdi_watch_close(sup);
	close(sup->cdi_fd);
	ipc_chan_close(&sup->children[ROLE_NODESERVER].ctl);
	free(sup);
}

/*
 * The nodeserver's side: every frame queued so far, applied to mi as
 * ns_wrap.c applies them (a CdiReply to the request of case mcase about
 * name). Returns how many were resets.
 */
static int
deliver(struct sup *sup, struct ns_mirror *mi, int mcase, const char *name)
{
	struct ipc_chan	*ch = &sup->children[ROLE_NODESERVER].ctl;
	Kpipc__Msg	*m;
	char		 err[KP_ERROR_SIZE];
	size_t		 off = 0, len, i;
	int		 resets = 0;

	while (off + 4 <= ch->wlen) {
		len = (size_t)ch->wbuf[off] << 24 | (size_t)ch->wbuf[off + 1]
		    << 16 | (size_t)ch->wbuf[off + 2] << 8 | ch->wbuf[off + 3];
		m = kpipc__msg__unpack(NULL, len, ch->wbuf + off + 4);
		CHECK(m != NULL);
		off += 4 + len;
		if (m == NULL)
			break;
		/* What the nodeserver's reader checks of every frame. */
		CHECK_EQ(ipc_check(m, err, sizeof(err)), 0);
		if (m->m_case == KPIPC__MSG__M_CDI_CHANGED) {
			for (i = 0; i < m->cdi_changed->n_changes; i++)
				CHECK(name_is_cdi_spec(DRV,
				    m->cdi_changed->changes[i]->name,
				    strlen(m->cdi_changed->changes[i]->name)));
			changes += m->cdi_changed->n_changes;
			resets += m->cdi_changed->reset;
			ns_mirror_changed(mi, m->cdi_changed);
		} else if (m->m_case == KPIPC__MSG__M_CDI_REPLY) {
			CHECK_EQ(m->cdi_reply->result->code, 0);
			if (mcase == KPIPC__MSG__M_CDI_LIST && m->cdi_reply->watched)
				ns_mirror_set(mi, m->cdi_reply->names,
				    m->cdi_reply->n_names);
			else if (mcase == KPIPC__MSG__M_CDI_LIST)
				ns_mirror_drop(mi);
			else
				ns_mirror_change(mi, name,
				    mcase == KPIPC__MSG__M_CDI_WRITE);
		}
		kpipc__msg__free_unpacked(m, NULL);
	}
	ch->wlen = 0;
	return (resets);
}


static void
list(struct sup *sup, struct ns_mirror *mi)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__CdiList	 l = KPIPC__CDI_LIST__INIT;
	int		 checked = 0, spent;

	m.m_case = KPIPC__MSG__M_CDI_LIST;
	m.cdi_list = &l;
	CHECK_EQ(files_cdi_run(sup, &sup->children[ROLE_NODESERVER], &m, 1,
	    &checked, &spent), 1);
	(void)deliver(sup, mi, KPIPC__MSG__M_CDI_LIST, NULL);
}

static void
nodeserver_remove(struct sup *sup, struct ns_mirror *mi, const char *name)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__CdiRemove rm = KPIPC__CDI_REMOVE__INIT;
	int		 checked = 0, spent;

	m.m_case = KPIPC__MSG__M_CDI_REMOVE;
	m.cdi_remove = &rm;
	rm.name = (char *)name;
	CHECK_EQ(files_cdi_run(sup, &sup->children[ROLE_NODESERVER], &m, 1,
	    &checked, &spent), 1);
	(void)deliver(sup, mi, KPIPC__MSG__M_CDI_REMOVE, name);
}

/* Someone else (another instance, a cleanup) makes or removes a name. */
static void
other_create(const char *name)
{
	char	 p[512];
	int	 fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd != -1);
	if (fd != -1)
		close(fd);
}

static void
other_remove(const char *name)
{
	char	 p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	CHECK_EQ(unlink(p), 0);
}

static int
on_disk(const char *name)
{
	char	 p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return (access(p, F_OK) == 0);
}

static void
empty_dir(void)
{
	struct dirent	*de;
	DIR		*d;
	char		 p[512];

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			(void)unlink(p);
		}
	closedir(d);
}

/*
 * Someone creates the name our nodeserver removes, just before the
 * removal, and the supervisor reads both events after it: the removal
 * is the last word, and must reach the copy after the create does.
 */
static void
test_create_then_own_remove(void)
{
	struct sup		*sup = sup_new();
	struct ns_mirror	 mi;
	const char		*x = DRV "_claim-x.json";

	memset(&mi, 0, sizeof(mi));
	list(sup, &mi);
	CHECK_EQ(ns_mirror_has(&mi, x), 0);
	other_create(x);			/* queued, not read yet */
	nodeserver_remove(sup, &mi, x);
	CHECK_EQ(on_disk(x), 0);
	cdi_watch_read(sup);
	(void)deliver(sup, &mi, 0, NULL);
	CHECK_EQ(ns_mirror_has(&mi, x), 0);	/* 1: names a gone file */
	/* And the events of our own removals are still left out. */
	other_create(x);
	cdi_watch_read(sup);
	(void)deliver(sup, &mi, 0, NULL);
	CHECK_EQ(ns_mirror_has(&mi, x), 1);
	nodeserver_remove(sup, &mi, x);
	CHECK_EQ(sup->cdi_own_n, 1);
	cdi_watch_read(sup);
	CHECK_EQ(sup->children[ROLE_NODESERVER].ctl.wlen, 0);
	CHECK_EQ(sup->cdi_own_n, 0);
	CHECK_EQ(ns_mirror_has(&mi, x), 0);
	ns_mirror_drop(&mi);
	sup_free(sup);
	empty_dir();
}

/*
 * A removal that found the file gone made no event of ours: nothing may
 * wait for one, or a later removal by someone else would be taken for
 * it and left out.
 */
static void
test_gone_already(void)
{
	struct sup		*sup = sup_new();
	struct ns_mirror	 mi;
	const char		*x = DRV "_claim-y.json";
	int			 removed = 1;
	char			 err[KP_ERROR_SIZE];

	memset(&mi, 0, sizeof(mi));

	CHECK_EQ(files_cdi_unlink(sup, x, &removed, err, sizeof(err)), 0);
	CHECK_EQ(removed, 0);
	other_create(x);
	CHECK_EQ(files_cdi_unlink(sup, x, &removed, err, sizeof(err)), 0);
	CHECK_EQ(removed, 1);
	cdi_watch_read(sup);
	(void)deliver(sup, &mi, 0, NULL);
	/* One that never comes (a removal that found ENOENT registered
	 * one in 4148b3c) still cannot hide someone's removal. */
	list(sup, &mi);
	cdi_watch_own(sup, x, 0);
	other_create(x);
	other_remove(x);
	cdi_watch_read(sup);
	(void)deliver(sup, &mi, 0, NULL);
	CHECK_EQ(ns_mirror_has(&mi, x), 0);
	ns_mirror_drop(&mi);
	sup_free(sup);
	empty_dir();
}

static void
names_of(char *nm, size_t size, int i)
{
	char	 mid[NAME_MAX_CDI_MIDDLE + 1];

	memset(mid, 'a', sizeof(mid) - 1);
	mid[sizeof(mid) - 1] = '\0';
	snprintf(mid, 12, "n%05d", i);
	mid[6] = 'a';
	snprintf(nm, size, DRV "_%s.json", mid);
}

/*
 * A nodeserver that reads nothing for a while (an init hook that runs
 * long) while the directory changes a lot: its channel gets one reset,
 * not every change until it is killed for not reading it.
 */
static void
test_unread_channel_bounded(void)
{
	struct sup		*sup = sup_new();
	struct ns_mirror	 mi;
	struct ipc_chan		*ch = &sup->children[ROLE_NODESERVER].ctl;
	char			 nm[256];
	size_t			 high = 0;
	int			 i;

	memset(&mi, 0, sizeof(mi));
	list(sup, &mi);
	CHECK_EQ(mi.valid, 1);
	for (i = 0; i < 3000; i++) {
		names_of(nm, sizeof(nm), i);
		other_create(nm);
		if (i % 100 == 99) {
			cdi_watch_read(sup);
			if (ch->wlen > high)
				high = ch->wlen;
		}
	}
	for (i = 0; i < 3000; i++) {
		names_of(nm, sizeof(nm), i);
		other_remove(nm);
		if (i % 100 == 99)
			cdi_watch_read(sup);
	}
	if (ch->wlen > high)
		high = ch->wlen;
	/* 3000 * 2 changes of 230-byte names: 1.4 MB if all were queued */
	CHECK(high < 400 * 1024);
	CHECK_EQ(deliver(sup, &mi, 0, NULL), 1);
	CHECK_EQ(mi.valid, 0);
	/* Listed again, the copy is kept again. */
	list(sup, &mi);
	CHECK_EQ(mi.valid, 1);
	other_create(DRV "_after.json");
	cdi_watch_read(sup);
	(void)deliver(sup, &mi, 0, NULL);
	CHECK_EQ(ns_mirror_has(&mi, DRV "_after.json"), 1);
	ns_mirror_drop(&mi);
	sup_free(sup);
	empty_dir();
}

/*
 * More events queued at once than one turn of the poll loop reads: the
 * rest is dropped (a reset), not read in a loop another process can keep
 * going, and the watch goes on.
 */
static void
test_flood_one_turn(void)
{
	struct sup		*sup = sup_new();
	struct ns_mirror	 mi;
	char			 nm[256];
	int			 i;

	memset(&mi, 0, sizeof(mi));
	list(sup, &mi);
	for (i = 0; i < 1500; i++) {
		names_of(nm, sizeof(nm), i);
		other_create(nm);
		other_remove(nm);
	}
	cdi_watch_read(sup);
	CHECK_EQ(deliver(sup, &mi, 0, NULL), 1);
	CHECK_EQ(mi.valid, 0);
	CHECK(cdi_watch_live(sup));
	list(sup, &mi);
	CHECK_EQ(mi.valid, 1);
	CHECK_EQ(mi.n, 0);
	other_create(DRV "_after.json");
	cdi_watch_read(sup);
	(void)deliver(sup, &mi, 0, NULL);
	CHECK_EQ(ns_mirror_has(&mi, DRV "_after.json"), 1);
	ns_mirror_drop(&mi);
	sup_free(sup);
	empty_dir();
}

/*
 * Only this driver's names reach it: another driver's spec, a dot-file
 * (the supervisor's temporary files), a name past the rule send nothing;
 * a frame holds at most 256.
 */
static void
test_only_ours(void)
{
	struct sup		*sup = sup_new();
	struct ns_mirror	 mi;
	char			 nm[256];
	int			 i;

	memset(&mi, 0, sizeof(mi));
	list(sup, &mi);
	other_create("other.example.com_claim-x.json");
	other_create("." DRV "_claim-x.json.tmp-abcdef");
	other_create(DRV "_claim-x.yaml");
	other_create(DRV "_-x.json");
	cdi_watch_read(sup);
	CHECK_EQ(sup->children[ROLE_NODESERVER].ctl.wlen, 0);
	changes = 0;
	for (i = 0; i < 600; i++) {
		names_of(nm, sizeof(nm), i);
		other_create(nm);
	}
	cdi_watch_read(sup);
	CHECK_EQ(deliver(sup, &mi, 0, NULL), 0);
	CHECK_EQ(changes, 600);
	CHECK_EQ(mi.n, 600);
	ns_mirror_drop(&mi);
	sup_free(sup);
	empty_dir();
}

/*
 * The watch is of the directory the supervisor holds open, not of the
 * path: moved away and replaced by another directory, the nodeserver is
 * told to list (and lists are then not watched), and nothing made in the
 * new one at the old path reaches it as a change.
 */
static void
test_moved_away(void)
{
	struct sup		*sup = sup_new();
	struct ns_mirror	 mi;
	char			 moved[80];

	memset(&mi, 0, sizeof(mi));
	list(sup, &mi);
	snprintf(moved, sizeof(moved), "%s.moved", dir);
	CHECK_EQ(rename(dir, moved), 0);
	CHECK_EQ(mkdir(dir, 0755), 0);
	other_create(DRV "_claim-new.json");
	cdi_watch_read(sup);
	CHECK_EQ(deliver(sup, &mi, 0, NULL), 1);
	CHECK_EQ(mi.valid, 0);
	CHECK(!cdi_watch_live(sup));
	list(sup, &mi);
	CHECK_EQ(mi.valid, 0);		/* not watched: asked every time */
	empty_dir();
	CHECK_EQ(rmdir(dir), 0);
	CHECK_EQ(rename(moved, dir), 0);
	sup_free(sup);
}

/*
 * More names than a list holds (someone filled the directory): no copy,
 * neither from the list nor by changes past the cap.
 */
static void
test_full_dir(void)
{
	struct sup		*sup = sup_new();
	struct ns_mirror	 mi;
	char			 nm[64];
	int			 i;

	memset(&mi, 0, sizeof(mi));
	for (i = 0; i < KP_IPC_MAX_CDI_NAMES - 1; i++) {
		snprintf(nm, sizeof(nm), DRV "_f%04d.json", i);
		other_create(nm);
	}
	cdi_watch_read(sup);
	list(sup, &mi);
	CHECK_EQ(mi.valid, 1);
	CHECK_EQ(mi.n, KP_IPC_MAX_CDI_NAMES - 1);
	other_create(DRV "_one-more.json");
	cdi_watch_read(sup);
	(void)deliver(sup, &mi, 0, NULL);
	CHECK_EQ(mi.valid, 0);
	list(sup, &mi);				/* 1024: not watched */
	CHECK_EQ(mi.valid, 0);
	CHECK_EQ(ns_mirror_has(&mi, DRV "_f0000.json"), -1);
	sup_free(sup);
	empty_dir();
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/kp-cdiwatch-XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return (1);
	}
	if ((sleeper = fork()) == 0) {
		pause();
		_exit(0);
	}
	test_create_then_own_remove();
	test_gone_already();
	test_unread_channel_bounded();
	test_flood_one_turn();
	test_only_ours();
	test_moved_away();
	test_full_dir();
	kill(sleeper, SIGKILL);
	(void)waitpid(sleeper, NULL, 0);
	(void)rmdir(dir);
	return (test_done("test_cdi_watch"));
}
