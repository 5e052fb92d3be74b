/*
 * test_pack.c - pack_resources(): struct kp_resources -> Kpipc__Publish ->
 * a real IPC frame (ipc_send, ipc_recv with its checks) -> every field
 * compared with the source; the tree owns its memory, so changing the
 * caller's data after packing changes nothing in it.
 */
#include <sys/socket.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "ipc/ipc.h"
#include "api/api.h"
#include "publisher/publisher.h"

static char	 model[16] = "A100";
static char	 version[16] = "1.2.3-rc.1";
static char	 dev0[16] = "gpu-0";
static char	 qty[16] = "80Gi";
static char	 rack[16] = "rack-1";
static char	 pool0[16] = "gpu";

static const char *rack_values[] = { rack, "rack-2" };
static const char *node_values[] = { "node-1" };

static const int64_t ints[] = { 1, -2, 3 };
static const int bools[] = { 0, 5 };
static const char *strs[] = { "a", "b" };
static const char *vers[] = { "1.0.0" };
static const char *conds[] = { "example.com/ready" };
static const char *skip[] = { "NodePrepareResources",
    "NodeUnprepareResources" };
static const char *valid[] = { "1Gi", "2Gi" };

static struct kp_attribute attrs[] = {
	KP_ATTR_STRING("example.com/model", model),
	KP_ATTR_VERSION("driverVersion", version),
	KP_ATTR_INT("count", INT64_MIN),
	KP_ATTR_INT("zero", 0),
	KP_ATTR_BOOL("ecc", 7),
	KP_ATTR_BOOL("off", 0),
	KP_ATTR_STRING("empty", ""),
	KP_ATTR_INTS("li", ints, 3),
	KP_ATTR_BOOLS("lb", bools, 2),
	KP_ATTR_STRINGS("ls", strs, 2),
	KP_ATTR_VERSIONS("lv", vers, 1),
};
static struct kp_request_policy policy = { KP_REQUEST_POLICY_INIT,
    .default_value = "1Gi", .valid_values = valid, .n_valid_values = 2 };
static struct kp_capacity caps[] = {
	{ KP_CAPACITY_INIT, .name = "memory", .quantity = qty,
	    .request_policy = &policy },
	KP_CAPACITY("example.com/cores", "108"),
};
static struct kp_counter counters[] = {
	KP_COUNTER("memory", "80Gi"),
	KP_COUNTER("sm", "108"),
};
static struct kp_counter_set sets[] = {
	{ KP_COUNTER_SET_INIT, .name = "gpu-0-set", .counters = counters,
	    .n_counters = 2 },
};
static struct kp_counter_consumption uses[] = {
	{ KP_COUNTER_CONSUMPTION_INIT, .counter_set = "gpu-0-set",
	    .counters = counters, .n_counters = 1 },
};
static struct kp_taint taints[] = {
	{ KP_TAINT_INIT, .key = "example.com/ecc", .value = "bad",
	    .effect = KP_TAINT_NO_SCHEDULE, .time_added = 1700000000 },
	{ KP_TAINT_INIT, .key = "k", .effect = KP_TAINT_NONE },
};
static struct kp_node_allocatable alloc[] = {
	{ KP_NODE_ALLOCATABLE_INIT, .resource = "memory",
	    .per_pod = "10Mi" },
};
static struct kp_device devs[] = {
	{ KP_DEVICE_INIT, .name = dev0, .attributes = attrs,
	    .n_attributes = 11, .capacities = caps, .n_capacities = 2,
	    .allow_multiple_allocations = 1 },
	{ KP_DEVICE_INIT, .name = "gpu-1", .capacities = caps + 1,
	    .n_capacities = 1, .consumes_counters = uses,
	    .n_consumes_counters = 1, .taints = taints, .n_taints = 2,
	    .attributes = attrs, .n_attributes = 1, .binds_to_node = 1, .binding_conditions = conds,
	    .n_binding_conditions = 1, .binding_failure_conditions = conds,
	    .n_binding_failure_conditions = 1, .node_allocatable = alloc,
	    .n_node_allocatable = 1 },
	{ KP_DEVICE_INIT, .name = "gpu-2", .attributes = attrs + 2,
	    .n_attributes = 1, .node_name = "node-1" },
};
static struct kp_slice slices[] = {
	{ KP_SLICE_INIT, .devices = devs, .n_devices = 2,
	    .partition_type_attribute = "example.com/model",
	    .skip_node_operations = skip, .n_skip_node_operations = 2 },
	{ KP_SLICE_INIT, .devices = devs + 2, .n_devices = 1,
	    .per_device_node_selection = 1 },
	{ KP_SLICE_INIT, .shared_counters = sets, .n_shared_counters = 1 },
};
static struct kp_node_selector_requirement exprs[] = {
	{ KP_NODE_SELECTOR_REQUIREMENT_INIT, .key = "example.com/rack",
	    .op = "In", .values = rack_values, .n_values = 2 },
	{ KP_NODE_SELECTOR_REQUIREMENT_INIT, .key = "example.com/gpu",
	    .op = "Exists" },
};
static struct kp_node_selector_requirement fields[] = {
	{ KP_NODE_SELECTOR_REQUIREMENT_INIT, .key = "metadata.name",
	    .op = "NotIn", .values = node_values, .n_values = 1 },
};
static struct kp_node_selector sel = { KP_NODE_SELECTOR_INIT,
    .match_expressions = exprs, .n_match_expressions = 2,
    .match_fields = fields, .n_match_fields = 1 };
