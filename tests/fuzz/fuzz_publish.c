/*
 * fuzz_publish.c - libFuzzer target for the driver's resources as the
 * publisher gets them: the input is a packed kpipc Publish message (any
 * tree protobuf-c accepts, so every 1.37 field in any combination), run
 * through what a frame meets on its way:
 *  - ipc_check_resources() (the supervisor's size rules);
 *  - validate_publish() (the API server's and the controller's rules);
 *  - for a valid tree, per pool and per API version: conv_check_version(),
 *    then conv_slice_spec() of every slice, its neutral form
 *    (conv_neutral_spec), taint-time adoption against itself and the
 *    dropped-fields verdict against itself.
 * Invariants checked (trap on a breach): error messages are NUL
 * terminated; a valid tree always encodes (non-NULL spec with a devices
 * array); a spec compared with itself never reports dropped fields;
 * adopting its own taint times changes nothing; v1 accepts every valid
 * tree.
 * Run: ./tests/fuzz/fuzz_publish -max_total_time=60 corpus/
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/log.h"
#include "publisher/slices.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
silent(void *user, enum kp_log_level level, int verbosity, const char *role,
    const char *msg)
{
}

static void
encode(enum kube_version v, const Kpipc__Pool *p)
{
	struct conv_slice	 cs;
	json_t			*spec, *n, *n2;
	char			 err[KP_ERROR_SIZE], gates[160];
	size_t			 i;

	memset(err, 'x', sizeof(err));
	if (conv_check_version(v, p, err, sizeof(err)) != 0) {
		if (v == KUBE_V1 || memchr(err, '\0', sizeof(err)) == NULL)
			__builtin_trap();
		return;
	}
	for (i = 0; i < p->n_slices; i++) {
		memset(&cs, 0, sizeof(cs));
		cs.driver = "gpu.example.com";
		cs.node = "node-1";
		cs.pool = p->name;
		cs.generation = p->generation;
		cs.count = (int64_t)p->n_slices;
		cs.selector = p->node_selector;
		cs.all_nodes = p->all_nodes;
		cs.slice = p->slices[i];
		cs.devices = p->slices[i]->devices;
		cs.n_devices = p->slices[i]->n_devices;
		if ((spec = conv_slice_spec(v, &cs)) == NULL)
			__builtin_trap();
		if (!json_is_array(json_object_get(spec, "devices")))
			__builtin_trap();
		n = conv_neutral_spec(v, spec);
		if (n == NULL || conv_dropped_fields(n, n, gates,
		    sizeof(gates)) != 0)
			__builtin_trap();
		conv_adopt_taint_times(v, spec, n);
		n2 = conv_neutral_spec(v, spec);
		if (n2 == NULL || !json_equal(n, n2))
			__builtin_trap();
		json_decref(n2);
		json_decref(n);
		json_decref(spec);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	 ready;
	Kpipc__Publish	*pub;
	char		 err[KP_ERROR_SIZE];
	size_t		 i;
	int		 v;

	if (!ready) {
		log_init(100, silent, NULL);
		ready = 1;
	}
	if ((pub = kpipc__publish__unpack(NULL, size, data)) == NULL)
		return (0);
	memset(err, 'x', sizeof(err));
	if (ipc_check_resources(pub, err, sizeof(err)) != 0) {
		if (memchr(err, '\0', sizeof(err)) == NULL)
			__builtin_trap();
		kpipc__publish__free_unpacked(pub, NULL);
		return (0);
	}
	memset(err, 'x', sizeof(err));
	if (validate_publish(pub, err, sizeof(err)) != 0) {
		if (memchr(err, '\0', sizeof(err)) == NULL)
			__builtin_trap();
	} else
		for (i = 0; i < pub->n_pools; i++)
			for (v = 0; v < 3; v++)
				encode((enum kube_version)v, pub->pools[i]);
	kpipc__publish__free_unpacked(pub, NULL);
	return (0);
}
