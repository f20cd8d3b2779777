/* claimguard - the member claims of a live Etcd; see claimguard.h. */
#include "webhook/claimguard.h"

#include <stdio.h>
#include <string.h>

#include "common/hibguard.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "webhook/claimalias.h"
#include "webhook/glassadm.h"
#include "webhook/member.h"

#define ORDINAL_MAX 2147483647L

int claimguard_split(const char *name, size_t *pos, char *etcd, size_t size, long *ordinal)
{
    size_t n = name ? strlen(name) : 0, d = n, i;
    long v = 0;

    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    /* "-<digits>" at the end, as the StatefulSet controller writes an ordinal */
    if (d == n || d < 4 || name[d - 1] != '-' || n - d > 10 || (n - d > 1 && name[d] == '0'))
        return 0;
    for (i = d; i < n; i++)
        v = v * 10 + (name[i] - '0');
    if (v > ORDINAL_MAX)
        return 0;
    /* each "<template>-" before "<etcd>-<ordinal>", template and etcd not empty */
    for (i = *pos > 2 ? *pos : 2; i + 1 < d; i++) {
        if (name[i - 1] != '-' || d - 1 - i >= size)
            continue;
        memcpy(etcd, name + i, d - 1 - i);
        etcd[d - 1 - i] = '\0';
        *ordinal = v;
        *pos = i + 1;
        return 1;
    }
    *pos = n;
    return 0;
}

int claimguard_seeded(const cJSON *pvc, const char **field)
{
    static const char *const fields[] = { "dataSource", "dataSourceRef", "volumeName" };
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pvc, "spec"), *v;
    size_t i;

    for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        v = cJSON_GetObjectItemCaseSensitive(spec, fields[i]);
        if (!v || cJSON_IsNull(v) || (cJSON_IsString(v) && !v->valuestring[0]) ||
            (cJSON_IsObject(v) && !v->child))
            continue;
        *field = fields[i];
        return 1;
    }
    return 0;
}

/* The advice that ends a refusal: how to break glass on Etcd e of ns, and why it did not. */
#define GLASS_ADVICE \
    "kubectl annotate etcd -n %s %s %s=\"<RFC 3339 expiry, at most 24h ahead> <reason>\" (%s)"

/* Why the hibernation of etcd has no sleep its claims may go with ("" when it has one). */
static void sleep_problem(const struct lookup_etcd *etcd, char *why, size_t size)
{
    why[0] = '\0';
    if (!etcd->has_backup_store)
        snprintf(why, size, "it has no backup store: its claims are the only copy of its data");
    else if (strcmp(etcd->phase, "Hibernated") != 0 &&
             strcmp(etcd->phase, HIBGUARD_PHASE_SCALING) != 0)
        snprintf(why, size, "it is not hibernated (hibernation phase \"%s\")", etcd->phase);
    else if (etcd->cut_rc != KERR_OK)
        snprintf(why, size, "its hibernation has no valid traffic cut (annotation %s)",
                 HIBGUARD_ANN_CUT_AT);
    else if (!etcd->snapshot_store[0] || !etcd->checked[0])
        snprintf(why, size,
                 "it was scaled down without a final snapshot checked against its last write "
                 "(no annotation %s or %s: break glass, or an earlier version)",
                 HIBGUARD_ANN_STORE, HIBGUARD_ANN_CHECKED);
    else if (etcd->secret_ref_rc == KERR_INVAL)
        snprintf(why, size,
                 "its spec.backup.store.secretRef names no Secret etcd-warden can read: where its "
                 "store is cannot be told");
}

/*
 * Why the StatefulSet e (obj, read from the API server; NULL: not found) is not the one
 * scaled down on the final snapshot of etcd's sleep ("" into why when it is).
 */
