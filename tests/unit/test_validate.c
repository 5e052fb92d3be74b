/*
 * test_validate.c - validate_resources(), validate_quantity() and
 * validate_semver(): a good and a bad value for every rule, at the
 * boundaries, and the message naming the place and the rule.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "api/api.h"
#include "publisher/publisher.h"

static struct kp_attribute	 attrs[40];
static struct kp_capacity	 caps[40];
static struct kp_device		 devs[140];
static struct kp_slice		 slices[3];
static struct kp_pool		 pools[3];
static struct kp_resources	 res;
static struct kp_node_selector	 sel;
static struct kp_node_selector_requirement exprs[2], fields[2];
static const char		*vals[3];
static char			 dnames[140][16], anames[40][16];
static char			 err[KP_ERROR_SIZE];

/*
 * pools[0] "gpu": slices[0] with dev-0 (attributes model, driverVersion,
 * count, ecc; capacity memory) and dev-1, slices[1] with dev-2.
 * pools[1] "gpu/b": one slice with dev-0 again (another pool).
 */
static void
reset(void)
{
	size_t	 i;

	memset(&sel, 0, sizeof(sel));
	sel.struct_size = sizeof(sel);
	for (i = 0; i < 140; i++) {
		snprintf(dnames[i], sizeof(dnames[i]), "dev-%zu", i);
		devs[i] = (struct kp_device){ KP_DEVICE_INIT,
		    .name = dnames[i] };
	}
	for (i = 0; i < 40; i++) {
		snprintf(anames[i], sizeof(anames[i]), "a%zu", i);
		attrs[i] = (struct kp_attribute)KP_ATTR_INT(anames[i], 0);
		caps[i] = (struct kp_capacity)KP_CAPACITY(anames[i], "1");
	}
	for (i = 0; i < 2; i++)
		exprs[i] = fields[i] = (struct kp_node_selector_requirement){
		    KP_NODE_SELECTOR_REQUIREMENT_INIT };
	attrs[0] = (struct kp_attribute)KP_ATTR_STRING("example.com/model",
	    "A100");
	attrs[1] = (struct kp_attribute)KP_ATTR_VERSION("driverVersion",
	    "1.2.3");
	attrs[2] = (struct kp_attribute)KP_ATTR_INT("count", 4);
	attrs[3] = (struct kp_attribute)KP_ATTR_BOOL("ecc", 1);
	caps[0] = (struct kp_capacity)KP_CAPACITY("memory", "80Gi");
	devs[0].attributes = attrs;
	devs[0].n_attributes = 4;
	devs[0].capacities = caps;
	devs[0].n_capacities = 1;
	slices[0] = (struct kp_slice){ KP_SLICE_INIT, .devices = devs,
	    .n_devices = 2 };
	slices[1] = (struct kp_slice){ KP_SLICE_INIT, .devices = devs + 2,
	    .n_devices = 1 };
	slices[2] = (struct kp_slice){ KP_SLICE_INIT, .devices = devs,
	    .n_devices = 1 };
	memset(pools, 0, sizeof(pools));
	pools[0] = (struct kp_pool){ KP_POOL_INIT, .name = "gpu",
	    .slices = slices, .n_slices = 2 };
	pools[1] = (struct kp_pool){ KP_POOL_INIT, .name = "gpu/b",
	    .generation = 3, .slices = slices + 2, .n_slices = 1 };
	res.struct_size = sizeof(res);
	res.pools = pools;
	res.n_pools = 2;
	vals[0] = "a";
	vals[1] = "b";
	vals[2] = NULL;
	exprs[0] = (struct kp_node_selector_requirement){
	    KP_NODE_SELECTOR_REQUIREMENT_INIT, .key = "example.com/rack",
	    .op = "In", .values = vals, .n_values = 2 };
	fields[0] = (struct kp_node_selector_requirement){
	    KP_NODE_SELECTOR_REQUIREMENT_INIT, .key = "metadata.name",
	    .op = "In", .values = vals, .n_values = 1 };
}

#define GOOD() do {							\
	int _r = validate_resources(&res, err, sizeof(err));		\
	if (_r != 0)							\
		fprintf(stderr, "%d: unexpected error: %s\n", __LINE__, err); \
	CHECK_EQ(_r, 0);						\
} while (0)

#define BAD(where, rule) do {						\
	int _r = validate_resources(&res, err, sizeof(err));		\
	CHECK_EQ(_r, KP_EINVAL);					\
	CHECK_CONTAINS(err, where);					\
	CHECK_CONTAINS(err, rule);					\
	CHECK(strlen(err) < KP_ERROR_SIZE - 22);			\
} while (0)

#define D0	"pools[0].slices[0].devices[0]."

static char *
repeat(char c, size_t n, const char *tail)
{
	char	*s = malloc(n + strlen(tail) + 1);

	memset(s, c, n);
	strcpy(s + n, tail);	/* test code: sizes computed above */
	return (s);
}

