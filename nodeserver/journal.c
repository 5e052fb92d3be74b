/*
 * journal.c - the prepared-claim journal's file (kubeletplugin.h,
 * "Prepared-claim journal"):
 *
 *   { "schema": 1, "driver": "<driver>", "bootId": "<boot id>",
 *     "claims": { "<claim uid>": { "namespace": "...", "name": "...",
 *         "devices": [ { "requests": [...], "pool": "...",
 *             "device": "...", "cdiDeviceIds": [...],
 *             "shareId": "..." } ],
 *         "cdiSpec": "<file name>", "data": <the driver's JSON> } },
 *     "checksum": "crc32:<8 hex digits>" }
 *
 * The checksum covers the compact, key-sorted dump of the object without
 * it, so a torn or edited file is noticed whatever its formatting. The
 * library writes that very dump (one line) with the checksum spliced in
 * as the last member, put together from a cached dump of each entry: a
 * write serializes only the entries new since the last one. The
 * file is replaced atomically: a temporary dot-file, fsync, rename, fsync
 * of the directory; a crash leaves the old file or the new one, and a
 * temporary file left by one is removed at the next open. A file that
 * cannot be used is moved aside, never overwritten and never fatal.
 *
 * Runs in: the nodeserver, in its sandbox (the directory is one of its
 * state directories: Landlock lets it write there and nowhere else).
 * journal_parse is also the fuzz target's (tests/fuzz/fuzz_journal.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "base/cdi.h"
#include "base/fdio.h"
#include "base/log.h"
#include "base/names.h"
#include "base/utf8.h"
#include "nodeserver/journal.h"

#define JOURNAL_MAX_DEVICES	256
#define JOURNAL_MAX_IDS		64
#define JOURNAL_MAX_STR		1024

int	journal_fault = JOURNAL_FAULT_NONE;


static int	jfail(char *, size_t, int, const char *, ...) KP_PRINTF(4, 5);

static int
jfail(char *err, size_t errsize, int code, const char *fmt, ...)
{
	va_list	 ap;

	if (errsize > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errsize, fmt, ap);
		va_end(ap);
	}
	return (code);
}

/* The CRC-32 (zlib's, IEEE) of len bytes: the change log's lines. */
unsigned long
journal_crc(const char *p, size_t len)
{
	return (crc32(0L, (const Bytef *)p, (uInt)len) & 0xffffffffUL);
}

/* "crc32:xxxxxxxx" of root without its checksum; "" out of memory. */
static void
checksum(const json_t *root, char *out, size_t size)
{
	json_t	*copy;
	char	*text;
	uLong	 c;

	out[0] = '\0';
	if ((copy = json_copy((json_t *)root)) == NULL)
		return;
	(void)json_object_del(copy, "checksum");
	text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(copy);
	if (text == NULL)
		return;
	c = crc32(0L, (const Bytef *)text, (uInt)strlen(text));
	snprintf(out, size, "crc32:%08lx", c & 0xffffffffUL);
	free(text);
}

static int
want_str(const json_t *o, const char *key, int need, size_t max)
{
	const json_t	*v = json_object_get(o, key);

	if (v == NULL)
		return (!need);
	return (json_is_string(v) && json_string_length(v) <= max &&
	    strlen(json_string_value(v)) == json_string_length(v) &&
	    (!need || json_string_length(v) > 0));
}

static int
want_strs(const json_t *o, const char *key, size_t max, int cdi)
{
	const json_t	*a = json_object_get(o, key), *v;
	const char	*why;
	size_t		 i;

	if (a == NULL)
		return (1);
	if (!json_is_array(a) || json_array_size(a) > max)
		return (0);
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || json_string_length(v) >
		    JOURNAL_MAX_STR || strlen(json_string_value(v)) !=
		    json_string_length(v))
			return (0);
		if (cdi && cdi_id_check(json_string_value(v), &why) != 0)
			return (0);
	}
	return (1);
}

