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

	memset(attrs, 0, sizeof(attrs));
	memset(caps, 0, sizeof(caps));
	memset(devs, 0, sizeof(devs));
	memset(&sel, 0, sizeof(sel));
	memset(exprs, 0, sizeof(exprs));
	memset(fields, 0, sizeof(fields));
	for (i = 0; i < 140; i++) {
		snprintf(dnames[i], sizeof(dnames[i]), "dev-%zu", i);
		devs[i].name = dnames[i];
	}
	for (i = 0; i < 40; i++) {
		snprintf(anames[i], sizeof(anames[i]), "a%zu", i);
		attrs[i].name = anames[i];
		caps[i].name = anames[i];
		caps[i].quantity = "1";
	}
	attrs[0] = (struct kp_attribute){ "example.com/model", KP_ATTR_STRING,
	    0, 0, "A100" };
	attrs[1] = (struct kp_attribute){ "driverVersion", KP_ATTR_VERSION,
	    0, 0, "1.2.3" };
	attrs[2] = (struct kp_attribute){ "count", KP_ATTR_INT, 4, 0, NULL };
	attrs[3] = (struct kp_attribute){ "ecc", KP_ATTR_BOOL, 0, 1, NULL };
	caps[0] = (struct kp_capacity){ "memory", "80Gi" };
	devs[0].attributes = attrs;
	devs[0].n_attributes = 4;
	devs[0].capacities = caps;
	devs[0].n_capacities = 1;
	slices[0] = (struct kp_slice){ devs, 2 };
	slices[1] = (struct kp_slice){ devs + 2, 1 };
	slices[2] = (struct kp_slice){ devs, 1 };
	memset(pools, 0, sizeof(pools));
	pools[0] = (struct kp_pool){ "gpu", 0, NULL, slices, 2 };
	pools[1] = (struct kp_pool){ "gpu/b", 3, NULL, slices + 2, 1 };
	res.pools = pools;
	res.n_pools = 2;
	vals[0] = "a";
	vals[1] = "b";
	vals[2] = NULL;
	exprs[0] = (struct kp_node_selector_requirement){ "example.com/rack",
	    "In", vals, 2 };
	fields[0] = (struct kp_node_selector_requirement){ "metadata.name",
	    "In", vals, 1 };
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

