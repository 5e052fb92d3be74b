/*
 * discover.c - the machine's PCI functions from sysfs:
 * <root>/bus/pci/devices/<address>/{vendor,device,subsystem_vendor,
 * subsystem_device,class,numa_node,resource}, the driver, iommu_group and
 * physfn links (physfn: an SR-IOV virtual function's physical function),
 * and the PCIe root complex from the device's own path. Entries
 * whose name is not a PCI address are skipped; missing files leave the
 * field empty (a fake tree or an odd device is not an error).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "pci.h"

/* First line of dir/file into out, without the newline; "" if absent. */
static void
read_attr(const char *dir, const char *file, char *out, size_t size)
{
	char	 path[PATH_MAX];
	FILE	*f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((f = fopen(path, "re")) == NULL)
		return;
	if (fgets(out, (int)size, f) == NULL)
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\r\n")] = '\0';
}

/* The last component of a link's target into out; "" if too long. */
static void
target_base(const char *target, char *out, size_t size)
{
	const char	*base = strrchr(target, '/');

	if ((size_t)snprintf(out, size, "%s", base != NULL ? base + 1 :
	    target) >= size)
		out[0] = '\0';		/* too long to be a name: none */
}

/* The last component a symbolic link dir/file points to; "" if none. */
static void
read_link_base(const char *dir, const char *file, char *out, size_t size)
{
	char		 path[PATH_MAX], target[PATH_MAX];
	ssize_t		 n;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((n = readlink(path, target, sizeof(target) - 1)) <= 0)
		return;
	target[n] = '\0';
	target_base(target, out, size);
}

/* The IOMMU group of the function at dir (its iommu_group link); -1:
 * none. */
static int
iommu_group_of(const char *dir)
{
	char	 g[32], *end;
	long	 v;

	read_link_base(dir, "iommu_group", g, sizeof(g));
	v = strtol(g, &end, 10);
	if (g[0] != '\0' && *end == '\0' && v >= 0 && v <= INT_MAX)
		return ((int)v);
	return (-1);
}

/* "0x8086" stays; anything else becomes "". */
static void
hex_id(const char *dir, const char *file, char *out, size_t size)
{
	size_t	 i;

	read_attr(dir, file, out, size);
	if (strncmp(out, "0x", 2) != 0 || out[2] == '\0') {
		out[0] = '\0';
		return;
	}
	for (i = 2; out[i] != '\0'; i++)
		if (strchr("0123456789abcdef", out[i]) == NULL) {
			out[0] = '\0';
			return;
		}
}

static int
int_attr(const char *dir, const char *file, int dflt)
{
	char	 buf[32], *end;
	long	 v;

	read_attr(dir, file, buf, sizeof(buf));
	if (buf[0] == '\0')
		return (dflt);
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno != 0 || end == buf || v < INT_MIN || v > INT_MAX)
		return (dflt);
	return ((int)v);
}

/* Sum of the memory BARs (the flags' IORESOURCE_MEM bit, 0x200) of the
 * six standard regions in the "resource" file. */
static uint64_t
bar_bytes(const char *dir)
{
	char			 path[PATH_MAX], line[128];
	unsigned long long	 start, end, flags;
	uint64_t		 sum = 0;
	FILE			*f;
	int			 i;

	if (snprintf(path, sizeof(path), "%s/resource", dir) >=
	    (int)sizeof(path) || (f = fopen(path, "re")) == NULL)
		return (0);
	for (i = 0; i < 6 && fgets(line, sizeof(line), f) != NULL; i++) {
		if (sscanf(line, "%llx %llx %llx", &start, &end, &flags) != 3)
			continue;
		if ((flags & 0x200) != 0 && end > start)
			sum += end - start + 1;
	}
	fclose(f);
	return (sum);
}

/* The root complex ("pci0000:00") from the device's link in
 * bus/pci/devices (../../../devices/pci0000:00/0000:00:01.0): one
 * readlink, where realpath() costs one per path component. A device
 * directory that is no link (an odd fake tree) is its own path. "" in a
 * fake tree without devices/pci*. */
