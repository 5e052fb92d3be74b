/*
 * state.c - the driver process's state for the hooks (kp_state_set in the
 * driver process, kp_hook_state_get and the kp_state_callback function
 * here). The nodeserver starts with the state the supervisor held when it
 * forked this process (child_env), then takes each newer StateSet the
 * reader thread (ns_wrap.c) hands over, in generation order; an older or
 * repeated generation is ignored, so a hook never sees the state go back.
 *
 * Runs in: the nodeserver (the hooks' process, sandboxed).
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "nodeserver/state.h"

/* kp_hook_state_get()'s way in: one nodeserver per process. */
static struct ns_state	*ns_state_self;

int
ns_state_init(struct ns_state *s, const struct child_env *env)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->fn = env->cfg->state_fn;
	s->user = env->cfg->state_user;
	if (env->state_gen != 0) {
		if (env->state_len > 0 &&
		    (s->data = malloc(env->state_len)) == NULL)
			return (KP_ENOMEM);
		if (env->state_len > 0)
			memcpy(s->data, env->state, env->state_len);
		s->len = env->state_len;
		s->gen = env->state_gen;
	}
	ns_state_self = s;
	return (0);
}

/* A StateSet from the supervisor (field rules checked by ipc_next());
 * takes ownership of m. Runs on the reader thread. */
void
ns_state_ipc(struct ns_state *s, Kpipc__Msg *m)
{
	const Kpipc__StateSet	*st = m->state_set;
	uint8_t			*copy = NULL;
	int			 newer;

	if (st->data.len > 0 && (copy = malloc(st->data.len)) == NULL) {
		log_warnx("state: out of memory, generation %llu dropped",
		    (unsigned long long)st->generation);
		ipc_free(m);
		return;
	}
	if (st->data.len > 0)
		memcpy(copy, st->data.data, st->data.len);
	pthread_mutex_lock(&s->lock);
	if ((newer = st->generation > s->gen)) {
		free(s->data);
		s->data = copy;
		s->len = st->data.len;
		s->gen = st->generation;
		copy = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	free(copy);
	/* Outside the lock: the function may call kp_hook_state_get(). */
	if (newer && s->fn != NULL)
		s->fn(s->user, st->data.data, st->data.len, st->generation);
	ipc_free(m);
}

void
ns_state_free(struct ns_state *s)
{
	ns_state_self = NULL;
	free(s->data);
	s->data = NULL;
	pthread_mutex_destroy(&s->lock);
}

int
kp_hook_state_get(void *buf, size_t size, size_t *len, uint64_t *generation)
{
	struct ns_state	*s = ns_state_self;
	int		 r = 0;

	if (generation != NULL)
		*generation = 0;
	if (len == NULL)
		return (KP_EINVAL);
	*len = 0;
	if (s == NULL)
		return (KP_ENOTSUP);
	pthread_mutex_lock(&s->lock);
	if (s->gen == 0)
		r = KP_ENOENT;
	else if (size < s->len || (buf == NULL && s->len > 0)) {
		*len = s->len;
		r = KP_ENOSPC;
	} else {
		if (s->len > 0)
			memcpy(buf, s->data, s->len);
		*len = s->len;
		if (generation != NULL)
			*generation = s->gen;
	}
	pthread_mutex_unlock(&s->lock);
	return (r);
}
