/*
 * dra_v1beta1.c - DRA API v1beta1 (kubelet 1.32 and later, deprecated from
 * 1.34). Same messages as v1 without Device.share_id: the shared codec in
 * dra_v1.c encodes it with share_id left out.
 */
#include <stddef.h>

#include "nodeserver/dra.h"

const struct dra_version_info dra_v1beta1_info = {
	"v1beta1",
	"/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources",
	"/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources",
	0
};
