/* lowner - who owns a Local directory on the node; see lowner.h. */
#include "common/lowner.h"

#include <stdio.h>
#include <string.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/lsel.h"
#include "common/pborn.h"

#define DIR_MAX (BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX)

static const struct k8s_resource res_secret = { "", "v1", "secrets", 1 };
static const struct k8s_resource res_namespace = { "", "v1", "namespaces", 0 };
static const struct k8s_resource res_bucket = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };

void lowner_init(struct lowner *o, struct k8s_client *k, const char *ns, const char *dir)
{
    memset(o, 0, sizeof(*o));
    o->k = k;
    o->ns = ns;
    o->dir = dir;
}

void lowner_release(struct lowner *o)
{
    cJSON_Delete(o->labels);
    o->labels = NULL;
    o->labels_read = 0;
}

int lowner_owned(const struct lowner_found *f)
{
    return !f->forbidden && (f->granted || ((f->own_etcd || f->own_entry) && !f->others));
}

enum kerr lowner_entry(struct lowner *o, const char *entry_ns, const char *etcd, const char *entry,
                       const char *created, const char *edir, struct lowner_found *f)
{
    char why[PBORN_WHY_MAX];
    enum kerr rc;

    if (!entry_ns || strcmp(entry_ns, o->ns) != 0 ||
        (edir && !bstore_overlap(BLOCAL_KEY, o->dir, edir)))
        return KERR_OK;
    rc = pborn_check(o->k, o->ns, etcd ? etcd : "", entry ? entry : "", created, why, sizeof(why));
    if (rc != KERR_OK)
        return rc;
    if (*why)
        f->others = 1; /* an earlier namespace's (not placed: anywhere): another owner */
    else if (edir && lowner_inside(o->dir, edir))
        f->own_entry = 1;
    return KERR_OK;
}

int lowner_inside(const char *dir, const char *parent)
{
    size_t n = strlen(parent);

    return !*parent || (strncmp(dir, parent, n) == 0 && (dir[n] == '\0' || dir[n] == '/'));
}

enum kerr lowner_dir(struct k8s_client *k, const char *ns, const char *secret,
                     const char *container, const char *prefix, char *dir, size_t n, char *why,
                     size_t wn)
{
    char hostpath[BLOCAL_HOSTPATH_MAX + 1];
    struct kerr_info e = { 0 };
    cJSON *obj = NULL;
    enum kerr rc = KERR_OK;

    why[0] = '\0';
    if (secret && *secret)
        rc = k8s_get(k, &res_secret, ns, secret, NULL, &obj, &e);
    if (rc == KERR_NOMEM)
        return rc;
    if (rc != KERR_OK) {
        snprintf(why, wn,
                 "the backup Secret %s/%s, whose hostPath places a Local store on the node, "
                 "cannot be read: %s",
                 ns ? ns : "", secret, e.msg[0] ? e.msg : kerr_str(rc));
        return KERR_OK;
    }
    rc = blocal_hostpath(obj, hostpath, sizeof(hostpath), &e);
    cJSON_Delete(obj);
    if (rc == KERR_OK)
        rc = blocal_dir(hostpath, container, prefix, dir, n, &e);
    if (rc == KERR_NOMEM)
        return rc;
    if (rc != KERR_OK)
        snprintf(why, wn, "%s", e.msg[0] ? e.msg : kerr_str(rc));
    return KERR_OK;
}

int lowner_in_part(const char *dir, const char *parent, const char *ns)
{
    char owner[256];
    size_t n = strlen(parent);
    const char *rest;

    if (!lowner_inside(dir, parent) || strcmp(dir, parent) == 0)
        return 0;
    rest = *parent ? dir + n + 1 : dir;
    return bstore_prefix_owner(rest, owner, sizeof(owner)) && strcmp(owner, ns) == 0;
}

/* 1 when bucket b is of provider Local and partitions its directory (spec.prefixScope
 * Namespace, or one not understood: as tightly as can be). */
