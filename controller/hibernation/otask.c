/*
 * otask - the EtcdOpsTask executor (see otask.h): the I/O of one call of
 * otask_step (the pure checks are in otask_spec.c).
 */
#include "controller/hibernation/otask.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/events.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/core/etcdspec.h"
#include "controller/hibernation/sidecar.h"
#include "controller/core/smember.h"

#define MAX_ROUNDS     10
#define DEFAULT_CA_KEY "bundle.crt"
#define WRITE_TRIES    3

static const struct k8s_resource RES_STS = { "apps", "v1", "statefulsets", 1 };

static long int_or(const cJSON *o, const char *path, long def)
{
    int64_t v;
    return kjson_get_int64(o, path, &v) == KERR_OK ? (long)v : def;
}

static const char *str_or(const cJSON *o, const char *path)
{
    const char *s = kjson_get_str(o, path);
    return s ? s : "";
}

/* ---- I/O ---- */

/* One call: the task as last read (OWNED) and the run's identity. */
struct run {
    const struct otask_env *env;
    const char *ns, *name;
    cJSON *task;
    char run_id[CRYPTO_UUID_LEN + 1];
};

/* Set lastOperation, and state (+ lastTransitionTime, startedAt) when it changes. */
static enum kerr set_status(cJSON *task, enum otask_state st, const char *op_type,
                            const char *op_state, const char *desc, const char *run_id)
{
    char now[KTIME_LEN + 1];
    cJSON *status = (cJSON *)kjson_get_obj(task, "status");
    enum otask_state old = otask_state_parse(kjson_get_str(task, "status.state"));

    ktime_format(time(NULL), now);
    if (!status && kjson_set(task, "status", cJSON_CreateObject(), NULL) != KERR_OK)
        return KERR_NOMEM;
    status = (cJSON *)kjson_get_obj(task, "status");
    if (st != old && (kjson_set_str(status, "state", otask_state_name(st), NULL) ||
                      kjson_set_str(status, "lastTransitionTime", now, NULL)))
        return KERR_NOMEM;
    if (st == OTASK_INPROGRESS && st != old && kjson_set_str(status, "startedAt", now, NULL))
        return KERR_NOMEM;
    if (kjson_set_str(status, "lastOperation.type", op_type, NULL) ||
        kjson_set_str(status, "lastOperation.state", op_state, NULL) ||
        kjson_set_str(status, "lastOperation.description", desc, NULL) ||
        kjson_set_str(status, "lastOperation.runID", run_id, NULL) ||
        kjson_set_str(status, "lastOperation.lastUpdateTime", now, NULL))
        return KERR_NOMEM;
    return KERR_OK;
}

/* Append {code, description, observedAt} to status.lastErrors, keeping the last 3. */
static enum kerr add_error(cJSON *task, const char *code, const char *desc)
{
    char now[KTIME_LEN + 1];
    cJSON *errs = (cJSON *)kjson_get_arr(task, "status.lastErrors"), *e = cJSON_CreateObject();

    ktime_format(time(NULL), now);
    if (!e || !cJSON_AddStringToObject(e, "code", code) ||
        !cJSON_AddStringToObject(e, "description", desc) ||
        !cJSON_AddStringToObject(e, "observedAt", now))
        goto fail;
    if (!errs) {
        if (kjson_set(task, "status.lastErrors", cJSON_CreateArray(), NULL) != KERR_OK)
            goto fail;
        errs = (cJSON *)kjson_get_arr(task, "status.lastErrors");
    }
    cJSON_AddItemToArray(errs, e);
    while (cJSON_GetArraySize(errs) > OTASK_MAX_ERRORS)
        cJSON_DeleteItemFromArray(errs, 0);
    return KERR_OK;
fail:
    cJSON_Delete(e);
    return KERR_NOMEM;
}

/*
 * Write r->task's status through /status. On a 409 the task is read again
 * and, if its state is still the one this run started from, the same status
 * is written onto the fresh object (a snapshot already taken must not be
 * lost to a label change).
 */
