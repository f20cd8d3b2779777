/* mntguard - the data-mount guards of an Etcd's StatefulSet; see mntguard.h. */
#include "webhook/mntguard.h"

#include <stdio.h>
#include <string.h>

#include "common/hibguard.h"
#include "common/kjson.h"
#include "webhook/datamnt.h"
#include "webhook/pvcguard.h"
#include "webhook/scaleguard.h"

/* The string member key of obj, "" when absent or not a string. BORROWED. */
static const char *str_of(const cJSON *obj, const char *key)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));

    return v ? v : "";
}

/*
 * The first mount of a claim's volume in the pod template of old that new no longer has
 * (the same container, path, volume and sub path), *ctr its container's name; NULL: none.
 */
static const cJSON *lost_mount(const cJSON *old, const cJSON *new, const char **ctr)
{
    const cJSON *templates = kjson_get_arr(old, "spec.volumeClaimTemplates");
    const cJSON *news = kjson_get_arr(new, "spec.template.spec.containers");
    const cJSON *c, *m, *nc;

    cJSON_ArrayForEach (c, kjson_get_arr(old, "spec.template.spec.containers")) {
        cJSON_ArrayForEach (m, cJSON_GetObjectItemCaseSensitive(c, "volumeMounts")) {
            if (!datamnt_claim_in(templates, str_of(m, "name")))
                continue;
            nc = datamnt_named(news, str_of(c, "name"));
            if (!nc || !datamnt_has_mount(nc, m)) {
                *ctr = str_of(c, "name");
                return m;
            }
        }
    }
    return NULL;
}

/* An UPDATE of a StatefulSet with both objects: the one mntguard_remounts judges. */
static int remount_shape(const struct review_req *req)
{
    return req->op == REVIEW_OP_UPDATE && member_is_kind(req, "apps", "StatefulSet") &&
           cJSON_IsObject(req->old_object) && cJSON_IsObject(req->object);
}

int mntguard_remounts(const struct review_req *req)
{
    const cJSON *claim = NULL;
    const char *ctr = "";

    return remount_shape(req) && (lost_mount(req->old_object, req->object, &ctr) ||
                                  datamnt_covers(req->old_object, req->object, &ctr, &claim));
}

/* The break glass instruction ending every refusal of a data mount: ns, etcd, why. */
#define GLASS_HINT                                                                          \
    "if you must: kubectl annotate etcd -n %s %s " HIBGUARD_ANN_BREAK_GLASS "=\"<RFC 3339 " \
    "expiry, at most 24h ahead> <reason>\" (%s)"

enum kerr mntguard_mounts(time_t now, const struct review_req *req, const struct member_meta *m,
                          const struct lookup_etcd *etcd, struct glassadm_pending *gp,
                          struct review_resp *resp, int *decided)
{
    const char *ctr = "";
    const cJSON *mt, *over = NULL, *claim = NULL;
    char why[160], what[3 * LOOKUP_NAME_MAX + 64], change[2 * LOOKUP_NAME_MAX + 320];

    *decided = 0;
    if (!remount_shape(req))
        return KERR_OK;
    if (!(mt = lost_mount(req->old_object, req->object, &ctr)) &&
        !(over = datamnt_covers(req->old_object, req->object, &ctr, &claim)))
        return KERR_OK;
    if (over)
        snprintf(change, sizeof(change),
                 "its container %s would mount volume %s at %s, at or below where it mounts the "
                 "members' claim volume %s (%s), and each member would (re)start with its data "
                 "directory out of the claim's data",
                 ctr, str_of(over, "name"), str_of(over, "mountPath"), str_of(claim, "name"),
                 str_of(claim, "mountPath"));
    else
        snprintf(change, sizeof(change),
                 "its container %s would no longer mount the members' claim volume %s at %s, and "
                 "each member would (re)start without the data on its PersistentVolumeClaim, as "
                 "if the claim were deleted",
                 ctr, str_of(mt, "name"), str_of(mt, "mountPath"));
    pvcguard_glass_problem(now, etcd, why, sizeof(why));
    if (!why[0]) {
        snprintf(what, sizeof(what), "%s claim volume %s of StatefulSet %s/%s",
                 over ? "covering" : "unmounting", str_of(over ? claim : mt, "name"), m->ns,
                 m->name);
        glassadm_pend(gp, what, 0);
        if (over)
            return review_warn(resp,
                               "StatefulSet %s/%s of Etcd %s: container %s mounts volume %s at "
                               "%s over the claim volume %s at %s, allowed by annotation %s: %s",
                               m->ns, m->name, m->part_of, ctr, str_of(over, "name"),
                               str_of(over, "mountPath"), str_of(claim, "name"),
                               str_of(claim, "mountPath"), HIBGUARD_ANN_BREAK_GLASS,
                               etcd->break_glass_reason);
        return review_warn(resp,
                           "StatefulSet %s/%s of Etcd %s: container %s no longer mounts the "
                           "claim volume %s at %s, allowed by annotation %s: %s",
                           m->ns, m->name, m->part_of, ctr, str_of(mt, "name"),
                           str_of(mt, "mountPath"), HIBGUARD_ANN_BREAK_GLASS,
                           etcd->break_glass_reason);
    }
    *decided = 1;
    return review_deny(resp,
                       "updating StatefulSet %s/%s of Etcd %s is refused: %s. Keep that mount "
                       "(and nothing else at or below it) or, " GLASS_HINT,
                       m->ns, m->name, m->part_of, change, m->ns, m->part_of, why);
}

