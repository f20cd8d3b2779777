/* glassadm - a request admitted on break glass, its use recorded first (see glassadm.h). */
#include "webhook/glassadm.h"

#include <stdio.h>

#include "common/hibguard.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "webhook/glass.h"

enum kerr glassadm_admit(const struct lookup *lk, const struct review_req *req, const char *ns,
                         const char *etcd_name, const struct lookup_etcd *etcd, const char *what,
                         struct review_resp *resp, int *refused)
{
    struct k8s_resource target = { req->res_group, req->res_version, req->res_resource, 1 };
    struct glass_use u = { ns,
                           etcd_name,
                           etcd->uid,
                           etcd->break_glass_value,
                           req->username,
                           what,
                           &target,
                           req->namespace,
                           req->name,
                           NULL,
                           NULL,
                           req->uid,
                           "",
                           0,
                           req->op == REVIEW_OP_DELETE };
    char at[KTIME_LEN + 1], key[GLASS_REQUEST_MAX + 1];
    struct glass_prior used;
    struct kerr_info e;

    *refused = 1;
    kerr_clear(&e);
    if (req->op != REVIEW_OP_CREATE) { /* the object as the review says it is stored */
        u.target_uid = kjson_get_str(req->old_object, "metadata.uid");
        u.target_rv = kjson_get_str(req->old_object, "metadata.resourceVersion");
        if (!u.target_uid)
            u.target_uid = "";
    }
    glass_request_key(&u, key);
    u.request = key;
    if (!lk->glass)
        kerr_set(&e, KERR_UNSUPPORTED, "nowhere to record it");
    if (!lk->glass || lk->glass(lk->ctx, &u, req->dry_run, &used, &e) != KERR_OK)
        return review_errored(resp, 500,
                              "%s is allowed only by annotation %s of Etcd %s, which allows one "
                              "such request, and its use could not be recorded (%s): not "
                              "admitted unrecorded, retry",
                              what, HIBGUARD_ANN_BREAK_GLASS, etcd_name, e.msg);
    if (!used.at) {
        *refused = 0;
        return KERR_OK;
    }
    if (ktime_format(used.at, at) != KERR_OK)
        snprintf(at, sizeof(at), "?");
    return review_deny(resp,
                       "%s is refused: annotation %s of Etcd %s allows one scale-down or member "
                       "volume deletion without a snapshot, and its value was used at %s by %s "
                       "(%s). To allow another, set a new value (a new expiry or reason): "
                       "kubectl annotate --overwrite etcd -n %s %s %s=\"<RFC 3339 expiry, at "
                       "most 24h ahead> <reason>\"",
                       what, HIBGUARD_ANN_BREAK_GLASS, etcd_name, at, used.user, used.what, ns,
                       etcd_name, HIBGUARD_ANN_BREAK_GLASS);
}

void glassadm_pend(struct glassadm_pending *gp, const char *what, int event)
{
    snprintf(gp->what, sizeof(gp->what), "%s", what);
    gp->event = event;
}

enum kerr glassadm_settle(const struct lookup *lk, const struct review_req *req, const char *ns,
                          const char *etcd_name, const struct lookup_etcd *etcd,
                          const struct glassadm_pending *gp, struct review_resp *resp)
{
    struct review_resp r;
    int refused = 0;
    enum kerr rc;

    if (!gp->what[0] || !resp->allowed)
        return KERR_OK;
    review_resp_init(&r);
    rc = glassadm_admit(lk, req, ns, etcd_name, etcd, gp->what, &r, &refused);
    if (rc == KERR_OK && refused) {
        review_resp_release(resp);
        *resp = r; /* resp OWNS r's strings now */
        return KERR_OK;
    }
    review_resp_release(&r);
    return rc;
}