static enum kerr put_status(struct run *r, enum otask_state from, struct kerr_info *err)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    cJSON *out = NULL, *fresh = NULL, *status;
    enum kerr rc = KERR_CONFLICT;

    for (int i = 0; i < WRITE_TRIES && rc == KERR_CONFLICT; i++) {
        rc = k8s_update(r->env->client, &ETCDSPEC_RES_OPSTASK, r->ns, r->name, r->task, &wo, &out,
                        err);
        if (rc == KERR_OK) {
            cJSON_Delete(r->task);
            r->task = out;
            return KERR_OK;
        }
        if (rc != KERR_CONFLICT ||
            k8s_get(r->env->client, &ETCDSPEC_RES_OPSTASK, r->ns, r->name, NULL, &fresh, err))
            break;
        if (otask_state_parse(kjson_get_str(fresh, "status.state")) != from) {
            cJSON_Delete(fresh);
            return KERR_CONFLICT;
        }
        status = cJSON_DetachItemFromObjectCaseSensitive(r->task, "status");
        cJSON_DeleteItemFromObjectCaseSensitive(fresh, "status");
        cJSON_AddItemToObject(fresh, "status", status);
        cJSON_Delete(r->task);
        r->task = fresh;
        fresh = NULL;
    }
    return rc;
}

/* Move to state st with lastOperation; an error code adds a lastErrors entry. */
static enum kerr transition(struct run *r, enum otask_state st, const char *op_type,
                            const char *op_state, const char *code, const char *desc,
                            struct kerr_info *err)
{
    enum otask_state from = otask_state_parse(kjson_get_str(r->task, "status.state"));

    if (set_status(r->task, st, op_type, op_state, desc, r->run_id) != KERR_OK ||
        (code && add_error(r->task, code, desc) != KERR_OK))
        return kerr_set(err, KERR_NOMEM, "out of memory");
    return put_status(r, from, err);
}

static enum kerr reject(struct run *r, const char *code, const char *desc, struct kerr_info *err)
{
    enum kerr rc = transition(r, OTASK_REJECTED, "Admit", "Failed", code, desc, err);

    if (rc == KERR_OK)
        ev_log_emitf(r->env->events, r->task, EV_WARNING, "TaskRejected", "Snapshot", "%s: %s",
                     code, desc);
    return rc;
}

/* Finalizer: add (want 1) or remove (want 0) by a PUT with the resourceVersion read. */
static enum kerr finalizer(struct run *r, int want, struct kerr_info *err)
{
    cJSON *fins = (cJSON *)kjson_get_arr(r->task, "metadata.finalizers"), *f, *next;

    if (want) {
        if (!fins && kjson_set(r->task, "metadata.finalizers", cJSON_CreateArray(), err))
            return KERR_NOMEM;
        fins = (cJSON *)kjson_get_arr(r->task, "metadata.finalizers");
        cJSON_AddItemToArray(fins, cJSON_CreateString(OTASK_FINALIZER));
    } else {
        for (f = fins ? fins->child : NULL; f; f = next) {
            next = f->next;
            if (cJSON_IsString(f) && strcmp(f->valuestring, OTASK_FINALIZER) == 0)
                cJSON_Delete(cJSON_DetachItemViaPointer(fins, f));
        }
    }
    return k8s_update(r->env->client, &ETCDSPEC_RES_OPSTASK, r->ns, r->name, r->task, NULL, NULL,
                      err);
}

static int has_finalizer(const cJSON *task)
{
    const cJSON *f;

    cJSON_ArrayForEach (f, kjson_get_arr(task, "metadata.finalizers")) {
        if (cJSON_IsString(f) && strcmp(f->valuestring, OTASK_FINALIZER) == 0)
            return 1;
    }
    return 0;
}

static enum kerr get_etcd(struct run *r, const char *name, cJSON **out, struct kerr_info *err)
{
    enum kerr rc = k8s_get(r->env->client, &ETCDSPEC_RES_ETCD, r->ns, name, NULL, out, err);

    if (rc == KERR_NOTFOUND) {
        *out = NULL;
        kerr_clear(err);
        return KERR_OK;
    }
    return rc;
}

