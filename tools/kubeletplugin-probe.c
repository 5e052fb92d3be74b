/*
 * kubeletplugin-probe - an exec probe for a DRA kubelet plugin, for
 * clusters that forbid host ports (docs/health-and-metrics.md): it does
 * what kubelet does to find the plugin, a GetInfo round trip on the
 * registration socket, and connects to the DRA socket. Exit codes:
 *
 *	0	ok
 *	2	a socket file is missing (or is not a socket)
 *	3	a socket refused the connection (nothing serves it)
 *	4	GetInfo failed or timed out
 *	5	GetInfo named another driver, or a type other than DRAPlugin
 *	64	usage
 *
 * It uses the gRPC C core as a client, as kubelet's plugin watcher does
 * with grpc-go, so it runs as any client would (as root, kubelet's uid,
 * which the plugin admits by default).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include "kubeletplugin.h"
#include "pluginregistration.pb-c.h"

#define EXIT_MISSING	2
#define EXIT_CONNECT	3
#define EXIT_GETINFO	4
#define EXIT_NAME	5
#define EXIT_USAGE	64

static int	 quiet;

static void
usage(FILE *f)
{
	fprintf(f,
"usage: kubeletplugin-probe --registrar-socket PATH [options]\n"
"       kubeletplugin-probe --driver-name NAME [--kubelet-dir DIR] [options]\n"
"Checks a DRA kubelet plugin as kubelet finds it: a GetInfo call on the\n"
"registration socket, then a connection to the DRA socket.\n"
"  --registrar-socket PATH  registration socket (default:\n"
"                           DIR/plugins_registry/NAME-reg.sock)\n"
"  --plugin-socket PATH     DRA socket (default: the endpoint GetInfo\n"
"                           returns)\n"
"  --driver-name NAME       the name GetInfo must return (checked if given)\n"
"  --kubelet-dir DIR        kubelet root (/var/lib/kubelet)\n"
"  --pod-uid UID            the instance's pod UID (kp_rolling_update): its\n"
"                           own registration socket name\n"
"  --pod-uid-env NAME       the same from environment variable NAME (exec\n"
"                           probes: kubelet expands no fieldRef there);\n"
"                           unset or empty: no rolling update\n"
"  --timeout-ms N           GetInfo deadline (1000, as kubelet's)\n"
"  -q, --quiet              no message on failure\n"
"  -h, --help               this text\n"
"Exit codes: 0 ok; 2 socket missing; 3 connection refused; 4 GetInfo\n"
"failed or timed out; 5 wrong driver name or type; 64 usage.\n");
}

static int	fail(int, const char *, ...) __attribute__((format(printf, 2, 3)));

static int
fail(int code, const char *fmt, ...)
{
	va_list	 ap;

	if (!quiet) {
		fputs("kubeletplugin-probe: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	return (code);
}

/* A Unix-socket connect, as the plugin watcher's dial: 0 or an exit code. */
static int
probe_connect(const char *what, const char *path)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	int			 fd, e;

	if (stat(path, &st) == -1)
		return (fail(EXIT_MISSING, "%s %s: %s", what, path,
		    strerror(errno)));
	if (!S_ISSOCK(st.st_mode))
		return (fail(EXIT_MISSING, "%s %s: not a socket", what, path));
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return (fail(EXIT_USAGE, "%s %s: path too long", what, path));
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (fail(EXIT_CONNECT, "socket: %s", strerror(errno)));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		e = errno;
		close(fd);
		return (fail(EXIT_CONNECT, "%s %s: connect: %s", what, path,
		    strerror(e)));
	}
	close(fd);
	return (0);
}