static struct kp_node_selector empty_sel = { KP_NODE_SELECTOR_INIT };
static struct kp_pool pools[] = {
	{ KP_POOL_INIT, .name = pool0, .generation = 1, .slices = slices,
	    .n_slices = 3 },
	{ KP_POOL_INIT, .name = "shared/a", .generation = INT64_MAX,
	    .node_selector = &sel, .slices = slices + 2, .n_slices = 1 },
	{ KP_POOL_INIT, .name = "none", .node_selector = &empty_sel },
	{ KP_POOL_INIT, .name = "all", .all_nodes = 1 },
};
static struct kp_resources res = { KP_RESOURCES_INIT, .pools = pools,
    .n_pools = 4 };

static int
str_eq(const char *a, const char *b)
{
	return (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void
cmp_requirements(Kpipc__SelectorRequirement **o, size_t n,
    const struct kp_node_selector_requirement *in, size_t n_in)
{
	size_t	 i, j;

	CHECK_EQ(n, n_in);
	for (i = 0; i < n && i < n_in; i++) {
		CHECK_STREQ(o[i]->key, in[i].key);
		CHECK_STREQ(o[i]->op, in[i].op);
		CHECK_EQ(o[i]->n_values, in[i].n_values);
		for (j = 0; j < o[i]->n_values && j < in[i].n_values; j++)
			CHECK_STREQ(o[i]->values[j], in[i].values[j]);
	}
}

static void
cmp_attribute(const Kpipc__Attribute *o, const struct kp_attribute *in)
{
	CHECK_STREQ(o->name, in->name);
	switch (in->type) {
	case KP_ATTR_TYPE_INTS:
		CHECK_EQ(o->value_case, KPIPC__ATTRIBUTE__VALUE_INTS);
		CHECK_EQ(o->ints->n_values, in->n_values);
		CHECK_EQ(o->ints->values[in->n_values - 1],
		    in->int_values[in->n_values - 1]);
		break;
	case KP_ATTR_TYPE_BOOLS:
		CHECK_EQ(o->value_case, KPIPC__ATTRIBUTE__VALUE_BOOLS);
		CHECK_EQ(o->bools->n_values, in->n_values);
		CHECK_EQ(o->bools->values[1], 1);
		break;
	case KP_ATTR_TYPE_STRINGS:
		CHECK_EQ(o->value_case, KPIPC__ATTRIBUTE__VALUE_STRINGS);
		CHECK_EQ(o->strings->n_values, in->n_values);
		CHECK_STREQ(o->strings->values[0], in->string_values[0]);
		break;
	case KP_ATTR_TYPE_VERSIONS:
		CHECK_EQ(o->value_case, KPIPC__ATTRIBUTE__VALUE_VERSIONS);
		CHECK_STREQ(o->versions->values[0], in->string_values[0]);
		break;
	case KP_ATTR_TYPE_INT:
		CHECK_EQ(o->value_case, KPIPC__ATTRIBUTE__VALUE_INT_VALUE);
		CHECK_EQ(o->int_value, in->int_value);
		break;
	case KP_ATTR_TYPE_BOOL:
		CHECK_EQ(o->value_case, KPIPC__ATTRIBUTE__VALUE_BOOL_VALUE);
		CHECK_EQ(o->bool_value, in->bool_value != 0);
		break;
	case KP_ATTR_TYPE_STRING:
		CHECK_EQ(o->value_case, KPIPC__ATTRIBUTE__VALUE_STRING_VALUE);
		CHECK_STREQ(o->string_value, in->string_value);
		break;
	case KP_ATTR_TYPE_VERSION:
		CHECK_EQ(o->value_case, KPIPC__ATTRIBUTE__VALUE_VERSION_VALUE);
		CHECK_STREQ(o->version_value, in->string_value);
		break;
	}
}

static void
cmp_device(const Kpipc__Device *o, const struct kp_device *in)
{
	size_t	 i;

	CHECK_STREQ(o->name, in->name);
	CHECK_EQ(o->n_attributes, in->n_attributes);
	for (i = 0; i < o->n_attributes && i < in->n_attributes; i++)
		cmp_attribute(o->attributes[i], &in->attributes[i]);
	CHECK_EQ(o->n_capacities, in->n_capacities);
	for (i = 0; i < o->n_capacities && i < in->n_capacities; i++) {
		CHECK_STREQ(o->capacities[i]->name, in->capacities[i].name);
		CHECK_STREQ(o->capacities[i]->quantity,
		    in->capacities[i].quantity);
		CHECK_EQ(o->capacities[i]->request_policy != NULL,
		    in->capacities[i].request_policy != NULL);
	}
	CHECK_EQ(o->n_consumes_counters, in->n_consumes_counters);
	for (i = 0; i < o->n_consumes_counters; i++) {
		CHECK_STREQ(o->consumes_counters[i]->counter_set,
		    in->consumes_counters[i].counter_set);
		CHECK_EQ(o->consumes_counters[i]->n_counters,
		    in->consumes_counters[i].n_counters);
	}
	CHECK_STREQ(o->node_name, in->node_name != NULL ? in->node_name : "");
	CHECK_EQ(o->n_taints, in->n_taints);
	for (i = 0; i < o->n_taints; i++) {
		CHECK_STREQ(o->taints[i]->key, in->taints[i].key);
		CHECK_STREQ(o->taints[i]->value, in->taints[i].value != NULL ?
		    in->taints[i].value : "");
		CHECK_EQ(o->taints[i]->effect, (int)in->taints[i].effect);
		CHECK_EQ(o->taints[i]->time_added, in->taints[i].time_added);
	}
	CHECK_EQ(o->binds_to_node, in->binds_to_node != 0);
	CHECK_EQ(o->n_binding_conditions, in->n_binding_conditions);
	CHECK_EQ(o->n_binding_failure_conditions,
	    in->n_binding_failure_conditions);
	CHECK_EQ(o->allow_multiple_allocations,
	    in->allow_multiple_allocations != 0);
	CHECK_EQ(o->n_node_allocatable, in->n_node_allocatable);
	for (i = 0; i < o->n_node_allocatable; i++)
		CHECK_STREQ(o->node_allocatable[i]->per_pod,
		    in->node_allocatable[i].per_pod);
}

/* Every field of the tree against the source. */
static void
cmp_tree(const Kpipc__Publish *p, const struct kp_resources *r)
{
	const Kpipc__Pool	*o;
	const struct kp_pool	*in;
	size_t			 i, j, k;

	CHECK_EQ(p->n_pools, r->n_pools);
	for (i = 0; i < p->n_pools && i < r->n_pools; i++) {
		o = p->pools[i];
		in = &r->pools[i];
		CHECK_STREQ(o->name, in->name);
		CHECK_EQ(o->generation, in->generation);
		CHECK_EQ(o->all_nodes, in->all_nodes != 0);
		CHECK_EQ(o->node_selector != NULL, in->node_selector != NULL);
		if (o->node_selector != NULL && in->node_selector != NULL) {
			cmp_requirements(o->node_selector->match_expressions,
			    o->node_selector->n_match_expressions,
			    in->node_selector->match_expressions,
			    in->node_selector->n_match_expressions);
			cmp_requirements(o->node_selector->match_fields,
			    o->node_selector->n_match_fields,
			    in->node_selector->match_fields,
			    in->node_selector->n_match_fields);
		}
		CHECK_EQ(o->n_slices, in->n_slices);
		for (j = 0; j < o->n_slices && j < in->n_slices; j++) {
			CHECK_EQ(o->slices[j]->n_devices,
			    in->slices[j].n_devices);
			CHECK_EQ(o->slices[j]->n_shared_counters,
			    in->slices[j].n_shared_counters);
			CHECK_EQ(o->slices[j]->per_device_node_selection,
			    in->slices[j].per_device_node_selection != 0);
			CHECK_EQ(o->slices[j]->n_skip_node_operations,
			    in->slices[j].n_skip_node_operations);
			for (k = 0; k < o->slices[j]->n_devices &&
			    k < in->slices[j].n_devices; k++)
				cmp_device(o->slices[j]->devices[k],
				    &in->slices[j].devices[k]);
		}
	}
}

/* Through a real frame: ipc_send, then ipc_recv (unpack and checks). */
static Kpipc__Msg *
round_trip(Kpipc__Publish *pub)
{
	struct ipc_chan	 tx, rx;
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Msg	*out = NULL;
	char		 err[KP_ERROR_SIZE] = "";
	int		 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		CHECK(0);
		return (NULL);
	}
	ipc_chan_init(&tx, sv[0], KP_IPC_MAX_FRAME);
	ipc_chan_init(&rx, sv[1], KP_IPC_MAX_FRAME);
	m.m_case = KPIPC__MSG__M_PUBLISH;
	m.publish = pub;
	CHECK_EQ(ipc_send(&tx, &m), 0);
	CHECK_EQ(ipc_recv(&rx, &out, 5000, err, sizeof(err)), 0);
	if (err[0] != '\0')
		fprintf(stderr, "ipc_recv: %s\n", err);
	ipc_chan_close(&tx);
	ipc_chan_close(&rx);
	CHECK(out != NULL && out->m_case == KPIPC__MSG__M_PUBLISH);
	return (out);
}

static void
test_round_trip(void)
{
	Kpipc__Publish	*pub = NULL;
	Kpipc__Msg	*m;
	char		 err[KP_ERROR_SIZE];

	if (validate_resources(&res, err, sizeof(err)) != 0)
		fprintf(stderr, "validate: %s\n", err);
	CHECK_EQ(validate_resources(&res, err, sizeof(err)), 0);
	CHECK_EQ(pack_resources(&res, &pub, err, sizeof(err)), 0);
	if (pub == NULL)
		return;
	cmp_tree(pub, &res);
	CHECK(pub->pools[0]->node_selector == NULL);
	CHECK(pub->pools[2]->node_selector != NULL);
	if ((m = round_trip(pub)) != NULL) {
		cmp_tree(m->publish, &res);
		CHECK(m->publish->pools[0]->node_selector == NULL);
		CHECK(m->publish->pools[2]->node_selector != NULL);
		ipc_free(m);
	}

	/* The caller's data changes; the packed tree does not. */
	strcpy(model, "H100");
	strcpy(version, "2.0.0");
	strcpy(dev0, "gpu-9");
	strcpy(qty, "1Ki");
	strcpy(rack, "rack-9");
	strcpy(pool0, "other");
	attrs[2].int_value = 5;
	attrs[4].type = KP_ATTR_TYPE_STRING;
	attrs[4].string_value = "x";
	devs[0].n_attributes = 1;
	pools[1].generation = 2;
	res.n_pools = 1;
	CHECK_EQ(pub->n_pools, 4);
	CHECK_STREQ(pub->pools[0]->name, "gpu");
	CHECK_EQ(pub->pools[1]->generation, INT64_MAX);
	CHECK_STREQ(pub->pools[1]->node_selector->match_expressions[0]->
	    values[0], "rack-1");
	CHECK_EQ(pub->pools[0]->slices[0]->devices[0]->n_attributes, 11);
	CHECK_STREQ(pub->pools[0]->slices[0]->devices[0]->name, "gpu-0");
	CHECK_STREQ(pub->pools[0]->slices[0]->devices[0]->attributes[0]->
	    string_value, "A100");
	CHECK_STREQ(pub->pools[0]->slices[0]->devices[0]->attributes[1]->
	    version_value, "1.2.3-rc.1");
	CHECK_EQ(pub->pools[0]->slices[0]->devices[0]->attributes[2]->
	    int_value, INT64_MIN);
	CHECK_EQ(pub->pools[0]->slices[0]->devices[0]->attributes[4]->
	    value_case, KPIPC__ATTRIBUTE__VALUE_BOOL_VALUE);
	CHECK_EQ(pub->pools[0]->slices[0]->devices[0]->attributes[4]->
	    bool_value, 1);
	CHECK_STREQ(pub->pools[0]->slices[0]->devices[0]->capacities[0]->
	    quantity, "80Gi");
	CHECK(str_eq(pub->pools[0]->slices[1]->devices[0]->name, "gpu-2"));
	pack_free(pub);
}

static void
test_edges(void)
{
	struct kp_resources	 none = { KP_RESOURCES_INIT };
	struct kp_resources	 bad = { KP_RESOURCES_INIT, .n_pools = 1 };
	struct kp_capacity	 nullq[] = { KP_CAPACITY("memory", NULL) };
	struct kp_device	 d[] = { { KP_DEVICE_INIT, .name = "d",
	    .capacities = nullq, .n_capacities = 1 } };
	struct kp_device	 dl[] = { { KP_DEVICE_INIT, .name = "d",
	    .n_attributes = 2 } };
	struct kp_slice		 s[] = { { KP_SLICE_INIT, .devices = d,
	    .n_devices = 1 } };
	struct kp_pool		 p[] = { { KP_POOL_INIT, .name = "p",
	    .slices = s, .n_slices = 1 } };
	struct kp_resources	 r = { KP_RESOURCES_INIT, .pools = p,
	    .n_pools = 1 };
	struct kp_attribute	 a[] = { { KP_ATTRIBUTE_INIT, .name = "a",
	    .type = (enum kp_attribute_type)9 } };
	Kpipc__Publish		*pub = (Kpipc__Publish *)1;
	Kpipc__Msg		*m;
	char			 err[KP_ERROR_SIZE];

	CHECK_EQ(pack_resources(&none, &pub, NULL, 0), 0);
	CHECK(pub != NULL && pub->n_pools == 0);
	if (pub != NULL && (m = round_trip(pub)) != NULL) {
		CHECK_EQ(m->publish->n_pools, 0);
		ipc_free(m);
	}
	pack_free(pub);
	pack_free(NULL);

	pub = (Kpipc__Publish *)1;
	CHECK_EQ(pack_resources(NULL, &pub, err, sizeof(err)), KP_EINVAL);
	CHECK(pub == NULL);
	CHECK_EQ(pack_resources(&none, NULL, NULL, 0), KP_EINVAL);
	CHECK_EQ(pack_resources(&bad, &pub, err, sizeof(err)), KP_EINVAL);
	CHECK_STREQ(err, "pools: NULL with a count of 1");
	/* Failures deep in the tree free what was built (LSan checks). */
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), KP_EINVAL);
	CHECK_STREQ(err, "pools[0].slices[0].devices[0].capacity[0].quantity: "
	    "required (NULL)");
	CHECK(pub == NULL);
	s[0].devices = dl;
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), KP_EINVAL);
	CHECK_STREQ(err, "pools[0].slices[0].devices[0].attributes: NULL "
	    "with a count of 2");
	dl[0].n_attributes = 1;
	dl[0].attributes = a;
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "attributes[0].type: 9 is not a kp_attribute_type");
	a[0].type = KP_ATTR_TYPE_VERSION;
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "attributes[0].string_value: required");
	a[0].type = KP_ATTR_TYPE_STRINGS;
	a[0].n_values = 1;
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "attributes[0].string_values: NULL with a count");
	a[0].type = KP_ATTR_TYPE_INT;
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), 0);
	pack_free(pub);
}

