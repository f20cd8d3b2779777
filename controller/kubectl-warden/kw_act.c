/* kw_act - hibernate, wake, backup; see kw_act.h. */
#include "controller/kubectl-warden/kw_act.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "common/watch.h"

static int one_etcd(struct kw *k, const char *cmd, size_t nargs)
{
    if (nargs == 1)
        return 0;
    fprintf(k->msg, "error: %s takes one Etcd name\n", cmd);
    return 1;
}

/* What follow() watches: the object, the value shown, and when it is over. */
struct follow {
    struct kw *k;
    const char *name, *path;
    int (*done)(const cJSON *obj, const char *v);
    char last[128];
    int result; /* 1 success, -1 failure, 0 not yet */
    struct watch_decoder dec;
};

/* Print the value at path when it changed, and decide. */
static void show(struct follow *f, const cJSON *obj)
{
    const char *v = kjson_get_str(obj, f->path);

    if (strcmp(v ? v : "", f->last) != 0 || f->last[0] == '\001') {
        snprintf(f->last, sizeof(f->last), "%s", v ? v : "");
        fprintf(f->k->out, "%s: %s\n", f->name, v && *v ? v : "-");
        fflush(f->k->out);
    }
    f->result = f->done(obj, v);
}

static enum kerr on_event(void *ctx, struct watch_event *ev)
{
    struct follow *f = ctx;

    if (ev->type == WATCH_ERROR) /* e.g. 410 Expired: read it again */
        return KERR_GONE;
    if (ev->type == WATCH_DELETED) {
        fprintf(f->k->msg, "error: %s was deleted\n", f->name);
        f->result = -1;
    } else if (ev->type != WATCH_BOOKMARK) {
        show(f, ev->object);
    }
    return f->result ? KERR_CANCELLED : KERR_OK;
}

static int on_data(void *arg, const char *data, size_t len)
{
    struct follow *f = arg;

    return watch_feed(&f->dec, data, len, NULL) != KERR_OK;
}

/*
 * Show res/name's value at path, then every change of it (a watch from the version read,
 * so no change is missed), until done() says it is over. Bounded by --timeout.
 */
static int follow(struct kw *k, const struct k8s_resource *res, const char *name, const char *path,
                  int (*done)(const cJSON *obj, const char *v))
{
    struct follow f = { .k = k, .name = name, .path = path, .done = done, .last = "\001" };
    struct k8s_watch_opts wo = { 0 };
    struct kerr_info err = { 0 };
    int64_t deadline = ktime_mono_ms() + k->o.timeout_ms, left;
    char selector[300], rv[64];
    cJSON *obj = NULL;
    enum kerr rc;

    snprintf(selector, sizeof(selector), "metadata.name=%s", name);
    watch_init(&f.dec, 0, on_event, &f);
    for (;;) {
        if (k8s_get(k->client, res, k->ns, name, NULL, &obj, &err) != KERR_OK) {
            f.result = -1;
            kw_fail(k, &err);
            break;
        }
        show(&f, obj);
        snprintf(rv, sizeof(rv), "%s",
                 kjson_get_str(obj, "metadata.resourceVersion")
                     ? kjson_get_str(obj, "metadata.resourceVersion")
                     : "");
        cJSON_Delete(obj);
        obj = NULL;
        left = deadline - ktime_mono_ms();
        if (f.result || left <= 0)
            break;
        watch_reset(&f.dec);
        wo.resource_version = rv;
        wo.field_selector = selector;
        wo.timeout_seconds = (long)((left + 999) / 1000);
        wo.on_data = on_data;
        wo.arg = &f;
        rc = k8s_watch(k->client, res, k->ns, &wo, &err);
        if (f.result || ktime_mono_ms() >= deadline)
            break;
        if (rc == KERR_HTTP || rc == KERR_TIMEOUT) { /* the connection broke: again */
            ktime_sleep_ns(1000000000);
        } else if (rc != KERR_OK && rc != KERR_CANCELLED) { /* an API error: no watch */
            f.result = -1;
            kw_fail(k, &err);
            break;
        }
    }
    watch_release(&f.dec);
    if (!f.result)
        fprintf(k->msg, "error: timed out after %lds waiting for %s\n", k->o.timeout_ms / 1000,
                name);
    return f.result > 0 ? KW_EXIT_OK : KW_EXIT_FAIL;
}

