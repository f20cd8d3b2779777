/* claims - who else owns backups a step would touch; see claims.h. */
#include "controller/core/claims.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/blocal.h"
#include "common/kjson.h"
#include "common/pclaim.h"
#include "common/rtarget.h"
#include "controller/core/clocal.h"
#include "controller/core/etcdspec.h"

static const struct k8s_resource res_entry = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };
static const struct k8s_resource res_backup = { "etcd-warden.io", "v1alpha1", "etcdbackups", 1 };
static const struct k8s_resource res_restore = { "etcd-warden.io", "v1alpha1", "etcdrestores", 1 };

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

static int eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

enum kerr claims_of(const cJSON *obj, const char *base, const char *prefix_path,
                    struct bstore_claim *c, struct kerr_info *err)
{
    const cJSON *s = kjson_get(obj, base);

    memset(c, 0, sizeof(*c));
    if (!cJSON_IsObject(s))
        return kerr_set(err, KERR_INVAL, "no %s", base);
    return bstore_claim_init(
        c, kjson_get_str(s, "provider"), kjson_get_str(s, "container"),
        kjson_get_str(s, "endpointOverride"),
        prefix_path ? kjson_get_str(obj, prefix_path) : kjson_get_str(s, "prefix"), err);
}

/* What one LIST is searched for. */
struct search {
    const struct bstore_claim *c;
    const struct claims_skip *skip;
    char *why;
    char owner_ns[256]; /* the namespace of the claim found */
};

/* The found claim's description, unless skip->viewer_ns may not see it (another namespace's). */
static void redact(struct search *s)
{
    if (*s->why && s->skip->viewer_ns && strcmp(s->skip->viewer_ns, s->owner_ns) != 0)
        snprintf(s->why, CLAIMS_WHY_MAX, "a prefix claimed from another namespace");
}

/* 1 when obj's claim at base overlaps the searched one. */
static int overlaps(const struct search *s, const cJSON *obj, const char *base,
                    const char *prefix_path, char *prefix, size_t n)
{
    const cJSON *st = kjson_get(obj, base);
    struct bstore_claim o;
    int r;

    if (!cJSON_IsObject(st))
        return 0;
    /* a Local claim placed on the node when the step runs (controller/core/clocal) */
    if (strcmp(s->c->key, BLOCAL_KEY) == 0 && kjson_has(obj, CLOCAL_UNKNOWN)) {
        snprintf(prefix, n, "(none: its directory on the node cannot be read)");
        return 1;
    }
    if (strcmp(s->c->key, BLOCAL_KEY) == 0 && kjson_get_str(obj, CLOCAL_DIR)) {
        snprintf(prefix, n, "%s", kjson_get_str(obj, CLOCAL_DIR));
        return bstore_overlap(BLOCAL_KEY, s->c->prefix, kjson_get_str(obj, CLOCAL_DIR));
    }
    if (claims_of(obj, base, prefix_path, &o, NULL) != KERR_OK) {
        /* fail closed: a store not understood may be this one, and its prefix anything */
        snprintf(prefix, n, "(none: its store is not understood)");
        return bstore_unkeyed_overlap(s->c->key, kjson_get_str(st, "container"));
    }
    r = bstore_claims_overlap(s->c, &o);
    snprintf(prefix, n, "%s", o.prefix);
    bstore_claim_release(&o);
    return r;
}

static void search_etcds(struct search *s, const cJSON *items)
{
    const cJSON *e;
    char p[256];

    cJSON_ArrayForEach (e, items) {
        if ((eq(kjson_get_str(e, "metadata.namespace"), s->skip->etcd_ns) &&
             eq(kjson_get_str(e, "metadata.name"), s->skip->etcd_name)) ||
            eq(kjson_get_str(e, "metadata.namespace"), s->skip->ns))
            continue;
        if (overlaps(s, e, "spec.backup.store", NULL, p, sizeof(p))) {
            snprintf(s->why, CLAIMS_WHY_MAX, "the prefix \"%s\" of Etcd %s/%s", p,
                     str_or_empty(e, "metadata.namespace"), str_or_empty(e, "metadata.name"));
            snprintf(s->owner_ns, sizeof(s->owner_ns), "%s", str_or_empty(e, "metadata.namespace"));
            return;
        }
    }
}

