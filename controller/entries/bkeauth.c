/* bkeauth - the bucket owner's authority over claims; see bkeauth.h. */
#include "controller/entries/bkeauth.h"

#include <stdio.h>
#include <string.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/lowner.h"
#include "common/lsel.h"
#include "common/pborn.h"
#include "controller/core/etcdspec.h"
#include "common/bcred.h"

#define DIR_MAX (BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX)

const struct k8s_resource BKEAUTH_RES_NAMESPACE = { "", "v1", "namespaces", 0 };

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

/*
 * Does b's selector select namespace ns? *sel 1 or 0; *gone 1 when the namespace does not
 * exist (*sel 0 then). No selector: 1 without a read.
 */
static enum kerr selected(const struct bke_ctx *x, const struct bke_bucket *b, const char *ns,
                          int *sel, int *gone, struct kerr_info *err)
{
    const cJSON *s = kjson_get(b->obj, "spec.namespaceSelector");
    cJSON *obj = NULL;
    enum kerr rc;

    *sel = 1;
    *gone = 0;
    if (!s || cJSON_IsNull(s))
        return KERR_OK;
    *sel = 0;
    rc = k8s_get(x->client, &BKEAUTH_RES_NAMESPACE, NULL, ns, NULL, &obj, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        *gone = 1;
        return KERR_OK;
    }
    if (rc == KERR_OK)
        rc = lsel_match(s, kjson_get(obj, "metadata.labels"), sel, err);
    cJSON_Delete(obj);
    return rc;
}

/*
 * 0 when b (an object store: a Local one is local_part's) partitions its store's prefixes by
 * namespace (spec.prefixScope Namespace) and etcd's canonical prefix is not namespace ns's part
 * (bstore_prefix_owner), or cannot be told; else 1.
 */
static int in_its_part(const struct bke_bucket *b, const cJSON *etcd, const char *ns)
{
    const char *scope = kjson_get_str(b->obj, "spec.prefixScope");
    char owner[256];
    struct bstore_claim c;
    int ok;

    if (!scope || strcmp(scope, BSTORE_SCOPE_NAMESPACE) != 0)
        return 1;
    if (bstore_claim_init(&c, kjson_get_str(etcd, "spec.backup.store.provider"),
                          kjson_get_str(etcd, "spec.backup.store.container"),
                          kjson_get_str(etcd, "spec.backup.store.endpointOverride"),
                          kjson_get_str(etcd, "spec.backup.store.prefix"), NULL) != KERR_OK)
        return 0; /* fail closed: no entry on a guess */
    ok = bstore_prefix_owner(c.prefix, owner, sizeof(owner)) && strcmp(owner, ns) == 0;
    bstore_claim_release(&c);
    return ok;
}

/* The directory of Local etcd (placed by its backup Secret, read now) into dir (n); why. */
static enum kerr etcd_dir(const struct bke_ctx *x, const cJSON *etcd, const char *ns, char *dir,
                          size_t n, char *why, size_t wn)
{
    return lowner_dir(x->client, ns, kjson_get_str(etcd, "spec.backup.store.secretRef.name"),
                      str_or_empty(etcd, "spec.backup.store.container"),
                      str_or_empty(etcd, "spec.backup.store.prefix"), dir, n, why, wn);
}

/* The directory of Local bucket b (placed by its Secret, read now) into dir (n); why. */
static enum kerr bucket_dir(const struct bke_ctx *x, const struct bke_bucket *b, char *dir,
                            size_t n, char *why, size_t wn)
{
    return lowner_dir(x->client, str_or_empty(b->obj, "spec.secretRef.namespace"),
                      str_or_empty(b->obj, "spec.secretRef.name"), b->container, "", dir, n, why,
                      wn);
}

