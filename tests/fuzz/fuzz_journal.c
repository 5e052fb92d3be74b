/*
 * fuzz_journal.c - libFuzzer target for the prepared-claim journal's
 * reader (nodeserver/journal.c journal_parse, and the driver's view of
 * each entry it accepts). The file is written by the nodeserver, which
 * runs driver code, and survives crashes and disks: the reader must
 * refuse anything else without a crash, a leak or a partial result.
 * Invariants checked (abort on a breach):
 *  - the verdict is 0 or KP_EINVAL (KP_ENOMEM aside); a refusal leaves
 *    no claims and a NUL-terminated, non-empty message;
 *  - an accepted journal names the driver, has a boot ID that fits, and
 *    every entry passes journal_check_entry and makes a view whose
 *    devices all have a pool and a device name;
 *  - the entry rules hold on their own: mutations rarely keep a CRC-32
 *    right, so the "claims" of any input that is a JSON object go through
 *    journal_check_entry too, and each entry it accepts makes a sound
 *    view.
 *  - the schema-2 change log (nodeserver/journal_log.c): the same bytes
 *    read as a log (jlog_header, then jlog_apply from the header's end,
 *    or from the start when there is none): the bytes applied never pass
 *    the input, the changes are numbered without a gap, and every entry
 *    applied passes journal_check_entry (a line whose CRC-32 the fuzzer
 *    got right still meets the rules).
 * Run: ./tests/fuzz/fuzz_journal -max_total_time=60 corpus/
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "nodeserver/journal.h"

#define DRV	"gpu.example.com"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Every entry the rules accept makes a view with its fields set. */
static void
check_entries(json_t *claims, int must)
{
	struct journal_view	*v;
	const char		*uid;
	json_t			*e;
	char			 err[KP_ERROR_SIZE];
	size_t			 i;

	json_object_foreach(claims, uid, e) {
		if (journal_check_entry(DRV, uid, e, err, sizeof(err)) != 0) {
			if (must || err[0] == '\0')
				abort();
			continue;
		}
		if ((v = journal_view_new(uid, e, 0)) == NULL)
			continue;
		for (i = 0; i < v->e.n_devices; i++)
			if (v->e.devices[i]->pool_name == NULL ||
			    v->e.devices[i]->device_name == NULL)
				abort();
		if (v->e.namespace_ == NULL || v->e.name == NULL)
			abort();
		journal_view_free(v);
	}
}

/* jlog_apply's callback: each change checked, kept in claims. */
static int
apply_one(void *user, const char *uid, json_t *e)
{
	char	 err[KP_ERROR_SIZE];

	if (e != NULL && journal_check_entry(DRV, uid, e, err,
	    sizeof(err)) != 0)
		abort();
	if (e == NULL)
		(void)json_object_del(user, uid);
	else if (json_object_set(user, uid, e) != 0)
		return (1);
	return (0);
}

static void
as_log(const uint8_t *data, size_t size)
{
	unsigned long long	 gen = 0, seq = 0;
	json_t			*claims;
	char			 base[32], err[KP_ERROR_SIZE];
	size_t			 hlen = 0, n = 0, used;

	if (jlog_header((const char *)data, size, DRV, &gen, base,
	    sizeof(base), &hlen, err, sizeof(err)) == 0 && (hlen > size ||
	    gen == 0 || memchr(base, '\0', sizeof(base)) == NULL))
		abort();
	if (hlen > size)
		return;
	if ((claims = json_object()) == NULL)
		return;
	used = jlog_apply((const char *)data + hlen, size - hlen, DRV, &seq,
	    &n, apply_one, claims, err, sizeof(err));
	if (used > size - hlen || seq != n || (used < size - hlen &&
	    err[0] == '\0'))
		abort();
	check_entries(claims, 1);
	json_decref(claims);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t			*claims = NULL, *root;
	char			 boot[JOURNAL_BOOT_MAX], err[KP_ERROR_SIZE];
	int			 r;

	as_log(data, size);
	memset(err, 'x', sizeof(err));
	r = journal_parse((const char *)data, size, DRV, &claims, boot,
	    sizeof(boot), err, sizeof(err));
	if (r != 0) {
		if ((r != KP_EINVAL && r != KP_ENOMEM) || claims != NULL ||
		    memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
			abort();
		if ((root = json_loadb((const char *)data, size, 0, NULL)) !=
		    NULL && json_is_object(json_object_get(root, "claims")))
			check_entries(json_object_get(root, "claims"), 0);
		json_decref(root);
		return (0);
	}
	if (!json_is_object(claims) || memchr(boot, '\0', sizeof(boot)) ==
	    NULL || boot[0] == '\0')
		abort();
	check_entries(claims, 1);
	json_decref(claims);
	return (0);
}
