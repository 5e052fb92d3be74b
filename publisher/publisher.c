/*
 * publisher.c - publisher_main(): the only process that reads Kubernetes
 * credentials. It loads them, reports READY, then serves the supervisor:
 * Publish frames become the ResourceSlice controller's desired state,
 * ClaimGet frames become one GET each (claims.c) on a worker thread, and
 * the controller's progress goes back as PublishStatus.
 *
 * Threads: the main thread reads the supervisor's channel and signals;
 * a start thread discovers the API version (retrying while the API server
 * is unreachable) and starts the controller; a claims thread serves the
 * look-ups; the controller runs its own (slices.c).
 *
 * Runs in: the publisher child: its own uid, no capabilities, its own pid
 * and mount namespaces (no kubelet plugin directories), seccomp; the only
 * holder of Kubernetes credentials.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "base/log.h"
#include "policy/policy.h"
#include "publisher/publisher.h"
#include "publisher/pub.h"
#include "ipc/child.h"

#define PUB_STATUS_MS	1000	/* how often progress goes out */

/* Send a frame to the supervisor from any thread. */
int
pub_send(struct pub *p, const Kpipc__Msg *m)
{
	int	 r;

	pthread_mutex_lock(&p->ctl_lock);
	r = ipc_send(&p->env->ctl, m);
	pthread_mutex_unlock(&p->ctl_lock);
	return (r);
}

static int
pub_load_config(struct pub *p, char *err, size_t errsize)
{
	const struct kp_options	*cfg = p->env->cfg;

	if (cfg->kube_mode == KP_KUBE_IN_CLUSTER)
		return (kcfg_in_cluster(&p->kc, err, errsize));
	return (kcfg_kubeconfig(&p->kc, cfg->kubeconfig, cfg->kube_context,
	    err, errsize));
}

/* Discover the API version, then start the controller; retried with
 * backoff while the API server cannot be reached. */
/*
 * Landlock (policy/landlock.c) lets the publisher read, after the
 * sandbox, the directories of the files it re-reads: the token (every
 * 60 s), the CA and client certificate and key (curl opens them for each
 * connection). Directories, not files: a rotated token or certificate is
 * a new inode (a projected volume swaps a ..data symlink).
 */
static int
pub_allow_files(const struct kube_config *kc, char *err, size_t errsize)
{
	const char	*files[4] = { kc->token_file, kc->ca_file,
			    kc->cert_file, kc->key_file };
	char		 dir[POL_PATH_MAX], *slash;
	size_t		 i;
	int		 r;

	for (i = 0; i < 4; i++) {
		if (files[i] == NULL || files[i][0] != '/')
			continue;
		if (strlen(files[i]) >= sizeof(dir)) {
			snprintf(err, errsize, "%.160s: path too long for the "
			    "sandbox (at most %zu bytes)", files[i],
			    sizeof(dir) - 1);
			return (KP_ENAMETOOLONG);
		}
		snprintf(dir, sizeof(dir), "%s", files[i]);
		slash = strrchr(dir, '/');
		/* The file's directory (a rotated token is a new file in it);
		 * a file right under / gets only itself, never all of /. */
		if (slash == dir)
			snprintf(dir, sizeof(dir), "%s", files[i]);
		else
			*slash = '\0';
		if ((r = policy_allow_read(dir)) != 0) {
			snprintf(err, errsize, "%.160s: %s", dir,
			    kp_strerror(r));
			return (r);
		}
	}
	return (0);
}

/* The controller's Event (a pool the API server keeps rejecting). */
static void
pub_pool_event(void *user, int kind, const char *note)
{
	pub_events_post(user, kind, note);
}