static void search_entries(struct search *s, const cJSON *items)
{
    const cJSON *e;
    char p[256];

    cJSON_ArrayForEach (e, items) {
        if (eq(kjson_get_str(e, "metadata.name"), s->skip->entry) ||
            eq(kjson_get_str(e, "spec.etcd.namespace"), s->skip->ns))
            continue;
        /* a retained copy's entry holds copies of its Etcd, whose further copies may share it */
        if (kjson_get_str(e, "metadata.annotations[" BSTORE_RETAINED_COPY_ANNOTATION "]") &&
            s->skip->backups_of &&
            eq(kjson_get_str(e, "spec.etcd.namespace"), s->skip->backup_ns) &&
            eq(kjson_get_str(e, "spec.etcd.name"), s->skip->backups_of))
            continue;
        /* the Etcd's own entry of the same prefix is its own; one of an earlier, other
         * prefix still holds snapshots its sidecar would list */
        if (overlaps(s, e, "spec.store", "spec.prefix", p, sizeof(p)) &&
            !(eq(kjson_get_str(e, "spec.etcd.namespace"), s->skip->etcd_ns) &&
              eq(kjson_get_str(e, "spec.etcd.name"), s->skip->etcd_name) &&
              strcmp(p, s->c->prefix) == 0)) {
            snprintf(s->why, CLAIMS_WHY_MAX, "the prefix \"%s\" of BackupEntry %s of Etcd %s/%s", p,
                     str_or_empty(e, "metadata.name"), str_or_empty(e, "spec.etcd.namespace"),
                     str_or_empty(e, "spec.etcd.name"));
            snprintf(s->owner_ns, sizeof(s->owner_ns), "%s",
                     str_or_empty(e, "spec.etcd.namespace"));
            return;
        }
    }
}

static void search_backups(struct search *s, const cJSON *items)
{
    const cJSON *b;
    const char *ns;
    char p[256];

    cJSON_ArrayForEach (b, items) {
        ns = kjson_get_str(b, "metadata.namespace");
        if ((eq(ns, s->skip->backup_ns) &&
             eq(kjson_get_str(b, "metadata.name"), s->skip->backup)) ||
            (eq(ns, s->skip->backup_ns) &&
             eq(kjson_get_str(b, "spec.etcdName"), s->skip->backups_of)) ||
            eq(ns, s->skip->ns))
            continue;
        /* a copy claims its prefix once it is being written (status.destination), never
         * before: an EtcdBackup that failed before its copy claims nothing */
        if (kjson_has(b, "status.destination") &&
            overlaps(s, b, "status.destination", NULL, p, sizeof(p))) {
            snprintf(s->why, CLAIMS_WHY_MAX, "the prefix \"%s\" of the copies of EtcdBackup %s/%s",
                     p, str_or_empty(b, "metadata.namespace"), str_or_empty(b, "metadata.name"));
            snprintf(s->owner_ns, sizeof(s->owner_ns), "%s", str_or_empty(b, "metadata.namespace"));
            return;
        }
    }
}

/* 1 when the target of r (an EtcdRestore) overlaps the searched claim: its container and
 * prefix in the store warden-webhook resolved at admission (common/rtarget's rule, its sources
 * found in etcds and backups); a target no rule tells, or whose store is not understood,
 * overlaps every claim of its container (fail closed). */
