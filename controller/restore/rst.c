/* rst - restore progress of an Etcd re-created from a backup. */
#include "controller/restore/rst.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/log.h"
#include "controller/core/ctl.h"
#include "controller/core/etcdspec.h"
#include "controller/core/oref.h"
#include "controller/core/rctx.h"

#define MISSING_SHOWN 8

void rst_progress_parse(const char *text, struct rst_progress *out)
{
    cJSON *p = NULL;
    const char *e;
    bool b;

    memset(out, 0, sizeof(*out));
    out->awaiting_status = true;
    out->awaiting_resources = true;
    if (!text || kjson_parse(text, strlen(text), NULL, &p, NULL, NULL) != KERR_OK)
        return;
    if (kjson_get_bool(p, "awaitingStatus", &b) == KERR_OK)
        out->awaiting_status = b;
    if (kjson_get_bool(p, "awaitingResources", &b) == KERR_OK)
        out->awaiting_resources = b;
    e = kjson_get_str(p, "error");
    if (e)
        snprintf(out->error, sizeof(out->error), "%s", e);
    e = kjson_get_str(p, "waiting");
    if (e)
        snprintf(out->waiting, sizeof(out->waiting), "%s", e);
    cJSON_Delete(p);
}

enum kerr rst_progress_print(const struct rst_progress *p, char **out, struct kerr_info *err)
{
    cJSON *o = cJSON_CreateObject();
    enum kerr rc;

    *out = NULL;
    if (!o || !cJSON_AddBoolToObject(o, "awaitingStatus", p->awaiting_status) ||
        !cJSON_AddBoolToObject(o, "awaitingResources", p->awaiting_resources) ||
        !cJSON_AddStringToObject(o, "error", p->error) ||
        (p->waiting[0] && !cJSON_AddStringToObject(o, "waiting", p->waiting))) {
        cJSON_Delete(o);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = kjson_print(o, out, NULL, err);
    cJSON_Delete(o);
    return rc;
}

/* The state of one pass. */
struct pass {
    const struct rctx *x;
    const cJSON *etcd;
    struct etcdspec e;
    char rv[64];   /* the Etcd's resourceVersion, after our own writes */
    cJSON *backup; /* OWNS: the EtcdStatusBackup, or NULL */
    struct rst_progress p;
    const char *wait_reason; /* what it waits for, told only when the progress changes */
    char wait_note[768];
};

/* Merge-patch the Etcd's metadata with md (TAKES), preconditioned on the resourceVersion. */
static enum kerr patch_meta(struct pass *s, cJSON *md, struct kerr_info *err)
{
    cJSON *patch = cJSON_CreateObject(), *out = NULL;
    enum kerr rc = KERR_NOMEM;
    const char *rv;

    if (patch && cJSON_AddStringToObject(md, "resourceVersion", s->rv) &&
        cJSON_AddItemToObject(patch, "metadata", md)) {
        md = NULL;
        rc = k8s_patch(s->x->client, &ETCDSPEC_RES_ETCD, s->e.namespace, s->e.name, K8S_PATCH_MERGE,
                       patch, NULL, &out, err);
    } else {
        kerr_set(err, rc, NULL);
    }
    rv = kjson_get_str(out, "metadata.resourceVersion");
    if (rc == KERR_OK && rv)
        snprintf(s->rv, sizeof(s->rv), "%s", rv);
    cJSON_Delete(md);
    cJSON_Delete(patch);
    cJSON_Delete(out);
    return rc;
}

/* {annotations: {progress: text}} as the Etcd's metadata patch. */
static enum kerr write_progress(struct pass *s, struct kerr_info *err)
{
    cJSON *md = cJSON_CreateObject();
    char *text = NULL;
    enum kerr rc;

    rc = rst_progress_print(&s->p, &text, err);
    if (rc == KERR_OK && md)
        rc = kjson_setv(md,
                        (const char *const[]){ "annotations", ETCDSPEC_ANN_RESTORE_PROGRESS, NULL },
                        cJSON_CreateString(text), err);
    free(text);
    if (!md)
        rc = kerr_set(err, KERR_NOMEM, NULL);
    if (rc != KERR_OK) {
        cJSON_Delete(md);
        return rc;
    }
    rc = patch_meta(s, md, err);
    return rc == KERR_OK ? rc : kerr_wrap(err, "writing the restore progress");
}

/* Write the backup's status through /status (PUT with the resourceVersion). */
static enum kerr restore_status(struct pass *s, struct kerr_info *err)
{
    const cJSON *status = kjson_get_obj(s->backup, "spec.statusBackup");
    cJSON *obj, *out = NULL;
    enum kerr rc;
    const char *rv;

