/* imtjob - the immutability task and its CronJob, built as etcd-druid builds its sidecar. */
#include "controller/core/imtjob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/core/etcdspec.h"
#include "controller/core/kname.h"
#include "controller/core/podjob.h"

#define SECRET_VOLUME "etcd-backup-secret"
#define MOUNT_NON_GCS "/var/etcd-backup"
#define MOUNT_GCS     "/var/.gcp/"
#define LOCAL_MOUNT   PODJOB_LOCAL_HOME "/"

/*
 * What warden-snapshot opens (controller/snapshot/providers/ptable.c, ptable_open), as
 * etcdspec kinds.
 */
static const char *const SUPPORTED[] = { "S3", "ABS", "GCS", "ECS", "OCS", "Local", NULL };

int imtjob_provider_supported(const char *kind)
{
    const char *const *p;

    for (p = SUPPORTED; kind && *p; p++)
        if (strcmp(kind, *p) == 0)
            return 1;
    return 0;
}

const char *imtjob_local_secret(const cJSON *etcd)
{
    const char *p = kjson_get_str(etcd, "spec.backup.store.provider");

    if (!p || (strcmp(p, "Local") != 0 && strcmp(p, "local") != 0))
        return NULL;
    return kjson_get_str(etcd, "spec.backup.store.secretRef.name");
}

enum kerr imtjob_task_name(const char *etcd_name, char *out, size_t n)
{
    enum kerr rc = kname_join(etcd_name, IMTJOB_TASK_SUFFIX, KNAME_SUBDOMAIN_MAX, out, n);

    return rc == KERR_INVAL ? KERR_TOOBIG : rc;
}

void imtjob_cronjob_name(const char *task_name, char out[IMTJOB_CRONJOB_MAX + 1])
{
    if (kname_join(task_name, "", IMTJOB_CRONJOB_MAX, out, IMTJOB_CRONJOB_MAX + 1) != KERR_OK)
        out[0] = '\0';
}

const char *imtjob_schedule(const cJSON *task, const cJSON *etcd)
{
    const char *s = kjson_get_str(task, "spec.config.schedule");

    if (!s || !s[0])
        s = kjson_get_str(etcd, "spec.backup.fullSnapshotSchedule");
    return s && s[0] ? s : ETCDSPEC_DEFAULT_IMM_SCHEDULE;
}

/* Add key: value (string) to obj; 0 on NOMEM. */
static int put(cJSON *obj, const char *key, const char *value)
{
    return cJSON_AddStringToObject(obj, key, value) != NULL;
}

enum kerr imtjob_task_build(const cJSON *etcd, cJSON **out, struct kerr_info *err)
{
    char name[ETCDSPEC_NAME_MAX + 32], part_of[KNAME_LABEL_MAX + 1];
    const char *sched = imtjob_schedule(NULL, etcd);
    cJSON *t = NULL, *ref = NULL;
    struct etcdspec e;
    enum kerr rc;

    *out = NULL;
    rc = etcdspec_read(etcd, &e, err);
    if (rc == KERR_OK && !e.namespace)
        rc = kerr_set(err, KERR_INVAL, "the Etcd has no namespace");
    if (rc == KERR_OK && (imtjob_task_name(e.name, name, sizeof(name)) != KERR_OK ||
                          kname_label_value(e.name, part_of) != KERR_OK))
        rc = kerr_set(err, KERR_INVAL, "Etcd name too long: %s", e.name);
    if (rc == KERR_OK && etcdspec_cron_check(sched, err) != KERR_OK)
        rc = kerr_wrap(err, "spec.backup.fullSnapshotSchedule");
    if (rc == KERR_OK)
        rc = etcdspec_owner_ref(etcd, &ref, err);
    if (rc != KERR_OK)
        return rc;
    t = cJSON_CreateObject();
    if (t && put(t, "apiVersion", ETCDSPEC_WARDEN_API) && put(t, "kind", IMTJOB_KIND) &&
        kjson_set_str(t, "metadata.name", name, err) == KERR_OK &&
        kjson_set_str(t, "metadata.namespace", e.namespace, err) == KERR_OK &&
        kjson_setv(t,
                   (const char *const[]){ "metadata", "labels", ETCDSPEC_LABEL_MANAGED_BY, NULL },
                   cJSON_CreateString(IMTJOB_MANAGED_BY), err) == KERR_OK &&
        kjson_setv(t, (const char *const[]){ "metadata", "labels", ETCDSPEC_LABEL_PART_OF, NULL },
                   cJSON_CreateString(part_of), err) == KERR_OK &&
        kjson_set(t, "metadata.ownerReferences", cJSON_CreateArray(), err) == KERR_OK &&
        cJSON_AddItemToArray((cJSON *)kjson_get(t, "metadata.ownerReferences"), ref) &&
        (ref = NULL, kjson_set_str(t, "spec.etcdName", e.name, err) == KERR_OK) &&
        kjson_set_str(t, "spec.config.schedule", sched, err) == KERR_OK) {
        *out = t;
        return KERR_OK;
    }
    cJSON_Delete(ref);
    cJSON_Delete(t);
    return kerr_set(err, KERR_NOMEM, NULL);
}

