/*
 * cache.c - the nodeserver's copy of the device list, so that a prepare
 * does not scan all of sysfs (a full pci_discover() costs about 100 us
 * per PCI function). The list is the last scan's: scanned again when
 * older than the driver's --rescan period, or when a claim names a
 * device it does not hold (one added since; a miss rescans at most once
 * per look-up). A device it holds is checked in sysfs on each use
 * (pci_refresh: still the function the scan read, by its sysfs
 * directory's inode; which driver), so a removed device, a rebound one
 * or another one at its address (a rescan then reads it, through the
 * filter) is seen at once, as with a scan per prepare.
 *
 * The nodeserver's own memory: the driver process's list (main.c) is
 * another process's; a restarted nodeserver starts empty.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "pci.h"

static pthread_mutex_t	 cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pci_list	 cache;
static int		 cache_valid;
static struct timespec	 cache_time;

static int
scan(const struct pci_config *cfg, char *err, size_t errsize)
{
	struct pci_list	 l;

	if (pci_discover(cfg->sysfs, &cfg->filter, &l, err, errsize) != 0)
		return (-1);
	pci_list_free(&cache);
	cache = l;
	cache_valid = 1;
	clock_gettime(CLOCK_MONOTONIC, &cache_time);
	return (0);
}

static int
stale(const struct pci_config *cfg)
{
	struct timespec	 now;

	if (!cache_valid)
		return (1);
	if (cfg->rescan <= 0)
		return (0);
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - cache_time.tv_sec >= cfg->rescan);
}

/* Index of name in the cache, refreshed; -1 if absent or gone. */
static ssize_t
find_current(const struct pci_config *cfg, const char *name)
{
	size_t	 i;

	for (i = 0; i < cache.n; i++)
		if (strcmp(cache.devs[i].name, name) == 0)
			return (pci_refresh(cfg->sysfs, &cache.devs[i]) == 0 ?
			    (ssize_t)i : -1);
	return (-1);
}

/*
 * The device called name, current, into out: 0, 1 when this node has no
 * such device (after a rescan), -1 when sysfs cannot be scanned (err).
 */
int
pci_cache_lookup(const struct pci_config *cfg, const char *name,
    struct pci_dev *out, char *err, size_t errsize)
{
	ssize_t	 i = -1;
	int	 scanned = 0, r = 1;

	pthread_mutex_lock(&cache_lock);
	if (stale(cfg)) {
		if (scan(cfg, err, errsize) != 0) {
			r = -1;
			goto out;
		}
		scanned = 1;
	}
	if ((i = find_current(cfg, name)) < 0 && !scanned) {
		if (scan(cfg, err, errsize) != 0) {
			r = -1;
			goto out;
		}
		i = find_current(cfg, name);
	}
	if (i >= 0) {
		*out = cache.devs[i];
		r = 0;
	}
out:
	pthread_mutex_unlock(&cache_lock);
	return (r);
}
