/*
 * test_convert.c - publisher/convert.c: ResourceSlice JSON per version
 * (byte-exact), quantity equality, and the comparable form of what a
 * server returns (devices null, v1beta1 basic, canonical quantities, key
 * order).
 */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "publisher/slices.h"
#include "test.h"

static Kpipc__Attribute	a_model = KPIPC__ATTRIBUTE__INIT;
static Kpipc__Attribute	a_index = KPIPC__ATTRIBUTE__INIT;
static Kpipc__Attribute	a_ok = KPIPC__ATTRIBUTE__INIT;
static Kpipc__Attribute	a_ver = KPIPC__ATTRIBUTE__INIT;
static Kpipc__Attribute	*attrs[] = { &a_model, &a_index, &a_ok, &a_ver };
static Kpipc__Capacity	c_mem = KPIPC__CAPACITY__INIT;
static Kpipc__Capacity	*caps[] = { &c_mem };
static Kpipc__Device	dev0 = KPIPC__DEVICE__INIT;
static Kpipc__Device	dev1 = KPIPC__DEVICE__INIT;
static Kpipc__Device	*devs[] = { &dev0, &dev1 };

static void
setup(void)
{
	a_model.name = "model";
	a_model.value_case = KPIPC__ATTRIBUTE__VALUE_STRING_VALUE;
	a_model.string_value = "a100";
	a_index.name = "index";
	a_index.value_case = KPIPC__ATTRIBUTE__VALUE_INT_VALUE;
	a_index.int_value = 0;
	a_ok.name = "example.com/healthy";
	a_ok.value_case = KPIPC__ATTRIBUTE__VALUE_BOOL_VALUE;
	a_ok.bool_value = 0;
	a_ver.name = "driverVersion";
	a_ver.value_case = KPIPC__ATTRIBUTE__VALUE_VERSION_VALUE;
	a_ver.version_value = "1.2.3";
	c_mem.name = "memory";
	c_mem.quantity = "1024Mi";
	dev0.name = "gpu-0";
	dev0.n_attributes = 4;
	dev0.attributes = attrs;
	dev0.n_capacities = 1;
	dev0.capacities = caps;
	dev1.name = "gpu-1";
}

static struct conv_slice
slice(size_t n)
{
	struct conv_slice	cs;

	memset(&cs, 0, sizeof(cs));
	cs.driver = "gpu.example.com";
	cs.node = "node-1";
	cs.pool = "node-1";
	cs.generation = 1;
	cs.count = 1;
	cs.devices = devs;
	cs.n_devices = n;
	return (cs);
}

static char *
dump(json_t *j)
{
	char	*s = json_dumps(j, JSON_COMPACT);

	json_decref(j);
	return (s);
}

static void
check_dump(json_t *j, const char *want)
{
	char	*s = dump(j);

	CHECK_STREQ(s, want);
	free(s);
}