enum kerr imtjob_gc_from(const cJSON *task, int64_t *out, struct kerr_info *err)
{
    const char *ct = kjson_get_str(task, "metadata.creationTimestamp");
    struct timespec ts;

    *out = 0;
    if (!ct || ktime_parse(ct, &ts, NULL) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "the task has no valid metadata.creationTimestamp");
    *out = (int64_t)ts.tv_sec;
    return KERR_OK;
}

/* {name, value} or {name, valueFrom: {fieldRef|secretKeyRef}} appended to env. */
static int env_value(cJSON *env, const char *name, const char *value)
{
    cJSON *e = cJSON_CreateObject();

    if (!e || !put(e, "name", name) || !put(e, "value", value) || !cJSON_AddItemToArray(env, e)) {
        cJSON_Delete(e);
        return 0;
    }
    return 1;
}

static int env_field(cJSON *env, const char *name, const char *path)
{
    cJSON *e = cJSON_CreateObject();

    if (!e || !put(e, "name", name) ||
        kjson_set_str(e, "valueFrom.fieldRef.fieldPath", path, NULL) != KERR_OK ||
        !cJSON_AddItemToArray(env, e)) {
        cJSON_Delete(e);
        return 0;
    }
    return 1;
}

static int env_secret(cJSON *env, const char *name, const char *secret, const char *key,
                      int optional)
{
    cJSON *e = cJSON_CreateObject();

    if (!e || !put(e, "name", name) ||
        kjson_set_str(e, "valueFrom.secretKeyRef.name", secret, NULL) != KERR_OK ||
        kjson_set_str(e, "valueFrom.secretKeyRef.key", key, NULL) != KERR_OK ||
        (optional && kjson_set_bool(e, "valueFrom.secretKeyRef.optional", true, NULL)) ||
        !cJSON_AddItemToArray(env, e)) {
        cJSON_Delete(e);
        return 0;
    }
    return 1;
}

/* etcd-druid's GetProviderEnvVars: the provider's credentials variable(s). */
static int provider_env(cJSON *env, const struct etcdspec_store *st)
{
    static const char *const DIRS[][2] = {
        { "S3", "AWS_APPLICATION_CREDENTIALS" },
        { "ABS", "AZURE_APPLICATION_CREDENTIALS" },
        { "Swift", "OPENSTACK_APPLICATION_CREDENTIALS" },
        { "OSS", "ALICLOUD_APPLICATION_CREDENTIALS" },
        { "OCS", "OPENSHIFT_APPLICATION_CREDENTIALS" },
    };
    const char *p = st->provider_kind, *sec = st->secret_name;
    size_t i;

    for (i = 0; i < sizeof(DIRS) / sizeof(DIRS[0]); i++)
        if (strcmp(p, DIRS[i][0]) == 0 && !env_value(env, DIRS[i][1], MOUNT_NON_GCS))
            return 0;
    if (strcmp(p, "ABS") == 0 && sec &&
        !env_secret(env, "AZURE_EMULATOR_ENABLED", sec, "emulatorEnabled", 1))
        return 0;
    if (strcmp(p, "GCS") == 0 &&
        !env_value(env, "GOOGLE_APPLICATION_CREDENTIALS", MOUNT_GCS "serviceaccount.json"))
        return 0;
    if (strcmp(p, "ECS") == 0 && sec &&
        (!env_secret(env, "ECS_ENDPOINT", sec, "endpoint", 0) ||
         !env_secret(env, "ECS_ACCESS_KEY_ID", sec, "accessKeyID", 0) ||
         !env_secret(env, "ECS_SECRET_ACCESS_KEY", sec, "secretAccessKey", 0)))
        return 0;
    return 1;
}

