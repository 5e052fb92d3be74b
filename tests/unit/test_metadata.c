/*
 * test_metadata.c - device metadata (KEP-5304): the JSON string encoder
 * against Go's encoding/json escaping, the whole file against upstream's
 * layout (json.MarshalIndent of DeviceMetadata, one object per version),
 * the option and the directory kp_start() derives, the nodeserver's
 * steps after the hooks (CDI ID on each request's first device, failures
 * as the claim's error), and the frame rules of the new messages.
 */
#include <stdlib.h>
#include <string.h>

#include "kubeletplugin.h"
#include "api/api.h"
#include "ipc/ipc.h"
#include "nodeserver/dra.h"
#include "test.h"

#define V1A1	KP_METADATA_V1ALPHA1
#define V1B1	KP_METADATA_V1BETA1

static void
json_is(const char *in, const char *want)
{
	struct md_buf	 b = { NULL, 0, 0, 0 };

	md_json_string(&b, in);
	CHECK(!b.oom);
	CHECK_STREQ(b.p, want);
	free(b.p);
}

/* What Go's json.Marshal writes for these strings. */
static void
test_strings(void)
{
	json_is("", "\"\"");
	json_is("gpu-0", "\"gpu-0\"");
	json_is("a\"b\\c", "\"a\\\"b\\\\c\"");
	json_is("\n\r\t", "\"\\n\\r\\t\"");
	json_is("\b\f", "\"\\b\\f\"");			/* Go 1.22+ */
	json_is("\x01\x1f", "\"\\u0001\\u001f\"");
	/* HTML escaping, as json.Marshal */
	json_is("<a&b>", "\"\\u003ca\\u0026b\\u003e\"");
	json_is("\x7f", "\"\x7f\"");			/* DEL as is */
	json_is("caf\xc3\xa9 \xe2\x82\xac", "\"caf\xc3\xa9 \xe2\x82\xac\"");
	json_is("\xe2\x80\xa8\xe2\x80\xa9", "\"\\u2028\\u2029\"");
	json_is("a\xffz", "\"a\\ufffdz\"");		/* invalid UTF-8 */
	json_is("\xc3", "\"\\ufffd\"");			/* truncated */
	json_is("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");	/* 4 bytes */
}

static const char golden[] =
    "{\n"
    "  \"kind\": \"DeviceMetadata\",\n"
    "  \"apiVersion\": \"metadata.resource.k8s.io/v1beta1\",\n"
    "  \"metadata\": {\n"
    "    \"name\": \"claim\",\n"
    "    \"namespace\": \"default\",\n"
    "    \"uid\": \"claim-uid\",\n"
    "    \"generation\": 1\n"
    "  },\n"
    "  \"requests\": [\n"
    "    {\n"
    "      \"name\": \"request\",\n"
    "      \"devices\": [\n"
    "        {\n"
    "          \"driver\": \"gpu.example.com\",\n"
    "          \"pool\": \"worker-0\",\n"
    "          \"name\": \"gpu-0\"\n"
    "        },\n"
    "        {\n"
    "          \"driver\": \"gpu.example.com\",\n"
    "          \"pool\": \"worker-0\",\n"
    "          \"name\": \"gpu-1\"\n"
    "        }\n"
    "      ]\n"
    "    }\n"
    "  ]\n"
    "}\n";

/* Upstream's testdata/HEAD/metadata.json shape, less the fields the C
 * helper does not fill (ObjectMeta extras, attributes, networkData). */