static int partitioned(const cJSON *b)
{
    const char *kind = bstore_provider_kind(kjson_get_str(b, "spec.provider"));
    const cJSON *sc = kjson_get(b, "spec.prefixScope");
    const char *scope = kjson_get_str(b, "spec.prefixScope");

    if (!kind || strcmp(kind, "Local") != 0 || !sc || cJSON_IsNull(sc))
        return 0;
    return !scope || strcmp(scope, "Bucket") != 0;
}

/* The directory of Local bucket b into bdir (n bytes), 1 when placed; why (wn) otherwise. */
static enum kerr bucket_dir(struct lowner *o, const cJSON *b, char *bdir, size_t n, char *why,
                            size_t wn, int *placed)
{
    enum kerr rc;

    *placed = 0;
    if (!kjson_get_str(b, "spec.container") || !kjson_get_str(b, "spec.secretRef.namespace") ||
        !kjson_get_str(b, "spec.secretRef.name")) {
        snprintf(why, wn, "it names no container or no Secret");
        return KERR_OK;
    }
    rc = lowner_dir(o->k, kjson_get_str(b, "spec.secretRef.namespace"),
                    kjson_get_str(b, "spec.secretRef.name"), kjson_get_str(b, "spec.container"), "",
                    bdir, n, why, wn);
    *placed = rc == KERR_OK && !*why;
    return rc;
}

enum kerr lowner_part(struct lowner *o, const cJSON *b, char *why, size_t n)
{
    const char *name = kjson_get_str(b, "metadata.name") ? kjson_get_str(b, "metadata.name") : "";
    const char *scope = kjson_get_str(b, "spec.prefixScope");
    /* a prefixScope not understood partitions as tightly as can be: nobody's */
    int by_ns = scope && strcmp(scope, BSTORE_SCOPE_NAMESPACE) == 0;
    char bdir[DIR_MAX], bwhy[512];
    int placed;
    enum kerr rc;

    why[0] = '\0';
    if (!partitioned(b))
        return KERR_OK;
    if ((rc = bucket_dir(o, b, bdir, sizeof(bdir), bwhy, sizeof(bwhy), &placed)) != KERR_OK)
        return rc;
    if (!placed) {
        snprintf(why, n,
                 "BackupBucket %s of provider Local partitions its directory among the "
                 "namespaces (spec.prefixScope), and that directory cannot be placed (%.300s): "
                 "no Local directory is any namespace's until its owner fixes it",
                 name, bwhy);
        return KERR_OK;
    }
    if (!bstore_overlap(BLOCAL_KEY, o->dir, bdir) || (by_ns && lowner_in_part(o->dir, bdir, o->ns)))
        return KERR_OK;
    if (!by_ns)
        snprintf(why, n,
                 "the Local directory \"/%.300s\" is in BackupBucket %s's directory "
                 "\"/%.300s\", whose spec.prefixScope \"%.64s\" is neither Bucket nor "
                 "Namespace: no namespace may have a directory there until its owner fixes it",
                 o->dir, name, bdir, scope ? scope : "(not a string)");
    else
        snprintf(why, n,
                 "the Local directory \"/%.300s\" is not namespace %s's: BackupBucket %s of "
                 "provider Local (directory \"/%.300s\") has spec.prefixScope Namespace, under "
                 "which a namespace has only the directories below the bucket's whose path there "
                 "starts with its own name or its name, \"--\" and a word without \"--\", "
                 "followed by \"/\" and more (%s/etcd-main, or %s--<id>/etcd-main)",
                 o->dir, o->ns, name, bdir, o->ns, o->ns);
    return KERR_OK;
}

enum kerr lowner_part_in(struct lowner *o, const cJSON *buckets, char *why, size_t n)
{
    const cJSON *b;
    enum kerr rc = KERR_OK;

