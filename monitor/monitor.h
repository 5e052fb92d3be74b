/*
 * monitor.h - the monitor: the one process of the plugin that keeps
 * privileges (docs/security.md lists them), and the only one that never
 * reads a child's bytes. It forks the broker and, on the broker's
 * requests, the children; owns the socket files, the lock file and the
 * termination message; writes CDI spec files whose content the broker
 * checked. It reads nothing but fixed-layout frames (ipc/mon.h) from the
 * broker and signals from the kernel.
 */
#ifndef KP_MONITOR_H
#define KP_MONITOR_H

#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include "kubeletplugin.h"
#include "base/config.h"
#include "ipc/child.h"
#include "ipc/ipc.h"
#include "ipc/mon.h"

/* The listeners a child shares with the monitor, by holder: the DRA
 * socket (nodeserver), the registration socket (registrar), the
 * observer's TCP port. */
#define SUP_LISTEN_DRA	0
#define SUP_LISTEN_REG	1
#define SUP_LISTEN_HTTP	2
#define SUP_LISTENERS	3
#define SOCK_BACKLOG	128	/* every listener's, restored before each
				 * child generation (sockets.c) */

#define MON_SPAWN_MIN_MS	50	/* between two starts of one role,
					 * whatever the broker asks */
#define MON_CDI_MAX		(256u * 1024)	/* one spec, as the broker's
						 * limit (KP_IPC_MAX_CDI_CONTENT)
						 * with room for metadata */
#define MON_CDI_FILES		4096	/* this driver's specs, and */
#define MON_CDI_BYTES		(16u * 1024 * 1024)	/* their bytes: the
					 * broker's quota, held here too */

/* A listening socket the monitor owns. */
struct sup_socket {
	int		 fd;
	const char	*path;		/* NULL: listener without a path */
	int		 created;	/* we bound it: remove if unchanged */
	int		 bound;		/* by sock_listen: repair.c may bind
					 * it again */
	dev_t		 dev;
	ino_t		 ino;
	int		 dir_open;	/* dirfd is path's directory, opened
					 * without following links */
	int		 dirfd;		/* O_PATH; all file work goes here */
	const char	*base;		/* path's last component */
	dev_t		 dir_dev;
	ino_t		 dir_ino;
};

struct mon_child {
	enum kp_role		 role;
	const char		*name;
	int			(*main)(struct child_env *);
	pid_t			 pid;		/* -1: not running */
	int			*listen_fd;	/* in struct mon */
	struct timespec		 spawned;
};

struct mon {
	const struct kp_options	*cfg;
	const struct kp_hooks	*hooks;
	pid_t			 broker_pid;	/* -1: gone */
	int			 ctl;		/* to the broker; -1 */
	int			 files;		/* its file requests; -1 */
	int			 sigfd;
	struct sup_socket	 plugin_sock;
	struct sup_socket	 reg_sock;
	int			 http_fd;	/* the observer's; -1 */
	struct mon_child	 children[ROLE_COUNT];
	int			 pidns_fd;	/* ours; -1: children share it */
	int			 lock_fd;	/* for the nodeserver being
						 * forked; -1 (lockfile.c) */
	int			 cdi_fd;	/* the CDI directory; -1 */
	int			 cdi_counted;	/* cdi_files, cdi_bytes known */
	size_t			 cdi_files;	/* this driver's specs there */
	size_t			 cdi_bytes;
	int			 state_fd;	/* the next nodeserver's state */
	uint64_t		 state_gen;
	char			 pub_hide[KP_IPC_MAX_HIDE][KP_IPC_PATH_MAX];
	size_t			 n_pub_hide;
	int			 running;	/* the broker's start is done */
	int			 stopping;	/* MON_STOPPING, or signalled */
	struct timespec		 stop_deadline;	/* then SIGKILL to all */
	int			 done;		/* MON_DONE: leave the loop */
	int			 exit_code;
	int			 fatal_n;	/* MON_FATAL frames taken */
	/* Socket files that repair themselves (repair.c). */
	int			 repair_fd;	/* inotify; -1 */
	int			 repair_blind;	/* a directory unwatched */
	struct timespec		 repair_next;
	int			 repair_pending;
	int			 sock_ok[2];	/* last told the broker */
	char			 sock_why[2][KP_ERROR_SIZE];
};

/* monitor.c */
int	monitor_main(const struct kp_options *, const struct kp_hooks *,
	    int, int, struct sup_socket *, struct sup_socket *, int);
void	mon_tell(struct mon *, enum mon_type, int, int, int, const char *,
	    ...) KP_PRINTF(6, 7);
void	mon_stop(struct mon *, int);
void	mon_violation(struct mon *, const char *);
void	mon_dispatch(struct mon *);
int	fd_close_except(const int *, size_t);

/* broker.c: the broker's fork and sandbox */
int	broker_spawn(struct mon *, int, int, char *, size_t);

/* spawn.c: the children */
void	spawn_table_init(struct mon *);
void	spawn_ns_init(struct mon *);
int	spawn_child(struct mon *, struct mon_child *, int *, char *, size_t);
pid_t	spawn_fork(struct mon *, const char *);
void	child_set_name(const char *);
int	child_begin(int);

/* child_exec.c */
void	child_exec(struct mon *, struct mon_child *, int, int, int);
void	child_exec_broker(struct mon *, int, int, int, int);

/* cdi_put.c: the broker's file requests */
int	cdi_put_open(struct mon *, char *, size_t);
void	cdi_put_serve(struct mon *);
int	cdi_put_md_owner(struct mon *, uid_t, gid_t, char *, size_t);

/* sockets.c */
int	sock_listen(struct sup_socket *, const char *, unsigned int,
	    char *, size_t);
void	sock_remove(struct sup_socket *);
int	sock_from_listener(struct sup_socket *, int, const char *);
void	sock_close(struct sup_socket *);
int	sock_listen_again(struct sup_socket *, const struct sup_socket *,
	    unsigned int, char *, size_t);
int	sock_dir_same(const struct sup_socket *, char *, size_t);
int	sock_live(const struct sup_socket *);
int	sock_refuses(int);
void	sock_relisten(int);
int	sock_tcp_again(int *, const struct sockaddr_storage *, socklen_t,
	    char *, size_t);

/* lockfile.c */
int	lock_open(struct mon *, char *, size_t);
int	lock_child_open(struct mon *);
void	lock_close(struct mon *);

/* fatal.c */
void	fatal_page_set(char *);
void	mon_fatal(struct mon *, const char *, ...) KP_PRINTF(2, 3);
void	mon_fatal_text(const char *);
void	termlog_write(const struct kp_options *, const char *);

/* repair.c */
void	repair_init(struct mon *);
void	repair_read(struct mon *);
void	repair_tick(struct mon *);
long long repair_next_ms(struct mon *);
void	repair_close(struct mon *);
void	repair_listener_shut(struct mon *, int);
void	repair_check_sockets(struct mon *);

#endif /* KP_MONITOR_H */