static void
test_encode(void)
{
	const struct md_device	 devs[] = { { "worker-0", "gpu-0", NULL, NULL },
	    { "worker-0", "gpu-1", NULL, NULL } };
	const char		*vers[] = { V1B1, V1A1 };
	struct kp_options	*o;
	struct md_device	 bigdev = { NULL, NULL, NULL, NULL };
	struct md_input		 in;
	char			*out, *second, *big;
	size_t			 len;

	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, "gpu.example.com"), 0);
	CHECK_EQ(kp_device_metadata(o, 1, vers, 2), 0);
	memset(&in, 0, sizeof(in));
	in.namespace_ = "default";
	in.name = "claim";
	in.uid = "claim-uid";
	in.generation = 1;
	in.request = "request";
	in.devices = devs;
	in.n_devices = 2;
	CHECK_EQ(md_encode(o, &in, &out, &len), 0);
	CHECK_EQ(len, strlen(out));
	/* "v1alpha1" is one byte longer than "v1beta1" */
	CHECK_EQ(len, 2 * strlen(golden) + 1);
	CHECK(strncmp(out, golden, strlen(golden)) == 0);
	/* the second object: the same with the older apiVersion */
	second = out + strlen(golden);
	CHECK_STREQ(strstr(second, "\"metadata\""),
	    strstr(golden, "\"metadata\""));
	CHECK_CONTAINS(second, "\"apiVersion\": \"metadata.resource.k8s.io/"
	    "v1alpha1\",\n  \"metadata\"");
	free(out);

	/* podClaimName after metadata; a request without devices has no
	 * devices key (omitempty); strings escaped */
	CHECK_EQ(kp_device_metadata(o, 1, vers, 1), 0);
	in.pod_claim_name = "my-gpu";
	in.n_devices = 0;
	in.name = "a<b";
	CHECK_EQ(md_encode(o, &in, &out, &len), 0);
	CHECK_CONTAINS(out, "  },\n  \"podClaimName\": \"my-gpu\",\n"
	    "  \"requests\": [\n    {\n      \"name\": \"request\"\n    }\n"
	    "  ]\n}\n");
	CHECK_CONTAINS(out, "\"name\": \"a\\u003cb\",");
	free(out);

	/* over MD_MAX_CONTENT: KP_EINVAL with the length, nothing kept */
	if ((big = malloc(MD_MAX_CONTENT + 1)) == NULL)
		abort();
	memset(big, ' ', MD_MAX_CONTENT);
	big[MD_MAX_CONTENT] = '\0';
	bigdev.pool = "worker-0";
	bigdev.name = "gpu-0";
	bigdev.attrs = big;
	in.devices = &bigdev;
	in.n_devices = 1;
	CHECK_EQ(md_encode(o, &in, &out, &len), KP_EINVAL);
	CHECK(out == NULL);
	CHECK(len > MD_MAX_CONTENT);
	free(big);
	kp_options_free(o);
}

static void
test_option(void)
{
	struct kp_options	*o;
	const char		*two[] = { V1B1, V1A1 }, *bad[] = { "v1" };
	const char		*dup[] = { V1A1, V1A1 }, *nul[] = { NULL };

	CHECK_EQ(kp_device_metadata(NULL, 1, two, 2), KP_EINVAL);
	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(o->metadata, 0);	/* off by default */
	CHECK_EQ(kp_device_metadata(o, 2, two, 2), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "kp_device_metadata "
	    "(EnableDeviceMetadata): enable 2 must be 0 or 1");
	CHECK_EQ(kp_device_metadata(o, 1, NULL, 0), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "metadata versions must be "
	    "explicitly selected, none chosen");
	CHECK_EQ(kp_device_metadata(o, 1, bad, 1), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "metadata version \"v1\" is "
	    "not supported");
	CHECK_EQ(kp_device_metadata(o, 1, dup, 2), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "listed twice");
	CHECK_EQ(kp_device_metadata(o, 1, nul, 1), KP_EINVAL);
	CHECK_EQ(kp_device_metadata(o, 1, two, 3), KP_EINVAL);
	CHECK_EQ(o->metadata, 0);	/* failed calls changed nothing */
	CHECK_EQ(kp_device_metadata(o, 1, two, 2), 0);
	CHECK_EQ(o->metadata, 1);
	CHECK_EQ(o->n_metadata_versions, 2);
	CHECK_STREQ(o->metadata_versions[0], V1B1);
	CHECK_STREQ(o->metadata_versions[1], V1A1);

	/* the directory: data dir option, else the socket's directory,
	 * else the default; never within a state directory */
	CHECK_EQ(kp_driver_name(o, "gpu.example.com"), 0);
	CHECK_EQ(opt_metadata_resolve(o), 0);
	CHECK_STREQ(o->metadata_dir,
	    "/var/lib/kubelet/plugins/gpu.example.com/dra-device-metadata");
	CHECK_EQ(kp_plugin_socket_path(o, "/x/plugins/d/dra.sock"), 0);
	CHECK_EQ(opt_metadata_resolve(o), 0);
	CHECK_STREQ(o->metadata_dir, "/x/plugins/d/dra-device-metadata");
	CHECK_EQ(kp_plugin_data_directory_path(o, "/var/lib/kubelet/plugins/"
	    "mine"), 0);
	CHECK_EQ(opt_metadata_resolve(o), 0);
	CHECK_STREQ(o->metadata_dir,
	    "/var/lib/kubelet/plugins/mine/dra-device-metadata");
	CHECK_EQ(kp_sandbox_state_dir(o, "/var/lib/kubelet/plugins/mine"), 0);
	CHECK_EQ(opt_metadata_resolve(o), KP_EINVAL);
	CHECK_CONTAINS(kp_options_last_error(o), "overlap");
	CHECK_EQ(kp_device_metadata(o, 0, NULL, 0), 0);
	CHECK_EQ(opt_metadata_resolve(o), 0);	/* off: not checked */
	CHECK_STREQ(o->metadata_dir, "");
	kp_options_free(o);
}

