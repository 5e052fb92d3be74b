/*
 * test_convert.c - publisher/convert.c: ResourceSlice JSON per version
 * (byte-exact), quantity equality, and the comparable form of what a
 * server returns (devices null, v1beta1 basic, canonical quantities, key
 * order).
 */
#include <stdlib.h>
#include <string.h>

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
	char	c[SL_QTY_MAX];

	CHECK_EQ(conv_quantity_canon("1Gi", c, sizeof(c)), 0);
	CHECK_STREQ(c, "1073741824e0");
	CHECK_EQ(conv_quantity_canon("1000m", c, sizeof(c)), 0);
	CHECK_STREQ(c, "1e0");
	CHECK_EQ(conv_quantity_canon("0", c, sizeof(c)), 0);
	CHECK_STREQ(c, "0");
	CHECK_EQ(conv_quantity_canon("-0.000m", c, sizeof(c)), 0);
	CHECK_STREQ(c, "0");
	CHECK_EQ(conv_quantity_canon("-2k", c, sizeof(c)), 0);
	CHECK_STREQ(c, "-2e3");
	CHECK_EQ(conv_quantity_canon("1.5", c, sizeof(c)), 0);
	CHECK_STREQ(c, "15e-1");
	CHECK_EQ(conv_quantity_canon("0.5Ki", c, sizeof(c)), 0);
	CHECK_STREQ(c, "512e0");
	CHECK_EQ(conv_quantity_canon("1.5n", c, sizeof(c)), 0);
	CHECK_STREQ(c, "2e-9");		/* rounded up to nano */

	CHECK(conv_quantity_equal("1Gi", "1024Mi"));
	CHECK(conv_quantity_equal("1000m", "1"));
	CHECK(conv_quantity_equal("1k", "1e3"));
	CHECK(conv_quantity_equal("1E3", "1000"));
	CHECK(conv_quantity_equal("1Ki", "1024"));
	CHECK(conv_quantity_equal("+5", "5"));
	CHECK(conv_quantity_equal("1.500", "1500m"));
	CHECK(conv_quantity_equal("0.1", "100m"));
	CHECK(conv_quantity_equal("80Gi", "81920Mi"));
	CHECK(conv_quantity_equal("1M", "1000k"));
	CHECK(conv_quantity_equal("1E", "1e18"));	/* exa, not exponent */
	CHECK(!conv_quantity_equal("1M", "1Mi"));
	CHECK(!conv_quantity_equal("1", "-1"));
	CHECK(!conv_quantity_equal("1m", "1"));
	CHECK(!conv_quantity_equal("1Gi", "1G"));

	CHECK_EQ(conv_quantity_canon("", c, sizeof(c)), KP_EINVAL);
	CHECK_EQ(conv_quantity_canon("abc", c, sizeof(c)), KP_EINVAL);
	CHECK_EQ(conv_quantity_canon("1Gib", c, sizeof(c)), KP_EINVAL);
	CHECK_EQ(conv_quantity_canon("1.2.3", c, sizeof(c)), KP_EINVAL);
	CHECK_EQ(conv_quantity_canon("1e", c, sizeof(c)), KP_EINVAL);
	CHECK_EQ(conv_quantity_canon("Gi", c, sizeof(c)), KP_EINVAL);
	CHECK_EQ(conv_quantity_canon("1Gi", c, 4), KP_EINVAL);
	/* Unparsable ones compare as text. */
	CHECK(conv_quantity_equal("x", "x"));
	CHECK(!conv_quantity_equal("x", "y"));
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

int
main(void)
{
	setup();
	test_quantities();
	test_shapes();
	test_parse();
	return (test_done("test_convert"));
}
