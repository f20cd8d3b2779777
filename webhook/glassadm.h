/*
 * glassadm - the admission side of break glass used once (webhook/glass.h): a request
 * that only a counting HIBGUARD_ANN_BREAK_GLASS lets through is admitted once its use is
 * recorded, and refused when its value was used before or the use cannot be recorded.
 *
 * Thread safety: reentrant, as struct lookup allows.
 */
#ifndef WEBHOOK_GLASSADM_H
#define WEBHOOK_GLASSADM_H

#include "common/kerr.h"
#include "webhook/glass.h"
#include "webhook/lookup.h"
#include "webhook/review.h"

/*
 * A request req that only the break glass on Etcd ns/etcd_name (etcd, whose break glass
 * counts) lets through, described by what: its use recorded through lk->glass. *refused 0:
 * recorded (a dry run: would be), admit; 1: resp holds the refusal (the value was used
 * before: 403 saying when, by whom, for what, and how to set a new one; not recorded: 500).
 * Returns review_*'s result.
 */
enum kerr glassadm_admit(const struct lookup *lk, const struct review_req *req, const char *ns,
                         const char *etcd_name, const struct lookup_etcd *etcd, const char *what,
                         struct review_resp *resp, int *refused);

/* A break glass a decision admitted on, to record once the whole decision allows. */
struct glassadm_pending {
    char what[GLASS_WHAT_MAX]; /* what the request does ("": none) */
    int event;                 /* GLASSADM_EV_*: the event due once recorded */
};

/* The event due for a use of break glass once recorded (scaleguard_event). */
#define GLASSADM_EV_NONE        0
#define GLASSADM_EV_NO_SNAPSHOT 1 /* Warning ScaleDownWithoutSnapshot: none since the cut */
#define GLASSADM_EV_UNCHECKED                                        \
    2 /* Warning ScaleDownSnapshotUnverified: one after the cut, not \
         checked against etcd's last revision */

/* Note in *gp that what was admitted on break glass (event: GLASSADM_EV_*). */
void glassadm_pend(struct glassadm_pending *gp, const char *what, int event);

/*
 * The decision in resp (built for req on Etcd ns/etcd_name) once made: when it allows and
 * gp->what is set, the use is recorded (glassadm_admit); a refusal replaces resp. Returns
 * review_*'s result. Recording after the decision means a request refused for another
 * reason (component protection) does not use the break glass up.
 */
enum kerr glassadm_settle(const struct lookup *lk, const struct review_req *req, const char *ns,
                          const char *etcd_name, const struct lookup_etcd *etcd,
                          const struct glassadm_pending *gp, struct review_resp *resp);

#endif
