/* kw_why - `kubectl warden why`; see kw_why.h. */
#include "controller/kubectl-warden/kw_why.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"

#define MAX_NAMES 256

/* The names of the objects that belong to the Etcd (kind, name), the Etcd first. */
struct owned {
    const char *kind[MAX_NAMES];
    const char *name[MAX_NAMES];
    size_t n;
};

static void own(struct owned *w, const char *kind, const char *name)
{
    if (name && w->n < MAX_NAMES) {
        w->kind[w->n] = kind;
        w->name[w->n++] = name;
    }
}

static int owns(const struct owned *w, const char *kind, const char *name)
{
    size_t i;

    for (i = 0; kind && name && i < w->n; i++) {
        if (strcmp(w->kind[i], kind) == 0 && strcmp(w->name[i], name) == 0)
            return 1;
    }
    return 0;
}

static const char *nz(const char *s)
{
    return s ? s : "";
}

/* The time an event last happened. */
static time_t ev_time(const cJSON *e)
{
    static const char *const paths[] = { "series.lastObservedTime", "eventTime",
                                         "deprecatedLastTimestamp", "metadata.creationTimestamp" };
    size_t i;
    time_t t;

    for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        if ((t = kw_time(kjson_get_str(e, paths[i]))))
            return t;
    }
    return 0;
}

static int by_time(const void *a, const void *b)
{
    time_t x = ev_time(*(const cJSON *const *)a), y = ev_time(*(const cJSON *const *)b);

    return x < y ? -1 : x > y;
}

/* Print the newest limit Warning events about w's objects; their number. */
static size_t print_events(struct kw *k, const cJSON *events, const struct owned *w, long limit)
{
    const cJSON *sel[1024], *e;
    size_t n = 0, i;
    char ts[32];
    time_t t;
    struct tm tm;

    cJSON_ArrayForEach (e, events) {
        if (n < sizeof(sel) / sizeof(sel[0]) &&
            strcmp(kjson_get_str(e, "type") ? kjson_get_str(e, "type") : "", "Warning") == 0 &&
            owns(w, kjson_get_str(e, "regarding.kind"), kjson_get_str(e, "regarding.name")))
            sel[n++] = e;
    }
    qsort(sel, n, sizeof(sel[0]), by_time);
    for (i = n > (size_t)limit ? n - (size_t)limit : 0; i < n; i++) {
        t = ev_time(sel[i]);
        gmtime_r(&t, &tm);
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
        fprintf(k->out, "%s  %s/%s  %s: %s\n", ts, kjson_get_str(sel[i], "regarding.kind"),
                kjson_get_str(sel[i], "regarding.name"),
                kjson_get_str(sel[i], "reason") ? kjson_get_str(sel[i], "reason") : "-",
                kjson_get_str(sel[i], "note") ? kjson_get_str(sel[i], "note") : "");
    }
    return n;
}

/* Add the objects of res that name the Etcd at path to w (kept alive in *keep). */
static enum kerr collect(struct kw *k, const struct k8s_resource *res, const char *kind,
                         const char *path, const char *etcd, struct owned *w, cJSON **keep,
                         struct kerr_info *err)
{
    const cJSON *it;
    enum kerr rc = kw_list_where(k, res, k->ns, path, etcd, keep, err);

    if (rc == KERR_NOTFOUND) /* that CRD is not installed */
        return KERR_OK;
    if (rc)
        return rc;
    cJSON_ArrayForEach (it, *keep)
        own(w, kind, kjson_get_str(it, "metadata.name"));
    return KERR_OK;
}

/* What stands now: the hibernation condition, the newest backup's error, entry conflicts. */
static size_t print_now(struct kw *k, const cJSON *etcd, const cJSON *backups, const char *name)
{
    const char *cond = kjson_get_str(etcd, "metadata.annotations[" KW_ANN_CONDITION "]");
    const cJSON *b = kw_newest(backups), *e, *c;
    cJSON *entries = NULL, *cj = NULL;
    size_t n = 0;

    if (cond && kjson_parse(cond, strlen(cond), NULL, &cj, NULL, NULL) == KERR_OK) {
        fprintf(k->out, "now  Etcd/%s  %s: %s\n", name,
                kjson_get_str(cj, "type") ? kjson_get_str(cj, "type") : "-",
                kjson_get_str(cj, "message") ? kjson_get_str(cj, "message") : "");
        n++;
    }
    cJSON_Delete(cj);
    if (b && kjson_get_str(b, "status.error")) {
        fprintf(k->out, "now  EtcdBackup/%s  Failed: %s\n", kjson_get_str(b, "metadata.name"),
                kjson_get_str(b, "status.error"));
        n++;
    }
    if (kw_list_where(k, &KW_RES_ENTRY, NULL, "spec.etcd.name", name, &entries, NULL) != KERR_OK)
        return n;
    cJSON_ArrayForEach (e, entries) {
        if (strcmp(nz(kjson_get_str(e, "spec.etcd.namespace")), k->ns) != 0)
            continue;
        cJSON_ArrayForEach (c, kjson_get_arr(e, "status.conditions")) {
            if (strcmp(nz(kjson_get_str(c, "type")), "PrefixConflict") == 0 &&
                strcmp(nz(kjson_get_str(c, "status")), "True") == 0) {
                fprintf(k->out, "now  BackupEntry/%s  PrefixConflict: %s\n",
                        kjson_get_str(e, "metadata.name"), nz(kjson_get_str(c, "message")));
                n++;
            }
        }
    }
    cJSON_Delete(entries);
    return n;
}

int kw_why_main(struct kw *k, long limit, const char *const *args, size_t nargs)
{
    struct kerr_info err = { 0 };
    cJSON *etcd = NULL, *tasks = NULL, *backups = NULL, *restores = NULL, *imm = NULL;
    cJSON *events = NULL;
    struct owned w = { .n = 0 };
    size_t found;
    enum kerr rc;
    int code;

    if (nargs != 1) {
        fprintf(k->msg, "error: why takes one Etcd name\n");
        return KW_EXIT_USAGE;
    }
    rc = k8s_get(k->client, &KW_RES_ETCD, k->ns, args[0], NULL, &etcd, &err);
    own(&w, "Etcd", args[0]);
    if (!rc)
        rc = collect(k, &KW_RES_OPSTASK, "EtcdOpsTask", "spec.etcdName", args[0], &w, &tasks, &err);
    if (!rc)
        rc = collect(k, &KW_RES_BACKUP, "EtcdBackup", "spec.etcdName", args[0], &w, &backups, &err);
    if (!rc)
        rc = collect(k, &KW_RES_RESTORE, "EtcdRestore", "spec.target.etcdName", args[0], &w,
                     &restores, &err);
    if (!rc)
        rc = collect(k, &KW_RES_IMMTASK, "ExtendFullSnapshotImmutabilityTask", "spec.etcdName",
                     args[0], &w, &imm, &err);
    if (!rc)
        rc = kw_list_where(k, &KW_RES_EVENT, k->ns, NULL, NULL, &events, &err);
    if (rc) {
        code = kw_fail(k, &err);
        goto out;
    }
    found = print_events(k, events, &w, limit > 0 ? limit : 5);
    found += print_now(k, etcd, backups, args[0]);
    if (!found)
        fprintf(k->out, "nothing refused or failed is recorded for etcd %s/%s\n", k->ns, args[0]);
    code = KW_EXIT_OK;
out:
    cJSON_Delete(events);
    cJSON_Delete(imm);
    cJSON_Delete(restores);
    cJSON_Delete(backups);
    cJSON_Delete(tasks);
    cJSON_Delete(etcd);
    return code;
}
