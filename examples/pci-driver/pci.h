/*
 * pci.h - the example PCI driver's private interface, one group per file.
 *
 * Two processes run this code: the driver process (main.c: flags,
 * discovery, publishing, the rescan loop) and the library's sandboxed
 * nodeserver, which runs the hooks (prepare.c: CDI specs; the library's
 * journal keeps what was prepared). They share nothing but files: the
 * nodeserver finds devices in sysfs itself (cache.c keeps its list).
 */
#ifndef PCI_DRIVER_H
#define PCI_DRIVER_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "kubeletplugin.h"

#define PCI_ADDR_SIZE	32	/* "0000:00:1f.2" and then some */
#define PCI_NAME_SIZE	64	/* DNS label: "pci-0000-00-1f-2" */
#define PCI_MAX_FILTER	16

/* One PCI function as sysfs shows it. -1 / "" where sysfs has nothing. */
struct pci_dev {
	char		 addr[PCI_ADDR_SIZE];	/* 0000:00:1f.2 */
	char		 name[PCI_NAME_SIZE];	/* pci-0000-00-1f-2 */
	char		 vendor[8];		/* 0x8086 */
	char		 device[8];
	char		 subsys_vendor[8];
	char		 subsys_device[8];
	char		 class[10];		/* 0x020000 */
	char		 driver[64];		/* bound kernel driver */
	char		 pcie_root[32];		/* pci0000:00 */
	int		 numa_node;		/* -1: none */
	int		 iommu_group;		/* -1: none */
	uint64_t	 bar_bytes;		/* memory BARs, summed */
	char		 physfn[PCI_ADDR_SIZE];	/* SR-IOV VF: its PF's
						 * address; "" otherwise */
	dev_t		 dev;			/* its sysfs directory: */
	ino_t		 ino;			/* pci_refresh's identity */
};

struct pci_list {
	struct pci_dev	*devs;
	size_t		 n;
};

/* Which devices to publish: empty lists publish every device. */
struct pci_filter {
	const char	*classes[PCI_MAX_FILTER];	/* prefixes: "0x02" */
	size_t		 n_classes;
	const char	*vendors[PCI_MAX_FILTER];	/* "0x8086" */
	size_t		 n_vendors;
};

/* Everything both processes need to know, set from the flags. */
struct pci_config {
	char			 driver[64];
	char			 node[254];
	char			 sysfs[256];	/* sysfs root, "/sys" */
	char			 cdi_dir[256];
	char			 state_dir[256];
	struct pci_filter	 filter;
	int			 rescan;	/* seconds; 0: never */
	int			 verbose;
};

/* discover.c */
int	 pci_discover(const char *sysfs, const struct pci_filter *,
	    struct pci_list *, char *err, size_t errsize);
void	 pci_list_free(struct pci_list *);
int	 pci_list_equal(const struct pci_list *, const struct pci_list *);
const struct pci_dev *pci_find(const struct pci_list *, const char *name);
int	 pci_name_from_addr(const char *addr, char *out, size_t size);
int	 pci_refresh(const char *sysfs, struct pci_dev *);
void	 pci_list_print(const struct pci_list *, FILE *);

/* cache.c (the nodeserver's) */
int	 pci_cache_lookup(const struct pci_config *, const char *name,
	    struct pci_dev *, char *err, size_t errsize);

/* publish.c */
int	 pci_publish(struct kp_plugin *, const struct pci_config *,
	    const struct pci_list *, char *err, size_t errsize);

/* prepare.c */
int	 pci_hook_prepare(void *, const struct kp_claim *, size_t,
	    struct kp_prepare_results *, char *, size_t);
int	 pci_hook_unprepare(void *, const struct kp_claim *, size_t,
	    struct kp_unprepare_results *, char *, size_t);
int	 pci_journal_write_spec(void *, const struct kp_journal_entry *,
	    char *, size_t);

#endif /* PCI_DRIVER_H */
