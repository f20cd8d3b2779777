/* kw_status - `kubectl warden status`; see kw_status.h. */
#include "controller/kubectl-warden/kw_status.h"

#include <stdio.h>
#include <string.h>

#include "common/kjson.h"

/* Add string s (may be NULL: null) under key to o. */
static void add_str(cJSON *o, const char *key, const char *s)
{
    if (s)
        cJSON_AddStringToObject(o, key, s);
    else
        cJSON_AddNullToObject(o, key);
}

/* A time and its age in seconds. */
static void add_time(cJSON *o, const char *key, const char *s, time_t now)
{
    time_t t = kw_time(s);
    char age_key[64];

    add_str(o, key, t ? s : NULL);
    snprintf(age_key, sizeof(age_key), "%sAgeSeconds", key);
    if (t)
        cJSON_AddNumberToObject(o, age_key, (double)(now > t ? now - t : 0));
}

/* The sidecar's snapshot Lease <etcd><suffix>: its renewTime and holderIdentity. */
static enum kerr add_lease(struct kw *k, cJSON *o, const char *key, const char *etcd,
                           const char *suffix, time_t now, struct kerr_info *err)
{
    char name[320];
    cJSON *lease = NULL, *s;
    enum kerr rc;

    snprintf(name, sizeof(name), "%s%s", etcd, suffix);
    rc = k8s_get(k->client, &KW_RES_LEASE, k->ns, name, NULL, &lease, err);
    if (rc == KERR_NOTFOUND) {
        cJSON_AddNullToObject(o, key);
        return KERR_OK;
    }
    if (rc)
        return rc;
    s = cJSON_AddObjectToObject(o, key);
    if (s) {
        add_str(s, "lease", name);
        add_time(s, "time", kjson_get_str(lease, "spec.renewTime"), now);
        add_str(s, "revision", kjson_get_str(lease, "spec.holderIdentity"));
    }
    cJSON_Delete(lease);
    return KERR_OK;
}

static void add_hibernation(cJSON *o, const cJSON *etcd, time_t now)
{
    const char *req = kjson_get_str(etcd, "metadata.annotations[" KW_ANN_HIBERNATE "]");
    const char *cond = kjson_get_str(etcd, "metadata.annotations[" KW_ANN_CONDITION "]");
    cJSON *h = cJSON_AddObjectToObject(o, "hibernation"), *c = NULL;
    int64_t replicas = -1;

    if (!h)
        return;
    (void)kjson_get_int64(etcd, "spec.replicas", &replicas);
    cJSON_AddBoolToObject(h, "requested", (req && strcmp(req, "true") == 0) || replicas == 0);
    add_str(h, "phase", kjson_get_str(etcd, "metadata.annotations[" KW_ANN_PHASE "]"));
    add_time(h, "trafficCutAt", kjson_get_str(etcd, "metadata.annotations[" KW_ANN_CUT "]"), now);
    if (cond && kjson_parse(cond, strlen(cond), NULL, &c, NULL, NULL) == KERR_OK)
        cJSON_AddItemToObject(h, "condition", c);
    else
        cJSON_AddNullToObject(h, "condition");
}

/* The newest on-demand snapshot task of the Etcd. */
static enum kerr add_task(struct kw *k, cJSON *o, const char *etcd, time_t now,
                          struct kerr_info *err)
{
    cJSON *tasks = NULL, *t;
    const cJSON *n;
    enum kerr rc;

    rc = kw_list_where(k, &KW_RES_OPSTASK, k->ns, "spec.etcdName", etcd, &tasks, err);
    if (rc)
        return rc;
    n = kw_newest(tasks);
    if (!n) {
        cJSON_AddNullToObject(o, "snapshotTask");
    } else if ((t = cJSON_AddObjectToObject(o, "snapshotTask"))) {
        add_str(t, "name", kjson_get_str(n, "metadata.name"));
        add_str(t, "type", kjson_get_str(n, "spec.config.onDemandSnapshot.type"));
        cJSON_AddBoolToObject(t, "final",
                              cJSON_IsTrue(kjson_get(n, "spec.config.onDemandSnapshot.isFinal")));
        add_str(t, "state", kjson_get_str(n, "status.state"));
        add_time(t, "created", kjson_get_str(n, "metadata.creationTimestamp"), now);
    }
    cJSON_Delete(tasks);
    return KERR_OK;
}

