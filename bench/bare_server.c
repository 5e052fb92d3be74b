/*
 * bare_server - the benchmarks' baseline: a minimal gRPC C-core server in
 * one process and one thread of ours (a completion-queue loop), serving
 * what the kubeletplugin test driver serves, with nothing around it: no
 * supervisor, no privilege separation, no validation, no logging, no
 * interceptors, no worker threads.
 *
 *   bare_server <dra.sock> <reg.sock> [driver-name]
 *
 * /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources: unpacks
 * the request with protobuf-c and answers one device per claim, as
 * build/tests/kp_testdriver does (request "req-0", pool "pool-a", the claim
 * name as device, CDI ID "<driver>/test=<name>"), keyed by claim UID.
 * /pluginregistration.Registration/GetInfo: a PluginInfo as the registrar
 * gives (type DRAPlugin, the driver name, the DRA socket, v1beta1 and v1).
 * Both methods are served on both sockets.
 *
 * Prints "ready <pid>" once listening; SIGTERM or SIGINT stops it.
 *
 * Benchmark code: it includes <grpc/grpc.h> directly (the library's
 * one-adapter rule covers the library's directories only).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>

#include "dra_v1.pb-c.h"
#include "pluginregistration.pb-c.h"

#define PENDING	8	/* calls requested in advance, per method */

enum kind { PREPARE, GETINFO };

/* One call, from request to answer; its address is the CQ tag. */
struct call {
	enum kind		 kind;
	int			 answering;	/* 0: requested; 1: batch sent */
	grpc_call		*call;
	gpr_timespec		 deadline;
	grpc_metadata_array	 md;
	grpc_byte_buffer	*payload;
	grpc_byte_buffer	*reply;
	int			 cancelled;
};

static grpc_server		*server;
static grpc_completion_queue	*cq;
static void			*methods[2];
static const char		*driver = "test.example.com";
static const char		*dra_path;
static volatile sig_atomic_t	 quit;

static void
on_signal(int sig)
{
	quit = 1;
}

static void
request(enum kind kind)
{
	struct call	*c = calloc(1, sizeof(*c));

	if (c == NULL) {
		fprintf(stderr, "bare_server: out of memory\n");
		exit(1);
	}
	c->kind = kind;
	grpc_metadata_array_init(&c->md);
	if (grpc_server_request_registered_call(server, methods[kind],
	    &c->call, &c->deadline, &c->md, &c->payload, cq, cq, c) !=
	    GRPC_CALL_OK) {
		fprintf(stderr, "bare_server: request_registered_call\n");
		exit(1);
	}
}

static grpc_byte_buffer *
packed(size_t len, void (*pack)(const void *, uint8_t *), const void *msg)
{
	grpc_slice		 s = grpc_slice_malloc(len);
	grpc_byte_buffer	*bb;

	pack(msg, GRPC_SLICE_START_PTR(s));
	bb = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	return (bb);
}

static void
pack_prepare(const void *m, uint8_t *out)
{
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__pack(m, out);
}

static void
pack_info(const void *m, uint8_t *out)
{
	pluginregistration__plugin_info__pack(m, out);
}

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest	PrepReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse	PrepResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry Entry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse	ClaimResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device				Device;

/* The test driver's answer: one device per claim. NULL if malformed. */
static grpc_byte_buffer *
prepare(const uint8_t *req, size_t len)
{
	static char		*reqs[1] = { "req-0" };
	PrepReq			*rq;
	PrepResp		 resp =
	    K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
	Entry			*ents, **entp;
	ClaimResp		*crs, **crp;
	Device			*devs, **devp;
	char			**cdis, *cdibuf;
	grpc_byte_buffer	*bb;
	size_t			 i, n;

	rq = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__unpack(NULL, len, req);
	if (rq == NULL)
		return (NULL);
	n = rq->n_claims;
	ents = calloc(n + 1, sizeof(*ents));
	entp = calloc(n + 1, sizeof(*entp));
	crs = calloc(n + 1, sizeof(*crs));
	crp = calloc(n + 1, sizeof(*crp));
	devs = calloc(n + 1, sizeof(*devs));
	devp = calloc(n + 1, sizeof(*devp));
	cdis = calloc(n + 1, sizeof(*cdis));
	cdibuf = calloc(n + 1, 200);
	if (!ents || !entp || !crs || !crp || !devs || !devp || !cdis ||
	    !cdibuf) {
		fprintf(stderr, "bare_server: out of memory\n");
		exit(1);
	}
	for (i = 0; i < n; i++) {
		k8s__io__kubelet__pkg__apis__dra__v1__device__init(&devs[i]);
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__init(&crs[i]);
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__claims_entry__init(&ents[i]);
		cdis[i] = cdibuf + 200 * i;
		snprintf(cdis[i], 200, "%s/test=%s", driver,
		    rq->claims[i]->name);
		devs[i].n_request_names = 1;
		devs[i].request_names = reqs;
		devs[i].pool_name = "pool-a";
		devs[i].device_name = rq->claims[i]->name;
		devs[i].n_cdi_device_ids = 1;
		devs[i].cdi_device_ids = &cdis[i];
		devp[i] = &devs[i];
		crs[i].n_devices = 1;
		crs[i].devices = &devp[i];
		crp[i] = &crs[i];
		ents[i].key = rq->claims[i]->uid;
		ents[i].value = crp[i];
		entp[i] = &ents[i];
	}
	resp.n_claims = n;
	resp.claims = entp;
	bb = packed(k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__get_packed_size(&resp),
	    pack_prepare, &resp);
	k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__free_unpacked(rq, NULL);
	free(ents);
	free(entp);
	free(crs);
	free(crp);
	free(devs);
	free(devp);
	free(cdis);
	free(cdibuf);
	return (bb);
}

