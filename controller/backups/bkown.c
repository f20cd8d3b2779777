/* bkown - who owns a Local directory a Job of the controller is to read; see bkown.h. */
#include "controller/backups/bkown.h"

#include <stdio.h>
#include <string.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/lowner.h"
#include "controller/backups/ebs.h"
#include "controller/core/claims.h"
#include "controller/core/clocal.h"
#include "controller/core/etcdspec.h"

#define DIR_MAX (BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX)

static const struct k8s_resource res_bucket = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };
static const struct k8s_resource res_entry = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };

/* f->granted when a Local BackupBucket holding dir selects ns, f->forbidden when one with
 * spec.prefixScope Namespace gives dir to another namespace or to none (common/lowner). */
static enum kerr by_bucket(struct k8s_client *k, const char *ns, const char *dir,
                           struct lowner_found *f, struct kerr_info *err)
{
    struct lowner o;
    cJSON *list = NULL;
    const cJSON *b;
    enum kerr rc = k8s_list_all(k, &res_bucket, NULL, NULL, &list, err);

    lowner_init(&o, k, ns, dir);
    cJSON_ArrayForEach (b, kjson_get(list, "items")) {
        if (rc != KERR_OK || f->forbidden)
            break;
        rc = lowner_bucket(&o, b, err);
        if (rc == KERR_EXISTS || rc == KERR_FORBIDDEN) {
            f->granted |= rc == KERR_EXISTS;
            f->forbidden |= rc == KERR_FORBIDDEN;
            kerr_clear(err);
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

/* f->own_etcd when an Etcd of ns claims a directory holding dir (placed by its own Secret, read
 * now). */
static enum kerr by_etcd(struct k8s_client *k, const char *ns, const char *dir,
                         struct lowner_found *f, struct kerr_info *err)
{
    cJSON *list = NULL;
    const cJSON *e;
    enum kerr rc = k8s_list_all(k, &ETCDSPEC_RES_ETCD, ns, NULL, &list, err);

    if (rc == KERR_OK)
        clocal_place(k, cJSON_GetObjectItem(list, "items"), CLOCAL_ETCD);
    cJSON_ArrayForEach (e, kjson_get(list, "items"))
        f->own_etcd = f->own_etcd || (kjson_get_str(e, CLOCAL_DIR) &&
                                      lowner_inside(dir, kjson_get_str(e, CLOCAL_DIR)));
    cJSON_Delete(list);
    return rc;
}

/* What each BackupEntry of ns (spec.etcd.namespace) overlapping dir, or not placed, says of ns
 * owning it (common/lowner's lowner_entry, warden-webhook's rule at admission): f->own_entry
 * for one made after namespace ns was created whose directory holds dir, f->others for one
 * made before, or whose age cannot be told (an earlier namespace's, another owner, which
 * claims_find skips as the namespace's own). */
static enum kerr by_entry(struct k8s_client *k, const char *ns, const char *dir,
                          struct lowner_found *f, struct kerr_info *err)
{
    struct lowner o;
    cJSON *list = NULL;
    const cJSON *e;
    enum kerr rc = k8s_list_all(k, &res_entry, NULL, NULL, &list, err);

    lowner_init(&o, k, ns, dir);
    if (rc == KERR_OK)
        clocal_place(k, cJSON_GetObjectItem(list, "items"), CLOCAL_ENTRY);
    cJSON_ArrayForEach (e, kjson_get(list, "items")) {
        const char *edir = kjson_get_str(e, CLOCAL_DIR);

        if (rc != KERR_OK || f->others)
            break;
        if (!edir && !cJSON_IsTrue(kjson_get(e, CLOCAL_UNKNOWN)))
            continue; /* not a Local entry */
        rc = lowner_entry(&o, kjson_get_str(e, "spec.etcd.namespace"),
                          kjson_get_str(e, "spec.etcd.name"), kjson_get_str(e, "metadata.name"),
                          kjson_get_str(e, "metadata.creationTimestamp"), edir, f);
    }
    lowner_release(&o);
    cJSON_Delete(list);
    return rc;
}

/* f->others when a claim of another namespace overlaps dir (controller/core/claims, read now:
 * Etcds, BackupEntries, EtcdBackup copies, EtcdRestore targets; one whose directory cannot be
 * read is in the way): one directory, one cluster. */
static enum kerr by_others(struct k8s_client *k, const char *ns, const char *dir,
                           struct lowner_found *f, struct kerr_info *err)
{
    struct claims_skip skip = { .ns = ns, .viewer_ns = ns };
    struct bstore_claim c = { BLOCAL_KEY, (char *)dir };
    char why[CLAIMS_WHY_MAX];
    enum kerr rc = claims_find(k, NULL, &c, &skip, why, err);

    f->others = f->others || rc != KERR_OK || *why;
    return rc;
}

enum kerr bkown_local(struct k8s_client *k, const char *ns, const char *dir, const char *reader,
                      char *why, size_t n, struct kerr_info *err)
{
    struct lowner_found f = { 0 };
    enum kerr rc = by_bucket(k, ns, dir, &f, err);

    if (rc == KERR_OK && f.forbidden) {
        snprintf(why, n,
                 "namespace %s does not own the Local directory \"/%.300s\" (hostPath + \"/\" "
                 "+ container + \"/\" + prefix): a BackupBucket of provider Local partitions "
                 "the directory holding it by spec.prefixScope Namespace, and this part is not "
                 "the namespace's; %s only backups its namespace owns",
                 ns, dir, reader);
        return KERR_OK;
    }
    if (rc == KERR_OK && !f.granted)
        rc = by_copy(k, ns, dir, &f.granted, err);
    if (rc == KERR_OK && !f.granted)
        rc = by_etcd(k, ns, dir, &f, err);
    if (rc == KERR_OK && !f.granted)
        rc = by_entry(k, ns, dir, &f, err);
    if (rc == KERR_OK && !f.granted && (f.own_etcd || f.own_entry) && !f.others)
        rc = by_others(k, ns, dir, &f, err);
    why[0] = '\0';
    if (rc == KERR_OK && !lowner_owned(&f))
        snprintf(
            why, n,
            "namespace %s does not own the Local directory \"/%.300s\" (hostPath + \"/\" + "
            "container + \"/\" + prefix): no BackupBucket of provider Local selecting the "
            "namespace holds it, no EtcdBackup copy of the namespace was written there, and no "
            "Etcd or BackupEntry of the namespace (as it is now) claims it alone; "
            "%s only backups its namespace owns",
            ns, dir, reader);
    return rc;
}
