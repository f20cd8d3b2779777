/*
 * datamnt - where an Etcd's members keep their data (see datamnt.h).
 */
#include "webhook/datamnt.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "webhook/lookup.h"

/* The string member key of obj, "" when absent or not a string. BORROWED. */
static const char *str_of(const cJSON *obj, const char *key)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));

    return v ? v : "";
}

const cJSON *datamnt_named(const cJSON *arr, const char *name)
{
    const cJSON *c;

    cJSON_ArrayForEach (c, arr) {
        if (strcmp(str_of(c, "name"), name) == 0)
            return c;
    }
    return NULL;
}

const cJSON *datamnt_container(const cJSON *sts, const char *name)
{
    return datamnt_named(kjson_get_arr(sts, "spec.template.spec.containers"), name);
}

int datamnt_claim_in(const cJSON *templates, const char *name)
{
    const cJSON *t;

    cJSON_ArrayForEach (t, templates) {
        if (*name && strcmp(lookup_meta_str(t, "name"), name) == 0)
            return 1;
    }
    return 0;
}

int datamnt_claim_volume(const cJSON *sts, const char *name)
{
    return datamnt_claim_in(kjson_get_arr(sts, "spec.volumeClaimTemplates"), name);
}

int datamnt_has_mount(const cJSON *c, const cJSON *m)
{
    static const char *const keys[] = { "mountPath", "name", "subPath", "subPathExpr" };
    const cJSON *n;
    size_t k;

    cJSON_ArrayForEach (n, cJSON_GetObjectItemCaseSensitive(c, "volumeMounts")) {
        for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            if (strcmp(str_of(n, keys[k]), str_of(m, keys[k])) != 0)
                break;
        }
        if (k == sizeof(keys) / sizeof(keys[0]))
            return 1;
    }
    return 0;
}

/* The next component of *p (advanced past it): its length, *s its start; 0 at the end. */
static size_t component(const char **p, const char **s)
{
    size_t n = 0;

    while (**p == '/')
        (*p)++;
    *s = *p;
    while ((*p)[n] && (*p)[n] != '/')
        n++;
    *p += n;
    return n;
}

int datamnt_below(const char *p, const char *base)
{
    const char *a, *b;
    size_t na, nb;

    for (;;) {
        nb = component(&base, &b);
        na = component(&p, &a);
        if ((na == 1 && a[0] == '.') || (na == 2 && a[0] == '.' && a[1] == '.'))
            return 1; /* not resolved: taken as anywhere */
        if (!nb)
            return 1;
        if (na != nb || memcmp(a, b, na) != 0)
            return 0;
    }
}

const cJSON *datamnt_covers(const cJSON *old, const cJSON *new, const char **ctr,
                            const cJSON **claim)
{
    /* the paths are looked up once: a review runs this on every StatefulSet update */
    const cJSON *templates = kjson_get_arr(old, "spec.volumeClaimTemplates");
    const cJSON *news = kjson_get_arr(new, "spec.template.spec.containers");
    const cJSON *c, *m, *nc, *n;

    cJSON_ArrayForEach (c, kjson_get_arr(old, "spec.template.spec.containers")) {
        cJSON_ArrayForEach (m, cJSON_GetObjectItemCaseSensitive(c, "volumeMounts")) {
            if (!datamnt_claim_in(templates, str_of(m, "name")) ||
                !(nc = datamnt_named(news, str_of(c, "name"))))
                continue;
            cJSON_ArrayForEach (n, cJSON_GetObjectItemCaseSensitive(nc, "volumeMounts")) {
                /* the path first: most mounts are elsewhere, and it is the cheaper test */
                if (!datamnt_below(str_of(n, "mountPath"), str_of(m, "mountPath")) ||
                    datamnt_has_mount(c, n))
                    continue;
                *ctr = str_of(c, "name");
                *claim = m;
                return n;
            }
        }
    }
    return NULL;
}

/*
 * Container tc (named ctr) of the template mounts pod mount pm as pod does, and nothing else at
 * or below it: 1, else 0 with why.
 */
