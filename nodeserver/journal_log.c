/*
 * journal_log.c - the journal's change log, schema 2 (journal.c has the
 * snapshot and when each is written): kubeletplugin-journal.log beside
 * the schema-1 snapshot kubeletplugin-journal.json, one line each:
 *
 *   <crc32 of the JSON, 8 hex digits> <compact JSON>\n
 *
 * The first line is the header, {"base":"crc32:<the snapshot's checksum>",
 * "driver":"...","gen":G,"schema":2}; each further line one change,
 * {"entry":{...},"seq":N,"uid":"..."} (the claim's entry is now this) or
 * {"seq":N,"uid":"..."} (the claim has none), seq counting from 1.
 *
 * The log extends only the snapshot its base names: a snapshot written
 * since (by a compaction whose new log did not reach the disk, or by a
 * release that knows only schema 1) makes it void. gen is new at every
 * compaction and never repeats (journal.c), so an instance sharing the
 * directory tells another's writes by (gen, length), read under the
 * lock both take; an inode number, which a file system reuses, tells
 * nothing (issue 28, finding 1). Reading stops at the first line that is
 * torn, fails its checksum or breaks a rule: what came before is the
 * log (a crash in an append loses only the unacknowledged change).
 *
 * Runs in: the nodeserver, in its sandbox; jlog_apply is also the fuzz
 * target's (tests/fuzz/fuzz_journal.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "nodeserver/journal.h"

#define JLOG_MAX_LINE	(JOURNAL_MAX_DATA + 256u * 1024)

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	return (-1);
}

/*
 * The JSON of the line at text (up to a newline within len): 0 with
 * *json, *jlen and *next (the byte after the newline), or -1 when the
 * line is torn (no newline), too long, or fails its checksum.
 */
static int
line_of(const char *text, size_t len, const char **json, size_t *jlen,
    size_t *next)
{
	const char	*nl;
	unsigned long	 want = 0;
	size_t		 n, i;
	int		 h;

	if ((nl = memchr(text, '\n', len < JLOG_MAX_LINE ? len :
	    JLOG_MAX_LINE)) == NULL)
		return (-1);
	n = (size_t)(nl - text);
	if (n < 10 || text[8] != ' ')
		return (-1);
	for (i = 0; i < 8; i++) {
		if ((h = hexval((unsigned char)text[i])) < 0)
			return (-1);
		want = want << 4 | (unsigned long)h;
	}
	if (journal_crc(text + 9, n - 9) != want)
		return (-1);
	*json = text + 9;
	*jlen = n - 9;
	*next = n + 1;
	return (0);
}

/* The line for json (len bytes), in buf of at least len + 10 bytes. */
size_t
jlog_line(char *buf, const char *json, size_t len)
{
	snprintf(buf, 10, "%08lx ", journal_crc(json, len));
	memcpy(buf + 9, json, len);
	buf[9 + len] = '\n';
	return (len + 10);
}

/*
 * The header line at the start of text: 0 with *gen, base (the
 * snapshot's checksum it extends) and *hlen (its bytes), or -1 with err.
 */
int
jlog_header(const char *text, size_t len, const char *driver,
    unsigned long long *gen, char *base, size_t bsize, size_t *hlen,
    char *err, size_t errsize)
{
	const char	*json;
	json_t		*h, *v;
	size_t		 jlen;
	int		 r = -1;

	if (line_of(text, len, &json, &jlen, hlen) != 0) {
		snprintf(err, errsize, "header: torn or checksum mismatch");
		return (-1);
	}
	if ((h = json_loadb(json, jlen, JSON_REJECT_DUPLICATES, NULL)) ==
	    NULL || json_object_size(h) != 4) {
		snprintf(err, errsize, "header: not a JSON object of base, "
		    "driver, gen, schema");
		goto out;
	}
	v = json_object_get(h, "schema");
	if (!json_is_integer(v) || json_integer_value(v) !=
	    JOURNAL_LOG_SCHEMA) {
		snprintf(err, errsize, "header: schema is not %d",
		    JOURNAL_LOG_SCHEMA);
		goto out;
	}
	v = json_object_get(h, "driver");
	if (!json_is_string(v) || strcmp(json_string_value(v), driver) != 0) {
		snprintf(err, errsize, "header: driver is not \"%s\"", driver);
		goto out;
	}
	v = json_object_get(h, "gen");
	if (!json_is_integer(v) || json_integer_value(v) <= 0) {
		snprintf(err, errsize, "header: gen is not a positive integer");
		goto out;
	}
	*gen = (unsigned long long)json_integer_value(v);
	v = json_object_get(h, "base");
	if (!json_is_string(v) || json_string_length(v) >= bsize) {
		snprintf(err, errsize, "header: base is not a checksum");
		goto out;
	}
	snprintf(base, bsize, "%s", json_string_value(v));
	r = 0;
out:
	json_decref(h);
	return (r);
}

/*
 * Apply the change lines in text (after the header) in order through
 * fn(user, uid, entry or NULL), each checked (journal_check_entry) and
 * numbered from *seq + 1. Returns the bytes of the lines applied
 * (*seq the last one's number, *n counted up); a line that is torn,
 * fails its checksum or breaks a rule ends it, err saying which ("" when
 * the text simply ends). fn returns 0, or non-zero (out of memory) to
 * stop there.
 */
size_t
jlog_apply(const char *text, size_t len, const char *driver,
    unsigned long long *seq, size_t *n,
    int (*fn)(void *, const char *, json_t *), void *user, char *err,
    size_t errsize)
{
	const char	*json, *uid;
	json_t		*r, *u, *s, *e;
	size_t		 off = 0, jlen, next;

	err[0] = '\0';
	while (off < len) {
		if (line_of(text + off, len - off, &json, &jlen, &next) != 0) {
			snprintf(err, errsize, "change %llu: torn or checksum "
			    "mismatch", *seq + 1);
			break;
		}
		if ((r = json_loadb(json, jlen, JSON_REJECT_DUPLICATES,
		    NULL)) == NULL) {
			snprintf(err, errsize, "change %llu: not JSON",
			    *seq + 1);
			break;
		}
		u = json_object_get(r, "uid");
		s = json_object_get(r, "seq");
		e = json_object_get(r, "entry");
		uid = json_string_value(u);
		if (!json_is_object(r) || uid == NULL ||
		    json_object_size(r) != (e != NULL ? 3u : 2u) ||
		    !json_is_integer(s) || (unsigned long long)
		    json_integer_value(s) != *seq + 1) {
			snprintf(err, errsize, "change %llu: not uid, seq %llu "
			    "and at most an entry", *seq + 1, *seq + 1);
			json_decref(r);
			break;
		}
		if ((e != NULL && journal_check_entry(driver, uid, e, err,
		    errsize) != 0) || (e == NULL &&
		    !name_is_claim_uid(uid, strlen(uid)))) {
			if (e == NULL)
				snprintf(err, errsize, "change %llu: uid: not "
				    "%s", *seq + 1, NAME_R_UID);
			json_decref(r);
			break;
		}
		if (fn(user, uid, e) != 0) {
			snprintf(err, errsize, "out of memory");
			json_decref(r);
			break;
		}
		json_decref(r);
		(*seq)++;
		(*n)++;
		off += next;
	}
	return (off);
}
