/*
 * advertise.c - the supported_versions of GetInfo, computed from the
 * options, so the registrar needs to know nothing of the DRA services it
 * advertises (they are the nodeserver's).
 * Runs in the driver process, inside kp_start(), and in an exec'd child
 * as it rebuilds the options (ipc/child_opts.c: a copy holds no pointer).
 */
#include "base/config.h"

/*
 * Kubelets 1.34+ take the first entry they know, so the newest API comes
 * first; 1.31-1.33 kubelets look for v1beta1 or the v1alpha4 names
 * (upstream draplugin.go: v1.DRAPluginService, v1beta1.DRAPluginService,
 * and for NodeV1alpha4 "v1alpha3.NodeService" and "1.0.0").
 */
void
opt_advertise(struct kp_options *o)
{
	size_t	 n = 0;

	if (o->v1)
		o->advertised[n++] = "v1.DRAPlugin";
	if (o->v1beta1)
		o->advertised[n++] = "v1beta1.DRAPlugin";
	if (o->v1alpha4) {
		o->advertised[n++] = "v1alpha3.NodeService";
		o->advertised[n++] = "1.0.0";
	}
	/* Health after the DRA services, v1 first (upstream v0.37; a 1.37
	 * kubelet prefers v1, 1.34-1.36 use v1alpha1 whatever is listed). */
	if (!o->health_off && !o->health_v1_off)
		o->advertised[n++] = "v1.DRAResourceHealth";
	if (!o->health_off && !o->health_v1alpha1_off)
		o->advertised[n++] = "v1alpha1.DRAResourceHealth";
	o->n_advertised = n;
}