static void *
pub_start_thread(void *arg)
{
	struct pub		*p = arg;
	struct slice_ctl_config	 sc;
	struct slice_ctl	*ctl;
	char			 err[KP_ERROR_SIZE], last[KP_ERROR_SIZE] = "";
	int			 delay_ms = 500, fails = 0, waited_ms = 0;

	/* One warning per distinct error (and one a minute while it
	 * lasts), not one per retry. */
	while (!p->quit) {
		if (disc_resource_version(p->http, &p->version, err,
		    sizeof(err)) == 0)
			break;
		pub_set_error(p, err);
		if (strcmp(err, last) != 0 || waited_ms >= 60000) {
			log_warnx("discovery: %s (retrying every %d s at "
			    "most)", err, 30);
			snprintf(last, sizeof(last), "%s", err);
			waited_ms = 0;
		} else
			log_info(2, "discovery: %s (retry in %d ms)", err,
			    delay_ms);
		fails++;
		pub_sleep(p, delay_ms);
		waited_ms += delay_ms;
		delay_ms = delay_ms * 2 > 30000 ? 30000 : delay_ms * 2;
	}
	if (p->quit)
		return (NULL);
	if (fails > 0)
		log_info(0, "discovery: resource.k8s.io reachable after %d "
		    "failed attempt%s", fails, fails == 1 ? "" : "s");
	pub_set_error(p, "");
	/* Claim look-ups need only the version, not the controller's first
	 * LIST: let them go ahead now. */
	pthread_mutex_lock(&p->lock);
	p->have_version = 1;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	log_info(1, "using resource.k8s.io/%s",
	    disc_version_name(p->version));
	memset(&sc, 0, sizeof(sc));
	sc.http = p->http;
	sc.version = p->version;
	sc.driver = p->env->cfg->driver_name;
	sc.node = p->env->cfg->node_name;
	sc.node_uid = p->env->cfg->node_uid;
	sc.reconcile_pool = p->env->cfg->reconcile_pool;
	sc.event = pub_pool_event;
	sc.event_user = p;
	/* Not under the lock: starting may take a while (the first LIST). */
	if (slice_ctl_start(&sc, &ctl) != 0) {
		pub_set_error(p, "cannot start the ResourceSlice controller");
		return (NULL);
	}
	pthread_mutex_lock(&p->lock);
	p->ctl = ctl;
	p->discovered = 1;
	if (p->desired != NULL)
		slice_ctl_update(p->ctl, p->desired);
	pthread_mutex_unlock(&p->lock);
	return (NULL);
}

/* The latest desired resources; the controller gets them once started. */
static void
pub_publish(struct pub *p, Kpipc__Msg *m)
{
	pthread_mutex_lock(&p->lock);
	if (p->desired_msg != NULL)
		ipc_free(p->desired_msg);
	p->desired_msg = m;
	p->desired = m->publish;
	if (p->ctl != NULL)
		slice_ctl_update(p->ctl, p->desired);
	pthread_mutex_unlock(&p->lock);
}

static void
pub_status(struct pub *p)
{
	Kpipc__Msg		 m = KPIPC__MSG__INIT;
	Kpipc__PublishStatus	 ps = KPIPC__PUBLISH_STATUS__INIT;
	struct slice_stats	 st;
	char			 recent[SL_RECENT][KP_ERROR_SIZE];
	char			*errs[SL_RECENT];
	int			 i, n = 0;

	memset(&st, 0, sizeof(st));
	pthread_mutex_lock(&p->lock);
	if (p->ctl != NULL) {
		slice_ctl_stats(p->ctl, &st);
		n = slice_ctl_errors(p->ctl, p->last_stats.errors, recent,
		    SL_RECENT);
	}
	if (st.last_error[0] == '\0')
		memcpy(st.last_error, p->last_error, sizeof(st.last_error));
	pthread_mutex_unlock(&p->lock);
	ps.last_sync = st.last_sync;
	ps.pending_pools = st.pending_pools;
	ps.creates = st.creates;
	ps.updates = st.updates;
	ps.deletes = st.deletes;
	ps.last_error = st.last_error;
	ps.publisher_running = 1;
	/* The errors since the last status (KP_ERROR_SIZE each: within
	 * what the supervisor takes, ipc/check.c). */
	for (i = 0; i < n; i++)
		errs[i] = recent[i];
	ps.errors = errs;
	ps.n_errors = (size_t)n;
	ps.error_count = st.errors;
	if (memcmp(&st, &p->last_stats, sizeof(st)) == 0)
		return;
	p->last_stats = st;
	m.m_case = KPIPC__MSG__M_PUBLISH_STATUS;
	m.publish_status = &ps;
	(void)pub_send(p, &m);
}