/* Pending -> Rejected or InProgress. */
static enum kerr admit(struct run *r, struct kerr_info *err)
{
    struct otask_spec sp;
    struct kerr_info why = { 0 };
    cJSON *list = NULL, *etcd = NULL;
    const char *code = NULL;
    enum kerr rc;

    if (otask_spec_read(r->task, &sp, &why) != KERR_OK)
        return reject(r, "ERR_INVALID_CONFIG", why.msg, err);
    rc = k8s_list(r->env->client, &ETCDSPEC_RES_OPSTASK, r->ns, NULL, &list, &why);
    if (rc == KERR_FORBIDDEN)
        rc = reject(r, "ERR_INSUFFICIENT_PERMISSIONS", why.msg, err);
    else if (rc != KERR_OK)
        rc = kerr_set_api(err, rc, why.http_status, why.reason, "%s", why.msg);
    if (rc != KERR_OK)
        goto out;
    if (otask_check_duplicate(r->task, kjson_get_arr(list, "items"), &why) != KERR_OK) {
        rc = reject(r, "ERR_DUPLICATE_TASK", why.msg, err);
        goto out;
    }
    if ((rc = get_etcd(r, sp.etcd_name, &etcd, err)) != KERR_OK)
        goto out;
    if (otask_check_etcd(etcd, &code, &why) != KERR_OK) {
        rc = reject(r, code, why.msg, err);
        goto out;
    }
    rc = transition(r, OTASK_INPROGRESS, "Execution", "InProgress", NULL,
                    "admitted; taking the snapshot", err);
out:
    cJSON_Delete(list);
    cJSON_Delete(etcd);
    return rc;
}

/*
 * A failure of the API server itself (5xx, 429, transport): the read is retried by the queue
 * and says nothing about the sidecar.
 */
static int api_failed(enum kerr rc)
{
    return rc == KERR_API || rc == KERR_TOOMANY || rc == KERR_HTTP || rc == KERR_TIMEOUT;
}

/*
 * The CA of spec.backup.tls.tlsCASecretRef, when spec.backup.tls is set. *pem OWNED (free).
 * *api set when the API server failed the read (api_failed).
 */
enum kerr otask_backup_ca(struct k8s_client *client, const char *ns, const cJSON *etcd,
                          unsigned char **pem, size_t *len, int *api, struct kerr_info *err)
{
    const cJSON *ref = kjson_get_obj(etcd, "spec.backup.tls.tlsCASecretRef");
    const char *sname = kjson_get_str(ref, "name"), *sns = kjson_get_str(ref, "namespace");
    const char *key = kjson_get_str(ref, "dataKey");
    const char *segs[] = { "data", NULL, NULL };
    const char *b64;
    struct kerr_info why = { 0 };
    cJSON *secret = NULL;
    enum kerr rc;

    *pem = NULL;
    *len = 0;
    if (!kjson_get_obj(etcd, "spec.backup.tls"))
        return KERR_OK;
    if (!sname)
        return kerr_set(err, KERR_INVAL, "spec.backup.tls.tlsCASecretRef.name is not set");
    if (sns && *sns && strcmp(sns, ns) != 0)
        return kerr_set(err, KERR_INVAL,
                        "spec.backup.tls.tlsCASecretRef.namespace must be empty or the Etcd's "
                        "own namespace");
    segs[1] = key && *key ? key : DEFAULT_CA_KEY;
    rc = k8s_get(client, &ETCDSPEC_RES_SECRET, ns, sname, NULL, &secret, &why);
    if (api_failed(rc)) {
        *api = 1;
        return kerr_set(err, rc, "reading the backup CA (Secret %s): %s", sname, why.msg);
    }
    if (rc == KERR_OK) {
        b64 = cJSON_GetStringValue(kjson_getv(secret, segs));
        rc = b64 ? crypto_b64_decode(b64, strlen(b64), pem, len, &why)
                 : kerr_set(&why, KERR_INVAL, "no key %s", segs[1]);
        if (rc == KERR_OK && *len == 0)
            rc = kerr_set(&why, KERR_INVAL, "key %s is empty", segs[1]);
    }
    cJSON_Delete(secret);
    if (rc == KERR_OK)
        return KERR_OK;
    free(*pem);
    *pem = NULL;
    *len = 0;
    log_warn("backup CA not usable", "namespace", ns, "etcd", kjson_get_str(etcd, "metadata.name"),
             "secret", sname, "key", segs[1], "error", why.msg);
    return kerr_set(err, rc, "the backup CA (Secret %s, key %s) is not available", sname, segs[1]);
}