/*
 * Why the directory of Local etcd is not namespace ns's part of b (spec.prefixScope Namespace),
 * into why (n bytes; "" when it is, or b is not partitioned): the directory placed by the
 * hostPath of the Etcd's backup Secret read now (common/lowner's lowner_dir) and judged by
 * lowner_part, as warden-webhook admits it (webhook/plocal); and, since the entry's deletion
 * empties that path below the bucket's directory, only a directory strictly below the bucket's
 * (lowner_in_part). A directory that cannot be placed (the Secret unreadable, its hostPath not
 * understood), or a bucket whose own cannot: why says so (fail closed, no entry). KERR_NOMEM only.
 */
static enum kerr local_part(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *etcd,
                            const char *ns, char *why, size_t n)
{
    const char *scope = kjson_get_str(b->obj, "spec.prefixScope");
    char dir[DIR_MAX], bdir[DIR_MAX], dwhy[512];
    struct lowner o;
    enum kerr rc;

    why[0] = '\0';
    if (!scope || strcmp(scope, BSTORE_SCOPE_NAMESPACE) != 0)
        return KERR_OK;
    if ((rc = etcd_dir(x, etcd, ns, dir, sizeof(dir), dwhy, sizeof(dwhy))) != KERR_OK)
        return rc;
    if (!*dwhy && (rc = bucket_dir(x, b, bdir, sizeof(bdir), dwhy, sizeof(dwhy))) != KERR_OK)
        return rc;
    if (*dwhy) {
        snprintf(why, n,
                 "its Local directory cannot be placed in BackupBucket %s's (%.400s): the bucket "
                 "has spec.prefixScope Namespace and it gets no BackupEntry there until it can be "
                 "told to be namespace %s's part",
                 b->name, dwhy, ns);
        return KERR_OK;
    }
    lowner_init(&o, x->client, ns, dir);
    rc = lowner_part(&o, b->obj, why, n);
    lowner_release(&o);
    if (rc == KERR_OK && !*why && !lowner_in_part(dir, bdir, ns))
        snprintf(why, n,
                 "the Local directory \"/%.300s\" is not below BackupBucket %s's directory "
                 "\"/%.300s\" (its backup Secret's hostPath is not the bucket's): it gets no "
                 "BackupEntry there",
                 dir, b->name, bdir);
    return rc;
}

/*
 * Why etcd, whose backup Secret is esecret (as stored), does not hold b's credentials
 * (common/bcred), into why (n): b's Secret as this reconcile read it, else read
 * now from the API server; one that does not exist lets no Etcd have an entry (fail closed).
 * Errors of the read returned.
 */
static enum kerr holds_bucket_creds(const struct bke_ctx *x, const struct bke_bucket *b,
                                    const cJSON *etcd, const cJSON *esecret, char *why, size_t n,
                                    struct kerr_info *err)
{
    const char *sns = kjson_get_str(b->obj, "spec.secretRef.namespace");
    const char *sname = kjson_get_str(b->obj, "spec.secretRef.name");
    cJSON *bsecret = NULL;
    enum kerr rc;

    if (!sns || !sname) {
        snprintf(why, n,
                 "BackupBucket %s names no Secret (spec.secretRef): its credentials cannot be "
                 "compared, and no Etcd gets a BackupEntry there",
                 b->name);
        return KERR_OK;
    }
    if (b->secret) /* read once this reconcile (bke_run) */
        return bcred_holds(b->obj, b->secret, etcd, esecret, why, n, err);
    rc = k8s_get(x->client, &ETCDSPEC_RES_SECRET, sns, sname, NULL, &bsecret, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        snprintf(why, n,
                 "BackupBucket %s's Secret does not exist: its credentials cannot be compared, "
                 "and no Etcd gets a BackupEntry there until it does",
                 b->name);
        return KERR_OK;
    }
    if (rc == KERR_OK)
        rc = bcred_holds(b->obj, bsecret, etcd, esecret, why, n, err);
    cJSON_Delete(bsecret);
    return rc;
}

