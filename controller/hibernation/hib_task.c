/*
 * hib_task - the final-snapshot EtcdOpsTasks of the hibernation flow, as warden-controller
 * writes them (see hib_int.h): built for the Etcd of a round (named "<hib_task_prefix>
 * <attempt>", owned by the Etcd, labelled with it, onDemandSnapshot full with isFinal),
 * created once the API server's clock is past the second of the cut, deleted on a wake-up.
 * The API server's clock is read here too (a dry-run create), the one clock of the
 * scale-down guard. Every call counts its API requests in r->used and keeps r->tasks
 * current from the answers.
 */
#include "controller/hibernation/hib_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/core/etcdspec.h"
#include "controller/core/kname.h"

#define TASK_INFIX "-final-snapshot-"

enum kerr hib_task_prefix(const char *etcd, char *out, size_t n)
{
    return kname_join(etcd, TASK_INFIX, KNAME_SUBDOMAIN_MAX - 7, out, n);
}

/* The attempt number of a task named "<hib_task_prefix><n>", or 0. */
static int task_attempt(const cJSON *task, const char *etcd)
{
    const char *n = kjson_get_str(task, "metadata.name");
    char pre[KNAME_SUBDOMAIN_MAX + 1];
    char *end = NULL;
    long v;

    if (!n || hib_task_prefix(etcd, pre, sizeof(pre)) != KERR_OK || strncmp(n, pre, strlen(pre)))
        return 0;
    n += strlen(pre);
    if (*n < '1' || *n > '9')
        return 0;
    errno = 0;
    v = strtol(n, &end, 10);
    return errno || *end || v > 1000000 ? 0 : (int)v;
}

int hib_task_ours(const cJSON *t, const char *etcd)
{
    const char *of = etcdspec_label(t, HIB_LABEL_TASK_OF);
    char want[KNAME_LABEL_MAX + 1];

    if (!of || kname_label_value(etcd, want) != KERR_OK || strcmp(of, want) != 0)
        return 0;
    return task_attempt(t, etcd);
}

void hib_task_deleted(struct round *r, const char *name, const cJSON *ans)
{
    const cJSON *o;
    int i = 0;

    /* an object with a deletionTimestamp is held by a finalizer; a Status: it is gone */
    if (ans && kjson_has(ans, "metadata.deletionTimestamp")) {
        hib_keep_task(r, cJSON_Duplicate(ans, 1));
        return;
    }
    cJSON_ArrayForEach (o, r->tasks) {
        const char *n = kjson_get_str(o, "metadata.name");

        if (n && strcmp(n, name) == 0) {
            cJSON_DeleteItemFromArray(r->tasks, i);
            return;
        }
        i++;
    }
}

/*
 * A final-snapshot task of attempt n for the Etcd of r (n 0: no name, the
 * server generates one from the prefix): *out OWNS it.
 */
static enum kerr build_task(struct round *r, int attempt, cJSON **out, struct kerr_info *err)
{
    cJSON *t = NULL, *owners = NULL, *owner = NULL;
    char name[ETCDSPEC_NAME_MAX + 32], of[KNAME_LABEL_MAX + 1];
    const char *lsegs[] = { "metadata", "labels", HIB_LABEL_TASK_OF, NULL };
    enum kerr rc;

    *out = NULL;
    if (hib_task_prefix(r->name, name, sizeof(name)) != KERR_OK ||
        kname_label_value(r->name, of) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "Etcd name too long");
    if (attempt > 0)
        snprintf(name + strlen(name), sizeof(name) - strlen(name), "%d", attempt);
    if ((rc = etcdspec_owner_ref(r->etcd, &owner, err)) != KERR_OK)
        return rc;
    rc = kerr_set(err, KERR_NOMEM, "out of memory");
    if (!(t = cJSON_CreateObject()) || !(owners = cJSON_CreateArray()) ||
        !cJSON_AddItemToArray(owners, owner)) {
        cJSON_Delete(owner);
        cJSON_Delete(owners);
        goto fail;
    }
    if (kjson_set_str(t, "apiVersion", ETCDSPEC_API_VERSION, err) ||
        kjson_set_str(t, "kind", "EtcdOpsTask", err) ||
        kjson_set_str(t, attempt > 0 ? "metadata.name" : "metadata.generateName", name, err) ||
        kjson_set_str(t, "metadata.namespace", r->ns, err) ||
        kjson_setv(t, lsegs, cJSON_CreateString(of), err) ||
        kjson_set(t, "metadata.ownerReferences", owners, err) ||
        kjson_set_str(t, "spec.etcdName", r->name, err) ||
        kjson_set_str(t, "spec.config.onDemandSnapshot.type", "full", err) ||
        kjson_set_bool(t, "spec.config.onDemandSnapshot.isFinal", true, err))
        goto fail;
    *out = t;
    return KERR_OK;
fail:
    cJSON_Delete(t);
    return rc;
}

