/*
 * options_journal.c - the prepared-claim journal's options
 * (kp_journal_dir, kp_journal_hooks; kubeletplugin.h).
 *
 * Runs in: the driver process, before kp_start().
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"

int
kp_journal_dir(struct kp_options *opts, const char *dir)
{
	int	 r;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	/* Its rules, and Landlock lets the nodeserver write there. */
	if ((r = kp_sandbox_state_dir(opts, dir)) != 0)
		return (r);
	snprintf(opts->journal_dir, sizeof(opts->journal_dir), "%s", dir);
	return (0);
}

int
kp_journal_hooks(struct kp_options *opts, const struct kp_journal_hooks *h)
{
	const unsigned char	*p = (const unsigned char *)h;
	size_t			 k;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (h == NULL) {
		memset(&opts->journal_hooks, 0, sizeof(opts->journal_hooks));
		return (0);
	}
	if (h->struct_size < sizeof(*h))
		return (opt_fail(opts, KP_EINVAL, "kp_journal_hooks: "
		    "struct_size %zu: initialise with KP_JOURNAL_HOOKS_INIT",
		    h->struct_size));
	for (k = sizeof(*h); k < h->struct_size; k++)
		if (p[k] != 0)
			return (opt_fail(opts, KP_EINVAL, "kp_journal_hooks: a "
			    "field this library does not know is set (byte "
			    "%zu of struct_size %zu): it needs a newer "
			    "libkubeletplugin", k, h->struct_size));
	memcpy(&opts->journal_hooks, h, sizeof(*h));
	return (0);
}
