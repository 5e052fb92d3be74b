/*
 * live.c - the socket paths the plugins of this process serve, so that a
 * second kp_start() naming one of them fails instead of taking over the
 * live sockets (supervisor/sockets.c replaces a live socket with only a
 * warning, which is right across processes, for a stale instance or a
 * rolling update, and always a mistake within one).
 *
 * Runs in: the driver's process. kp_start() and kp_stop() may be called
 * from different threads, hence the mutex. An entry records the pid that
 * made it: a child the driver forks inherits the list, but none of its
 * plugins, and may start its own.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"

struct live {
	struct live		*next;
	const struct kp_plugin	*owner;
	pid_t			 pid;
	char			*path;
};

static pthread_mutex_t	 live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct live	*live_head;

static const struct live *
live_find(const char *path, pid_t pid)
{
	const struct live	*l;

	for (l = live_head; l != NULL; l = l->next)
		if (l->pid == pid && strcmp(l->path, path) == 0)
			return (l);
	return (NULL);
}

/*
 * Record that owner serves the n paths (NULL entries skipped), unless a
 * plugin of this process already serves one of them: then KP_EBUSY,
 * nothing recorded, and err names the option (what[i]) and the path.
 */
int
live_claim(const struct kp_plugin *owner, const char *const *what,
    const char *const *paths, size_t n, char *err, size_t errsize)
{
	struct live	*added[LIVE_MAX], *l;
	pid_t		 pid = getpid();
	size_t		 i, k = 0;
	int		 r = 0;

	if (n > LIVE_MAX)
		return (KP_EINVAL);
	pthread_mutex_lock(&live_lock);
	for (i = 0; i < n && r == 0; i++) {
		if (paths[i] == NULL)
			continue;
		if (live_find(paths[i], pid) != NULL) {
			snprintf(err, errsize, "%s: already served by a plugin "
			    "started in this process (kp_stop() it first): %s",
			    what[i], paths[i]);
			r = KP_EBUSY;
		} else if ((l = calloc(1, sizeof(*l))) == NULL ||
		    (l->path = strdup(paths[i])) == NULL) {
			free(l);
			snprintf(err, errsize, "%s: out of memory", what[i]);
			r = KP_ENOMEM;
		} else {
			l->owner = owner;
			l->pid = pid;
			l->next = live_head;
			live_head = added[k++] = l;
		}
	}
	if (r != 0)
		while (k > 0) {	/* the newest are first in the list */
			l = added[--k];
			live_head = l->next;
			free(l->path);
			free(l);
		}
	pthread_mutex_unlock(&live_lock);
	return (r);
}

/* Forget every path owner serves (kp_stop(), a kp_start() that failed). */
void
live_release(const struct kp_plugin *owner)
{
	struct live	**lp, *l;

	pthread_mutex_lock(&live_lock);
	for (lp = &live_head; (l = *lp) != NULL;)
		if (l->owner == owner) {
			*lp = l->next;
			free(l->path);
			free(l);
		} else
			lp = &l->next;
	pthread_mutex_unlock(&live_lock);
}
