/*
 * state.c - kp_state_set(): the driver process's state for the hooks.
 * Generations are numbered here, under a lock held across the request, so
 * the frames reach the supervisor in generation order whichever threads
 * call; the supervisor keeps the latest and passes it to the nodeserver.
 *
 * Runs in: the driver process.
 */
#include "api/api.h"

int
kp_state_set(struct kp_plugin *p, const void *data, size_t len)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__StateSet	 st = KPIPC__STATE_SET__INIT;
	int		 r;

	if (p == NULL || p->magic != KP_PLUGIN_MAGIC)
		return (KP_EINVAL);
	if (data == NULL && len > 0)
		return (api_fail(p, KP_EINVAL, "kp_state_set: data: NULL "
		    "with len %zu", len));
	if (len > KP_STATE_MAX)
		return (api_fail(p, KP_EINVAL, "kp_state_set: len: %zu bytes "
		    "exceed KP_STATE_MAX (%u bytes)", len,
		    (unsigned)KP_STATE_MAX));
	pthread_mutex_lock(&p->state_lock);
	st.generation = p->state_gen + 1;
	st.data.data = (uint8_t *)data;
	st.data.len = len;
	m.m_case = KPIPC__MSG__M_STATE_SET;
	m.state_set = &st;
	/* A request that failed may still have reached the supervisor:
	 * the number is used up either way, so the next one stays above
	 * whatever the supervisor holds. */
	r = api_request(p, &m, "kp_state_set");
	p->state_gen++;
	pthread_mutex_unlock(&p->state_lock);
	return (r);
}
