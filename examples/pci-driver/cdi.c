/*
 * cdi.c - Container Device Interface spec files, one per prepared claim:
 * <cdi-dir>/<driver>_<claim uid>.json with kind <driver>/pci and one
 * device per allocated PCI function. Each device sets an environment
 * variable naming its PCI address and, for a function bound to vfio-pci,
 * the device nodes /dev/vfio/vfio and /dev/vfio/<IOMMU group>.
 *
 * The hooks run in the sandboxed nodeserver, which may not write the CDI
 * directory (every driver of the node shares it): the JSON is made here
 * and kp_cdi_spec_write() has the library's supervisor write it
 * atomically, under this driver's "<driver>_" prefix. The checkpoint, in
 * the driver's own state directory, is written directly (write_atomic).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pci.h"

#define CDI_VERSION	"0.5.0"

/* The spec's file name: the library's rule, "<driver>_" + the UID. */
int
cdi_spec_name(const struct pci_config *cfg, const char *claim_uid,
    char *out, size_t size)
{
	int	 n;

	n = snprintf(out, size, "%s_%s.json", cfg->driver, claim_uid);
	return (n < 0 || (size_t)n >= size ? -1 : 0);
}

int
cdi_spec_path(const struct pci_config *cfg, const char *claim_uid,
    char *out, size_t size)
{
	char	 name[256];
	int	 n;

	if (cdi_spec_name(cfg, claim_uid, name, sizeof(name)) != 0)
		return (-1);
	n = snprintf(out, size, "%s/%s", cfg->cdi_dir, name);
	return (n < 0 || (size_t)n >= size ? -1 : 0);
}

/* mkdir -p (also used for the state and socket directories) */
int
pci_mkdirs(const char *path, mode_t mode, char *err, size_t errsize)
{
	char	 buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) == -1 && errno != EEXIST)
			goto fail;
		*p = '/';
	}
	if (mkdir(buf, mode) == -1 && errno != EEXIST)
		goto fail;
	return (0);
fail:
	snprintf(err, errsize, "mkdir %s: %s", buf, strerror(errno));
	return (-1);
}

/* Write data to path atomically (temp + fsync + rename + fsync dir);
 * for the checkpoint in the state directory. */
int
write_atomic(const char *path, const char *data, size_t len, char *err,
    size_t errsize)
{
	char		 tmp[PATH_MAX], dir[PATH_MAX], *slash;
	const char	*base;
	size_t		 off = 0;
	ssize_t		 w;
	int		 fd, dfd;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL) {
		snprintf(err, errsize, "%s: not an absolute path", path);
		return (-1);
	}
	*slash = '\0';
	base = slash + 1;
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, base) >=
	    (int)sizeof(tmp)) {
		snprintf(err, errsize, "%s: path too long", path);
		return (-1);
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1) {
		snprintf(err, errsize, "create %s: %s", tmp, strerror(errno));
		return (-1);
	}
	while (off < len) {
		if ((w = write(fd, data + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errsize, "write %s: %s", tmp,
			    strerror(errno));
			goto fail;
		}
		off += (size_t)w;
	}
	if (fsync(fd) == -1) {
		snprintf(err, errsize, "fsync %s: %s", tmp, strerror(errno));
		goto fail;
	}
	close(fd);
	fd = -1;
	if (rename(tmp, path) == -1) {
		snprintf(err, errsize, "rename %s: %s", tmp, strerror(errno));
		goto fail;
	}
	if ((dfd = open(dir[0] != '\0' ? dir : "/",
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		(void)fsync(dfd);
		close(dfd);
	}
	return (0);
fail:
	if (fd != -1)
		close(fd);
	(void)unlink(tmp);
	return (-1);
}

/* "0000:00:1f.2" -> "PCI_ADDRESS_0000_00_1F_2=0000:00:1f.2" */
static void
env_entry(const char *addr, char *out, size_t size)
{
	size_t	 i, n;

	n = (size_t)snprintf(out, size, "PCI_ADDRESS_");
	for (i = 0; addr[i] != '\0' && n + 1 < size; i++, n++) {
		if (addr[i] == ':' || addr[i] == '.')
			out[n] = '_';
		else if (addr[i] >= 'a' && addr[i] <= 'f')
			out[n] = (char)(addr[i] - 'a' + 'A');
		else
			out[n] = addr[i];
	}
	snprintf(out + n, size - n, "=%s", addr);
}

static json_t *
spec_device(const struct cdi_device *d)
{
	json_t	*edits, *nodes;
	char	 env[128], node[64];

	env_entry(d->addr, env, sizeof(env));
	edits = json_pack("{s:[s]}", "env", env);
	if (edits != NULL && d->vfio_group >= 0) {
		snprintf(node, sizeof(node), "/dev/vfio/%d", d->vfio_group);
		nodes = json_pack("[{s:s},{s:s}]", "path", "/dev/vfio/vfio",
		    "path", node);
		if (nodes == NULL || json_object_set_new(edits, "deviceNodes",
		    nodes) != 0) {
			json_decref(edits);
			return (NULL);
		}
	}
	if (edits == NULL)
		return (NULL);
	return (json_pack("{s:s, s:o}", "name", d->name, "containerEdits",
	    edits));
}

/* Write the spec of a claim's devices; replaces an earlier file. */
int
cdi_write_spec(const struct pci_config *cfg, const char *claim_uid,
    const struct cdi_device *devs, size_t n, char *err, size_t errsize)
{
	char	 name[256], kind[128], *text = NULL;
	json_t	*spec, *list, *d;
	size_t	 i;
	int	 r;

	if (cdi_spec_name(cfg, claim_uid, name, sizeof(name)) != 0) {
		snprintf(err, errsize, "CDI spec name too long");
		return (-1);
	}
	snprintf(kind, sizeof(kind), "%s/pci", cfg->driver);
	if ((list = json_array()) == NULL)
		goto oom;
	for (i = 0; i < n; i++)
		if ((d = spec_device(&devs[i])) == NULL ||
		    json_array_append_new(list, d) != 0) {
			json_decref(list);
			goto oom;
		}
	if ((spec = json_pack("{s:s, s:s, s:o}", "cdiVersion", CDI_VERSION,
	    "kind", kind, "devices", list)) == NULL)
		goto oom;
	text = json_dumps(spec, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(spec);
	if (text == NULL)
		goto oom;
	r = kp_cdi_spec_write(name, text, strlen(text), err, errsize);
	free(text);
	return (r == 0 ? 0 : -1);
oom:
	snprintf(err, errsize, "CDI spec: out of memory");
	return (-1);
}

/* Remove a claim's spec; a missing file is not an error. */
int
cdi_remove_spec(const struct pci_config *cfg, const char *claim_uid,
    char *err, size_t errsize)
{
	char	 name[256];

	if (cdi_spec_name(cfg, claim_uid, name, sizeof(name)) != 0) {
		snprintf(err, errsize, "CDI spec name too long");
		return (-1);
	}
	return (kp_cdi_spec_remove(name, err, errsize) == 0 ? 0 : -1);
}
