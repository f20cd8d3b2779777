/* bkeseen - where a BackupEntry's provenance window begins; see bkeseen.h. */
#include "controller/entries/bkeseen.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/bstore.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/core/etcdspec.h"
#include "controller/core/smember.h"

static const struct k8s_resource RES_STS = { "apps", "v1", "statefulsets", 1 };

/* A label selector longer than this is not used: the pods are listed unfiltered. */
#define SELECTOR_MAX 4096

/* The time at path of obj into *t: 1, or 0 when absent or not a time. */
static int time_at(const cJSON *obj, const char *path, int64_t *t)
{
    struct timespec ts;

    if (ktime_parse(kjson_get_str(obj, path), &ts, NULL) != KERR_OK)
        return 0;
    *t = (int64_t)ts.tv_sec;
    return 1;
}

/* 1 when etcd-warden wrote entry's prefix for its owner (a restore's or a retained copy). */
static int copied(const cJSON *entry)
{
    const char *origin = kjson_get_str(entry, BKESEEN_ORIGIN);

    return (origin && strcmp(origin, BKESEEN_RESTORE) == 0) ||
           kjson_get_str(entry, "metadata.annotations[" BSTORE_RETAINED_COPY_ANNOTATION "]");
}

enum bkeseen bkeseen_start(const cJSON *entry, int64_t *t1)
{
    int64_t claimed, seen, again;

    if (!time_at(entry, "spec.claimedAt", &claimed) &&
        (kjson_has(entry, "spec.claimedAt") ||
         !time_at(entry, "metadata.creationTimestamp", &claimed)))
        return BKESEEN_NONE;
    /* reattached: nothing before then is shown to be its Etcd's (a gap without an owner);
     * a time that cannot be read shows nothing */
    if (kjson_has(entry, BKESEEN_REATTACHED)) {
        if (!time_at(entry, BKESEEN_REATTACHED, &again))
            return BKESEEN_NONE;
        if (again + 1 > claimed) /* object times have seconds: not the reattachment's own */
            claimed = again + 1;
    }
    if (copied(entry)) {
        *t1 = claimed;
        return BKESEEN_COPY;
    }
    if (!time_at(entry, BKESEEN_AT, &seen))
        return BKESEEN_NONE;
    *t1 = seen > claimed ? seen : claimed;
    return BKESEEN_MEMBERS;
}

int bkeseen_needed(const cJSON *entry)
{
    int64_t t;

    return !copied(entry) && !time_at(entry, BKESEEN_AT, &t);
}

int bkeseen_any_member(const cJSON *sts, const cJSON *pods)
{
    const cJSON *pod;
    char why[SMEMBER_NAME_MAX + 160];

    if (!cJSON_IsArray(pods))
        return 0;
    cJSON_ArrayForEach (pod, pods) {
        if (smember_is_member(sts, pod, why, sizeof(why)) >= 0)
            return 1;
    }
    return 0;
}

/* sts's spec.selector.matchLabels as "k=v,..." into out ("" when none or too long). */
static void selector_of(const cJSON *sts, char *out, size_t n)
{
    const cJSON *l;
    size_t len = 0;
    int w;

    out[0] = '\0';
    cJSON_ArrayForEach (l, kjson_get_obj(sts, "spec.selector.matchLabels")) {
        if (!cJSON_IsString(l) || !l->string)
            continue;
        w = snprintf(out + len, n - len, "%s%s=%s", len ? "," : "", l->string, l->valuestring);
        if (w < 0 || (size_t)w >= n - len) {
            out[0] = '\0'; /* a filter only: the member rule decides */
            return;
        }
        len += (size_t)w;
    }
}

static void requeue_min(long *requeue, long ms)
{
    if (*requeue <= 0 || ms < *requeue)
        *requeue = ms;
}

/* Is a member of etcd running? *seen; an API error into err. */
static enum kerr look(const struct bke_ctx *x, const cJSON *etcd, int *seen, struct kerr_info *err)
{
    const char *ns = kjson_get_str(etcd, "metadata.namespace");
    const char *name = kjson_get_str(etcd, "metadata.name");
    char sel[SELECTOR_MAX];
    cJSON *sts = NULL, *pods = NULL;
    enum kerr rc;

    *seen = 0;
    if (!ns || !name)
        return KERR_OK;
    rc = k8s_get(x->client, &RES_STS, ns, name, NULL, &sts, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        return KERR_OK;
    }
    if (rc == KERR_OK) {
        selector_of(sts, sel, sizeof(sel));
        rc = k8s_list_all(x->client, &ETCDSPEC_RES_POD, ns,
                          &(struct k8s_list_opts){ .label_selector = *sel ? sel : NULL }, &pods,
                          err);
    }
    if (rc == KERR_OK)
        *seen = bkeseen_any_member(sts, kjson_get_arr(pods, "items"));
    cJSON_Delete(pods);
    cJSON_Delete(sts);
    return rc;
}

enum kerr bkeseen_record(const struct bke_ctx *x, const cJSON *entry, const cJSON *etcd,
                         cJSON **stored, long *requeue, struct kerr_info *err)
{
    const char *ename = kjson_get_str(entry, "metadata.name");
    char now[KTIME_LEN + 1];
    struct kerr_info why;
    cJSON *obj;
    int seen = 0;
    enum kerr rc;

    *stored = NULL;
    if (!bkeseen_needed(entry) || !ename)
        return KERR_OK;
    kerr_clear(&why);
    if (look(x, etcd, &seen, &why) != KERR_OK)
        log_warn("cannot look for a running member", "entry", ename, "error", why.msg);
    if (!seen) {
        requeue_min(requeue, BKESEEN_POLL_MS);
        return KERR_OK;
    }
    if (ktime_format(time(NULL), now) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "cannot format the time");
    obj = cJSON_Duplicate(entry, 1);
    if (!obj)
        return kerr_set(err, KERR_NOMEM, NULL);
    rc = kjson_set_str(obj, "apiVersion", ETCDSPEC_WARDEN_API, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(obj, "kind", "BackupEntry", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(obj, BKESEEN_AT, now, err);
    if (rc == KERR_OK)
        rc = k8s_update(x->client, &BKE_RES_ENTRY, NULL, ename, obj, NULL, stored, err);
    cJSON_Delete(obj);
    if (rc == KERR_OK)
        log_info("backup entry: a member of its Etcd seen running", "entry", ename, "at", now);
    return rc;
}