/* One frame from the supervisor. Returns 0, or -1 to stop. */
static int
pub_dispatch(struct pub *p, Kpipc__Msg *m)
{
	switch (m->m_case) {
	case KPIPC__MSG__M_PUBLISH:
		pub_publish(p, m);
		return (0);	/* m is kept as the desired state */
	case KPIPC__MSG__M_CLAIM_GET:
		pub_claims_queue(p, m);	/* takes m */
		return (0);
	case KPIPC__MSG__M_CLAIM_CANCEL:
		pub_claims_cancel(p, m->claim_cancel);
		ipc_free(m);
		return (0);
	case KPIPC__MSG__M_EVENT_POST:
		pub_events_post(p, m->event_post->kind, m->event_post->note);
		ipc_free(m);
		return (0);
	case KPIPC__MSG__M_PING:
		pub_pong(p, m->ping->seq);
		ipc_free(m);
		return (0);
	default:
		log_warnx("unexpected %s frame from the supervisor",
		    ipc_case_name(m->m_case));
		ipc_free(m);
		return (-1);
	}
}

static int
pub_read_ctl(struct pub *p)
{
	Kpipc__Msg	*m;
	char		 err[KP_ERROR_SIZE];
	int		 r;

	if ((r = ipc_read(&p->env->ctl)) < 0)
		return (-1);	/* supervisor gone */
	while ((r = ipc_next(&p->env->ctl, &m, err, sizeof(err))) > 0)
		if (pub_dispatch(p, m) != 0)
			return (-1);
	if (r < 0)
		log_warnx("supervisor channel: %s", err);
	return (r < 0 ? -1 : 0);
}

static int
pub_loop(struct pub *p, int sigfd)
{
	struct pollfd	 pfd[2];

	pfd[0].fd = p->env->ctl.fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = sigfd;
	pfd[1].events = POLLIN;
	while (!p->quit) {
		if (poll(pfd, 2, PUB_STATUS_MS) == -1 && errno != EINTR)
			return (KP_EXIT_SERVE);
		if (pfd[1].revents & POLLIN)
			break;
		if ((pfd[0].revents & (POLLIN | POLLHUP)) &&
		    pub_read_ctl(p) != 0)
			return (KP_EXIT_IPC);
		pub_status(p);
	}
	return (KP_EXIT_OK);
}

