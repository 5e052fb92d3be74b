/*
 * journal_dra.c - the prepared-claim journal around the driver's hooks
 * (kubeletplugin.h, "Prepared-claim journal"): replay of claims prepared
 * before, recording of what the prepare hook prepared, removal after
 * unprepare, and at the nodeserver's start the report of entries from an
 * earlier boot and the reconciliation of this driver's CDI specs with
 * the journal. The file itself is journal.c's.
 *
 * Runs in: the nodeserver, in its sandbox; jr_start before serving, the
 * rest on the gRPC serving threads (the journal's lock guards it; the
 * driver's callbacks run under the hooks' lock when serialized).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/names.h"
#include "nodeserver/dra.h"
#include "nodeserver/journal.h"
#include "nodeserver/ns_wrap.h"

#define CLAIM_INFIX	"_claim-"

static int
collect(void *user, const char *name)
{
	struct jr_specs	*sp = user;
	char		**nn;

	if ((nn = reallocarray(sp->names, sp->n + 1, sizeof(*nn))) == NULL)
		return (1);
	sp->names = nn;
	if ((nn[sp->n] = strdup(name)) != NULL)
		sp->n++;
	return (0);
}

void
jr_specs_free(struct jr_specs *sp)
{
	size_t	 i;

	for (i = 0; i < sp->n; i++)
		free(sp->names[i]);
	free(sp->names);
	memset(sp, 0, sizeof(*sp));
}

/* List this driver's specs once; 0, or -1 when the broker failed. */
static int
specs_list(struct jr_specs *sp, char *err, size_t errsize)
{
	if (sp->listed)
		return (0);
	if (kp_cdi_spec_list(collect, sp, err, errsize) != 0) {
		jr_specs_free(sp);
		return (-1);
	}
	sp->listed = 1;
	return (0);
}

static int
specs_has(const struct jr_specs *sp, const char *name)
{
	size_t	 i;

	for (i = 0; i < sp->n; i++)
		if (strcmp(sp->names[i], name) == 0)
			return (1);
	return (0);
}

/* A driver callback, under the hooks' lock when they are serialized. */
static int
callback(struct dra_ctx *ctx, int (*fn)(void *,
    const struct kp_journal_entry *, char *, size_t),
    const struct kp_journal_entry *e, char *err, size_t errsize)
{
	int	 r;

	err[0] = '\0';
	if (ctx->cfg->serialize)
		pthread_mutex_lock(&ctx->lock);
	r = fn(ctx->cfg->journal_hooks.user, e, err, errsize);
	if (ctx->cfg->serialize)
		pthread_mutex_unlock(&ctx->lock);
	err[errsize - 1] = '\0';
	return (r);
}

/*
 * The entry's spec file is gone: write_spec writes it again. 0, or -1
 * with err saying why the claim cannot be used.
 */
static int
respec(struct dra_ctx *ctx, const struct kp_journal_entry *e, char *err,
    size_t errsize)
{
	char	 why[KP_ERROR_SIZE];

	if (ctx->cfg->journal_hooks.write_spec == NULL) {
		snprintf(err, errsize, "claim %.63s/%.63s: its CDI spec "
		    "%.80s is missing and no write_spec callback is set "
		    "(kp_journal_hooks)", e->namespace_, e->name, e->cdi_spec);
		return (-1);
	}
	if (callback(ctx, ctx->cfg->journal_hooks.write_spec, e, why,
	    sizeof(why)) != 0) {
		snprintf(err, errsize, "claim %.63s/%.63s: its CDI spec "
		    "%.80s is missing; write_spec: %.100s", e->namespace_, e->name,
		    e->cdi_spec, why[0] ? why : "failed");
		return (-1);
	}
	log_info(1, "claim %s/%s: CDI spec %s was missing, written again",
	    e->namespace_, e->name, e->cdi_spec);
	return (0);
}

static void
spec_remove(const char *name, const char *why)
{
	char	 err[KP_ERROR_SIZE];

	if (kp_cdi_spec_remove(name, err, sizeof(err)) != 0)
		log_warnx("journal: %s %s: %s", why, name, err);
	else
		log_info(1, "journal: %s %s removed", why, name);
}