    if (!status)
        return KERR_OK;
    obj = cJSON_Duplicate(s->etcd, 1);
    if (!obj)
        return kerr_set(err, KERR_NOMEM, NULL);
    rc = kjson_set(obj, "status", cJSON_Duplicate(status, 1), err);
    if (rc == KERR_OK)
        rc = kjson_set_str(obj, "metadata.resourceVersion", s->rv, err);
    if (rc == KERR_OK)
        rc = k8s_update(s->x->client, &ETCDSPEC_RES_ETCD, s->e.namespace, s->e.name, obj,
                        &(struct k8s_write_opts){ .subresource = "status" }, &out, err);
    rv = kjson_get_str(out, "metadata.resourceVersion");
    if (rc == KERR_OK && rv)
        snprintf(s->rv, sizeof(s->rv), "%s", rv);
    cJSON_Delete(obj);
    cJSON_Delete(out);
    return rc == KERR_OK ? rc : kerr_wrap(err, "writing the restored status");
}

/* Read the EtcdStatusBackup (s->backup, NULL when absent) and keep it owned by the live Etcd. */
static enum kerr read_backup(struct pass *s, struct kerr_info *err)
{
    cJSON *want = NULL;
    enum kerr rc;

    rc = k8s_get(s->x->client, &ETCDSPEC_RES_STATUSBACKUP, s->e.namespace, s->e.name, NULL,
                 &s->backup, err);
    if (rc == KERR_NOTFOUND)
        return KERR_OK;
    if (rc == KERR_OK && etcdspec_owner_ref(s->etcd, &want, NULL) == KERR_OK)
        (void)oref_repair(s->x->client, &ETCDSPEC_RES_STATUSBACKUP, s->e.namespace, s->e.name,
                          s->backup, want, NULL, NULL);
    cJSON_Delete(want);
    return rc;
}

static enum kerr check_status(struct pass *s, struct kerr_info *err)
{
    const char *exists = etcdspec_annotation(s->etcd, ETCDSPEC_ANN_BACKUP_EXISTS);
    enum kerr rc = read_backup(s, err);

