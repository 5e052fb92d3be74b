/*
 * ns_wrap.h - the nodeserver's requests to the supervisor (ns_wrap.c).
 */
#ifndef KP_NS_WRAP_H
#define KP_NS_WRAP_H

#include <pthread.h>
#include <stdint.h>

#include "ipc/ipc.h"
#include "nodeserver/dra.h"

#define NS_PENDING	32	/* look-ups in flight at once */

/* One look-up waiting for its answer. */
struct ns_pending {
	const Kpipc__ClaimGet	*g;	/* NULL: free slot */
	Kpipc__Msg		*reply;
};

/* This driver's CDI spec names, sorted (ns_mirror.c). */
struct ns_mirror {
	int		  valid;	/* 0: unknown, ask the supervisor */
	char		**names;
	size_t		  n, cap;
};

struct ns_wrap {
	struct ipc_chan		*ctl;
	pthread_mutex_t		 lock;	/* all below; sends on ctl */
	pthread_cond_t		 cond;
	uint64_t		 next_id;
	struct ns_pending	 pend[NS_PENDING];
	int			 dead;	/* the channel failed */
	struct ns_batch		*batches;	/* ns_lookup.c, started */
	int			 stop[2];	/* wakes the reader */
	int			 wake[2];	/* ... to look at the times */
	int64_t			 reader_until;	/* it wakes by then; -1: not */
	pthread_t		 reader;
	int			 started;
	/* Frames other than claim answers (health reports), owned by the
	 * callee; NULL: dropped. */
	void			(*other)(void *, Kpipc__Msg *);
	void			*other_user;
	/* CDI spec requests (kp_cdi_spec_*), one at a time. */
	const char		*driver;
	pthread_mutex_t		 cdi_lock;	/* held for a request */
	uint64_t		 cdi_id;	/* waiting for; 0: none */
	int			 cdi_case;	/* its request's m_case */
	const char		*cdi_name;	/* its file (write, remove) */
	Kpipc__Msg		*cdi_reply;
	struct ns_mirror	 mirror;	/* under lock */
};

/* ns_mirror.c (the wrapper's lock held) */
void	ns_mirror_drop(struct ns_mirror *);
void	ns_mirror_change(struct ns_mirror *, const char *, int);
void	ns_mirror_set(struct ns_mirror *, char **, size_t);
void	ns_mirror_changed(struct ns_mirror *, const Kpipc__CdiChanged *);
int	ns_mirror_has(const struct ns_mirror *, const char *);
int	ns_mirror_names(const struct ns_mirror *, char ***, size_t *);

/* ns_lookup.c: a call's look-ups, no thread waiting (dra_ctx) */
struct ns_batch;
int64_t	ns_mono_ms(void);
void	*ns_lookup_new(void *, const struct kp_claim *, size_t, int64_t,
	    void (*)(void *), void *);
void	ns_lookup_start(void *);
void	ns_lookup_cancel(void *);
void	ns_lookup_end(void *, struct dra_claim_alloc *, int *, char *,
	    size_t);
void	ns_lookup_pump(struct ns_wrap *);
extern const struct dra_lookup_async ns_lookup_ops;
int	ns_lookup_next_ms(struct ns_wrap *);

/* ns_pong.c */
void	ns_pong(struct ns_wrap *, uint64_t);

/* ns_wrap.c */
void	ns_wrap_init(struct ns_wrap *, struct ipc_chan *, const char *);
int	ns_wrap_start(struct ns_wrap *);
void	ns_wrap_free(struct ns_wrap *);
int	ns_wrap_send(struct ns_wrap *, const Kpipc__Msg *);
int	ns_cdi_known(const char *);
void	ns_event_denied(const char *);
void	ns_event_journal_corrupt(void);
int	ns_claim_get(void *, const char *, const char *, const char *,
	    struct dra_claim_alloc *, char *, size_t);
int	ns_claim_fill(struct ns_wrap *, const Kpipc__Msg *,
	    struct dra_claim_alloc *, char *, size_t);
void	ns_claim_failed(const struct kp_claim *, int, char *, size_t);
void	ns_claim_get_many(void *, const struct kp_claim *, size_t,
	    struct dra_claim_alloc *, int *, char *, size_t);
int	ns_metadata_write(void *, const char *, const char *, const char *,
	    const char *, const char *, const char *, size_t, char *, size_t);
int	ns_metadata_remove(void *, const char *, const char *, const char *,
	    char *, size_t);

#endif /* KP_NS_WRAP_H */