static int target_overlaps(const struct search *s, const cJSON *r, const cJSON *etcds,
                           const cJSON *backups, char *prefix, size_t n)
{
    const cJSON *st = kjson_get_obj(r, "spec.target.store");
    struct rtarget t;
    struct bstore_claim o;
    int res;

    if (!st)
        return 0;
    /* a Local target placed on the node when the step runs (controller/core/clocal) */
    if (strcmp(s->c->key, BLOCAL_KEY) == 0 && kjson_has(r, CLOCAL_UNKNOWN)) {
        snprintf(prefix, n, "(none: its directory on the node cannot be read)");
        return 1;
    }
    if (strcmp(s->c->key, BLOCAL_KEY) == 0 && kjson_get_str(r, CLOCAL_DIR)) {
        snprintf(prefix, n, "%s", kjson_get_str(r, CLOCAL_DIR));
        return bstore_overlap(BLOCAL_KEY, s->c->prefix, kjson_get_str(r, CLOCAL_DIR));
    }
    if (rtarget_resolve_in(r, etcds, backups, &t) == RTARGET_UNKNOWN ||
        bstore_claim_init(&o, t.provider, kjson_get_str(st, "container"), t.endpoint,
                          kjson_get_str(st, "prefix"), NULL) != KERR_OK) {
        snprintf(prefix, n, "(none: its store is not understood)");
        return bstore_unkeyed_overlap(s->c->key, kjson_get_str(st, "container"));
    }
    res = bstore_claims_overlap(s->c, &o);
    snprintf(prefix, n, "%s", o.prefix);
    bstore_claim_release(&o);
    return res;
}

/* An EtcdRestore's target claims from its admission until Completed (its Etcd claims it then),
 * and Failed after its copy started (common/rtarget's rtarget_claims), in the store its
 * admission resolved (target_overlaps). The restore creating skip's Etcd is its own, and
 * skip's restore. */
static void search_restores(struct search *s, const cJSON *items, const cJSON *etcds,
                            const cJSON *backups)
{
    const cJSON *r;
    const char *phase;
    char p[256];

    cJSON_ArrayForEach (r, items) {
        if (!rtarget_claims(r) ||
            (eq(kjson_get_str(r, "metadata.namespace"), s->skip->etcd_ns) &&
             eq(kjson_get_str(r, "spec.target.etcdName"), s->skip->etcd_name)) ||
            (eq(kjson_get_str(r, "metadata.namespace"), s->skip->restore_ns) &&
             eq(kjson_get_str(r, "metadata.name"), s->skip->restore)) ||
            eq(kjson_get_str(r, "metadata.namespace"), s->skip->ns))
            continue;
        if (target_overlaps(s, r, etcds, backups, p, sizeof(p))) {
            phase = kjson_get_str(r, "status.phase");
            snprintf(s->why, CLAIMS_WHY_MAX, "the target prefix \"%s\" of EtcdRestore %s/%s, %s", p,
                     str_or_empty(r, "metadata.namespace"), str_or_empty(r, "metadata.name"),
                     phase && strcmp(phase, "Failed") == 0
                         ? "which failed after its copy started (what it copied may be there)"
                         : "in flight");
            snprintf(s->owner_ns, sizeof(s->owner_ns), "%s", str_or_empty(r, "metadata.namespace"));
            return;
        }
    }
}

/* An EtcdRestore reads its source store (spec.source.store) until it is Completed or Failed:
 * a deletion of a prefix it lists waits. One whose source store is not understood reads
 * anything of its container (fail closed). A source named by backupName is an EtcdBackup's
 * copy, which no BackupEntry holds. */
static void search_readers(struct search *s, const cJSON *items)
{
    const cJSON *r;
    const char *phase;
    char p[256];

    cJSON_ArrayForEach (r, items) {
        phase = kjson_get_str(r, "status.phase");
        if (phase && (strcmp(phase, "Completed") == 0 || strcmp(phase, "Failed") == 0))
            continue;
        if (overlaps(s, r, "spec.source.store", NULL, p, sizeof(p))) {
            snprintf(s->why, CLAIMS_WHY_MAX,
                     "the source prefix \"%s\" of EtcdRestore %s/%s, which reads it until it "
                     "is Completed or Failed",
                     p, str_or_empty(r, "metadata.namespace"), str_or_empty(r, "metadata.name"));
            snprintf(s->owner_ns, sizeof(s->owner_ns), "%s", str_or_empty(r, "metadata.namespace"));
            return;
        }
    }
}

