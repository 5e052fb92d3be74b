/*
 * journal.h - the prepared-claim journal of the nodeserver (journal.c:
 * the file; journal_dra.c: replay, recording and reconciliation around
 * the driver's hooks).
 */
#ifndef KP_JOURNAL_H
#define KP_JOURNAL_H

#include <pthread.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <jansson.h>

#include "kubeletplugin.h"

#define JOURNAL_FILE		"kubeletplugin-journal.json"
#define JOURNAL_SCHEMA		1	/* the snapshot's */
#define JOURNAL_LOG		"kubeletplugin-journal.log"
#define JOURNAL_LOG_SCHEMA	2	/* the log's (journal_log.c) */
#define JOURNAL_LOG_MAX		(64u * 1024 * 1024)
#define JOURNAL_TMP		"." JOURNAL_FILE ".tmp"
#define JOURNAL_LOG_TMP		"." JOURNAL_LOG ".tmp"
#define JOURNAL_HDR_MAX		512	/* the log's header line */
#define JOURNAL_COMPACT_SLACK	(1024u * 1024)	/* compaction when the
					 * log passes 2 x the snapshot + this */
#define JOURNAL_TAIL		40	/* the snapshot's last bytes, which
					 * hold its checksum */
#define JOURNAL_MAX_BYTES	(8u * 1024 * 1024)
#define JOURNAL_MAX_DATA	(64u * 1024)	/* driver data of a claim */
#define JOURNAL_BOOT_ID		"/proc/sys/kernel/random/boot_id"
#define JOURNAL_BOOT_MAX	64

enum journal_state {
	JOURNAL_NEW = 0,	/* no file yet */
	JOURNAL_LOADED = 1,
	JOURNAL_QUARANTINED = 2	/* unreadable: moved aside, started empty */
};

/* Fault injection for tests (tests/unit/test_journal.c). */
enum journal_fault {
	JOURNAL_FAULT_NONE = 0,
	JOURNAL_FAULT_BEFORE_RENAME = 1,	/* temp written and synced,
					 * then "crash": no rename */
	JOURNAL_FAULT_BEFORE_LOG = 2	/* compaction: the snapshot renamed,
					 * then "crash": the old log stays */
};
extern int	journal_fault;

struct journal {
	pthread_mutex_t		 lock;	/* claims and the file */
	int			 dirfd;
	char			 driver[256];
	char			 boot_id[JOURNAL_BOOT_MAX];
	char			 file_boot_id[JOURNAL_BOOT_MAX];	/* as
					 * loaded; "" when none */
	enum journal_state	 state;
	char			 why[KP_ERROR_SIZE];	/* quarantine reason */
	json_t			*claims;	/* uid -> entry; changed only
					 * through journal_put/journal_del
					 * (the index follows them), or
					 * replaced whole (index dropped) */
	struct journal_piece	*pc;	/* the index: claims sorted by UID,
					 * each with its dump, as render()
					 * writes them; valid when npc is
					 * the claims' count and pc_ok */
	size_t			 npc, pc_cap;
	int			 pc_ok;
	size_t			 pc_bytes;	/* the pieces' text */
	char			*out;	/* render()'s buffer, kept */
	size_t			 out_cap;
	/* What is on disk, as this instance last read or wrote it: */
	int			 through;	/* every change a compaction: a
					 * peer may read only the snapshot */
	char			 base[24];	/* the snapshot's checksum;
					 * "" none */
	ino_t			 snap_ino;
	off_t			 snap_size;	/* -1: no snapshot */
	char			 snap_tail[JOURNAL_TAIL];
	size_t			 snap_tlen;
	unsigned long long	 gen;	/* the log's; 0 none */
	char			 hdr[JOURNAL_HDR_MAX + 10];	/* its header
					 * line, as read or written */
	size_t			 hlen;
	int			 log_ok;	/* the log extends the snapshot */
	off_t			 log_len;	/* its valid bytes */
	off_t			 log_seen;	/* its size when last read */
	ino_t			 log_ino;
	unsigned long long	 seq;	/* its last change's number */
	size_t			 nrec;	/* its changes */
	int			 logfd;	/* open for appends; -1 */
	struct journal_op	*ops;	/* changes not on disk yet */
	size_t			 nops, ops_cap;
};

/* A change journal_commit writes: uid's entry is entry (NULL: none). */
struct journal_op {
	char	*uid;
	json_t	*entry;
};

/* One claim in the index: the file's text of it is key ':' text. */
struct journal_piece {
	char		*uid;
	char		*key;	/* the UID as a JSON string, quoted */
	size_t		 klen;
	json_t		*entry;	/* held */
	char		*text;	/* the entry's compact key-sorted dump;
				 * NULL until render() needs it */
	size_t		 tlen;
};

/* A claim's entry as the driver sees it; holds a reference to it. */
struct journal_view {
	struct kp_journal_entry		  e;
	struct kp_prepared_device	 *devs;
	const struct kp_prepared_device	**ptrs;
	const char			**strs;
	json_t				 *ref;
	char				 *data;
};

/* cdi_build.c */
json_t	*cdi_json_strings(const char *const *, size_t);

/* journal.c */
int	 journal_open(struct journal *, const char *dir, const char *driver,
	    const char *boot_id_path, char *err, size_t errsize);
void	 journal_close(struct journal *);
int	 journal_save(struct journal *, char *err, size_t errsize);
int	 journal_commit(struct journal *, char *err, size_t errsize);
int	 journal_mem_put(struct journal *, const char *uid, json_t *entry);
void	 journal_mem_del(struct journal *, const char *uid);
void	 journal_quarantine(struct journal *, const char *why);
void	 journal_index_drop(struct journal *);
unsigned long journal_crc(const char *, size_t);
void	 journal_forget_ops(struct journal *);
void	 journal_refresh(struct journal *);
int	 journal_put(struct journal *, const char *uid, json_t *entry);
void	 journal_del(struct journal *, const char *uid);
int	 journal_parse(const char *, size_t, const char *driver, json_t **,
	    char *boot_id, size_t, char *err, size_t errsize);
int	 journal_parse_sum(const char *, size_t, const char *driver,
	    json_t **, char *boot_id, size_t, char *sum, size_t,
	    char *err, size_t errsize);

/* journal_sync.c */
int	 journal_load(struct journal *, int quiet, char *err, size_t errsize);
int	 journal_slurp(int dirfd, const char *name, size_t max, char **text,
	    size_t *len, struct stat *);

/* journal_log.c */
size_t	 jlog_line(char *, const char *json, size_t);
int	 jlog_header(const char *, size_t, const char *driver,
	    unsigned long long *gen, char *base, size_t, size_t *hlen,
	    char *err, size_t errsize);
size_t	 jlog_apply(const char *, size_t, const char *driver,
	    unsigned long long *seq, size_t *n,
	    int (*)(void *, const char *, json_t *), void *, char *err,
	    size_t errsize);
int	 journal_check_entry(const char *driver, const char *uid,
	    const json_t *, char *err, size_t errsize);
struct journal_view *journal_view_new(const char *uid, json_t *entry,
	    int previous_boot);
struct journal_view *journal_view_lite(const char *uid, json_t *entry,
	    int previous_boot);
int	 journal_view_data(struct journal_view *);
void	 journal_view_free(struct journal_view *);

#endif /* KP_JOURNAL_H */