static int keeps(const cJSON *tc, const cJSON *pm, char *why, size_t size, const char *pod,
                 const char *ctr)
{
    const cJSON *n;

    if (!tc || !datamnt_has_mount(tc, pm)) {
        snprintf(why, size,
                 "its container %s would no longer mount claim volume %s at %s as pod %s does", ctr,
                 str_of(pm, "name"), str_of(pm, "mountPath"), pod);
        return 0;
    }
    cJSON_ArrayForEach (n, cJSON_GetObjectItemCaseSensitive(tc, "volumeMounts")) {
        if (strcmp(str_of(n, "name"), str_of(pm, "name")) == 0 &&
            strcmp(str_of(n, "mountPath"), str_of(pm, "mountPath")) == 0 &&
            strcmp(str_of(n, "subPath"), str_of(pm, "subPath")) == 0 &&
            strcmp(str_of(n, "subPathExpr"), str_of(pm, "subPathExpr")) == 0)
            continue; /* the claim's mount itself */
        if (datamnt_below(str_of(n, "mountPath"), str_of(pm, "mountPath"))) {
            snprintf(why, size,
                     "its container %s would mount volume %s at %s, over the data pod %s keeps "
                     "on claim volume %s at %s",
                     ctr, str_of(n, "name"), str_of(n, "mountPath"), pod, str_of(pm, "name"),
                     str_of(pm, "mountPath"));
            return 0;
        }
    }
    return 1;
}

int datamnt_adopt_problem(const cJSON *sts, const cJSON *pods, char *why, size_t size)
{
    const char *name = lookup_meta_str(sts, "name");
    char want[3 * LOOKUP_NAME_MAX + 32];
    const cJSON *p, *pc, *pm, *v;
    int64_t ord;

    cJSON_ArrayForEach (p, pods) {
        const char *pod = lookup_meta_str(p, "name");

        if (!lookup_pod_ordinal(pod, name, &ord))
            continue;
        cJSON_ArrayForEach (pc, kjson_get_arr(p, "spec.containers")) {
            cJSON_ArrayForEach (pm, cJSON_GetObjectItemCaseSensitive(pc, "volumeMounts")) {
                const char *claim;

                v = datamnt_named(kjson_get_arr(p, "spec.volumes"), str_of(pm, "name"));
                if (!v || !(claim = kjson_get_str(v, "persistentVolumeClaim.claimName")))
                    continue;
                snprintf(want, sizeof(want), "%s-%s-%lld", str_of(pm, "name"), name,
                         (long long)ord);
                if (!datamnt_claim_volume(sts, str_of(pm, "name")) || strcmp(claim, want) != 0) {
                    snprintf(why, size,
                             "pod %s keeps its data on claim %s (volume %s), which no "
                             "volumeClaimTemplate of it gives member %lld: it would roll the pod "
                             "onto another claim",
                             pod, claim, str_of(pm, "name"), (long long)ord);
                    return 1;
                }
                if (!keeps(datamnt_container(sts, str_of(pc, "name")), pm, why, size, pod,
                           str_of(pc, "name")))
                    return 1;
            }
        }
    }
    return 0;
}

/*
 * The claim template T of claim name n when n is "<T>-<sts>-<ordinal>" (T not empty, the
 * ordinal decimal without a leading zero) into t (size bytes), *ord set: 1; else 0.
 */
static int member_claim(const char *n, const char *sts, char *t, size_t size, int64_t *ord)
{
    const char *d = strrchr(n, '-'), *p;
    size_t ls = strlen(sts), lt;
    int64_t v = 0;

    if (!d || !d[1] || (d[1] == '0' && d[2]))
        return 0;
    for (p = d + 1; *p; p++) {
        if (*p < '0' || *p > '9' || v > INT32_MAX / 10)
            return 0;
        v = v * 10 + (*p - '0');
    }
    if ((size_t)(d - n) < ls + 2 || strncmp(d - ls, sts, ls) != 0 || d[-(long)ls - 1] != '-')
        return 0;
    lt = (size_t)(d - n) - ls - 1;
    if (lt == 0 || lt >= size)
        return 0;
    memcpy(t, n, lt);
    t[lt] = '\0';
    *ord = v;
    return 1;
}

/*
 * Whether "<t>-<sts>" splits as "<T'>-<S'>" another way (T' and S' not empty): the claim name
 * is then also another StatefulSet's member claim.
 */
