/*
 * hooks.c - the driver's prepare/unprepare hooks and the result builders
 * they call. A result exists for every claim before the hook runs, so the
 * response always has one entry per claim UID; the hook can only add
 * devices or errors to it. A builder call that names a valid claim but
 * fails (bad device, no memory) leaves that claim failed: a driver that
 * ignores the return value can not report a claim as prepared with a
 * device missing.
 *
 * A syscall the sandbox denies during a hook call returns EPERM to the
 * hook (policy/sigsys.c); here it is logged and named in the errors of
 * the claims the hook failed in that call (denied_report).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/cdi.h"
#include "base/names.h"
#include "base/log.h"
#include "base/utf8.h"
#include "nodeserver/dra.h"
#include "nodeserver/journal.h"
#include "nodeserver/ns_wrap.h"
#include "policy/policy.h"

#define PREPARE_MAGIC	0x6b707072u	/* "kppr" */
#define UNPREPARE_MAGIC	0x6b707572u	/* "kpur" */
#define OOM_TEXT	"out of memory"

/* Handed to the hook; valid only during the hook call. */
struct kp_prepare_results {
	uint32_t		 magic;
	struct dra_results	*r;
};

struct kp_unprepare_results {
	uint32_t		 magic;
	struct dra_results	*r;
};

static void
device_free(struct dra_device *d)
{
	free(d->mem);
	memset(d, 0, sizeof(*d));
}

static void
result_drop_devices(struct dra_result *c)
{
	size_t	i;

	md_attrs_free(c);
	for (i = 0; i < c->n_devices; i++)
		device_free(&c->devices[i]);
	if (c->devices != c->slot)
		free(c->devices);
	c->devices = NULL;
	c->n_devices = c->cap_devices = 0;
}

static void
result_clear_error(struct dra_result *c)
{
	if (!c->error_static)
		free(c->error);
	c->error = NULL;
	c->error_static = 0;
}

int
dra_results_init(struct dra_results *r, size_t n, int (*cancelled)(void *),
    void *arg)
{
	struct dra_device	*slots;
	size_t			 i;

	memset(r, 0, sizeof(*r));
	if (n > SIZE_MAX / (sizeof(*r->claims) + sizeof(*slots)))
		return (KP_ENOMEM);
	/* One block: the results, then a first device's room for each. */
	if (n > 0 && (r->claims = calloc(n, sizeof(*r->claims) +
	    sizeof(*slots))) == NULL)
		return (KP_ENOMEM);
	slots = n > 0 ? (struct dra_device *)(void *)(r->claims + n) : NULL;
	for (i = 0; i < n; i++) {
		r->claims[i].slot = &slots[i];
		r->claims[i].arena = &r->arena;
	}
	r->n = n;
	r->cancelled = cancelled;
	r->cancel_arg = arg;
	return (0);
}

/* Everything a result holds, freed; the result is empty again. */
void
dra_result_reset(struct dra_result *c)
{
	result_drop_devices(c);
	result_clear_error(c);
	free(c->cdi_spec);
	free(c->jdata);
	journal_view_free(c->view);
	c->cdi_spec = c->jdata = NULL;
	c->view = NULL;
}

void
dra_results_free(struct dra_results *r)
{
	size_t	i;

	for (i = 0; i < r->n; i++)
		dra_result_reset(&r->claims[i]);
	free(r->claims);
	dra_arena_free(r->arena);
	memset(r, 0, sizeof(*r));
}

/*
 * Copy msg for the wire: at most DRA_MAX_ERROR - 1 bytes, cut at a
 * character boundary, invalid UTF-8 bytes replaced by '?' (kubelet's
 * protobuf decoder would reject the whole response otherwise).
 */
