/*
 * md_update.c - kp_update_request_metadata (upstream
 * Helper.UpdateRequestMetadata, v0.36) from the driver process: rewrite
 * one request's metadata.json with generation + 1, as upstream's
 * metadataWriter.updateRequestMetadata does. As upstream, only a file
 * that is there is rewritten (the claim was prepared with metadata and
 * not unprepared since; a claim the plugin never prepared, or has
 * unprepared, is "not found"), the pod claim name and generation come
 * from the file it replaces, and the CDI spec is left as it is (it
 * names the file, not its content). Beyond upstream: a UID other than
 * the file's is refused, so a late update for a deleted claim cannot
 * overwrite the file of a new claim of the same name; and the write is
 * atomic (files_put), as master's writer.
 *
 * The old file was written from the nodeserver's frames, so it is
 * decoded as untrusted input: jansson, first object only, a bounded read.
 * The new content counts in the quota (files.c) in place of the old.
 *
 * Runs in: the broker.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/mdjson.h"
#include "base/names.h"
#include "supervisor/supervisor.h"

#define MD_FILE		"metadata.json"

/* Open dir name beneath dfd without following links; -1 and errno. */
static int
open_dir(int dfd, const char *name)
{
	return (openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC));
}

/*
 * The generation, UID and pod claim name of the file's first object, and
 * its size. 0, or KP_EIO with err set.
 */
static int
read_prev(int rfd, long long *gen, char *uid, size_t uidsize, char *pod,
    size_t podsize, size_t *size, char *err, size_t errsize)
{
	json_t		*o, *meta, *v;
	json_error_t	 je;
	struct stat	 st;
	char		*buf;
	ssize_t		 n;
	int		 fd, r = KP_EIO;

	if ((fd = openat(rfd, MD_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1)
		return (files_fail(err, errsize, errno == ENOENT ? KP_ENOENT :
		    KP_EIO, "read metadata file: %s", strerror(errno)));
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)(2 * MD_MAX_CONTENT)) {
		close(fd);
		return (files_fail(err, errsize, KP_EIO, "read metadata file: "
		    "not a regular file of at most %u bytes",
		    2 * MD_MAX_CONTENT));
	}
	*size = (size_t)st.st_size;
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return (files_fail(err, errsize, KP_ENOMEM, "out of memory"));
	}
	n = read(fd, buf, (size_t)st.st_size);
	close(fd);
	if (n < 0) {
		free(buf);
		return (files_fail(err, errsize, KP_EIO, "read metadata "
		    "file: %s", strerror(errno)));
	}
	o = json_loadb(buf, (size_t)n, JSON_DISABLE_EOF_CHECK, &je);
	free(buf);
	if (o == NULL || !json_is_object(o) ||
	    !json_is_object(meta = json_object_get(o, "metadata")) ||
	    !json_is_integer(v = json_object_get(meta, "generation")) ||
	    json_integer_value(v) < 1 || json_integer_value(v) >= INT64_MAX) {
		files_fail(err, errsize, KP_EIO, "decode existing metadata: "
		    "%s", o == NULL ? je.text : "no metadata.generation >= 1");
		goto out;
	}
	*gen = json_integer_value(v);
	v = json_object_get(meta, "uid");
	snprintf(uid, uidsize, "%s", json_is_string(v) ?
	    json_string_value(v) : "");
	v = json_object_get(o, "podClaimName");
	snprintf(pod, podsize, "%s", json_is_string(v) ?
	    json_string_value(v) : "");
	r = 0;
out:
	json_decref(o);
	return (r);
}