static int ambiguous(const char *claim, size_t lt, const char *sts)
{
    size_t n = lt + 1 + strlen(sts), j;

    for (j = 1; j + 1 < n; j++) {
        if (j != lt && claim[j] == '-' && claim[j - 1] != '-' && claim[j + 1] != '-')
            return 1;
    }
    return 0;
}

/* True when reference r is of kind (apiVersion in group, "" the core group) named name. */
static int ref_is(const cJSON *r, const char *group, const char *kind, const char *name)
{
    const char *av = str_of(r, "apiVersion"), *sl = strchr(av, '/');
    size_t lg = sl ? (size_t)(sl - av) : 0;

    return strcmp(str_of(r, "kind"), kind) == 0 && strcmp(str_of(r, "name"), name) == 0 &&
           strlen(group) == lg && strncmp(av, group, lg) == 0;
}

/*
 * Whether claim c says it is a member claim of StatefulSet sts (named name) of Etcd etcd,
 * member ord: an owner reference to StatefulSet name, Etcd etcd or Pod <name>-<ord>, label
 * app.kubernetes.io/part-of or instance naming etcd, or every label of sts's
 * spec.selector.matchLabels (not empty) on it (the StatefulSet controller puts them there).
 */
static int claim_ours(const cJSON *c, const cJSON *sts, const char *name, const char *etcd,
                      int64_t ord)
{
    const cJSON *r, *l, *labels = kjson_get_obj(c, "metadata.labels");
    const cJSON *sel = kjson_get_obj(sts, "spec.selector.matchLabels");
    char pod[LOOKUP_NAME_MAX + 24];
    int all = sel && sel->child;

    snprintf(pod, sizeof(pod), "%s-%lld", name, (long long)ord);
    cJSON_ArrayForEach (r, kjson_get_arr(c, "metadata.ownerReferences")) {
        if (ref_is(r, "apps", "StatefulSet", name) ||
            ref_is(r, "druid.gardener.cloud", "Etcd", etcd) || ref_is(r, "", "Pod", pod))
            return 1;
    }
    if (strcmp(str_of(labels, LOOKUP_LABEL_PART_OF), etcd) == 0 ||
        strcmp(str_of(labels, "instance"), etcd) == 0)
        return 1;
    cJSON_ArrayForEach (l, sel) {
        const char *v = cJSON_GetStringValue(l);

        all &= v && strcmp(str_of(labels, l->string), v) == 0;
    }
    return all;
}

/*
 * Whether claim c, "<t>-<name>-<ord>" with t no volumeClaimTemplate of sts, is left out of
 * the members whose pods are gone: its name is also another StatefulSet's member claim, it
 * carries labels or owner references (the StatefulSet controller labels every claim it
 * makes), and none of them says it is this StatefulSet's or this Etcd's.
 */
static int elsewhere(const cJSON *c, const cJSON *sts, const char *name, const char *etcd,
                     const char *t, int64_t ord)
{
    const char *claim = lookup_meta_str(c, "name");
    const cJSON *labels = kjson_get_obj(c, "metadata.labels");
    const cJSON *refs = kjson_get_arr(c, "metadata.ownerReferences");

    if (datamnt_claim_volume(sts, t) || !ambiguous(claim, strlen(t), name))
        return 0;
    if (!(labels && labels->child) && !(refs && refs->child))
        return 0; /* nothing says whose it is */
    return !claim_ours(c, sts, name, etcd, ord);
}