/* The rules of one entry, as the library writes it. */
int
journal_check_entry(const char *driver, const char *uid, const json_t *e,
    char *err, size_t errsize)
{
	const json_t	*devs, *d, *s;
	const char	*key;
	json_t		*val;
	size_t		 i;

	if (!name_is_claim_uid(uid, strlen(uid)))
		return (jfail(err, errsize, KP_EINVAL, "claim UID: not %s",
		    NAME_R_UID));
	if (!json_is_object(e))
		return (jfail(err, errsize, KP_EINVAL, "claim %.128s: not an "
		    "object", uid));
	json_object_foreach((json_t *)e, key, val)
		if (strcmp(key, "namespace") != 0 && strcmp(key, "name") != 0 &&
		    strcmp(key, "devices") != 0 && strcmp(key, "cdiSpec") != 0 &&
		    strcmp(key, "data") != 0)
			return (jfail(err, errsize, KP_EINVAL, "claim %.128s: "
			    "unknown field", uid));
	if (!want_str(e, "namespace", 1, NAME_MAX_LABEL) ||
	    !want_str(e, "name", 1, NAME_MAX_SUBDOMAIN))
		return (jfail(err, errsize, KP_EINVAL, "claim %.128s: "
		    "namespace or name missing or too long", uid));
	s = json_object_get(e, "cdiSpec");
	if (s != NULL && (!json_is_string(s) ||
	    !name_is_cdi_spec(driver, json_string_value(s),
	    json_string_length(s))))
		return (jfail(err, errsize, KP_EINVAL, "claim %.128s: cdiSpec "
		    "not one of this driver's spec names", uid));
	devs = json_object_get(e, "devices");
	if (!json_is_array(devs) || json_array_size(devs) >
	    JOURNAL_MAX_DEVICES)
		return (jfail(err, errsize, KP_EINVAL, "claim %.128s: devices "
		    "not an array of at most %d", uid, JOURNAL_MAX_DEVICES));
	json_array_foreach(devs, i, d) {
		if (!json_is_object(d) || !want_str(d, "pool", 1,
		    NAME_MAX_SUBDOMAIN) || !want_str(d, "device", 1,
		    NAME_MAX_SUBDOMAIN) || !want_str(d, "shareId", 0,
		    JOURNAL_MAX_STR) || !want_strs(d, "requests",
		    JOURNAL_MAX_IDS, 0) || !want_strs(d, "cdiDeviceIds",
		    JOURNAL_MAX_IDS, 1))
			return (jfail(err, errsize, KP_EINVAL, "claim %.128s: "
			    "devices[%zu]: a field missing or invalid", uid,
			    i));
	}
	return (0);
}

/*
 * Parse and check a journal's text. On success *claims is a new
 * reference and boot_id the recorded boot ID; on failure err says why.
 */
int
journal_parse(const char *text, size_t len, const char *driver,
    json_t **claims, char *boot_id, size_t bsize, char *err, size_t errsize)
{
	return (journal_parse_sum(text, len, driver, claims, boot_id, bsize,
	    NULL, 0, err, errsize));
}

/* journal_parse, and the snapshot's checksum in sum ("crc32:..."). */
int
journal_parse_sum(const char *text, size_t len, const char *driver,
    json_t **claims, char *boot_id, size_t bsize, char *sum_out,
    size_t ssize, char *err, size_t errsize)
{
	json_error_t	 je;
	json_t		*root, *v, *c, *e;
	const char	*key, *uid;
	char		 sum[32];
	int		 r = KP_EINVAL;

	*claims = NULL;
	if (len > JOURNAL_MAX_BYTES)
		return (jfail(err, errsize, KP_EINVAL, "larger than %u bytes",
		    JOURNAL_MAX_BYTES));
	if ((root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je)) ==
	    NULL)
		return (jfail(err, errsize, KP_EINVAL, "not JSON: line %d: "
		    "%.120s", je.line, je.text));
	if (!json_is_object(root)) {
		jfail(err, errsize, r, "not a JSON object");
		goto out;
	}
	json_object_foreach(root, key, v)
		if (strcmp(key, "schema") != 0 && strcmp(key, "driver") != 0 &&
		    strcmp(key, "bootId") != 0 && strcmp(key, "claims") != 0 &&
		    strcmp(key, "checksum") != 0) {
			jfail(err, errsize, r, "unknown field \"%.64s\"",
			    utf8_valid(key) ? key : "?");
			goto out;
		}
	v = json_object_get(root, "schema");
	if (!json_is_integer(v) || json_integer_value(v) != JOURNAL_SCHEMA) {
		jfail(err, errsize, r, "schema is not %d (written by another "
		    "release of the library?)", JOURNAL_SCHEMA);
		goto out;
	}
	v = json_object_get(root, "driver");
	if (!json_is_string(v) || strcmp(json_string_value(v), driver) != 0) {
		jfail(err, errsize, r, "driver is not \"%s\"", driver);
		goto out;
	}
	v = json_object_get(root, "bootId");
	if (!want_str(root, "bootId", 1, JOURNAL_BOOT_MAX - 1)) {
		jfail(err, errsize, r, "bootId missing or too long");
		goto out;
	}
	c = json_object_get(root, "claims");
	if (!json_is_object(c)) {
		jfail(err, errsize, r, "claims is not an object");
		goto out;
	}
	checksum(root, sum, sizeof(sum));
	e = json_object_get(root, "checksum");
	if (sum[0] == '\0') {
		r = jfail(err, errsize, KP_ENOMEM, "out of memory");
		goto out;
	}
	if (!json_is_string(e) || strcmp(json_string_value(e), sum) != 0) {
		jfail(err, errsize, r, "checksum mismatch (the content is not "
		    "what was written)");
		goto out;
	}
	json_object_foreach(c, uid, e)
		if (journal_check_entry(driver, uid, e, err, errsize) != 0)
			goto out;
	snprintf(boot_id, bsize, "%s", json_string_value(v));
	if (sum_out != NULL)
		snprintf(sum_out, ssize, "%s", sum);
	*claims = json_incref(c);
	r = 0;
