/*
 * names.h - the Kubernetes name rules that more than one process applies:
 * the driver process (option setters, kp_publish_resources), the
 * nodeserver (claims in kubelet's requests) and the supervisor (claim
 * look-ups from the nodeserver). One implementation, so the rules agree:
 * a claim the nodeserver accepts must never get it killed by the
 * supervisor's check of the same strings.
 */
#ifndef KP_NAMES_H
#define KP_NAMES_H

#include <stddef.h>

#define NAME_MAX_LABEL		63
#define NAME_MAX_SUBDOMAIN	253
#define NAME_MAX_UID		128
#define NAME_MAX_PATH		255	/* a path the sandbox names */

#define NAME_R_UID	"at most 128 letters, digits, '-', '_' or '.', " \
			"starting and ending with a letter or digit"

/*
 * A CDI spec file name the supervisor writes for the nodeserver: the
 * driver's name and '_' (never in a driver name, so two drivers can not
 * collide), 1 to 200 of [A-Za-z0-9._-] starting with a letter or digit,
 * then ".json" (the supervisor checks JSON specs only, cdi_check.c); at
 * most 243 bytes in all, so the temporary name ".<name>.tmp-XXXXXX"
 * still fits NAME_MAX.
 */
#define NAME_MAX_CDI_MIDDLE	200
#define NAME_MAX_CDI_SPEC	243
#define NAME_R_CDI_SPEC	"<driver name>_ then 1 to 200 letters, digits, " \
			"'.', '_' or '-' starting with a letter or digit, " \
			"then .json (at most 243 bytes)"

/* names.c: each returns 1 if s[0..n) follows the rule, else 0. */
int	name_is_label(const char *, size_t);
int	name_is_subdomain(const char *, size_t);
int	name_is_claim_uid(const char *, size_t);
int	name_is_cdi_spec(const char *, const char *, size_t);
/*
 * A path that names exactly one file (the sandbox's paths, the CDI
 * device rules): absolute, not "/", at most NAME_MAX_PATH bytes, no
 * control byte, no empty, "." or ".." component, no trailing '/'. NULL
 * if so, else the rule broken (a static phrase).
 */
const char *name_path_problem(const char *);

#endif /* KP_NAMES_H */
