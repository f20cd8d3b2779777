/* pvcguard - the member-volume guard; see pvcguard.h. */
#include "webhook/pvcguard.h"

#include <stdio.h>
#include <time.h>

#include "common/hibguard.h"
#include "common/ktime.h"

int pvcguard_applies(const struct review_req *req, const struct member_meta *m)
{
    return req->op == REVIEW_OP_DELETE && member_is_kind(req, "", "PersistentVolumeClaim") &&
           m->managed && m->part_of && m->live;
}

/* Why the break glass on etcd does not count ("" when it counts), into why. */
static void glass_problem(time_t now, const struct lookup_etcd *etcd, char *why, size_t size)
{
    char when[KTIME_LEN + 1] = "";

    if (!etcd->break_glass)
        snprintf(why, size, "annotation %s is not set", HIBGUARD_ANN_BREAK_GLASS);
    else if (etcd->break_glass_rc != KERR_OK)
        snprintf(why, size,
                 "annotation %s is ignored: its value is not \"<RFC 3339 expiry> <reason>\"",
                 HIBGUARD_ANN_BREAK_GLASS);
    else if (etcd->break_glass_expires <= now) {
        if (ktime_format(etcd->break_glass_expires, when) != KERR_OK)
            snprintf(when, sizeof(when), "?");
        snprintf(why, size, "annotation %s expired at %s", HIBGUARD_ANN_BREAK_GLASS, when);
    } else
        why[0] = '\0';
}

enum kerr pvcguard_judge(time_t now, const struct review_req *req, const struct member_meta *m,
                         const struct lookup_etcd *etcd, struct review_resp *resp, int *decided)
{
    char why[160];
    char range[64];

    *decided = 0;
    glass_problem(now, etcd, why, sizeof(why));
    if (!why[0])
        return review_warn(resp,
                           "PersistentVolumeClaim %s/%s of running member %s-%ld of Etcd %s is "
                           "deleted, allowed by annotation %s: %s",
                           m->ns, m->pvc, m->sts.name, m->ordinal, m->part_of,
                           HIBGUARD_ANN_BREAK_GLASS, etcd->break_glass_reason);
    if (m->sts.ordinals_ok)
        snprintf(range, sizeof(range), "ordinals [%lld, %lld)", (long long)m->sts.start,
                 (long long)(m->sts.start + m->sts.replicas));
    else
        snprintf(range, sizeof(range), "ordinals that are not valid numbers");
    *decided = 1;
    return review_deny(resp,
                       "PersistentVolumeClaim %s/%s cannot be deleted by %s: it is the volume of "
                       "running member %s-%ld of Etcd %s (StatefulSet %s has %s), and the pod's "
                       "next restart would start that member on a new, empty volume. Scale the "
                       "Etcd down first or, if the volume must go now, allow it: kubectl "
                       "annotate etcd -n %s %s %s=\"<RFC 3339 expiry, at most 24h ahead> "
                       "<reason>\" (%s)",
                       m->ns, m->pvc, req->username, m->sts.name, m->ordinal, m->part_of,
                       m->sts.name, range, m->ns, m->part_of, HIBGUARD_ANN_BREAK_GLASS, why);
}