out:
	json_decref(root);
	return (r);
}

/* This boot's ID (a UUID from the kernel); "unknown" if unreadable. */
static void
read_boot_id(const char *path, char *out, size_t size)
{
	char	 buf[JOURNAL_BOOT_MAX];
	ssize_t	 n = -1;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0) {
		log_warn("journal: boot ID %s", path);
		snprintf(out, size, "unknown");
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(out, size, "%s", buf);
}

/*
 * The file cannot be used: rename it aside (kept for a person to look
 * at), report it, start empty.
 */
void
journal_quarantine(struct journal *j, const char *why)
{
	char	 aside[sizeof(JOURNAL_FILE) + 40];
	int	 k, r = -1;

	/* Never over an earlier one: each is evidence. */
	for (k = 0; k < 100 && r == -1; k++) {
		snprintf(aside, sizeof(aside), JOURNAL_FILE
		    ".corrupt-%lld%s%.0d", (long long)time(NULL),
		    k > 0 ? "-" : "", k);
		r = renameat2(j->dirfd, JOURNAL_FILE, j->dirfd, aside,
		    RENAME_NOREPLACE);
		if (r == -1 && errno != EEXIST)
			break;
	}
	j->state = JOURNAL_QUARANTINED;
	if (r == -1)
		snprintf(j->why, sizeof(j->why), "%s (and it could not be "
		    "moved aside: %s)", why, strerror(errno));
	else
		snprintf(j->why, sizeof(j->why), "%s; moved aside to %s",
		    why, aside);
	/* The one place that reports a bad journal; jr_start() also tells
	 * the supervisor (error callback, Event). */
	log_warnx("journal %s: %s; starting with an empty journal (claims "
	    "prepared before are prepared again when kubelet asks)",
	    JOURNAL_FILE, j->why);
}

/*
 * Open the journal in dir: the file loaded, or quarantined, or none yet.
 * Fails only when dir cannot be opened or memory runs out.
 */
int
journal_open(struct journal *j, const char *dir, const char *driver,
    const char *boot_id_path, char *err, size_t errsize)
{
	int	 r;

	memset(j, 0, sizeof(*j));
	j->dirfd = -1;
	snprintf(j->driver, sizeof(j->driver), "%s", driver);
	read_boot_id(boot_id_path, j->boot_id, sizeof(j->boot_id));
	if (pthread_mutex_init(&j->lock, NULL) != 0)
		return (jfail(err, errsize, KP_ENOMEM, "out of memory"));
	if ((j->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		r = errno;
		pthread_mutex_destroy(&j->lock);
		return (jfail(err, errsize, KP_EIO, "journal directory %s: %s",
		    dir, strerror(r)));
	}
	j->logfd = -1;
	j->snap_size = -1;
	/* A crash between writing and renaming left these; the old files
	 * are the journal. */
	if (unlinkat(j->dirfd, JOURNAL_TMP, 0) == 0)
		log_info(1, "journal: removed %s left by an interrupted write",
		    JOURNAL_TMP);
	(void)unlinkat(j->dirfd, JOURNAL_LOG_TMP, 0);
	if ((r = journal_load(j, 0, err, errsize)) != 0 ||
	    (j->claims == NULL && (j->claims = json_object()) == NULL)) {
		journal_close(j);
		return (r != 0 ? r : jfail(err, errsize, KP_ENOMEM,
		    "out of memory"));
	}
	return (0);
}

void
journal_close(struct journal *j)
{
	if (j->dirfd == -1)
		return;
	close(j->dirfd);
	j->dirfd = -1;
	if (j->logfd != -1)
		close(j->logfd);
	j->logfd = -1;
	journal_forget_ops(j);
	free(j->ops);
	j->ops = NULL;
	j->ops_cap = 0;
	json_decref(j->claims);
	j->claims = NULL;
	journal_index_drop(j);
	free(j->pc);
	j->pc = NULL;
	j->pc_cap = 0;
	free(j->out);
	j->out = NULL;
	j->out_cap = 0;
	pthread_mutex_destroy(&j->lock);
}

/* Bytes jansson writes as they are in a string: no escape needed. */
static int
plain(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e ||
		    *s == '"' || *s == '\\')
			return (0);
	return (1);
}