static void sts_problem(const char *e, const struct lookup_etcd *etcd, const cJSON *obj, char *why,
                        size_t size)
{
    char cut[KTIME_LEN + 1] = "?", made[KTIME_LEN + 1] = "?", now[HIBGUARD_CHECKED_MAX] = "?";
    struct lookup_sts sts;

    why[0] = '\0';
    (void)ktime_format(etcd->cut_at, cut);
    if (!obj) {
        snprintf(why, size, "its StatefulSet %s is not found", e);
        return;
    }
    if (lookup_sts_from_json(obj, &sts, NULL) != KERR_OK || !sts.ordinals_ok || sts.replicas != 0) {
        snprintf(why, size, "its StatefulSet %s is not at 0 replicas", e);
        return;
    }
    if (sts.created > 0)
        (void)ktime_format(sts.created, made);
    if (sts.created <= 0 || sts.created > etcd->cut_at) {
        snprintf(why, size,
                 "its StatefulSet %s was created at %s, after its traffic cut at %s: not the one "
                 "scaled down on the final snapshot",
                 e, made, cut);
        return;
    }
    if (hibguard_checked_slept(etcd->checked, obj))
        return;
    (void)hibguard_checked_format(obj, now, sizeof(now), NULL);
    snprintf(why, size,
             "its StatefulSet %s (now %s) is not the one scaled down on the final snapshot "
             "(annotation %s \"%s\": that uid, no pods in its status, at that generation or "
             "the next, one change at 0): pods ran, or two or more changes since may be a "
             "scale-up and down, and its members may have written what the snapshot does not "
             "hold (after a change at 0 warden-controller moves the annotation: try again)",
             e, now[0] ? now : "without uid or generation", HIBGUARD_ANN_CHECKED, etcd->checked);
}

/*
 * Why the store stamp of etcd (ns/e), computed now with its Secret read from the API server,
 * is not the final snapshot's ("" into why when it is). A Secret that cannot be read: its
 * code, err set (a 500: fail closed).
 */
static enum kerr store_problem(const struct lookup *lk, const char *ns,
                               const struct lookup_etcd *etcd, char *why, size_t size,
                               struct kerr_info *err)
{
    const char *ref = etcd->secret_ref_rc == KERR_OK ? etcd->secret_ref : NULL;
    char stamp[HIBGUARD_STAMP_MAX];
    cJSON *secret = NULL;
    enum kerr rc = KERR_OK;

    why[0] = '\0';
    if (ref && !lk->secret)
        return kerr_set(err, KERR_UNSUPPORTED, "no Secret lookup is configured");
    if (ref && (rc = lk->secret(lk->ctx, ns, ref, &secret, err)) != KERR_OK &&
        (rc != KERR_NOTFOUND || lookup_unconfirmed(rc, err))) {
        char msg[sizeof(err->msg)];

        snprintf(msg, sizeof(msg), "%s", err->msg);
        return kerr_set(err, rc, "its backup Secret %s/%s cannot be read: %s", ns, ref, msg);
    }
    kerr_clear(err);
    rc = hibguard_stamp_join(etcd->store, ref, secret, stamp);
    cJSON_Delete(secret);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "the stamp of its backup store cannot be made");
    if (strcmp(stamp, etcd->snapshot_store) != 0)
        snprintf(why, size,
                 "its final snapshot was taken for another backup store than the one it names "
                 "now (annotation %s \"%.80s\", now \"%.80s\": spec.backup.store, its "
                 "secretRef or that Secret's endpoint, account or other location keys changed "
                 "since, or a stamp of an earlier version): its wake would not restore it",
                 HIBGUARD_ANN_STORE, etcd->snapshot_store, stamp);
    return KERR_OK;
}

/* 1 when items (a PVC list's items) has "<template>-<sts>-<n>", a template of req's object
 * (a Scale names none: any template), or one not known to be missing. */
static int has_claim(const struct review_req *req, const cJSON *items, const char *sts, long n)
{
    const cJSON *tmpls = kjson_get(req->object, "spec.volumeClaimTemplates"), *t, *pvc;
    char suffix[LOOKUP_NAME_MAX + 32];
    size_t ls;

    snprintf(suffix, sizeof(suffix), "-%s-%ld", sts, n);
    ls = strlen(suffix);
    cJSON_ArrayForEach (pvc, items) {
        const char *name = kjson_get_str(pvc, "metadata.name");
        size_t ln = name ? strlen(name) : 0;

        if (!name || ln <= ls || strcmp(name + ln - ls, suffix) != 0)
            continue;
        if (!cJSON_IsArray(tmpls))
            return 1;
        cJSON_ArrayForEach (t, tmpls) {
            const char *tn = kjson_get_str(t, "metadata.name");

            if (tn && strlen(tn) == ln - ls && strncmp(name, tn, ln - ls) == 0)
                return 1;
        }
    }
    return 0;
}

enum kerr claimguard_wake(const struct lookup *lk, const struct review_req *req,
                          const struct member_meta *m, const struct lookup_etcd *etcd,
                          struct review_resp *resp, int *decided)
{
    int scale = member_is_kind(req, "autoscaling", "Scale");
    long start = 0, n, hi;
    char why[1024];
    cJSON *items = NULL;
    struct kerr_info e;
    enum kerr rc;
    int64_t s;