/* A fake supervisor: records the writes, fails the ones asked to. */
struct fake {
	int	 writes, removes;
	char	 last[256];
	const char *fail_request;	/* a write of this request fails */
	int	 fail_remove;
};

static int
fake_write(void *user, const char *ns, const char *name, const char *uid,
    const char *request, const char *pod, const char *content, size_t len,
    char *err, size_t errsize)
{
	struct fake	*f = user;

	f->writes++;
	snprintf(f->last, sizeof(f->last), "%s/%s/%s/%s/%s/%zu", ns, name, uid,
	    request, pod, len);
	CHECK(len > 0 && strstr(content, "\"kind\": \"DeviceMetadata\"") !=
	    NULL);
	if (f->fail_request != NULL && strcmp(request, f->fail_request) == 0) {
		snprintf(err, errsize, "write device metadata for request %s: "
		    "disk full", request);
		return (KP_EIO);
	}
	return (0);
}

static int
fake_remove(void *user, const char *ns, const char *name, const char *uid,
    char *err, size_t errsize)
{
	struct fake	*f = user;

	(void)ns;
	(void)name;
	(void)uid;
	f->removes++;
	if (f->fail_remove) {
		snprintf(err, errsize, "remove metadata directory x: busy");
		return (KP_EIO);
	}
	return (0);
}

/* Device i of claim 0 with the given requests, added as a hook adds one. */
static void
device(struct dra_result *c, size_t i, const char *dev, const char *r0,
    const char *r1)
{
	struct kp_prepared_device	 pd = { KP_PREPARED_DEVICE_INIT };
	const char			*reqs[2], *ids[1] = { "drv/x=1" };
	size_t				 n = 0;

	if (r0 != NULL)
		reqs[n++] = r0;
	if (r1 != NULL)
		reqs[n++] = r1;
	pd.request_names = reqs;
	pd.n_request_names = n;
	pd.pool_name = "pool";
	pd.device_name = dev;
	pd.cdi_device_ids = ids;
	pd.n_cdi_device_ids = 1;
	CHECK_EQ(dra_result_add(c, &pd), 0);
	CHECK_EQ(c->n_devices, i + 1);
}

static void
setup(struct dra_results *r, struct kp_claim *cl)
{
	CHECK_EQ(dra_results_init(r, 1, NULL, NULL), 0);
	r->n_hook = 1;
	r->claims[0].uid = "u-1";
	device(&r->claims[0], 0, "a", "req-0", NULL);
	device(&r->claims[0], 1, "b", "req-0", "req-1");
	device(&r->claims[0], 2, "c", "req-1", NULL);
	device(&r->claims[0], 3, "d", NULL, NULL);	/* in no request */
	memset(cl, 0, sizeof(*cl));
	cl->namespace_ = "ns";
	cl->name = "claim";
	cl->uid = "u-1";
}

static char	 bad_name[] = "Bad_Name";

