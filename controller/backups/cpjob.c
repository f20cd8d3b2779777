/* cpjob - the copy Job of an EtcdBackup or EtcdRestore; see cpjob.h. */
#include "controller/backups/cpjob.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bstore.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "controller/core/etcdspec.h"
#include "controller/core/kname.h"
#include "controller/core/podjob.h"

#define RUN_AS   65532
#define ARGS_MAX 32

static int put(cJSON *obj, const char *key, const char *value)
{
    return cJSON_AddStringToObject(obj, key, value) != NULL;
}

static int push(cJSON *arr, cJSON *item)
{
    if (!item || !cJSON_AddItemToArray(arr, item)) {
        cJSON_Delete(item);
        return 0;
    }
    return 1;
}

/* "--flag=value" appended to args. */
static int arg(cJSON *args, const char *flag, const char *value)
{
    char buf[1200];

    if (snprintf(buf, sizeof(buf), "--%s=%s", flag, value) >= (int)sizeof(buf))
        return 0;
    return push(args, cJSON_CreateString(buf));
}

/* Check one side; *kind is its etcd-backup-restore provider name. */
static enum kerr check_store(const char *side, const struct cpjob_store *st, const char **kind,
                             struct kerr_info *err)
{
    *kind = st->provider ? bstore_provider_kind(st->provider) : NULL;
    if (!st->provider || !*st->provider)
        return kerr_set(err, KERR_INVAL, "%s store: provider required", side);
    if (!*kind)
        return kerr_set(err, KERR_INVAL, "%s store: unknown provider \"%s\"", side, st->provider);
    if (strcmp(*kind, "S3") != 0 && strcmp(*kind, "ABS") != 0 && strcmp(*kind, "Local") != 0)
        return kerr_set(err, KERR_UNSUPPORTED,
                        "%s store: provider %s is not supported by the copy (S3, ABS, Local)", side,
                        st->provider);
    if (!st->container || !*st->container || !st->prefix || !*st->prefix)
        return kerr_set(err, KERR_INVAL, "%s store: container and prefix required", side);
    if (strcmp(*kind, "Local") != 0 && !kjson_get_str(st->secret, "metadata.name"))
        return kerr_set(err, KERR_INVAL, "%s store: the Secret is required", side);
    return KERR_OK;
}

void cpjob_local_root(const struct cpjob_store *st, char *out, size_t n)
{
    size_t len;

    if (!st->host_path) {
        podjob_local_root(st->secret, out, n);
        return;
    }
    snprintf(out, n, "%s", st->host_path);
    for (len = strlen(out); len > 1 && out[len - 1] == '/'; len--)
        out[len - 1] = '\0';
}

/* Volume and mount of one side. Local sides sharing a container share one volume. */
static int side_volume(const char *side, const char *kind, const struct cpjob_store *st,
                       cJSON *vols, cJSON *mounts, const char *dir)
{
    char vname[32], path[1024], root[512], mount[512];
    cJSON *v = cJSON_CreateObject(), *m = cJSON_CreateObject();
    int ok = v && m;

    snprintf(vname, sizeof(vname), "%s-store", side);
    if (strcmp(kind, "Local") == 0) {
        cpjob_local_root(st, root, sizeof(root));
        snprintf(path, sizeof(path), "%s/%s", root, st->container);
        snprintf(mount, sizeof(mount), PODJOB_LOCAL_HOME "/%s", st->container);
        ok = ok && put(v, "name", vname) && !kjson_set_str(v, "hostPath.path", path, NULL) &&
             !kjson_set_str(v, "hostPath.type", "Directory", NULL) && put(m, "name", vname) &&
             put(m, "mountPath", mount);
    } else {
        ok = ok && put(v, "name", vname) &&
             !kjson_set_str(v, "secret.secretName", kjson_get_str(st->secret, "metadata.name"),
                            NULL) &&
             put(m, "name", vname) && put(m, "mountPath", dir) &&
             cJSON_AddTrueToObject(m, "readOnly");
    }
    if (!ok) {
        cJSON_Delete(v);
        cJSON_Delete(m);
        return 0;
    }
    return push(vols, v) && push(mounts, m);
}

