/*
 * ns_mirror.c - the nodeserver's copy of the list of this driver's CDI
 * spec files, so that a claim answered from the journal does not ask the
 * supervisor whether its spec is still there (a round trip through the
 * supervisor on every such call, most of what such a call cost).
 *
 * The copy is made from a CdiList reply that says the supervisor watches
 * the directory (CdiReply.watched) and is then kept by what comes over
 * the same channel, in its order: the replies to this process's own
 * writes and removals, applied by the reader thread when they arrive
 * (ns_wrap.c), and the supervisor's CdiChanged for everything else
 * (supervisor/cdi_watch.c). Anything that leaves it in doubt drops it:
 * a failed or unanswered request, a metadata write (the supervisor
 * names that spec), a reset, more names than a list can hold. Dropped,
 * the next look asks the supervisor again, as without the copy.
 *
 * It answers only once the reader thread runs: in the init hook the
 * supervisor's changes wait unread in the channel until the next request
 * (ns_cdi_wait applies them then), so each look there asks.
 *
 * A change on disk reaches the copy when the supervisor has read its
 * inotify event: until then a claim may be answered from the journal
 * with a spec removed a moment before, as a list taken just before the
 * removal would have answered.
 *
 * Runs in: the nodeserver; every function is called with the wrapper's
 * lock held.
 */
#include <stdlib.h>
#include <string.h>

#include "ipc/ipc.h"
#include "nodeserver/ns_wrap.h"

void
ns_mirror_drop(struct ns_mirror *mi)
{
	size_t	 i;

	for (i = 0; i < mi->n; i++)
		free(mi->names[i]);
	free(mi->names);
	memset(mi, 0, sizeof(*mi));
}

/* Index of name, or of where it would go (*found 0). */
static size_t
find(const struct ns_mirror *mi, const char *name, int *found)
{
	size_t	 lo = 0, hi = mi->n, mid;
	int	 c;

	*found = 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(mi->names[mid], name)) == 0) {
			*found = 1;
			return (mid);
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo);
}

void
ns_mirror_change(struct ns_mirror *mi, const char *name, int present)
{
	size_t	 i;
	char	**nn;
	int	 found;

	if (!mi->valid)
		return;
	i = find(mi, name, &found);
	if (!present) {
		if (found) {
			free(mi->names[i]);
			memmove(&mi->names[i], &mi->names[i + 1],
			    (mi->n - i - 1) * sizeof(*mi->names));
			mi->n--;
		}
		return;
	}
	if (found)
		return;
	/* A list could not hold more: the copy could not be made again. */
	if (mi->n >= KP_IPC_MAX_CDI_NAMES - 1) {
		ns_mirror_drop(mi);
		return;
	}
	if (mi->n == mi->cap) {
		if ((nn = reallocarray(mi->names, mi->cap ? mi->cap * 2 : 64,
		    sizeof(*nn))) == NULL) {
			ns_mirror_drop(mi);
			return;
		}
		mi->names = nn;
		mi->cap = mi->cap ? mi->cap * 2 : 64;
	}
	memmove(&mi->names[i + 1], &mi->names[i], (mi->n - i) *
	    sizeof(*mi->names));
	if ((mi->names[i] = strdup(name)) == NULL) {
		memmove(&mi->names[i], &mi->names[i + 1], (mi->n - i) *
		    sizeof(*mi->names));
		ns_mirror_drop(mi);
		return;
	}
	mi->n++;
}

/* A watched list: the copy, made anew. */
void
ns_mirror_set(struct ns_mirror *mi, char **names, size_t n)
{
	size_t	 i;

	ns_mirror_drop(mi);
	mi->valid = 1;
	for (i = 0; i < n && mi->valid; i++)
		ns_mirror_change(mi, names[i], 1);
}

void
ns_mirror_changed(struct ns_mirror *mi, const Kpipc__CdiChanged *c)
{
	size_t	 i;

	if (c->reset) {
		ns_mirror_drop(mi);
		return;
	}
	for (i = 0; i < c->n_changes; i++)
		ns_mirror_change(mi, c->changes[i]->name,
		    c->changes[i]->present);
}

int
ns_mirror_has(const struct ns_mirror *mi, const char *name)
{
	int	 found;

	if (!mi->valid)
		return (-1);
	(void)find(mi, name, &found);
	return (found);
}

/* A copy of the names for kp_cdi_spec_list; -1 without a copy. */
int
ns_mirror_names(const struct ns_mirror *mi, char ***out, size_t *n)
{
	size_t	 i;

	*out = NULL;
	*n = 0;
	if (!mi->valid)
		return (-1);
	if (mi->n == 0)
		return (0);
	if ((*out = calloc(mi->n, sizeof(**out))) == NULL)
		return (-1);
	for (i = 0; i < mi->n; i++)
		if (((*out)[i] = strdup(mi->names[i])) == NULL) {
			while (i > 0)
				free((*out)[--i]);
			free(*out);
			*out = NULL;
			return (-1);
		}
	*n = mi->n;
	return (0);
}