/*
 * The growable-struct rules: a driver built against an older header
 * (smaller struct_size) or a newer one (larger, its extra fields zero)
 * works; a struct_size of 0, below the first release's, misaligned or
 * varying within an array is refused, and so is a newer field that is
 * set, naming the place.
 */
struct dev_next {			/* a later header's kp_device */
	struct kp_device	 d;
	const char		*future_field;
	uint64_t		 future_flags;
};

static void
test_abi(void)
{
	static struct dev_next	 nd[2];
	struct kp_device	 d[2] = {
		{ KP_DEVICE_INIT, .name = "a" },
		{ KP_DEVICE_INIT, .name = "b" },
	};
	struct kp_slice		 s = { KP_SLICE_INIT, .devices = d,
	    .n_devices = 2 };
	struct kp_pool		 p = { KP_POOL_INIT, .name = "p",
	    .slices = &s, .n_slices = 1 };
	struct kp_resources	 r = { KP_RESOURCES_INIT, .pools = &p,
	    .n_pools = 1 };
	Kpipc__Publish		*pub = NULL;
	char			 err[KP_ERROR_SIZE];

	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), 0);
	pack_free(pub);

	d[1].struct_size = 0;
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "pools[0].slices[0].devices[1]: struct_size 0 "
	    "differs");
	d[0].struct_size = 0;
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), KP_EINVAL);
	CHECK_STREQ(err, "pools[0].slices[0].devices: struct_size is 0: "
	    "initialise with its KP_*_INIT macro");
	d[0].struct_size = d[1].struct_size = sizeof(void *);
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "smaller than the first release's");
	s.struct_size = sizeof(s) + 1;
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "pools[0].slices: struct_size");
	CHECK_CONTAINS(err, "is not a multiple of");
	s.struct_size = sizeof(s);

	/* A newer driver: larger structs walked with their stride. */
	nd[0].d = (struct kp_device){ KP_DEVICE_INIT, .name = "a" };
	nd[1].d = (struct kp_device){ KP_DEVICE_INIT, .name = "b" };
	nd[0].d.struct_size = nd[1].d.struct_size = sizeof(nd[0]);
	s.devices = &nd[0].d;
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), 0);
	if (pub != NULL) {
		CHECK_STREQ(pub->pools[0]->slices[0]->devices[1]->name, "b");
		pack_free(pub);
	}
	nd[1].future_flags = 1;
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "pools[0].slices[0].devices[1]: a field this "
	    "library does not know is set");
	CHECK(pub == NULL);

	/* An older driver: a kp_slice that ends before the 1.37 fields is
	 * not possible yet (this is the first release); the stride still
	 * comes from struct_size, so a larger one is fine when zero. */
	CHECK_EQ(validate_resources(&r, err, sizeof(err)), KP_EINVAL);
}