static enum kerr add_immutability(struct kw *k, cJSON *o, const cJSON *etcd, time_t now,
                                  struct kerr_info *err)
{
    const char *name = kjson_get_str(etcd, "metadata.name");
    cJSON *tasks = NULL, *im = cJSON_AddObjectToObject(o, "immutability"), *c;
    const cJSON *t;
    time_t until;
    enum kerr rc;

    if (!im)
        return kerr_set(err, KERR_NOMEM, "out of memory");
    add_str(im, "retentionType", kjson_get_str(etcd, "metadata.annotations[" KW_ANN_RETENTION "]"));
    rc = kw_list_where(k, &KW_RES_IMMTASK, k->ns, "spec.etcdName", name, &tasks, err);
    if (rc == KERR_NOTFOUND) /* the CRD is not installed */
        return KERR_OK;
    if (rc)
        return rc;
    t = kw_newest(tasks);
    add_str(im, "task", t ? kjson_get_str(t, "metadata.name") : NULL);
    if (t) {
        add_time(im, "lastRun", kjson_get_str(t, "status.lastScheduleTime"), now);
        until = kw_time(kjson_get_str(t, "status.immutableUntil"));
        add_str(im, "immutableUntil", until ? kjson_get_str(t, "status.immutableUntil") : NULL);
        if (until) /* negative once it lapsed */
            cJSON_AddNumberToObject(im, "immutableForSeconds", (double)(until - now));
        cJSON_ArrayForEach (c, kjson_get_arr(t, "status.conditions")) {
            if (strcmp(kjson_get_str(c, "type") ? kjson_get_str(c, "type") : "", "Ready") != 0)
                continue;
            add_str(im, "ready", kjson_get_str(c, "status"));
            add_str(im, "reason", kjson_get_str(c, "reason"));
        }
    }
    cJSON_Delete(tasks);
    return KERR_OK;
}

/* The BackupEntry of the Etcd: the Active one, else the newest. */
static enum kerr add_entry(struct kw *k, cJSON *o, const char *etcd, time_t now,
                           struct kerr_info *err)
{
    cJSON *all = NULL, *e;
    const cJSON *it, *pick = NULL;
    const char *ns;
    enum kerr rc;

    rc = kw_list_where(k, &KW_RES_ENTRY, NULL, "spec.etcd.name", etcd, &all, err);
    if (rc == KERR_NOTFOUND || rc == KERR_FORBIDDEN) { /* not installed, or not ours to read */
        cJSON_AddNullToObject(o, "backupEntry");
        return KERR_OK;
    }
    if (rc)
        return rc;
    cJSON_ArrayForEach (it, all) {
        ns = kjson_get_str(it, "spec.etcd.namespace");
        if (!ns || strcmp(ns, k->ns) != 0)
            continue;
        if (!pick ||
            strcmp(kjson_get_str(it, "status.phase") ? kjson_get_str(it, "status.phase") : "",
                   "Active") == 0)
            pick = it;
    }
    if (!pick) {
        cJSON_AddNullToObject(o, "backupEntry");
    } else if ((e = cJSON_AddObjectToObject(o, "backupEntry"))) {
        add_str(e, "name", kjson_get_str(pick, "metadata.name"));
        add_str(e, "bucket", kjson_get_str(pick, "spec.bucketName"));
        add_str(e, "prefix", kjson_get_str(pick, "spec.prefix"));
        add_str(e, "phase", kjson_get_str(pick, "status.phase"));
        add_time(e, "created", kjson_get_str(pick, "metadata.creationTimestamp"), now);
    }
    cJSON_Delete(all);
    return KERR_OK;
}

static void add_backup(cJSON *o, const char *key, const cJSON *b, time_t now)
{
    cJSON *x;

    if (!b) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    if (!(x = cJSON_AddObjectToObject(o, key)))
        return;
    add_str(x, "name", kjson_get_str(b, "metadata.name"));
    add_str(x, "phase", kjson_get_str(b, "status.phase"));
    add_str(x, "snapshot", kjson_get_str(b, "status.snapshot.name"));
    add_time(x, "completed", kjson_get_str(b, "status.completionTime"), now);
    add_str(x, "error", kjson_get_str(b, "status.error"));
}

static enum kerr add_backups(struct kw *k, cJSON *o, const char *etcd, time_t now,
                             struct kerr_info *err)
{
    cJSON *all = NULL, *done;
    const cJSON *it, *next;
    const char *ph;
    enum kerr rc;