/* GetInfo on path within ms; *info on success (free it). */
static int
get_info(const char *path, int ms, Pluginregistration__PluginInfo **info)
{
	grpc_channel_credentials	*creds;
	grpc_channel			*ch;
	grpc_completion_queue		*cq;
	grpc_call			*call;
	grpc_metadata_array		 md_in, trailers;
	grpc_byte_buffer		*req, *resp = NULL;
	grpc_byte_buffer_reader		 rd;
	grpc_slice			 method, details, empty, all;
	grpc_status_code		 status = GRPC_STATUS_UNKNOWN;
	grpc_op				 ops[6];
	grpc_event			 ev;
	gpr_timespec			 deadline;
	char				 target[4200];
	int				 code = 0;

	snprintf(target, sizeof(target), "unix:%s", path);
	creds = grpc_insecure_credentials_create();
	ch = grpc_channel_create(target, creds, NULL);
	grpc_channel_credentials_release(creds);
	cq = grpc_completion_queue_create_for_next(NULL);
	method = grpc_slice_from_static_string(
	    "/pluginregistration.Registration/GetInfo");
	deadline = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
	    gpr_time_from_millis(ms, GPR_TIMESPAN));
	call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
	    method, NULL, deadline, NULL);
	empty = grpc_empty_slice();
	req = grpc_raw_byte_buffer_create(&empty, 1);
	grpc_metadata_array_init(&md_in);
	grpc_metadata_array_init(&trailers);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = req;
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[3].data.recv_initial_metadata.recv_initial_metadata = &md_in;
	ops[4].op = GRPC_OP_RECV_MESSAGE;
	ops[4].data.recv_message.recv_message = &resp;
	ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[5].data.recv_status_on_client.trailing_metadata = &trailers;
	ops[5].data.recv_status_on_client.status = &status;
	ops[5].data.recv_status_on_client.status_details = &details;
	if (grpc_call_start_batch(call, ops, 6, (void *)1, NULL) !=
	    GRPC_CALL_OK)
		code = fail(EXIT_GETINFO, "GetInfo: cannot start the call");
	else {
		ev = grpc_completion_queue_next(cq,
		    gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		if (ev.type != GRPC_OP_COMPLETE || !ev.success)
			code = fail(EXIT_GETINFO, "GetInfo: call failed");
		else if (status != GRPC_STATUS_OK) {
			char *d = grpc_slice_to_c_string(details);

			code = fail(EXIT_GETINFO, "GetInfo on %s: status %d%s%s",
			    path, (int)status, d[0] ? ": " : "", d);
			gpr_free(d);
		} else if (resp == NULL)
			code = fail(EXIT_GETINFO, "GetInfo: no response");
		grpc_slice_unref(details);
	}
	if (code == 0) {
		grpc_byte_buffer_reader_init(&rd, resp);
		all = grpc_byte_buffer_reader_readall(&rd);
		grpc_byte_buffer_reader_destroy(&rd);
		*info = pluginregistration__plugin_info__unpack(NULL,
		    GRPC_SLICE_LENGTH(all), GRPC_SLICE_START_PTR(all));
		grpc_slice_unref(all);
		if (*info == NULL)
			code = fail(EXIT_GETINFO, "GetInfo: malformed "
			    "PluginInfo");
	}
	if (resp != NULL)
		grpc_byte_buffer_destroy(resp);
	grpc_byte_buffer_destroy(req);
	grpc_metadata_array_destroy(&md_in);
	grpc_metadata_array_destroy(&trailers);
	grpc_call_unref(call);
	grpc_channel_destroy(ch);
	grpc_completion_queue_shutdown(cq);
	while (grpc_completion_queue_next(cq, gpr_inf_future(
	    GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN)
		;
	grpc_completion_queue_destroy(cq);
	return (code);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "registrar-socket", required_argument, NULL, 'r' },
		{ "plugin-socket", required_argument, NULL, 'p' },
		{ "driver-name", required_argument, NULL, 'd' },
		{ "kubelet-dir", required_argument, NULL, 'k' },
		{ "pod-uid", required_argument, NULL, 'u' },
		{ "pod-uid-env", required_argument, NULL, 'e' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	Pluginregistration__PluginInfo	*info = NULL;
	const char	*reg = NULL, *plug = NULL, *name = NULL;
	const char	*kdir = "/var/lib/kubelet", *uid = NULL;
	char		 regbuf[4096], file[128], *end;
	long		 ms = 1000;
	int		 ch, code;

	while ((ch = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
		switch (ch) {
		case 'r': reg = optarg; break;
		case 'p': plug = optarg; break;
		case 'd': name = optarg; break;
		case 'k': kdir = optarg; break;
		case 'u': uid = optarg; break;
		case 'e':
			uid = getenv(optarg);
			if (uid != NULL && uid[0] == '\0')
				uid = NULL;
			break;
		case 't':
			ms = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || ms < 1 ||
			    ms > 600000)
				return (fail(EXIT_USAGE, "--timeout-ms: want "
				    "1..600000"));
			break;
		case 'q': quiet = 1; break;
		case 'h':
			usage(stdout);
			return (0);
		default:
			usage(stderr);
			return (EXIT_USAGE);
		}
	}
	if (optind != argc || (reg == NULL && name == NULL)) {
		usage(stderr);
		return (EXIT_USAGE);
	}
	if (reg == NULL) {
		/* As kp_start() names it (upstream's socket names). */
		snprintf(regbuf, sizeof(regbuf), "%s/plugins_registry", kdir);
		if (uid == NULL)
			snprintf(file, sizeof(file), "%s-reg.sock", name);
		else if (kp_rolling_update_registrar_socket_file(regbuf, name,
		    uid, file, sizeof(file)) != 0)
			return (fail(EXIT_USAGE, "--pod-uid %s with driver %s "
			    "and %s: not a valid name", uid, name, regbuf));
		snprintf(regbuf + strlen(regbuf), sizeof(regbuf) -
		    strlen(regbuf), "/%s", file);
		reg = regbuf;
	}
	if ((code = probe_connect("registration socket", reg)) != 0) {
		/* The derived name is the single-instance one: a DaemonSet
		 * in a rolling update names its sockets by the pod UID. */
		if (code == EXIT_MISSING && reg == regbuf && uid == NULL)
			fail(code, "under rolling updates (kp_rolling_update) "
			    "each instance has its own socket: pass --pod-uid "
			    "or --pod-uid-env");
		return (code);
	}
	grpc_init();
	code = get_info(reg, (int)ms, &info);
	grpc_shutdown();
	if (code != 0)
		return (code);
	if (strcmp(info->type, "DRAPlugin") != 0)
		code = fail(EXIT_NAME, "GetInfo: type %s, not DRAPlugin",
		    info->type);
	else if (name != NULL && strcmp(info->name, name) != 0)
		code = fail(EXIT_NAME, "GetInfo: driver %s, not %s", info->name,
		    name);
	else
		code = probe_connect("DRA socket", plug != NULL ? plug :
		    info->endpoint);
	pluginregistration__plugin_info__free_unpacked(info, NULL);
	return (code);
}