/* Many devices: more than one arena chunk, and a large frame. */
static void
test_large(void)
{
	static struct kp_device		 d[128];
	static struct kp_attribute	 a[128][32];
	static char			 names[128][32][16], dn[128][16];
	static struct kp_slice		 s[8];
	struct kp_pool			 p = { KP_POOL_INIT, .name = "big",
	    .slices = s, .n_slices = 8 };
	struct kp_resources		 r = { KP_RESOURCES_INIT, .pools = &p,
	    .n_pools = 1 };
	Kpipc__Publish			*pub = NULL;
	char				 err[KP_ERROR_SIZE];
	size_t				 i, j;

	for (i = 0; i < 128; i++) {
		snprintf(dn[i], sizeof(dn[i]), "d%zu", i);
		d[i] = (struct kp_device){ KP_DEVICE_INIT, .name = dn[i],
		    .attributes = a[i], .n_attributes = 32 };
		for (j = 0; j < 32; j++) {
			snprintf(names[i][j], sizeof(names[i][j]), "a%zu", j);
			a[i][j] = (struct kp_attribute)KP_ATTR_STRING(
			    names[i][j], "0123456789abcdef0123456789"
			    "abcdef0123456789abcdef0123456789abcdef");
		}
	}
	for (i = 0; i < 8; i++)
		s[i] = (struct kp_slice){ KP_SLICE_INIT, .devices = d + i * 16,
		    .n_devices = 16 };
	CHECK_EQ(validate_resources(&r, err, sizeof(err)), 0);
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), 0);
	if (pub != NULL)
		cmp_tree(pub, &r);
	pack_free(pub);
}

