/*
 * test_journal_log.c - the journal of two instances sharing a directory
 * and the schema-2 change log (nodeserver/journal_sync.c, journal_log.c):
 * the A, B, B pattern of issue 28's finding 1 (B's second rewrite may
 * reuse the inode A last saw: A must still read B's writes), in the
 * write-through mode (every change a compaction, as in a rolling update)
 * and the append mode; a log void over another snapshot; a compaction
 * interrupted between the snapshot and the new log; a torn last line.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "nodeserver/journal.h"

#define DRV	"gpu.example.com"

static char	dir[64], boot[128];

static void
clean(void)
{
	test_empty_dir(dir);
}

static json_t *
entry(int n)
{
	char	 dev[32];

	snprintf(dev, sizeof(dev), "gpu-%d", n);
	return (json_pack("{s:s, s:s, s:[{s:[s], s:s, s:s}]}", "namespace",
	    "ns", "name", "claim", "devices", "requests", "gpu", "pool",
	    "node-1", "device", dev));
}

static void
uid_of(int n, char *out, size_t size)
{
	snprintf(out, size, "00000000-0000-4000-8000-%012d", n);
}

static void
open_ok(struct journal *j, int through)
{
	char	 err[KP_ERROR_SIZE] = "";

	CHECK_EQ(journal_open(j, dir, DRV, boot, err, sizeof(err)), 0);
	j->through = through;
}

/* One change at j, as jr_record/jr_unprepare_end make it: refreshed
 * first (under the lock both instances take), then committed. */
static void
change(struct journal *j, int n, int put)
{
	char	 uid[64], err[KP_ERROR_SIZE];

	uid_of(n, uid, sizeof(uid));
	journal_refresh(j);
	if (put)
		CHECK_EQ(journal_put(j, uid, entry(n)), 0);
	else
		journal_del(j, uid);
	CHECK_EQ(journal_commit(j, err, sizeof(err)), 0);
}

/* What a fresh reader sees: exactly the claims of model[0..n). */
static void
agree(const unsigned char *model, int n)
{
	struct journal	 r;
	char		 uid[64];
	int		 i, count = 0;

	open_ok(&r, 0);
	for (i = 0; i < n; i++) {
		uid_of(i, uid, sizeof(uid));
		CHECK_EQ(json_object_get(r.claims, uid) != NULL, model[i]);
		count += model[i];
	}
	CHECK_EQ((int)json_object_size(r.claims), count);
	journal_close(&r);
}

/* A, B, B over 60 puts then 60 removals: nothing lost or resurrected. */
static void
test_abb(int through)
{
	struct journal	 a, b, *at[3] = { &a, &b, &b };
	unsigned char	 model[60];
	int		 i;

	clean();
	open_ok(&a, through);
	open_ok(&b, through);
	memset(model, 0, sizeof(model));
	for (i = 0; i < 60; i++) {
		change(at[i % 3], i, 1);
		model[i] = 1;
	}
	agree(model, 60);
	for (i = 0; i < 60; i++) {
		change(at[i % 3], i, 0);
		model[i] = 0;
	}
	agree(model, 60);
	/* Random interleavings, both instances. */
	srand(28);
	for (i = 0; i < 500; i++) {
		int	 n = rand() % 60, put = rand() % 3 != 0;

		change(rand() % 2 ? &a : &b, n, put);
		model[n] = (unsigned char)put;
	}
	agree(model, 60);
	journal_close(&a);
	journal_close(&b);
}

/* A snapshot rewritten by a schema-1 writer voids the log over it; a
 * compaction stopped before its new log leaves a complete snapshot. */
static void
test_void_and_interrupted(void)
{
	struct journal	 a, old;
	unsigned char	 model[8] = { 0 };
	char		 err[KP_ERROR_SIZE];

	clean();
	open_ok(&a, 0);
	change(&a, 0, 1);
	change(&a, 1, 1);
	CHECK(a.nrec == 0 || a.log_ok);
	/* An older release: reads the snapshot only (here: a journal
	 * whose log is ignored), removes nothing, adds claim 2, rewrites
	 * the snapshot. */
	open_ok(&old, 1);
	CHECK_EQ(journal_put(&old, "00000000-0000-4000-8000-000000000002",
	    entry(2)), 0);
	CHECK_EQ(journal_save(&old, err, sizeof(err)), 0);
	journal_close(&old);
	model[0] = model[1] = model[2] = 1;
	agree(model, 8);
	/* Interrupted compaction: the snapshot renamed, the old log kept. */
	change(&a, 3, 1);
	model[3] = 1;
	journal_fault = JOURNAL_FAULT_BEFORE_LOG;
	CHECK(journal_save(&a, err, sizeof(err)) != 0);
	journal_fault = JOURNAL_FAULT_NONE;
	agree(model, 8);
	journal_close(&a);
}

/* A torn last line is dropped; the next append writes over it. */
static void
test_torn(void)
{
	struct journal	 a;
	unsigned char	 model[8] = { 0 };
	char		 p[160];
	FILE		*f;

	clean();
	open_ok(&a, 0);
	change(&a, 0, 1);
	change(&a, 1, 1);
	snprintf(p, sizeof(p), "%s/%s", dir, JOURNAL_LOG);
	f = fopen(p, "a");
	CHECK(f != NULL);
	fputs("0badc0de {\"entry\":{\"na", f);
	fclose(f);
	model[0] = model[1] = 1;
	agree(model, 8);
	change(&a, 2, 1);
	model[2] = 1;
	agree(model, 8);
	journal_close(&a);
}

int
main(void)
{
	FILE	*f;

	snprintf(dir, sizeof(dir), "/tmp/kp-jlog-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return (1);
	snprintf(boot, sizeof(boot), "%s.boot_id", dir);
	if ((f = fopen(boot, "w")) == NULL)
		return (1);
	fputs("11111111-2222-3333-4444-555555555555\n", f);
	fclose(f);
	test_abb(1);
	test_abb(0);
	test_void_and_interrupted();
	test_torn();
	clean();
	rmdir(dir);
	unlink(boot);
	return (test_done("test_journal_log"));
}
