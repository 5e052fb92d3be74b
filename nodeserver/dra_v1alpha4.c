/*
 * dra_v1alpha4.c - DRA API v1alpha4 (kubelet 1.31 to 1.33). Its proto
 * package is "v1alpha3" and its service "Node" (an upstream mistake kept
 * for wire compatibility). Same messages as v1beta1: the shared codec in
 * dra_v1.c encodes it with share_id left out.
 *
 * Advertised as "v1alpha3.NodeService" (what 1.32 and 1.33 look for) and
 * "1.0.0": 1.31 kubelets only accept a list with a parseable version whose
 * major is 1, and use v1alpha4 whatever it says; 1.34+ skip both entries.
 */
#include <stddef.h>

#include "nodeserver/dra.h"

const struct dra_version_info dra_v1alpha4_info = {
	"v1alpha4",
	"/v1alpha3.Node/NodePrepareResources",
	"/v1alpha3.Node/NodeUnprepareResources",
	0
};
