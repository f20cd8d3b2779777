/* lookup - views of parent objects and their projections; see lookup.h. */
#include "webhook/lookup.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/hibguard.h"
#include "common/kjson.h"
#include "common/kobj.h"
#include "common/ktime.h"

static const cJSON *metadata(const cJSON *obj)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    return cJSON_IsObject(m) ? m : NULL;
}

static _Thread_local int64_t review_deadline_ms;

void lookup_deadline_set(int64_t deadline_ms)
{
    review_deadline_ms = deadline_ms;
}

int64_t lookup_deadline(void)
{
    return review_deadline_ms;
}

int lookup_unconfirmed(enum kerr rc, const struct kerr_info *err)
{
    return rc == KERR_NOTFOUND && err && strcmp(err->reason, LOOKUP_REASON_UNCONFIRMED) == 0;
}

const char *lookup_meta_str(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(metadata(obj), key);

    return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

const cJSON *lookup_meta_map(const cJSON *obj, const char *key)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(metadata(obj), key);
    const cJSON *e;

    if (!cJSON_IsObject(m))
        return NULL;
    cJSON_ArrayForEach (e, m) {
        if (!cJSON_IsString(e) || !e->valuestring)
            return NULL;
    }
    return m;
}

const char *lookup_map_get(const cJSON *map, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(map, key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int lookup_meta_deleting(const cJSON *obj)
{
    struct timespec ts;

    return ktime_parse(lookup_meta_str(obj, "deletionTimestamp"), &ts, NULL) == KERR_OK;
}

int lookup_labels_match(const cJSON *labels, const cJSON *want)
{
    const cJSON *e;
    const char *have;

    cJSON_ArrayForEach (e, want) {
        if (!e->string || !cJSON_IsString(e))
            return 0;
        have = lookup_map_get(labels, e->string);
        if (!have || strcmp(have, e->valuestring) != 0)
            return 0;
    }
    return 1;
}

static int in_progress(const cJSON *lastop, const char *type)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(lastop, "type");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(lastop, "state");

    if (!cJSON_IsString(t) || !cJSON_IsString(s) || strcmp(t->valuestring, type) != 0)
        return 0;
    return strcmp(s->valuestring, "Processing") == 0 || strcmp(s->valuestring, "Error") == 0 ||
           strcmp(s->valuestring, "Requeue") == 0;
}

static int has_key(const cJSON *map, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(map, key) != NULL;
}

static enum kerr copy_str(char *dst, size_t size, const char *src, const char *what,
                          struct kerr_info *err)
{
    size_t n = strlen(src);

    if (n >= size)
        return kerr_set(err, KERR_INVAL, "%s is longer than %zu bytes", what, size - 1);
    memcpy(dst, src, n + 1);
    return KERR_OK;
}

/* An int32 field at least 0 (absent: dflt) into *v; 0 when it is not one. */
static int int32_field(const cJSON *obj, const char *path, int64_t dflt, int64_t *v)
{
    enum kerr rc = kjson_get_int64(obj, path, v);

    if (rc == KERR_NOTFOUND)
        *v = dflt;
    return rc == KERR_NOTFOUND || (rc == KERR_OK && *v >= 0 && *v <= 2147483647);
}

enum kerr lookup_etcd_from_json(const cJSON *etcd, struct lookup_etcd *out, struct kerr_info *err)
{
    const cJSON *ann = lookup_meta_map(etcd, "annotations");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(etcd, "status");
    const cJSON *lastop = cJSON_GetObjectItemCaseSensitive(status, "lastOperation");
    const char *reason, *phase;

    memset(out, 0, sizeof(*out));
    out->protection_disabled = has_key(ann, LOOKUP_ANN_DISABLE_PROTECTION);
    out->runtime_disabled = has_key(ann, LOOKUP_ANN_DISABLE_RUNTIME);
    out->has_backup_store = kjson_get_obj(etcd, "spec.backup.store") != NULL;
    if (hibguard_store_digest(etcd, out->store) == KERR_NOMEM)
        return kerr_set(err, KERR_NOMEM, NULL);
    out->secret_ref_rc = hibguard_secret_ref(etcd, &reason);
    if (out->secret_ref_rc == KERR_OK)
        snprintf(out->secret_ref, sizeof(out->secret_ref), "%s", reason);
    phase = lookup_map_get(ann, HIBGUARD_ANN_STORE);
    if (phase && strlen(phase) < sizeof(out->snapshot_store))
        snprintf(out->snapshot_store, sizeof(out->snapshot_store), "%s", phase);
    if (!int32_field(etcd, "spec.replicas", -1, &out->replicas))
        out->replicas = -1;
    out->deleting = lookup_meta_deleting(etcd);
    out->restoring = has_key(lookup_meta_map(etcd, "labels"), LOOKUP_LABEL_RESTORING);
    out->cut_rc = hibguard_cut_at(etcd, &out->cut_at, NULL);
    phase = lookup_map_get(ann, HIBGUARD_ANN_PHASE);
    out->cut_current = hibguard_phase_current(phase);
    snprintf(out->phase, sizeof(out->phase), "%s", phase ? phase : "");
    phase = lookup_map_get(ann, HIBGUARD_ANN_CHECKED);
    if (phase && strlen(phase) >= sizeof(out->checked))
        phase = "?";
    snprintf(out->checked, sizeof(out->checked), "%s", phase ? phase : "");
    reason = lookup_map_get(ann, HIBGUARD_ANN_BREAK_GLASS);
    if (reason) {
        const char *why = reason;

        out->break_glass = 1;
        out->break_glass_rc = hibguard_break_glass(reason, &out->break_glass_expires, &why, NULL);
        snprintf(out->break_glass_reason, sizeof(out->break_glass_reason), "%s",
                 out->break_glass_rc == KERR_OK ? why : reason);
        glass_value_hash(reason, out->break_glass_value);
    }
    phase = kjson_get_str(etcd, "spec.memberNamePrefix");
    out->member_prefix_ok = (phase && strlen(phase) <= LOOKUP_MEMBER_PREFIX_MAX) ||
                            !kjson_has(etcd, "spec.memberNamePrefix") ||
                            cJSON_IsNull(kjson_get(etcd, "spec.memberNamePrefix"));
    snprintf(out->member_prefix, sizeof(out->member_prefix), "%s",
             out->member_prefix_ok && phase ? phase : "");
    if (cJSON_IsObject(lastop)) {
        out->reconcile_in_progress = in_progress(lastop, "Reconcile");
        out->deletion_in_progress = in_progress(lastop, "Delete");
    }
    return copy_str(out->uid, sizeof(out->uid), lookup_meta_str(etcd, "uid"), "Etcd uid", err);
}

/* The ordinals of a StatefulSet into out (see struct lookup_sts). */
static void sts_ordinals(const cJSON *sts, struct lookup_sts *out)
{
    out->ordinals_ok = int32_field(sts, "spec.ordinals.start", 0, &out->start) &&
                       int32_field(sts, "spec.replicas", 1, &out->replicas);
}

enum kerr lookup_sts_from_json(const cJSON *sts, struct lookup_sts *out, struct kerr_info *err)
{
    const cJSON *labels = lookup_meta_map(sts, "labels");
    const char *managed = lookup_map_get(labels, LOOKUP_LABEL_MANAGED_BY);
    const char *part_of = lookup_map_get(labels, LOOKUP_LABEL_PART_OF);
    struct timespec ts;
    enum kerr rc;

    memset(out, 0, sizeof(*out));
    out->managed = managed && strcmp(managed, LOOKUP_MANAGED_BY_DRUID) == 0;
    out->has_part_of = part_of != NULL;
    out->deleting = lookup_meta_deleting(sts);
    if (ktime_parse(lookup_meta_str(sts, "creationTimestamp"), &ts, NULL) == KERR_OK)
        out->created = ts.tv_sec;
    sts_ordinals(sts, out);
    if ((rc = copy_str(out->namespace, sizeof(out->namespace), lookup_meta_str(sts, "namespace"),
                       "StatefulSet namespace", err)) ||
        (rc = copy_str(out->name, sizeof(out->name), lookup_meta_str(sts, "name"),
                       "StatefulSet name", err)))
        return rc;
    return copy_str(out->part_of, sizeof(out->part_of), part_of ? part_of : "", "part-of label",
                    err);
}

/* Copy member key of src into dst when present; 0 on success or absence, -1 on OOM. */
static int copy_member(cJSON *dst, const cJSON *src, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, key);
    cJSON *c;

    if (!v)
        return 0;
    c = cJSON_Duplicate(v, 1);
    if (!c || !cJSON_AddItemToObject(dst, key, c)) {
        cJSON_Delete(c);
        return -1;
    }
    return 0;
}