    *decided = 0;
    if (req->op != REVIEW_OP_UPDATE || (!scale && !member_is_kind(req, "apps", "StatefulSet")) ||
        !etcd->snapshot_store[0] ||
        member_replicas_count(req->old_object, scale, ORDINAL_MAX) != 0 ||
        (hi = member_replicas_count(req->object, scale, ORDINAL_MAX)) == 0)
        return KERR_OK;
    if (!scale && kjson_get_int64(req->object, "spec.ordinals.start", &s) == KERR_OK && s >= 0 &&
        s <= ORDINAL_MAX)
        start = (long)s;
    kerr_clear(&e);
    why[0] = '\0';
    if (hi < 0)
        kerr_set(&e, KERR_INVAL, "spec.replicas is not a count");
    else if (!lk->pvcs)
        kerr_set(&e, KERR_UNSUPPORTED, "no PersistentVolumeClaim lookup is configured");
    else
        lk->pvcs(lk->ctx, m->ns, &items, &e);
    for (n = start; e.code == KERR_OK && n < start + hi; n++) {
        if (!has_claim(req, items, m->name, n)) {
            store_problem(lk, m->ns, etcd, why, sizeof(why), &e);
            break;
        }
    }
    cJSON_Delete(items);
    if (e.code != KERR_OK) {
        *decided = 1;
        return review_errored(resp, 500,
                              "waking StatefulSet %s/%s of Etcd %s, put to sleep with a final "
                              "snapshot: whether its members would restore from the store of "
                              "that snapshot cannot be told (%s): not admitted unchecked",
                              m->ns, m->name, m->part_of, e.msg);
    }
    if (!why[0])
        return KERR_OK;
    *decided = 1;
    rc = review_deny(resp,
                     "waking StatefulSet %s/%s of Etcd %s is refused: the claim of its member "
                     "%s-%ld is gone, so that member restores from the backup store, and %s. "
                     "Point the Etcd back at the store of its final snapshot (spec.backup.store "
                     "and its Secret as they were when it went to sleep), wake it there, then "
                     "move it",
                     m->ns, m->name, m->part_of, m->name, n, why);
    return rc;
}

/*
 * Why the claims of Etcd ns/e (etcd) may not go with its sleep ("" into why when they may:
 * hibernated with a final snapshot of this sleep, see claimguard.h). A lookup that fails:
 * its code, err set.
 */
static enum kerr asleep(const struct lookup *lk, const char *ns, const char *e,
                        const struct lookup_etcd *etcd, char *why, size_t size,
                        struct kerr_info *err)
{
    char cut[KTIME_LEN + 1] = "?";
    cJSON *sts = NULL;
    int found = 0;
    enum kerr rc;

    sleep_problem(etcd, why, size);
    if (why[0])
        return KERR_OK;
    (void)ktime_format(etcd->cut_at, cut);
    if (!lk->snapshot || !lk->sts_fresh)
        return kerr_set(err, KERR_UNSUPPORTED, "no snapshot or StatefulSet lookup is configured");
    if ((rc = lk->snapshot(lk->ctx, ns, e, etcd->cut_at, &found, err)) != KERR_OK)
        return rc;
    if (!found) {
        snprintf(why, size,
                 "no full snapshot EtcdOpsTask of it has Succeeded since its traffic cut at %s",
                 cut);
        return KERR_OK;
    }
    /* the StatefulSet as the API server has it now: a cache may not have seen a wake yet */
    rc = lk->sts_fresh(lk->ctx, ns, e, &sts, err);
    if (rc != KERR_OK && (rc != KERR_NOTFOUND || lookup_unconfirmed(rc, err)))
        return rc;
    sts_problem(e, etcd, sts, why, size);
    cJSON_Delete(sts);
    if (why[0])
        return KERR_OK;
    return store_problem(lk, ns, etcd, why, size, err);
}

/*
 * A break glass on Etcd e (etcd) that counts, for what req does (what): its use noted in *pg
 * (a second Etcd's: refused, *decided 1) and the warning added.
 */
static enum kerr on_glass(const struct review_req *req, const char *e,
                          const struct lookup_etcd *etcd, const char *what,
                          struct pvcguard_glass *pg, struct review_resp *resp, int *decided)
{
    if (pg->gp.what[0] && strcmp(pg->etcd.uid, etcd->uid) != 0) {
        *decided = 1;
        return review_deny(resp,
                           "PersistentVolumeClaim %s/%s is named as a claim of Etcd %s and of "
                           "Etcd %s: a request is admitted on the break glass of one Etcd only",
                           req->namespace, req->name, pg->name, e);
    }
    if (!pg->gp.what[0]) {
        glassadm_pend(&pg->gp, what, 0);
        snprintf(pg->name, sizeof(pg->name), "%s", e);
        pg->etcd = *etcd;
    }
    return review_warn(resp, "%s, allowed by annotation %s of Etcd %s: %s", what,
                       HIBGUARD_ANN_BREAK_GLASS, e, etcd->break_glass_reason);
}