static char *
error_copy(const char *msg)
{
	size_t	 len, in, out, k;
	char	*s;

	if (msg == NULL || msg[0] == '\0')
		msg = "failed (the driver gave no message)";
	len = strlen(msg);
	if ((s = malloc((len < DRA_MAX_ERROR ? len : DRA_MAX_ERROR - 1) + 1)) ==
	    NULL)
		return (NULL);
	for (in = out = 0; in < len; in += k) {
		if ((k = utf8_char(msg + in, len - in)) == 0) {
			k = 1;
			if (out + 1 >= DRA_MAX_ERROR)
				break;
			s[out++] = '?';
			continue;
		}
		if (out + k >= DRA_MAX_ERROR)
			break;
		memcpy(s + out, msg + in, k);
		out += k;
	}
	s[out] = '\0';
	return (s);
}

/* Fail claim c with a copy of msg; its devices are dropped. */
static int
result_set_error(struct dra_result *c, const char *msg)
{
	char	*s;

	result_drop_devices(c);
	result_clear_error(c);
	if ((s = error_copy(msg)) == NULL) {
		c->error = (char *)OOM_TEXT;
		c->error_static = 1;
		return (KP_ENOMEM);
	}
	c->error = s;
	return (0);
}

int
dra_result_fail_one(struct dra_result *c, const char *msg)
{
	return (result_set_error(c, msg));
}

int
dra_result_fail(struct dra_results *r, size_t i, const char *msg)
{
	if (i >= r->n)
		return (KP_EINVAL);
	return (result_set_error(&r->claims[i], msg));
}

/* The result a builder call names, or NULL for a bad handle or index. */
static struct dra_result *
claim_of(uint32_t magic, uint32_t want, struct dra_results *r, size_t claim)
{
	if (magic != want || r == NULL || claim >= r->n_hook)
		return (NULL);
	return (&r->claims[claim]);
}

/* Why the strings of an array can not go on the wire, or NULL. */
static const char *
strings_problem(const char *const *v, size_t n, const char *what)
{
	size_t	i;

	if (n > 0 && v == NULL)
		return (what);
	for (i = 0; i < n; i++)
		if (v[i] == NULL || !utf8_valid(v[i]))
			return (what);
	return (NULL);
}

/*
 * Why dev cannot go on the wire, or NULL; why may be why_buf (a message
 * naming a CDI device ID).
 */
static const char *
device_problem(const struct kp_prepared_device *dev, char *why_buf,
    size_t size)
{
	const char	*why;
	size_t		 i;

	if (dev == NULL)
		return ("invalid device: NULL");
	if (dev->pool_name == NULL || dev->pool_name[0] == '\0')
		return ("invalid device: pool_name required");
	if (dev->device_name == NULL || dev->device_name[0] == '\0')
		return ("invalid device: device_name required");
	if (!utf8_valid(dev->pool_name) ||
	    !utf8_valid(dev->device_name))
		return ("invalid device: name not UTF-8");
	if (dev->share_id != NULL && !utf8_valid(dev->share_id))
		return ("invalid device: share_id not UTF-8");
	if ((why = strings_problem(dev->request_names, dev->n_request_names,
	    "invalid device: bad request_names")) != NULL)
		return (why);
	if ((why = strings_problem(dev->cdi_device_ids, dev->n_cdi_device_ids,
	    "invalid device: bad cdi_device_ids")) != NULL)
		return (why);
	for (i = 0; i < dev->n_cdi_device_ids; i++)
		if (cdi_id_check(dev->cdi_device_ids[i], &why) != 0) {
			snprintf(why_buf, size, "invalid device %s: "
			    "cdi_device_ids[%zu] \"%.200s\": %s",
			    dev->device_name, i, dev->cdi_device_ids[i], why);
			return (why_buf);
		}
	return (NULL);
}

/*
 * The caller's struct, read with its struct_size into ours: the fields
 * that fit, the rest zero; a newer caller's fields we do not know must be
 * zero (how this data grows, kubeletplugin.h).
 */