/* s as jansson dumps a JSON string, quotes included; NULL: no memory. */
static char *
dump_string(const char *s, size_t *len)
{
	json_t	*v;
	char	*d;
	size_t	 n;

	if (plain(s)) {
		n = strlen(s);
		if ((d = malloc(n + 3)) == NULL)
			return (NULL);
		d[0] = '"';
		memcpy(d + 1, s, n);
		d[n + 1] = '"';
		d[n + 2] = '\0';
		*len = n + 2;
		return (d);
	}
	if ((v = json_string(s)) == NULL)
		return (NULL);
	d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(v);
	if (d != NULL)
		*len = strlen(d);
	return (d);
}

static void
piece_free(struct journal_piece *p)
{
	free(p->uid);
	free(p->key);
	free(p->text);
	json_decref(p->entry);
}

/* The index goes: render() builds it again from the claims. */
void
journal_index_drop(struct journal *j)
{
	size_t	 i;

	for (i = 0; i < j->npc; i++)
		piece_free(&j->pc[i]);
	j->npc = 0;
	j->pc_bytes = 0;
	j->pc_ok = 0;
}

/* Where uid is or would go in the index; *found: it is there. */
static size_t
index_find(const struct journal *j, const char *uid, int *found)
{
	size_t	 lo = 0, hi = j->npc, mid;
	int	 c;

	*found = 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(uid, j->pc[mid].uid)) == 0) {
			*found = 1;
			return (mid);
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return (lo);
}

/* The bytes a piece adds to the file: its key, ':', its text, ','. */
#define PIECE_BYTES(p)	((p)->klen + (p)->tlen + 2)

static void
piece_set_entry(struct journal *j, struct journal_piece *p, json_t *e)
{
	j->pc_bytes -= p->tlen;
	free(p->text);
	p->text = NULL;
	p->tlen = 0;
	json_decref(p->entry);
	p->entry = json_incref(e);
}

/* A new piece for uid at index k; -1: no memory (nothing changed). */
static int
index_insert(struct journal *j, size_t k, const char *uid, json_t *e)
{
	struct journal_piece	*pc, p;

	memset(&p, 0, sizeof(p));
	if ((p.uid = strdup(uid)) == NULL ||
	    (p.key = dump_string(uid, &p.klen)) == NULL) {
		free(p.uid);
		return (-1);
	}
	if (j->npc == j->pc_cap) {
		if ((pc = reallocarray(j->pc, j->pc_cap ? j->pc_cap * 2 : 16,
		    sizeof(*pc))) == NULL) {
			free(p.uid);
			free(p.key);
			return (-1);
		}
		j->pc = pc;
		j->pc_cap = j->pc_cap ? j->pc_cap * 2 : 16;
	}
	memmove(&j->pc[k + 1], &j->pc[k], (j->npc - k) * sizeof(*j->pc));
	p.entry = json_incref(e);
	j->pc[k] = p;
	j->npc++;
	j->pc_bytes += p.klen + 2;
	return (0);
}

/*
 * Claim uid's entry is e (the reference is taken, as by
 * json_object_set_new, also on failure): 0, or -1 out of memory with
 * nothing changed. The index follows when it is up to date; when it
 * cannot, it is dropped, and the next write builds it again.
 */