void claims_find_readers_in(const cJSON *restores, const struct bstore_claim *c,
                            char why[CLAIMS_WHY_MAX])
{
    static const struct claims_skip none = { 0 };
    struct search s = { c, &none, why, "" };

    why[0] = '\0';
    search_readers(&s, restores);
}

enum kerr claims_find_readers(struct k8s_client *k, const struct bstore_claim *c,
                              char why[CLAIMS_WHY_MAX], struct kerr_info *err)
{
    cJSON *list = NULL;
    enum kerr rc = k8s_list_all(k, &res_restore, NULL, NULL, &list, err);

    why[0] = '\0';
    if (rc == KERR_NOTFOUND) { /* EtcdRestore's CRD not installed: no restores */
        kerr_clear(err);
        rc = KERR_OK;
    } else if (rc == KERR_OK) {
        claims_find_readers_in(kjson_get(list, "items"), c, why);
    }
    cJSON_Delete(list);
    return rc;
}

void claims_find_restores_in(const cJSON *restores, const cJSON *etcds, const cJSON *backups,
                             const struct bstore_claim *c, const struct claims_skip *skip,
                             char why[CLAIMS_WHY_MAX])
{
    static const struct claims_skip none = { 0 };
    struct search s = { c, skip ? skip : &none, why, "" };

    why[0] = '\0';
    search_restores(&s, restores, etcds, backups);
    redact(&s);
}

void claims_find_in(const cJSON *etcds, const cJSON *entries, const cJSON *backups,
                    const struct bstore_claim *c, const struct claims_skip *skip,
                    char why[CLAIMS_WHY_MAX])
{
    static const struct claims_skip none = { 0 };
    struct search s = { c, skip ? skip : &none, why, "" };

    why[0] = '\0';
    search_etcds(&s, etcds);
    if (!*why)
        search_entries(&s, entries);
    if (!*why)
        search_backups(&s, backups);
    redact(&s);
}

/* The LIST of res into *out, a CRD not installed (KERR_NOTFOUND) read as none. */
static enum kerr list_opt(struct k8s_client *k, const struct k8s_resource *res, cJSON **out,
                          struct kerr_info *err)
{
    enum kerr rc = k8s_list_all(k, res, NULL, NULL, out, err);

    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    return rc;
}

enum kerr claims_find(struct k8s_client *k, const char *watch_ns, const struct bstore_claim *c,
                      const struct claims_skip *skip, char why[CLAIMS_WHY_MAX],
                      struct kerr_info *err)
{
    static const struct claims_skip none = { 0 };
    struct search s = { c, skip ? skip : &none, why, "" };
    cJSON *etcds = NULL, *backups = NULL, *list = NULL;
    int local = strcmp(c->key, BLOCAL_KEY) == 0;
    enum kerr rc;