static grpc_byte_buffer *
get_info(const uint8_t *req, size_t len)
{
	static char			*versions[2] = { "v1beta1.DRAPlugin",
					    "v1.DRAPlugin" };
	Pluginregistration__InfoRequest	*ir;
	Pluginregistration__PluginInfo	 info =
	    PLUGINREGISTRATION__PLUGIN_INFO__INIT;

	if ((ir = pluginregistration__info_request__unpack(NULL, len,
	    req)) == NULL)
		return (NULL);
	pluginregistration__info_request__free_unpacked(ir, NULL);
	info.type = "DRAPlugin";
	info.name = (char *)driver;
	info.endpoint = (char *)dra_path;
	info.n_supported_versions = 2;
	info.supported_versions = versions;
	return (packed(pluginregistration__plugin_info__get_packed_size(&info),
	    pack_info, &info));
}

/* A requested call arrived: answer it at once, on this thread. */
static void
answer(struct call *c)
{
	grpc_byte_buffer_reader	 rd;
	grpc_slice		 in = grpc_empty_slice();
	grpc_op			 ops[4];
	grpc_status_code	 status = GRPC_STATUS_OK;
	grpc_slice		 details = grpc_empty_slice();

	request(c->kind);	/* keep PENDING calls requested */
	if (c->payload != NULL && grpc_byte_buffer_reader_init(&rd,
	    c->payload)) {
		in = grpc_byte_buffer_reader_readall(&rd);
		grpc_byte_buffer_reader_destroy(&rd);
	}
	c->reply = (c->kind == PREPARE ? prepare : get_info)(
	    GRPC_SLICE_START_PTR(in), GRPC_SLICE_LENGTH(in));
	grpc_slice_unref(in);
	if (c->reply == NULL) {
		status = GRPC_STATUS_INVALID_ARGUMENT;
		details = grpc_slice_from_static_string("malformed request");
	}
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	ops[1].data.recv_close_on_server.cancelled = &c->cancelled;
	ops[2].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[2].data.send_status_from_server.status = status;
	ops[2].data.send_status_from_server.status_details = &details;
	ops[3].op = GRPC_OP_SEND_MESSAGE;
	ops[3].data.send_message.send_message = c->reply;
	c->answering = 1;
	if (grpc_call_start_batch(c->call, ops, c->reply ? 4 : 3, c, NULL) !=
	    GRPC_CALL_OK) {
		fprintf(stderr, "bare_server: start_batch\n");
		exit(1);
	}
}

static void
done(struct call *c)
{
	if (c->payload != NULL)
		grpc_byte_buffer_destroy(c->payload);
	if (c->reply != NULL)
		grpc_byte_buffer_destroy(c->reply);
	grpc_metadata_array_destroy(&c->md);
	if (c->call != NULL)
		grpc_call_unref(c->call);
	free(c);
}

static int
listen_on(const char *path)
{
	grpc_server_credentials	*cr = grpc_insecure_server_credentials_create();
	char			 addr[300];
	int			 r;

	snprintf(addr, sizeof(addr), "unix:%s", path);
	unlink(path);
	r = grpc_server_add_http2_port(server, addr, cr);
	grpc_server_credentials_release(cr);
	return (r);
}

int
main(int argc, char **argv)
{
	grpc_arg		 arg;
	grpc_channel_args	 args;
	grpc_event		 ev;
	struct call		*c;
	int			 i, shutting = 0;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: bare_server dra.sock reg.sock "
		    "[driver-name]\n");
		return (2);
	}
	dra_path = argv[1];
	if (argc == 4)
		driver = argv[3];
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	grpc_init();
	/* as the library's adapter: grpc-go's 4 MiB receive limit */
	arg.type = GRPC_ARG_INTEGER;
	arg.key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
	arg.value.integer = 4 * 1024 * 1024;
	args.num_args = 1;
	args.args = &arg;
	server = grpc_server_create(&args, NULL);
	cq = grpc_completion_queue_create_for_next(NULL);
	grpc_server_register_completion_queue(server, cq, NULL);
	methods[PREPARE] = grpc_server_register_method(server,
	    "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
	    NULL, GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
	methods[GETINFO] = grpc_server_register_method(server,
	    "/pluginregistration.Registration/GetInfo", NULL,
	    GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
	if (!listen_on(argv[1]) || !listen_on(argv[2])) {
		fprintf(stderr, "bare_server: cannot listen\n");
		return (1);
	}
	grpc_server_start(server);
	for (i = 0; i < PENDING; i++) {
		request(PREPARE);
		request(GETINFO);
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		if (quit && !shutting) {
			shutting = 1;
			grpc_server_shutdown_and_notify(server, cq, NULL);
			grpc_server_cancel_all_calls(server);
		}
		ev = grpc_completion_queue_next(cq,
		    gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
		    gpr_time_from_millis(200, GPR_TIMESPAN)), NULL);
		if (ev.type == GRPC_QUEUE_TIMEOUT)
			continue;
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.tag == NULL) {	/* server shut down */
			grpc_completion_queue_shutdown(cq);
			continue;
		}
		c = ev.tag;
		if (!c->answering && ev.success && !shutting)
			answer(c);
		else
			done(c);
	}
	grpc_server_destroy(server);
	grpc_completion_queue_destroy(cq);
	grpc_shutdown();
	return (0);
}