static void
test_quantities(void)
{
	char	c[QTY_CANON_MAX];

	CHECK_EQ(qty_canon("1Gi", c, sizeof(c)), 0);
	CHECK_STREQ(c, "1073741824e0");
	CHECK_EQ(qty_canon("1000m", c, sizeof(c)), 0);
	CHECK_STREQ(c, "1e0");
	CHECK_EQ(qty_canon("0", c, sizeof(c)), 0);
	CHECK_STREQ(c, "0");
	CHECK_EQ(qty_canon("-0.000m", c, sizeof(c)), 0);
	CHECK_STREQ(c, "0");
	CHECK_EQ(qty_canon("-2k", c, sizeof(c)), 0);
	CHECK_STREQ(c, "-2e3");
	CHECK_EQ(qty_canon("1.5", c, sizeof(c)), 0);
	CHECK_STREQ(c, "15e-1");
	CHECK_EQ(qty_canon("0.5Ki", c, sizeof(c)), 0);
	CHECK_STREQ(c, "512e0");
	CHECK_EQ(qty_canon("1.5n", c, sizeof(c)), 0);
	CHECK_STREQ(c, "2e-9");		/* rounded up to nano */

	CHECK(qty_equal("1Gi", "1024Mi"));
	CHECK(qty_equal("1000m", "1"));
	CHECK(qty_equal("1k", "1e3"));
	CHECK(qty_equal("1E3", "1000"));
	CHECK(qty_equal("1Ki", "1024"));
	CHECK(qty_equal("+5", "5"));
	CHECK(qty_equal("1.500", "1500m"));
	CHECK(qty_equal("0.1", "100m"));
	CHECK(qty_equal("80Gi", "81920Mi"));
	CHECK(qty_equal("1M", "1000k"));
	CHECK(qty_equal("1E", "1e18"));	/* exa, not exponent */
	CHECK(!qty_equal("1M", "1Mi"));
	CHECK(!qty_equal("1", "-1"));
	CHECK(!qty_equal("1m", "1"));
	CHECK(!qty_equal("1Gi", "1G"));

	CHECK_EQ(qty_canon("", c, sizeof(c)), KP_EINVAL);
	CHECK_EQ(qty_canon("abc", c, sizeof(c)), KP_EINVAL);
	CHECK_EQ(qty_canon("1Gib", c, sizeof(c)), KP_EINVAL);
	CHECK_EQ(qty_canon("1.2.3", c, sizeof(c)), KP_EINVAL);
	CHECK_EQ(qty_canon("1e", c, sizeof(c)), KP_EINVAL);
	CHECK_EQ(qty_canon("Gi", c, sizeof(c)), KP_EINVAL);
	CHECK_EQ(qty_canon("1Gi", c, 4), KP_EINVAL);
	/* Unparsable ones compare as text. */
	CHECK(qty_equal("x", "x"));
	CHECK(!qty_equal("x", "y"));

	/* Cmp, Add+Cmp and Value(), as apimachinery's Quantity. */
	{
		int	cc = 9;
		int64_t	v = 0;

		CHECK_EQ(qty_cmp("1Gi", "1024Mi", &cc), 0);
		CHECK_EQ(cc, 0);
		CHECK_EQ(qty_cmp("999m", "1", &cc), 0);
		CHECK_EQ(cc, -1);
		CHECK_EQ(qty_cmp("-1", "-2", &cc), 0);
		CHECK_EQ(cc, 1);
		CHECK_EQ(qty_cmp("0", "-0.5", &cc), 0);
		CHECK_EQ(cc, 1);
		CHECK_EQ(qty_cmp("1e3", "1k", &cc), 0);
		CHECK_EQ(cc, 0);
		CHECK_EQ(qty_cmp("x", "1", &cc), KP_EINVAL);
		CHECK_EQ(qty_sum_cmp("0.5", "250m", "750m", &cc), 0);
		CHECK_EQ(cc, 0);
		CHECK_EQ(qty_sum_cmp("1Gi", "79Gi", "80Gi", &cc), 0);
		CHECK_EQ(cc, 0);
		CHECK_EQ(qty_sum_cmp("1Gi", "-2Gi", "-1Gi", &cc), 0);
		CHECK_EQ(cc, 0);
		CHECK_EQ(qty_sum_cmp("-3", "1", "-1", &cc), 0);
		CHECK_EQ(cc, -1);
		CHECK_EQ(qty_sum_cmp("2", "-2", "0", &cc), 0);
		CHECK_EQ(cc, 0);
		CHECK_EQ(qty_sum_cmp("1n", "1E", "1E", &cc), 0);
		CHECK_EQ(cc, 1);
		CHECK_EQ(qty_sum_cmp("1e1000", "1n", "1", &cc), KP_ENOTSUP);
		CHECK_EQ(qty_value("1500m", &v), 0);
		CHECK_EQ(v, 2);
		CHECK_EQ(qty_value("-1500m", &v), 0);
		CHECK_EQ(v, -2);
		CHECK_EQ(qty_value("1Ki", &v), 0);
		CHECK_EQ(v, 1024);
		CHECK_EQ(qty_value("1n", &v), 0);
		CHECK_EQ(v, 1);
		CHECK_EQ(qty_value("0", &v), 0);
		CHECK_EQ(v, 0);
		CHECK_EQ(qty_value("9223372036854775807", &v), 0);
		CHECK_EQ(v, INT64_MAX);
		CHECK_EQ(qty_value("9223372036854775808", &v), KP_ENOTSUP);
		CHECK_EQ(qty_value("-9223372036854775808", &v), 0);
		CHECK_EQ(v, INT64_MIN);
		CHECK_EQ(qty_value("1e20", &v), KP_ENOTSUP);
	}
}