static void
test_steps(void)
{
	struct kp_options	*o;
	struct dra_ctx		 ctx;
	struct dra_results	 r;
	struct kp_claim		 cl;
	struct kp_hooks		 hooks;
	struct fake		 f;
	struct dra_claim_alloc	 al;
	const char		*v[] = { V1A1 };

	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, "drv"), 0);
	CHECK_EQ(kp_device_metadata(o, 1, v, 1), 0);
	memset(&hooks, 0, sizeof(hooks));
	CHECK_EQ(dra_init(&ctx, o, &hooks), 0);
	memset(&f, 0, sizeof(f));
	ctx.md_write = fake_write;
	ctx.md_remove = fake_remove;
	ctx.md_user = &f;

	setup(&r, &cl);
	md_prepare(&ctx, &cl, NULL, &r);
	CHECK(r.claims[0].error == NULL);
	CHECK_EQ(f.writes, 2);	/* req-0 and req-1, once each */
	CHECK_CONTAINS(f.last, "ns/claim/u-1/req-1//");
	CHECK_EQ(r.claims[0].devices[0].n_cdi_ids, 2);
	CHECK_STREQ(r.claims[0].devices[0].cdi_ids[1],
	    "drv/metadata=u-1_req-0");
	CHECK_EQ(r.claims[0].devices[1].n_cdi_ids, 2);
	CHECK_STREQ(r.claims[0].devices[1].cdi_ids[1],
	    "drv/metadata=u-1_req-1");
	CHECK_EQ(r.claims[0].devices[2].n_cdi_ids, 1);
	CHECK_EQ(r.claims[0].devices[3].n_cdi_ids, 1);
	dra_results_free(&r);

	/* a failed write fails the claim (its devices dropped) */
	setup(&r, &cl);
	f.fail_request = "req-1";
	md_prepare(&ctx, &cl, NULL, &r);
	CHECK_CONTAINS(r.claims[0].error, "write device metadata for request "
	    "req-1: disk full");
	CHECK_EQ(r.claims[0].n_devices, 0);
	dra_results_free(&r);
	f.fail_request = NULL;

	/* a template's claim: the pod's name for it goes along */
	setup(&r, &cl);
	memset(&al, 0, sizeof(al));
	al.pod_claim_name = "my-gpu";
	md_prepare(&ctx, &cl, &al, &r);
	CHECK_CONTAINS(f.last, "ns/claim/u-1/req-1/my-gpu/");
	dra_results_free(&r);

	/* a request name that is no DNS label: never sent */
	setup(&r, &cl);
	/* (a device is one block: point its name elsewhere) */
	r.claims[0].devices[0].request_names[0] = bad_name;
	f.writes = 0;
	md_prepare(&ctx, &cl, NULL, &r);
	CHECK_EQ(f.writes, 0);
	CHECK_CONTAINS(r.claims[0].error, "request \"Bad_Name\": the request "
	    "name is not a DNS label");
	dra_results_free(&r);

	/* a claim the hook failed gets no metadata, and is not cleaned */
	setup(&r, &cl);
	CHECK_EQ(dra_result_fail(&r, 0, "hook said no"), 0);
	f.writes = 0;
	md_prepare(&ctx, &cl, NULL, &r);
	CHECK_EQ(f.writes, 0);
	md_unprepare(&ctx, &cl, &r);
	CHECK_EQ(f.removes, 0);
	dra_results_free(&r);

	/* unprepare: removal failure is the claim's error */
	CHECK_EQ(dra_results_init(&r, 1, NULL, NULL), 0);
	r.n_hook = 1;
	r.claims[0].uid = "u-1";
	md_unprepare(&ctx, &cl, &r);
	CHECK_EQ(f.removes, 1);
	CHECK(r.claims[0].error == NULL);
	f.fail_remove = 1;
	md_unprepare(&ctx, &cl, &r);
	CHECK_STREQ(r.claims[0].error, "clean up device metadata: remove "
	    "metadata directory x: busy");
	dra_results_free(&r);
	dra_free(&ctx);
	kp_options_free(o);
}

/* A prepare hook that adds one device and gives it attributes. */
static int	 hook_rc[8];
static size_t	 hook_case;

