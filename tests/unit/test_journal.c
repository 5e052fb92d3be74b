/*
 * test_journal.c - the prepared-claim journal's file (nodeserver/
 * journal.c): a round trip, atomicity (a crash between writing the
 * temporary file and the rename, injected, leaves the old journal), a
 * corrupt, torn, edited (checksum mismatch), foreign or unreadable file
 * quarantined with its reason and an empty start, the boot ID change,
 * the entry rules and the driver's view, the bytes written (those of the
 * writer before the entry cache, compact) and a file of that writer
 * read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "test.h"
#include "nodeserver/journal.h"

#define DRV	"gpu.example.com"

static char	dir[64], boot[128], path[160];

static void
put_file(const char *p, const char *text)
{
	FILE	*f = fopen(p, "w");

	if (f == NULL)
		abort();
	fputs(text, f);
	fclose(f);
}

static char *
get_file(const char *p)
{
	static char	 buf[65536];
	FILE		*f = fopen(p, "r");
	size_t		 n;

	if (f == NULL)
		return (NULL);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (buf);
}

/* Files in dir starting with prefix. */
static int
count(const char *prefix)
{
	struct dirent	*de;
	DIR		*d = opendir(dir);
	int		 n = 0;

	while (d != NULL && (de = readdir(d)) != NULL)
		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
			n++;
	if (d != NULL)
		closedir(d);
	return (n);
}

static void
clean(void)
{
	test_empty_dir(dir);
}

static json_t *
entry(const char *ns, const char *cdi)
{
	return (json_pack("{s:s, s:s, s:[{s:[s], s:s, s:s, s:[s]}], s:s, "
	    "s:{s:s}}", "namespace", ns, "name", "claim-a", "devices",
	    "requests", "gpu", "pool", "node-1", "device", "gpu-0",
	    "cdiDeviceIds", cdi, "cdiSpec", DRV "_claim-uid-1.json", "data",
	    "pci", "0000:01:00.0"));
}

static void
open_ok(struct journal *j)
{
	char	 err[KP_ERROR_SIZE] = "";

	CHECK_EQ(journal_open(j, dir, DRV, boot, err, sizeof(err)), 0);
	if (err[0] != '\0')
		fprintf(stderr, "%s\n", err);
}

static void
test_round_trip(void)
{
	struct journal		 j;
	struct journal_view	*v;
	char			 err[KP_ERROR_SIZE];

	clean();
	open_ok(&j);
	CHECK_EQ(j.state, JOURNAL_NEW);
	CHECK_STREQ(j.boot_id, "11111111-2222-3333-4444-555555555555");
	CHECK_EQ(json_object_size(j.claims), 0);
	CHECK_EQ(journal_put(&j, "uid-1", entry("ns",
	    DRV "/gpu=gpu-0")), 0);
	CHECK_EQ(journal_check_entry(DRV, "uid-1", json_object_get(j.claims,
	    "uid-1"), err, sizeof(err)), 0);
	CHECK_EQ(journal_save(&j, err, sizeof(err)), 0);
	CHECK_EQ(count("." JOURNAL_FILE), 0);
	journal_close(&j);
	CHECK_CONTAINS(get_file(path), ",\"checksum\":\"crc32:");
	CHECK_CONTAINS(get_file(path), "\"schema\":1");

	open_ok(&j);
	CHECK_EQ(j.state, JOURNAL_LOADED);
	CHECK_STREQ(j.file_boot_id, j.boot_id);
	CHECK_EQ(json_object_size(j.claims), 1);
	v = journal_view_new("uid-1", json_object_get(j.claims, "uid-1"), 0);
	CHECK(v != NULL);
	if (v != NULL) {
		CHECK_STREQ(v->e.uid, "uid-1");
		CHECK_STREQ(v->e.namespace_, "ns");
		CHECK_STREQ(v->e.name, "claim-a");
		CHECK_EQ(v->e.n_devices, 1);
		CHECK_EQ(v->e.devices[0]->struct_size,
		    sizeof(struct kp_prepared_device));
		CHECK_STREQ(v->e.devices[0]->pool_name, "node-1");
		CHECK_STREQ(v->e.devices[0]->device_name, "gpu-0");
		CHECK_EQ(v->e.devices[0]->n_request_names, 1);
		CHECK_STREQ(v->e.devices[0]->request_names[0], "gpu");
		CHECK_STREQ(v->e.devices[0]->cdi_device_ids[0],
		    DRV "/gpu=gpu-0");
		CHECK(v->e.devices[0]->share_id == NULL);
		CHECK_STREQ(v->e.cdi_spec, DRV "_claim-uid-1.json");
		CHECK_STREQ(v->e.data, "{\"pci\":\"0000:01:00.0\"}");
		CHECK_EQ(v->e.previous_boot, 0);
	}
	journal_view_free(v);
	journal_close(&j);
}