/*
 * split_slices: 300 plain devices, 70 tainted ones and 10 counter sets in
 * three input slices come out as 2 counter-set slices (8 + 2), then
 * 128 + 128 + 44 plain devices (the last slice takes 20 more tainted ones
 * until 64), then 50 tainted: order kept, and the result validates.
 */
static void
test_split(void)
{
	static struct kp_device		 d[370];
	static struct kp_counter_set	 cs[10];
	static char			 names[380][16];
	static const struct kp_counter	 cnt[] = { KP_COUNTER("memory", "1Gi") };
	static const struct kp_taint	 tn[] = { { KP_TAINT_INIT, .key = "k",
	    .effect = KP_TAINT_NO_SCHEDULE } };
	static const char		*pskip[] = { "*" };
	struct kp_slice			 sl[3];
	struct kp_pool			 po;
	struct kp_resources		 r;
	Kpipc__Publish			*pub;
	Kpipc__Pool			*p;
	char				 e[KP_ERROR_SIZE];
	size_t				 i, j, n;

	for (i = 0; i < 370; i++) {
		snprintf(names[i], sizeof(names[i]), "d-%zu", i);
		d[i] = (struct kp_device){ KP_DEVICE_INIT, .name = names[i] };
		if (i >= 300) {
			d[i].taints = tn;
			d[i].n_taints = 1;
		}
	}
	for (i = 0; i < 10; i++) {
		snprintf(names[370 + i], sizeof(names[0]), "set-%zu", i);
		cs[i] = (struct kp_counter_set){ KP_COUNTER_SET_INIT,
		    .name = names[370 + i], .counters = cnt, .n_counters = 1 };
	}
	memset(sl, 0, sizeof(sl));
	for (i = 0; i < 3; i++) {
		sl[i] = (struct kp_slice){ KP_SLICE_INIT,
		    .skip_node_operations = pskip, .n_skip_node_operations = 1 };
	}
	sl[0].devices = d;
	sl[0].n_devices = 200;
	sl[0].shared_counters = cs;
	sl[0].n_shared_counters = 3;
	sl[1].shared_counters = cs + 3;
	sl[1].n_shared_counters = 7;
	sl[2].devices = d + 200;
	sl[2].n_devices = 170;
	po = (struct kp_pool){ KP_POOL_INIT, .name = "gpu", .slices = sl,
	    .n_slices = 3, .split_slices = 1 };
	r = (struct kp_resources){ KP_RESOURCES_INIT, .pools = &po,
	    .n_pools = 1 };
	CHECK_EQ(pack_resources(&r, &pub, e, sizeof(e)), 0);
	if (pub == NULL)
		return;
	p = pub->pools[0];
	CHECK_EQ(p->n_slices, 6);
	if (p->n_slices == 6) {
		static const size_t want_sets[6] = { 8, 2, 0, 0, 0, 0 };
		static const size_t want_devs[6] = { 0, 0, 128, 128, 64, 50 };

		for (i = 0, n = 0; i < 6; i++) {
			CHECK_EQ(p->slices[i]->n_shared_counters, want_sets[i]);
			CHECK_EQ(p->slices[i]->n_devices, want_devs[i]);
			CHECK_EQ(p->slices[i]->n_skip_node_operations, 1);
			for (j = 0; j < p->slices[i]->n_devices; j++, n++)
				CHECK_STREQ(p->slices[i]->devices[j]->name,
				    names[n]);
		}
		CHECK_STREQ(p->slices[1]->shared_counters[1]->name, "set-9");
		CHECK_EQ(n, 370);
	}
	CHECK_EQ(validate_publish(pub, e, sizeof(e)), 0);
	pack_free(pub);
	/* Without the flag the same input is refused (200 devices). */
	po.split_slices = 0;
	CHECK_EQ(validate_resources(&r, e, sizeof(e)), KP_EINVAL);
	CHECK_CONTAINS(e, "pools[0].slices[0]");
	/* Slices that disagree on a slice-wide field. */
	po.split_slices = 1;
	sl[2].n_skip_node_operations = 0;
	CHECK_EQ(pack_resources(&r, &pub, e, sizeof(e)), KP_EINVAL);
	CHECK_STREQ(e, "pools[0].slices[2]: with split_slices every slice "
	    "needs the same perDeviceNodeSelection, partitionTypeAttribute "
	    "and skipNodeOperations");
	/* Nothing at all: one empty slice. */
	po.n_slices = 0;
	CHECK_EQ(pack_resources(&r, &pub, e, sizeof(e)), 0);
	if (pub != NULL) {
		CHECK_EQ(pub->pools[0]->n_slices, 1);
		CHECK_EQ(pub->pools[0]->slices[0]->n_devices, 0);
		pack_free(pub);
	}
}

int
main(void)
{
	test_round_trip();
	test_edges();
	test_abi();
	test_large();
	test_split();
	return (test_done("test_pack"));
}