static int
md_update(struct sup *sup, const Kpipc__MetadataUpdate *u, char *err,
    size_t errsize)
{
	struct md_device	 *devs = NULL;
	struct md_input		  in;
	char			  claim[NAME_MAX_LABEL + NAME_MAX_SUBDOMAIN + 2];
	char			  base[NAME_MAX_LABEL + 1], what[512];
	char			  uid[NAME_MAX_UID + 2], pod[NAME_MAX_LABEL + 2];
	char			 *json = NULL;
	size_t			  i, len, bl, old = 0;
	long long		  gen = 0;
	int			  cfd, rfd = -1, r;

	bl = strcspn(u->request, "/");	/* upstream BaseRequestRef */
	snprintf(base, sizeof(base), "%.*s", (int)bl, u->request);
	snprintf(claim, sizeof(claim), "%s_%s", u->namespace_, u->name);
	if ((cfd = open_dir(sup->meta_fd, claim)) != -1) {
		rfd = open_dir(cfd, base);
		close(cfd);
	}
	if (rfd == -1 && errno != ENOENT)
		return (files_fail(err, errsize, KP_EIO, "metadata directory "
		    "%s/%s: %s", claim, base, strerror(errno)));
	r = rfd == -1 ? KP_ENOENT : read_prev(rfd, &gen, uid, sizeof(uid),
	    pod, sizeof(pod), &old, err, errsize);
	if (r == KP_ENOENT) {
		/* upstream's words */
		r = files_fail(err, errsize, KP_ENOENT, "request \"%s\" not "
		    "found in prepared claim %s/%s", u->request, u->namespace_,
		    u->name);
		goto out;
	}
	if (r != 0)
		goto out;
	if (strcmp(uid, u->uid) != 0) {
		r = files_fail(err, errsize, KP_ENOENT, "request \"%s\" not "
		    "found in prepared claim %s/%s: prepared with UID %.40s, "
		    "not %s", u->request, u->namespace_, u->name, uid, u->uid);
		goto out;
	}
	if (u->n_devices > 0 &&
	    (devs = calloc(u->n_devices, sizeof(*devs))) == NULL) {
		r = files_fail(err, errsize, KP_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < u->n_devices; i++) {
		devs[i].pool = u->devices[i]->pool;
		devs[i].name = u->devices[i]->device;
		devs[i].attrs = u->devices[i]->attributes[0] != '\0' ?
		    u->devices[i]->attributes : NULL;
		devs[i].net = u->devices[i]->network_data[0] != '\0' ?
		    u->devices[i]->network_data : NULL;
	}
	in = (struct md_input){ u->namespace_, u->name, u->uid, gen + 1, pod,
	    u->request, devs, u->n_devices };
	if ((r = md_encode(sup->cfg, &in, &json, &len)) != 0) {
		r = r == KP_EINVAL ? files_fail(err, errsize, KP_EINVAL,
		    "metadata of request %s: %zu bytes, more than %u",
		    u->request, len, MD_MAX_CONTENT) : files_fail(err, errsize,
		    KP_ENOMEM, "out of memory");
		goto out;
	}
	snprintf(what, sizeof(what), "metadata file %s/%s/%s", claim, base,
	    MD_FILE);
	if ((r = files_quota_check(sup, what, 0, len, old, err,
	    errsize)) != 0)
		goto out;
	if ((r = files_put(rfd, MD_FILE, (const uint8_t *)json, len, what,
	    err, errsize)) != 0)
		goto out;
	files_quota_sub(sup, 0, old);
	files_quota_add(sup, 0, len);
	log_info(3, "device metadata of %s/%s request %s updated "
	    "(generation %lld)", u->namespace_, u->name, u->request, gen + 1);
out:
	free(json);
	free(devs);
	if (rfd != -1)
		close(rfd);
	return (r);
}

/* A MetadataUpdate from the driver process: one Result. */
void
metadata_update(struct sup *sup, const Kpipc__Msg *m)
{
	char	 err[KP_ERROR_SIZE] = "";
	int	 r;

	if (sup->meta_fd == -1)
		r = files_fail(err, sizeof(err), KP_ENOTSUP, "device metadata "
		    "is not enabled (kp_device_metadata)");
	else
		r = md_update(sup, m->metadata_update, err, sizeof(err));
	(void)sup_reply_driver(sup, r, r == 0 ? "" : err);
}