enum kerr mntguard_adopts(time_t now, const struct lookup *lk, const struct review_req *req,
                          const struct member_meta *m, const struct lookup_etcd *etcd,
                          struct glassadm_pending *gp, struct review_resp *resp, int *decided)
{
    char why[160], what[3 * LOOKUP_NAME_MAX + 64], problem[4 * LOOKUP_NAME_MAX + 256];
    cJSON *items = NULL, *pvcs = NULL, *left = NULL;
    struct kerr_info e;
    int bad;

    *decided = 0;
    if (!scaleguard_creates(req))
        return KERR_OK;
    kerr_clear(&e);
    if (!lk->pod_items || !lk->pvcs)
        kerr_set(&e, KERR_UNSUPPORTED, "no pod or PVC lookup is configured");
    else if (lk->pod_items(lk->ctx, m->ns, &items, &e) == KERR_OK)
        lk->pvcs(lk->ctx, m->ns, &pvcs, &e);
    /* the members whose pods are gone start on the claims they left */
    if (e.code == KERR_OK && !(left = datamnt_claim_pods(req->object, m->part_of, pvcs, items)))
        kerr_set(&e, KERR_NOMEM, "out of memory");
    if (e.code != KERR_OK) {
        cJSON_Delete(items);
        cJSON_Delete(pvcs);
        *decided = 1;
        return review_errored(resp, 500,
                              "creating StatefulSet %s/%s of Etcd %s: its running pods and its "
                              "members' claims cannot be told (%s), and a StatefulSet created "
                              "adopts the pods and starts its members on the claims with its "
                              "template: not admitted unchecked",
                              m->ns, m->name, m->part_of, e.msg);
    }
    bad = datamnt_adopt_problem(req->object, items, problem, sizeof(problem)) ||
          datamnt_adopt_problem(req->object, left, problem, sizeof(problem));
    cJSON_Delete(items);
    cJSON_Delete(pvcs);
    cJSON_Delete(left);
    if (!bad)
        return KERR_OK;
    pvcguard_glass_problem(now, etcd, why, sizeof(why));
    if (!why[0]) {
        snprintf(what, sizeof(what), "creating StatefulSet %s/%s off its pods' data", m->ns,
                 m->name);
        glassadm_pend(gp, what, 0);
        return review_warn(resp, "StatefulSet %s/%s of Etcd %s: %s; allowed by annotation %s: %s",
                           m->ns, m->name, m->part_of, problem, HIBGUARD_ANN_BREAK_GLASS,
                           etcd->break_glass_reason);
    }
    *decided = 1;
    return review_deny(resp,
                       "creating StatefulSet %s/%s of Etcd %s is refused: it adopts the running "
                       "pods of its name and rolls them onto its pod template, or starts the "
                       "members whose pods are gone on the claims they left (mounted as "
                       "etcd-druid mounts them), and %s. Create it with the claim template and "
                       "data mounts its members have or, " GLASS_HINT,
                       m->ns, m->name, m->part_of, problem, m->ns, m->part_of, why);
}
