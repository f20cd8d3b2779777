/* erd_job - a restore drill's target and Job; see erd_int.h and erd.h. */
#include "controller/backups/erd_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/crypto.h"
#include "common/kjson.h"
#include "controller/backups/ebs.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"
#include "controller/core/rctx.h"

#define RESTORE_PEER "http://127.0.0.1:2380"

static const char *str(const cJSON *o, const char *path)
{
    const char *s = kjson_get_str(o, path);

    return s ? s : "";
}

void erd_target_release(struct erd_target *t)
{
    cJSON_Delete(t->etcd);
    cJSON_Delete(t->backup);
    cJSON_Delete(t->secret);
    memset(t, 0, sizeof(*t));
}

/* An object of ns into *out, NULL when not found (KERR_OK). */
static enum kerr get_opt(const struct rctx *x, const struct k8s_resource *res, const char *ns,
                         const char *name, cJSON **out, struct kerr_info *err)
{
    enum kerr rc = k8s_get(x->client, res, ns, name, NULL, out, err);

    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        *out = NULL;
        return KERR_OK;
    }
    return rc;
}

/* The Etcd's store into t. */
static enum kerr etcd_store(const struct rctx *x, const char *ns, const struct erd_spec *sp,
                            struct erd_target *t, const char **reason, char *why, size_t n,
                            struct kerr_info *err)
{
    struct etcdspec e;
    enum kerr rc = get_opt(x, &ETCDSPEC_RES_ETCD, ns, sp->etcd, &t->etcd, err);

    snprintf(t->what, sizeof(t->what), "Etcd %s/%s", ns, sp->etcd);
    t->etcd_name = sp->etcd;
    if (rc != KERR_OK)
        return rc;
    if (!t->etcd)
        return snprintf(why, n, "%s not found", t->what), *reason = "TargetNotFound", KERR_OK;
    if (etcdspec_read(t->etcd, &e, NULL) != KERR_OK || !e.has_store)
        return snprintf(why, n, "%s has no backup store (spec.backup.store)", t->what),
               *reason = "InvalidTarget", KERR_OK;
    t->store = (struct cpjob_store){ e.store.provider,
                                     e.store.container,
                                     e.store.prefix,
                                     kjson_get_str(t->etcd, "spec.backup.store.endpointOverride"),
                                     NULL,
                                     NULL };
    if (!e.store.secret_name)
        return KERR_OK;
    rc = get_opt(x, &ETCDSPEC_RES_SECRET, ns, e.store.secret_name, &t->secret, err);
    if (rc == KERR_OK && !t->secret)
        return snprintf(why, n, "Secret %s/%s of %s's backup store not found", ns,
                        e.store.secret_name, t->what),
               *reason = "TargetNotFound", KERR_OK;
    return rc;
}

/* The EtcdBackup's copy into t. */
static enum kerr backup_store(const struct rctx *x, const char *ns, const struct erd_spec *sp,
                              struct erd_target *t, const char **reason, char *why, size_t n,
                              struct kerr_info *err)
{
    const char *sec;
    enum kerr rc = get_opt(x, &EBS_RES_BACKUP, ns, sp->backup, &t->backup, err);

    snprintf(t->what, sizeof(t->what), "the copy of EtcdBackup %s/%s", ns, sp->backup);
    if (rc != KERR_OK)
        return rc;
    if (!t->backup)
        return snprintf(why, n, "EtcdBackup %s/%s not found", ns, sp->backup),
               *reason = "TargetNotFound", KERR_OK;
    t->etcd_name = kjson_get_str(t->backup, "spec.etcdName");
    t->store = (struct cpjob_store){ kjson_get_str(t->backup, "spec.destination.provider"),
                                     kjson_get_str(t->backup, "spec.destination.container"),
                                     kjson_get_str(t->backup, "spec.destination.prefix"),
                                     kjson_get_str(t->backup, "spec.destination.endpointOverride"),
                                     NULL,
                                     NULL };
    sec = str(t->backup, "spec.destination.secretRef.name");
    if (!*sec)
        return KERR_OK;
    rc = get_opt(x, &ETCDSPEC_RES_SECRET, ns, sec, &t->secret, err);
    if (rc == KERR_OK && !t->secret)
        return snprintf(why, n, "Secret %s/%s of %s not found", ns, sec, t->what),
               *reason = "TargetNotFound", KERR_OK;
    return rc;
}