static int side_args(cJSON *args, const char *side, const char *kind, const struct cpjob_store *st,
                     const char *dir)
{
    char f[64];
    int ok = 1;

    snprintf(f, sizeof(f), "%s-storage-provider", side);
    ok = ok && arg(args, f, kind);
    snprintf(f, sizeof(f), "%s-store-container", side);
    ok = ok && arg(args, f, st->container);
    snprintf(f, sizeof(f), "%s-store-prefix", side);
    ok = ok && arg(args, f, st->prefix);
    if (st->endpoint_override && *st->endpoint_override) {
        snprintf(f, sizeof(f), "%s-store-endpoint-override", side);
        ok = ok && arg(args, f, st->endpoint_override);
    }
    if (strcmp(kind, "Local") != 0) {
        snprintf(f, sizeof(f), "%s-credentials-dir", side);
        ok = ok && arg(args, f, dir);
    }
    return ok;
}

/* The container: image, command, args, env, mounts (all three TAKEN), security context. */
static cJSON *container_of(const char *name, const char *image, const char *command, cJSON *args,
                           cJSON *env, cJSON *mounts)
{
    cJSON *c = cJSON_CreateObject(), *cmd = podjob_split_words(command, ARGS_MAX);
    int ok = c && args && env && cmd && mounts;

    ok = ok && put(c, "name", name) && put(c, "image", image) &&
         put(c, "imagePullPolicy", "IfNotPresent") &&
         put(c, "terminationMessagePolicy", "FallbackToLogsOnError");
    ok = ok && cJSON_AddItemToObject(c, "command", cmd) && (cmd = NULL, 1);
    ok = ok && cJSON_AddItemToObject(c, "args", args) && (args = NULL, 1);
    ok = ok && cJSON_AddItemToObject(c, "env", env) && (env = NULL, 1);
    ok = ok && cJSON_AddItemToObject(c, "volumeMounts", mounts) && (mounts = NULL, 1);
    ok = ok && podjob_secure_container(c);
    cJSON_Delete(cmd);
    cJSON_Delete(args);
    cJSON_Delete(env);
    cJSON_Delete(mounts);
    if (!ok) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

/* The pod spec around ctr and vols (both TAKEN). */
static cJSON *pod_of(cJSON *ctr, cJSON *vols)
{
    cJSON *pod = cJSON_CreateObject();
    int ok = pod && ctr && vols;

    ok = ok && put(pod, "restartPolicy", "Never") && podjob_secure_pod(pod, RUN_AS) &&
         cJSON_AddItemToObject(pod, "volumes", vols) && (vols = NULL, 1) &&
         !kjson_set(pod, "containers", cJSON_CreateArray(), NULL) &&
         push((cJSON *)kjson_get(pod, "containers"), ctr) && (ctr = NULL, 1);
    cJSON_Delete(ctr);
    cJSON_Delete(vols);
    if (!ok) {
        cJSON_Delete(pod);
        return NULL;
    }
    return pod;
}

/* {name: HOME, value: /home/nonroot} and, when dir_var, {name: dir_var, value: dir}. */
static cJSON *env_of(const char *dir_var, const char *dir)
{
    cJSON *env = cJSON_CreateArray(), *e = cJSON_CreateObject(), *d = NULL;
    int ok =
        env && e && put(e, "name", "HOME") && put(e, "value", PODJOB_LOCAL_HOME) && push(env, e);

    e = NULL;
    if (ok && dir_var) {
        d = cJSON_CreateObject();
        ok = d && put(d, "name", dir_var) && put(d, "value", dir) && push(env, d);
    }
    if (!ok) {
        cJSON_Delete(env);
        return NULL;
    }
    return env;
}

static cJSON *pod_around_named(int ok, const char *name, const char *image, const char *command,
                               cJSON *args, cJSON *env, cJSON *mounts, cJSON *vols);

/* The pod of the container running image (NULL: CPJOB_DEFAULT_IMAGE) with command, args,
 * env and mounts, with vols (all four TAKEN); NULL, all four deleted, when ok is 0. */
static cJSON *pod_around(int ok, const char *image, const char *command, cJSON *args, cJSON *env,
                         cJSON *mounts, cJSON *vols)
{
    return pod_around_named(ok, CPJOB_CONTAINER, image, command, args, env, mounts, vols);
}

/* pod_around with the container's name. */
static cJSON *pod_around_named(int ok, const char *name, const char *image, const char *command,
                               cJSON *args, cJSON *env, cJSON *mounts, cJSON *vols)
{
    if (!ok) {
        cJSON_Delete(args);
        cJSON_Delete(env);
        cJSON_Delete(mounts);
        cJSON_Delete(vols);
        return NULL;
    }
    return pod_of(
        container_of(name, image ? image : CPJOB_DEFAULT_IMAGE, command, args, env, mounts), vols);
}

/* The copy's pod spec: the two sides' volumes, args as above. */
static cJSON *copy_pod(const struct cpjob_spec *s, const char *fk, const char *tk)
{
    cJSON *vols = cJSON_CreateArray(), *mounts = cJSON_CreateArray(), *args = cJSON_CreateArray();
    int same_local = strcmp(fk, "Local") == 0 && strcmp(tk, "Local") == 0 &&
                     strcmp(s->from.container, s->to.container) == 0;
    int ok = vols && mounts && args;

    ok = ok && side_volume("from", fk, &s->from, vols, mounts, CPJOB_FROM_DIR);
    ok = ok && (same_local || side_volume("to", tk, &s->to, vols, mounts, CPJOB_TO_DIR));
    ok = ok && side_args(args, "from", fk, &s->from, CPJOB_FROM_DIR) &&
         side_args(args, "to", tk, &s->to, CPJOB_TO_DIR);
    if (s->snapshot)
        ok = ok && arg(args, "snapshot", s->snapshot);
    if (s->latest_full)
        ok = ok && push(args, cJSON_CreateString("--latest-full"));
    if (s->until)
        ok = ok && arg(args, "until", s->until);
    return pod_around(ok, s->image, s->command ? s->command : CPJOB_DEFAULT_COMMAND, args,
                      ok ? env_of(NULL, NULL) : NULL, mounts, vols);
}

/* The delete's pod spec: the store's volume, its credentials directory through the
 * provider's variable (delete-snapshots reads it as etcd-backup-restore does). */
static cJSON *delete_pod(const struct cpjob_delete_spec *s, const char *kind)
{
    cJSON *vols = cJSON_CreateArray(), *mounts = cJSON_CreateArray(), *args = cJSON_CreateArray();
    const char *var = cpjob_credentials_var(kind);
    int ok = vols && mounts && args;

    ok = ok && side_volume("to", kind, &s->store, vols, mounts, CPJOB_TO_DIR);
    ok = ok && arg(args, "storage-provider", kind) &&
         arg(args, "store-container", s->store.container) &&
         arg(args, "store-prefix", s->store.prefix);
    if (s->store.endpoint_override && *s->store.endpoint_override)
        ok = ok && arg(args, "store-endpoint-override", s->store.endpoint_override);
    if (s->written_since)
        ok = ok && arg(args, "written-since", s->written_since);
    if (s->written_before)
        ok = ok && arg(args, "written-before", s->written_before);
    if (s->copies_only)
        ok = ok && push(args, cJSON_CreateString("--only-copies"));
    return pod_around(ok, s->image, s->command ? s->command : CPJOB_DEFAULT_DELETE_COMMAND, args,
                      ok ? env_of(var, CPJOB_TO_DIR) : NULL, mounts, vols);
}

const char *cpjob_credentials_var(const char *kind)
{
    return strcmp(kind, "S3") == 0    ? "AWS_APPLICATION_CREDENTIALS"
           : strcmp(kind, "ABS") == 0 ? "AZURE_APPLICATION_CREDENTIALS"
                                      : NULL;
}

/* An emptyDir volume "work" at CPJOB_WORK_DIR. */
static int work_volume(cJSON *vols, cJSON *mounts)
{
    cJSON *v = cJSON_CreateObject(), *m = cJSON_CreateObject();

    if (!v || !m || !put(v, "name", "work") || !cJSON_AddObjectToObject(v, "emptyDir") ||
        !put(m, "name", "work") || !put(m, "mountPath", CPJOB_WORK_DIR)) {
        cJSON_Delete(v);
        cJSON_Delete(m);
        return 0;
    }
    return push(vols, v) && push(mounts, m);
}

/* The verify's pod spec: the store's volume and credentials as the delete's, the work dir. */
static cJSON *verify_pod(const struct cpjob_verify_spec *s, const char *kind)
{
    cJSON *vols = cJSON_CreateArray(), *mounts = cJSON_CreateArray(), *args = cJSON_CreateArray();
    int ok = vols && mounts && args;

    ok = ok && side_volume("to", kind, &s->store, vols, mounts, CPJOB_TO_DIR) &&
         work_volume(vols, mounts);
    ok = ok && arg(args, "storage-provider", kind) &&
         arg(args, "store-container", s->store.container) &&
         arg(args, "store-prefix", s->store.prefix) && arg(args, "tmp-dir", CPJOB_WORK_DIR);
    if (s->store.endpoint_override && *s->store.endpoint_override)
        ok = ok && arg(args, "store-endpoint-override", s->store.endpoint_override);
    return pod_around_named(ok, CPJOB_VERIFY_CONTAINER, s->image,
                            s->command ? s->command : CPJOB_DEFAULT_VERIFY_COMMAND, args,
                            ok ? env_of(cpjob_credentials_var(kind), CPJOB_TO_DIR) : NULL, mounts,
                            vols);
}

/* Labels of the Job and its Pods. */
static cJSON *labels_of(const char *value)
{
    cJSON *l = cJSON_CreateObject();

    if (!l || !put(l, ETCDSPEC_LABEL_MANAGED_BY, CPJOB_MANAGED_BY) ||
        !put(l, CPJOB_LABEL_FOR, value)) {
        cJSON_Delete(l);
        return NULL;
    }
    return l;
}

static cJSON *owner_ref(const cJSON *owner)
{
    cJSON *r = cJSON_CreateObject(), *a = cJSON_CreateArray();

    if (!r || !a || !put(r, "apiVersion", kjson_get_str(owner, "apiVersion")) ||
        !put(r, "kind", kjson_get_str(owner, "kind")) ||
        !put(r, "name", kjson_get_str(owner, "metadata.name")) ||
        !put(r, "uid", kjson_get_str(owner, "metadata.uid")) ||
        !cJSON_AddTrueToObject(r, "controller") ||
        !cJSON_AddTrueToObject(r, "blockOwnerDeletion")) {
        cJSON_Delete(r);
        cJSON_Delete(a);
        return NULL;
    }
    if (!push(a, r)) {
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

/* "<kind lowercase>.<name>" as a label value. */
enum kerr cpjob_for_label(const cJSON *owner, char out[KNAME_LABEL_MAX + 1])
{
    char buf[300];
    const char *kind = kjson_get_str(owner, "kind"), *name = kjson_get_str(owner, "metadata.name");
    size_t i;

    if (snprintf(buf, sizeof(buf), "%s.%s", kind, name) >= (int)sizeof(buf))
        return KERR_TOOBIG;
    for (i = 0; buf[i] && buf[i] != '.'; i++)
        buf[i] = (char)tolower((unsigned char)buf[i]);
    return kname_label_value(buf, out);
}

static enum kerr check_spec(const struct cpjob_spec *s, const char **fk, const char **tk,
                            struct kerr_info *err)
{
    enum kerr rc;

    if (!s->name || !*s->name || !s->ns || !*s->ns)
        return kerr_set(err, KERR_INVAL, "the copy Job needs a name and a namespace");
    if (!kjson_get_str(s->owner, "kind") || !kjson_get_str(s->owner, "apiVersion") ||
        !kjson_get_str(s->owner, "metadata.name") || !kjson_get_str(s->owner, "metadata.uid"))
        return kerr_set(err, KERR_INVAL, "the copy Job's owner needs apiVersion, kind, name, uid");
    if (s->snapshot && s->until)
        return kerr_set(err, KERR_INVAL, "--snapshot and --until exclude each other");
    rc = check_store("source", &s->from, fk, err);
    if (rc == KERR_OK)
        rc = check_store("destination", &s->to, tk, err);
    if (rc == KERR_OK && strcmp(*fk, "Local") == 0 && strcmp(*tk, "Local") == 0 &&
        strcmp(s->from.container, s->to.container) == 0) {
        char a[512], b[512];

        cpjob_local_root(&s->from, a, sizeof(a));
        cpjob_local_root(&s->to, b, sizeof(b));
        if (strcmp(a, b) != 0)
            rc = kerr_set(err, KERR_INVAL,
                          "Local stores of one container name under two host paths");
    }
    return rc;
}

/* The Job around pod (TAKEN): name, namespace, labels, the owner's controller reference (ref
 * 1) or its uid as annotation PODJOB_ANN_OWNER_UID (ref 0), backoffLimit 0, the deadline. */
static cJSON *job_of(const char *name, const char *ns, const char *label, const cJSON *owner,
                     int ref, long deadline_s, cJSON *pod)
{
    cJSON *job = cJSON_CreateObject();

    if (!job || !pod || !put(job, "apiVersion", "batch/v1") || !put(job, "kind", "Job") ||
        kjson_set_str(job, "metadata.name", name, NULL) ||
        kjson_set_str(job, "metadata.namespace", ns, NULL) ||
        kjson_set(job, "metadata.labels", labels_of(label), NULL) ||
        (ref && kjson_set(job, "metadata.ownerReferences", owner_ref(owner), NULL)) ||
        (!ref && kjson_set_str(job, "metadata.annotations[" PODJOB_ANN_OWNER_UID "]",
                               kjson_get_str(owner, "metadata.uid"), NULL)) ||
        kjson_set_int(job, "spec.backoffLimit", 0, NULL) ||
        kjson_set_int(job, "spec.activeDeadlineSeconds", deadline_s, NULL) ||
        kjson_set(job, "spec.template.metadata.labels", labels_of(label), NULL) ||
        kjson_set(job, "spec.template.spec", pod, NULL)) {
        if (!kjson_get(job, "spec.template.spec"))
            cJSON_Delete(pod);
        cJSON_Delete(job);
        return NULL;
    }
    return job;
}

enum kerr cpjob_build(const struct cpjob_spec *s, cJSON **out, struct kerr_info *err)
{
    const char *fk = NULL, *tk = NULL;
    char label[KNAME_LABEL_MAX + 1];
    enum kerr rc;

    *out = NULL;
    rc = check_spec(s, &fk, &tk, err);
    if (rc == KERR_OK && cpjob_for_label(s->owner, label) != KERR_OK)
        rc = kerr_set(err, KERR_INVAL, "no label value for the copy Job's owner");
    if (rc != KERR_OK)
        return rc;
    *out = job_of(s->name, s->ns, label, s->owner, 1,
                  s->deadline_s > 0 ? s->deadline_s : PODJOB_COPY_DEADLINE_S, copy_pod(s, fk, tk));
    return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, "building the copy Job");
}

enum kerr cpjob_build_delete(const struct cpjob_delete_spec *s, cJSON **out, struct kerr_info *err)
{
    const char *kind = NULL;
    char label[KNAME_LABEL_MAX + 1];
    enum kerr rc;

    *out = NULL;
    if (!s->name || !*s->name || !s->ns || !*s->ns)
        return kerr_set(err, KERR_INVAL, "the delete Job needs a name and a namespace");
    if (!kjson_get_str(s->owner, "kind") || !kjson_get_str(s->owner, "metadata.name") ||
        !kjson_get_str(s->owner, "metadata.uid"))
        return kerr_set(err, KERR_INVAL, "the delete Job's owner needs a kind, a name and a uid");
    rc = check_store("the", &s->store, &kind, err);
    if (rc == KERR_OK && cpjob_for_label(s->owner, label) != KERR_OK)
        rc = kerr_set(err, KERR_INVAL, "no label value for the delete Job's owner");
    if (rc != KERR_OK)
        return rc;
    *out =
        job_of(s->name, s->ns, label, s->owner, 0,
               s->deadline_s > 0 ? s->deadline_s : PODJOB_DELETE_DEADLINE_S, delete_pod(s, kind));
    return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, "building the delete Job");
}

enum kerr cpjob_build_verify(const struct cpjob_verify_spec *s, cJSON **out, struct kerr_info *err)
{
    const char *kind = NULL;
    char label[KNAME_LABEL_MAX + 1];
    enum kerr rc;

    *out = NULL;
    if (!s->name || !*s->name || !s->ns || !*s->ns)
        return kerr_set(err, KERR_INVAL, "the verify Job needs a name and a namespace");
    if (!kjson_get_str(s->owner, "kind") || !kjson_get_str(s->owner, "apiVersion") ||
        !kjson_get_str(s->owner, "metadata.name") || !kjson_get_str(s->owner, "metadata.uid"))
        return kerr_set(err, KERR_INVAL,
                        "the verify Job's owner needs apiVersion, kind, name, uid");
    rc = check_store("the", &s->store, &kind, err);
    if (rc == KERR_OK && cpjob_for_label(s->owner, label) != KERR_OK)
        rc = kerr_set(err, KERR_INVAL, "no label value for the verify Job's owner");
    if (rc != KERR_OK)
        return rc;
    *out =
        job_of(s->name, s->ns, label, s->owner, 1,
               s->deadline_s > 0 ? s->deadline_s : PODJOB_VERIFY_DEADLINE_S, verify_pod(s, kind));
    return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, "building the verify Job");
}