static int
attr_hook(void *user, const struct kp_claim *c, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	static const int64_t	 iv[] = { -1, 2 };
	static const int	 bv[] = { 1, 0 };
	static const char	*sv[] = { "x\"y" };
	static const char	*ips[] = { "10.0.0.2/24", "<v6>" };
	struct kp_prepared_device d;
	const char		*reqs[] = { "req" };
	const struct kp_attribute good[] = {
		KP_ATTR_STRING("z.example.com/last", "<z>"),
		KP_ATTR_INTS("a", iv, 2),
		KP_ATTR_BOOLS("m", bv, 2),
		KP_ATTR_STRINGS("s", sv, 1),
		KP_ATTR_INT("i", -9223372036854775807LL - 1),
	};
	struct kp_attribute	 bad[2] = { KP_ATTR_INT("i", 1),
		KP_ATTR_INT("i", 2) };

	(void)user;
	(void)c;
	(void)n;
	(void)errbuf;
	(void)errsize;
	memset(&d, 0, sizeof(d));
	d.struct_size = sizeof(d);
	d.pool_name = "p";
	d.device_name = "dev";
	d.request_names = reqs;
	d.n_request_names = 1;
	hook_rc[0] = kp_prepare_add_device(res, 0, &d);
	switch (hook_case) {
	case 0:
		hook_rc[1] = kp_prepare_device_metadata(res, 0, "p", "dev",
		    good, 5);
		break;
	case 1:		/* a repeated name */
		hook_rc[1] = kp_prepare_device_metadata(res, 0, "p", "dev",
		    bad, 2);
		break;
	case 2:		/* a device not added */
		hook_rc[1] = kp_prepare_device_metadata(res, 0, "p", "other",
		    good, 1);
		break;
	case 3:		/* struct_size not set */
		bad[0].struct_size = 0;
		hook_rc[1] = kp_prepare_device_metadata(res, 0, "p", "dev",
		    bad, 1);
		break;
	case 5:		/* network data, after the attributes */
		hook_rc[1] = kp_prepare_device_metadata(res, 0, "p", "dev",
		    good, 1);
		hook_rc[2] = kp_prepare_device_network_data(res, 0, "p",
		    "dev", "eth0", ips, 2, "");
		break;
	case 6:		/* network data alone, nothing set: {} */
		hook_rc[1] = kp_prepare_device_network_data(res, 0, "p",
		    "dev", NULL, NULL, 0, NULL);
		break;
	case 7:		/* a control character */
		hook_rc[1] = kp_prepare_device_network_data(res, 0, "p",
		    "dev", "eth\n0", NULL, 0, NULL);
		break;
	case 4:		/* an unknown type, a bad index */
		bad[0].type = (enum kp_attribute_type)42;
		hook_rc[2] = kp_prepare_device_metadata(res, 5, "p", "dev",
		    bad, 1);
		hook_rc[1] = kp_prepare_device_metadata(res, 0, "p", "dev",
		    bad, 1);
		break;
	}
	return (0);
}

static char	 captured[4096];

static int
capture_write(void *user, const char *ns, const char *name, const char *uid,
    const char *request, const char *pod, const char *content, size_t len,
    char *err, size_t errsize)
{
	(void)user;
	(void)ns;
	(void)name;
	(void)uid;
	(void)request;
	(void)pod;
	(void)err;
	(void)errsize;
	snprintf(captured, sizeof(captured), "%.*s", (int)len, content);
	return (0);
}

static const char attrs_golden[] =
    "          \"name\": \"dev\",\n"
    "          \"attributes\": {\n"
    "            \"a\": {\n"
    "              \"ints\": [\n"
    "                -1,\n"
    "                2\n"
    "              ]\n"
    "            },\n"
    "            \"i\": {\n"
    "              \"int\": -9223372036854775808\n"
    "            },\n"
    "            \"m\": {\n"
    "              \"bools\": [\n"
    "                true,\n"
    "                false\n"
    "              ]\n"
    "            },\n"
    "            \"s\": {\n"
    "              \"strings\": [\n"
    "                \"x\\\"y\"\n"
    "              ]\n"
    "            },\n"
    "            \"z.example.com/last\": {\n"
    "              \"string\": \"\\u003cz\\u003e\"\n"
    "            }\n"
    "          }\n"
    "        }\n"
    "      ]\n";

static const char net_golden[] =
    "          \"name\": \"dev\",\n"
    "          \"attributes\": {\n"
    "            \"z.example.com/last\": {\n"
    "              \"string\": \"\\u003cz\\u003e\"\n"
    "            }\n"
    "          },\n"
    "          \"networkData\": {\n"
    "            \"interfaceName\": \"eth0\",\n"
    "            \"ips\": [\n"
    "              \"10.0.0.2/24\",\n"
    "              \"\\u003cv6\\u003e\"\n"
    "            ]\n"
    "          }\n"
    "        }\n";