    why[0] = '\0';
    /* the Etcds and EtcdBackups are kept: a restore's target store is resolved from them */
    rc = k8s_list_all(k, &ETCDSPEC_RES_ETCD, watch_ns && *watch_ns ? watch_ns : NULL, NULL, &etcds,
                      err);
    if (rc == KERR_OK && local)
        clocal_place(k, cJSON_GetObjectItem(etcds, "items"), CLOCAL_ETCD);
    if (rc == KERR_OK)
        search_etcds(&s, kjson_get(etcds, "items"));
    /* BackupEntry's CRD not installed (entries off): none */
    if (rc == KERR_OK && !*why && (rc = list_opt(k, &res_entry, &list, err)) == KERR_OK) {
        if (local)
            clocal_place(k, cJSON_GetObjectItem(list, "items"), CLOCAL_ENTRY);
        search_entries(&s, kjson_get(list, "items"));
    }
    cJSON_Delete(list);
    list = NULL;
    /* EtcdBackup's CRD not installed: no copies */
    if (rc == KERR_OK && !*why && (rc = list_opt(k, &res_backup, &backups, err)) == KERR_OK) {
        if (local)
            clocal_place(k, cJSON_GetObjectItem(backups, "items"), CLOCAL_BACKUP);
        search_backups(&s, kjson_get(backups, "items"));
    }
    /* EtcdRestore's CRD not installed: no restores */
    if (rc == KERR_OK && !*why && (rc = list_opt(k, &res_restore, &list, err)) == KERR_OK) {
        if (local)
            clocal_place_restores(k, cJSON_GetObjectItem(list, "items"), kjson_get(etcds, "items"),
                                  kjson_get(backups, "items"));
        search_restores(&s, kjson_get(list, "items"), kjson_get(etcds, "items"),
                        kjson_get(backups, "items"));
    }
    cJSON_Delete(list);
    cJSON_Delete(etcds);
    cJSON_Delete(backups);
    redact(&s);
    return rc;
}

enum kerr claims_of_placed(const cJSON *obj, const char *base, const cJSON *secret,
                           struct bstore_claim *c, struct kerr_info *err)
{
    char hostpath[BLOCAL_HOSTPATH_MAX + 1];
    const cJSON *s = kjson_get(obj, base);
    struct bstore_claim l = { "", NULL };
    enum kerr rc = claims_of(obj, base, NULL, c, err);

    if (rc != KERR_OK || strcmp(c->key, BLOCAL_KEY) != 0)
        return rc;
    rc = blocal_hostpath(secret, hostpath, sizeof(hostpath), err);
    if (rc == KERR_OK)
        rc = bstore_local_claim_init(&l, hostpath, kjson_get_str(s, "container"),
                                     kjson_get_str(s, "prefix"), err);
    bstore_claim_release(c);
    if (rc != KERR_OK)
        return rc == KERR_NOMEM ? rc : KERR_INVAL;
    *c = l;
    return KERR_OK;
}

enum kerr claims_destination(struct k8s_client *k, const cJSON *obj, const char *base,
                             const struct claims_skip *skip, char *why, size_t n,
                             struct kerr_info *err)
{
    return claims_destination_placed(k, obj, base, NULL, skip, why, n, err);
}

enum kerr claims_destination_placed(struct k8s_client *k, const cJSON *obj, const char *base,
                                    const cJSON *secret, const struct claims_skip *skip, char *why,
                                    size_t n, struct kerr_info *err)
{
    struct bstore_claim c;
    struct kerr_info e = { 0 };
    char other[CLAIMS_WHY_MAX], path[128];
    enum kerr rc;

    why[0] = '\0';
    if (claims_of_placed(obj, base, secret, &c, &e) != KERR_OK) {
        if (snprintf(why, n, "%s: %s", base, e.msg) < 0)
            why[0] = '\0';
        return KERR_OK;
    }
    rc = claims_find(k, NULL, &c, skip, other, err);
    snprintf(path, sizeof(path), "%s.prefix", base);
    /* a long prefix or owner is cut: the message stays one line */
    if (rc == KERR_OK && *other &&
        snprintf(why, n,
                 "%s \"%s\" overlaps %s in the same store: the backup sidecar lists a prefix "
                 "as a plain string, so the copy would become that cluster's snapshot; one "
                 "prefix, one cluster",
                 path, str_or_empty(obj, path), other) < 0)
        why[0] = '\0';
    bstore_claim_release(&c);
    return rc;
}

