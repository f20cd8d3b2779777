/* erd_local - a restore drill's Local target: its directory decided once, and who owns it;
 * see erd_int.h. */
#include "controller/backups/erd_int.h"

#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/lowner.h"
#include "controller/backups/ebs.h"
#include "controller/core/rctx.h"

#define DIR_MAX (BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX)

static const struct k8s_resource res_bucket = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };

/* *owned 1 when a Local BackupBucket holding dir selects ns. */
static enum kerr by_bucket(struct k8s_client *k, const char *ns, const char *dir, int *owned,
                           struct kerr_info *err)
{
    struct lowner o;
    cJSON *list = NULL;
    const cJSON *b;
    enum kerr rc = k8s_list_all(k, &res_bucket, NULL, NULL, &list, err);

    lowner_init(&o, k, ns, dir);
    cJSON_ArrayForEach (b, kjson_get(list, "items")) {
        if (rc != KERR_OK || *owned)
            break;
        rc = lowner_bucket(&o, b, err);
        if (rc == KERR_EXISTS) {
            *owned = 1;
            rc = KERR_OK;
        }
    }
    lowner_release(&o);
    cJSON_Delete(list);
    return rc;
}

/* *owned 1 when an EtcdBackup of ns recorded a Local copy whose directory holds dir. */
static enum kerr by_copy(struct k8s_client *k, const char *ns, const char *dir, int *owned,
                         struct kerr_info *err)
{
    cJSON *list = NULL;
    const cJSON *b;
    char cdir[DIR_MAX];
    enum kerr rc = k8s_list_all(k, &EBS_RES_BACKUP, ns, NULL, &list, err);

    cJSON_ArrayForEach (b, kjson_get(list, "items")) {
        const cJSON *d = kjson_get(b, "status.destination");
        const char *kind = bstore_provider_kind(kjson_get_str(d, "provider"));

        if (rc != KERR_OK || *owned)
            break;
        if (kind && strcmp(kind, "Local") == 0 && kjson_get_str(d, "hostPath") &&
            blocal_dir(kjson_get_str(d, "hostPath"), kjson_get_str(d, "container"),
                       kjson_get_str(d, "prefix") ? kjson_get_str(d, "prefix") : "", cdir,
                       sizeof(cdir), NULL) == KERR_OK)
            *owned = lowner_inside(dir, cdir);
    }
    cJSON_Delete(list);
    return rc;
}

enum kerr erd_local_owned(struct k8s_client *k, const char *ns, const char *dir, char *why,
                          size_t n, struct kerr_info *err)
{
    int owned = 0;
    enum kerr rc = by_bucket(k, ns, dir, &owned, err);

    if (rc == KERR_OK && !owned)
        rc = by_copy(k, ns, dir, &owned, err);
    why[0] = '\0';
    if (rc == KERR_OK && !owned)
        snprintf(why, n,
                 "namespace %s does not own the Local directory \"/%.300s\" (hostPath + \"/\" + "
                 "container + \"/\" + prefix): no BackupBucket of provider Local selecting the "
                 "namespace holds it, and no EtcdBackup copy of the namespace was written there; "
                 "a drill reads only backups its namespace owns",
                 ns, dir);
    return rc;
}

/* An EtcdBackup copy's directory as recorded when its copy Job was made, into t. */
static int recorded_copy(struct erd_target *t, char *why, size_t n)
{
    const cJSON *d = kjson_get(t->backup, "status.destination");
    const char *hp = kjson_get_str(d, "hostPath");

    if (!hp || !kjson_get_str(d, "container")) {
        snprintf(why, n,
                 "%s has no copy recorded (status.destination.hostPath): a Local copy is drilled "
                 "where its copy Job wrote it, once it is made",
                 t->what);
        return 0;
    }
    if (snprintf(t->host_path, sizeof(t->host_path), "%s", hp) >= (int)sizeof(t->host_path)) {
        snprintf(why, n, "%s: the recorded hostPath is too long", t->what);
        return 0;
    }
    t->store.container = kjson_get_str(d, "container");
    t->store.prefix = kjson_get_str(d, "prefix") ? kjson_get_str(d, "prefix") : "";
    return 1;
}

enum kerr erd_local_decide(const struct rctx *x, const char *ns, struct erd_target *t,
                           const char **reason, char *why, size_t n, struct kerr_info *err)
{
    const char *kind = bstore_provider_kind(t->store.provider);
    struct kerr_info e = { 0 };
    char dir[DIR_MAX];
    enum kerr rc;

    why[0] = '\0';
    if (!kind || strcmp(kind, "Local") != 0)
        return KERR_OK;
    if (t->backup && !recorded_copy(t, why, n))
        return *reason = "TargetNotFound", KERR_OK;
    if (!t->backup && blocal_hostpath(t->secret, t->host_path, sizeof(t->host_path), &e) != KERR_OK)
        return snprintf(why, n, "%s: %s", t->what, e.msg), *reason = "InvalidTarget", KERR_OK;
    if (blocal_dir(t->host_path, t->store.container, t->store.prefix ? t->store.prefix : "", dir,
                   sizeof(dir), &e) != KERR_OK)
        return snprintf(why, n, "%s: %s", t->what, e.msg), *reason = "InvalidTarget", KERR_OK;
    t->store.host_path = t->host_path; /* the Job mounts what was judged, never read again */
    rc = erd_local_owned(x->client, ns, dir, why, n, err);
    if (rc != KERR_OK)
        return kerr_wrap(err, "deciding who owns the Local directory of %s", t->what);
    if (*why)
        *reason = "TargetNotOwned";
    return KERR_OK;
}