static void
pcie_root(const char *dir, char *out, size_t size)
{
	char		 target[PATH_MAX];
	const char	*p = target;
	ssize_t		 n;

	out[0] = '\0';
	if ((n = readlink(dir, target, sizeof(target) - 1)) >= 0)
		target[n] = '\0';
	else if (errno == EINVAL)
		p = dir;
	else
		return;
	if ((p = strstr(p, "/devices/pci")) == NULL)
		return;
	p += strlen("/devices/");
	n = (ssize_t)strcspn(p, "/");
	if ((size_t)n < size)
		snprintf(out, size, "%.*s", (int)n, p);
}

/* A PCI address: dddd:bb:dd.f in lower-case hex (domains may be longer
 * on some platforms: 4 to 8 digits). */
static int
is_pci_addr(const char *s)
{
	size_t	 i, n = strlen(s), dom;

	dom = strcspn(s, ":");
	if (dom < 4 || dom > 8 || n != dom + 8)
		return (0);
	for (i = 0; i < n; i++) {
		if (i == dom || i == dom + 3) {
			if (s[i] != ':')
				return (0);
		} else if (i == dom + 6) {
			if (s[i] != '.')
				return (0);
		} else if (strchr("0123456789abcdef", s[i]) == NULL)
			return (0);
	}
	return (s[n - 1] >= '0' && s[n - 1] <= '7');
}

/* "0000:00:1f.2" -> "pci-0000-00-1f-2": a DNS label (lower case,
 * alphanumerics and '-', at most 63). -1 if addr is not a PCI address. */
int
pci_name_from_addr(const char *addr, char *out, size_t size)
{
	size_t	 i, n;

	if (!is_pci_addr(addr) || size < strlen(addr) + 5)
		return (-1);
	n = (size_t)snprintf(out, size, "pci-");
	for (i = 0; addr[i] != '\0'; i++)
		out[n++] = (addr[i] == ':' || addr[i] == '.') ? '-' : addr[i];
	out[n] = '\0';
	return (0);
}

static int
prefix_match(const char *const *list, size_t n, const char *value)
{
	size_t	 i;

	if (n == 0)
		return (1);
	for (i = 0; i < n; i++)
		if (strncasecmp(value, list[i], strlen(list[i])) == 0)
			return (1);
	return (0);
}

static int
cmp_dev(const void *a, const void *b)
{
	return (strcmp(((const struct pci_dev *)a)->addr,
	    ((const struct pci_dev *)b)->addr));
}

/* -1 if addr is not a PCI address that fits. */
static int
read_dev(const char *dir, const char *addr, struct pci_dev *d)
{
	struct stat	 st;

	memset(d, 0, sizeof(*d));
	if (snprintf(d->addr, sizeof(d->addr), "%s", addr) >=
	    (int)sizeof(d->addr))
		return (-1);
	(void)pci_name_from_addr(addr, d->name, sizeof(d->name));
	hex_id(dir, "vendor", d->vendor, sizeof(d->vendor));
	hex_id(dir, "device", d->device, sizeof(d->device));
	hex_id(dir, "subsystem_vendor", d->subsys_vendor,
	    sizeof(d->subsys_vendor));
	hex_id(dir, "subsystem_device", d->subsys_device,
	    sizeof(d->subsys_device));
	hex_id(dir, "class", d->class, sizeof(d->class));
	read_link_base(dir, "driver", d->driver, sizeof(d->driver));
	d->numa_node = int_attr(dir, "numa_node", -1);
	if (d->numa_node < 0)
		d->numa_node = -1;
	d->iommu_group = iommu_group_of(dir);
	/* What pci_refresh tells this function from a later one by. */
	if (stat(dir, &st) == 0) {
		d->dev = st.st_dev;
		d->ino = st.st_ino;
	}
	d->bar_bytes = bar_bytes(dir);
	pcie_root(dir, d->pcie_root, sizeof(d->pcie_root));
	read_link_base(dir, "physfn", d->physfn, sizeof(d->physfn));
	if (!is_pci_addr(d->physfn))
		d->physfn[0] = '\0';
	return (0);
}

/*
 * Discover the PCI functions under sysfs (the sysfs root, "/sys"), keep
 * those the filter selects, sorted by address. An unreadable devices
 * directory is an error (err says which); zero devices is not.
 */
int
pci_discover(const char *sysfs, const struct pci_filter *filter,
    struct pci_list *out, char *err, size_t errsize)
{
	char		 top[PATH_MAX], dir[PATH_MAX];
	struct pci_dev	 d, *devs = NULL, *n;
	size_t		 count = 0, cap = 0;
	struct dirent	*de;
	DIR		*dp;