/* The first BackupEntry in phase Deleting (its deletion Job empties its prefix) overlapping c. */
void claims_find_deleting_in(const cJSON *entries, const struct bstore_claim *c,
                             char why[CLAIMS_WHY_MAX])
{
    static const struct claims_skip none = { 0 };
    struct search s = { c, &none, why, "" };
    const cJSON *e;
    char p[256];

    why[0] = '\0';
    cJSON_ArrayForEach (e, entries) {
        if (!eq(kjson_get_str(e, "status.phase"), BSTORE_ENTRY_DELETING) ||
            !overlaps(&s, e, "spec.store", "spec.prefix", p, sizeof(p)))
            continue;
        snprintf(why, CLAIMS_WHY_MAX,
                 "the prefix \"%s\" of BackupEntry %s of Etcd %s/%s, which is being deleted", p,
                 str_or_empty(e, "metadata.name"), str_or_empty(e, "spec.etcd.namespace"),
                 str_or_empty(e, "spec.etcd.name"));
        return;
    }
}

enum kerr claims_find_deleting(struct k8s_client *k, const struct bstore_claim *c,
                               char why[CLAIMS_WHY_MAX], struct kerr_info *err)
{
    cJSON *list = NULL;
    enum kerr rc = k8s_list_all(k, &res_entry, NULL, NULL, &list, err);

    why[0] = '\0';
    if (rc == KERR_NOTFOUND) { /* BackupEntry's CRD not installed (entries off): none */
        kerr_clear(err);
        rc = KERR_OK;
    } else if (rc == KERR_OK) {
        claims_find_deleting_in(kjson_get(list, "items"), c, why);
    }
    cJSON_Delete(list);
    return rc;
}

enum kerr claims_take(struct k8s_client *k, const struct pclaim *c, const char *viewer_ns,
                      char why[CLAIMS_WHY_MAX], struct kerr_info *err)
{
    const char *lease_ns = k8s_client_namespace(k);
    struct pclaim_other o;
    enum kerr rc;

    why[0] = '\0';
    if (!lease_ns || !*lease_ns)
        return kerr_set(err, KERR_INVAL, "no namespace for the claim Leases");
    rc = pclaim_take(k, lease_ns, c, &o, err);
    if (rc != KERR_OK)
        return kerr_wrap(err, "recording the claim of prefix \"%s\" in the claim Lease of %s",
                         c->prefix, c->store);
    if (*o.what && viewer_ns && strcmp(viewer_ns, o.ns) != 0)
        snprintf(why, CLAIMS_WHY_MAX, "a prefix claimed from another namespace");
    else if (*o.what)
        snprintf(why, CLAIMS_WHY_MAX, "%s", o.what);
    else if (*o.refused)
        snprintf(why, CLAIMS_WHY_MAX, "%s", o.refused);
    return KERR_OK;
}

enum kerr claims_find_admitted(struct k8s_client *k, const struct bstore_claim *c,
                               const char *etcd_ns, const char *etcd_name, time_t gone_at,
                               char why[CLAIMS_WHY_MAX], struct kerr_info *err)
{
    const char *lease_ns = k8s_client_namespace(k);
    struct pclaim own = {
        etcd_ns ? etcd_ns : "", etcd_name ? etcd_name : "", NULL, NULL, NULL, NULL, NULL, NULL, NULL
    };
    struct pclaim_other o;
    enum kerr rc;

    why[0] = '\0';
    if (!lease_ns || !*lease_ns)
        return kerr_set(err, KERR_INVAL, "no namespace for the claim Leases");
    rc = pclaim_admitted(k, lease_ns, c->key, c->prefix, &own, gone_at, &o, err);
    if (rc != KERR_OK)
        return kerr_wrap(err, "reading the claim Lease of %s", c->key);
    snprintf(why, CLAIMS_WHY_MAX, "%s", o.what);
    return KERR_OK;
}

enum kerr claims_entry_name(const struct bstore_claim *c, char out[KNAME_SUBDOMAIN_MAX + 1])
{
    char base[BSTORE_ENTRY_NAME_MAX + 1];
    enum kerr rc = bstore_entry_name(c, base);

    return rc == KERR_OK ? kname_join(base, "", KNAME_SUBDOMAIN_MAX, out, KNAME_SUBDOMAIN_MAX + 1)
                         : rc;
}