static void
test_shapes(void)
{
	struct conv_slice		cs = slice(2);
	Kpipc__SelectorRequirement	req = KPIPC__SELECTOR_REQUIREMENT__INIT;
	Kpipc__SelectorRequirement	*reqs[] = { &req };
	Kpipc__NodeSelector		sel = KPIPC__NODE_SELECTOR__INIT;
	char				*vals[] = { "a", "b" };
	json_t				*owner;

	check_dump(conv_slice_spec(KUBE_V1BETA1, &cs),
	    "{\"driver\":\"gpu.example.com\",\"pool\":{\"name\":\"node-1\","
	    "\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":"
	    "\"node-1\",\"devices\":[{\"name\":\"gpu-0\",\"basic\":{"
	    "\"attributes\":{\"model\":{\"string\":\"a100\"},\"index\":{"
	    "\"int\":0},\"example.com/healthy\":{\"bool\":false},"
	    "\"driverVersion\":{\"version\":\"1.2.3\"}},\"capacity\":{"
	    "\"memory\":{\"value\":\"1024Mi\"}}}},{\"name\":\"gpu-1\","
	    "\"basic\":{}}]}");
	check_dump(conv_slice_spec(KUBE_V1, &cs),
	    "{\"driver\":\"gpu.example.com\",\"pool\":{\"name\":\"node-1\","
	    "\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":"
	    "\"node-1\",\"devices\":[{\"name\":\"gpu-0\",\"attributes\":{"
	    "\"model\":{\"string\":\"a100\"},\"index\":{\"int\":0},"
	    "\"example.com/healthy\":{\"bool\":false},\"driverVersion\":{"
	    "\"version\":\"1.2.3\"}},\"capacity\":{\"memory\":{\"value\":"
	    "\"1024Mi\"}}},{\"name\":\"gpu-1\"}]}");
	/* v1beta2 has v1's shape. */
	{
		char	*a = dump(conv_slice_spec(KUBE_V1, &cs));
		char	*b = dump(conv_slice_spec(KUBE_V1BETA2, &cs));

		CHECK_STREQ(a, b);
		free(a);
		free(b);
	}

	/* An empty slice: "devices": [], never null. */
	cs = slice(0);
	check_dump(conv_slice_spec(KUBE_V1, &cs),
	    "{\"driver\":\"gpu.example.com\",\"pool\":{\"name\":\"node-1\","
	    "\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":"
	    "\"node-1\",\"devices\":[]}");

	/* A node selector: no nodeName, no allNodes:false. */
	req.key = "kubernetes.io/hostname";
	req.op = "In";
	req.n_values = 2;
	req.values = vals;
	sel.n_match_expressions = 1;
	sel.match_expressions = reqs;
	cs.selector = &sel;
	check_dump(conv_slice_spec(KUBE_V1, &cs),
	    "{\"driver\":\"gpu.example.com\",\"pool\":{\"name\":\"node-1\","
	    "\"generation\":1,\"resourceSliceCount\":1},\"nodeSelector\":{"
	    "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
	    "\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":["
	    "\"a\",\"b\"]}]}]},\"devices\":[]}");

	/* A create: generateName and the Node as controller owner. */
	cs = slice(0);
	owner = conv_owner_ref("node-1", "uid-1");
	check_dump(json_incref(owner),
	    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"node-1\","
	    "\"uid\":\"uid-1\",\"controller\":true}");
	check_dump(conv_slice_object(KUBE_V1BETA1, &cs, owner,
	    "node-1-gpu.example.com-", NULL),
	    "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":"
	    "\"ResourceSlice\",\"metadata\":{\"generateName\":"
	    "\"node-1-gpu.example.com-\",\"ownerReferences\":[{\"apiVersion\":"
	    "\"v1\",\"kind\":\"Node\",\"name\":\"node-1\",\"uid\":\"uid-1\","
	    "\"controller\":true}]},\"spec\":{\"driver\":\"gpu.example.com\","
	    "\"pool\":{\"name\":\"node-1\",\"generation\":1,"
	    "\"resourceSliceCount\":1},\"nodeName\":\"node-1\",\"devices\":"
	    "[]}}");
	json_decref(owner);

	check_dump(conv_delete_options("uid-1", "1234"),
	    "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	    "\"preconditions\":{\"uid\":\"uid-1\",\"resourceVersion\":"
	    "\"1234\"}}");
}

static json_t *
neutral_of(enum kube_version v, const struct conv_slice *cs)
{
	json_t	*spec = conv_slice_spec(v, cs), *n;

	n = conv_neutral_spec(v, spec);
	json_decref(spec);
	return (n);
}

static int
same(enum kube_version v, const char *server, const struct conv_slice *cs)
{
	struct slice_rec	 r;
	json_t			*o, *n;
	char			 err[KP_ERROR_SIZE];
	int			 eq;

	o = json_loads(server, 0, NULL);
	CHECK(o != NULL);
	if (conv_parse_slice(v, o, &r, err, sizeof(err)) != 0) {
		CHECK(!"parse failed");
		json_decref(o);
		return (0);
	}
	n = neutral_of(v, cs);
	eq = json_equal(n, r.neutral);
	json_decref(n);
	json_decref(o);
	conv_rec_free(&r);
	return (eq);
}

static void
test_parse(void)
{
	struct conv_slice	 cs = slice(0);
	struct slice_rec	 r;
	json_t			*o;
	char			 err[KP_ERROR_SIZE];
	const char		*v1beta1_null =
	    "{\"kind\":\"ResourceSlice\",\"apiVersion\":"
	    "\"resource.k8s.io/v1beta1\",\"metadata\":{\"name\":"
	    "\"node-1-gpu.example.com-x7k2p\",\"uid\":\"u1\","
	    "\"resourceVersion\":\"1001\",\"creationTimestamp\":null},"
	    "\"spec\":{\"driver\":\"gpu.example.com\",\"pool\":{\"name\":"
	    "\"node-1\",\"generation\":1,\"resourceSliceCount\":1},"
	    "\"nodeName\":\"node-1\",\"devices\":null}}";
	const char		*v1beta1_basic =
	    "{\"metadata\":{\"name\":\"s\",\"uid\":\"u\","
	    "\"resourceVersion\":\"7\"},\"spec\":{\"driver\":"
	    "\"gpu.example.com\",\"pool\":{\"name\":\"node-1\","
	    "\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":"
	    "\"node-1\",\"devices\":[{\"name\":\"gpu-0\",\"basic\":{"
	    "\"capacity\":{\"memory\":{\"value\":\"1Gi\"}},\"attributes\":{"
	    "\"index\":{\"int\":0},\"model\":{\"string\":\"a100\"},"
	    "\"driverVersion\":{\"version\":\"1.2.3\"},"
	    "\"example.com/healthy\":{\"bool\":false}}}},{\"name\":\"gpu-1\","
	    "\"basic\":{}}]}}";
	const char		*v1_flat =
	    "{\"metadata\":{\"name\":\"s\",\"uid\":\"u\","
	    "\"resourceVersion\":\"7\"},\"spec\":{\"driver\":"
	    "\"gpu.example.com\",\"pool\":{\"name\":\"node-1\","
	    "\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":"
	    "\"node-1\",\"devices\":[{\"name\":\"gpu-0\","
	    "\"capacity\":{\"memory\":{\"value\":\"1Gi\"}},\"attributes\":{"
	    "\"index\":{\"int\":0},\"model\":{\"string\":\"a100\"},"
	    "\"driverVersion\":{\"version\":\"1.2.3\"},"
	    "\"example.com/healthy\":{\"bool\":false}}},{\"name\":\"gpu-1\","
	    "\"bindsToNode\":false,\"attributes\":{}}]}}";

	/* devices: null is an empty list; the record is complete. */
	o = json_loads(v1beta1_null, 0, NULL);
	CHECK_EQ(conv_parse_slice(KUBE_V1BETA1, o, &r, err, sizeof(err)), 0);
	CHECK_STREQ(r.name, "node-1-gpu.example.com-x7k2p");
	CHECK_STREQ(r.uid, "u1");
	CHECK_STREQ(r.rv, "1001");
	CHECK_STREQ(r.pool, "node-1");
	CHECK_EQ(r.generation, 1);
	CHECK_EQ(r.count, 1);
	CHECK_EQ(r.n_dev_names, 0);
	CHECK_EQ(r.node_local, 1);
	conv_rec_free(&r);
	json_decref(o);
	CHECK(same(KUBE_V1BETA1, v1beta1_null, &cs));
	cs.generation = 2;
	CHECK(!same(KUBE_V1BETA1, v1beta1_null, &cs));
	cs.generation = 1;
	cs.count = 2;
	CHECK(!same(KUBE_V1BETA1, v1beta1_null, &cs));

	/* v1beta1 basic; key order and canonical quantities do not count. */
	cs = slice(2);
	CHECK(same(KUBE_V1BETA1, v1beta1_basic, &cs));
	CHECK(same(KUBE_V1, v1_flat, &cs));
	o = json_loads(v1_flat, 0, NULL);
	CHECK_EQ(conv_parse_slice(KUBE_V1, o, &r, err, sizeof(err)), 0);
	CHECK_EQ(r.n_dev_names, 2);
	CHECK_STREQ(r.dev_names[0], "gpu-0");
	CHECK_STREQ(r.dev_names[1], "gpu-1");
	conv_rec_free(&r);
	json_decref(o);

	/* A changed value, type or device order is a difference. */
	c_mem.quantity = "2Gi";
	CHECK(!same(KUBE_V1, v1_flat, &cs));
	c_mem.quantity = "1024Mi";
	a_index.value_case = KPIPC__ATTRIBUTE__VALUE_STRING_VALUE;
	a_index.string_value = "0";
	CHECK(!same(KUBE_V1, v1_flat, &cs));
	a_index.value_case = KPIPC__ATTRIBUTE__VALUE_INT_VALUE;
	a_index.int_value = 0;
	a_ok.bool_value = 1;
	CHECK(!same(KUBE_V1, v1_flat, &cs));
	a_ok.bool_value = 0;
	devs[0] = &dev1;
	devs[1] = &dev0;
	CHECK(!same(KUBE_V1, v1_flat, &cs));
	devs[0] = &dev0;
	devs[1] = &dev1;
	CHECK(same(KUBE_V1, v1_flat, &cs));

	/* Not a slice. */
	o = json_loads("{\"kind\":\"Status\"}", 0, NULL);
	CHECK_EQ(conv_parse_slice(KUBE_V1, o, &r, err, sizeof(err)),
	    KP_EPROTO);
	json_decref(o);

	/* Status messages. */
	{
		char	*m = conv_status_message("{\"kind\":\"Status\","
		    "\"message\":\"the object has been modified\"}", 409);

		CHECK_STREQ(m, "the object has been modified");
		free(m);
		m = conv_status_message("404 page not found\n", 404);
		CHECK_STREQ(m, "HTTP 404: 404 page not found");
		free(m);
	}
}

/*
 * The 1.33-1.37 fields: their JSON per version (v1beta1 under basic), the
 * version check that refuses what a version cannot carry, the adoption of
 * stored taint times and the dropped-fields verdict with its gates.
 */
static void
test_v137(void)
{
	static const int64_t		 ports[] = { 1, 2 };
	static const char		*conds[] = { "example.com/ready" };
	struct kp_attribute		 at[] = {
		KP_ATTR_STRING("model", "a100"),
		KP_ATTR_INTS("ports", ports, 2),
	};
	struct kp_counter		 mem = KP_COUNTER("memory", "40Gi");
	struct kp_counter_set		 set = { KP_COUNTER_SET_INIT,
	    .name = "s", .counters = &mem, .n_counters = 1 };
	struct kp_counter_consumption	 use = { KP_COUNTER_CONSUMPTION_INIT,
	    .counter_set = "s", .counters = &mem, .n_counters = 1 };
	struct kp_taint			 tn = { KP_TAINT_INIT, .key = "k",
	    .effect = KP_TAINT_NO_EXECUTE };
	struct kp_request_policy	 rp = { KP_REQUEST_POLICY_INIT,
	    .default_value = "1Gi", .range_min = "1Gi", .range_step = "1Gi" };
	struct kp_capacity		 cap = { KP_CAPACITY_INIT,
	    .name = "memory", .quantity = "40Gi", .request_policy = &rp };
	struct kp_device		 d[] = {
		{ KP_DEVICE_INIT, .name = "p0", .attributes = at,
		    .n_attributes = 1, .consumes_counters = &use,
		    .n_consumes_counters = 1, .taints = &tn, .n_taints = 1,
		    .binds_to_node = 1, .binding_conditions = conds,
		    .n_binding_conditions = 1,
		    .allow_multiple_allocations = 1, .capacities = &cap,
		    .n_capacities = 1 },
	};
	struct kp_slice			 sl[] = {
		{ KP_SLICE_INIT, .shared_counters = &set,
		    .n_shared_counters = 1 },
		{ KP_SLICE_INIT, .devices = d, .n_devices = 1 },
	};
	struct kp_pool			 pl = { KP_POOL_INIT, .name = "node-1",
	    .slices = sl, .n_slices = 2 };
	struct kp_resources		 r = { KP_RESOURCES_INIT, .pools = &pl,
	    .n_pools = 1 };
	Kpipc__Publish			*pub = NULL;
	struct conv_slice		 cs = slice(0);
	json_t				*spec, *want, *got, *stored;
	char				 err[KP_ERROR_SIZE], gates[160];

	CHECK_EQ(validate_resources(&r, err, sizeof(err)), 0);
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), 0);
	if (pub == NULL)
		return;
	cs.slice = pub->pools[0]->slices[1];
	cs.devices = cs.slice->devices;
	cs.n_devices = cs.slice->n_devices;
	check_dump(conv_slice_spec(KUBE_V1, &cs),
	    "{\"driver\":\"gpu.example.com\",\"pool\":{\"name\":\"node-1\","
	    "\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":"
	    "\"node-1\",\"devices\":[{\"name\":\"p0\",\"attributes\":{"
	    "\"model\":{\"string\":\"a100\"}},\"capacity\":{\"memory\":{"
	    "\"value\":\"40Gi\",\"requestPolicy\":{\"default\":\"1Gi\","
	    "\"validRange\":{\"min\":\"1Gi\",\"step\":\"1Gi\"}}}},"
	    "\"consumesCounters\":[{\"counterSet\":\"s\",\"counters\":{"
	    "\"memory\":{\"value\":\"40Gi\"}}}],\"taints\":[{\"key\":\"k\","
	    "\"effect\":\"NoExecute\"}],\"bindsToNode\":true,"
	    "\"bindingConditions\":[\"example.com/ready\"],"
	    "\"allowMultipleAllocations\":true}]}");
	spec = conv_slice_spec(KUBE_V1BETA1, &cs);
	CHECK(json_object_get(json_object_get(json_array_get(
	    json_object_get(spec, "devices"), 0), "basic"), "taints") != NULL);
	json_decref(spec);
	cs.slice = pub->pools[0]->slices[0];
	cs.devices = NULL;
	cs.n_devices = 0;
	check_dump(conv_slice_spec(KUBE_V1BETA2, &cs),
	    "{\"driver\":\"gpu.example.com\",\"pool\":{\"name\":\"node-1\","
	    "\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":"
	    "\"node-1\",\"devices\":[],\"sharedCounters\":[{\"name\":\"s\","
	    "\"counters\":{\"memory\":{\"value\":\"40Gi\"}}}]}");

	/* Every version carries this pool; a list attribute needs v1. */
	CHECK_EQ(conv_check_version(KUBE_V1BETA1, pub->pools[0], err,
	    sizeof(err)), 0);
	pack_free(pub);
	d[0].n_attributes = 2;
	CHECK_EQ(pack_resources(&r, &pub, err, sizeof(err)), 0);
	if (pub == NULL)
		return;
	CHECK_EQ(conv_check_version(KUBE_V1, pub->pools[0], err,
	    sizeof(err)), 0);
	CHECK_EQ(conv_check_version(KUBE_V1BETA2, pub->pools[0], err,
	    sizeof(err)), KP_ENOTSUP);
	CHECK_STREQ(err, "pool node-1: slices[1].devices[0].attributes (list "
	    "types): not in resource.k8s.io/v1beta2, the newest version the "
	    "API server serves (it needs resource.k8s.io/v1)");

	/* Dropped fields: want has taints and binding conditions, got not. */
	cs.slice = pub->pools[0]->slices[1];
	cs.devices = cs.slice->devices;
	cs.n_devices = cs.slice->n_devices;
	spec = conv_slice_spec(KUBE_V1, &cs);
	want = conv_neutral_spec(KUBE_V1, spec);
	stored = json_deep_copy(spec);
	json_object_del(json_array_get(json_object_get(stored, "devices"), 0),
	    "taints");
	json_object_del(json_array_get(json_object_get(stored, "devices"), 0),
	    "bindsToNode");
	json_object_del(json_object_get(json_array_get(json_object_get(stored,
	    "devices"), 0), "attributes"), "ports");
	got = conv_neutral_spec(KUBE_V1, stored);
	CHECK_EQ(conv_dropped_fields(want, got, gates, sizeof(gates)), 1);
	CHECK_STREQ(gates, "DRAListTypeAttributes, DRADeviceTaints, "
	    "DRADeviceBindingConditions");
	CHECK_EQ(conv_dropped_fields(want, want, gates, sizeof(gates)), 0);
	json_decref(got);
	json_decref(stored);

	/* The server set timeAdded: a taint without one adopts it, so the
	 * next comparison is equal and nothing is rewritten. */
	stored = json_deep_copy(spec);
	json_object_set_new(json_array_get(json_object_get(json_array_get(
	    json_object_get(stored, "devices"), 0), "taints"), 0),
	    "timeAdded", json_string("2026-01-01T00:00:00Z"));
	got = conv_neutral_spec(KUBE_V1, stored);
	CHECK_EQ(conv_dropped_fields(want, got, gates, sizeof(gates)), 0);
	CHECK(!json_equal(want, got));
	conv_adopt_taint_times(KUBE_V1, spec, got);
	json_decref(want);
	want = conv_neutral_spec(KUBE_V1, spec);
	CHECK(json_equal(want, got));
	json_decref(got);
	json_decref(stored);
	json_decref(want);
	json_decref(spec);
	pack_free(pub);
}