enum kerr bkeauth_etcd(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *etcd,
                       char *why, size_t n, struct kerr_info *err)
{
    const char *ns = str_or_empty(etcd, "metadata.namespace");
    const char *secret = kjson_get_str(etcd, "spec.backup.store.secretRef.name");
    cJSON *obj = NULL;
    int sel, gone;
    enum kerr rc = selected(x, b, ns, &sel, &gone, err);

    why[0] = '\0';
    if (rc != KERR_OK)
        return rc;
    if (!sel) {
        snprintf(why, n,
                 "namespace %s is not selected by spec.namespaceSelector of BackupBucket %s: "
                 "its Etcds get no BackupEntry there (the bucket's owner decides which "
                 "namespaces may claim prefixes of its store)",
                 ns, b->name);
        return KERR_OK;
    }
    if (strcmp(b->kind, "Local") == 0) {
        rc = local_part(x, b, etcd, ns, why, n);
        return rc == KERR_NOMEM ? kerr_set(err, rc, "the Local directory's part") : KERR_OK;
    }
    if (!in_its_part(b, etcd, ns)) {
        snprintf(why, n,
                 "prefix \"%.256s\" is not namespace %s's: BackupBucket %s has "
                 "spec.prefixScope Namespace (a prefix is the namespace's its first segment "
                 "names), so it gets no BackupEntry there; move it to %s/... or %s--<id>/...",
                 str_or_empty(etcd, "spec.backup.store.prefix"), ns, b->name, ns, ns);
        return KERR_OK;
    }
    if (!secret || !*secret) {
        snprintf(why, n,
                 "spec.backup.store.secretRef names no Secret: without credentials its backup "
                 "sidecar writes nothing, and it gets no BackupEntry in bucket %s",
                 b->name);
        return KERR_OK;
    }
    rc = k8s_get(x->client, &ETCDSPEC_RES_SECRET, ns, secret, NULL, &obj, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        snprintf(why, n,
                 "its backup Secret %s/%s does not exist: without credentials its backup "
                 "sidecar writes nothing, and it gets no BackupEntry in bucket %s until it does",
                 ns, secret, b->name);
        return KERR_OK;
    }
    if (rc == KERR_OK)
        rc = holds_bucket_creds(x, b, etcd, obj, why, n, err);
    cJSON_Delete(obj);
    return rc;
}

enum kerr bkeauth_entry(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *entry,
                        char *why, size_t n, struct kerr_info *err)
{
    const char *ns = str_or_empty(entry, "spec.etcd.namespace");
    int sel, gone;
    enum kerr rc = selected(x, b, ns, &sel, &gone, err);

    why[0] = '\0';
    if (rc == KERR_OK && !sel && !gone)
        snprintf(why, n,
                 "deletion of prefix \"%s\" refused: namespace %s is not selected by "
                 "spec.namespaceSelector of BackupBucket %s any more",
                 str_or_empty(entry, "spec.prefix"), ns, b->name);
    return rc;
}

int bkeauth_may_reattach(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *entry,
                         const cJSON *etcd)
{
    struct kerr_info err;
    char why[512];

    if (strcmp(str_or_empty(entry, "spec.etcd.uid"), str_or_empty(etcd, "metadata.uid")) == 0)
        return 1;
    return bkeauth_etcd(x, b, etcd, why, sizeof(why), &err) == KERR_OK && !*why;
}

enum kerr bkeauth_reborn(const struct bke_ctx *x, const cJSON *entry, const cJSON *etcd, char *why,
                         size_t n)
{
    why[0] = '\0';
    if (strcmp(str_or_empty(entry, "spec.etcd.uid"), str_or_empty(etcd, "metadata.uid")) == 0)
        return KERR_OK; /* the entry's own Etcd, not one created again */
    return pborn_check(x->client, str_or_empty(etcd, "metadata.namespace"),
                       str_or_empty(etcd, "metadata.name"), str_or_empty(entry, "metadata.name"),
                       kjson_get_str(entry, "metadata.creationTimestamp"), why, n);
}
