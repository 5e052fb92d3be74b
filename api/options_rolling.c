/*
 * options_rolling.c - rolling updates (Go helper v0.33 RollingUpdate,
 * FlockDirectoryPath) and serving one service without the other (v0.34
 * RegistrationService, DRAService). kp_start() derives the per-instance
 * socket names (options_dirs.c, rolling_name.c) and the lock file path.
 *
 * Runs in: the driver process.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"

/* upstream draplugin.go Start(), word for word */
#define EXCLUSIVE	"rolling updates and explicit registration socket " \
			"filename are mutually exclusive"

int
kp_rolling_update(struct kp_options *o, const char *uid)
{
	char	 q[OPT_QUOTE_SIZE];
	size_t	 i, n;

	if (!opt_valid_handle(o))
		return (KP_EINVAL);
	if (uid == NULL || uid[0] == '\0') {
		o->rolling_uid[0] = '\0';
		return (0);
	}
	n = strlen(uid);
	for (i = 0; i < n; i++)
		if (!((uid[i] >= '0' && uid[i] <= '9') ||
		    (uid[i] >= 'a' && uid[i] <= 'z') ||
		    (uid[i] >= 'A' && uid[i] <= 'Z') || uid[i] == '-'))
			break;
	if (i != n || n > KP_MAX_POD_UID)
		return (opt_fail(o, KP_EINVAL, "%s: %s must be a pod UID: 1 "
		    "to %d letters, digits and '-' (the downward API's "
		    "metadata.uid)", OPT_ROLLING, opt_quote(uid, q, sizeof(q)),
		    KP_MAX_POD_UID));
	if (o->registrar_file[0] != '\0' || (o->registrar_socket_path !=
	    NULL && !o->registrar_path_derived))
		return (opt_fail(o, KP_EINVAL, "%s: %s (%s is set)",
		    OPT_ROLLING, EXCLUSIVE, o->registrar_file[0] != '\0' ?
		    OPT_REG_FILE : OPT_REG_PATH));
	snprintf(o->rolling_uid, sizeof(o->rolling_uid), "%s", uid);
	return (0);
}

int
kp_flock_directory_path(struct kp_options *o, const char *dir)
{
	int	 rc;

	if (!opt_valid_handle(o))
		return (KP_EINVAL);
	if (dir == NULL || dir[0] == '\0') {
		o->flock_dir[0] = '\0';
		return (0);
	}
	if ((rc = opt_check_dir(o, OPT_FLOCK_DIR, dir)) != 0)
		return (rc);
	snprintf(o->flock_dir, sizeof(o->flock_dir), "%s", dir);
	return (0);
}

static int
set_on(struct kp_options *o, const char *what, int *off, int enable)
{
	if (!opt_valid_handle(o))
		return (KP_EINVAL);
	if (enable != 0 && enable != 1)
		return (opt_fail(o, KP_EINVAL, "%s: %d must be 0 or 1", what,
		    enable));
	*off = !enable;
	return (0);
}

int
kp_registration_service(struct kp_options *o, int enable)
{
	return (set_on(o, OPT_REG_SVC, o ? &o->registration_off : NULL,
	    enable));
}

int
kp_dra_service(struct kp_options *o, int enable)
{
	return (set_on(o, OPT_DRA_SVC, o ? &o->dra_off : NULL, enable));
}

/*
 * At kp_start(): the exclusion again (the setters check it in either
 * order, but a registrar path set after kp_rolling_update goes through
 * kp_registrar_socket_path, which checks it too: this is the backstop).
 */
int
opt_rolling_check(struct kp_options *o)
{
	if (o->rolling_uid[0] == '\0')
		return (0);
	if (o->registrar_file[0] != '\0' || (o->registrar_socket_path !=
	    NULL && !o->registrar_path_derived))
		return (opt_fail(o, KP_EINVAL, "%s: %s", OPT_ROLLING,
		    EXCLUSIVE));
	return (0);
}