static const char *
device_abi(const struct kp_prepared_device *in, struct kp_prepared_device *out,
    char *why, size_t size)
{
	const unsigned char	*p = (const unsigned char *)in;
	size_t			 sz, k;

	memset(out, 0, sizeof(*out));
	if (in == NULL)
		return ("invalid device: NULL");
	sz = in->struct_size;
	if (sz == 0)
		return ("invalid device: struct_size is 0: initialise it with "
		    "KP_PREPARED_DEVICE_INIT");
	if (sz < sizeof(*out)) {
		snprintf(why, size, "invalid device: struct_size %zu is "
		    "smaller than the first release's %zu", sz, sizeof(*out));
		return (why);
	}
	for (k = sizeof(*out); k < sz; k++)
		if (p[k] != 0) {
			snprintf(why, size, "invalid device: a field this "
			    "library does not know is set (byte %zu of "
			    "struct_size %zu): it needs a newer "
			    "libkubeletplugin", k, sz);
			return (why);
		}
	memcpy(out, in, sizeof(*out));
	return (NULL);
}

/*
 * Copy a device into one block (the pointer arrays, then the strings):
 * one allocation per device, as a hook adds one per claim. Request names
 * end before their first '/': kubelet knows requests by their base name,
 * as upstream's BaseRequestRef.
 */
static int
device_copy(struct dra_device *d, const struct kp_prepared_device *dev,
    struct dra_arena_chunk **arena)
{
	void	*mem;
	size_t	 nr = dev->n_request_names, nc = dev->n_cdi_device_ids;
	size_t	 i, n, size;
	char	*p;

	memset(d, 0, sizeof(*d));
	if (nr + nc < nr || nr + nc > SIZE_MAX / (2 * sizeof(char *)))
		return (KP_ENOMEM);
	size = (nr + nc) * sizeof(char *) + strlen(dev->pool_name) + 1 +
	    strlen(dev->device_name) + 1;
	for (i = 0; i < nr; i++)
		size += strcspn(dev->request_names[i], "/") + 1;
	for (i = 0; i < nc; i++)
		size += strlen(dev->cdi_device_ids[i]) + 1;
	if (dev->share_id != NULL)
		size += strlen(dev->share_id) + 1;
	if ((mem = arena != NULL ? dra_arena_alloc(arena, size) :
	    malloc(size)) == NULL)
		return (KP_ENOMEM);
	if (arena == NULL)
		d->mem = mem;
	p = (char *)((char **)mem + nr + nc);
	if (nr > 0)
		d->request_names = (char **)mem;
	if (nc > 0)
		d->cdi_ids = (char **)mem + nr;
	for (i = 0; i < nr; i++) {
		n = strcspn(dev->request_names[i], "/");
		memcpy(p, dev->request_names[i], n);
		p[n] = '\0';
		d->request_names[i] = p;
		p += n + 1;
	}
	for (i = 0; i < nc; i++) {
		n = strlen(dev->cdi_device_ids[i]) + 1;
		d->cdi_ids[i] = memcpy(p, dev->cdi_device_ids[i], n);
		p += n;
	}
	n = strlen(dev->pool_name) + 1;
	d->pool = memcpy(p, dev->pool_name, n);
	p += n;
	n = strlen(dev->device_name) + 1;
	d->device = memcpy(p, dev->device_name, n);
	p += n;
	if (dev->share_id != NULL)
		d->share_id = memcpy(p, dev->share_id, strlen(dev->share_id) +
		    1);
	d->n_request_names = nr;
	d->n_cdi_ids = nc;
	return (0);
}

/*
 * Append a CDI ID to d (the device metadata's, nodeserver/metadata.c):
 * d is one block (device_copy), so it is copied anew with the ID.
 */