/*
 * timeAdded is kept for every unchanged taint (1.38, kubernetes PR
 * #141107): each device, each taint, in any order of the stored slice;
 * a changed taint gets none, one the driver dated keeps its own.
 */
static const char taint_spec[] =
    "{\"devices\": ["
    "{\"name\": \"d0\", %s\"taints\": ["
    "{\"key\": \"k1\", \"value\": \"v1\", \"effect\": \"NoSchedule\"},"
    "{\"key\": \"k2\", \"value\": \"v2\", \"effect\": \"NoExecute\"},"
    "{\"key\": \"k3\", \"effect\": \"NoSchedule\"},"
    "{\"key\": \"k4\", \"value\": \"v4\", \"effect\": \"NoSchedule\","
    " \"timeAdded\": \"2020-01-01T00:00:00Z\"}]%s},"
    "{\"name\": \"d1\", %s\"taints\": ["
    "{\"key\": \"k1\", \"value\": \"v1\", \"effect\": \"NoSchedule\"},"
    "{\"key\": \"k5\", \"value\": \"new\", \"effect\": \"NoSchedule\"}]%s}"
    "]}";

static const char taint_stored[] =
    "{\"devices\": ["
    "{\"name\": \"d1\", %s\"taints\": ["
    "{\"key\": \"k1\", \"value\": \"v1\", \"effect\": \"NoSchedule\","
    " \"timeAdded\": \"2026-01-01T00:00:11Z\"},"
    "{\"key\": \"k5\", \"value\": \"old\", \"effect\": \"NoSchedule\","
    " \"timeAdded\": \"2026-01-01T00:00:15Z\"}]%s},"
    "{\"name\": \"d0\", %s\"taints\": ["
    "{\"key\": \"k3\", \"effect\": \"NoSchedule\","
    " \"timeAdded\": \"2026-01-01T00:00:03Z\"},"
    "{\"key\": \"k1\", \"value\": \"v1\", \"effect\": \"NoSchedule\","
    " \"timeAdded\": \"2026-01-01T00:00:01Z\"},"
    "{\"key\": \"k2\", \"value\": \"v2\", \"effect\": \"NoExecute\","
    " \"timeAdded\": \"2026-01-01T00:00:02Z\"},"
    "{\"key\": \"k4\", \"value\": \"v4\", \"effect\": \"NoSchedule\","
    " \"timeAdded\": \"2026-01-01T00:00:09Z\"}]%s}"
    "]}";