int
journal_mem_put(struct journal *j, const char *uid, json_t *e)
{
	size_t	 k;
	int	 found;

	if (e == NULL)
		return (-1);
	json_incref(e);
	if (json_object_set_new(j->claims, uid, e) != 0) {
		json_decref(e);
		return (-1);
	}
	if (j->pc_ok) {
		k = index_find(j, uid, &found);
		if (found)
			piece_set_entry(j, &j->pc[k], e);
		else if (index_insert(j, k, uid, e) != 0)
			journal_index_drop(j);
	}
	json_decref(e);
	return (0);
}

/* journal_del in memory only (no change for journal_commit). */
void
journal_mem_del(struct journal *j, const char *uid)
{
	size_t	 k;
	int	 found;

	if (json_object_del(j->claims, uid) != 0 || !j->pc_ok)
		return;
	k = index_find(j, uid, &found);
	if (!found) {
		journal_index_drop(j);
		return;
	}
	j->pc_bytes -= PIECE_BYTES(&j->pc[k]);
	piece_free(&j->pc[k]);
	memmove(&j->pc[k], &j->pc[k + 1], (j->npc - k - 1) *
	    sizeof(*j->pc));
	j->npc--;
}

static int
cmp_piece(const void *a, const void *b)
{
	return (strcmp(((const struct journal_piece *)a)->uid,
	    ((const struct journal_piece *)b)->uid));
}

/* The index from the claims (after a load or a replacement): 0 or -1. */
static int
index_build(struct journal *j)
{
	struct journal_piece	*pc;
	const char		*uid;
	json_t			*e;
	size_t			 n = json_object_size(j->claims);

	journal_index_drop(j);
	if (n > j->pc_cap) {
		if ((pc = reallocarray(j->pc, n, sizeof(*pc))) == NULL)
			return (-1);
		j->pc = pc;
		j->pc_cap = n;
	}
	json_object_foreach(j->claims, uid, e) {
		pc = &j->pc[j->npc];
		memset(pc, 0, sizeof(*pc));
		if ((pc->uid = strdup(uid)) == NULL ||
		    (pc->key = dump_string(uid, &pc->klen)) == NULL) {
			free(pc->uid);
			journal_index_drop(j);
			return (-1);
		}
		pc->entry = json_incref(e);
		j->pc_bytes += pc->klen + 2;
		j->npc++;
	}
	if (j->npc > 1)
		qsort(j->pc, j->npc, sizeof(*j->pc), cmp_piece);
	j->pc_ok = 1;
	return (0);
}

static char *
put(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return (p + n);
}

/*
 * The file's text, as the reader checks it (journal_parse): the
 * compact, key-sorted dump of { bootId, claims, driver, schema } that
 * json_dumps(JSON_COMPACT | JSON_SORT_KEYS) would make (jansson sorts
 * keys bytewise, as strcmp), put together from the index (each entry
 * dumped once, when it is new), then the checksum over it spliced in as
 * the last member. In j->out (kept for the next write); NULL: no memory.
 * A write of one new claim costs one dump and a copy of the rest, not a
 * sort and a look-up per claim.
 */