/* A crash after the temporary file is synced, before the rename. */
static void
test_atomic(void)
{
	struct journal	 j;
	char		 err[KP_ERROR_SIZE], before[65536];

	test_round_trip();
	snprintf(before, sizeof(before), "%s", get_file(path));
	open_ok(&j);
	journal_del(&j, "uid-1");
	CHECK_EQ(journal_put(&j, "uid-2", entry("other",
	    DRV "/gpu=gpu-1")), 0);
	journal_fault = JOURNAL_FAULT_BEFORE_RENAME;
	CHECK_EQ(journal_save(&j, err, sizeof(err)), KP_EIO);
	journal_fault = JOURNAL_FAULT_NONE;
	CHECK_CONTAINS(err, "fault injected before the rename");
	journal_close(&j);
	/* The new content sits in the temporary file; the journal is the
	 * old one, byte for byte. */
	CHECK_EQ(count("." JOURNAL_FILE ".tmp"), 1);
	CHECK_STREQ(get_file(path), before);
	open_ok(&j);
	CHECK_EQ(j.state, JOURNAL_LOADED);
	CHECK(json_object_get(j.claims, "uid-1") != NULL);
	CHECK(json_object_get(j.claims, "uid-2") == NULL);
	CHECK_EQ(count("." JOURNAL_FILE ".tmp"), 0);
	/* The next save goes through. */
	journal_del(&j, "uid-1");
	CHECK_EQ(journal_save(&j, err, sizeof(err)), 0);
	journal_close(&j);
	open_ok(&j);
	CHECK_EQ(json_object_size(j.claims), 0);
	journal_close(&j);
}

/* Each bad file: quarantined with why, moved aside, empty start. */
static void
bad_file(const char *text, const char *why)
{
	struct journal	 j;

	clean();
	put_file(path, text);
	open_ok(&j);
	CHECK_EQ(j.state, JOURNAL_QUARANTINED);
	CHECK_CONTAINS(j.why, why);
	CHECK_CONTAINS(j.why, "moved aside to " JOURNAL_FILE ".corrupt-");
	CHECK_EQ(json_object_size(j.claims), 0);
	CHECK_EQ(access(path, F_OK), -1);
	CHECK_EQ(count(JOURNAL_FILE ".corrupt-"), 1);
	journal_close(&j);
}

static void
test_quarantine(void)
{
	struct journal	 j;
	char		 saved[65536], *p, err[KP_ERROR_SIZE];

	bad_file("", "not JSON");
	bad_file("{\"schema\":1,", "not JSON");
	bad_file("[]", "not a JSON object");
	bad_file("{\"schema\":2,\"driver\":\"" DRV "\",\"bootId\":\"b\","
	    "\"claims\":{},\"checksum\":\"x\"}", "schema is not 1");
	bad_file("{\"schema\":1,\"driver\":\"other.example.com\",\"bootId\":"
	    "\"b\",\"claims\":{},\"checksum\":\"x\"}", "driver is not");
	bad_file("{\"schema\":1,\"driver\":\"" DRV "\",\"bootId\":\"b\","
	    "\"claims\":{},\"checksum\":\"crc32:00000000\"}",
	    "checksum mismatch");
	bad_file("{\"schema\":1,\"driver\":\"" DRV "\",\"bootId\":\"b\","
	    "\"claims\":{},\"extra\":1}", "unknown field \"extra\"");

	/* A valid journal edited by hand: the checksum says so. */
	test_round_trip();
	snprintf(saved, sizeof(saved), "%s", get_file(path));
	if ((p = strstr(saved, "\"ns\"")) != NULL)
		memcpy(p, "\"xs\"", 4);
	bad_file(saved, "checksum mismatch");
	/* Torn: the first half of a valid one. */
	test_round_trip();
	snprintf(saved, sizeof(saved), "%s", get_file(path));
	saved[strlen(saved) / 2] = '\0';
	bad_file(saved, "not JSON");
	/* Not a regular file. */
	clean();
	CHECK_EQ(mkdir(path, 0700), 0);
	open_ok(&j);
	CHECK_EQ(j.state, JOURNAL_QUARANTINED);
	CHECK_CONTAINS(j.why, "not a regular file");
	journal_close(&j);
	/* Two in the same second: both kept. */
	put_file(path, "garbage");
	open_ok(&j);
	CHECK_EQ(j.state, JOURNAL_QUARANTINED);
	CHECK_CONTAINS(j.why, "moved aside");
	journal_close(&j);
	CHECK_EQ(count(JOURNAL_FILE ".corrupt-"), 2);
	/* The quarantined start writes a fresh journal. */
	clean();
	put_file(path, "garbage");
	open_ok(&j);
	CHECK_EQ(journal_save(&j, err, sizeof(err)), 0);
	journal_close(&j);
	open_ok(&j);
	CHECK_EQ(j.state, JOURNAL_LOADED);
	journal_close(&j);
	/* A directory that cannot be opened is an error, not a crash. */
	CHECK_EQ(journal_open(&j, "/nonexistent/dir", DRV, boot, err,
	    sizeof(err)), KP_EIO);
	CHECK_CONTAINS(err, "journal directory /nonexistent/dir");
}