/* The store volume and its mount (none for ECS, or without a Secret). */
static enum kerr store_volume(const struct etcdspec_store *st, const cJSON *secret, cJSON *pod,
                              cJSON *ctr, struct kerr_info *err)
{
    const char *p = st->provider_kind, *mount = MOUNT_NON_GCS;
    char path[1024], local[512], root[512];
    cJSON *vol = cJSON_CreateObject(), *vm = cJSON_CreateObject();
    enum kerr rc = vol && vm ? KERR_OK : KERR_NOMEM;

    if (strcmp(p, "Local") == 0) {
        podjob_local_root(secret, root, sizeof(root));
        snprintf(path, sizeof(path), "%s/%s", root, st->container ? st->container : "");
        snprintf(local, sizeof(local), LOCAL_MOUNT "%s", st->container ? st->container : "");
        if (rc == KERR_OK &&
            (!put(vol, "name", "host-storage") || kjson_set_str(vol, "hostPath.path", path, err) ||
             kjson_set_str(vol, "hostPath.type", "Directory", err) ||
             !put(vm, "name", "host-storage") || !put(vm, "mountPath", local)))
            rc = KERR_NOMEM;
    } else if (strcmp(p, "ECS") != 0 && st->secret_name) {
        if (strcmp(p, "GCS") == 0)
            mount = MOUNT_GCS;
        if (rc == KERR_OK && (!put(vol, "name", SECRET_VOLUME) ||
                              kjson_set_str(vol, "secret.secretName", st->secret_name, err) ||
                              !put(vm, "name", SECRET_VOLUME) || !put(vm, "mountPath", mount) ||
                              !cJSON_AddTrueToObject(vm, "readOnly")))
            rc = KERR_NOMEM;
    } else {
        cJSON_Delete(vol);
        cJSON_Delete(vm);
        return KERR_OK;
    }
    if (rc == KERR_OK &&
        (kjson_set(pod, "volumes", cJSON_CreateArray(), err) ||
         kjson_set(ctr, "volumeMounts", cJSON_CreateArray(), err) ||
         !cJSON_AddItemToArray((cJSON *)kjson_get(pod, "volumes"), vol) ||
         (vol = NULL, !cJSON_AddItemToArray((cJSON *)kjson_get(ctr, "volumeMounts"), vm))))
        rc = KERR_NOMEM;
    else if (rc == KERR_OK)
        vm = NULL;
    cJSON_Delete(vol);
    cJSON_Delete(vm);
    return rc == KERR_OK ? rc : kerr_set(err, rc, NULL);
}

/* --gc-from-timestamp, --storage-provider, --store-container, --store-prefix,
 * --store-endpoint-override. */