static void
test_pools(void)
{
	static struct kp_pool	 many[4097];
	static char		 mnames[4097][8];
	char			*s;
	size_t			 i;

	reset();
	GOOD();
	CHECK_EQ(validate_resources(NULL, err, sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "resources: NULL");
	res.pools = NULL;
	BAD("pools",
	    "NULL with a count of 2");
	reset();
	res.n_pools = 0;
	GOOD();
	for (i = 0; i < 4097; i++) {
		snprintf(mnames[i], sizeof(mnames[i]), "p%zu", i);
		many[i] = (struct kp_pool){ KP_POOL_INIT,
		    .name = mnames[i] };
	}
	res.pools = many;
	res.n_pools = 4096;
	GOOD();
	res.n_pools = 4097;
	BAD("4097 pools", "at most 4096");

	reset();
	pools[0].name = NULL;
	BAD("pools[0].name",
	    "required (NULL)");
	pools[0].name = "";
	BAD("pools[0].name",
	    "required");
	s = repeat('a', 253, "");
	pools[0].name = s;
	GOOD();
	free(s);
	s = repeat('a', 254, "");
	pools[0].name = s;
	BAD("pools[0].name",
	    "longer than 253 characters");
	free(s);
	s = repeat('a', 200, ".b/c.d/e");
	pools[0].name = s;
	GOOD();
	free(s);
	pools[0].name = "a//b";
	BAD("pools[0].name: \"a//b\" part 1", "is empty");
	pools[0].name = "/a";
	BAD("pools[0].name: \"/a\" part 0", "is empty");
	pools[0].name = "a/";
	BAD("pools[0].name: \"a/\" part 1", "is empty");
	pools[0].name = "Gpu";
	BAD("pools[0].name: \"Gpu\" part 0", "DNS subdomain");
	pools[0].name = "gpu_1";
	BAD("pools[0].name: \"gpu_1\" part 0", "DNS subdomain");
	pools[0].name = "gpu.-a";
	BAD("pools[0].name: \"gpu.-a\" part 0", "DNS subdomain");
	pools[0].name = "gpu/b";
	BAD("pools[1].name",
	    "\"gpu/b\" duplicate pool name");

	reset();
	pools[0].generation = -1;
	BAD("pools[0].generation",
	    "must be 0 or more");
	pools[0].generation = INT64_MAX;
	GOOD();

	reset();
	pools[0].n_slices = 0;		/* no ResourceSlice at all */
	GOOD();
	pools[0].slices = NULL;
	GOOD();
	pools[0].n_slices = 1;
	BAD("pools[0].slices",
	    "NULL with a count of 1");
	reset();
	slices[1].n_devices = 0;	/* an empty slice */
	GOOD();
	slices[1].devices = NULL;
	GOOD();
	slices[1].n_devices = 1;
	BAD("pools[0].slices[1].devices",
	    "NULL with a count of 1");
}

static void
test_selector(void)
{
	reset();
	pools[0].node_selector = &sel;
	GOOD();		/* an empty term: the server takes it */
	sel.match_expressions = exprs;
	sel.n_match_expressions = 1;
	sel.match_fields = fields;
	sel.n_match_fields = 1;
	GOOD();
	sel.match_expressions = NULL;
	BAD("pools[0].nodeSelector.matchExpressions",
	    "NULL with a count of 1");
	sel.match_expressions = exprs;
	sel.match_fields = NULL;
	BAD("pools[0].nodeSelector.matchFields",
	    "NULL with a count of 1");
	sel.match_fields = fields;

	exprs[0].op = "NotIn";
	GOOD();
	exprs[0].n_values = 0;
	BAD("pools[0].nodeSelector.matchExpressions[0]",
	    "values: required for In and NotIn");
	exprs[0].op = "In";
	BAD("pools[0].nodeSelector.matchExpressions[0]",
	    "values: required for In and NotIn");
	exprs[0].op = "Exists";
	GOOD();
	exprs[0].op = "DoesNotExist";
	GOOD();
	exprs[0].n_values = 1;
	BAD("pools[0].nodeSelector.matchExpressions[0]",
	    "values: not allowed for Exists and DoesNotExist");
	exprs[0].op = "Exists";
	BAD("pools[0].nodeSelector.matchExpressions[0]",
	    "values: not allowed for Exists and DoesNotExist");
	exprs[0].op = "Gt";
	vals[0] = "5";
	GOOD();
	vals[0] = "five";	/* not an integer: not checked upstream */
	GOOD();
	exprs[0].op = "Lt";
	GOOD();
	exprs[0].n_values = 2;
	BAD("pools[0].nodeSelector.matchExpressions[0]",
	    "values: exactly one needed for Gt and Lt, 2 given");
	exprs[0].n_values = 0;
	BAD("pools[0].nodeSelector.matchExpressions[0]",
	    "values: exactly one needed for Gt and Lt, 0 given");
	exprs[0].op = "in";
	BAD("pools[0].nodeSelector.matchExpressions[0]",
	    "operator \"in\" is not one of In, NotIn, Exists, DoesNotExist,");
	exprs[0].op = NULL;
	BAD("pools[0].nodeSelector.matchExpressions[0].operator",
	    "required (NULL)");

	reset();
	pools[0].node_selector = &sel;
	sel.match_expressions = exprs;
	sel.n_match_expressions = 1;
	exprs[0].key = NULL;
	BAD("pools[0].nodeSelector.matchExpressions[0].key",
	    "required (NULL)");
	exprs[0].key = "rack";
	GOOD();
	exprs[0].key = "a/b/c";
	BAD("key \"a/b/c\"", "one '/' at most");
	exprs[0].key = "/rack";
	BAD("key \"/rack\"", "prefix must not be empty");
	exprs[0].key = "Example.com/rack";
	BAD("key \"Example.com/rack\"", "the prefix must be a DNS subdomain");
	exprs[0].key = "example.com/";
	BAD("key \"example.com/\"", "the name must not be empty");
	exprs[0].key = "example.com/Rack_1.x";
	GOOD();
	exprs[0].key = "example.com/-rack";
	BAD("key \"example.com/-rack\"", "the name must be alphanumerics");
	exprs[0].key = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaa";
	GOOD();
	exprs[0].key = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaa";
	BAD("pools[0].nodeSelector.matchExpressions[0]",
	    "key \"aaaaaaaaaaaaaaaaaaaaaaaa...\": the name must be no more ");
	exprs[0].key = "rack";
	vals[1] = "";
	GOOD();			/* an empty label value is valid */
	vals[1] = "a b";
	BAD("pools[0].nodeSelector.matchExpressions[0]",
	    "values[1] \"a b\": must be empty or must be alphanumerics, '-'");
	vals[1] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaa";
	GOOD();
	vals[1] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaa";
	BAD("values[1]", "no more than 63 characters");
	vals[1] = NULL;
	BAD("pools[0].nodeSelector.matchExpressions[0].values[1]",
	    "NULL");
	exprs[0].values = NULL;
	BAD("pools[0].nodeSelector.matchExpressions[0].values",
	    "NULL with a count of 2");

	reset();
	pools[0].node_selector = &sel;
	sel.match_fields = fields;
	sel.n_match_fields = 1;
	vals[0] = "node-1.example.com";
	GOOD();
	fields[0].op = "NotIn";
	GOOD();
	fields[0].op = "Exists";
	BAD("pools[0].nodeSelector.matchFields[0]",
	    "operator \"Exists\" is not one of In, NotIn (match fields)");
	fields[0].op = "In";
	fields[0].n_values = 2;
	BAD("pools[0].nodeSelector.matchFields[0]",
	    "values: exactly one needed for a match field, 2 given");
	fields[0].n_values = 1;
	fields[0].key = "metadata.labels";
	BAD("pools[0].nodeSelector.matchFields[0]",
	    "key \"metadata.labels\": only \"metadata.name\" is a node field");
	fields[0].key = "metadata.name";
	vals[0] = "Node_1";
	BAD("pools[0].nodeSelector.matchFields[0]",
	    "values[0] \"Node_1\": a node name must be a DNS subdomain (low");
}

static void
test_devices(void)
{
	char	*s;
	size_t	 i;

	reset();
	slices[1].devices = devs + 130;
	slices[0].n_devices = 128;
	GOOD();
	slices[0].n_devices = 129;
	BAD("pools[0].slices[0]",
	    "129 devices, at most 128 allowed");
	reset();
	devs[1].name = NULL;
	BAD("pools[0].slices[0].devices[1].name",
	    "required (NULL)");
	devs[1].name = "";
	BAD("pools[0].slices[0].devices[1].name",
	    "required");
	devs[1].name = "Dev-1";
	BAD("pools[0].slices[0].devices[1].name",
	    "\"Dev-1\" must be a DNS label (lower case alphanumerics and '-");
	devs[1].name = "dev.1";
	BAD("pools[0].slices[0].devices[1].name",
	    "\"dev.1\" must be a DNS label (lower case alphanumerics and '-");
	devs[1].name = "-dev";
	BAD("pools[0].slices[0].devices[1].name",
	    "\"-dev\" must be a DNS label (lower case alphanumerics and '-'");
	s = repeat('d', 63, "");
	devs[1].name = s;
	GOOD();
	free(s);
	s = repeat('d', 64, "");
	devs[1].name = s;
	BAD("pools[0].slices[0].devices[1].name",
	    "\"dddddddddddddddddddddddd...\" must be no more than 63 charac");
	free(s);
	devs[1].name = "dev-0";
	BAD("pools[0].slices[0].devices[1].name",
	    "duplicate device in the pool (also slices[0].devices[0])");
	devs[1].name = "dev-1";
	devs[2].name = "dev-0";
	BAD("pools[0].slices[1].devices[0].name",
	    "duplicate device in the pool (also slices[0].devices[0])");
	devs[2].name = "dev-2";
	GOOD();			/* dev-0 again in pools[1]: fine */

	reset();
	devs[0].attributes = NULL;
	BAD("pools[0].slices[0].devices[0].attributes",
	    "NULL with a count of 4");
	reset();
	devs[0].capacities = NULL;
	BAD("pools[0].slices[0].devices[0].capacity",
	    "NULL with a count of 1");
	reset();
	for (i = 4; i < 40; i++)
		attrs[i].type = KP_ATTR_TYPE_INT;
	devs[0].n_attributes = 20;
	devs[0].n_capacities = 12;
	GOOD();
	devs[0].n_capacities = 13;
	BAD("pools[0].slices[0].devices[0]",
	    "20 attributes and 13 capacities: at most 32 together allowed");
	devs[0].n_capacities = 0;
	devs[0].n_attributes = 32;
	GOOD();
	devs[0].n_attributes = 33;
	BAD("pools[0].slices[0].devices[0]",
	    "33 attributes and 0 capacities: at most 32 together allowed");
}

static void
test_names(void)
{
	static const char *good[] = { "model", "_x", "X_1",
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "example.com/model",
	    "Example.COM/model", "gpu.example.com/driver_Version",
	    "\xc4\xb0nvidia.com/x",
	    "\xe2\x84\xaa.com/x",
	    ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaa/x") };
	static const struct { const char *name, *why; } bad[] = {
	    { "", "a name is required" },
	    { "1x", "the identifier must be a C identifier" },
	    { "a-b", "the identifier must be a C identifier" },
	    { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"the identifier must be no more than 32 bytes" },
	    { "/model", "the domain must not be empty" },
	    { "example.com/", "the name must not be empty" },
	    { "exa_mple.com/model", "the domain must be a DNS subdomain" },
	    { "example.com./model", "the domain must be a DNS subdomain" },
	    { "\xc3\xa9.com/x", "the domain must be a DNS subdomain" },
	    { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"/x", "the domain must be no more than 63 bytes" },
	    { "example.com/1x", "the identifier must be a C identifier" },
	    { "example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"the identifier must be no more than 32 bytes" },
	    { "a/b/c", "must have at most one '/' (domain/identifier, 1.38)" },
	    { "/a/b", "must have at most one '/'" },
	    { "a//b", "must have at most one '/'" },
	    { "a//", "must have at most one '/'" },
	    { "//", "must have at most one '/'" },
	    { "x.com/y/z!", "must have at most one '/'" },
	    { "a/b/\xff", "must have at most one '/'" } };
	size_t	 i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		reset();
		attrs[0].name = "m0";
		attrs[3].name = good[i];
		GOOD();
		reset();
		caps[0].name = good[i];
		GOOD();
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		reset();
		attrs[3].name = bad[i].name;
		BAD(D0 "attributes[", bad[i].why);
		reset();
		caps[0].name = bad[i].name;
		BAD(D0 "capacity[", bad[i].why);
	}
	reset();
	attrs[3].name = NULL;
	BAD("pools[0].slices[0].devices[0].attributes[3].name",
	    "required (NULL)");
	reset();
	caps[0].name = NULL;
	BAD("pools[0].slices[0].devices[0].capacity[0].name",
	    "required (NULL)");

	reset();
	attrs[3].name = "count";
	BAD("pools[0].slices[0].devices[0].attributes[\"count\"]",
	    "duplicate name (also attributes[2])");
	reset();
	caps[1] = caps[0];
	devs[0].n_capacities = 2;
	BAD("pools[0].slices[0].devices[0].capacity[\"memory\"]",
	    "duplicate name (also capacity[0])");
	reset();
	caps[0].name = "count";		/* one name in both maps: fine */
	GOOD();
}

static void
test_attributes(void)
{
	char	*s;

	reset();
	attrs[2].int_value = INT64_MIN;
	attrs[3].bool_value = 0;
	GOOD();
	attrs[2].type = (enum kp_attribute_type)9;
	BAD("pools[0].slices[0].devices[0].attributes[2].type",
	    "9 is not a kp_attribute_type");
	reset();
	attrs[0].string_value = NULL;
	BAD("pools[0].slices[0].devices[0].attributes[0].string_value",
	    "required (NULL)");
	attrs[0].string_value = "";
	GOOD();
	s = repeat('x', 64, "");
	attrs[0].string_value = s;
	GOOD();
	free(s);
	s = repeat('x', 65, "");
	attrs[0].string_value = s;
	BAD("pools[0].slices[0].devices[0].attributes[\"example.com/model\"].string",
	    "string is 65 bytes, at most 64 allowed");
	free(s);
	attrs[0].string_value = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9";	/* 32 x U+00E9: 64 bytes */
	GOOD();
	attrs[0].string_value = "ok\xff";
	BAD("pools[0].slices[0].devices[0].attributes[\"example.com/model\"].string",
	    "string is not UTF-8");
	attrs[0].string_value = "\xed\xa0\x80";		/* a surrogate */
	BAD(D0 "attributes[", "not UTF-8");
	attrs[0].string_value = "\xc0\xaf";		/* overlong '/' */
	BAD(D0 "attributes[", "not UTF-8");

	reset();
	attrs[1].string_value = NULL;
	BAD("pools[0].slices[0].devices[0].attributes[1].string_value",
	    "required (NULL)");
	attrs[1].string_value = "v1.0.0";
	BAD("pools[0].slices[0].devices[0].attributes[\"driverVersion\"].version",
	    "version \"v1.0.0\" is not semver 2.0.0 (MAJOR.MINOR.PATCH[-pre");
	s = repeat('a', 58, "");
	memcpy(s, "1.0.0-", 6);
	attrs[1].string_value = s;	/* 58 bytes */
	GOOD();
	free(s);
	s = repeat('a', 64, "");
	memcpy(s, "1.0.0-", 6);
	attrs[1].string_value = s;
	GOOD();
	free(s);
	s = repeat('a', 65, "");
	memcpy(s, "1.0.0-", 6);
	attrs[1].string_value = s;
	BAD("pools[0].slices[0].devices[0].attributes[\"driverVersion\"].version",
	    "version is 65 bytes, at most 64 allowed");
	free(s);
}

static void
test_semver(void)
{
	static const char *good[] = { "0.0.0", "1.2.3", "10.20.30",
	    "1.2.3-alpha", "1.2.3-alpha.1", "1.2.3-0", "1.2.3-0a", "1.2.3--",
	    "1.2.3-a-b", "1.2.3-x.7.z.92", "1.2.3+build", "1.2.3+001",
	    "1.2.3+a-b.01", "1.2.3-rc.1+build.5", "1.0.0-0A.is.legal",
	    "18446744073709551616.0.0",
	    "1.2.3----RC-SNAPSHOT.12.9.1--.12+788" };
	static const char *bad[] = { "", "v1.0.0", "1", "1.0", "1.2.3.4",
	    "01.0.0", "1.00.0", "1.0.00", "1.0.0-01", "1.0.0-", "1.0.0+",
	    "1.0.0-a..b", "1.0.0+a..b", "1.0.0+a+b", "1.0.0-a_b",
	    "1.0.0-\xc3\xa9", " 1.0.0", "1.0.0 ", "1.0.0\n", "1.0.0-.a",
	    "1.0.0-a.", "-1.0.0", "1.-0.0", "a.b.c", "1.0.0-a+", "1..0" };
	size_t	 i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (validate_semver(good[i]) != 0) {
			fprintf(stderr, "semver rejected: \"%s\"\n", good[i]);
			CHECK(0);
		}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (validate_semver(bad[i]) != KP_EINVAL) {
			fprintf(stderr, "semver accepted: \"%s\"\n", bad[i]);
			CHECK(0);
		}
	CHECK_EQ(validate_semver(NULL), KP_EINVAL);
}

static void
test_quantity(void)
{
	/* ParseQuantity accepts all of these (quantity_test.go and a
	 * reading of parseQuantityString: "+", "." and "Gi" are zero). */
	static const char *good[] = { "0", "1", "1.5", "100m", "1Ki", "1e3",
	    "1E-3", "+1", "-1", "1.", ".5", "1.G", "0.5Mi", "100.035Ki",
	    "9Ei", "1E", "12E", "80Gi", "5n", "4u", "8k", "7M", "6G", "5T",
	    "2P", "3Ei", "1e+5", "1E05", "0.000000000001Ki", "1.1E-9",
	    "+", "-", ".", "-.", "000", "Gi", "Ti", "m", "k", "E", "e5",
	    "0Pi", "1Pi", "12345678901234567890123", "1.5e-10",
	    "1e9223372036854775807", "1e-9223372036854775808",
	    "1e2147483648", "1e-2147483648", "1.5e-2147483648",
	    "9223372036854775807Ki" };
	static const char *bad[] = { "", " 1", "1 ", "1 Gi", "1Gib", "1i",
	    "1K", "1e", "1e+", "1e-", "-3.01e-", "1Ee3", "1Mi3", "1.1.M",
	    "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "-3.01i", "--1",
	    "+-1", "1e1.5", "1e3i", "Pi", "Ei", ".Pi", "-Ei", "e-10",
	    ".e-10", "n-1", "1e9223372036854775808",
	    "1e-9223372036854775809", "1e99999999999999999999", "1\n",
	    "0x10", "1_000", ("\xc2\xa0" "1") };
	size_t	 i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (validate_quantity(good[i]) != 0) {
			fprintf(stderr, "quantity rejected: \"%s\"\n", good[i]);
			CHECK(0);
		}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (validate_quantity(bad[i]) != KP_EINVAL) {
			fprintf(stderr, "quantity accepted: \"%s\"\n", bad[i]);
			CHECK(0);
		}
	CHECK_EQ(validate_quantity(NULL), KP_EINVAL);

	reset();
	caps[0].quantity = NULL;
	BAD("pools[0].slices[0].devices[0].capacity[0].quantity",
	    "required (NULL)");
	caps[0].quantity = "";
	BAD("pools[0].slices[0].devices[0].capacity[\"memory\"].value",
	    "\"\" must not be empty");
	caps[0].quantity = "1 Gi";
	BAD("pools[0].slices[0].devices[0].capacity[\"memory\"].value",
	    "\"1 Gi\" must match '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]");
	caps[0].quantity = "1Gib";
	BAD("pools[0].slices[0].devices[0].capacity[\"memory\"].value",
	    "\"1Gib\" must match '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]");
	caps[0].quantity = "1K";
	BAD("pools[0].slices[0].devices[0].capacity[\"memory\"].value",
	    "\"1K\" has an unknown suffix (Ki Mi Gi Ti Pi Ei, n u m k M G T");
	caps[0].quantity = "Pi";
	BAD("pools[0].slices[0].devices[0].capacity[\"memory\"].value",
	    "\"Pi\" has no digit in its number");
	caps[0].quantity = "1.5Gi";
	GOOD();
}

static void
test_messages(void)
{
	char	*s;
	char	 small[8];

	reset();
	attrs[0].string_value = "0123456789012345678901234567890123456789"
	    "0123456789012345678901234567890123456789";
	BAD("pools[0].slices[0].devices[0].attributes[\"example.com/model\"].string",
	    "string is 80 bytes, at most 64 allowed");
	printf("example: %s\n", err);
	CHECK_EQ(validate_resources(&res, NULL, 0), KP_EINVAL);
	CHECK_EQ(validate_resources(&res, small, sizeof(small)), KP_EINVAL);
	CHECK_EQ(strlen(small), sizeof(small) - 1);
	reset();
	CHECK_EQ(validate_resources(&res, small, 0), 0);

	/* A long pool name and a long key: the message stays short. */
	s = repeat('p', 250, "");
	pools[0].name = s;
	devs[0].name = "dev-0000000000000000000000000000000000000000000000000";
	attrs[0].name = "example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	BAD("pools[0].slices[0].devices[0].attributes[\"example.com/aaaaaaaaaaaa...\"]",
	    "the identifier must be no more than 32 bytes");
	free(s);

	/* A name with two '/' had no length rule of its own, so it could
	 * pass the server's 3 MiB request limit; 1.38 refuses it first. */
	reset();
	s = repeat('k', 3u << 20, "");
	memcpy(s, "a/b/", 4);
	attrs[3].name = s;
	BAD(D0 "attributes[", "must have at most one '/'");
	free(s);
}

/*
 * The 1.37 additions: partitionable devices (counter sets in their own
 * slice, references, limits), taints, binding conditions, list
 * attributes, consumable capacity, per-device node selection,
 * nodeAllocatableResources, partitionTypeAttribute, skipNodeOperations.
 * pools[0]: slices[0] devices dev-0 dev-1, slices[1] dev-2; here a third
 * slice of pools[0] holds the counter sets.
 */
static struct kp_counter	 ctr[40];
static char			 cnames[40][8];
static struct kp_counter_set	 csets[10];
static char			 snames[10][8];
static struct kp_counter_consumption use[3];
static struct kp_taint		 tnt[17];
static struct kp_slice		 gslices[3];

static void
reset_gpu(void)
{
	size_t	 i;

	reset();
	for (i = 0; i < 40; i++) {
		snprintf(cnames[i], sizeof(cnames[i]), "c%zu", i);
		ctr[i] = (struct kp_counter)KP_COUNTER(cnames[i], "1Gi");
	}
	for (i = 0; i < 10; i++) {
		snprintf(snames[i], sizeof(snames[i]), "set-%zu", i);
		csets[i] = (struct kp_counter_set){ KP_COUNTER_SET_INIT,
		    .name = snames[i], .counters = ctr, .n_counters = 2 };
	}
	for (i = 0; i < 3; i++)
		use[i] = (struct kp_counter_consumption){
		    KP_COUNTER_CONSUMPTION_INIT, .counter_set = snames[i],
		    .counters = ctr, .n_counters = 1 };
	for (i = 0; i < 17; i++)
		tnt[i] = (struct kp_taint){ KP_TAINT_INIT, .key = cnames[i],
		    .effect = KP_TAINT_NO_EXECUTE };
	gslices[0] = slices[0];
	gslices[1] = slices[1];
	gslices[2] = (struct kp_slice){ KP_SLICE_INIT,
	    .shared_counters = csets, .n_shared_counters = 2 };
	pools[0].slices = gslices;
	pools[0].n_slices = 3;
	devs[1].consumes_counters = use;
	devs[1].n_consumes_counters = 2;
}

#define G1	"pools[0].slices[0].devices[1]"

static void
test_partitions(void)
{
	size_t	 i;

	reset_gpu();
	GOOD();
	/* 1.35: devices and counter sets in different slices. */
	gslices[0].shared_counters = csets + 3;
	gslices[0].n_shared_counters = 1;
	BAD("pools[0].slices[0]", "a slice holds one of them (1.35)");
	reset_gpu();
	gslices[2].n_shared_counters = 9;
	BAD("pools[0].slices[2].sharedCounters", "more than 8 counter sets");
	gslices[2].n_shared_counters = 8;
	GOOD();
	csets[0].n_counters = 33;
	BAD("pools[0].slices[2].sharedCounters[0].counters",
	    "more than 32 counters");
	csets[0].n_counters = 32;
	GOOD();
	csets[0].n_counters = 0;
	BAD("pools[0].slices[2].sharedCounters[0].counters", "required");
	reset_gpu();
	csets[1].name = "set-0";
	BAD("pools[0].slices[2].sharedCounters[1].name",
	    "duplicate counter set in the pool (also "
	    "slices[2].sharedCounters[0])");
	reset_gpu();
	csets[1].name = "Set";
	BAD("pools[0].slices[2].sharedCounters[1].name", "DNS label");
	reset_gpu();
	ctr[1].name = "c0";
	BAD("pools[0].slices[2].sharedCounters[0].counters[\"c0\"]",
	    "duplicate counter name");
	reset_gpu();
	ctr[0].quantity = "1 Gi";
	BAD(G1 ".consumesCounters[0].counters[\"c0\"].value", "must match");

	/* consumesCounters: <= 2, one per set, references exist. */
	reset_gpu();
	devs[1].n_consumes_counters = 3;
	BAD(G1 ".consumesCounters", "more than 2 entries");
	reset_gpu();
	use[1].counter_set = "set-0";
	BAD(G1 ".consumesCounters[1].counterSet",
	    "\"set-0\" duplicate: one entry per counter set");
	reset_gpu();
	use[1].counter_set = "set-7";
	BAD(G1 ".consumesCounters[1].counterSet",
	    "\"set-7\" is not a counter set of the pool");
	reset_gpu();
	use[0].counters = ctr + 5;
	BAD(G1 ".consumesCounters[0]",
	    "counters[c5]: not a counter of counter set \"set-0\"");
	reset_gpu();
	use[0].n_counters = 33;
	BAD(G1 ".consumesCounters[0].counters", "more than 32 counters");
	/* A set of another pool does not count. */
	reset_gpu();
	pools[0].n_slices = 2;
	BAD(G1 ".consumesCounters[0].counterSet",
	    "is not a counter set of the pool");

	/* 128 devices, 64 with an advanced feature. */
	reset_gpu();
	devs[1].n_consumes_counters = 0;
	gslices[1].devices = devs + 130;
	gslices[0].n_devices = 128;
	GOOD();
	gslices[0].n_devices = 129;
	BAD("pools[0].slices[0]", "129 devices, at most 128 allowed");
	gslices[0].n_devices = 65;
	devs[1].n_consumes_counters = 1;
	BAD("pools[0].slices[0]", "65 devices, at most 64 allowed when a "
	    "device has taints, consumesCounters or list attributes");
	devs[1].n_consumes_counters = 0;
	devs[3].taints = tnt;
	devs[3].n_taints = 1;
	BAD("pools[0].slices[0]", "65 devices, at most 64");
	devs[3].n_taints = 0;
	GOOD();
	attrs[20] = (struct kp_attribute)KP_ATTR_STRINGS("list", vals, 2);
	devs[4].attributes = attrs + 20;
	devs[4].n_attributes = 1;
	BAD("pools[0].slices[0]", "65 devices, at most 64");
	gslices[0].n_devices = 64;
	GOOD();
	for (i = 0; i < 65; i++)
		devs[i].n_consumes_counters = 0;
}

/*
 * ReconcilePoolWithName (1.38): other pools are no error here (they are
 * left out, publish_rules.c); the pool of that name needs node-less
 * slices, wherever it is in the call.
 */
static void
test_reconcile(void)
{
	Kpipc__Publish	*pub;

	reset_gpu();
	res.n_pools = 1;
	CHECK_EQ(pack_resources(&res, &pub, err, sizeof(err)), 0);
	CHECK_EQ(validate_reconcile(pub, "", err, sizeof(err)), 0);
	CHECK_EQ(validate_reconcile(pub, "other", err, sizeof(err)), 0);
	CHECK_EQ(validate_reconcile(pub, pub->pools[0]->name, err,
	    sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "pools[0].slices[0]: with ReconcilePoolWithName "
	    "no slice has a nodeName");
	pub->pools[0]->all_nodes = 1;
	CHECK_EQ(validate_reconcile(pub, pub->pools[0]->name, err,
	    sizeof(err)), 0);
	pub->n_pools = 0;		/* an empty set is allowed */
	CHECK_EQ(validate_reconcile(pub, "other", err, sizeof(err)), 0);
	pack_free(pub);
	res.n_pools = 2;
	CHECK_EQ(pack_resources(&res, &pub, err, sizeof(err)), 0);
	/* The second pool, found by its name, and checked alone. */
	CHECK_EQ(validate_reconcile(pub, pub->pools[1]->name, err,
	    sizeof(err)), KP_EINVAL);
	CHECK_CONTAINS(err, "pools[1].slices[0]: with ReconcilePoolWithName");
	pub->pools[1]->all_nodes = 1;
	CHECK_EQ(validate_reconcile(pub, pub->pools[1]->name, err,
	    sizeof(err)), 0);
	pack_free(pub);
}

#define RP D0 "capacity[\"memory\"].requestPolicy"

/*
 * requestPolicy against the capacity value (80Gi), as the 1.37 server's
 * validateRequestPolicy: every rule once broken, at its boundary.
 */
static void
test_request_policy(void)
{
	static const char	*vv[4];
	struct kp_request_policy rp = { KP_REQUEST_POLICY_INIT };

	reset_gpu();
	caps[0].request_policy = &rp;
	devs[0].allow_multiple_allocations = 1;
	GOOD();				/* an empty policy */
	rp.default_value = "1Gi";
	GOOD();				/* a default alone: no rule */

	/* validValues: ascending, <= capacity, distinct, default in it. */
	rp.valid_values = vv;
	rp.n_valid_values = 3;
	vv[0] = "1Gi";
	vv[1] = "40Gi";
	vv[2] = "81920Mi";		/* == the capacity: allowed */
	GOOD();
	vv[2] = "81921Mi";
	BAD(RP ".validValues[2]: \"81921Mi\": option is larger than capacity "
	    "value: \"80Gi\"", "");
	vv[2] = "2Gi";
	BAD(RP ".validValues[2]: \"2Gi\": values must be sorted in ascending "
	    "order", "");
	vv[1] = "1024Mi";		/* == 1Gi */
	vv[2] = "2Gi";
	BAD(RP ".validValues[1]: \"1024Mi\": Duplicate value", "");
	vv[1] = "1500m";		/* 1.5 rounds up to 2 ... */
	vv[2] = "2";			/* ... a duplicate by Value() */
	vv[0] = "1";
	rp.default_value = "1";
	BAD(RP ".validValues[2]", "Duplicate value");
	vv[2] = "3";
	GOOD();
	rp.default_value = "4";
	BAD(RP ".validValues: \"4\": default value is not valid", "");
	rp.default_value = "1000m";	/* == 1 by value */
	GOOD();

	/* validRange: min <= default <= max <= capacity, whole steps. */
	rp.n_valid_values = 0;
	rp.default_value = "4Gi";
	rp.range_min = "1Gi";
	GOOD();				/* min only */
	rp.range_min = "81Gi";
	BAD(RP ".validRange.min: \"81Gi\": min is larger than capacity value: "
	    "\"80Gi\"", "");
	rp.range_min = "5Gi";
	BAD(RP ".validRange.min: \"4Gi\": default is less than min: \"5Gi\"",
	    "");
	rp.range_min = "1Gi";
	rp.range_max = "512Mi";
	BAD(RP ".validRange.max: \"1Gi\": min is larger than max: \"512Mi\"",
	    "");
	rp.range_max = "81Gi";
	BAD(RP ".validRange.max: \"81Gi\": max is larger than capacity value",
	    "");
	rp.range_max = "3Gi";
	BAD(RP ".validRange.max: \"4Gi\": default is more than max: \"3Gi\"",
	    "");
	rp.range_max = "80Gi";
	GOOD();
	rp.range_step = "1Gi";
	GOOD();				/* 4Gi and 80Gi: whole steps from 1Gi */
	rp.range_step = "3Gi";
	BAD(RP ".validRange.step: \"80Gi\": value is not a multiple of a "
	    "given step (\"3Gi\") from (\"1Gi\")", "");
	rp.default_value = "2Gi";
	BAD(RP ".validRange.step: \"2Gi\": value is not a multiple", "");
	rp.default_value = "4Gi";
	rp.range_max = NULL;
	GOOD();				/* no max: only the default is stepped */
	rp.range_step = "79Gi";
	rp.default_value = "1Gi";
	GOOD();				/* min + step == capacity */
	rp.range_step = "79Gi1";	/* not a quantity */
	BAD(RP ".validRange.step", "");
	rp.range_step = "80Gi";
	BAD(RP ".validRange.step: \"80Gi\": one step from min is larger than "
	    "capacity value: \"80Gi\"", "");
	rp.range_step = "0";
	BAD(RP ".validRange.step: \"0\": must be greater than zero", "");
	rp.range_step = "-1Gi";
	BAD(RP ".validRange.step", "must be greater than zero");
	/* Exact sums: 0.5 + 0.25 is not above 0.75 ... */
	caps[0].quantity = "750m";
	rp.range_min = "0.5";
	rp.default_value = "500m";
	rp.range_step = "250m";
	GOOD();
	caps[0].quantity = "749m";	/* ... but above 0.749 */
	BAD(RP ".validRange.step", "one step from min is larger");
	caps[0].quantity = "80Gi";

	rp.range_min = "1Gi";
	rp.range_step = NULL;
	rp.default_value = NULL;
	BAD(RP ".default", "required when validRange is defined");
}

static void
test_device_fields(void)
{
	static const int64_t	 many[49];
	static const char	*conds[5] = { "a.io/x", "a.io/y", "z", "w",
	    "v" };
	static const char	*vv[11] = { "1", "2", "3", "4", "5", "6", "7",
	    "8", "9", "10", "11" };
	struct kp_request_policy rp = { KP_REQUEST_POLICY_INIT };
	struct kp_node_allocatable na = { KP_NODE_ALLOCATABLE_INIT,
	    .resource = "cpu", .capacity_key = "memory" };
	struct kp_node_selector	 dsel = { KP_NODE_SELECTOR_INIT };
	static const char	*skip[3];

	/* List attributes: >= 1 value each, <= 48 values per device. */
	reset_gpu();
	attrs[4] = (struct kp_attribute)KP_ATTR_INTS("ints", many, 48);
	devs[0].n_attributes = 5;
	GOOD();
	attrs[4].n_values = 49;
	BAD(D0 "attributes", "more than 48 list attribute values");
	attrs[4].n_values = 0;
	BAD(D0 "attributes[\"ints\"]", "needs at least one value");
	attrs[4] = (struct kp_attribute)KP_ATTR_VERSIONS("vs", vals, 2);
	BAD(D0 "attributes[\"vs\"].versions[0]", "\"a\" is not semver");

	/* Taints. */
	reset_gpu();
	devs[0].taints = tnt;
	devs[0].n_taints = 16;
	GOOD();
	devs[0].n_taints = 17;
	BAD(D0 "taints", "more than 16 taints");
	devs[0].n_taints = 1;
	tnt[0].effect = KP_TAINT_UNSET;
	BAD(D0 "taints[0].effect", "required (None, NoSchedule or NoExecute)");
	tnt[0].effect = KP_TAINT_NONE;
	tnt[0].value = "a b";
	BAD(D0 "taints[0].value", "must be empty or");
	tnt[0].value = NULL;
	tnt[0].key = "a/b/c";
	BAD(D0 "taints[0].key", "one '/' at most");

	/* Binding conditions. */
	reset_gpu();
	devs[0].binding_conditions = conds;
	devs[0].n_binding_conditions = 4;
	devs[0].binding_failure_conditions = conds;
	devs[0].n_binding_failure_conditions = 4;
	GOOD();
	devs[0].n_binding_conditions = 5;
	BAD(D0 "bindingConditions", "more than 4 conditions");
	devs[0].n_binding_conditions = 1;
	devs[0].n_binding_failure_conditions = 5;
	BAD(D0 "bindingFailureConditions", "more than 4 conditions");
	conds[4] = "x y";
	devs[0].n_binding_failure_conditions = 5;

	/* Consumable capacity (the range rules: test_request_policy). */
	reset_gpu();
	caps[0].request_policy = &rp;
	BAD(D0 "capacity[\"memory\"].requestPolicy", "allowMultipleAllocations "
	    "must be true");
	devs[0].allow_multiple_allocations = 1;
	GOOD();
	rp.valid_values = vv;
	rp.n_valid_values = 2;
	BAD(D0 "capacity[\"memory\"].requestPolicy.default", "required when "
	    "validValues is defined");
	rp.default_value = "1";
	GOOD();
	rp.n_valid_values = 11;
	BAD(D0 "capacity[\"memory\"].requestPolicy.validValues",
	    "must have at most 10 items");
	rp.n_valid_values = 1;
	rp.range_min = "1";
	BAD(D0 "capacity[\"memory\"].requestPolicy", "exactly one policy can "
	    "be specified, cannot specify \"validValues\" and \"validRange\"");
	rp.n_valid_values = 0;
	rp.range_step = "x";
	BAD(D0 "capacity[\"memory\"].requestPolicy.validRange.step", "\"x\"");
	rp.range_step = "1";
	GOOD();

	/* Per-device node selection. */
	reset_gpu();
	devs[0].node_name = "node-1";
	res.n_pools = 1;	/* pools[1] shares dev-0 */
	BAD("pools[0].slices[0].devices[0]: ", "need the slice's "
	    "perDeviceNodeSelection");
	gslices[0].per_device_node_selection = 1;
	BAD("pools[0].slices[0].devices[1]", "none of nodeName, nodeSelector "
	    "and allNodes");
	devs[1].all_nodes = 1;
	GOOD();
	devs[1].node_selector = &dsel;
	BAD("pools[0].slices[0].devices[1]", "more than one of nodeName");
	devs[1].all_nodes = 0;
	GOOD();
	devs[0].node_name = "Node_1";
	BAD(D0 "nodeName", "a node name must be a DNS subdomain");
	devs[0].node_name = "node-1";
	pools[0].all_nodes = 1;
	BAD("pools[0].slices[0]", "perDeviceNodeSelection: the pool's "
	    "nodeSelector or allNodes");
	pools[0].node_selector = &sel;
	BAD("pools[0]", "nodeSelector and allNodes: at most one");

	/* nodeAllocatableResources. */
	reset_gpu();
	devs[0].node_allocatable = &na;
	devs[0].n_node_allocatable = 1;
	GOOD();
	na.capacity_key = "nope";
	BAD(D0 "nodeAllocatableResources[\"cpu\"].mapping.capacityKey",
	    "\"nope\" is not a capacity of the device");
	na.capacity_key = "memory";
	na.device_multiplier = "2";
	BAD(D0 "nodeAllocatableResources[\"cpu\"].mapping",
	    "deviceMultiplier and capacityKey: at most one");
	na.capacity_key = NULL;
	na.per_container = "1x";
	BAD(D0 "nodeAllocatableResources[\"cpu\"].overhead.perContainer",
	    "\"1x\"");
	na.per_container = NULL;
	na.device_multiplier = NULL;
	BAD(D0 "nodeAllocatableResources[\"cpu\"]", "a mapping or an "
	    "overhead is required");

	/* partitionTypeAttribute, skipNodeOperations. */
	reset_gpu();
	gslices[0].partition_type_attribute = "model";
	BAD("pools[0].slices[0].partitionTypeAttribute", "must be fully "
	    "qualified");
	gslices[0].partition_type_attribute = "example.com/model";
	BAD("pools[0].slices[0].devices[1].attributes", "a partition device "
	    "needs the string attribute");
	devs[1].attributes = attrs;
	devs[1].n_attributes = 1;
	GOOD();
	skip[0] = "NodePrepareResources";
	gslices[0].skip_node_operations = skip;
	gslices[0].n_skip_node_operations = 1;
	BAD("pools[0].slices[0].skipNodeOperations", "NodePrepareResources "
	    "needs NodeUnprepareResources too");
	skip[1] = "NodeUnprepareResources";
	gslices[0].n_skip_node_operations = 2;
	GOOD();
	skip[2] = "NodeUnprepare";
	gslices[0].n_skip_node_operations = 3;
	BAD("pools[0].slices[0].skipNodeOperations[2]", "is not "
	    "NodePrepareResources");
	skip[2] = "NodeUnprepareResources";
	BAD("pools[0].slices[0].skipNodeOperations[2]", "duplicate");
	reset();
}

int
main(void)
{
	test_pools();
	test_selector();
	test_devices();
	test_names();
	test_attributes();
	test_semver();
	test_quantity();
	test_messages();
	test_partitions();
	test_device_fields();
	test_request_policy();
	test_reconcile();
	return (test_done("test_validate"));
}