static const char *
taint_time(const json_t *spec, int beta1, size_t dev, size_t i)
{
	const json_t	*d = json_array_get(json_object_get(spec, "devices"),
			    dev);

	if (beta1)
		d = json_object_get(d, "basic");
	return (json_string_value(json_object_get(json_array_get(
	    json_object_get(d, "taints"), i), "timeAdded")));
}

static void
test_taint_times(void)
{
	static const enum kube_version	 vs[] = { KUBE_V1, KUBE_V1BETA2,
					    KUBE_V1BETA1 };
	char				 buf[2048];
	json_t				*spec, *stored, *neutral;
	const char			*o, *c;
	size_t				 k;

	for (k = 0; k < 3; k++) {
		int beta1 = vs[k] == KUBE_V1BETA1;

		o = beta1 ? "\"basic\": {" : "";
		c = beta1 ? "}" : "";
		snprintf(buf, sizeof(buf), taint_spec, o, c, o, c);
		spec = json_loads(buf, 0, NULL);
		snprintf(buf, sizeof(buf), taint_stored, o, c, o, c);
		stored = json_loads(buf, 0, NULL);
		CHECK(spec != NULL && stored != NULL);
		neutral = conv_neutral_spec(vs[k], stored);
		CHECK(neutral != NULL);
		conv_adopt_taint_times(vs[k], spec, neutral);
		CHECK_STREQ(taint_time(spec, beta1, 0, 0),
		    "2026-01-01T00:00:01Z");
		CHECK_STREQ(taint_time(spec, beta1, 0, 1),
		    "2026-01-01T00:00:02Z");
		CHECK_STREQ(taint_time(spec, beta1, 0, 2),
		    "2026-01-01T00:00:03Z");
		CHECK_STREQ(taint_time(spec, beta1, 0, 3),
		    "2020-01-01T00:00:00Z");
		CHECK_STREQ(taint_time(spec, beta1, 1, 0),
		    "2026-01-01T00:00:11Z");
		CHECK(taint_time(spec, beta1, 1, 1) == NULL);
		json_decref(neutral);
		json_decref(stored);
		json_decref(spec);
	}
}

int
main(void)
{
	setup();
	test_quantities();
	test_shapes();
	test_parse();
	test_v137();
	test_taint_times();
	return (test_done("test_convert"));
}