static cJSON *args_of(int64_t gc_from, const struct etcdspec_store *st, const char *endpoint)
{
    char buf[1024];
    cJSON *a = cJSON_CreateArray();
    int ok = a != NULL;

    snprintf(buf, sizeof(buf), "--gc-from-timestamp=%lld", (long long)gc_from);
    ok = ok && cJSON_AddItemToArray(a, cJSON_CreateString(buf));
    snprintf(buf, sizeof(buf), "--storage-provider=%s", st->provider_kind);
    ok = ok && cJSON_AddItemToArray(a, cJSON_CreateString(buf));
    if (st->container) {
        snprintf(buf, sizeof(buf), "--store-container=%s", st->container);
        ok = ok && cJSON_AddItemToArray(a, cJSON_CreateString(buf));
    }
    snprintf(buf, sizeof(buf), "--store-prefix=%s", st->prefix);
    ok = ok && cJSON_AddItemToArray(a, cJSON_CreateString(buf));
    if (endpoint && *endpoint) {
        snprintf(buf, sizeof(buf), "--store-endpoint-override=%s", endpoint);
        ok = ok && cJSON_AddItemToArray(a, cJSON_CreateString(buf));
    }
    if (!ok) {
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

static cJSON *env_of(const struct etcdspec_store *st)
{
    cJSON *env = cJSON_CreateArray();

    if (!env || !env_field(env, "POD_NAME", "metadata.name") ||
        !env_field(env, "POD_NAMESPACE", "metadata.namespace") ||
        !env_value(env, "STORAGE_CONTAINER", st->container ? st->container : "") ||
        !provider_env(env, st) ||
        (strcmp(st->provider_kind, "Local") == 0 && !env_value(env, "HOME", PODJOB_LOCAL_HOME))) {
        cJSON_Delete(env);
        return NULL;
    }
    return env;
}

/* The container: image, command, args, env, security context. TAKES cmd. */
static cJSON *container_of(const char *image, cJSON *cmd, int64_t gc_from,
                           const struct etcdspec_store *st, const char *endpoint)
{
    cJSON *c = cJSON_CreateObject(), *args = args_of(gc_from, st, endpoint), *env = env_of(st);
    int ok = c && args && env && cmd;

    ok = ok && put(c, "name", IMTJOB_CONTAINER) && put(c, "image", image) &&
         put(c, "imagePullPolicy", "IfNotPresent");
    ok = ok && cJSON_AddItemToObject(c, "command", cmd) && (cmd = NULL, 1);
    ok = ok && cJSON_AddItemToObject(c, "args", args) && (args = NULL, 1);
    ok = ok && cJSON_AddItemToObject(c, "env", env) && (env = NULL, 1);
    ok = ok && podjob_secure_container(c);
    cJSON_Delete(cmd);
    cJSON_Delete(args);
    cJSON_Delete(env);
    if (!ok) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

/*
 * The ServiceAccount of a pod without a store Secret: etcd-druid then mounts nothing and
 * the sidecar takes the ambient credentials its pod gets through the Etcd's ServiceAccount
 * (EKS IRSA's webhook injects AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE and the projected
 * token for that account), so the CronJob runs as that account too: the Etcd's name, as
 * etcd-druid names it, unless runtime component creation is disabled (the default account,
 * as etcd-druid's pod). NULL when a Secret is mounted.
 */
static const char *ambient_account(const cJSON *etcd, const struct etcdspec_store *st)
{
    const cJSON *ann = kjson_get(etcd, "metadata.annotations");

    if (st->secret_name || strcmp(st->provider_kind, "Local") == 0)
        return NULL;
    if (cJSON_GetObjectItemCaseSensitive(ann, ETCDSPEC_ANN_RUNTIME_DISABLED))
        return "default";
    return kjson_get_str(etcd, "metadata.name");
}

/* The pod template spec around ctr (TAKES); runs as sa when not NULL. */
static cJSON *pod_of(cJSON *ctr, const struct etcdspec_store *st, const cJSON *secret,
                     const char *sa, struct kerr_info *err)
{
    cJSON *pod = cJSON_CreateObject();
    int ok = pod && ctr;

    ok = ok && store_volume(st, secret, pod, ctr, err) == KERR_OK;
    /* the ambient identity comes with the account; its API token is not needed */
    ok = ok && (!sa || (put(pod, "serviceAccountName", sa) &&
                        !kjson_set_bool(pod, "automountServiceAccountToken", false, NULL)));
    ok = ok && put(pod, "restartPolicy", "OnFailure") && podjob_secure_pod(pod, IMTJOB_RUN_AS) &&
         !kjson_set(pod, "containers", cJSON_CreateArray(), NULL) &&
         cJSON_AddItemToArray((cJSON *)kjson_get(pod, "containers"), ctr);
    if (!ok) {
        if (!pod || !kjson_get(pod, "containers.0"))
            cJSON_Delete(ctr);
        cJSON_Delete(pod);
        return NULL;
    }
    return pod;
}

/* Checks of the inputs; *st and *gc_from filled. */
static enum kerr check_inputs(const cJSON *task, const cJSON *etcd, struct etcdspec *e,
                              int64_t *gc_from, struct kerr_info *err)
{
    enum kerr rc;

    if (!kjson_get_str(task, "metadata.name") || !kjson_get_str(task, "metadata.uid"))
        return kerr_set(err, KERR_INVAL, "the task has no metadata.name or metadata.uid");
    rc = imtjob_gc_from(task, gc_from, err);
    if (rc == KERR_OK && etcdspec_cron_check(imtjob_schedule(task, etcd), err) != KERR_OK)
        rc = kerr_wrap(err, "schedule");
    if (rc == KERR_OK)
        rc = etcdspec_read(etcd, e, err);
    if (rc == KERR_OK && !e->has_store)
        rc = kerr_set(err, KERR_INVAL, "Etcd %s has no backup store (spec.backup.store)", e->name);
    if (rc == KERR_OK && !e->store.provider_kind)
        rc = kerr_set(err, KERR_INVAL, "spec.backup.store.provider: %s \"%s\"",
                      e->store.provider ? "unsupported provider" : "required",
                      e->store.provider ? e->store.provider : "");
    if (rc == KERR_OK && !imtjob_provider_supported(e->store.provider_kind))
        rc = kerr_set(err, KERR_UNSUPPORTED,
                      "spec.backup.store.provider: %s (%s) is not supported by the immutability "
                      "task (supported: S3, ABS, GCS, ECS, OCS, Local)",
                      e->store.provider, e->store.provider_kind);
    if (rc == KERR_OK && !e->store.prefix)
        rc = kerr_set(err, KERR_INVAL, "spec.backup.store.prefix: required");
    /* without a Secret only S3 has ambient credentials warden-snapshot reads (web identity
     * from the environment); etcd-druid itself refuses ECS without one */
    if (rc == KERR_OK && !e->store.secret_name && strcmp(e->store.provider_kind, "S3") != 0 &&
        strcmp(e->store.provider_kind, "Local") != 0)
        rc = kerr_set(err, KERR_INVAL,
                      "spec.backup.store.secretRef: required for %s (the immutability task reads "
                      "ambient credentials for S3 only)",
                      e->store.provider_kind);
    return rc;
}

/* Labels, owner reference and spec hash of the CronJob cj for task. */
static enum kerr finish_meta(cJSON *cj, const cJSON *task, const char *etcd_name,
                             struct kerr_info *err)
{
    cJSON *ref = cJSON_CreateObject(), *lab = cJSON_CreateObject(), *h = cJSON_CreateObject();
    char hex[CRYPTO_SHA256_HEX_LEN + 1], *text = NULL;
    char part_of[KNAME_LABEL_MAX + 1], task_label[KNAME_LABEL_MAX + 1];
    size_t len = 0;
    enum kerr rc = ref && lab && h ? KERR_OK : KERR_NOMEM;

    if (rc == KERR_OK && (kname_label_value(etcd_name, part_of) != KERR_OK ||
                          kname_label_value(kjson_get_str(task, "metadata.name"), task_label)))
        rc = KERR_INVAL;

    if (rc == KERR_OK &&
        (!put(ref, "apiVersion", ETCDSPEC_WARDEN_API) || !put(ref, "kind", IMTJOB_KIND) ||
         !put(ref, "name", kjson_get_str(task, "metadata.name")) ||
         !put(ref, "uid", kjson_get_str(task, "metadata.uid")) ||
         !cJSON_AddTrueToObject(ref, "controller") ||
         !cJSON_AddTrueToObject(ref, "blockOwnerDeletion") ||
         !put(lab, ETCDSPEC_LABEL_MANAGED_BY, IMTJOB_MANAGED_BY) ||
         !put(lab, ETCDSPEC_LABEL_PART_OF, part_of) || !put(lab, IMTJOB_LABEL_TASK, task_label)))
        rc = KERR_NOMEM;
    if (rc == KERR_OK &&
        (!cJSON_AddItemToObject(h, "labels", cJSON_CreateObjectReference(lab->child)) ||
         !cJSON_AddItemToObject(h, "spec",
                                cJSON_CreateObjectReference(kjson_get_obj(cj, "spec")->child))))
        rc = KERR_NOMEM;
    if (rc == KERR_OK)
        rc = kjson_print_sorted(h, &text, &len, err);
    if (rc == KERR_OK)
        rc = crypto_sha256_hex(text, len, hex, err);
    free(text);
    cJSON_Delete(h);
    if (rc == KERR_OK)
        rc = kjson_set(cj, "metadata.labels", lab, err);
    else
        cJSON_Delete(lab);
    if (rc == KERR_OK)
        rc = kjson_setv(
            cj, (const char *const[]){ "metadata", "annotations", IMTJOB_ANN_SPEC_HASH, NULL },
            cJSON_CreateString(hex), err);
    if (rc == KERR_OK)
        rc = kjson_set(cj, "metadata.ownerReferences", cJSON_CreateArray(), err);
    if (rc == KERR_OK &&
        !cJSON_AddItemToArray((cJSON *)kjson_get(cj, "metadata.ownerReferences"), ref))
        rc = KERR_NOMEM;
    else if (rc == KERR_OK)
        ref = NULL;
    cJSON_Delete(ref);
    return rc == KERR_OK ? rc : kerr_set(err, rc, "building the CronJob's metadata");
}

enum kerr imtjob_cronjob_build(const cJSON *task, const cJSON *etcd, const char *image,
                               const char *command, cJSON **out, struct kerr_info *err)
{
    return imtjob_cronjob_build_store(task, etcd, NULL, image, command, out, err);
}

enum kerr imtjob_cronjob_build_store(const cJSON *task, const cJSON *etcd, const cJSON *secret,
                                     const char *image, const char *command, cJSON **out,
                                     struct kerr_info *err)
{
    char name[IMTJOB_CRONJOB_MAX + 1];
    struct etcdspec e;
    int64_t gc_from = 0;
    cJSON *cj = NULL, *pod = NULL, *cmd;
    enum kerr rc;

    *out = NULL;
    rc = check_inputs(task, etcd, &e, &gc_from, err);
    if (rc != KERR_OK)
        return rc;
    cmd = podjob_split_words(command ? command : "warden-snapshot extend-snapshot-immutability",
                             IMTJOB_ARGS_MAX);
    if (!cmd)
        return kerr_set(err, KERR_INVAL, "--immutability-task-command: no command words");
    pod = pod_of(container_of(image ? image : WARDEN_DEFAULT_IMAGE, cmd, gc_from, &e.store,
                              kjson_get_str(etcd, "spec.backup.store.endpointOverride")),
                 &e.store, secret, ambient_account(etcd, &e.store), err);
    imtjob_cronjob_name(kjson_get_str(task, "metadata.name"), name);
    cj = cJSON_CreateObject();
    if (!pod || !cj) {
        cJSON_Delete(pod);
        cJSON_Delete(cj);
        return kerr_set(err, KERR_NOMEM, "building the CronJob");
    }
    if ((kjson_set(cj, "spec.jobTemplate.spec.template.spec", pod, err) ||
         !put(cj, "apiVersion", "batch/v1") || !put(cj, "kind", "CronJob") ||
         kjson_set_str(cj, "metadata.name", name, err) ||
         kjson_set_str(cj, "metadata.namespace", e.namespace, err) ||
         kjson_set_str(cj, "spec.schedule", imtjob_schedule(task, etcd), err) ||
         kjson_set_str(cj, "spec.concurrencyPolicy", "Forbid", err) ||
         kjson_set_int(cj, "spec.successfulJobsHistoryLimit", 1, err) ||
         kjson_set_int(cj, "spec.failedJobsHistoryLimit", 3, err) ||
         kjson_set_int(cj, "spec.jobTemplate.spec.backoffLimit", 2, err) ||
         kjson_set_int(cj, "spec.jobTemplate.spec.activeDeadlineSeconds", PODJOB_IMT_DEADLINE_S,
                       err)))
        rc = KERR_NOMEM;
    if (rc == KERR_OK)
        rc = finish_meta(cj, task, e.name, err);
    if (rc != KERR_OK) {
        cJSON_Delete(cj);
        return kerr_set(err, rc, "building the CronJob: %s", kerr_str(rc));
    }
    *out = cj;
    return KERR_OK;
}
