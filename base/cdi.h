/*
 * cdi.h - the Container Device Interface rules more than one process
 * applies: the nodeserver (kp_prepare_add_device() checks CDI device IDs,
 * the spec builder picks cdiVersion) and the supervisor (its check of a
 * spec before writing it). One implementation, so the builder never
 * produces a spec the broker refuses.
 *
 * The rules are those of github.com/cncf-tags/container-device-interface:
 * pkg/parser/parser.go (names) and specs-go/version.go (which version
 * the fields used require).
 */
#ifndef KP_BASE_CDI_H
#define KP_BASE_CDI_H

#include <stddef.h>

#include <jansson.h>

#define CDI_MAX_ID	512	/* bytes of a device ID we accept */
#define CDI_MAX_MAJOR	4095	/* 12 bits (linux/kdev_t.h) */

#define CDI_R_VENDOR	"a letter, then letters, digits, '_', '-' or '.', " \
			"ending with a letter or digit"
#define CDI_R_DEVICE	"a letter or digit, then letters, digits, '_', " \
			"'-', '.' or ':', ending with a letter or digit"
#define CDI_R_ID	"<vendor>/<class>=<name>: vendor and class " \
			CDI_R_VENDOR "; name " CDI_R_DEVICE

/* cdi.c: 1 if s[0..n) follows the rule, else 0. */
int	 cdi_vendor_ok(const char *, size_t);	/* vendor or class */
int	 cdi_device_name_ok(const char *, size_t);
int	 cdi_kind_ok(const char *);
int	 cdi_env_ok(const char *);
int	 cdi_annotation_key_ok(const char *);
/* 0, or -1 with why (a static phrase naming the part and the rule). */
int	 cdi_id_check(const char *, const char **why);
/* The lowest cdiVersion a spec (a JSON object) needs, "0.3.0" at least. */
const char *cdi_min_version(const json_t *);
/* -1, 0, 1 as a compares to b ("0.3.0" .. "0.8.0"). */
int	 cdi_version_cmp(const char *, const char *);

/* cdi_dev.c: the names of device node rules (kp_cdi_allow_device). */
/* NULL if p is a rule's path or pattern, else the rule it breaks. */
const char *cdi_dev_pattern_problem(const char *);
/* 1 if the (checked) rule's last component has a wildcard. */
int	 cdi_dev_is_pattern(const char *);
/* 1 if path is the rule's name or matches its pattern. */
int	 cdi_dev_name_matches(const char *, const char *);
/* The length of the rule's directory ("/dev" of "/dev/loop*"). */
int	 cdi_dev_dir_len(const char *);

#endif /* KP_BASE_CDI_H */