    rc = kw_list_where(k, &KW_RES_BACKUP, k->ns, "spec.etcdName", etcd, &all, err);
    if (rc == KERR_NOTFOUND) { /* backups.enabled off: no CRD */
        add_backup(o, "lastBackup", NULL, now);
        add_backup(o, "lastCompletedBackup", NULL, now);
        return KERR_OK;
    }
    if (rc)
        return rc;
    add_backup(o, "lastBackup", kw_newest(all), now);
    done = cJSON_CreateArray();
    for (it = all->child; done && it; it = next) {
        next = it->next;
        ph = kjson_get_str(it, "status.phase");
        if (ph && strcmp(ph, "Completed") == 0)
            cJSON_AddItemReferenceToArray(done, (cJSON *)it);
    }
    add_backup(o, "lastCompletedBackup", done ? kw_newest(done) : NULL, now);
    cJSON_Delete(done);
    cJSON_Delete(all);
    return KERR_OK;
}

/* The EtcdRestoreDrill of the Etcd (status.etcdName) whose last drill is the newest. */
static enum kerr add_drill(struct kw *k, cJSON *o, const char *etcd, time_t now,
                           struct kerr_info *err)
{
    cJSON *all = NULL, *x;
    const cJSON *it, *best = NULL;
    enum kerr rc = kw_list_where(k, &KW_RES_DRILL, k->ns, "status.etcdName", etcd, &all, err);

    if (rc == KERR_NOTFOUND) { /* backups.enabled off: no CRD */
        kerr_clear(err);
        cJSON_AddNullToObject(o, "lastDrill");
        return KERR_OK;
    }
    if (rc)
        return rc;
    cJSON_ArrayForEach (it, all)
        if (kjson_get_str(it, "status.lastResult") &&
            (!best || kw_time(kjson_get_str(it, "status.lastDrillTime")) >
                          kw_time(kjson_get_str(best, "status.lastDrillTime"))))
            best = it;
    if (!best) {
        cJSON_AddNullToObject(o, "lastDrill");
    } else if ((x = cJSON_AddObjectToObject(o, "lastDrill"))) {
        add_str(x, "name", kjson_get_str(best, "metadata.name"));
        add_str(x, "mode", kjson_get_str(best, "spec.mode"));
        add_str(x, "result", kjson_get_str(best, "status.lastResult"));
        add_time(x, "time", kjson_get_str(best, "status.lastDrillTime"), now);
        add_time(x, "newestRestorable", kjson_get_str(best, "status.newestRestorableSnapshotTime"),
                 now);
        if (kjson_get(best, "status.restorableRevision"))
            cJSON_AddItemToObject(x, "restorableRevision",
                                  cJSON_Duplicate(kjson_get(best, "status.restorableRevision"), 0));
        add_str(x, "message", kjson_get_str(best, "status.message"));
    }
    cJSON_Delete(all);
    return KERR_OK;
}

enum kerr kw_status_collect(struct kw *k, const cJSON *etcd, time_t now, cJSON **out,
                            struct kerr_info *err)
{
    const char *name = kjson_get_str(etcd, "metadata.name");
    const cJSON *store = kjson_get_obj(etcd, "spec.backup.store");
    cJSON *o = cJSON_CreateObject(), *s, *r;
    enum kerr rc = KERR_OK;

    *out = NULL;
    if (!o || !name)
        return kerr_set(err, o ? KERR_PARSE : KERR_NOMEM, "an Etcd without a name");
    add_str(o, "namespace", k->ns);
    add_str(o, "name", name);
    add_str(o, "protection",
            kjson_has(etcd, "metadata.annotations[" KW_ANN_PROTECTION "]") ? "off" : "on");
    if (store && (s = cJSON_AddObjectToObject(o, "store"))) {
        add_str(s, "provider", kjson_get_str(store, "provider"));
        add_str(s, "container", kjson_get_str(store, "container"));
        add_str(s, "prefix", kjson_get_str(store, "prefix"));
    } else {
        cJSON_AddNullToObject(o, "store");
    }
    add_hibernation(o, etcd, now);
    if (!rc)
        rc = add_lease(k, o, "lastFullSnapshot", name, "-full-snap", now, err);
    if (!rc)
        rc = add_lease(k, o, "lastDeltaSnapshot", name, "-delta-snap", now, err);
    if (!rc)
        rc = add_task(k, o, name, now, err);
    if (!rc)
        rc = add_immutability(k, o, etcd, now, err);
    if (!rc)
        rc = add_entry(k, o, name, now, err);
    if (!rc)
        rc = add_backups(k, o, name, now, err);
    if (!rc)
        rc = add_drill(k, o, name, now, err);
    if (!rc && (r = cJSON_AddObjectToObject(o, "restore"))) {
        cJSON_AddBoolToObject(r, "restoring",
                              kjson_has(etcd, "metadata.labels[" KW_LABEL_RESTORE "]"));
        add_str(r, "progress", kjson_get_str(etcd, "metadata.annotations[" KW_ANN_PROGRESS "]"));
    }
    if (rc) {
        cJSON_Delete(o);
        return rc;
    }
    *out = o;
    return KERR_OK;
}