static int
pub_signals(void)
{
	sigset_t	 set;

	sigfillset(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	return (signalfd(-1, &set, SFD_CLOEXEC));
}

static void
pub_teardown(struct pub *p, pthread_t start)
{
	p->quit = 1;
	pthread_cond_broadcast(&p->cond);
	/* Whatever waits for a token (at a low kp_kube_api_qps, seconds)
	 * or a retry's pause ends now: the supervisor's grace is short. */
	http_client_stop(p->http);
	http_client_stop(p->http_claims);
	pthread_join(start, NULL);
	pub_claims_stop(p);
	if (p->ctl != NULL)
		slice_ctl_stop(p->ctl);
	pub_events_stop(p);
	if (p->desired_msg != NULL)
		ipc_free(p->desired_msg);
	http_client_free(p->http_claims);
	http_client_free(p->http);
	http_global_cleanup();
	kcfg_free(&p->kc);
}

/*
 * The files libcurl and the token re-read open again after the sandbox
 * (CA, client certificate and key at each connection, the token file
 * every 60 s) must be readable by this process's own uid now: fail the
 * start naming the file, rather than the first reconnect.
 */
static int
pub_files_readable(const struct pub *p, uid_t uid, gid_t gid, char *err,
    size_t errsize)
{
	const char	*f[4] = { p->kc.token_file, p->kc.ca_file,
			    p->kc.cert_file, p->kc.key_file };
	size_t		 i;
	int		 fd;

	for (i = 0; i < 4; i++) {
		if (f[i] == NULL)
			continue;
		if ((fd = open(f[i], O_RDONLY | O_CLOEXEC)) == -1) {
			snprintf(err, errsize, "sandbox: the publisher (uid "
			    "%u, gid %u) cannot read %s: %s; make it readable "
			    "for that uid or gid (docs/security.md)",
			    (unsigned)uid, (unsigned)gid, f[i],
			    strerror(errno));
			return (KP_ESANDBOX);
		}
		close(fd);
	}
	return (0);
}

int
publisher_main(struct child_env *env)
{
	Kpipc__Msg	 m = KPIPC__MSG__INIT;
	Kpipc__Ready	 ready = KPIPC__READY__INIT;
	struct pub	 p;
	struct kcfg_hide hide;
	uid_t		 uid = 0;
	gid_t		 gid = 0;
	char		 err[KP_ERROR_SIZE];
	pthread_t	 start;
	int		 sigfd, code;

	memset(&p, 0, sizeof(p));
	p.env = env;
	p.driver = env->cfg->driver_name;
	pthread_mutex_init(&p.lock, NULL);
	pthread_mutex_init(&p.ctl_lock, NULL);
	pthread_cond_init(&p.cond, NULL);
	pthread_mutex_init(&p.qlock, NULL);
	pthread_cond_init(&p.qcond, NULL);
	if ((sigfd = pub_signals()) == -1)
		return (child_start_fail(env, KP_EIO, "signalfd failed"));
	if (pub_load_config(&p, err, sizeof(err)) != 0)
		return (child_start_fail(env, KP_ECHILD, "%s", err));
	if (pub_allow_files(&p.kc, err, sizeof(err)) != 0) {
		kcfg_free(&p.kc);
		return (child_start_fail(env, KP_ESANDBOX, "sandbox: %s", err));
	}
	if ((code = kcfg_hide_list(&p.kc, env->cfg, &hide, err,
	    sizeof(err))) != 0) {
		kcfg_free(&p.kc);
		return (child_start_fail(env, code, "sandbox: %s", err));
	}
	/* The ids the sandbox gives us, for the message below (getgid is
	 * not in the allowlist). */
	(void)pol_role_ids(ROLE_PUBLISHER, &env->cfg->policy, &uid, &gid);
	/* libcurl is mapped here only, and before the sandbox
	 * (publisher/curl_dl.h). */
	if ((code = curl_dl_load(err, sizeof(err))) != 0) {
		kcfg_free(&p.kc);
		return (child_start_fail(env, code, "%s", err));
	}
	/* Credentials are loaded; from here on only the allowlist. */
	if (policy_apply(ROLE_PUBLISHER, env, err,
	    sizeof(err)) != 0) {
		kcfg_free(&p.kc);
		return (child_start_fail(env, KP_ESANDBOX, "sandbox: %s", err));
	}
	if ((code = pub_files_readable(&p, uid, gid, err,
	    sizeof(err))) != 0) {
		kcfg_free(&p.kc);
		return (child_start_fail(env, code, "%s", err));
	}
	if (http_global_init() != 0 || http_client_new(&p.kc,
	    env->cfg->kube_qps, env->cfg->kube_burst, &p.http) != 0 ||
	    http_client_new(&p.kc, env->cfg->kube_qps, env->cfg->kube_burst,
	    &p.http_claims) != 0) {
		http_client_free(p.http);
		kcfg_free(&p.kc);
		return (child_start_fail(env, KP_EIO, "HTTP client set-up "
		    "failed"));
	}
	http_client_timeout(p.http, env->cfg->kube_timeout_ms);
	http_client_timeout(p.http_claims, env->cfg->kube_timeout_ms);
	ready.pid = getpid();
	ready.hide_paths = hide.ptr;
	ready.n_hide_paths = hide.n;
	m.m_case = KPIPC__MSG__M_READY;
	m.ready = &ready;
	if (pub_send(&p, &m) != 0 || pub_claims_start(&p) != 0 ||
	    pub_events_start(&p) != 0 ||
	    pthread_create(&start, NULL, pub_start_thread, &p) != 0) {
		http_client_free(p.http_claims);
		http_client_free(p.http);
		kcfg_free(&p.kc);
		return (KP_EXIT_IPC);
	}
	code = pub_loop(&p, sigfd);
	log_info(2, "stopping");
	pub_teardown(&p, start);
	close(sigfd);
	return (code);
}