/* The Etcd ns/e: KERR_OK, KERR_NOTFOUND (confirmed), else the 500 in resp (*decided 1). */
static enum kerr find_etcd(const struct lookup *lk, const struct review_req *req, const char *ns,
                           const char *name, const char *e, struct lookup_etcd *etcd,
                           struct review_resp *resp, int *decided, enum kerr *rrc)
{
    struct kerr_info err;
    enum kerr rc;

    kerr_clear(&err);
    rc = lk->etcd(lk->ctx, ns, e, etcd, &err);
    if (rc == KERR_OK || (rc == KERR_NOTFOUND && !lookup_unconfirmed(rc, &err)))
        return rc;
    *decided = 1;
    *rrc =
        review_errored(resp, 500,
                       "PersistentVolumeClaim %s/%s may be a member claim of Etcd %s, which "
                       "cannot be looked up (%s): not %s on an unanswered question",
                       ns, name, e, err.msg, req->op == REVIEW_OP_CREATE ? "created" : "deleted");
    return rc;
}

/* Judge the DELETE of claim name of member ordinal of Etcd ns/e; *decided as claimguard_delete. */
static enum kerr judge_delete(time_t now, const struct lookup *lk, const struct review_req *req,
                              const char *ns, const char *name, size_t tlen, const char *e,
                              long ordinal, struct pvcguard_glass *pg, struct review_resp *resp,
                              int *decided)
{
    char why[1024], glass[160], what[2 * LOOKUP_NAME_MAX + 96];
    struct lookup_etcd etcd;
    struct kerr_info err;
    enum kerr rc = KERR_OK;
    int other = 0;

    /* every ordinal: a member range read from spec.replicas is its editor's to shrink (3 -> 0
     * -> 1 would free claims 1 and 2 of a sleeping cluster), and a member past it is data too */
    if (find_etcd(lk, req, ns, name, e, &etcd, resp, decided, &rc) != KERR_OK || etcd.deleting)
        return rc;
    /* another application's claim whose name reads as this Etcd's too (webhook/claimalias.h) */
    if ((rc = claimalias_review(lk, ns, req->old_object, 0, name, tlen, e, "deleted", &other, resp,
                                decided)) ||
        *decided || other)
        return rc;
    kerr_clear(&err);
    if ((rc = asleep(lk, ns, e, &etcd, why, sizeof(why), &err)) != KERR_OK) {
        *decided = 1;
        return review_errored(resp, 500,
                              "PersistentVolumeClaim %s/%s, a claim of Etcd %s: whether its "
                              "final snapshot was taken cannot be told (%s)",
                              ns, name, e, err.msg);
    }
    if (!why[0])
        return KERR_OK;
    pvcguard_glass_problem(now, &etcd, glass, sizeof(glass));
    if (!glass[0]) {
        snprintf(what, sizeof(what), "deleting PersistentVolumeClaim %s/%s of member %s-%ld", ns,
                 name, e, ordinal);
        return on_glass(req, e, &etcd, what, pg, resp, decided);
    }
    *decided = 1;
    return review_deny(resp,
                       "PersistentVolumeClaim %s/%s cannot be deleted by %s: it is the claim of "
                       "member %s-%ld of Etcd %s, which is not being deleted, and %s. Its "
                       "member would start again on a new, empty volume and the writes since "
                       "the last snapshot would be lost. Delete the Etcd, or hibernate it first "
                       "(its claims may go once the final snapshot is taken), or, if the volume "
                       "must go now: " GLASS_ADVICE,
                       ns, name, req->username, e, ordinal, e, why, ns, e, HIBGUARD_ANN_BREAK_GLASS,
                       glass);
}

enum kerr claimguard_delete(time_t now, const struct lookup *lk, const struct review_req *req,
                            struct pvcguard_glass *pg, struct review_resp *resp, int *decided)
{
    const char *ns = req->namespace;
    char e[LOOKUP_NAME_MAX + 1];
    size_t pos = 0;
    long ordinal;
    enum kerr rc = KERR_OK;