/* s, or "-" for NULL/empty. */
static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

static const char *str_at(const cJSON *o, const char *path)
{
    return or_dash(kjson_get_str(o, path));
}

/* "<time> (<age> ago)" of the time at path of o, or "-". */
static const char *when(const cJSON *o, const char *path, time_t now, char out[96])
{
    const char *s = kjson_get_str(o, path);
    char age[32];

    if (!kw_time(s))
        return "-";
    kw_age(kw_time(s), now, age);
    snprintf(out, 96, "%s (%s ago)", s, age);
    return out;
}

static void print_hibernation(FILE *f, const cJSON *h, time_t now)
{
    char w[96];
    const cJSON *c = kjson_get_obj(h, "condition");

    fprintf(f, "Hibernation:    %s%s", or_dash(kjson_get_str(h, "phase")),
            cJSON_IsTrue(kjson_get(h, "requested")) ? " (requested)" : "");
    if (kjson_get_str(h, "trafficCutAt"))
        fprintf(f, ", traffic cut at %s", when(h, "trafficCutAt", now, w));
    fputc('\n', f);
    if (c)
        fprintf(f, "  Condition:    %s %s: %s\n", str_at(c, "type"), str_at(c, "status"),
                str_at(c, "message"));
}

static void print_one(FILE *f, const cJSON *o, time_t now)
{
    const cJSON *x;
    const char *e;
    char w[96];

    fprintf(f, "Etcd:           %s/%s\n", str_at(o, "namespace"), str_at(o, "name"));
    fprintf(f, "Protection:     %s\n", str_at(o, "protection"));
    x = kjson_get_obj(o, "store");
    if (x)
        fprintf(f, "Store:          %s %s/%s\n", str_at(x, "provider"), str_at(x, "container"),
                str_at(x, "prefix"));
    else
        fprintf(f, "Store:          - (no backup store)\n");
    print_hibernation(f, kjson_get_obj(o, "hibernation"), now);
    x = kjson_get_obj(o, "lastFullSnapshot");
    fprintf(f, "Last full:      %s", x ? when(x, "time", now, w) : "- (no Lease)");
    if (x && kjson_get_str(x, "revision"))
        fprintf(f, ", revision %s", kjson_get_str(x, "revision"));
    fprintf(f, "%s%s%s\n", x ? " (Lease " : "", x ? str_at(x, "lease") : "", x ? ")" : "");
    x = kjson_get_obj(o, "lastDeltaSnapshot");
    fprintf(f, "Last delta:     %s\n", x ? when(x, "time", now, w) : "- (no Lease)");
    x = kjson_get_obj(o, "snapshotTask");
    if (x)
        fprintf(f, "Snapshot task:  %s (%s%s) %s, created %s\n", str_at(x, "name"),
                str_at(x, "type"), cJSON_IsTrue(kjson_get(x, "final")) ? ", final" : "",
                str_at(x, "state"), when(x, "created", now, w));
    else
        fprintf(f, "Snapshot task:  -\n");
    x = kjson_get_obj(o, "immutability");
    fprintf(f, "Immutability:   %s", or_dash(x ? kjson_get_str(x, "retentionType") : NULL));
    if (x && kjson_get_str(x, "task"))
        fprintf(f, "; task %s, last run %s, Ready %s %s", str_at(x, "task"),
                when(x, "lastRun", now, w), str_at(x, "ready"),
                or_dash(kjson_get_str(x, "reason")));
    if (x && kw_time(kjson_get_str(x, "immutableUntil"))) {
        time_t until = kw_time(kjson_get_str(x, "immutableUntil"));
        char age[32];

        if (until > now)
            kw_age(now, until, age);
        else
            kw_age(until, now, age);
        fprintf(f, "; immutable until %s (%s %s%s)", str_at(x, "immutableUntil"),
                until > now ? "in" : "lapsed", age, until > now ? "" : " ago");
    }
    fputc('\n', f);
    x = kjson_get_obj(o, "backupEntry");
    if (x)
        fprintf(f, "Backup entry:   %s %s (bucket %s, prefix %s)\n", str_at(x, "name"),
                str_at(x, "phase"), str_at(x, "bucket"), str_at(x, "prefix"));
    else
        fprintf(f, "Backup entry:   -\n");
    x = kjson_get_obj(o, "lastBackup");
    e = x ? kjson_get_str(x, "error") : NULL;
    if (x)
        fprintf(f, "Last backup:    %s %s, completed %s%s%s\n", str_at(x, "name"),
                str_at(x, "phase"), when(x, "completed", now, w), e ? ": " : "", e ? e : "");
    else
        fprintf(f, "Last backup:    -\n");
    x = kjson_get_obj(o, "lastDrill");
    if (x) {
        char nw[96];

        fprintf(f, "Last drill:     %s %s (%s) %s; newest restorable snapshot %s",
                str_at(x, "name"), str_at(x, "result"), str_at(x, "mode"), when(x, "time", now, w),
                when(x, "newestRestorable", now, nw));
        if (kjson_get(x, "restorableRevision"))
            fprintf(f, ", revision %.0f", kjson_get(x, "restorableRevision")->valuedouble);
        if (strcmp(str_at(x, "result"), "Restorable") != 0)
            fprintf(f, ": %s", str_at(x, "message"));
        fputc('\n', f);
    }
    x = kjson_get_obj(o, "restore");
    if (x && cJSON_IsTrue(kjson_get(x, "restoring")))
        fprintf(f, "Restore:        restoring, %s\n", str_at(x, "progress"));
}