/* A whole number from 0 to 2^53 of o, else -1. */
static long long num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 9007199254740992.0))
        return -1;
    return (long long)v->valuedouble;
}

static void copy_str(char *dst, size_t n, const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    snprintf(dst, n, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static int read_summary(const char *line, size_t len, struct cpjob_summary *out)
{
    cJSON *sum = cJSON_ParseWithLength(line, len);
    const cJSON *snaps = cJSON_GetObjectItemCaseSensitive(sum, "snapshots"), *sn;
    long long total = num(sum, "total");
    int ok = cJSON_IsObject(sum) && cJSON_IsArray(snaps) && total >= 0;

    if (!ok)
        snaps = NULL;
    cJSON_ArrayForEach (sn, snaps) {
        struct cpjob_snap *p = &out->snaps[out->n];

        if (out->n >= CPJOB_SNAPS_MAX || !cJSON_IsObject(sn))
            break;
        copy_str(p->name, sizeof(p->name), sn, "name");
        copy_str(p->kind, sizeof(p->kind), sn, "kind");
        copy_str(p->md5, sizeof(p->md5), sn, "md5");
        copy_str(p->destination, sizeof(p->destination), sn, "destination");
        p->start_rev = num(sn, "startRevision");
        p->last_rev = num(sn, "lastRevision");
        p->size = num(sn, "size");
        out->n++;
    }
    if (ok) {
        out->total = (size_t)total;
        copy_str(out->error, sizeof(out->error), sum, "error");
    }
    cJSON_Delete(sum);
    return ok;
}

void cpjob_read_pod(const cJSON *pod, struct cpjob_summary *out)
{
    const char *line = NULL;
    size_t len = 0;

    out->parsed = 0;
    out->exit_code = -1;
    out->n = out->total = 0;
    out->error[0] = '\0';
    if (!podjob_terminated(pod, &out->exit_code, &line, &len) || !line)
        return;
    out->parsed = read_summary(line, len, out);
    if (!out->parsed) {
        out->n = out->total = 0;
        snprintf(out->error, sizeof(out->error), "%.*s", (int)len, line);
    }
}

enum kerr cpjob_read(struct k8s_client *cl, const char *ns, const char *job_name,
                     const char *owner_uid, struct cpjob_summary *out, struct kerr_info *err)
{
    cJSON *job = NULL, *list = NULL;
    const cJSON *pod;
    int64_t ok = 0;
    char sel[128], why[sizeof(out->error)], foreign[KERR_MSG_LEN];
    enum kerr rc;

    memset(out, 0, sizeof(*out));
    out->exit_code = -1;
    rc = k8s_get(cl, &ETCDSPEC_RES_JOB, ns, job_name, NULL, &job, err);
    if (rc != KERR_OK)
        return rc;
    if (!podjob_owned(job, owner_uid)) {
        podjob_foreign(job, foreign, sizeof(foreign));
        cJSON_Delete(job);
        return kerr_set(err, KERR_EXISTS, "%s", foreign);
    }
    out->succeeded = kjson_get_int64(job, "status.succeeded", &ok) == KERR_OK && ok > 0;
    out->finished = out->succeeded || podjob_job_finished(job);
    if (out->finished) {
        const char *uid = kjson_get_str(job, "metadata.uid");

        snprintf(sel, sizeof(sel), "controller-uid=%s", uid ? uid : "-");
        rc = k8s_list(cl, &ETCDSPEC_RES_POD, ns, &(struct k8s_list_opts){ .label_selector = sel },
                      &list, err);
        cJSON_ArrayForEach (pod, cJSON_GetObjectItemCaseSensitive(list, "items")) {
            cpjob_read_pod(pod, out);
            if (out->exit_code >= 0)
                break;
        }
    }
    /* a Job stopped at its deadline: that is the error, whatever its Pod said (if it ran) */
    if (out->finished && !out->succeeded && podjob_job_failed(job, why, sizeof(why)) &&
        (podjob_deadline_exceeded(job) || !*out->error)) {
        out->parsed = 0;
        snprintf(out->error, sizeof(out->error), "%s", why);
    }
    cJSON_Delete(list);
    cJSON_Delete(job);
    return rc;
}

const char *cpjob_copy_start(const cJSON *obj, char now[KTIME_LEN + 1])
{
    const char *at = kjson_get_str(obj, "metadata.creationTimestamp");

    if (at && *at)
        return at;
    if (ktime_format(time(NULL) - 60, now) != KERR_OK)
        snprintf(now, KTIME_LEN + 1, "1970-01-01T00:00:00Z");
    return now;
}