/* A new metadata object with name, namespace, resourceVersion and uid of obj. */
static cJSON *base_meta(cJSON *root, const cJSON *obj)
{
    const cJSON *m = metadata(obj);
    cJSON *meta = cJSON_AddObjectToObject(root, "metadata");

    if (!meta || copy_member(meta, m, "name") || copy_member(meta, m, "namespace") ||
        copy_member(meta, m, "uid") || copy_member(meta, m, "resourceVersion"))
        return NULL;
    return meta;
}

static int project_etcd_status(cJSON *root, const cJSON *etcd)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(etcd, "status");
    const cJSON *lastop = cJSON_GetObjectItemCaseSensitive(status, "lastOperation");
    cJSON *st, *lo;

    if (!cJSON_IsObject(lastop))
        return 0;
    if (!(st = cJSON_AddObjectToObject(root, "status")))
        return -1;
    lo = cJSON_AddObjectToObject(st, "lastOperation");
    if (!lo || copy_member(lo, lastop, "type") || copy_member(lo, lastop, "state"))
        return -1;
    return 0;
}

/* spec.backup.store of etcd into root with the fields of its stamp only; -1 on NOMEM. */
static int project_store(cJSON *root, const cJSON *etcd)
{
    static const char *const fields[] = { "provider", "container", "prefix", "endpointOverride" };
    const cJSON *src = kjson_get_obj(etcd, "spec.backup.store");
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(src, "secretRef");
    cJSON *dst, *r;
    size_t i;

    if (kjson_set(root, "spec.backup.store", cJSON_CreateObject(), NULL) ||
        !(dst = (cJSON *)kjson_get_obj(root, "spec.backup.store")))
        return -1;
    for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (copy_member(dst, src, fields[i]))
            return -1;
    /* the Secret of the stamp: secretRef's name (a secretRef that is no object: as it is) */
    if (ref && !cJSON_IsObject(ref))
        return copy_member(dst, src, "secretRef");
    if (ref && (!(r = cJSON_AddObjectToObject(dst, "secretRef")) || copy_member(r, ref, "name")))
        return -1;
    return 0;
}

