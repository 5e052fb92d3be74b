/*
 * checkpoint.c - the prepared claims on disk, so a restarted nodeserver
 * or driver still knows them (unprepare never asks the API server):
 *
 *   { "version": 1, "driver": "pci.example.com",
 *     "checksum": "crc32:<8 hex digits of the compact, key-sorted claims>",
 *     "claims": { "<claim uid>": { "namespace": "...", "name": "...",
 *         "devices": [ { "request": "...", "pool": "...", "device": "...",
 *             "pciAddress": "...", "cdiDeviceId": "..." } ] } } }
 *
 * Written through a temporary file, fsync and rename (write_atomic in cdi.c),
 * so a crash leaves the old or the new file, never a torn one. A file that
 * is empty, does not parse, fails its checksum or has a version this code
 * does not know is never overwritten: loading fails with a message that
 * says why, and the driver refuses to start, because claims may still be
 * prepared on the node (reference field failure 27).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pci.h"

#define KEEP_NOTE	"; the file is kept (claims may still be prepared): " \
			"repair or remove it by hand once no pod uses this " \
			"driver's devices on the node"

int
checkpoint_path(const struct pci_config *cfg, char *out, size_t size)
{
	int	 n;

	n = snprintf(out, size, "%s/%s", cfg->state_dir, CHECKPOINT_FILE);
	return (n < 0 || (size_t)n >= size ? -1 : 0);
}

static uint32_t
crc32(const char *s, size_t len)
{
	uint32_t	 c = 0xffffffffu;
	size_t		 i;
	int		 k;

	for (i = 0; i < len; i++) {
		c ^= (unsigned char)s[i];
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return (~c);
}

/* "crc32:xxxxxxxx" of the claims object; "" when out of memory. */
static void
checksum(json_t *claims, char *out, size_t size)
{
	char	*text;

	out[0] = '\0';
	if ((text = json_dumps(claims, JSON_COMPACT | JSON_SORT_KEYS)) ==
	    NULL)
		return;
	snprintf(out, size, "crc32:%08x", crc32(text, strlen(text)));
	free(text);
}

/* Field rules of one claim entry; NULL if fine, else what is wrong. */
static const char *
check_claim(json_t *c)
{
	json_t	*devs, *d;
	size_t	 i;

	if (!json_is_object(c) ||
	    !json_is_string(json_object_get(c, "namespace")) ||
	    !json_is_string(json_object_get(c, "name")))
		return ("a claim lacks namespace or name");
	devs = json_object_get(c, "devices");
	if (!json_is_array(devs))
		return ("a claim lacks its devices");
	json_array_foreach(devs, i, d) {
		if (!json_is_string(json_object_get(d, "pool")) ||
		    !json_is_string(json_object_get(d, "device")) ||
		    !json_is_string(json_object_get(d, "request")) ||
		    !json_is_string(json_object_get(d, "pciAddress")) ||
		    !json_is_string(json_object_get(d, "cdiDeviceId")))
			return ("a device lacks a field");
	}
	return (NULL);
}

/*
 * Load the checkpoint. On success *claims is a new reference to the
 * claims object (empty when there is no file). On failure err says what
 * is wrong with which file, and nothing was changed on disk.
 */
int
checkpoint_load(const struct pci_config *cfg, json_t **claims, char *err,
    size_t errsize)
{
	char		 path[PATH_MAX], sum[32];
	json_error_t	 jerr;
	json_t		*root, *c, *v;
	const char	*key, *why;
	struct stat	 st;

	*claims = NULL;
	if (checkpoint_path(cfg, path, sizeof(path)) != 0) {
		snprintf(err, errsize, "checkpoint path too long");
		return (-1);
	}
	if (stat(path, &st) == -1) {
		if (errno == ENOENT) {
			*claims = json_object();
			return (*claims != NULL ? 0 : -1);
		}
		snprintf(err, errsize, "checkpoint %s: %s", path,
		    strerror(errno));
		return (-1);
	}
	if (st.st_size == 0) {
		snprintf(err, errsize, "checkpoint %s is empty" KEEP_NOTE,
		    path);
		return (-1);
	}
	if ((root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL) {
		snprintf(err, errsize, "checkpoint %s: line %d: %s" KEEP_NOTE,
		    path, jerr.line, jerr.text);
		return (-1);
	}
	v = json_object_get(root, "version");
	if (!json_is_integer(v)) {
		why = "no version field";
		goto bad;
	}
	if (json_integer_value(v) != CHECKPOINT_VERSION) {
		snprintf(err, errsize, "checkpoint %s has version %lld, this "
		    "driver reads version %d" KEEP_NOTE, path,
		    (long long)json_integer_value(v), CHECKPOINT_VERSION);
		json_decref(root);
		return (-1);
	}
	c = json_object_get(root, "claims");
	if (!json_is_object(c)) {
		why = "no claims object";
		goto bad;
	}
	checksum(c, sum, sizeof(sum));
	v = json_object_get(root, "checksum");
	if (!json_is_string(v) || strcmp(json_string_value(v), sum) != 0) {
		why = "checksum mismatch";
		goto bad;
	}
	json_object_foreach(c, key, v)
		if ((why = check_claim(v)) != NULL)
			goto bad;
	*claims = json_incref(c);
	json_decref(root);
	return (0);
bad:
	snprintf(err, errsize, "checkpoint %s: %s" KEEP_NOTE, path, why);
	json_decref(root);
	return (-1);
}

/* Write the claims as the new checkpoint, atomically. */
int
checkpoint_save(const struct pci_config *cfg, json_t *claims, char *err,
    size_t errsize)
{
	char	 path[PATH_MAX], sum[32], *text;
	json_t	*root;
	int	 r;

	if (checkpoint_path(cfg, path, sizeof(path)) != 0) {
		snprintf(err, errsize, "checkpoint path too long");
		return (-1);
	}
	checksum(claims, sum, sizeof(sum));
	root = json_pack("{s:i, s:s, s:s, s:O}", "version",
	    CHECKPOINT_VERSION, "driver", cfg->driver, "checksum", sum,
	    "claims", claims);
	if (root == NULL || sum[0] == '\0' || (text = json_dumps(root,
	    JSON_INDENT(2) | JSON_PRESERVE_ORDER)) == NULL) {
		json_decref(root);
		snprintf(err, errsize, "checkpoint: out of memory");
		return (-1);
	}
	json_decref(root);
	r = write_atomic(path, text, strlen(text), err, errsize);
	free(text);
	return (r);
}