static void
test_boot_id(void)
{
	struct journal	 j;

	test_round_trip();
	put_file(boot, "99999999-2222-3333-4444-555555555555\n");
	open_ok(&j);
	CHECK_EQ(j.state, JOURNAL_LOADED);
	CHECK_STREQ(j.file_boot_id, "11111111-2222-3333-4444-555555555555");
	CHECK_STREQ(j.boot_id, "99999999-2222-3333-4444-555555555555");
	journal_close(&j);
	put_file(boot, "11111111-2222-3333-4444-555555555555\n");
	/* The kernel's own is readable and is a UUID. */
	CHECK_EQ(journal_open(&j, dir, DRV, JOURNAL_BOOT_ID, NULL, 0), 0);
	CHECK_EQ(strlen(j.boot_id), 36);
	journal_close(&j);
}

static void
test_entries(void)
{
	char	 err[KP_ERROR_SIZE];
	json_t	*e;

	e = entry("ns", DRV "/gpu=gpu-0");
	CHECK_EQ(journal_check_entry(DRV, "uid-1", e, err, sizeof(err)), 0);
	CHECK_EQ(journal_check_entry(DRV, "../x", e, err, sizeof(err)),
	    KP_EINVAL);
	CHECK_EQ(journal_check_entry("other.example.com", "uid-1", e, err,
	    sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "cdiSpec");
	json_decref(e);
	e = entry("ns", "not a cdi id");
	CHECK_EQ(journal_check_entry(DRV, "uid-1", e, err, sizeof(err)),
	    KP_EINVAL);
	CHECK_CONTAINS(err, "devices[0]");
	json_decref(e);
	e = entry("", DRV "/gpu=gpu-0");
	CHECK_EQ(journal_check_entry(DRV, "uid-1", e, err, sizeof(err)),
	    KP_EINVAL);
	json_decref(e);
}

/*
 * What journal_save writes is what the writer before the entry cache
 * wrote, less the indentation: the compact key-sorted dump of the
 * object without its checksum, the CRC-32 of that dump spliced in as
 * the last member. Built here with jansson as that writer did, with
 * strings that need escaping and keys out of order.
 */
static void
expect_old_format(struct journal *j)
{
	json_t	*root;
	char	*text, want[65536];
	size_t	 n;

	root = json_pack("{s:i, s:s, s:s, s:O}", "schema", JOURNAL_SCHEMA,
	    "driver", j->driver, "bootId", j->boot_id, "claims", j->claims);
	CHECK(root != NULL);
	text = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(root);
	CHECK(text != NULL);
	if (text == NULL)
		return;
	n = strlen(text);
	snprintf(want, sizeof(want), "%.*s,\"checksum\":\"crc32:%08lx\"}\n",
	    (int)n - 1, text, crc32(0L, (const Bytef *)text, (uInt)n) &
	    0xffffffffUL);
	free(text);
	CHECK_STREQ(get_file(path), want);
}

static void
test_format(void)
{
	struct journal	 j;
	char		 err[KP_ERROR_SIZE];
	json_t		*e;

	clean();
	put_file(boot, "quote\" back\\ tab\t \xc3\xa9\n");
	open_ok(&j);
	CHECK_EQ(journal_put(&j, "uid-b", entry("ns",
	    DRV "/gpu=gpu-0")), 0);
	e = entry("ns", DRV "/gpu=gpu-1");
	CHECK_EQ(json_object_set_new(e, "data", json_pack("{s:i, s:{s:s}, "
	    "s:f, s:[s, n]}", "z", 1, "\xc3\xa9", "k", "line\nfeed\"", "a",
	    0.1, "B", "/slash\x7f", "Z")), 0);
	CHECK_EQ(journal_put(&j, "uid-a", e), 0);
	CHECK_EQ(journal_put(&j, "uid-10", entry("other",
	    DRV "/gpu=gpu-2")), 0);
	CHECK_EQ(journal_save(&j, err, sizeof(err)), 0);
	expect_old_format(&j);
	/* A claim replaced (a new entry for its UID), one removed: the
	 * cached dumps follow. */
	CHECK_EQ(journal_put(&j, "uid-b", entry("changed",
	    DRV "/gpu=gpu-3")), 0);
	journal_del(&j, "uid-10");
	CHECK_EQ(journal_save(&j, err, sizeof(err)), 0);
	expect_old_format(&j);
	CHECK(j.pc_ok);
	CHECK_EQ(j.npc, 2);
	CHECK_CONTAINS(get_file(path), "\"changed\"");
	journal_close(&j);
	open_ok(&j);
	CHECK_EQ(j.state, JOURNAL_LOADED);
	CHECK_STREQ(j.file_boot_id, "quote\" back\\ tab\t \xc3\xa9");
	CHECK_EQ(json_object_size(j.claims), 2);
	CHECK(json_object_get(j.claims, "uid-10") == NULL);
	/* Saved again after the load: the same bytes. */
	CHECK_EQ(journal_save(&j, err, sizeof(err)), 0);
	expect_old_format(&j);
	journal_close(&j);
	/* Nothing to write: a driver name and an empty journal. */
	clean();
	open_ok(&j);
	CHECK_EQ(journal_save(&j, err, sizeof(err)), 0);
	expect_old_format(&j);
	journal_close(&j);
	put_file(boot, "11111111-2222-3333-4444-555555555555\n");
}

/*
 * The index that render() writes from follows every journal_put and
 * journal_del, in any order (new claims, replaced entries, removals, a
 * claim removed and put again, the claims replaced whole by a refresh
 * in between): after each write the file is the dump jansson makes of
 * the claims.
 */
static void
test_index(void)
{
	struct journal	 j, other;
	char		 err[KP_ERROR_SIZE], uid[32], cdi[64];
	unsigned	 seed = 12345, k, op;
	int		 i;

	clean();
	open_ok(&j);
	for (i = 0; i < 600; i++) {
		seed = seed * 1103515245u + 12345u;
		k = (seed >> 8) % 37;
		op = (seed >> 20) % 10;
		/* "uid-7" < "uid-70" < "uid-8": the order is bytewise */
		snprintf(uid, sizeof(uid), k % 3 ? "uid-%u" : "Uid-%u0", k);
		snprintf(cdi, sizeof(cdi), DRV "/gpu=gpu-%d", i);
		if (op < 6)
			CHECK_EQ(journal_put(&j, uid, entry(k % 2 ? "ns" :
			    "n\\s\"", cdi)), 0);
		else
			journal_del(&j, uid);
		if (i % 7 == 0) {
			CHECK_EQ(journal_save(&j, err, sizeof(err)), 0);
			expect_old_format(&j);
			CHECK(j.pc_ok);
			CHECK_EQ(j.npc, json_object_size(j.claims));
		}
		/* Another instance's write, read by this one: the index
		 * is built again from the claims read. */
		if (i == 300) {
			open_ok(&other);
			CHECK_EQ(journal_put(&other, "uid-other", entry("ns",
			    DRV "/gpu=gpu-x")), 0);
			CHECK_EQ(journal_save(&other, err, sizeof(err)), 0);
			journal_close(&other);
			journal_refresh(&j);
			CHECK(json_object_get(j.claims, "uid-other") != NULL);
			CHECK(!j.pc_ok);
		}
	}
	CHECK_EQ(journal_save(&j, err, sizeof(err)), 0);
	expect_old_format(&j);
	journal_close(&j);
}

/*
 * A journal as the writer before the entry cache wrote it (indented,
 * the fuzz seed two_claims, made by that code): loaded, and saved again
 * in the compact form with the same claims.
 */
static void
test_old_file(void)
{
	struct journal	 j;
	char		 p[512], *text, err[KP_ERROR_SIZE];
	json_t		*before;

	snprintf(p, sizeof(p), "%s/tests/fuzz/corpus/fuzz_journal/two_claims",
	    KP_SOURCE_DIR);
	CHECK((text = get_file(p)) != NULL);
	if (text == NULL)
		return;
	CHECK_CONTAINS(text, "\n \"checksum\": \"crc32:");
	clean();
	put_file(path, text);
	open_ok(&j);
	CHECK_EQ(j.state, JOURNAL_LOADED);
	CHECK_EQ(json_object_size(j.claims), 2);
	before = json_deep_copy(j.claims);
	CHECK_EQ(journal_save(&j, err, sizeof(err)), 0);
	expect_old_format(&j);
	journal_close(&j);
	open_ok(&j);
	CHECK_EQ(j.state, JOURNAL_LOADED);
	CHECK(json_equal(j.claims, before));
	json_decref(before);
	journal_close(&j);
}

/* Two instances (a rolling update) on one file: neither drops the
 * other's entries. */
static void
test_two_instances(void)
{
	struct journal	 a, b;
	char		 err[KP_ERROR_SIZE];

	clean();
	open_ok(&a);
	open_ok(&b);
	CHECK_EQ(journal_put(&a, "uid-1", entry("ns",
	    DRV "/gpu=gpu-0")), 0);
	CHECK_EQ(journal_save(&a, err, sizeof(err)), 0);
	journal_refresh(&b);
	CHECK(json_object_get(b.claims, "uid-1") != NULL);
	CHECK_EQ(journal_put(&b, "uid-2", entry("ns",
	    DRV "/gpu=gpu-1")), 0);
	CHECK_EQ(journal_save(&b, err, sizeof(err)), 0);
	journal_refresh(&a);
	CHECK_EQ(json_object_size(a.claims), 2);
	/* Unchanged since: nothing read again (same object). */
	{
		json_t	*before = a.claims;

		journal_refresh(&a);
		CHECK(a.claims == before);
	}
	/* Replaced (renamed over) by something unreadable: the claims in
	 * memory stay. */
	{
		char	 other[200];

		snprintf(other, sizeof(other), "%s.new", path);
		put_file(other, "garbage");
		CHECK_EQ(rename(other, path), 0);
	}
	journal_refresh(&a);
	CHECK_EQ(json_object_size(a.claims), 2);
	journal_close(&a);
	journal_close(&b);
}

/* The fuzz target's seeds: the valid ones are valid here too. */
static void
test_seeds(void)
{
	const char	*seeds[] = { "two_claims", "two_claims_compact", "empty",
	    "checksum_mismatch", "torn" };
	char		 p[512], *text, boot_id[JOURNAL_BOOT_MAX];
	char		 err[KP_ERROR_SIZE];
	json_t		*claims;
	size_t		 i;

	for (i = 0; i < 5; i++) {
		snprintf(p, sizeof(p), "%s/tests/fuzz/corpus/fuzz_journal/%s",
		    KP_SOURCE_DIR, seeds[i]);
		CHECK((text = get_file(p)) != NULL);
		if (text == NULL)
			continue;
		CHECK_EQ(journal_parse(text, strlen(text), DRV, &claims,
		    boot_id, sizeof(boot_id), err, sizeof(err)),
		    i < 3 ? 0 : KP_EINVAL);
		if (i < 2)
			CHECK_EQ(json_object_size(claims), 2);
		json_decref(claims);
	}
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/kp-journal-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return (1);
	snprintf(boot, sizeof(boot), "%s.boot_id", dir);
	snprintf(path, sizeof(path), "%s/%s", dir, JOURNAL_FILE);
	put_file(boot, "11111111-2222-3333-4444-555555555555\n");
	test_round_trip();
	test_atomic();
	test_quarantine();
	test_boot_id();
	test_entries();
	test_seeds();
	test_format();
	test_index();
	test_old_file();
	test_two_instances();
	clean();
	rmdir(dir);
	unlink(boot);
	return (test_done("test_journal"));
}