cJSON *lookup_etcd_project(const cJSON *etcd)
{
    static const char *const keep[] = { LOOKUP_ANN_DISABLE_PROTECTION,
                                        LOOKUP_ANN_DISABLE_RUNTIME,
                                        HIBGUARD_ANN_CUT_AT,
                                        HIBGUARD_ANN_BREAK_GLASS,
                                        HIBGUARD_ANN_PHASE,
                                        HIBGUARD_ANN_CHECKED,
                                        HIBGUARD_ANN_STORE };
    const cJSON *ann = lookup_meta_map(etcd, "annotations");
    cJSON *root = cJSON_CreateObject(), *meta, *a = NULL;
    size_t i;

    if (!root || !(meta = base_meta(root, etcd)) ||
        copy_member(meta, metadata(etcd), "deletionTimestamp"))
        goto fail;
    /* the restoring label: a restoring Etcd's replicas do not change through etcds/scale */
    if (has_key(lookup_meta_map(etcd, "labels"), LOOKUP_LABEL_RESTORING) &&
        copy_member(cJSON_AddObjectToObject(meta, "labels"), lookup_meta_map(etcd, "labels"),
                    LOOKUP_LABEL_RESTORING))
        goto fail;
    for (i = 0; ann && i < sizeof(keep) / sizeof(keep[0]); i++) {
        if (!has_key(ann, keep[i]))
            continue;
        if (!a && !(a = cJSON_AddObjectToObject(meta, "annotations")))
            goto fail;
        if (copy_member(a, ann, keep[i]))
            goto fail;
    }
    /* the store's fields its stamp is made of (hibguard_store_stamp) */
    if (kjson_get_obj(etcd, "spec.backup.store") && project_store(root, etcd))
        goto fail;
    /* the members' names in etcd's configuration (webhook/cfgkeys.h) */
    if (kjson_has(etcd, "spec.memberNamePrefix") &&
        kjson_set(root, "spec.memberNamePrefix",
                  cJSON_Duplicate(kjson_get(etcd, "spec.memberNamePrefix"), 1), NULL))
        goto fail;
    /* the member range of its claims (webhook/claimguard.h) */
    if (kjson_has(etcd, "spec.replicas") &&
        kjson_set(root, "spec.replicas", cJSON_Duplicate(kjson_get(etcd, "spec.replicas"), 1),
                  NULL))
        goto fail;
    if (project_etcd_status(root, etcd))
        goto fail;
    return root;
fail:
    cJSON_Delete(root);
    return NULL;
}

