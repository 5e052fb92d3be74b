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
 *  - for a valid tree, pack_split_pool() (kp_pool.split_slices) of every
 *    pool, then validate_publish() again.
 * Invariants checked (trap on a breach): error messages are NUL
 * terminated; a valid tree always encodes (non-NULL spec with a devices
 * array); a spec compared with itself never reports dropped fields;
 * adopting its own taint times changes nothing; v1 accepts every valid
 * tree; a split keeps every device and counter set in order, holds
 * devices or counter sets per slice, and a valid tree split stays valid.
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

/* The split's allocations, freed after each input. */
struct allocs {
	void	*p[4096];
	size_t	 n;
};

static void *
split_alloc(void *ctx, size_t n)
{
	struct allocs	*a = ctx;
	void		*p;

	if (a->n == sizeof(a->p) / sizeof(a->p[0]) ||
	    (p = calloc(1, n > 0 ? n : 1)) == NULL)
		return (NULL);
	return (a->p[a->n++] = p);
}

static void
split(Kpipc__Publish *pub)
{
	static struct allocs	 a;
	Kpipc__Slice		**orig, ***saved;
	Kpipc__Pool		*p;
	char			 err[KP_ERROR_SIZE];
	size_t			 i, j, k, n_orig, nd, ns, *n_saved;
	int			 r;

	saved = calloc(pub->n_pools + 1, sizeof(*saved));
	n_saved = calloc(pub->n_pools + 1, sizeof(*n_saved));
	if (saved == NULL || n_saved == NULL) {
		free(saved);
		free(n_saved);
		return;
	}
	for (i = 0; i < pub->n_pools; i++) {
		p = pub->pools[i];
		orig = saved[i] = p->slices;
		n_orig = n_saved[i] = p->n_slices;
		nd = ns = 0;
		for (j = 0; j < n_orig; j++) {
			nd += orig[j]->n_devices;
			ns += orig[j]->n_shared_counters;
		}
		memset(err, 'x', sizeof(err));
		if ((r = pack_split_pool(p, "pools[0]", split_alloc, &a, err,
		    sizeof(err))) != 0) {
			if (r == KP_EINVAL && memchr(err, '\0',
			    sizeof(err)) == NULL)
				__builtin_trap();
			continue;
		}
		for (j = 0; j < p->n_slices; j++) {
			if (p->slices[j]->n_devices > 0 &&
			    p->slices[j]->n_shared_counters > 0)
				__builtin_trap();
			nd -= p->slices[j]->n_devices;
			ns -= p->slices[j]->n_shared_counters;
		}
		if (nd != 0 || ns != 0)
			__builtin_trap();
		/* The first device of the result is the first of the input. */
		for (j = 0; j < n_orig && orig[j]->n_devices == 0; j++)
			;
		for (k = 0; j < n_orig && k < p->n_slices &&
		    p->slices[k]->n_devices == 0; k++)
			;
		if (j < n_orig && (k == p->n_slices ||
		    p->slices[k]->devices[0] != orig[j]->devices[0]))
			__builtin_trap();
	}
	memset(err, 'x', sizeof(err));
	if (validate_publish(pub, err, sizeof(err)) != 0)
		__builtin_trap();
	/* The unpacked tree owns the devices and sets; the new slices and
	 * arrays are ours: put the tree back before freeing them. */
	for (i = 0; i < pub->n_pools; i++) {
		pub->pools[i]->slices = saved[i];
		pub->pools[i]->n_slices = n_saved[i];
	}
	for (i = 0; i < a.n; i++)
		free(a.p[i]);
	a.n = 0;
	free(saved);
	free(n_saved);
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
	/* The supervisor walked the driver's frame (ipc_unpack). */
	if (ipc_wire_check(&kpipc__publish__descriptor, data, size, err,
	    sizeof(err)) != 0 ||
	    (pub = kpipc__publish__unpack(NULL, size, data)) == NULL)
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
	} else {
		for (i = 0; i < pub->n_pools; i++)
			for (v = 0; v < 3; v++)
				encode((enum kube_version)v, pub->pools[i]);
		split(pub);
	}
	kpipc__publish__free_unpacked(pub, NULL);
	return (0);
}