/* Entries of an earlier boot: previous_boot keeps or forgets each. */
static int
previous_boot(struct dra_ctx *ctx, struct journal *j)
{
	struct journal_view	*v;
	const char		*uid;
	json_t			*e;
	void			*tmp;
	char			 err[KP_ERROR_SIZE];
	int			 r;

	log_info(0, "journal: %zu prepared claims recorded in an earlier "
	    "boot (boot ID %s, now %s)", json_object_size(j->claims),
	    j->file_boot_id, j->boot_id);
	if (ctx->cfg->journal_hooks.previous_boot == NULL)
		return (0);
	json_object_foreach_safe(j->claims, tmp, uid, e) {
		if ((v = journal_view_new(uid, e, 1)) == NULL)
			return (KP_ENOMEM);
		r = callback(ctx, ctx->cfg->journal_hooks.previous_boot,
		    &v->e, err, sizeof(err));
		if (r == KP_JOURNAL_FORGET) {
			log_info(1, "journal: claim %s/%s from an earlier "
			    "boot forgotten (previous_boot)", v->e.namespace_,
			    v->e.name);
			if (v->e.cdi_spec != NULL)
				spec_remove(v->e.cdi_spec, "forgotten claim's "
				    "CDI spec");
			journal_del(j, uid);
		} else if (r != 0)
			log_warnx("journal: claim %s/%s: previous_boot: %s",
			    v->e.namespace_, v->e.name, err[0] ? err :
			    kp_strerror(r));
		journal_view_free(v);
	}
	return (0);
}

/*
 * Specs against entries: a missing spec is written again, a claim spec
 * of this driver without an entry removed (unless the journal was
 * unreadable: its claims may still be in use).
 */
static int
reconcile(struct dra_ctx *ctx, struct journal *j)
{
	struct jr_specs		 sp = { 0, NULL, 0 };
	struct journal_view	*v;
	const char		*uid, *name, *drv = ctx->cfg->driver_name;
	json_t			*e;
	char			 err[DRA_MAX_ERROR], u[NAME_MAX_CDI_SPEC + 1];
	size_t			 i, dl = strlen(drv), il = strlen(CLAIM_INFIX);
	size_t			 n;

	if (specs_list(&sp, err, sizeof(err)) != 0) {
		log_warnx("journal: cannot list this driver's CDI specs, not "
		    "reconciled: %s", err);
		return (0);
	}
	json_object_foreach(j->claims, uid, e) {
		if (!json_is_string(json_object_get(e, "cdiSpec")) ||
		    specs_has(&sp, json_string_value(json_object_get(e,
		    "cdiSpec"))))
			continue;
		if ((v = journal_view_new(uid, e, strcmp(j->file_boot_id,
		    j->boot_id) != 0)) == NULL) {
			jr_specs_free(&sp);
			return (KP_ENOMEM);
		}
		if (respec(ctx, &v->e, err, sizeof(err)) != 0)
			log_warnx("journal: %s", err);
		journal_view_free(v);
	}
	for (i = 0; i < sp.n; i++) {
		name = sp.names[i];
		n = strlen(name);
		if (n <= dl + il + 5 || strncmp(name + dl, CLAIM_INFIX,
		    il) != 0)
			continue;
		snprintf(u, sizeof(u), "%.*s", (int)(n - dl - il - 5),
		    name + dl + il);
		if (json_object_get(j->claims, u) != NULL)
			continue;
		if (j->state == JOURNAL_QUARANTINED) {
			log_warnx("journal: CDI spec %s has no entry, kept "
			    "(the journal was unreadable)", name);
			continue;
		}
		spec_remove(name, "orphaned CDI spec (no journal entry)");
	}
	jr_specs_free(&sp);
	return (0);
}

/*
 * The lock a peer instance's hooks take (a rolling update): 1 when taken,
 * 0 when there is none or it failed (logged).
 */
static int
peer_lock(struct dra_ctx *ctx)
{
	char	 err[KP_ERROR_SIZE];

	if (!ctx->cfg->serialize || ctx->lock_fd < 0)
		return (0);
	if (dra_flock_take(ctx->lock_fd, err, sizeof(err)) != 0) {
		log_warnx("journal: %s", err);
		return (0);
	}
	return (1);
}

static void
save_or_warn(struct journal *j)
{
	char	 err[KP_ERROR_SIZE];

	if (journal_save(j, err, sizeof(err)) != 0)
		log_warnx("journal: %s", err);
}

/*
 * The whole start runs under the peer's lock: opening removes temporary
 * files a crash left (a peer's write in progress would lose its file),
 * and reconcile removes specs without an entry (a peer's prepare has
 * written its spec before its entry).
 */