    if (rc != KERR_OK)
        return rc;
    if (s->backup) {
        rc = restore_status(s, err);
        if (rc != KERR_OK)
            return rc;
        s->p.awaiting_status = false;
        rctx_event(s->x, s->etcd, EV_NORMAL, "StatusRestored", "Restore",
                   "status restored from EtcdStatusBackup %s", s->e.name);
        return KERR_OK;
    }
    if (exists && strcmp(exists, "false") == 0) {
        s->p.awaiting_status = false;
        snprintf(s->p.error, sizeof(s->p.error), "%s", RST_NO_BACKUP_MSG);
        rctx_event(s->x, s->etcd, EV_WARNING, "StatusRecoveryImpossible", "Restore", "%s",
                   RST_NO_BACKUP_MSG);
        return KERR_OK;
    }
    s->wait_reason = "RestoreAwaitingStatus";
    snprintf(s->wait_note, sizeof(s->wait_note),
             "waiting for EtcdStatusBackup %s/%s, which does not exist: apply it from the "
             "backup of the cluster's objects (it holds the Etcd's status), or, when status "
             "backups were not enabled, annotate the Etcd " ETCDSPEC_ANN_BACKUP_EXISTS
             "=false to go on without it",
             s->e.namespace, s->e.name);
    return KERR_OK;
}

/* The inventory: the backup's spec.components, or the StatefulSet when there is no backup. */
static cJSON *inventory(struct pass *s)
{
    const cJSON *c = kjson_get_arr(s->backup, "spec.components");
    cJSON *arr, *one;

    if (c)
        return cJSON_Duplicate(c, 1);
    arr = cJSON_CreateArray();
    one = cJSON_CreateObject();
    if (!arr || !one || !cJSON_AddStringToObject(one, "kind", "StatefulSet") ||
        !cJSON_AddStringToObject(one, "name", s->e.name) || !cJSON_AddItemToArray(arr, one)) {
        cJSON_Delete(one);
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

/* Is the component kind/name in the cached list have, or (a cache miss) there for a GET? */
static int present(struct pass *s, const cJSON *have, const char *kind, const char *name)
{
    const struct k8s_resource *res = etcdspec_kind_resource(kind);
    const cJSON *h;
    cJSON *obj = NULL;
    int found;

    cJSON_ArrayForEach (h, have) {
        const char *k = kjson_get_str(h, "kind"), *n = kjson_get_str(h, "metadata.name");

        if (k && n && strcmp(k, kind) == 0 && strcmp(n, name) == 0)
            return 1;
    }
    if (!res)
        return 1; /* a kind this controller does not know cannot be waited for */
    found = k8s_get(s->x->client, res, s->e.namespace, name, NULL, &obj, NULL) == KERR_OK;
    cJSON_Delete(obj);
    return found;
}

static enum kerr check_resources(struct pass *s, struct kerr_info *err)
{
    cJSON *inv = NULL, *have = NULL;
    const cJSON *c, *list;
    struct buf missing;
    int n = 0;
    enum kerr rc;

    if (!s->backup && (rc = read_backup(s, err)) != KERR_OK)
        return rc;
    inv = inventory(s);
    if (!inv)
        return kerr_set(err, KERR_NOMEM, NULL);
    rc = rctx_components(s->x, s->e.namespace, s->e.name, &have, err);
    buf_init(&missing, 2048);
    list = rc == KERR_OK ? inv : NULL;
    cJSON_ArrayForEach (c, list) {
        const char *kind = kjson_get_str(c, "kind"), *name = kjson_get_str(c, "name");

        if (!kind || !name || present(s, have, kind, name))
            continue;
        if (n++ < MISSING_SHOWN &&
            buf_appendf(&missing, "%s%s/%s", n > 1 ? ", " : "", kind, name) != KERR_OK)
            break;
    }
    if (rc == KERR_OK)
        s->p.awaiting_resources = n > 0;
    if (rc == KERR_OK && n > 0) {
        s->wait_reason = "RestoreAwaitingResources";
        snprintf(s->wait_note, sizeof(s->wait_note),
                 "waiting for %d components: %s%s; apply them from the backup of the cluster's "
                 "objects (etcd-druid re-creates those it owns once the Etcd reconciles)",
                 n, buf_str(&missing), n > MISSING_SHOWN ? ", ..." : "");
    }
    buf_release(&missing);
    cJSON_Delete(inv);
    cJSON_Delete(have);
    return rc;
}

/* Remove the restoring label, the suspend and the progress annotations in one patch. */
static enum kerr resume(struct pass *s, struct kerr_info *err)
{
    const char *hib = etcdspec_annotation(s->etcd, ETCDSPEC_ANN_HIBERNATE);
    int hibernating = (hib && strcmp(hib, "true") == 0) ||
                      etcdspec_annotation(s->etcd, ETCDSPEC_ANN_HIBERNATION_PHASE);
    cJSON *md = cJSON_CreateObject();
    enum kerr rc = md ? KERR_OK : KERR_NOMEM;

    if (rc == KERR_OK)
        rc = kjson_setv(md, (const char *const[]){ "labels", ETCDSPEC_LABEL_RESTORING, NULL },
                        cJSON_CreateNull(), err);
    /*
     * A hibernated Etcd keeps etcd-druid suspended: it would scale the StatefulSet back up.
     * Otherwise the suspension goes only when etcd-warden added it (the mutating webhook on
     * the re-creation, or hibernation before the backup): an operator's stays.
     */
    if (rc == KERR_OK && !hibernating && etcdspec_annotation(s->etcd, ETCDSPEC_ANN_SUSPEND_ADDED)) {
        rc = kjson_setv(md, (const char *const[]){ "annotations", ETCDSPEC_ANN_SUSPEND, NULL },
                        cJSON_CreateNull(), err);
        if (rc == KERR_OK)
            rc = kjson_setv(
                md, (const char *const[]){ "annotations", ETCDSPEC_ANN_SUSPEND_ADDED, NULL },
                cJSON_CreateNull(), err);
    }
    if (rc == KERR_OK)
        rc = kjson_setv(md,
                        (const char *const[]){ "annotations", ETCDSPEC_ANN_RESTORE_PROGRESS, NULL },
                        cJSON_CreateNull(), err);
    if (rc != KERR_OK) {
        cJSON_Delete(md);
        return kerr_set(err, rc, NULL);
    }
    return patch_meta(s, md, err);
}

/* Both flags clear: resume, or record why not. */
static enum kerr finish(struct pass *s, long *requeue_ms, struct kerr_info *err)
{
    struct kerr_info why;
    enum kerr rc = resume(s, &why);

    if (rc == KERR_OK) {
        log_info("restore complete, reconciliation resumes", "namespace", s->e.namespace, "name",
                 s->e.name);
        rctx_event(s->x, s->etcd, EV_NORMAL, "RestoreCompleted", "Restore",
                   "status and components restored; reconciliation resumes");
        return KERR_OK;
    }
    if (rc == KERR_CONFLICT) {
        *err = why;
        return rc;
    }
    snprintf(s->p.error, sizeof(s->p.error), "%s", why.msg);
    rctx_event(s->x, s->etcd, EV_WARNING, "RestoreResumeRefused", "Restore",
               "removing the restoring label failed: %s", why.msg);
    *requeue_ms = RST_REQUEUE_MS;
    return write_progress(s, err);
}

bool rst_ended_by_hand(const cJSON *etcd)
{
    return etcdspec_annotation(etcd, ETCDSPEC_ANN_RESTORE_PROGRESS) &&
           !etcdspec_label(etcd, ETCDSPEC_LABEL_RESTORING) &&
           !kjson_has(etcd, "metadata.deletionTimestamp");
}

/*
 * The restoring label was removed by hand: lift what etcd-warden added for the restore (the
 * suspension, when its record says etcd-warden set it and no hibernation holds it; the
 * progress annotation), and tell what the restore had not done yet.
 */
static enum kerr ended_by_hand(struct pass *s, struct kerr_info *err)
{
    const char *hib = etcdspec_annotation(s->etcd, ETCDSPEC_ANN_HIBERNATE);
    int hibernating = (hib && strcmp(hib, "true") == 0) ||
                      etcdspec_annotation(s->etcd, ETCDSPEC_ANN_HIBERNATION_PHASE);
    int ours = etcdspec_annotation(s->etcd, ETCDSPEC_ANN_SUSPEND_ADDED) != NULL;
    int lift = ours && !hibernating;
    int unfinished = s->p.awaiting_status || s->p.awaiting_resources;
    cJSON *md = cJSON_CreateObject();
    enum kerr rc = md ? KERR_OK : KERR_NOMEM;

    if (rc == KERR_OK)
        rc = kjson_setv(md,
                        (const char *const[]){ "annotations", ETCDSPEC_ANN_RESTORE_PROGRESS, NULL },
                        cJSON_CreateNull(), err);
    if (rc == KERR_OK && lift)
        rc = kjson_setv(md, (const char *const[]){ "annotations", ETCDSPEC_ANN_SUSPEND, NULL },
                        cJSON_CreateNull(), err);
    if (rc == KERR_OK && lift)
        rc =
            kjson_setv(md, (const char *const[]){ "annotations", ETCDSPEC_ANN_SUSPEND_ADDED, NULL },
                       cJSON_CreateNull(), err);
    if (rc != KERR_OK) {
        cJSON_Delete(md);
        return kerr_set(err, rc, NULL);
    }
    if ((rc = patch_meta(s, md, err)) != KERR_OK)
        return kerr_wrap(err, "lifting the restore ended by hand");
    log_info("restoring label removed by hand, restore ended", "namespace", s->e.namespace, "name",
             s->e.name);
    rctx_event(s->x, s->etcd, unfinished ? EV_WARNING : EV_NORMAL, "RestoreEndedByHand", "Restore",
               "the restoring label was removed by hand%s%s%s%s; %s",
               unfinished ? " before the restore finished (still awaiting " : "",
               s->p.awaiting_status ? "the status from the EtcdStatusBackup" : "",
               s->p.awaiting_status && s->p.awaiting_resources ? " and " : "",
               unfinished ? (s->p.awaiting_resources ? "components)" : ")") : "",
               lift ? "etcd-warden lifted the suspension it had added: etcd-druid reconciles again"
               : hibernating ? "etcd-druid stays suspended: the Etcd is hibernated"
                             : "the suspension was not etcd-warden's and stays");
    return KERR_OK;
}

/*
 * The suspension a restore holds was removed (`kubectl druid reconciliation resume` does that):
 * set it again, recorded as etcd-warden's, with a Warning. etcd-druid would otherwise reconcile
 * the restored Etcd before its components are back, and scale a StatefulSet restored at 0.
 */
static enum kerr reassert_suspension(struct pass *s, struct kerr_info *err)
{
    cJSON *md = cJSON_CreateObject();
    enum kerr rc = md ? KERR_OK : KERR_NOMEM;

    if (rc == KERR_OK)
        rc = kjson_setv(md, (const char *const[]){ "annotations", ETCDSPEC_ANN_SUSPEND, NULL },
                        cJSON_CreateString("true"), err);
    if (rc == KERR_OK)
        rc =
            kjson_setv(md, (const char *const[]){ "annotations", ETCDSPEC_ANN_SUSPEND_ADDED, NULL },
                       cJSON_CreateString("true"), err);
    if (rc != KERR_OK) {
        cJSON_Delete(md);
        return kerr_set(err, rc, NULL);
    }
    if ((rc = patch_meta(s, md, err)) != KERR_OK)
        return kerr_wrap(err, "setting the restore's suspension again");
    rctx_event(s->x, s->etcd, EV_WARNING, "SuspensionReasserted", "Restore",
               "%s was removed while the restore holds it: set again (etcd-druid would reconcile "
               "the Etcd before its components are back); to end the restore, remove the label "
               "%s alone",
               ETCDSPEC_ANN_SUSPEND, ETCDSPEC_LABEL_RESTORING);
    return KERR_OK;
}

enum kerr rst_run(const struct rctx *x, const cJSON *etcd, long *requeue_ms, struct kerr_info *err)
{
    const char *before = etcdspec_annotation(etcd, ETCDSPEC_ANN_RESTORE_PROGRESS);
    struct pass s = { .x = x, .etcd = etcd };
    char *now = NULL;
    enum kerr rc;

    *requeue_ms = 0;
    rc = etcdspec_read(etcd, &s.e, err);
    if (rc != KERR_OK || !s.e.namespace || kjson_has(etcd, "metadata.deletionTimestamp") ||
        (!etcdspec_label(etcd, ETCDSPEC_LABEL_RESTORING) && !rst_ended_by_hand(etcd)))
        return rc;
    before = kjson_get_str(etcd, "metadata.resourceVersion");
    snprintf(s.rv, sizeof(s.rv), "%s", before ? before : "");
    before = etcdspec_annotation(etcd, ETCDSPEC_ANN_RESTORE_PROGRESS);
    rst_progress_parse(before, &s.p);
    if (rst_ended_by_hand(etcd))
        return ended_by_hand(&s, err);
    if (!etcdspec_annotation(etcd, ETCDSPEC_ANN_SUSPEND)) {
        *requeue_ms = RST_REQUEUE_MS;
        return reassert_suspension(&s, err);
    }
    s.p.waiting[0] = '\0';
    if (s.p.awaiting_status)
        rc = check_status(&s, err);
    if (rc == KERR_OK && !s.p.awaiting_status)
        rc = check_resources(&s, err);
    if (rc == KERR_OK && !s.p.awaiting_status && !s.p.awaiting_resources) {
        rc = finish(&s, requeue_ms, err);
        cJSON_Delete(s.backup);
        return rc;
    }
    cJSON_Delete(s.backup);
    if (rc != KERR_OK)
        return rc;
    *requeue_ms = RST_REQUEUE_MS;
    if (s.wait_reason)
        snprintf(s.p.waiting, sizeof(s.p.waiting), "%s", s.wait_note);
    rc = rst_progress_print(&s.p, &now, err);
    if (rc == KERR_OK && (!before || strcmp(before, now) != 0)) {
        rc = write_progress(&s, err);
        if (s.wait_reason)
            rctx_event(x, etcd, EV_NORMAL, s.wait_reason, "Restore", "%s", s.wait_note);
    }
    free(now);
    return rc;
}

enum kerr rst_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *err)
{
    struct rctx x;

    res->requeue_ms = 0;
    rctx_from_ctl(c, &x);
    return rst_run(&x, etcd, &res->requeue_ms, err);
}