int
dra_device_add_cdi_id(struct dra_device *d, const char *id)
{
	struct kp_prepared_device	 pd = { KP_PREPARED_DEVICE_INIT };
	struct dra_device		 nd;
	const char			**ids;
	size_t				 i;
	int				 r;

	if ((ids = calloc(d->n_cdi_ids + 1, sizeof(*ids))) == NULL)
		return (KP_ENOMEM);
	for (i = 0; i < d->n_cdi_ids; i++)
		ids[i] = d->cdi_ids[i];
	ids[i] = id;
	pd.request_names = (const char *const *)d->request_names;
	pd.n_request_names = d->n_request_names;
	pd.pool_name = d->pool;
	pd.device_name = d->device;
	pd.cdi_device_ids = ids;
	pd.n_cdi_device_ids = d->n_cdi_ids + 1;
	pd.share_id = d->share_id;
	r = device_copy(&nd, &pd, NULL);
	free(ids);
	if (r != 0)
		return (r);
	device_free(d);
	*d = nd;
	return (0);
}

static int
devices_grow(struct dra_result *c)
{
	struct dra_device	*nd;
	size_t			 cap;

	if (c->n_devices < c->cap_devices)
		return (0);
	if (c->cap_devices == 0 && c->slot != NULL) {
		c->devices = c->slot;
		c->cap_devices = 1;
		return (0);
	}
	cap = c->cap_devices < 4 ? 4 : c->cap_devices * 2;
	if (c->devices == c->slot) {
		if ((nd = calloc(cap, sizeof(*nd))) == NULL)
			return (KP_ENOMEM);
		memcpy(nd, c->devices, c->n_devices * sizeof(*nd));
	} else if ((nd = reallocarray(c->devices, cap, sizeof(*nd))) == NULL)
		return (KP_ENOMEM);
	c->devices = nd;
	c->cap_devices = cap;
	return (0);
}

/* For the other builders (metadata_attrs.c): the result a prepare
 * builder call names, or NULL for a bad handle or index. */
struct dra_result *
dra_prepare_claim(struct kp_prepare_results *res, size_t claim)
{
	if (res == NULL)
		return (NULL);
	return (claim_of(res->magic, PREPARE_MAGIC, res->r, claim));
}

int
kp_prepare_add_device(struct kp_prepare_results *res, size_t claim,
    const struct kp_prepared_device *devp)
{
	struct kp_prepared_device	 d;
	struct dra_result		*c;
	const char			*why;
	char				 buf[DRA_MAX_ERROR];

	if (res == NULL ||
	    (c = claim_of(res->magic, PREPARE_MAGIC, res->r, claim)) == NULL)
		return (KP_EINVAL);
	if ((why = device_abi(devp, &d, buf, sizeof(buf))) != NULL ||
	    (why = device_problem(&d, buf, sizeof(buf))) != NULL) {
		result_set_error(c, why);
		return (KP_EINVAL);
	}
	return (dra_result_add(c, &d));
}

/* Add a checked device to c (also the journal's replay). */
int
dra_result_add(struct dra_result *c, const struct kp_prepared_device *dev)
{
	if (c->error != NULL)
		return (0);	/* a failed claim's devices are dropped */
	if (devices_grow(c) != 0 ||
	    device_copy(&c->devices[c->n_devices], dev, c->arena) != 0) {
		result_set_error(c, OOM_TEXT);
		return (KP_ENOMEM);
	}
	c->n_devices++;
	return (0);
}

int
kp_prepare_cdi_spec(struct kp_prepare_results *res, size_t claim,
    const struct kp_cdi_builder *spec)
{
	struct dra_result	*c;
	char			 name[NAME_MAX_CDI_SPEC + 1], err[DRA_MAX_ERROR];
	int			 r;

	if (res == NULL ||
	    (c = claim_of(res->magic, PREPARE_MAGIC, res->r, claim)) == NULL)
		return (KP_EINVAL);
	if (res->r->driver == NULL || kp_cdi_claim_spec_name(res->r->driver,
	    c->uid, name, sizeof(name)) != 0) {
		result_set_error(c, "kp_prepare_cdi_spec: the claim UID "
		    "makes no CDI spec file name");
		return (KP_EINVAL);
	}
	if ((r = kp_cdi_builder_write(spec, name, err, sizeof(err))) != 0) {
		result_set_error(c, err);
		return (r);
	}
	free(c->cdi_spec);
	if ((c->cdi_spec = strdup(name)) == NULL) {
		result_set_error(c, OOM_TEXT);
		return (KP_ENOMEM);
	}
	return (0);
}