cJSON *lookup_sts_project(const cJSON *sts)
{
    const cJSON *m = metadata(sts);
    cJSON *root = cJSON_CreateObject(), *meta;

    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(sts, "spec");
    cJSON *sp;

    if (!root || !(meta = base_meta(root, sts)) || copy_member(meta, m, "labels") ||
        copy_member(meta, m, "creationTimestamp") || copy_member(meta, m, "deletionTimestamp") ||
        (cJSON_IsObject(spec) &&
         (!(sp = cJSON_AddObjectToObject(root, "spec")) || copy_member(sp, spec, "replicas") ||
          copy_member(sp, spec, "ordinals")))) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

cJSON *lookup_task_project(const cJSON *task)
{
    static const char *const paths[] = { "metadata.name",
                                         "metadata.namespace",
                                         "metadata.resourceVersion",
                                         "metadata.creationTimestamp",
                                         "spec.etcdName",
                                         "spec.config.onDemandSnapshot.type",
                                         "status.state",
                                         NULL };
    cJSON *out = NULL;

    return kobj_project_paths((void *)paths, task, &out) == KERR_OK ? out : NULL;
}

static const cJSON *mem_find(const cJSON *list, const char *ns, const char *name)
{
    const cJSON *o;

    cJSON_ArrayForEach (o, list) {
        if (strcmp(lookup_meta_str(o, "namespace"), ns) == 0 &&
            strcmp(lookup_meta_str(o, "name"), name) == 0)
            return o;
    }
    return NULL;
}

/* One lookup by name: counted, failed on request, NotFound worded as the API server does. */
static enum kerr mem_get(struct lookup_mem *m, const cJSON *list, const char *resource,
                         const char *ns, const char *name, const cJSON **o, struct kerr_info *err)
{
    m->calls++;
    if (m->fail)
        return kerr_set(err, m->fail, "injected failure");
    *o = mem_find(list, ns, name);
    if (!*o)
        return kerr_set(err, KERR_NOTFOUND, "%s \"%s\" not found", resource, name);
    return KERR_OK;
}

static enum kerr mem_etcd(void *ctx, const char *ns, const char *name, struct lookup_etcd *out,
                          struct kerr_info *err)
{
    struct lookup_mem *m = ctx;
    const cJSON *o = NULL;
    enum kerr rc = mem_get(m, m->etcds, "etcds.druid.gardener.cloud", ns, name, &o, err);

    return rc ? rc : lookup_etcd_from_json(o, out, err);
}

static enum kerr mem_etcd_fresh(void *ctx, const char *ns, const char *name,
                                struct lookup_etcd *out, struct kerr_info *err)
{
    struct lookup_mem *m = ctx;
    const cJSON *o = NULL;
    enum kerr rc = mem_get(m, m->fresh_etcds ? m->fresh_etcds : m->etcds,
                           "etcds.druid.gardener.cloud", ns, name, &o, err);

    return rc ? rc : lookup_etcd_from_json(o, out, err);
}

static enum kerr mem_sts(void *ctx, const char *ns, const char *name, struct lookup_sts *out,
                         struct kerr_info *err)
{
    struct lookup_mem *m = ctx;
    const cJSON *o = NULL;
    enum kerr rc = mem_get(m, m->stses, "statefulsets.apps", ns, name, &o, err);

    return rc ? rc : lookup_sts_from_json(o, out, err);
}

static enum kerr mem_sts_by_labels(void *ctx, const char *ns, const cJSON *labels,
                                   struct lookup_sts *out, size_t *matches, struct kerr_info *err)
{
    struct lookup_mem *m = ctx;
    const cJSON *o, *first = NULL;

    *matches = 0;
    m->calls++;
    if (m->fail)
        return kerr_set(err, m->fail, "injected failure");
    cJSON_ArrayForEach (o, m->stses) {
        if (strcmp(lookup_meta_str(o, "namespace"), ns) != 0 ||
            !lookup_labels_match(lookup_meta_map(o, "labels"), labels))
            continue;
        if (!first)
            first = o;
        (*matches)++;
    }
    return first ? lookup_sts_from_json(first, out, err) : KERR_OK;
}

static enum kerr mem_snapshot(void *ctx, const char *ns, const char *etcd, time_t cut_at,
                              int *found, struct kerr_info *err)
{
    struct lookup_mem *m = ctx;
    const cJSON *t;

    *found = 0;
    m->calls++;
    if (m->fail)
        return kerr_set(err, m->fail, "injected failure");
    cJSON_ArrayForEach (t, m->tasks) {
        if (hibguard_task_counts(t, ns, etcd, cut_at)) {
            *found = 1;
            break;
        }
    }
    return KERR_OK;
}

int lookup_pod_ordinal(const char *pod, const char *sts, int64_t *ord)
{
    size_t n = strlen(sts);
    const char *d;
    int64_t v = 0;

    if (!pod || strncmp(pod, sts, n) != 0 || pod[n] != '-' || !pod[n + 1])
        return 0;
    for (d = pod + n + 1; *d; d++) {
        if (*d < '0' || *d > '9')
            return 0;
        v = v > (INT64_MAX - (*d - '0')) / 10 ? INT64_MAX : v * 10 + (*d - '0');
    }
    *ord = v;
    return 1;
}

size_t lookup_pods_outside(const cJSON *items, const char *sts, int64_t lo, int64_t hi,
                           int64_t *first)
{
    const cJSON *p;
    size_t n = 0;
    int64_t ord;

    *first = -1;
    cJSON_ArrayForEach (p, items) {
        if (!lookup_pod_ordinal(lookup_meta_str(p, "name"), sts, &ord) || (ord >= lo && ord < hi))
            continue;
        if (n++ == 0 || ord < *first)
            *first = ord;
    }
    return n;
}

static enum kerr mem_pods(void *ctx, const char *ns, const char *sts, int64_t lo, int64_t hi,
                          size_t *outside, int64_t *first, struct kerr_info *err)
{
    struct lookup_mem *m = ctx;
    cJSON *in_ns = cJSON_CreateArray();
    const cJSON *p;

    *outside = 0;
    *first = -1;
    m->calls++;
    if (!in_ns)
        return kerr_set(err, KERR_NOMEM, "listing pods");
    if (m->fail) {
        cJSON_Delete(in_ns);
        return kerr_set(err, m->fail, "injected failure");
    }
    cJSON_ArrayForEach (p, m->pods) {
        if (strcmp(lookup_meta_str(p, "namespace"), ns) == 0)
            cJSON_AddItemReferenceToArray(in_ns, (cJSON *)p);
    }
    *outside = lookup_pods_outside(in_ns, sts, lo, hi, first);
    cJSON_Delete(in_ns);
    return KERR_OK;
}

/* The objects of from (every namespace's) in ns, copied into *items. */
static enum kerr mem_items(struct lookup_mem *m, const cJSON *from, const char *what,
                           const char *ns, cJSON **items, struct kerr_info *err)
{
    const cJSON *p;
    cJSON *c;

    m->calls++;
    if (m->fail) {
        *items = NULL;
        return kerr_set(err, m->fail, "injected failure");
    }
    if (!(*items = cJSON_CreateArray()))
        return kerr_set(err, KERR_NOMEM, "listing %s", what);
    cJSON_ArrayForEach (p, from) {
        if (strcmp(lookup_meta_str(p, "namespace"), ns) != 0)
            continue;
        if (!(c = cJSON_Duplicate(p, 1)) || !cJSON_AddItemToArray(*items, c)) {
            cJSON_Delete(c);
            cJSON_Delete(*items);
            *items = NULL;
            return kerr_set(err, KERR_NOMEM, "listing %s", what);
        }
    }
    return KERR_OK;
}

static enum kerr mem_pvcs(void *ctx, const char *ns, cJSON **items, struct kerr_info *err)
{
    struct lookup_mem *m = ctx;

    return mem_items(m, m->pvcs, "persistentvolumeclaims", ns, items, err);
}

static enum kerr mem_pod_items(void *ctx, const char *ns, cJSON **items, struct kerr_info *err)
{
    struct lookup_mem *m = ctx;

    return mem_items(m, m->pods, "pods", ns, items, err);
}

static enum kerr mem_sts_object(void *ctx, const char *ns, const char *name, cJSON **obj,
                                struct kerr_info *err)
{
    struct lookup_mem *m = ctx;
    const cJSON *o = NULL;
    enum kerr rc = mem_get(m, m->stses, "statefulsets.apps", ns, name, &o, err);

    *obj = NULL;
    if (rc)
        return rc;
    return (*obj = cJSON_Duplicate(o, 1)) ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
}

static enum kerr mem_secret(void *ctx, const char *ns, const char *name, cJSON **obj,
                            struct kerr_info *err)
{
    struct lookup_mem *m = ctx;
    const cJSON *o = NULL;
    enum kerr rc = mem_get(m, m->secrets, "secrets", ns, name, &o, err);

    *obj = NULL;
    if (rc)
        return rc;
    return (*obj = cJSON_Duplicate(o, 1)) ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
}

static enum kerr mem_glass(void *ctx, const struct glass_use *u, int dry_run,
                           struct glass_prior *used, struct kerr_info *err)
{
    struct lookup_mem *m = ctx;
    cJSON *fresh;
    int judged;

    memset(used, 0, sizeof(*used));
    m->calls++;
    if (m->fail)
        return kerr_set(err, m->fail, "injected failure");
    if ((judged = glass_judge(m->glass, u, used)) == 2)
        memset(used, 0, sizeof(*used)); /* this request's own record */
    if (judged)
        return KERR_OK;
    if (!m->glass || dry_run)
        return KERR_OK;
    if (!(fresh = glass_record(u, time(NULL))))
        return kerr_set(err, KERR_NOMEM, NULL);
    cJSON_AddItemToArray(m->glass, fresh);
    return KERR_OK;
}

void lookup_mem_bind(struct lookup_mem *m, struct lookup *out)
{
    out->ctx = m;
    out->etcd = mem_etcd;
    out->etcd_fresh = mem_etcd_fresh;
    out->sts = mem_sts;
    out->sts_by_labels = mem_sts_by_labels;
    out->snapshot = mem_snapshot;
    out->pods = mem_pods;
    out->pvcs = mem_pvcs;
    out->pod_items = mem_pod_items;
    out->sts_object = mem_sts_object;
    out->sts_fresh = mem_sts_object;
    out->secret = mem_secret;
    out->glass = mem_glass;
}