static char *
render(struct journal *j, size_t *lenp, char *sum, size_t sumsize)
{
	struct journal_piece	*pc;
	char			*boot, *drv, *p;
	size_t			 i, len, blen, dlen;
	uLong			 c;

	if ((!j->pc_ok || j->npc != json_object_size(j->claims)) &&
	    index_build(j) != 0)
		return (NULL);
	for (i = 0; i < j->npc; i++) {
		pc = &j->pc[i];
		if (pc->text != NULL)
			continue;
		if ((pc->text = json_dumps(pc->entry, JSON_COMPACT |
		    JSON_SORT_KEYS)) == NULL)
			return (NULL);
		pc->tlen = strlen(pc->text);
		j->pc_bytes += pc->tlen;
	}
	boot = dump_string(j->boot_id, &blen);
	drv = dump_string(j->driver, &dlen);
	/* {"bootId":B,"claims":{K:E,...},"driver":D,"schema":1}, its
	 * last } then ,"checksum":"crc32:xxxxxxxx"} and a newline */
	len = blen + dlen + j->pc_bytes + sizeof("{\"bootId\":,\"claims\":{}"
	    ",\"driver\":,\"schema\":12345678901}") + sizeof(",\"checksum\":"
	    "\"crc32:xxxxxxxx\"}\n");
	if (boot == NULL || drv == NULL || (len > j->out_cap &&
	    (p = realloc(j->out, len)) == NULL)) {
		free(boot);
		free(drv);
		return (NULL);
	}
	if (len > j->out_cap) {
		j->out = p;
		j->out_cap = len;
	}
	p = put(j->out, "{\"bootId\":", 10);
	p = put(p, boot, blen);
	p = put(p, ",\"claims\":{", 11);
	for (i = 0; i < j->npc; i++) {
		pc = &j->pc[i];
		if (i > 0)
			*p++ = ',';
		p = put(p, pc->key, pc->klen);
		*p++ = ':';
		p = put(p, pc->text, pc->tlen);
	}
	p = put(p, "},\"driver\":", 11);
	p = put(p, drv, dlen);
	free(boot);
	free(drv);
	p += snprintf(p, len - (size_t)(p - j->out), ",\"schema\":%d}",
	    JOURNAL_SCHEMA);
	c = crc32(0L, (const Bytef *)j->out, (uInt)(p - j->out));
	snprintf(sum, sumsize, "crc32:%08lx", c & 0xffffffffUL);
	/* over the last } */
	p--;
	p += snprintf(p, len - (size_t)(p - j->out), ",\"checksum\":\"crc32:"
	    "%08lx\"}\n", c & 0xffffffffUL);
	*lenp = (size_t)(p - j->out);
	return (j->out);
}

/* One change for journal_commit; -1: no memory (the caller gives up
 * the call's changes: journal_forget_ops). */
static int
op_add(struct journal *j, const char *uid, json_t *e)
{
	struct journal_op	*ops;

	if (j->nops == j->ops_cap) {
		if ((ops = reallocarray(j->ops, j->ops_cap ? j->ops_cap * 2 :
		    8, sizeof(*ops))) == NULL)
			return (-1);
		j->ops = ops;
		j->ops_cap = j->ops_cap ? j->ops_cap * 2 : 8;
	}
	if ((j->ops[j->nops].uid = strdup(uid)) == NULL)
		return (-1);
	j->ops[j->nops++].entry = e != NULL ? json_incref(e) : NULL;
	return (0);
}

/* The changes made since the last journal_commit are not written (they
 * were undone in memory, or are in a snapshot). */
void
journal_forget_ops(struct journal *j)
{
	size_t	 i;

	for (i = 0; i < j->nops; i++) {
		free(j->ops[i].uid);
		json_decref(j->ops[i].entry);
	}
	j->nops = 0;
}

/*
 * Claim uid's entry is e (the reference is taken, as by
 * json_object_set_new, also on failure), in memory, and a change for
 * the next journal_commit: 0, or -1 out of memory (nothing changed).
 */
int
journal_put(struct journal *j, const char *uid, json_t *e)
{
	if (e == NULL)
		return (-1);
	if (op_add(j, uid, e) != 0) {
		json_decref(e);
		return (-1);
	}
	if (journal_mem_put(j, uid, e) != 0) {
		j->nops--;
		free(j->ops[j->nops].uid);
		json_decref(j->ops[j->nops].entry);
		return (-1);
	}
	return (0);
}

/*
 * Claim uid has no entry any more, in memory, and a change for the next
 * journal_commit (none: nothing happens). Out of memory for the change,
 * the next commit is a compaction, which needs none.
 */
void
journal_del(struct journal *j, const char *uid)
{
	if (json_object_get(j->claims, uid) == NULL)
		return;
	if (op_add(j, uid, NULL) != 0)
		j->log_ok = 0;
	journal_mem_del(j, uid);
}

/* Something that never repeats: one more than gen, or the time in
 * microseconds if later (a log removed by hand starts over from it). */
static unsigned long long
next_gen(unsigned long long gen)
{
	struct timespec		 ts;
	unsigned long long	 now;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (unsigned long long)ts.tv_sec * 1000000ULL +
	    (unsigned long long)ts.tv_nsec / 1000;
	return (now > gen + 1 ? now : gen + 1);
}

/*
 * A new, empty log over the snapshot just renamed (its checksum in
 * j->base), left open for appends; the caller syncs the directory. Not
 * synced itself: a log that did not reach the disk whole is void (its
 * header fails), and the snapshot it would extend holds everything.
 */
