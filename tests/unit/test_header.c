/*
 * test_header.c - kubeletplugin.h stands alone: this file includes nothing
 * else and tests/header.cmake builds it as strict ISO C11 (-std=c11
 * -pedantic -Wall -Wextra -Werror, no _GNU_SOURCE) against the shared
 * library, so every declaration must be valid C11 and every KP_EXTERN
 * function used below must be exported. (The unit-test glob also builds
 * it with the project's usual flags.)
 */
#include "kubeletplugin.h"

_Static_assert(KP_ERROR_SIZE == 256, "KP_ERROR_SIZE");
_Static_assert(KP_EINVAL < 0 && KP_ECHILD == -4000, "error codes");
_Static_assert(KP_ERRNO_MAX < KP_EHOOK, "KP_ERRNO_MAX below every code");
_Static_assert(sizeof(uid_t) > 0 && sizeof(size_t) > 0, "types");

/* The X-macro expands in user code, e.g. into a table of names. */
static const struct {
	int		 value;
	const char	*name;
} codes[] = {
#define XX(name, value, msg) { (value), "KP_" #name },
	KP_ERRNO_MAP(XX)
#undef XX
};

static int
intercept(void *user, enum kp_call_phase phase, const struct kp_call *call,
    char *msg, size_t msgsize)
{
	(void)user;
	(void)call;
	(void)msg;
	(void)msgsize;
	return (phase == KP_STREAM_SEND ? 0 : 0);
}

static void
logfn(void *user, enum kp_log_level level, int verbosity, const char *role,
    const char *msg)
{
	(void)user;
	(void)level;
	(void)verbosity;
	(void)role;
	(void)msg;
}

static int
prepare(void *user, const struct kp_claim *claims, size_t n,
    struct kp_prepare_results *res, char *errbuf, size_t errsize)
{
	static const char		*cdi[1] = { "example.com/gpu=gpu0" };
	struct kp_prepared_device	 dev = { KP_PREPARED_DEVICE_INIT };

	(void)user;
	(void)errbuf;
	(void)errsize;
	if (n == 0 || claims[0].uid == NULL)
		return (KP_EINVAL);
	dev.pool_name = "pool";
	dev.device_name = "gpu0";
	dev.cdi_device_ids = cdi;
	dev.n_cdi_device_ids = 1;
	return (kp_prepare_add_device(res, 0, &dev));
}

static int
unprepare(void *user, const struct kp_claim *claims, size_t n,
    struct kp_unprepare_results *res, char *errbuf, size_t errsize)
{
	(void)user;
	(void)claims;
	(void)n;
	(void)errbuf;
	(void)errsize;
	return (kp_unprepare_claim_error(res, 0, "not prepared"));
}

int
main(void)
{
	struct kp_options		*opts = NULL;
	struct kp_hooks			 hooks = { 0 };
	struct kp_attribute		 attr = KP_ATTR_STRING("model", "x");
	struct kp_device		 dev = { KP_DEVICE_INIT,
	    .name = "gpu0", .attributes = &attr, .n_attributes = 1 };
	struct kp_slice			 slice = { KP_SLICE_INIT,
	    .devices = &dev, .n_devices = 1 };
	struct kp_pool			 pool = { KP_POOL_INIT,
	    .name = "pool", .slices = &slice, .n_slices = 1 };
	struct kp_resources		 res = { KP_RESOURCES_INIT,
	    .pools = &pool, .n_pools = 1 };
	enum kp_registration_state	 state = KP_REGISTRATION_NONE;
	size_t				 i;
	int				 fails = 0;

	hooks.prepare = prepare;
	hooks.unprepare = unprepare;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (kp_err_name(codes[i].value)[0] != 'K' ||
		    kp_strerror(codes[i].value)[0] == '\0')
			fails++;
	if (kp_options_new(&opts) != 0)
		return (1);
	if (kp_driver_name(opts, "gpu.example.com") != 0 ||
	    kp_log_callback(opts, logfn, NULL) != 0 ||
	    kp_grpc_interceptor(opts, intercept, NULL) != 0 ||
	    kp_allowed_peer_uid(opts, (uid_t)1000) != 0)
		fails++;
	if (kp_driver_name(opts, "Bad") != KP_EINVAL ||
	    kp_options_last_error(opts)[0] == '\0')
		fails++;
	kp_options_free(opts);
	/* Reference the rest so that each symbol must resolve. */
	if (kp_stop(NULL) == 0 && kp_plugin_last_error(NULL) == NULL)
		fails++;
	if (state != KP_REGISTRATION_NONE || res.n_pools != 1 ||
	    hooks.init != NULL)
		fails++;
	(void)kp_start;
	(void)kp_registration_status;
	(void)kp_publish_resources;
	(void)kp_prepare_claim_error;
	return (fails == 0 ? 0 : 1);
}