static int hibernated(const cJSON *obj, const char *phase)
{
    (void)obj;
    if (phase && strcmp(phase, "Hibernated") == 0)
        return 1;
    return phase && strcmp(phase, "Failed") == 0 ? -1 : 0;
}

static int awake(const cJSON *obj, const char *phase)
{
    (void)obj;
    return !phase || !*phase;
}

int kw_act_hibernate(struct kw *k, int on, const char *const *args, size_t nargs)
{
    struct kerr_info err = { 0 };
    cJSON *etcd = NULL, *patch = NULL, *ann;
    int64_t replicas = -1;
    int code = KW_EXIT_OK;

    if (one_etcd(k, on ? "hibernate" : "wake", nargs))
        return KW_EXIT_USAGE;
    if (k8s_get(k->client, &KW_RES_ETCD, k->ns, args[0], NULL, &etcd, &err) != KERR_OK) {
        code = kw_fail(k, &err);
        goto out;
    }
    (void)kjson_get_int64(etcd, "spec.replicas", &replicas);
    if (!on && replicas == 0) {
        fprintf(k->msg,
                "error: etcd %s/%s hibernates through spec.replicas 0; wake it by its spec "
                "(spec.replicas above 0), as Gardener does\n",
                k->ns, args[0]);
        code = KW_EXIT_FAIL;
        goto out;
    }
    patch = cJSON_CreateObject();
    ann = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations");
    if (!ann || !(on ? cJSON_AddStringToObject(ann, KW_ANN_HIBERNATE, "true")
                     : cJSON_AddNullToObject(ann, KW_ANN_HIBERNATE))) {
        fprintf(k->msg, "error: out of memory\n");
        code = KW_EXIT_FAIL;
        goto out;
    }
    if (k8s_patch(k->client, &KW_RES_ETCD, k->ns, args[0], K8S_PATCH_MERGE, patch, NULL, NULL,
                  &err) != KERR_OK) {
        code = kw_fail(k, &err);
        goto out;
    }
    fprintf(k->out, "etcd.druid.gardener.cloud/%s %s\n", args[0],
            on ? "hibernation requested" : "wake-up requested");
    if (k->o.wait)
        code = follow(k, &KW_RES_ETCD, args[0], "metadata.annotations[" KW_ANN_PHASE "]",
                      on ? hibernated : awake);
out:
    cJSON_Delete(patch);
    cJSON_Delete(etcd);
    return code;
}

/* The destination of the backup: the schedule's template's, or the flags'. */
static cJSON *destination(struct kw *k, const struct kw_backup_opts *b, const char *etcd,
                          struct kerr_info *err)
{
    cJSON *sched = NULL, *d = NULL, *ref;
    const char *of;

    if (b->from_schedule) {
        if (k8s_get(k->client, &KW_RES_SCHEDULE, k->ns, b->from_schedule, NULL, &sched, err))
            return NULL;
        of = kjson_get_str(sched, "spec.backupTemplate.etcdName");
        if (!of || strcmp(of, etcd) != 0)
            kerr_set(err, KERR_INVAL, "EtcdBackupSchedule %s backs up Etcd %s, not %s",
                     b->from_schedule, of ? of : "-", etcd);
        else if (!(d = cJSON_Duplicate(kjson_get(sched, "spec.backupTemplate.destination"), 1)))
            kerr_set(err, KERR_INVAL, "EtcdBackupSchedule %s has no destination", b->from_schedule);
        cJSON_Delete(sched);
        return d;
    }
    if (!b->provider || !b->container || !b->prefix) {
        kerr_set(err, KERR_INVAL,
                 "backup needs --from-schedule NAME, or --provider, --container and --prefix");
        return NULL;
    }
    d = cJSON_CreateObject();
    if (d && cJSON_AddStringToObject(d, "provider", b->provider) &&
        cJSON_AddStringToObject(d, "container", b->container) &&
        cJSON_AddStringToObject(d, "prefix", b->prefix) &&
        (!b->endpoint || cJSON_AddStringToObject(d, "endpointOverride", b->endpoint)) &&
        (!b->secret || ((ref = cJSON_AddObjectToObject(d, "secretRef")) &&
                        cJSON_AddStringToObject(ref, "name", b->secret))))
        return d;
    cJSON_Delete(d);
    kerr_set(err, KERR_NOMEM, "out of memory");
    return NULL;
}