    *decided = 0;
    if (req->op != REVIEW_OP_DELETE || !member_is_kind(req, "", "PersistentVolumeClaim") ||
        pg->gp.what[0])
        return KERR_OK;
    /* *pos is past "<template>-<etcd>"'s first byte: the template is pos - 2 bytes long */
    while (!rc && !*decided && claimguard_split(req->name, &pos, e, sizeof(e), &ordinal))
        rc = judge_delete(now, lk, req, ns, req->name, pos - 2, e, ordinal, pg, resp, decided);
    return rc;
}

/*
 * The users that bind claims to volumes (kube-controller-manager's persistent volume
 * controller, with and without --use-service-account-credentials): an UPDATE of theirs that
 * sets spec.volumeName is the binding of a claim to the volume it asked for.
 */
static const char *const binders[] = {
    "system:serviceaccount:kube-system:persistent-volume-binder",
    "system:kube-controller-manager",
};

/* 1 when req UPDATEs spec.volumeName of a claim from empty, by anyone but a binder. */
static int prebinds(const struct review_req *req)
{
    const char *was = kjson_get_str(req->old_object, "spec.volumeName");
    const char *now = kjson_get_str(req->object, "spec.volumeName");
    size_t i;

    if (!now || !*now || (was && *was))
        return 0;
    for (i = 0; i < sizeof(binders) / sizeof(binders[0]); i++)
        if (strcmp(req->username, binders[i]) == 0)
            return 0;
    return 1;
}

enum kerr claimguard_create(time_t now, const struct lookup *lk, const struct review_req *req,
                            struct pvcguard_glass *pg, struct review_resp *resp, int *decided)
{
    const char *ns = *req->namespace ? req->namespace : lookup_meta_str(req->object, "namespace");
    const char *name = *req->name ? req->name : lookup_meta_str(req->object, "name");
    char e[LOOKUP_NAME_MAX + 1], glass[160], what[2 * LOOKUP_NAME_MAX + 96];
    int update = req->op == REVIEW_OP_UPDATE;
    const char *field = "volumeName", *verb = update ? "updating" : "creating";
    struct lookup_etcd etcd;
    size_t pos = 0;
    long ordinal;
    enum kerr rc = KERR_OK;

    *decided = 0;
    if (!member_is_kind(req, "", "PersistentVolumeClaim") ||
        (req->op == REVIEW_OP_CREATE ? !claimguard_seeded(req->object, &field)
                                     : !update || !prebinds(req)))
        return KERR_OK;
    while (!rc && !*decided && claimguard_split(name, &pos, e, sizeof(e), &ordinal)) {
        if (find_etcd(lk, req, ns, name, e, &etcd, resp, decided, &rc) != KERR_OK)
            continue;
        pvcguard_glass_problem(now, &etcd, glass, sizeof(glass));
        if (!glass[0]) {
            snprintf(what, sizeof(what),
                     "%s PersistentVolumeClaim %s/%s of member %s-%ld with spec.%s", verb, ns, name,
                     e, ordinal, field);
            rc = on_glass(req, e, &etcd, what, pg, resp, decided);
            continue;
        }
        *decided = 1;
        if (update)
            rc = review_deny(resp,
                             "PersistentVolumeClaim %s/%s cannot be bound by %s to volume %.253s "
                             "(spec.volumeName): it is named as the claim of member %s-%ld of "
                             "Etcd %s, and that member would start on the data of that volume "
                             "instead of its own or its final snapshot's. Only the persistent "
                             "volume controller binds member claims; delete the claim (the "
                             "StatefulSet controller creates it again, empty) or, if you must: "
                             "" GLASS_ADVICE,
                             ns, name, req->username, kjson_get_str(req->object, "spec.volumeName"),
                             e, ordinal, e, ns, e, HIBGUARD_ANN_BREAK_GLASS, glass);
        else
            rc = review_deny(resp,
                             "PersistentVolumeClaim %s/%s cannot be created with spec.%s by %s: "
                             "it is named as the claim of member %s-%ld of Etcd %s, and that "
                             "member would start on the data of the volume it names instead of "
                             "its own or its final snapshot's (etcd-backup-restore does not "
                             "restore a member whose data directory holds a database). Create "
                             "it without spec.dataSource, spec.dataSourceRef and "
                             "spec.volumeName (the StatefulSet controller creates the claims it "
                             "needs) or, if you must: " GLASS_ADVICE,
                             ns, name, field, req->username, e, ordinal, e, ns, e,
                             HIBGUARD_ANN_BREAK_GLASS, glass);
    }
    return rc;
}