int
jr_start(struct dra_ctx *ctx, char *err, size_t errsize)
{
	struct journal	*j;
	int		 r, file;

	if (ctx->cfg->journal_dir[0] == '\0')
		return (0);
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return (KP_ENOMEM);
	file = peer_lock(ctx);
	if ((r = journal_open(j, ctx->cfg->journal_dir, ctx->cfg->driver_name,
	    JOURNAL_BOOT_ID, err, errsize)) != 0) {
		free(j);
		goto out;
	}
	/* A rolling update: the other instance may be a release that reads
	 * only the schema-1 snapshot, so every change is written there. */
	j->through = ctx->cfg->rolling_uid[0] != '\0';
	if (j->why[0] != '\0')
		ns_event_journal_corrupt();
	if (j->state == JOURNAL_LOADED && strcmp(j->file_boot_id,
	    j->boot_id) != 0 && (r = previous_boot(ctx, j)) != 0)
		goto fail;
	if ((r = reconcile(ctx, j)) != 0)
		goto fail;
	/* This boot's ID, what the start changed and the log's changes in
	 * the snapshot (where a release that reads only schema 1 finds
	 * them); a journal of this boot with an empty log is left as it
	 * is (reconcile changes no entry). */
	if (j->state != JOURNAL_LOADED || strcmp(j->file_boot_id,
	    j->boot_id) != 0 || j->nrec > 0 || j->nops > 0 || !j->log_ok)
		save_or_warn(j);
	log_info(1, "journal %s/%s: %zu prepared claims", ctx->cfg->journal_dir,
	    JOURNAL_FILE, json_object_size(j->claims));
	ctx->journal = j;
	r = 0;
	goto out;
fail:
	snprintf(err, errsize, "journal: out of memory");
	journal_close(j);
	free(j);
out:
	if (file)
		dra_flock_release(ctx->lock_fd);
	return (r);
}

/* A clean stop: the log's changes into the snapshot, so that a release
 * that reads only schema 1, started next (a rollback), has them all. */
void
jr_stop(struct dra_ctx *ctx)
{
	struct journal	*j = ctx->journal;
	int		 file;

	if (j == NULL)
		return;
	pthread_mutex_lock(&j->lock);
	file = peer_lock(ctx);
	journal_refresh(j);
	if (j->nrec > 0 || !j->log_ok)
		save_or_warn(j);
	if (file)
		dra_flock_release(ctx->lock_fd);
	pthread_mutex_unlock(&j->lock);
	journal_close(j);
	free(j);
	ctx->journal = NULL;
}

/* fresh: read the file again if another instance replaced it; once a
 * call is enough. */
int
jr_known(struct dra_ctx *ctx, const char *uid, int fresh)
{
	int	 r;

	pthread_mutex_lock(&ctx->journal->lock);
	if (fresh)
		journal_refresh(ctx->journal);
	r = json_object_get(ctx->journal->claims, uid) != NULL;
	pthread_mutex_unlock(&ctx->journal->lock);
	return (r);
}

/* lite: without the driver's data; fresh: read the file again first if
 * another instance replaced it (else done earlier in the same call). */
static struct journal_view *
view_of(struct journal *j, const char *uid, int lite, int fresh)
{
	struct journal_view	*v = NULL;
	json_t			*e;

	pthread_mutex_lock(&j->lock);
	if (fresh)
		journal_refresh(j);
	if ((e = json_object_get(j->claims, uid)) != NULL)
		v = lite ? journal_view_lite(uid, e, 0) :
		    journal_view_new(uid, e, 0);
	pthread_mutex_unlock(&j->lock);
	return (v);
}

/* A claim prepared before: its recorded devices, its spec repaired. */
void
jr_replay(struct dra_ctx *ctx, const struct kp_claim *c,
    struct dra_result *res, struct jr_specs *sp)
{
	struct journal_view	*v;
	char			 err[DRA_MAX_ERROR];
	size_t			 i;
	int			 known = 1;