cJSON *datamnt_claim_pods(const cJSON *sts, const char *etcd, const cJSON *pvcs, const cJSON *pods)
{
    const char *name = lookup_meta_str(sts, "name");
    char t[LOOKUP_NAME_MAX + 1], text[6 * LOOKUP_NAME_MAX + 512];
    cJSON *out = cJSON_CreateArray(), *doc;
    const cJSON *c, *p;
    int64_t ord, o;

    cJSON_ArrayForEach (c, pvcs) {
        const char *claim = lookup_meta_str(c, "name");
        int running = 0;

        if (!out || lookup_meta_deleting(c) || strlen(claim) > LOOKUP_NAME_MAX ||
            !member_claim(claim, name, t, sizeof(t), &ord) ||
            elsewhere(c, sts, name, etcd ? etcd : name, t, ord))
            continue;
        cJSON_ArrayForEach (p, pods)
            running |= lookup_pod_ordinal(lookup_meta_str(p, "name"), name, &o) && o == ord;
        if (running)
            continue;
        /* names the API server validated (DNS labels and subdomains): no quoting needed */
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"name\":\"%s-%lld\"},\"spec\":{\"volumes\":[{\"name\":"
                 "\"%s\",\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}],\"containers\":["
                 "{\"name\":\"etcd\",\"volumeMounts\":[{\"name\":\"%s\",\"mountPath\":\"%s\"}]},"
                 "{\"name\":\"backup-restore\",\"volumeMounts\":[{\"name\":\"%s\",\"mountPath\":"
                 "\"%s\"}]}]}}",
                 name, (long long)ord, t, claim, t, DATAMNT_DRUID_PATH, t, DATAMNT_DRUID_PATH);
        if (!(doc = cJSON_Parse(text)) || !cJSON_AddItemToArray(out, doc)) {
            cJSON_Delete(doc);
            cJSON_Delete(out);
            return NULL;
        }
    }
    return out;
}

/* Copy member key of src into dst when present; 0, -1 when out of memory. */
static int copy_key(cJSON *dst, const cJSON *src, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, key);
    cJSON *d;

    if (!v)
        return 0;
    if (!(d = cJSON_Duplicate(v, 1)) || !cJSON_AddItemToObject(dst, key, d)) {
        cJSON_Delete(d);
        return -1;
    }
    return 0;
}

/* An object at path (created) of root; NULL when out of memory or not an object. */
static cJSON *obj_at(cJSON *root, const char *key)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(root, key);

    if (!o)
        return cJSON_AddObjectToObject(root, key);
    return cJSON_IsObject(o) ? o : NULL;
}

/* The names of the claim templates of sts into spec. */
static int project_claims(cJSON *spec, const cJSON *sts)
{
    const cJSON *t, *ts = kjson_get_arr(sts, "spec.volumeClaimTemplates");
    cJSON *arr, *o, *meta;

    if (!ts)
        return 0;
    if (!(arr = cJSON_AddArrayToObject(spec, "volumeClaimTemplates")))
        return -1;
    cJSON_ArrayForEach (t, ts) {
        if (!(o = cJSON_CreateObject()) || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            return -1;
        }
        if (!(meta = cJSON_AddObjectToObject(o, "metadata")) ||
            copy_key(meta, cJSON_GetObjectItemCaseSensitive(t, "metadata"), "name"))
            return -1;
    }
    return 0;
}

int datamnt_project(cJSON *root, const cJSON *sts)
{
    static const char *const keys[] = { "name", "mountPath", "subPath", "subPathExpr" };
    const cJSON *c = datamnt_container(sts, "etcd"), *m;
    cJSON *spec, *ctrs, *ctr, *mounts, *o;
    size_t k;

    if (!c && !kjson_get_arr(sts, "spec.volumeClaimTemplates"))
        return 0;
    if (!(spec = obj_at(root, "spec")) || project_claims(spec, sts))
        return -1;
    if (!c)
        return 0;
    if (!(spec = obj_at(spec, "template")) || !(spec = obj_at(spec, "spec")) ||
        !(ctrs = cJSON_AddArrayToObject(spec, "containers")) || !(ctr = cJSON_CreateObject()) ||
        !cJSON_AddItemToArray(ctrs, ctr) || copy_key(ctr, c, "name") ||
        !(mounts = cJSON_AddArrayToObject(ctr, "volumeMounts")))
        return -1;
    cJSON_ArrayForEach (m, kjson_get_arr(c, "volumeMounts")) {
        if (!(o = cJSON_CreateObject()) || !cJSON_AddItemToArray(mounts, o)) {
            cJSON_Delete(o);
            return -1;
        }
        for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            if (copy_key(o, m, keys[k]))
                return -1;
        }
    }
    return 0;
}

int datamnt_plain(const char *path)
{
    const char *s = path;

    if (*path != '/')
        return 0;
    while (*s) {
        size_t n;

        while (*s == '/')
            s++;
        n = strcspn(s, "/");
        if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return 0;
        s += n;
    }
    return 1;
}