static int backup_over(const cJSON *obj, const char *phase)
{
    (void)obj;
    if (phase && strcmp(phase, "Completed") == 0)
        return 1;
    return phase && strcmp(phase, "Failed") == 0 ? -1 : 0;
}

/* <etcd>-<UTC yyyymmddhhmmss>, cut to fit a name. */
static void default_name(const char *etcd, char out[254])
{
    char ts[16] = { 0 };
    time_t now = time(NULL);
    struct tm tm;

    gmtime_r(&now, &tm);
    strftime(ts, sizeof(ts), "%Y%m%d%H%M%S", &tm);
    size_t n = strlen(etcd);

    if (n > 253 - 15)
        n = 253 - 15;
    memcpy(out, etcd, n);
    out[n] = '-';
    memcpy(out + n + 1, ts, 15); /* 14 digits and the NUL */
}

int kw_act_backup(struct kw *k, const struct kw_backup_opts *b, const char *const *args,
                  size_t nargs)
{
    struct kerr_info err = { 0 };
    cJSON *obj = NULL, *dest, *got = NULL;
    const char *err_msg;
    char name[254];
    int code = KW_EXIT_OK;

    if (one_etcd(k, "backup", nargs))
        return KW_EXIT_USAGE;
    if (!(dest = destination(k, b, args[0], &err)))
        return err.code == KERR_INVAL ? (fprintf(k->msg, "error: %s\n", err.msg), KW_EXIT_USAGE)
                                      : kw_fail(k, &err);
    if (b->name)
        snprintf(name, sizeof(name), "%s", b->name);
    else
        default_name(args[0], name);
    obj = cJSON_CreateObject();
    if (!obj) {
        cJSON_Delete(dest);
        kerr_set(&err, KERR_NOMEM, "out of memory");
        code = kw_fail(k, &err);
        goto out;
    }
    if (kjson_set(obj, "spec.destination", dest, &err) || /* TAKES dest */
        kjson_set_str(obj, "apiVersion", "etcd-warden.io/v1alpha1", &err) ||
        kjson_set_str(obj, "kind", "EtcdBackup", &err) ||
        kjson_set_str(obj, "metadata.name", name, &err) ||
        kjson_set_str(obj, "metadata.namespace", k->ns, &err) ||
        kjson_set_str(obj, "spec.etcdName", args[0], &err)) {
        code = kw_fail(k, &err);
        goto out;
    }
    if (k8s_create(k->client, &KW_RES_BACKUP, k->ns, obj, NULL, &got, &err) != KERR_OK) {
        code = kw_fail(k, &err);
        goto out;
    }
    fprintf(k->out, "etcdbackup.etcd-warden.io/%s created\n", name);
    if (k->o.wait) {
        code = follow(k, &KW_RES_BACKUP, name, "status.phase", backup_over);
        cJSON_Delete(got);
        got = NULL;
        if (code && k8s_get(k->client, &KW_RES_BACKUP, k->ns, name, NULL, &got, &err) == KERR_OK &&
            (err_msg = kjson_get_str(got, "status.error")))
            fprintf(k->msg, "error: EtcdBackup %s failed: %s\n", name, err_msg);
    }
out:
    cJSON_Delete(got);
    cJSON_Delete(obj);
    return code;
}

static int restore_over(const cJSON *obj, const char *phase)
{
    (void)obj;
    if (phase && strcmp(phase, "Completed") == 0)
        return 1;
    return phase && strcmp(phase, "Failed") == 0 ? -1 : 0;
}