static int
new_log(struct journal *j, char *err, size_t errsize)
{
	char		 json[JOURNAL_HDR_MAX], line[JOURNAL_HDR_MAX + 10];
	struct stat	 st;
	size_t		 n;
	int		 fd, e;
	json_t		*h;
	char		*d;

	j->gen = next_gen(j->gen);
	h = json_pack("{s:s, s:s, s:I, s:i}", "base", j->base, "driver",
	    j->driver, "gen", (json_int_t)j->gen, "schema",
	    JOURNAL_LOG_SCHEMA);
	d = h != NULL ? json_dumps(h, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(h);
	if (d == NULL || strlen(d) >= sizeof(json)) {
		free(d);
		return (jfail(err, errsize, KP_ENOMEM, "out of memory"));
	}
	n = jlog_line(line, d, strlen(d));
	free(d);
	fd = openat(j->dirfd, JOURNAL_LOG_TMP, O_RDWR | O_CREAT | O_TRUNC |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1 || fd_write_all(fd, line, n) == -1 ||
	    renameat(j->dirfd, JOURNAL_LOG_TMP, j->dirfd, JOURNAL_LOG) == -1) {
		e = errno;
		if (fd != -1)
			close(fd);
		(void)unlinkat(j->dirfd, JOURNAL_LOG_TMP, 0);
		return (jfail(err, errsize, KP_EIO, "journal: write %s: %s",
		    JOURNAL_LOG, strerror(e)));
	}
	if (j->logfd != -1)
		close(j->logfd);
	j->logfd = fd;
	j->log_ino = fstat(fd, &st) == 0 ? st.st_ino : 0;
	memcpy(j->hdr, line, n);
	j->hlen = n;
	j->log_len = j->log_seen = (off_t)n;
	j->seq = 0;
	j->nrec = 0;
	j->log_ok = 1;
	return (0);
}

/*
 * Compaction: the claims as the snapshot, atomically, then a new empty
 * log over it; the caller holds lock. Also what a change costs in
 * write-through mode (j->through). Crash order: the snapshot's
 * temporary file synced before its rename (else the name may reach the
 * disk before the blocks); when the old log had changes, the directory
 * synced before the new log replaces it (else a crash could keep the new
 * log and the old snapshot, losing them); the directory synced last. A
 * crash leaves the old snapshot with its log, or the new snapshot (the
 * old log then void: its base is not the new snapshot's checksum).
 */
int
journal_save(struct journal *j, char *err, size_t errsize)
{
	struct stat	 st;
	char		*text, sum[sizeof(j->base)];
	size_t		 len = 0, t;
	int		 fd, e;

	if ((text = render(j, &len, sum, sizeof(sum))) == NULL)
		return (jfail(err, errsize, KP_ENOMEM, "out of memory"));
	if (len > JOURNAL_MAX_BYTES)
		return (jfail(err, errsize, KP_ENOSPC, "journal: more than "
		    "%u bytes", JOURNAL_MAX_BYTES));
	fd = openat(j->dirfd, JOURNAL_TMP, O_WRONLY | O_CREAT | O_TRUNC |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1 || fd_write_all(fd, text, len) == -1 ||
	    fsync(fd) == -1 || fstat(fd, &st) == -1) {
		e = errno;
		if (fd != -1)
			close(fd);
		(void)unlinkat(j->dirfd, JOURNAL_TMP, 0);
		return (jfail(err, errsize, KP_EIO, "journal: write %s: %s",
		    JOURNAL_TMP, strerror(e)));
	}
	close(fd);
	if (journal_fault == JOURNAL_FAULT_BEFORE_RENAME)
		return (jfail(err, errsize, KP_EIO, "journal: fault injected "
		    "before the rename"));
	if (renameat(j->dirfd, JOURNAL_TMP, j->dirfd, JOURNAL_FILE) == -1) {
		e = errno;
		(void)unlinkat(j->dirfd, JOURNAL_TMP, 0);
		return (jfail(err, errsize, KP_EIO, "journal: rename: %s",
		    strerror(e)));
	}
	journal_forget_ops(j);
	snprintf(j->base, sizeof(j->base), "%s", sum);
	j->snap_ino = st.st_ino;
	j->snap_size = (off_t)len;
	t = len < JOURNAL_TAIL ? len : JOURNAL_TAIL;
	memcpy(j->snap_tail, text + len - t, t);
	j->snap_tlen = t;
	if (j->log_ok && j->nrec > 0 && fsync(j->dirfd) == -1)
		return (jfail(err, errsize, KP_EIO, "journal: fsync of the "
		    "directory: %s", strerror(errno)));
	j->log_ok = 0;
	if (journal_fault == JOURNAL_FAULT_BEFORE_LOG)
		return (jfail(err, errsize, KP_EIO, "journal: fault injected "
		    "before the new log"));
	/* Without a new log the snapshot still holds everything: the next
	 * change compacts again. */
	if (new_log(j, err, errsize) != 0)
		log_warnx("%s", err);
	if (fsync(j->dirfd) == -1)
		return (jfail(err, errsize, KP_EIO, "journal: fsync of the "
		    "directory: %s", strerror(errno)));
	return (0);
}

void
journal_view_free(struct journal_view *v)
{
	if (v == NULL)
		return;
	json_decref(v->ref);
	free(v->devs);
	free(v->ptrs);
	free(v->strs);
	free(v->data);
	free(v);
}

/* Pointers to the strings of array a, in strs from *k on. */
static const char *const *
strs_of(const json_t *a, const char **strs, size_t *k, size_t *n)
{
	const char *const	*start = strs + *k;
	const json_t		*s;
	size_t			 i;

	*n = json_array_size(a);
	json_array_foreach(a, i, s)
		strs[(*k)++] = json_string_value(s);
	return (*n > 0 ? start : NULL);
}

/* The driver's view of a checked entry; NULL out of memory. */
struct journal_view *
journal_view_new(const char *uid, json_t *entry, int previous_boot)
{
	struct journal_view	*v;

	if ((v = journal_view_lite(uid, entry, previous_boot)) != NULL &&
	    journal_view_data(v) != 0) {
		journal_view_free(v);
		return (NULL);
	}
	return (v);
}

/* The driver's data as compact JSON, for a callback: 0, -1 no memory. */
int
journal_view_data(struct journal_view *v)
{
	const json_t	*d = json_object_get(v->ref, "data");

	if (d == NULL || v->data != NULL)
		return (0);
	if ((v->data = json_dumps(d, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return (-1);
	v->e.data = v->data;
	return (0);
}

/* Without the driver's data (e.data NULL): a replay does not pass it. */
struct journal_view *
journal_view_lite(const char *uid, json_t *entry, int previous_boot)
{
	struct journal_view	*v;
	const json_t		*devs, *d;
	size_t			 i, k = 0, nstr = 0, nd;

	if ((v = calloc(1, sizeof(*v))) == NULL)
		return (NULL);
	v->ref = json_incref(entry);
	devs = json_object_get(entry, "devices");
	nd = json_array_size(devs);
	json_array_foreach(devs, i, d)
		nstr += json_array_size(json_object_get(d, "requests")) +
		    json_array_size(json_object_get(d, "cdiDeviceIds"));
	v->devs = calloc(nd + 1, sizeof(*v->devs));
	v->ptrs = calloc(nd + 1, sizeof(*v->ptrs));
	v->strs = calloc(nstr + 1, sizeof(*v->strs));
	if (v->devs == NULL || v->ptrs == NULL || v->strs == NULL) {
		journal_view_free(v);
		return (NULL);
	}
	json_array_foreach(devs, i, d) {
		v->devs[i].struct_size = sizeof(v->devs[i]);
		v->devs[i].request_names = strs_of(json_object_get(d,
		    "requests"), v->strs, &k, &v->devs[i].n_request_names);
		v->devs[i].pool_name = json_string_value(json_object_get(d,
		    "pool"));
		v->devs[i].device_name = json_string_value(json_object_get(d,
		    "device"));
		v->devs[i].cdi_device_ids = strs_of(json_object_get(d,
		    "cdiDeviceIds"), v->strs, &k, &v->devs[i].n_cdi_device_ids);
		v->devs[i].share_id = json_string_value(json_object_get(d,
		    "shareId"));
		v->ptrs[i] = &v->devs[i];
	}
	v->e.uid = uid;
	v->e.namespace_ = json_string_value(json_object_get(entry,
	    "namespace"));
	v->e.name = json_string_value(json_object_get(entry, "name"));
	v->e.devices = v->ptrs;
	v->e.n_devices = nd;
	v->e.cdi_spec = json_string_value(json_object_get(entry, "cdiSpec"));
	v->e.data = v->data;
	v->e.previous_boot = previous_boot;
	return (v);
}