enum kerr erd_target_read(const struct rctx *x, const cJSON *drill, const struct erd_spec *sp,
                          struct erd_target *t, const char **reason, char *why, size_t n,
                          struct kerr_info *err)
{
    const char *ns = str(drill, "metadata.namespace");
    struct cpjob_verify_spec vs = { .name = "check", .ns = ns, .owner = drill };
    struct kerr_info e = { 0 };
    cJSON *job = NULL;
    enum kerr rc;

    memset(t, 0, sizeof(*t));
    why[0] = '\0';
    rc = sp->etcd ? etcd_store(x, ns, sp, t, reason, why, n, err)
                  : backup_store(x, ns, sp, t, reason, why, n, err);
    if (rc != KERR_OK || *why)
        return rc;
    t->store.secret = t->secret;
    rc = erd_local_decide(x, ns, t, reason, why, n, err); /* the Local directory, judged once */
    if (rc != KERR_OK || *why)
        return rc;
    vs.store = t->store;
    /* the Job builder's own checks: provider, container, prefix, Secret */
    if (cpjob_build_verify(&vs, &job, &e) != KERR_OK) {
        snprintf(why, n, "%s: %s", t->what, e.msg);
        *reason = "InvalidTarget";
    }
    cJSON_Delete(job);
    return KERR_OK;
}

enum kerr erd_job_name(const char *drill, int64_t t, const char *req, char *out, size_t n)
{
    char suffix[32], hex[CRYPTO_SHA256_HEX_LEN + 1];

    if (req) {
        if (crypto_sha256_hex(req, strlen(req), hex, NULL) != KERR_OK)
            return KERR_INTERNAL;
        snprintf(suffix, sizeof(suffix), "-r%.8s", hex);
    } else {
        snprintf(suffix, sizeof(suffix), "-%" PRId64, t / 60);
    }
    return kname_join(drill, suffix, KNAME_LABEL_MAX, out, n);
}

/* "--flag=value" appended to args; 0 on NOMEM. */
static int arg(cJSON *args, const char *flag, const char *value)
{
    char buf[1200];
    cJSON *s;

    if (snprintf(buf, sizeof(buf), "--%s=%s", flag, value) >= (int)sizeof(buf))
        return 0;
    s = cJSON_CreateString(buf);
    if (!s || !cJSON_AddItemToArray(args, s)) {
        cJSON_Delete(s);
        return 0;
    }
    return 1;
}

/* The restore container's image: the drill's, the Etcd's sidecar's, the flag's. */
static const char *restore_image(const cJSON *drill, const struct erd_target *t,
                                 const struct erd_env *env)
{
    const char *img = kjson_get_str(drill, "spec.restore.image");

    if (!img || !*img)
        img = kjson_get_str(t->etcd, "spec.backup.image");
    return img && *img ? img : env->restore_image;
}