	memset(out, 0, sizeof(*out));
	snprintf(top, sizeof(top), "%s/bus/pci/devices", sysfs);
	if ((dp = opendir(top)) == NULL) {
		snprintf(err, errsize, "%s: %s", top, strerror(errno));
		return (-1);
	}
	while ((de = readdir(dp)) != NULL) {
		if (!is_pci_addr(de->d_name))
			continue;	/* ".", "..", anything odd */
		if (snprintf(dir, sizeof(dir), "%s/%s", top, de->d_name) >=
		    (int)sizeof(dir))
			continue;
		if (read_dev(dir, de->d_name, &d) != 0)
			continue;
		if (!prefix_match(filter->classes, filter->n_classes,
		    d.class) || !prefix_match(filter->vendors,
		    filter->n_vendors, d.vendor))
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 64;
			if ((n = reallocarray(devs, cap, sizeof(*n))) == NULL) {
				free(devs);
				closedir(dp);
				snprintf(err, errsize, "out of memory");
				return (-1);
			}
			devs = n;
		}
		devs[count++] = d;
	}
	closedir(dp);
	if (count > 0)
		qsort(devs, count, sizeof(*devs), cmp_dev);
	out->devs = devs;
	out->n = count;
	return (0);
}

/*
 * Refresh d (found by an earlier pci_discover under sysfs) with what a
 * prepare needs to be current: whether it is still the function the scan
 * read, and the driver bound to it (vfio-pci or not decides the spec's
 * nodes). A function removed and another added at the same address
 * (hot-plug, VFs made again) has a new sysfs directory, so another inode:
 * another vendor, class or IOMMU group, maybe one the filter leaves out
 * or a group number the old one's is not any more. Then, as when it is
 * gone, -1: the caller scans again. The IOMMU group is fixed while the
 * directory exists. One stat and one readlink; 0 or -1.
 */
int
pci_refresh(const char *sysfs, struct pci_dev *d)
{
	char		 dir[PATH_MAX], path[PATH_MAX], target[PATH_MAX];
	struct stat	 st;
	ssize_t		 n;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/bus/pci/devices/%s", sysfs,
	    d->addr) >= sizeof(dir) || (size_t)snprintf(path, sizeof(path),
	    "%s/driver", dir) >= sizeof(path))
		return (-1);
	if (stat(dir, &st) == -1 || st.st_dev != d->dev ||
	    st.st_ino != d->ino)
		return (-1);
	if ((n = readlink(path, target, sizeof(target) - 1)) > 0) {
		target[n] = '\0';
		target_base(target, d->driver, sizeof(d->driver));
	} else
		d->driver[0] = '\0';	/* unbound; as read_link_base */
	return (0);
}

void
pci_list_free(struct pci_list *l)
{
	free(l->devs);
	l->devs = NULL;
	l->n = 0;
}

/* 1 if both lists hold the same devices with the same properties. */
int
pci_list_equal(const struct pci_list *a, const struct pci_list *b)
{
	size_t	 i;

	if (a->n != b->n)
		return (0);
	for (i = 0; i < a->n; i++)
		if (memcmp(&a->devs[i], &b->devs[i], sizeof(a->devs[i])) != 0)
			return (0);
	return (1);
}

const struct pci_dev *
pci_find(const struct pci_list *l, const char *name)
{
	size_t	 i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->devs[i].name, name) == 0)
			return (&l->devs[i]);
	return (NULL);
}

/* One JSON object per line (--list): what discovery found. */
void
pci_list_print(const struct pci_list *l, FILE *f)
{
	const struct pci_dev	*d;
	json_t			*o;
	size_t			 i;

	for (i = 0; i < l->n; i++) {
		d = &l->devs[i];
		o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, "
		    "s:i, s:s, s:I, s:s}", "name", d->name, "address", d->addr,
		    "vendor", d->vendor, "device", d->device,
		    "subsystemVendor", d->subsys_vendor,
		    "subsystemDevice", d->subsys_device, "class", d->class,
		    "driver", d->driver, "numaNode", d->numa_node,
		    "iommuGroup", d->iommu_group, "pcieRoot", d->pcie_root,
		    "barBytes", (json_int_t)d->bar_bytes, "physfn", d->physfn);
		if (o == NULL)
			continue;
		json_dumpf(o, f, JSON_COMPACT);
		fputc('\n', f);
		json_decref(o);
	}
}
