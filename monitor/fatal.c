/*
 * fatal.c - how the monitor ends the plugin when it cannot stay
 * reachable: one line to the log, to kubelet's termination message file
 * (terminationMessagePath, when it exists) and to the page the driver's
 * kp_plugin_wait() reads, then the draining stop with a non-zero status.
 * A plugin kubelet cannot reach must not stay up looking healthy.
 *
 * Runs in: the monitor.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/log.h"
#include "monitor/monitor.h"

/* Shared with the driver's process (api/api.c); never with a child. */
static char	*fatal_page;

void
fatal_page_set(char *page)
{
	fatal_page = page;
	/* Children fork from here: they must not get a page the driver
	 * trusts (a nodeserver could forge the reason). */
	if (page != NULL && madvise(page, KP_ERROR_SIZE, MADV_DONTFORK) == -1)
		log_warn("madvise(MADV_DONTFORK)");
}

/*
 * One line, at most 4 KiB as kubelet reads (it keeps the last 4096 bytes
 * of the file). Only an existing file is written: kubelet bind-mounts it
 * into the container; anywhere else it is not ours to create. No symlink
 * is followed.
 */
void
termlog_write(const struct kp_options *cfg, const char *msg)
{
	const char	*path;
	char		 line[KP_ERROR_SIZE + 2];
	int		 fd, n;

	if (cfg->termlog_off)
		return;
	path = cfg->termlog[0] != '\0' ? cfg->termlog : KP_DEF_TERMLOG;
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC |
	    O_NOCTTY | O_NONBLOCK)) == -1) {
		if (errno != ENOENT)
			log_warn("termination message %s", path);
		return;
	}
	n = snprintf(line, sizeof(line), "%s\n", msg);
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
	if (write(fd, line, (size_t)n) != n)
		log_warn("write termination message %s", path);
	close(fd);
}

/* The first reason the plugin ends, for kp_plugin_wait(). */
void
mon_fatal_text(const char *msg)
{
	if (fatal_page != NULL && fatal_page[0] == '\0')
		snprintf(fatal_page, KP_ERROR_SIZE, "%s", msg);
}

/* The plugin cannot go on: say why everywhere, then stop, exit 1. */
void
mon_fatal(struct mon *mon, const char *fmt, ...)
{
	char	 msg[KP_ERROR_SIZE];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_errorx("fatal: %s", msg);
	mon_fatal_text(msg);
	termlog_write(mon->cfg, msg);
	mon_stop(mon, 1);
}