/* The task was deleted while its sidecar call is in flight (a wake-up took its cycle back). */
/* The process stops: cancelled, or beginning to stop. */
static int run_stopped(const struct otask_env *env)
{
    return (env->cancel && atomic_load(env->cancel)) ||
           (env->stopping && atomic_load(env->stopping));
}

static int run_abandoned(void *arg)
{
    const struct run *r = arg;

    if (run_stopped(r->env))
        return 1;
    return r->env->task_deleted && r->env->task_deleted(r->env->task_deleted_arg, r->ns, r->name);
}

/*
 * Ask the sidecar of each member of the Etcd's StatefulSet in ordinal order (smember.h; only
 * the backup leader's takes snapshots) until one answers 200. KERR_OK with *res filled when an
 * answer came (the last one when none was a 200); else a transport error, or with *api set, a
 * failure of the API server reading the StatefulSet, the pods or the CA (api_failed).
 */
static enum kerr call_sidecar(struct run *r, const struct otask_spec *sp, const cJSON *etcd,
                              long timeout_ms, struct sidecar_result *res, int *api,
                              struct kerr_info *err)
{
    char host[ETCDSPEC_NAME_MAX + 80];
    struct smember m[SMEMBER_MAX];
    struct sidecar_target t = { 0 };
    struct kerr_info why = { 0 };
    unsigned char *ca = NULL;
    size_t ca_len = 0;
    cJSON *sts = NULL;
    int members = 0, i;
    enum kerr rc;

    memset(res, 0, sizeof(*res));
    snprintf(host, sizeof(host), "%s-client.%s.svc", sp->etcd_name, r->ns);
    rc = k8s_get(r->env->client, &RES_STS, r->ns, sp->etcd_name, NULL, &sts, err);
    if (rc != KERR_OK) {
        *api = api_failed(rc);
        kerr_wrap(err, "StatefulSet %s", sp->etcd_name);
        goto out;
    }
    if ((rc = otask_backup_ca(r->env->client, r->ns, etcd, &ca, &ca_len, api, err)) != KERR_OK ||
        (rc = smember_list(r->env->client, r->ns, sts, m, SMEMBER_MAX, &members, api, err)) !=
            KERR_OK)
        goto out;
    t.host = host; /* the name the sidecar's certificate carries */
    t.ca_pem = (const char *)ca;
    t.ca_len = ca_len;
    t.cancel = r->env->cancel;
    t.abandon = run_abandoned;
    t.abandon_arg = r;
    for (i = 0; i < members; i++) {
        t.ip = m[i].ip;
        t.port = m[i].port;
        sidecar_result_release(res);
        rc = sidecar_snapshot(&t, sp->delta ? SIDECAR_DELTA : SIDECAR_FULL, sp->final, timeout_ms,
                              res, &why);
        if (rc == KERR_CANCELLED || (rc == KERR_OK && res->http_status == 200))
            break;
        if (rc != KERR_OK)
            kerr_set(err, rc, "pod %s: %s", m[i].pod, why.msg);
    }
    if (rc == KERR_CANCELLED)
        kerr_set(err, rc, "%s", why.msg);
out:
    free(ca);
    cJSON_Delete(sts);
    return rc;
}

