/*
 * fuzz_registration.c - libFuzzer target for the registrar's decoders of
 * what kubelet sends on pluginregistration.Registration: the input goes to
 * both method handlers of reg_methods() (GetInfo's InfoRequest and
 * NotifyRegistrationStatus's RegistrationStatus; no gRPC call: the reply
 * is refused as for a call already answered) and to the call-logging
 * renderers of both methods, request and response, with several output
 * sizes. The PluginInfo comes from reg_info_build() with a version set
 * taken from the input's length.
 * Invariants checked (trap on a breach):
 *  - a RegistrationStatus that decodes is relayed as exactly one frame the
 *    supervisor accepts from the registrar in state READY (ipc_next with
 *    the registrar's 16 KiB cap, then ipc_rule_check), carrying the same
 *    verdict and a prefix of kubelet's error text; one that does not
 *    decode relays nothing;
 *  - every rendering is NUL-terminated within its size, and our own
 *    PluginInfo renders as {type:"DRAPlugin",...}.
 * Run: ./tests/fuzz/fuzz_registration -max_total_time=60 corpus/
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/ipc.h"
#include "base/log.h"
#include "pluginregistration.pb-c.h"
#include "registrar/registrar.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
silent(void *user, enum kp_log_level level, int verbosity, const char *role,
    const char *msg)
{
}

static void
check_text(const char *s, size_t size)
{
	if (memchr(s, '\0', size) == NULL)
		__builtin_trap();
}

/* Every renderer of both methods on the same bytes. */
static void
render(const struct rpc_method *m, size_t n, const uint8_t *data,
    size_t size)
{
	static const size_t	 sizes[] = { 1, 8, 40, 256, 8192 };
	char			*out;
	size_t			 i, k;

	if ((out = malloc(8192)) == NULL)
		return;
	for (i = 0; i < n; i++)
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			memset(out, 'x', sizes[k]);
			m[i].format_request(data, size, out, sizes[k]);
			check_text(out, sizes[k]);
			memset(out, 'x', sizes[k]);
			m[i].format_response(data, size, out, sizes[k]);
			check_text(out, sizes[k]);
		}
	free(out);
}

/* What reg_notify() relayed: nothing, or one acceptable RegStatus. */
static void
relayed(int fd, const uint8_t *data, size_t size)
{
	Pluginregistration__RegistrationStatus	*st;
	struct ipc_chan				 c;
	Kpipc__Msg				*m = NULL;
	char					 err[KP_ERROR_SIZE];
	int					 r;

	/* As the registrar decodes it (ipc_wire_check first). */
	st = ipc_wire_check(&pluginregistration__registration_status__descriptor,
	    data, size, err, sizeof(err)) != 0 ? NULL :
	    pluginregistration__registration_status__unpack(NULL, size, data);
	ipc_chan_init(&c, fd, KP_IPC_SMALL_FRAME);
	r = ipc_read(&c);
	if (st == NULL) {
		if (r != 0)
			__builtin_trap();
		c.fd = -1;
		ipc_chan_close(&c);
		return;
	}
	if (r <= 0 || ipc_next(&c, &m, err, sizeof(err)) != 1 ||
	    c.rlen != 0 || m->m_case != KPIPC__MSG__M_REG_STATUS ||
	    ipc_rule_check(ROLE_REGISTRAR, CS_READY, m->m_case, err,
	    sizeof(err)) != 0 ||
	    m->reg_status->registered != st->plugin_registered ||
	    strncmp(m->reg_status->error, st->error,
	    strlen(m->reg_status->error)) != 0)
		__builtin_trap();
	ipc_free(m);
	pluginregistration__registration_status__free_unpacked(st, NULL);
	c.fd = -1;
	ipc_chan_close(&c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int		 sv[2] = { -1, -1 };
	static struct ipc_chan	 ctl;
	static struct reg_state	 rs;
	struct kp_options	 cfg;
	struct rpc_method	 m[2];
	char			 out[512];
	size_t			 n;

	if (sv[0] == -1) {
		log_init(100, silent, NULL);
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
		    sv) == -1)
			return (0);
		ipc_chan_init(&ctl, sv[0], KP_IPC_SMALL_FRAME);
		rs.ctl = &ctl;
		pthread_mutex_init(&rs.ctl_lock, NULL);
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.driver_name = "gpu.example.com";
	cfg.plugin_socket_path = "/var/lib/kubelet/plugins/gpu/dra.sock";
	cfg.v1alpha4 = size & 1;
	cfg.v1beta1 = size >> 1 & 1;
	cfg.v1 = size >> 2 & 1;
	if (reg_info_build(&rs, &cfg) != 0)
		return (0);
	n = reg_methods(&rs, m);
	m[0].handler(m[0].user, NULL, data, size);
	m[1].handler(m[1].user, NULL, data, size);
	relayed(sv[1], data, size);
	render(m, n, data, size);

	/* Our own answer renders as what it is. */
	m[0].format_response(rs.info, rs.info_len, out, sizeof(out));
	if (strncmp(out, "{type:\"DRAPlugin\",name:\"gpu.example.com\"",
	    40) != 0)
		__builtin_trap();
	free(rs.info);
	rs.info = NULL;
	return (0);
}