    why[0] = '\0';
    cJSON_ArrayForEach (b, buckets) {
        if ((rc = lowner_part(o, b, why, n)) != KERR_OK || *why)
            break;
    }
    return rc;
}

enum kerr lowner_part_now(struct k8s_client *k, const char *ns, const char *dir, const char *writer,
                          char *why, size_t n, struct kerr_info *err)
{
    char w[1024];
    struct lowner o;
    cJSON *list = NULL;
    enum kerr rc = k8s_list_all(k, &res_bucket, NULL, NULL, &list, err);

    why[0] = '\0';
    if (rc == KERR_NOTFOUND) { /* BackupBucket's CRD not installed: no bucket partitions */
        kerr_clear(err);
        rc = KERR_OK;
    }
    if (rc != KERR_OK)
        return rc;
    lowner_init(&o, k, ns, dir);
    rc = lowner_part_in(&o, kjson_get(list, "items"), w, sizeof(w));
    lowner_release(&o);
    cJSON_Delete(list);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "placing the BackupBuckets' directories");
    if (*w)
        snprintf(why, n, "%s; %s only into its namespace's part", w, writer);
    return KERR_OK;
}

enum kerr lowner_unmountable(struct lowner *o, const cJSON *b, const char *other, int *yes)
{
    const char *scope = kjson_get_str(b, "spec.prefixScope");
    char bdir[DIR_MAX], bwhy[512];
    int placed;
    enum kerr rc;

    *yes = 0;
    if (!partitioned(b) || !scope || strcmp(scope, BSTORE_SCOPE_NAMESPACE) != 0)
        return KERR_OK;
    if ((rc = bucket_dir(o, b, bdir, sizeof(bdir), bwhy, sizeof(bwhy), &placed)) != KERR_OK)
        return rc;
    *yes = placed && lowner_in_part(o->dir, bdir, o->ns) && lowner_inside(bdir, other);
    return KERR_OK;
}

/* The namespace's labels into o, once. */
static enum kerr read_labels(struct lowner *o, struct kerr_info *err)
{
    cJSON *nsobj = NULL;
    enum kerr rc;

    if (o->labels_read)
        return KERR_OK;
    rc = k8s_get(o->k, &res_namespace, NULL, o->ns, NULL, &nsobj, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    if (rc != KERR_OK)
        return rc;
    o->labels = cJSON_Duplicate(kjson_get(nsobj, "metadata.labels"), 1);
    cJSON_Delete(nsobj);
    o->labels_read = 1;
    return KERR_OK;
}

enum kerr lowner_bucket(struct lowner *o, const cJSON *b, struct kerr_info *err)
{
    const char *kind = bstore_provider_kind(kjson_get_str(b, "spec.provider"));
    const cJSON *sel = kjson_get(b, "spec.namespaceSelector");
    char bdir[DIR_MAX], why[KERR_MSG_LEN];
    int match = 0, placed;
    enum kerr rc;

    if (!kind || strcmp(kind, "Local") != 0)
        return KERR_OK;
    if ((rc = lowner_part(o, b, why, sizeof(why))) != KERR_OK)
        return kerr_set(err, rc, "placing a BackupBucket's directory");
    if (*why) /* its partition keeps dir from the namespace, whoever else grants it */
        return kerr_set(err, KERR_FORBIDDEN, "%s", why);
    rc = bucket_dir(o, b, bdir, sizeof(bdir), why, sizeof(why), &placed);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "placing a BackupBucket's directory");
    if (!placed || !lowner_inside(o->dir, bdir)) /* a bucket not placed grants nothing */
        return KERR_OK;
    if (!sel || cJSON_IsNull(sel))
        return KERR_EXISTS; /* no selector: every namespace, as for claims */
    if ((rc = read_labels(o, err)) != KERR_OK)
        return rc;
    /* a selector that cannot be read selects nobody */
    return lsel_match(sel, o->labels, &match, NULL) == KERR_OK && match ? KERR_EXISTS : KERR_OK;
}