/*
 * The API server's clock, the one clock of the scale-down guard: the
 * creationTimestamp the server stamps on a task created with dryRun=All
 * (nothing is stored, nothing is watched). *now is its second; text, when
 * not NULL, receives it as RFC 3339 (KTIME_LEN + 1 bytes).
 */
enum kerr hib_task_server_now(const struct hib_env *env, struct round *r, time_t *now, char *text,
                              struct kerr_info *err)
{
    struct k8s_write_opts wo = { .dry_run = 1 };
    struct timespec ts;
    cJSON *t = NULL, *made = NULL;
    const char *stamp;
    enum kerr rc;

    if ((rc = build_task(r, 0, &t, err)) != KERR_OK)
        return rc;
    rc = k8s_create(env->client, &ETCDSPEC_RES_OPSTASK, r->ns, t, &wo, &made, err);
    r->used++;
    cJSON_Delete(t);
    if (rc != KERR_OK)
        return rc;
    stamp = kjson_get_str(made, "metadata.creationTimestamp");
    if (!stamp || ktime_parse(stamp, &ts, NULL) != KERR_OK)
        rc = kerr_set(err, KERR_PARSE,
                      "the API server's dry-run create of an EtcdOpsTask has no creationTimestamp");
    else if (text && (rc = ktime_format(ts.tv_sec, text)) != KERR_OK)
        kerr_set(err, rc, "formatting the time");
    else
        *now = ts.tv_sec;
    cJSON_Delete(made);
    return rc;
}

/*
 * Create attempt n, once the API server's clock is past the second of the
 * cut: a task created in that second might have been created before the
 * cut, and does not count (common/hibguard.h). Before that *defer_ms says
 * how long to wait.
 */
enum kerr hib_task_create(const struct hib_env *env, struct round *r, int attempt, long *defer_ms,
                          struct kerr_info *err)
{
    time_t cut = hib_cut_time(r->etcd), now = 0;
    cJSON *t = NULL, *made = NULL;
    enum kerr rc;

    if (cut >= 0) {
        if ((rc = hib_task_server_now(env, r, &now, NULL, err)) != KERR_OK)
            return rc;
        if (now <= cut) {
            *defer_ms = 1000L * (long)(cut - now + 1);
            return KERR_OK;
        }
    }
    if ((rc = build_task(r, attempt, &t, err)) != KERR_OK)
        return rc;
    rc = k8s_create(env->client, &ETCDSPEC_RES_OPSTASK, r->ns, t, NULL, &made, err);
    r->used++;
    if (rc == KERR_EXISTS) /* created by an earlier call the cache has not shown yet */
        rc = hib_get_opt(env, r, &ETCDSPEC_RES_OPSTASK, kjson_get_str(t, "metadata.name"), &made,
                         err);
    if (rc == KERR_OK && made)
        hib_keep_task(r, made);
    else
        cJSON_Delete(made);
    cJSON_Delete(t);
    return rc;
}

/* Delete our live tasks, as many as the budget of the call allows (then *defer_ms: 1). */
enum kerr hib_task_delete_ours(const struct hib_env *env, struct round *r, long *defer_ms,
                               struct kerr_info *err)
{
    char name[KNAME_SUBDOMAIN_MAX + 1];
    const cJSON *t;
    cJSON *ans;
    enum kerr rc;

    for (;;) {
        name[0] = '\0';
        cJSON_ArrayForEach (t, r->tasks) {
            if (hib_task_ours(t, r->name) && !kjson_has(t, "metadata.deletionTimestamp")) {
                snprintf(name, sizeof(name), "%s", kjson_get_str(t, "metadata.name"));
                break;
            }
        }
        if (!name[0])
            break;
        if (r->used >= r->budget) {
            *defer_ms = 1;
            break;
        }
        ans = NULL;
        rc = k8s_delete(env->client, &ETCDSPEC_RES_OPSTASK, r->ns, name, NULL, &ans, err);
        r->used++;
        if (rc != KERR_OK && rc != KERR_NOTFOUND) {
            cJSON_Delete(ans);
            return rc;
        }
        hib_task_deleted(r, name, rc == KERR_OK ? ans : NULL);
        cJSON_Delete(ans);
    }
    kerr_clear(err);
    return KERR_OK;
}