/* The outcome of an answer: Succeeded or Failed. */
static enum kerr conclude(struct run *r, const struct otask_spec *sp,
                          const struct sidecar_result *res, struct kerr_info *err)
{
    char desc[512];
    enum kerr rc;

    if (res->http_status != 200) {
        snprintf(desc, sizeof(desc), "backup-restore answered HTTP %ld to %s%s%s", res->http_status,
                 sidecar_path(sp->delta ? SIDECAR_DELTA : SIDECAR_FULL, sp->final),
                 res->excerpt[0] ? ": " : "", res->excerpt);
        rc = transition(r, OTASK_FAILED, "Execution", "Failed", "ERR_CREATE_SNAPSHOT", desc, err);
        if (rc == KERR_OK)
            ev_log_emitf(r->env->events, r->task, EV_WARNING, "SnapshotFailed", "Snapshot", "%s",
                         desc);
        return rc;
    }
    if (!res->snapshot)
        snprintf(desc, sizeof(desc), "Delta snapshot was skipped by backup-restore server");
    else
        snprintf(desc, sizeof(desc), "%s snapshot %s taken (last revision %ld%s)",
                 sp->delta ? "delta" : "full", str_or(res->snapshot, "snapName"),
                 int_or(res->snapshot, "lastRevision", 0), sp->final ? ", final" : "");
    rc = transition(r, OTASK_SUCCEEDED, "Execution", "Completed", NULL, desc, err);
    if (rc == KERR_OK)
        ev_log_emitf(r->env->events, r->task, EV_NORMAL, "SnapshotSucceeded", "Snapshot", "%s",
                     desc);
    return rc;
}

/* True when status.lastErrors of task holds an entry with code. */
static int has_error(const cJSON *task, const char *code)
{
    const cJSON *e;

    cJSON_ArrayForEach (e, kjson_get_arr(task, "status.lastErrors")) {
        const char *c = kjson_get_str(e, "code");

        if (c && strcmp(c, code) == 0)
            return 1;
    }
    return 0;
}

/* InProgress -> Succeeded / Failed, or a transport error recorded and *requeue_ms set. */
static enum kerr execute(struct run *r, long *requeue_ms, struct kerr_info *err)
{
    struct otask_spec sp;
    struct sidecar_result res = { 0 };
    struct kerr_info why = { 0 };
    struct timespec started;
    cJSON *etcd = NULL;
    const char *code = NULL;
    long left, call_ms;
    int api = 0;
    enum kerr rc;

    if (otask_spec_read(r->task, &sp, &why) != KERR_OK)
        return transition(r, OTASK_FAILED, "Execution", "Failed", "ERR_INVALID_CONFIG", why.msg,
                          err);
    left = sp.timeout_s * 1000L;
    if (ktime_parse(str_or(r->task, "status.startedAt"), &started, NULL) == KERR_OK)
        left -= ((long)time(NULL) - (long)started.tv_sec) * 1000L;
    if (left <= 0)
        return transition(r, OTASK_FAILED, "Execution", "Failed", "ERR_CREATE_SNAPSHOT",
                          "the task's timeout passed before the snapshot was taken", err);
    if ((rc = get_etcd(r, sp.etcd_name, &etcd, err)) != KERR_OK)
        return rc;
    if (otask_check_etcd(etcd, &code, &why) != KERR_OK) {
        rc = transition(r, OTASK_FAILED, "Execution", "Failed", code, why.msg, err);
        goto out;
    }
    call_ms = r->env->call_timeout_ms > 0 && r->env->call_timeout_ms < left
                  ? r->env->call_timeout_ms
                  : left;
    rc = call_sidecar(r, &sp, etcd, call_ms, &res, &api, &why);
    if (api) { /* the API server's failure, not the sidecar's: the queue retries */
        rc = kerr_set(err, rc, "%s", why.msg);
    } else if (rc == KERR_CANCELLED && !run_stopped(r->env)) {
        /* abandoned: the task is being deleted; read it again now, write nothing */
        log_info("sidecar call abandoned: the task is being deleted", "namespace", r->ns, "task",
                 r->name);
        *requeue_ms = 1;
        rc = KERR_OK;
    } else if (rc == KERR_CANCELLED) { /* this process stops: write nothing more */
        rc = kerr_set(err, KERR_CANCELLED, "%s", why.msg);
    } else if (rc == KERR_OK) {
        rc = conclude(r, &sp, &res, err);
    } else {
        long wait = r->env->requeue_ms > 0 ? r->env->requeue_ms : OTASK_DEFAULT_REQUEUE;
        int first = !has_error(r->task, "ERR_EXECUTE_HTTP_REQUEST");

        rc = transition(r, OTASK_INPROGRESS, "Execution", "InProgress", "ERR_EXECUTE_HTTP_REQUEST",
                        why.msg, err);
        *requeue_ms = wait < left ? wait : left;
        /* the first failed call is told at once, not after the task's timeout */
        if (rc == KERR_OK && first)
            ev_log_emitf(r->env->events, r->task, EV_WARNING, "SnapshotCallFailed", "Snapshot",
                         "the backup sidecar could not be reached: %s; retried every %lds until "
                         "the task's timeout (%lds after it started)",
                         why.msg, *requeue_ms / 1000, sp.timeout_s);
    }
out:
    sidecar_result_release(&res);
    cJSON_Delete(etcd);
    return rc;
}