#define D0	"pools[0] \"gpu\" slices[0] devices[0] \"dev-0\": "

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
	BAD("pools is NULL", "count of 2");
	reset();
	res.n_pools = 0;
	GOOD();
	for (i = 0; i < 4097; i++) {
		snprintf(mnames[i], sizeof(mnames[i]), "p%zu", i);
		many[i].name = mnames[i];
	}
	res.pools = many;
	res.n_pools = 4096;
	GOOD();
	res.n_pools = 4097;
	BAD("4097 pools", "at most 4096");

	reset();
	pools[0].name = NULL;
	BAD("pools[0] NULL: name", "required");
	pools[0].name = "";
	BAD("pools[0] \"\": name", "required");
	s = repeat('a', 253, "");
	pools[0].name = s;
	GOOD();
	free(s);
	s = repeat('a', 254, "");
	pools[0].name = s;
	BAD("pools[0] \"aaaaaaaaaaaaaaaaaaaaaaaa...\": name", "254 characters, "
	    "at most 253");
	free(s);
	s = repeat('a', 200, ".b/c.d/e");
	pools[0].name = s;
	GOOD();
	free(s);
	pools[0].name = "a//b";
	BAD("name: part 1", "is empty");
	pools[0].name = "/a";
	BAD("name: part 0", "is empty");
	pools[0].name = "a/";
	BAD("name: part 1", "is empty");
	pools[0].name = "Gpu";
	BAD("name: part 0", "DNS subdomain");
	pools[0].name = "gpu_1";
	BAD("name: part 0", "DNS subdomain");
	pools[0].name = "gpu.-a";
	BAD("name: part 0", "DNS subdomain");
	pools[0].name = "gpu/b";
	BAD("pools[1] \"gpu/b\": name", "duplicate (also pools[0])");

	reset();
	pools[0].generation = -1;
	BAD("pools[0] \"gpu\": generation", "-1, must be 0 or more");
	pools[0].generation = INT64_MAX;
	GOOD();

	reset();
	pools[0].n_slices = 0;		/* no ResourceSlice at all */
	GOOD();
	pools[0].slices = NULL;
	GOOD();
	pools[0].n_slices = 1;
	BAD("pools[0] \"gpu\": slices is NULL", "count of 1");
	reset();
	slices[1].n_devices = 0;	/* an empty slice */
	GOOD();
	slices[1].devices = NULL;
	GOOD();
	slices[1].n_devices = 1;
	BAD("pools[0] \"gpu\" slices[1]: devices is NULL", "count of 1");
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
	BAD("pools[0] \"gpu\": node_selector.match_expressions is NULL",
	    "count of 1");
	sel.match_expressions = exprs;
	sel.match_fields = NULL;
	BAD("node_selector.match_fields is NULL", "count of 1");
	sel.match_fields = fields;

	exprs[0].op = "NotIn";
	GOOD();
	exprs[0].n_values = 0;
	BAD("node_selector.match_expressions[0]: values", "required for In "
	    "and NotIn");
	exprs[0].op = "In";
	BAD("match_expressions[0]: values", "required for In and NotIn");
	exprs[0].op = "Exists";
	GOOD();
	exprs[0].op = "DoesNotExist";
	GOOD();
	exprs[0].n_values = 1;
	BAD("match_expressions[0]: values", "not allowed for Exists and "
	    "DoesNotExist");
	exprs[0].op = "Exists";
	BAD("match_expressions[0]: values", "not allowed for Exists");
	exprs[0].op = "Gt";
	vals[0] = "5";
	GOOD();
	vals[0] = "five";	/* not an integer: not checked upstream */
	GOOD();
	exprs[0].op = "Lt";
	GOOD();
	exprs[0].n_values = 2;
	BAD("match_expressions[0]: values", "exactly one needed for Gt and "
	    "Lt, 2 given");
	exprs[0].n_values = 0;
	BAD("match_expressions[0]: values", "exactly one needed for Gt and "
	    "Lt, 0 given");
	exprs[0].op = "in";
	BAD("match_expressions[0]: op \"in\"", "is not one of In, NotIn");
	exprs[0].op = NULL;
	BAD("match_expressions[0]: op", "is NULL");

	reset();
	pools[0].node_selector = &sel;
	sel.match_expressions = exprs;
	sel.n_match_expressions = 1;
	exprs[0].key = NULL;
	BAD("match_expressions[0]: key", "is NULL");
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
	BAD("match_expressions[0]: key", "no more than 63 characters");
	exprs[0].key = "rack";
	vals[1] = "";
	GOOD();			/* an empty label value is valid */
	vals[1] = "a b";
	BAD("match_expressions[0]: values[1] \"a b\"", "must be empty or");
	vals[1] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaa";
	GOOD();
	vals[1] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaa";
	BAD("values[1]", "no more than 63 characters");
	vals[1] = NULL;
	BAD("match_expressions[0]: values[1]", "is NULL");
	exprs[0].values = NULL;
	BAD("match_expressions[0]: values is NULL", "count of 2");

	reset();
	pools[0].node_selector = &sel;
	sel.match_fields = fields;
	sel.n_match_fields = 1;
	vals[0] = "node-1.example.com";
	GOOD();
	fields[0].op = "NotIn";
	GOOD();
	fields[0].op = "Exists";
	BAD("node_selector.match_fields[0]: op \"Exists\"", "In, NotIn "
	    "(match fields)");
	fields[0].op = "In";
	fields[0].n_values = 2;
	BAD("match_fields[0]: values", "exactly one needed for a match field");
	fields[0].n_values = 1;
	fields[0].key = "metadata.labels";
	BAD("match_fields[0]: key \"metadata.labels\"", "only "
	    "\"metadata.name\"");
	fields[0].key = "metadata.name";
	vals[0] = "Node_1";
	BAD("match_fields[0]: values[0] \"Node_1\"", "a node name must be a "
	    "DNS subdomain");
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
	BAD("pools[0] \"gpu\" slices[0]: 129 devices", "at most 128 allowed");
	reset();
	devs[1].name = NULL;
	BAD("slices[0] devices[1] NULL: name", "is NULL");
	devs[1].name = "";
	BAD("devices[1] \"\": name", "must be a DNS label");
	devs[1].name = "Dev-1";
	BAD("devices[1] \"Dev-1\": name", "must be a DNS label");
	devs[1].name = "dev.1";
	BAD("devices[1] \"dev.1\": name", "must be a DNS label");
	devs[1].name = "-dev";
	BAD("devices[1] \"-dev\": name", "must be a DNS label");
	s = repeat('d', 63, "");
	devs[1].name = s;
	GOOD();
	free(s);
	s = repeat('d', 64, "");
	devs[1].name = s;
	BAD("devices[1] \"dddddddddddddddddddddddd...\": name", "no more than "
	    "63 characters");
	free(s);
	devs[1].name = "dev-0";
	BAD("pools[0] \"gpu\" slices[0] devices[1] \"dev-0\": name",
	    "duplicate in the pool (also slices[0] devices[0])");
	devs[1].name = "dev-1";
	devs[2].name = "dev-0";
	BAD("pools[0] \"gpu\" slices[1] devices[0] \"dev-0\": name",
	    "duplicate in the pool (also slices[0] devices[0])");
	devs[2].name = "dev-2";
	GOOD();			/* dev-0 again in pools[1]: fine */

	reset();
	devs[0].attributes = NULL;
	BAD(D0 "attributes is NULL", "count of 4");
	reset();
	devs[0].capacities = NULL;
	BAD(D0 "capacities is NULL", "count of 1");
	reset();
	for (i = 4; i < 40; i++)
		attrs[i].type = KP_ATTR_INT;
	devs[0].n_attributes = 20;
	devs[0].n_capacities = 12;
	GOOD();
	devs[0].n_capacities = 13;
	BAD(D0 "20 attributes and 13 capacities", "at most 32 together");
	devs[0].n_capacities = 0;
	devs[0].n_attributes = 32;
	GOOD();
	devs[0].n_attributes = 33;
	BAD(D0 "33 attributes and 0 capacities", "at most 32 together");
}