static void
test_attributes(void)
{
	static const char *const want[] = { NULL,
	    "kp_prepare_device_metadata: name: repeated",
	    "kp_prepare_device_metadata: no such device in this claim",
	    "kp_prepare_device_metadata: struct_size: initialise with "
	    "KP_ATTRIBUTE_INIT",
	    "kp_prepare_device_metadata: type: unknown", NULL, NULL,
	    "kp_prepare_device_network_data: interface_name: UTF-8" };
	struct kp_options	*o;
	struct kp_hooks		 hooks;
	struct kp_claim		 cl;
	struct dra_ctx		 ctx;
	struct dra_results	 r;
	const char		*v[] = { V1A1 };
	char			 err[KP_ERROR_SIZE];

	CHECK_EQ(kp_prepare_device_metadata(NULL, 0, "p", "d", NULL, 0),
	    KP_EINVAL);
	CHECK_EQ(kp_options_new(&o), 0);
	CHECK_EQ(kp_driver_name(o, "drv"), 0);
	CHECK_EQ(kp_device_metadata(o, 1, v, 1), 0);
	memset(&hooks, 0, sizeof(hooks));
	hooks.prepare = attr_hook;
	CHECK_EQ(dra_init(&ctx, o, &hooks), 0);
	ctx.md_write = capture_write;
	ctx.md_remove = fake_remove;
	memset(&cl, 0, sizeof(cl));
	cl.namespace_ = "ns";
	cl.name = "c";
	cl.uid = "u";
	for (hook_case = 0; hook_case < 8; hook_case++) {
		memset(hook_rc, 0, sizeof(hook_rc));
		captured[0] = '\0';
		CHECK_EQ(dra_results_init(&r, 1, NULL, NULL), 0);
		r.n_hook = 1;
		r.claims[0].uid = "u";
		CHECK_EQ(dra_hook_call(&hooks, 1, &cl, &r, err, sizeof(err)),
		    0);
		CHECK_EQ(hook_rc[0], 0);
		md_prepare(&ctx, &cl, NULL, &r);
		if (want[hook_case] == NULL) {
			CHECK_EQ(hook_rc[1], 0);
			CHECK(r.claims[0].error == NULL);
			CHECK_CONTAINS(captured, hook_case == 0 ? attrs_golden :
			    hook_case == 5 ? net_golden : "          "
			    "\"name\": \"dev\",\n          \"networkData\": "
			    "{}\n        }\n");
			if (hook_case == 5)
				CHECK_EQ(hook_rc[2], 0);
		} else {
			CHECK_EQ(hook_rc[1], KP_EINVAL);
			CHECK_CONTAINS(r.claims[0].error, want[hook_case]);
			CHECK_STREQ(captured, "");	/* nothing written */
		}
		if (hook_case == 4)
			CHECK_EQ(hook_rc[2], KP_EINVAL);
		dra_results_free(&r);
	}
	dra_free(&ctx);
	kp_options_free(o);
}

static void
test_frames(void)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__MetadataWrite	 w = KPIPC__METADATA_WRITE__INIT;
	Kpipc__MetadataRemove	 rm = KPIPC__METADATA_REMOVE__INIT;
	char			 err[KP_ERROR_SIZE];
	static uint8_t		 big[KP_IPC_MAX_METADATA + 1];

	w.namespace_ = "default";
	w.name = "claim.x";
	w.uid = "0b6d1a4e-1111-4222-8333-944455556666";
	w.request = "req-0";
	w.content.data = (uint8_t *)"{}";
	w.content.len = 2;
	m.m_case = KPIPC__MSG__M_METADATA_WRITE;
	m.metadata_write = &w;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	w.pod_claim_name = "my-gpu";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	w.pod_claim_name = "../x";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "metadata_write.pod_claim_name");
	w.pod_claim_name = "";
	w.request = "..";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "metadata_write.request \"..\": not a DNS label");
	w.request = "req-0";
	w.namespace_ = "a/b";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	w.namespace_ = "default";
	w.name = "..";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	w.name = "claim";
	w.uid = "-x";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	w.uid = "u";
	w.content.data = big;
	w.content.len = sizeof(big);
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "metadata_write.content: longer than");

	rm.namespace_ = "default";
	rm.name = "claim";
	rm.uid = "u";
	m.m_case = KPIPC__MSG__M_METADATA_REMOVE;
	m.metadata_remove = &rm;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	rm.name = "a/../b";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);

	/* only the nodeserver, only once it serves */
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_METADATA_WRITE, err, sizeof(err)), 0);
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_STARTING,
	    KPIPC__MSG__M_METADATA_WRITE, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_PUBLISHER, CS_READY,
	    KPIPC__MSG__M_METADATA_REMOVE, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_DRIVER, CS_READY,
	    KPIPC__MSG__M_METADATA_WRITE, err, sizeof(err)), KP_EPROTO);
	CHECK_STREQ(ipc_case_name(KPIPC__MSG__M_METADATA_WRITE),
	    "metadata_write");
}