	/* jr_known read the file again just before, in this call. */
	if ((v = view_of(ctx->journal, c->uid, 1, 0)) == NULL) {
		(void)dra_result_fail_one(res, "out of memory");
		return;
	}
	/* Never a CDI ID whose spec is gone: unverifiable fails too. The
	 * nodeserver's copy of the list answers without a round trip. */
	if (v->e.cdi_spec != NULL && (known = ns_cdi_known(v->e.cdi_spec)) <
	    0) {
		if (specs_list(sp, err, sizeof(err)) != 0) {
			(void)dra_result_fail_one(res, err);
			journal_view_free(v);
			return;
		}
		known = specs_has(sp, v->e.cdi_spec);
	}
	if (v->e.cdi_spec != NULL && !known && journal_view_data(v) != 0)
		snprintf(err, sizeof(err), "out of memory");
	else if (v->e.cdi_spec != NULL && !known)
		known = respec(ctx, &v->e, err, sizeof(err)) == 0;
	else
		known = 1;
	if (!known) {
		(void)dra_result_fail_one(res, err);
		journal_view_free(v);
		return;
	}
	for (i = 0; i < v->e.n_devices; i++)
		if (dra_result_add(res, v->e.devices[i]) != 0)
			break;
	log_info(2, "claim %s/%s: prepared before (journal), %zu devices",
	    c->namespace_, c->name, v->e.n_devices);
	journal_view_free(v);
}

/* The entry of a claim the hook prepared; NULL out of memory. */
static json_t *
entry_of(const struct kp_claim *c, const struct dra_result *res)
{
	const struct dra_device	*d;
	json_t			*e, *devs, *o;
	size_t			 i;

	if ((e = json_pack("{s:s, s:s, s:[]}", "namespace", c->namespace_,
	    "name", c->name, "devices")) == NULL)
		return (NULL);
	devs = json_object_get(e, "devices");
	for (i = 0; i < res->n_devices; i++) {
		d = &res->devices[i];
		o = json_pack("{s:o, s:s, s:s, s:o}", "requests",
		    cdi_json_strings((const char *const *)d->request_names,
		    d->n_request_names), "pool", d->pool, "device", d->device,
		    "cdiDeviceIds", cdi_json_strings((const char *const *)
		    d->cdi_ids, d->n_cdi_ids));
		if (o == NULL || (d->share_id != NULL &&
		    json_object_set_new(o, "shareId",
		    json_string(d->share_id)) != 0) ||
		    json_array_append_new(devs, o) != 0)
			goto fail;
	}
	if (res->cdi_spec != NULL && json_object_set_new(e, "cdiSpec",
	    json_string(res->cdi_spec)) != 0)
		goto fail;
	if (res->jdata != NULL && json_object_set_new(e, "data",
	    json_loads(res->jdata, JSON_DECODE_ANY, NULL)) != 0)
		goto fail;
	return (e);
fail:
	json_decref(e);
	return (NULL);
}

/*
 * After a prepare hook that returned 0: record every claim it prepared,
 * then write the journal once. A claim succeeds only once it is on disk.
 */
void
jr_record(struct dra_ctx *ctx, const struct kp_claim *hc,
    struct dra_results *r)
{
	struct journal	*j = ctx->journal;
	json_t		*e;
	char		 err[KP_ERROR_SIZE], msg[KP_ERROR_SIZE + 64];
	unsigned char	*kept;	/* on disk as it is: not undone below */
	size_t		 i, added = 0;

	kept = calloc(r->n_hook + 1, 1);
	pthread_mutex_lock(&j->lock);
	journal_refresh(j);
	for (i = 0; i < r->n_hook; i++) {
		if (r->claims[i].error != NULL) {
			/* A failed claim leaves no spec behind. */
			if (r->claims[i].cdi_spec != NULL)
				spec_remove(r->claims[i].cdi_spec, "failed "
				    "claim's CDI spec");
			continue;
		}
		err[0] = '\0';
		e = entry_of(&hc[i], &r->claims[i]);
		/* Recorded as it is already (another instance's): no write. */
		if (e != NULL && kept != NULL && json_equal(e,
		    json_object_get(j->claims, hc[i].uid))) {
			json_decref(e);
			kept[i] = 1;
			continue;
		}
		if (e == NULL ||
		    journal_check_entry(ctx->cfg->driver_name, hc[i].uid, e,
		    err, sizeof(err)) != 0 ||
		    journal_put(j, hc[i].uid, e) != 0) {
			if (e != NULL && err[0] != '\0')
				json_decref(e);
			snprintf(msg, sizeof(msg), "journal: the result cannot "
			    "be recorded: %s", err[0] ? err : "out of memory");
			if (r->claims[i].cdi_spec != NULL)
				spec_remove(r->claims[i].cdi_spec,
				    "unrecorded claim's CDI spec");
			(void)dra_result_fail(r, i, msg);
			continue;
		}
		added++;
	}
	if (added > 0 && journal_commit(j, err, sizeof(err)) != 0) {
		snprintf(msg, sizeof(msg), "%s (the claim is not prepared; "
		    "kubelet retries)", err);
		log_warnx("%s", msg);
		for (i = 0; i < r->n_hook; i++)
			if (r->claims[i].error == NULL &&
			    (kept == NULL || !kept[i])) {
				journal_mem_del(j, hc[i].uid);
				if (r->claims[i].cdi_spec != NULL)
					spec_remove(r->claims[i].cdi_spec,
					    "unrecorded claim's CDI spec");
				(void)dra_result_fail(r, i, msg);
			}
	}
	/* A failure above left no change for the next commit. */
	journal_forget_ops(j);
	pthread_mutex_unlock(&j->lock);
	free(kept);
}

