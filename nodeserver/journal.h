/*
 * journal.h - the prepared-claim journal of the nodeserver (journal.c:
 * the file; journal_dra.c: replay, recording and reconciliation around
 * the driver's hooks).
 */
#ifndef KP_JOURNAL_H
#define KP_JOURNAL_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "kubeletplugin.h"

#define JOURNAL_FILE		"kubeletplugin-journal.json"
#define JOURNAL_SCHEMA		1
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
	JOURNAL_FAULT_BEFORE_RENAME = 1	/* temp written and synced, then
					 * "crash": no rename */
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
	dev_t			 dev;	/* the file claims came from or */
	ino_t			 ino;	/* went to; 0: none */
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
void	 journal_refresh(struct journal *);
int	 journal_put(struct journal *, const char *uid, json_t *entry);
void	 journal_del(struct journal *, const char *uid);
int	 journal_parse(const char *, size_t, const char *driver, json_t **,
	    char *boot_id, size_t, char *err, size_t errsize);
int	 journal_check_entry(const char *driver, const char *uid,
	    const json_t *, char *err, size_t errsize);
struct journal_view *journal_view_new(const char *uid, json_t *entry,
	    int previous_boot);
struct journal_view *journal_view_lite(const char *uid, json_t *entry,
	    int previous_boot);
int	 journal_view_data(struct journal_view *);
void	 journal_view_free(struct journal_view *);

#endif /* KP_JOURNAL_H */