static void print_row(FILE *f, const cJSON *o, time_t now)
{
    const cJSON *full = kjson_get_obj(o, "lastFullSnapshot");
    const cJSON *b = kjson_get_obj(o, "lastBackup");
    char age[32];

    kw_age(full ? kw_time(kjson_get_str(full, "time")) : 0, now, age);
    fprintf(f, "%-30s %-10s %-15s %-14s %-12s %s\n", str_at(o, "name"), str_at(o, "protection"),
            str_at(o, "hibernation.phase"), age, str_at(o, "backupEntry.phase"),
            b ? str_at(b, "phase") : "-");
}

int kw_status_main(struct kw *k, const char *const *args, size_t nargs)
{
    struct kerr_info err = { 0 };
    cJSON *etcd = NULL, *list = NULL, *one = NULL, *items = NULL, *doc = NULL;
    const cJSON *it, *src;
    time_t now = time(NULL);
    int json = k->o.output && strcmp(k->o.output, "json") == 0, code = KW_EXIT_OK;
    enum kerr rc;

    if (nargs > 1) {
        fprintf(k->msg, "error: status takes at most one Etcd name\n");
        return KW_EXIT_USAGE;
    }
    if (nargs == 1) {
        rc = k8s_get(k->client, &KW_RES_ETCD, k->ns, args[0], NULL, &etcd, &err);
        if (!rc)
            rc = kw_status_collect(k, etcd, now, &one, &err);
        if (rc)
            code = kw_fail(k, &err);
        else if (json)
            code = kw_print_json(k, one);
        else
            print_one(k->out, one, now);
        goto out;
    }
    rc = kw_list_where(k, &KW_RES_ETCD, k->ns, NULL, NULL, &list, &err);
    doc = cJSON_CreateObject();
    items = doc ? cJSON_AddArrayToObject(doc, "items") : NULL;
    if (!rc && !items)
        rc = kerr_set(&err, KERR_NOMEM, "out of memory");
    src = rc ? NULL : list;
    cJSON_ArrayForEach (it, src) {
        if ((rc = kw_status_collect(k, it, now, &one, &err)))
            break;
        cJSON_AddItemToArray(items, one);
        one = NULL;
    }
    if (rc) {
        code = kw_fail(k, &err);
    } else if (json) {
        code = kw_print_json(k, doc);
    } else if (!cJSON_GetArraySize(items)) {
        fprintf(k->msg, "No Etcds found in %s namespace.\n", k->ns);
    } else {
        fprintf(k->out, "%-30s %-10s %-15s %-14s %-12s %s\n", "NAME", "PROTECTION", "HIBERNATION",
                "LAST-SNAPSHOT", "ENTRY", "LAST-BACKUP");
        cJSON_ArrayForEach (it, items)
            print_row(k->out, it, now);
    }
out:
    cJSON_Delete(etcd);
    cJSON_Delete(one);
    cJSON_Delete(list);
    cJSON_Delete(doc);
    return code;
}