int
kp_prepare_journal_data(struct kp_prepare_results *res, size_t claim,
    const char *json)
{
	struct dra_result	*c;
	json_error_t		 je;
	json_t			*v;
	char			 msg[KP_ERROR_SIZE];

	if (res == NULL ||
	    (c = claim_of(res->magic, PREPARE_MAGIC, res->r, claim)) == NULL)
		return (KP_EINVAL);
	if (json == NULL || strlen(json) > JOURNAL_MAX_DATA ||
	    (v = json_loads(json, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
	    &je)) == NULL) {
		snprintf(msg, sizeof(msg), "kp_prepare_journal_data: not one "
		    "JSON value of at most %u bytes%s%.120s", JOURNAL_MAX_DATA,
		    json != NULL ? ": " : "", json != NULL ? je.text : "");
		result_set_error(c, msg);
		return (KP_EINVAL);
	}
	free(c->jdata);
	c->jdata = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(v);
	if (c->jdata == NULL) {
		result_set_error(c, OOM_TEXT);
		return (KP_ENOMEM);
	}
	return (0);
}

const struct kp_journal_entry *
kp_unprepare_journal_entry(const struct kp_unprepare_results *res,
    size_t claim)
{
	struct dra_result	*c;

	if (res == NULL || (c = claim_of(res->magic, UNPREPARE_MAGIC, res->r,
	    claim)) == NULL || c->view == NULL)
		return (NULL);
	return (&c->view->e);
}

/* A NULL or empty msg still fails the claim, with a generic text. */
static int
claim_error(struct dra_result *c, const char *msg)
{
	int	rc;

	if (c == NULL)
		return (KP_EINVAL);
	rc = result_set_error(c, msg);
	if (rc == 0 && (msg == NULL || msg[0] == '\0'))
		rc = KP_EINVAL;
	return (rc);
}

int
kp_prepare_claim_error(struct kp_prepare_results *res, size_t claim,
    const char *msg)
{
	if (res == NULL)
		return (KP_EINVAL);
	return (claim_error(claim_of(res->magic, PREPARE_MAGIC, res->r, claim),
	    msg));
}

int
kp_unprepare_claim_error(struct kp_unprepare_results *res, size_t claim,
    const char *msg)
{
	if (res == NULL)
		return (KP_EINVAL);
	return (claim_error(claim_of(res->magic, UNPREPARE_MAGIC, res->r,
	    claim), msg));
}

static int
results_cancelled(uint32_t magic, uint32_t want, const struct dra_results *r)
{
	if (magic != want || r == NULL || r->cancelled == NULL)
		return (0);
	return (r->cancelled(r->cancel_arg) != 0);
}

int
kp_prepare_cancelled(const struct kp_prepare_results *res)
{
	return (res != NULL &&
	    results_cancelled(res->magic, PREPARE_MAGIC, res->r));
}

int
kp_unprepare_cancelled(const struct kp_unprepare_results *res)
{
	return (res != NULL &&
	    results_cancelled(res->magic, UNPREPARE_MAGIC, res->r));
}

/*
 * Append "; sandbox denied <names>" to the claim's error, cutting the
 * error (at a character boundary) rather than the suffix. Out of memory
 * leaves the error as it was: the claim is failed either way.
 */
static void
error_append(struct dra_result *c, const char *suffix)
{
	char	*s;
	size_t	 keep, sl = strlen(suffix);

	if (sl >= DRA_MAX_ERROR / 2)
		return;
	keep = strlen(c->error);
	if (keep > DRA_MAX_ERROR - 1 - sl) {
		keep = DRA_MAX_ERROR - 1 - sl;
		while (keep > 0 && ((unsigned char)c->error[keep] & 0xc0) ==
		    0x80)
			keep--;
	}
	if ((s = malloc(keep + sl + 1)) == NULL)
		return;
	memcpy(s, c->error, keep);
	memcpy(s + keep, suffix, sl + 1);
	result_clear_error(c);
	c->error = error_copy(s);
	free(s);
	if (c->error == NULL) {
		c->error = (char *)OOM_TEXT;
		c->error_static = 1;
	}
}

