/*
 * health.h - device health entries (struct kp_device_health) as every
 * process that handles them sees them: one rule set (the driver process
 * checks a report before it sends it, the supervisor checks the frame, the
 * nodeserver checks what hooks report) and one table merging reports by
 * pool and device (health.c).
 */
#ifndef KP_HEALTH_H
#define KP_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "kubeletplugin.h"

#define HEALTH_MAX_POOL		253
#define HEALTH_MAX_TIMEOUT	86400	/* seconds */
#define HEALTH_DEFAULT_TIMEOUT	30	/* kubelet's, and upstream's stale
					 * check when no device sets one */

/* One device's latest state; strings owned. */
struct health_entry {
	char	*pool;
	char	*device;
	char	*message;	/* "" when none */
	int	 status;
	int64_t	 last_updated;
	int64_t	 timeout_s;
};

struct health_table {
	struct health_entry	*e;
	size_t			 n;
	size_t			 cap;
};

/* health.c */
const struct kp_device_health *health_at(const struct kp_device_health *,
	    size_t);
int	health_check(const struct kp_device_health *, size_t, char *,
	    size_t);
int	health_check_all(const struct kp_device_health *, size_t, char *,
	    size_t);
int	health_table_merge(struct health_table *,
	    const struct kp_device_health *, size_t);
int64_t	health_table_min_timeout(const struct health_table *);
void	health_table_free(struct health_table *);

#endif /* KP_HEALTH_H */