/*
 * Right after a hook, still under the hooks' locks (the process's and,
 * in a rolling update, the file lock both instances take), so that the
 * journal of two instances stays one: ok is 0 when the call failed as a
 * whole or was cancelled.
 */
void
jr_after(struct dra_ctx *ctx, int prepare, const struct kp_claim *claims,
    struct dra_results *r, int ok)
{
	if (prepare && ok)
		jr_record(ctx, claims, r);
	else if (prepare)
		jr_discard(ctx, r);
	else if (ok)
		jr_unprepare_end(ctx, r);
}

/* The prepare call failed as a whole: no spec of it stays behind. */
void
jr_discard(struct dra_ctx *ctx, struct dra_results *r)
{
	size_t	 i;

	(void)ctx;
	for (i = 0; i < r->n_hook; i++)
		if (r->claims[i].cdi_spec != NULL)
			spec_remove(r->claims[i].cdi_spec, "failed call's CDI "
			    "spec");
}

/* Before an unprepare hook: the entry of each claim it gets. */
void
jr_unprepare_begin(struct dra_ctx *ctx, struct dra_results *r)
{
	size_t	 i;

	for (i = 0; i < r->n_hook; i++)
		if ((r->claims[i].view = view_of(ctx->journal,
		    r->claims[i].uid, 0, 1)) == NULL)
			(void)dra_result_fail(r, i, "journal: out of memory");
}

/*
 * After it returned 0: entries, then specs, of the claims it unprepared.
 * The journal first (issue 28, finding 6): a failed write keeps both the
 * entry and the spec (kubelet retries the unprepare); a crash between
 * the two leaves a spec without an entry, which the next start's
 * reconcile() removes. A spec that cannot be removed puts its entry back
 * and fails the claim, so the retry runs the hook and removes it again.
 */
void
jr_unprepare_end(struct dra_ctx *ctx, struct dra_results *r)
{
	struct journal		*j = ctx->journal;
	struct journal_view	*v;
	char			 err[KP_ERROR_SIZE], msg[KP_ERROR_SIZE + 32];
	size_t			 i, gone = 0, back = 0;

	pthread_mutex_lock(&j->lock);
	journal_refresh(j);
	for (i = 0; i < r->n_hook; i++)
		if (r->claims[i].error == NULL && r->claims[i].view != NULL) {
			journal_del(j, r->claims[i].uid);
			gone++;
		}
	if (gone > 0 && journal_commit(j, err, sizeof(err)) != 0) {
		snprintf(msg, sizeof(msg), "%s (retry the unprepare)", err);
		log_warnx("%s", msg);
		for (i = 0; i < r->n_hook; i++)
			if (r->claims[i].error == NULL &&
			    (v = r->claims[i].view) != NULL) {
				(void)journal_mem_put(j, r->claims[i].uid,
				    json_incref(v->ref));
				(void)dra_result_fail(r, i, msg);
			}
		journal_forget_ops(j);
	}
	pthread_mutex_unlock(&j->lock);
	for (i = 0; i < r->n_hook; i++) {
		v = r->claims[i].view;
		if (r->claims[i].error != NULL || v == NULL ||
		    v->e.cdi_spec == NULL)
			continue;
		if (kp_cdi_spec_remove(v->e.cdi_spec, err, sizeof(err)) == 0)
			continue;
		(void)dra_result_fail(r, i, err);
		pthread_mutex_lock(&j->lock);
		if (journal_put(j, r->claims[i].uid, json_incref(v->ref)) == 0)
			back++;
		pthread_mutex_unlock(&j->lock);
	}
	if (back == 0)
		return;
	pthread_mutex_lock(&j->lock);
	if (journal_commit(j, err, sizeof(err)) != 0)
		log_warnx("journal: the entry of a claim whose CDI spec could "
		    "not be removed is not back: %s (the next start removes "
		    "the spec)", err);
	pthread_mutex_unlock(&j->lock);
}