/*
 * The hook made n denied syscalls (nrs). Log each (once, then at 10,
 * 100, ... denials: pol_denied_due) and name them in the error of every
 * claim the hook failed, and in errbuf when the hook failed the whole
 * call (rc != 0). A claim the hook prepared despite a denial stays
 * prepared: the hook saw the EPERM and judged it harmless (a probe, an
 * optional feature); the log line still tells the driver's author.
 */
static void
denied_report(const char *hook, const int *nrs, size_t n,
    struct dra_results *r, int rc, char *errbuf, size_t errsize)
{
	char		 names[256], suffix[300];
	const char	*nm;
	unsigned long	 count;
	size_t		 i, o = 0, len;

	names[0] = '\0';
	for (i = 0; i < n; i++) {
		if ((nm = pol_sigsys_name(nrs[i])) == NULL)
			nm = "(unknown syscall)";
		else
			ns_event_denied(nm);
		if (pol_denied_due(nrs[i], &count)) {
			if (count <= 1)
				log_warnx("%s hook: sandbox denied %s (EPERM); "
				    "add it with kp_sandbox_syscall() if the "
				    "driver needs it", hook, nm);
			else
				log_warnx("%s hook: sandbox denied %s (EPERM), "
				    "%lu times so far", hook, nm, count);
		}
		len = strlen(nm);
		if (o + len + 3 >= sizeof(names))
			break;
		if (o > 0) {
			memcpy(names + o, ", ", 2);
			o += 2;
		}
		memcpy(names + o, nm, len + 1);
		o += len;
	}
	snprintf(suffix, sizeof(suffix), "; sandbox denied %s", names);
	for (i = 0; i < r->n_hook; i++)
		if (r->claims[i].error != NULL)
			error_append(&r->claims[i], suffix);
	if (rc != 0) {
		if (errbuf[0] == '\0')
			snprintf(errbuf, errsize, "%s", kp_strerror(rc));
		len = strlen(errbuf);
		snprintf(errbuf + len, errsize - len, "%s", suffix);
	}
}

/*
 * Run the prepare (or unprepare) hook on r->n_hook claims. Returns the
 * hook's value; errbuf holds its message, NUL-terminated here. The results
 * handle lives on this stack frame: valid only during the hook call.
 * Syscalls the sandbox denies meanwhile on this thread are reported
 * (denied_report); the init hook runs before the sandbox.
 */
int
dra_hook_call(const struct kp_hooks *hooks, int prepare,
    const struct kp_claim *claims, struct dra_results *r, char *errbuf,
    size_t errsize)
{
	struct kp_prepare_results	p = { PREPARE_MAGIC, r };
	struct kp_unprepare_results	u = { UNPREPARE_MAGIC, r };
	int				nrs[POL_DENIED_MAX];
	size_t				n;
	int				rc = KP_EINVAL;

	errbuf[0] = '\0';
	pol_denied_begin();
	if (prepare && hooks->prepare != NULL)
		rc = hooks->prepare(hooks->user, claims, r->n_hook, &p, errbuf,
		    errsize);
	else if (!prepare && hooks->unprepare != NULL)
		rc = hooks->unprepare(hooks->user, claims, r->n_hook, &u,
		    errbuf, errsize);
	n = pol_denied_end(nrs, POL_DENIED_MAX);
	errbuf[errsize - 1] = '\0';
	if (n > 0)
		denied_report(prepare ? "prepare" : "unprepare", nrs, n, r, rc,
		    errbuf, errsize);
	return (rc);
}