/* The container of the store of the Etcd that backup (BORROWED) is of; NULL when unknown. */
static char *source_container(struct kw *k, const cJSON *backup)
{
    const char *etcd = kjson_get_str(backup, "spec.etcdName"), *c;
    cJSON *obj = NULL;
    char *out = NULL;

    if (etcd && k8s_get(k->client, &KW_RES_ETCD, k->ns, etcd, NULL, &obj, NULL) == KERR_OK &&
        (c = kjson_get_str(obj, "spec.backup.store.container")))
        out = strdup(c);
    cJSON_Delete(obj);
    return out;
}

static enum kerr restore_object(struct kw *k, const struct kw_restore_opts *r, const char *backup,
                                const char *name, const char *container, cJSON **out,
                                struct kerr_info *err)
{
    cJSON *obj = cJSON_CreateObject();
    enum kerr rc;

    *out = NULL;
    if (!obj)
        return kerr_set(err, KERR_NOMEM, "out of memory");
    if ((rc = kjson_set_str(obj, "apiVersion", "etcd-warden.io/v1alpha1", err)) ||
        (rc = kjson_set_str(obj, "kind", "EtcdRestore", err)) ||
        (rc = kjson_set_str(obj, "metadata.name", name, err)) ||
        (rc = kjson_set_str(obj, "metadata.namespace", k->ns, err)) ||
        (rc = kjson_set_str(obj, "spec.source.backupName", backup, err)) ||
        (rc = kjson_set_str(obj, "spec.target.etcdName", r->to, err)) ||
        (rc = kjson_set_str(obj, "spec.target.store.container", container, err)) ||
        (rc = kjson_set_str(obj, "spec.target.store.prefix", r->prefix, err))) {
        cJSON_Delete(obj);
        return rc;
    }
    *out = obj;
    return KERR_OK;
}

int kw_act_restore(struct kw *k, const struct kw_restore_opts *r, const char *const *args,
                   size_t nargs)
{
    struct kerr_info err = { 0 };
    cJSON *backup = NULL, *obj = NULL, *got = NULL;
    char *container = NULL, name[254];
    const char *msg;
    int code = KW_EXIT_OK;

    if (nargs != 1 || !r->to || !r->prefix) {
        fprintf(k->msg, "error: restore takes one EtcdBackup name, --to ETCD and --prefix\n");
        return KW_EXIT_USAGE;
    }
    if (k8s_get(k->client, &KW_RES_BACKUP, k->ns, args[0], NULL, &backup, &err) != KERR_OK) {
        code = kw_fail(k, &err);
        goto out;
    }
    container = r->container ? strdup(r->container) : source_container(k, backup);
    if (!container) {
        fprintf(k->msg,
                "error: the container of EtcdBackup %s's Etcd is unknown: give "
                "--container\n",
                args[0]);
        code = KW_EXIT_FAIL;
        goto out;
    }
    if (r->name)
        snprintf(name, sizeof(name), "%s", r->name);
    else
        snprintf(name, sizeof(name), "%.*s-restore", 253 - 8, r->to);
    if (restore_object(k, r, args[0], name, container, &obj, &err) != KERR_OK ||
        k8s_create(k->client, &KW_RES_RESTORE, k->ns, obj, NULL, NULL, &err) != KERR_OK) {
        code = kw_fail(k, &err);
        goto out;
    }
    fprintf(k->out, "etcdrestore.etcd-warden.io/%s created\n", name);
    if (!k->o.wait)
        goto out;
    code = follow(k, &KW_RES_RESTORE, name, "status.phase", restore_over);
    if (code && k8s_get(k->client, &KW_RES_RESTORE, k->ns, name, NULL, &got, &err) == KERR_OK &&
        (msg = kjson_get_str(got, "status.error")))
        fprintf(k->msg, "error: EtcdRestore %s failed: %s\n", name, msg);
out:
    free(container);
    cJSON_Delete(got);
    cJSON_Delete(obj);
    cJSON_Delete(backup);
    return code;
}