/* The init container "restore", made from the verify container ctr (BORROWED). */
static cJSON *restore_container(const cJSON *drill, const struct erd_target *t,
                                const struct erd_env *env, const cJSON *ctr)
{
    cJSON *c = cJSON_Duplicate(ctr, 1), *args = cJSON_CreateArray(), *cmd = cJSON_CreateArray();
    const char *kind = bstore_provider_kind(t->store.provider);
    int ok =
        c && args && cmd && kind && cJSON_AddItemToArray(cmd, cJSON_CreateString("/etcdbrctl"));

    ok = ok && cJSON_AddItemToArray(args, cJSON_CreateString("restore")) &&
         arg(args, "storage-provider", kind) && arg(args, "store-container", t->store.container) &&
         arg(args, "store-prefix", t->store.prefix) &&
         arg(args, "data-dir", ERD_RESTORE_DIR "/data") && arg(args, "name", "drill") &&
         arg(args, "initial-cluster", "drill=" RESTORE_PEER) &&
         arg(args, "initial-advertise-peer-urls", RESTORE_PEER) &&
         arg(args, "snapstore-temp-directory", ERD_RESTORE_DIR "/snapstore.tmp") &&
         /* removed by the restore when it ends: never the data's directory */
         arg(args, "restoration-temp-snapshots-dir", ERD_RESTORE_DIR "/restoration.tmp");
    ok = ok && !kjson_set_str(c, "name", ERD_RESTORE_CONTAINER, NULL) &&
         !kjson_set_str(c, "image", restore_image(drill, t, env), NULL) &&
         !kjson_set(c, "command", cmd, NULL) && (cmd = NULL, 1) &&
         !kjson_set(c, "args", args, NULL) && (args = NULL, 1);
    cJSON_Delete(cmd);
    cJSON_Delete(args);
    if (!ok) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

/* Restore mode on the verify Job: the init container, --restored-db, resources, the
 * emptyDir's size limit. */
static enum kerr add_restore(cJSON *job, const cJSON *drill, const struct erd_target *t,
                             const struct erd_env *env, struct kerr_info *err)
{
    cJSON *pod = (cJSON *)kjson_get(job, "spec.template.spec");
    cJSON *ctr = cJSON_GetArrayItem(kjson_get(pod, "containers"), 0), *init, *inits;
    const cJSON *res = kjson_get(drill, "spec.restore.resources");
    const char *limit = kjson_get_str(drill, "spec.restore.emptyDirSizeLimit");
    const cJSON *v;

    if (!ctr || !arg((cJSON *)kjson_get(ctr, "args"), "restored-db",
                     ERD_RESTORE_DIR "/data/member/snap/db"))
        return kerr_set(err, KERR_NOMEM, "building the drill's Job");
    if (res && (kjson_set(ctr, "resources", cJSON_Duplicate(res, 1), err) != KERR_OK))
        return KERR_NOMEM;
    init = restore_container(drill, t, env, ctr);
    inits = cJSON_CreateArray();
    if (!init || !inits || !cJSON_AddItemToArray(inits, init)) {
        cJSON_Delete(init);
        cJSON_Delete(inits);
        return kerr_set(err, KERR_NOMEM, "building the drill's Job");
    }
    if (kjson_set(pod, "initContainers", inits, err) != KERR_OK)
        return KERR_NOMEM;
    cJSON_ArrayForEach (v, kjson_get(pod, "volumes")) {
        const char *vn = kjson_get_str(v, "name");

        if (limit && *limit && vn && strcmp(vn, "work") == 0 &&
            kjson_set_str((cJSON *)v, "emptyDir.sizeLimit", limit, err) != KERR_OK)
            return KERR_NOMEM;
    }
    return KERR_OK;
}

enum kerr erd_job_build(const cJSON *drill, const struct erd_spec *sp, const struct erd_target *t,
                        const struct erd_env *env, const char *name, const char *when, cJSON **out,
                        struct kerr_info *err)
{
    struct cpjob_verify_spec vs = { .name = name,
                                    .ns = str(drill, "metadata.namespace"),
                                    .owner = drill,
                                    .store = t->store,
                                    .image = env->verify_image,
                                    .command = env->verify_command,
                                    .deadline_s = (long)sp->deadline_s };
    cJSON *job = NULL;
    enum kerr rc = cpjob_build_verify(&vs, &job, err);

    if (rc == KERR_OK && when)
        rc = kjson_set_str(job, "metadata.annotations[" ERD_ANN_SCHEDULED_AT "]", when, err);
    if (rc == KERR_OK && sp->restore)
        rc = add_restore(job, drill, t, env, err);
    if (rc != KERR_OK) {
        cJSON_Delete(job);
        return rc;
    }
    *out = job;
    return KERR_OK;
}

int64_t erd_time_at(const cJSON *obj, const char *path)
{
    struct timespec ts;

    if (ktime_parse(kjson_get_str(obj, path), &ts, NULL) != KERR_OK)
        return 0;
    return (int64_t)ts.tv_sec;
}