/* kp_update_request_metadata: its frame, its rule, the shared encoder. */
static void
test_update(void)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__MetadataUpdate	 u = KPIPC__METADATA_UPDATE__INIT;
	Kpipc__MetadataDevice	 d = KPIPC__METADATA_DEVICE__INIT, *dp = &d;
	Kpipc__MetadataDevice	*many[KP_IPC_MAX_METADATA_DEVICES + 1];
	size_t			 i;
	struct kp_attribute	 a[] = { KP_ATTR_INT("b", 1),
				    KP_ATTR_STRING("a", "x<y") };
	struct md_buf		 b = { NULL, 0, 0, 0 };
	struct kp_metadata_device md = { KP_METADATA_DEVICE_INIT };
	char			 err[KP_ERROR_SIZE];

	/* the driver side renders with the nodeserver's encoder: sorted */
	CHECK(md_attrs_json(&b, a, 2) == NULL);
	CHECK_STREQ(b.p, "          \"attributes\": {\n"
	    "            \"a\": {\n              \"string\": \"x\\u003cy\"\n"
	    "            },\n"
	    "            \"b\": {\n              \"int\": 1\n            }\n"
	    "          }");
	free(b.p);
	memset(&b, 0, sizeof(b));
	a[0].name = "a";
	CHECK_STREQ(md_attrs_json(&b, a, 2), "name: repeated");
	CHECK_STREQ(md_attrs_json(&b, a, 0), "1 to 32 attributes");
	CHECK_STREQ(md_net_json(&b, NULL, NULL, 17, NULL),
	    "ips: at most 16, not NULL with a count");
	CHECK(b.p == NULL);

	/* arguments: refused before any request */
	CHECK_EQ(kp_update_request_metadata(NULL, "default", "c", "u", "r",
	    &md, 1), KP_EINVAL);

	d.pool = "pool-a";
	d.device = "dev-0";
	d.attributes = "";
	d.network_data = "";
	u.namespace_ = "default";
	u.name = "claim";
	u.uid = "0b6d1a4e-1111-4222-8333-944455556666";
	u.request = "req-0/sub-1";
	u.devices = &dp;
	u.n_devices = 1;
	m.m_case = KPIPC__MSG__M_METADATA_UPDATE;
	m.metadata_update = &u;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), 0);
	u.request = "req-0/../x";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "metadata_update.request");
	u.request = "req-0";
	d.device = "../x";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "metadata_update.devices[0].device");
	d.device = "dev-0";
	d.attributes = "\xff";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "not UTF-8");
	d.attributes = "";
	u.namespace_ = "a/b";
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	u.namespace_ = "default";
	for (i = 0; i < KP_IPC_MAX_METADATA_DEVICES + 1; i++)
		many[i] = &d;
	u.devices = many;
	u.n_devices = KP_IPC_MAX_METADATA_DEVICES + 1;
	CHECK_EQ(ipc_check(&m, err, sizeof(err)), KP_EPROTO);
	CHECK_CONTAINS(err, "metadata_update.devices: more than 128");

	/* from the driver process only: a child sending it is a violation */
	CHECK_EQ(ipc_rule_check(ROLE_DRIVER, CS_READY,
	    KPIPC__MSG__M_METADATA_UPDATE, err, sizeof(err)), 0);
	CHECK_EQ(ipc_rule_check(ROLE_NODESERVER, CS_READY,
	    KPIPC__MSG__M_METADATA_UPDATE, err, sizeof(err)), KP_EPROTO);
	CHECK_EQ(ipc_rule_check(ROLE_PUBLISHER, CS_READY,
	    KPIPC__MSG__M_METADATA_UPDATE, err, sizeof(err)), KP_EPROTO);
	CHECK_STREQ(ipc_case_name(KPIPC__MSG__M_METADATA_UPDATE),
	    "metadata_update");
}

int
main(void)
{
	test_strings();
	test_encode();
	test_option();
	test_steps();
	test_attributes();
	test_frames();
	test_update();
	return (test_done("test_metadata"));
}