static void
test_names(void)
{
	static const char *good[] = { "model", "_x", "X_1",
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "example.com/model",
	    "Example.COM/model", "gpu.example.com/driver_Version",
	    "a/b/c", "a//", "//", "x.com/y/z!", "\xc4\xb0nvidia.com/x",
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
	    { "a/b/\xff", "must be UTF-8" } };
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
		BAD(D0 "capacities[", bad[i].why);
	}
	reset();
	attrs[3].name = NULL;
	BAD(D0 "attributes[3]", "name is NULL");
	reset();
	caps[0].name = NULL;
	BAD(D0 "capacities[0]", "name is NULL");

	reset();
	attrs[3].name = "count";
	BAD(D0 "attributes[3] \"count\"", "duplicate name (also "
	    "attributes[2])");
	reset();
	caps[1] = caps[0];
	devs[0].n_capacities = 2;
	BAD(D0 "capacities[1] \"memory\"", "duplicate name (also "
	    "capacities[0])");
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
	attrs[2].type = (enum kp_attribute_type)7;
	BAD(D0 "attributes[\"count\"]", "type 7 is not a kp_attribute_type");
	reset();
	attrs[0].string_value = NULL;
	BAD(D0 "attributes[\"example.com/model\"]", "string_value is NULL");
	attrs[0].string_value = "";
	GOOD();
	s = repeat('x', 64, "");
	attrs[0].string_value = s;
	GOOD();
	free(s);
	s = repeat('x', 65, "");
	attrs[0].string_value = s;
	BAD(D0 "attributes[\"example.com/model\"]", "string value is 65 "
	    "bytes, at most 64 allowed");
	free(s);
	attrs[0].string_value = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9";	/* 32 x U+00E9: 64 bytes */
	GOOD();
	attrs[0].string_value = "ok\xff";
	BAD(D0 "attributes[\"example.com/model\"]", "string value is not "
	    "UTF-8");
	attrs[0].string_value = "\xed\xa0\x80";		/* a surrogate */
	BAD(D0 "attributes[", "not UTF-8");
	attrs[0].string_value = "\xc0\xaf";		/* overlong '/' */
	BAD(D0 "attributes[", "not UTF-8");

	reset();
	attrs[1].string_value = NULL;
	BAD(D0 "attributes[\"driverVersion\"]", "string_value is NULL");
	attrs[1].string_value = "v1.0.0";
	BAD(D0 "attributes[\"driverVersion\"]: version value \"v1.0.0\"",
	    "is not semver 2.0.0");
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
	BAD(D0 "attributes[\"driverVersion\"]", "version value is 65 bytes, "
	    "at most 64 allowed");
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
	BAD(D0 "capacities[\"memory\"]", "quantity is NULL");
	caps[0].quantity = "";
	BAD(D0 "capacities[\"memory\"]: quantity \"\"", "must not be empty");
	caps[0].quantity = "1 Gi";
	BAD(D0 "capacities[\"memory\"]: quantity \"1 Gi\"", "must match "
	    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
	caps[0].quantity = "1Gib";
	BAD("quantity \"1Gib\"", "must match");
	caps[0].quantity = "1K";
	BAD("quantity \"1K\"", "unknown suffix");
	caps[0].quantity = "Pi";
	BAD("quantity \"Pi\"", "has no digit in its number");
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
	BAD("pools[0] \"gpu\" slices[0] devices[0] \"dev-0\": "
	    "attributes[\"example.com/model\"]: ", "string value is 80 bytes, "
	    "at most 64 allowed");
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
	BAD("pools[0] \"pppppppppppppppppppppppp...\" slices[0] devices[0] "
	    "\"dev-00000000000000000000...\": attributes[\"example.com/aaaaa"
	    "aaaaaaa...\"]", "no more than 32 bytes");
	free(s);

	/* Strings beyond the server's 3 MiB request limit (a name with two
	 * '/' has no length rule of its own). */
	reset();
	s = repeat('k', 3u << 20, "");
	memcpy(s, "a/b/", 4);
	attrs[3].name = s;
	BAD("pools[0] \"gpu\" slices[0]: ", "more than 3 MiB of strings");
	free(s);
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
	return (test_done("test_validate"));
}