/* Finished: delete after the TTL. 1 when the task was deleted (read again). */
static int expire(struct run *r, long *requeue_ms, enum kerr *rc, struct kerr_info *err)
{
    struct otask_spec sp;
    long left;

    otask_spec_read(r->task, &sp, NULL);
    left = otask_ttl_left_ms(r->task, sp.ttl_s, time(NULL));
    if (left > 0) {
        *requeue_ms = left;
        return 0;
    }
    *rc = k8s_delete(r->env->client, &ETCDSPEC_RES_OPSTASK, r->ns, r->name, NULL, NULL, err);
    if (*rc == KERR_NOTFOUND) {
        *rc = KERR_OK;
        kerr_clear(err);
    }
    return *rc == KERR_OK;
}

/* One round: 1 to go on with a fresh read, 0 to stop (*rc, *requeue_ms set). */
static int round_once(struct run *r, long *requeue_ms, enum kerr *rc, struct kerr_info *err)
{
    enum otask_state st = otask_state_parse(kjson_get_str(r->task, "status.state"));

    if (kjson_has(r->task, "metadata.deletionTimestamp")) {
        *rc = has_finalizer(r->task) ? finalizer(r, 0, err) : KERR_OK;
        return 0;
    }
    if (otask_finished(st))
        return expire(r, requeue_ms, rc, err);
    if (!has_finalizer(r->task))
        *rc = finalizer(r, 1, err);
    else if (st == OTASK_NONE)
        *rc = transition(r, OTASK_PENDING, "Admit", "InProgress", NULL, "task accepted", err);
    else if (st == OTASK_PENDING)
        *rc = admit(r, err);
    else
        *rc = execute(r, requeue_ms, err);
    return *rc == KERR_OK && *requeue_ms == 0;
}

enum kerr otask_step(const struct otask_env *env, const char *ns, const char *name,
                     long *requeue_ms, struct kerr_info *err)
{
    struct run r = { .env = env, .ns = ns, .name = name };
    enum kerr rc = KERR_OK;

    *requeue_ms = 0;
    kerr_clear(err);
    if ((rc = crypto_uuid4(r.run_id, err)) != KERR_OK)
        return rc;
    for (int i = 0; i < MAX_ROUNDS; i++) {
        cJSON_Delete(r.task);
        r.task = NULL;
        rc = k8s_get(env->client, &ETCDSPEC_RES_OPSTASK, ns, name, NULL, &r.task, err);
        if (rc == KERR_NOTFOUND) {
            kerr_clear(err);
            rc = KERR_OK;
            break;
        }
        if (rc != KERR_OK || !round_once(&r, requeue_ms, &rc, err))
            break;
    }
    if (rc == KERR_CONFLICT) { /* written by someone else meanwhile: come back soon */
        kerr_clear(err);
        rc = KERR_OK;
        *requeue_ms = 100;
    }
    cJSON_Delete(r.task);
    return rc;
}
