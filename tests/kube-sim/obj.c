#include "tests/kube-sim/obj.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/tlsx.h"
#include "tests/kube-sim/kinds.h"
#include "tests/kube-sim/sel.h"

void ksim_obj_now(char out[21])
{
    if (ktime_format(time(NULL), out) != KERR_OK)
        snprintf(out, 21, "1970-01-01T00:00:00Z");
}

cJSON *ksim_obj_meta(cJSON *obj)
{
    cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    if (cJSON_IsObject(md))
        return md;
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "metadata");
    return cJSON_AddObjectToObject(obj, "metadata");
}

const char *ksim_obj_meta_str(const cJSON *obj, const char *field)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(md, field);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int ksim_obj_set_meta_str(cJSON *obj, const char *field, const char *value)
{
    cJSON *md = ksim_obj_meta(obj);

    if (!md)
        return -1;
    cJSON_DeleteItemFromObjectCaseSensitive(md, field);
    if (value && !cJSON_AddStringToObject(md, field, value))
        return -1;
    return 0;
}

const cJSON *ksim_obj_labels(const cJSON *obj)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(md, "labels");

    return cJSON_IsObject(l) ? l : NULL;
}

static const cJSON *finalizers(const cJSON *obj)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    return cJSON_GetObjectItemCaseSensitive(md, "finalizers");
}

int ksim_obj_has_finalizer(const cJSON *obj, const char *name)
{
    const cJSON *f;

    cJSON_ArrayForEach (f, finalizers(obj)) {
        if (cJSON_IsString(f) && strcmp(f->valuestring, name) == 0)
            return 1;
    }
    return 0;
}

int ksim_obj_finalizer_count(const cJSON *obj)
{
    const cJSON *f = finalizers(obj);

    return cJSON_IsArray(f) ? cJSON_GetArraySize(f) : 0;
}

int ksim_obj_add_finalizer(cJSON *obj, const char *name)
{
    cJSON *md = ksim_obj_meta(obj);
    cJSON *f = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
    cJSON *s;

    if (!md)
        return -1;
    if (ksim_obj_has_finalizer(obj, name))
        return 0;
    if (!cJSON_IsArray(f)) {
        cJSON_DeleteItemFromObjectCaseSensitive(md, "finalizers");
        f = cJSON_AddArrayToObject(md, "finalizers");
    }
    s = cJSON_CreateString(name);
    if (!f || !s || !cJSON_AddItemToArray(f, s)) {
        cJSON_Delete(s);
        return -1;
    }
    return 0;
}

void ksim_obj_remove_finalizer(cJSON *obj, const char *name)
{
    cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    cJSON *f = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
    int i;

    for (i = cJSON_GetArraySize(f) - 1; i >= 0; i--) {
        cJSON *it = cJSON_GetArrayItem(f, i);

        if (cJSON_IsString(it) && strcmp(it->valuestring, name) == 0)
            cJSON_DeleteItemFromArray(f, i);
    }
    if (f && cJSON_GetArraySize(f) == 0)
        cJSON_DeleteItemFromObjectCaseSensitive(md, "finalizers");
}

static int hexval(char c)
{
    return isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10) & 15;
}

int ksim_obj_generate_name(const char *prefix, char *out, size_t size)
{
    /* k8s.io/apiserver names.SimpleNameGenerator: 5 chars from an alphabet without vowels. */
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    char hex[11], suffix[6];
    size_t i, plen = strlen(prefix);

    if (crypto_random_hex(5, hex, sizeof(hex), NULL) != KERR_OK)
        return -1;
    for (i = 0; i < 5; i++)
        suffix[i] = alphabet[(hexval(hex[2 * i]) * 16 + hexval(hex[2 * i + 1])) %
                             (int)(sizeof(alphabet) - 1)];
    suffix[5] = '\0';
    if (plen > 58)
        plen = 58;
    snprintf(out, size, "%.*s%s", (int)plen, prefix, suffix);
    return 0;
}

const cJSON *ksim_obj_at_dotpath(const cJSON *obj, const char *path)
{
    const cJSON *cur = obj;
    char seg[128];
    size_t n;

    if (!path)
        return NULL;
    while (cur && *path) {
        if (*path == '.')
            path++;
        n = strcspn(path, ".");
        if (n == 0 || n >= sizeof(seg))
            return NULL;
        memcpy(seg, path, n);
        seg[n] = '\0';
        cur = cJSON_IsObject(cur) ? cJSON_GetObjectItemCaseSensitive(cur, seg) : NULL;
        path += n;
    }
    return cur;
}

int ksim_obj_set_dotpath(cJSON *obj, const char *path, cJSON *value)
{
    cJSON *cur = obj, *next;
    char seg[128];
    size_t n;

    while (value && cur && *path) {
        if (*path == '.')
            path++;
        n = strcspn(path, ".");
        if (n == 0 || n >= sizeof(seg))
            break;
        memcpy(seg, path, n);
        seg[n] = '\0';
        path += n;
        if (!*path) {
            cJSON_DeleteItemFromObjectCaseSensitive(cur, seg);
            return cJSON_AddItemToObject(cur, seg, value) ? 0 : -1;
        }
        next = cJSON_GetObjectItemCaseSensitive(cur, seg);
        if (!cJSON_IsObject(next)) {
            cJSON_DeleteItemFromObjectCaseSensitive(cur, seg);
            next = cJSON_AddObjectToObject(cur, seg);
        }
        cur = next;
    }
    cJSON_Delete(value);
    return -1;
}

/* Copy of obj without the named top-level keys and metadata fields. */
static cJSON *strip(const cJSON *obj, int drop_meta, int drop_status)
{
    cJSON *c = cJSON_Duplicate(obj, 1);
    cJSON *md;

    if (!c)
        return NULL;
    md = cJSON_GetObjectItemCaseSensitive(c, "metadata");
    if (drop_meta) {
        cJSON_DeleteItemFromObjectCaseSensitive(c, "metadata");
    } else {
        cJSON_DeleteItemFromObjectCaseSensitive(md, "resourceVersion");
        cJSON_DeleteItemFromObjectCaseSensitive(md, "managedFields");
    }
    if (drop_status)
        cJSON_DeleteItemFromObjectCaseSensitive(c, "status");
    return c;
}

static int differs(const cJSON *a, const cJSON *b, int drop_meta, int drop_status)
{
    cJSON *x = strip(a, drop_meta, drop_status);
    cJSON *y = strip(b, drop_meta, drop_status);
    int d = !x || !y || !cJSON_Compare(x, y, 1);

    cJSON_Delete(x);
    cJSON_Delete(y);
    return d;
}

int ksim_obj_changed(const cJSON *a, const cJSON *b)
{
    return differs(a, b, 0, 0);
}

long ksim_obj_spec_replicas(const struct ksim_rtype *rt, const cJSON *obj)
{
    const cJSON *r = ksim_obj_at_dotpath(obj, rt->scale_spec_path);

    if (cJSON_IsNumber(r))
        return (long)r->valuedouble;
    return rt->custom ? 0 : 1;
}

int ksim_obj_prepare_create(const struct ksim_rtype *rt, cJSON *obj)
{
    char uid[CRYPTO_UUID_LEN + 1], now[21];
    cJSON *md = ksim_obj_meta(obj);

    if (!md || crypto_uuid4(uid, NULL) != KERR_OK)
        return -1;
    ksim_obj_now(now);
    cJSON_DeleteItemFromObjectCaseSensitive(md, "resourceVersion");
    cJSON_DeleteItemFromObjectCaseSensitive(md, "deletionTimestamp");
    cJSON_DeleteItemFromObjectCaseSensitive(md, "deletionGracePeriodSeconds");
    cJSON_DeleteItemFromObjectCaseSensitive(md, "selfLink");
    cJSON_DeleteItemFromObjectCaseSensitive(md, "generation");
    if (ksim_obj_set_meta_str(obj, "uid", uid) != 0 ||
        ksim_obj_set_meta_str(obj, "creationTimestamp", now) != 0)
        return -1;
    if (rt->tracks_generation && !cJSON_AddNumberToObject(md, "generation", 1))
        return -1;
    if (rt->has_status && ksim_kinds_initial_status(rt, obj) != 0)
        return -1;
    return ksim_kinds_default(rt, obj) | ksim_kinds_maintain(rt, obj);
}

/* Replace obj's top-level key with a copy of old's (or drop it when old has none). */
static int keep_from(cJSON *obj, const cJSON *old, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(old, key);
    cJSON *copy = v ? cJSON_Duplicate(v, 1) : NULL;

    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    if (!v)
        return 0;
    return copy && cJSON_AddItemToObject(obj, key, copy) ? 0 : (cJSON_Delete(copy), -1);
}

/* /status: everything but status from old. */
static int status_only(cJSON *obj, const cJSON *old)
{
    const cJSON *it;
    cJSON *copy;

    for (it = old ? old->child : NULL; it; it = it->next) {
        if (strcmp(it->string, "status") == 0)
            continue;
        copy = cJSON_Duplicate(it, 1);
        cJSON_DeleteItemFromObjectCaseSensitive(obj, it->string);
        if (!copy || !cJSON_AddItemToObject(obj, it->string, copy)) {
            cJSON_Delete(copy);
            return -1;
        }
    }
    return 0;
}

static int keep_meta(cJSON *obj, const cJSON *old, const char *field)
{
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(old, "metadata"), field);
    cJSON *md = ksim_obj_meta(obj);
    cJSON *copy = v ? cJSON_Duplicate(v, 1) : NULL;

    if (!md)
        return -1;
    cJSON_DeleteItemFromObjectCaseSensitive(md, field);
    if (!v)
        return 0;
    return copy && cJSON_AddItemToObject(md, field, copy) ? 0 : (cJSON_Delete(copy), -1);
}

/* A finalizer of obj that old lacks, when old is being deleted; NULL otherwise. */
static const char *new_finalizer(const cJSON *old, const cJSON *obj)
{
    const cJSON *f;

    if (!ksim_obj_meta_str(old, "deletionTimestamp"))
        return NULL;
    cJSON_ArrayForEach (f, finalizers(obj)) {
        if (cJSON_IsString(f) && !ksim_obj_has_finalizer(old, f->valuestring))
            return f->valuestring;
    }
    return NULL;
}

static int bump_generation(const struct ksim_rtype *rt, const cJSON *old, cJSON *obj)
{
    const cJSON *g = kjson_get(old, "metadata.generation");
    double gen = cJSON_IsNumber(g) ? g->valuedouble : 0;
    cJSON *md = ksim_obj_meta(obj);

    if (!md)
        return -1;
    cJSON_DeleteItemFromObjectCaseSensitive(md, "generation");
    if (!rt->tracks_generation && !cJSON_IsNumber(g))
        return 0;
    if (differs(old, obj, 1, 1))
        gen += 1;
    return cJSON_AddNumberToObject(md, "generation", gen) ? 0 : -1;
}

int ksim_obj_prepare_update(const struct ksim_rtype *rt, const char *sub, const cJSON *old,
                            cJSON *obj, struct ksim_apierr *e)
{
    const char *uid = ksim_obj_meta_str(obj, "uid");
    const char *old_uid = ksim_obj_meta_str(old, "uid");
    const char *fin;
    char detail[512];
    int rc = 0;

    if (uid && *uid && old_uid && strcmp(uid, old_uid) != 0) {
        snprintf(detail, sizeof(detail), "metadata.uid: Invalid value: \"%s\": field is immutable",
                 uid);
        return ksim_apierr_invalid(e, rt->group, rt->kind, ksim_obj_meta_str(old, "name"),
                                   "metadata.uid", "FieldValueInvalid", detail);
    }
    if (sub && strcmp(sub, "status") == 0)
        rc |= status_only(obj, old);
    else if (rt->has_status)
        rc |= keep_from(obj, old, "status");
    rc |= keep_meta(obj, old, "uid") | keep_meta(obj, old, "creationTimestamp") |
          keep_meta(obj, old, "deletionTimestamp") |
          keep_meta(obj, old, "deletionGracePeriodSeconds");
    fin = new_finalizer(old, obj);
    if (fin) {
        snprintf(detail, sizeof(detail),
                 "metadata.finalizers: Forbidden: no new finalizers can be added if the object "
                 "is being deleted, found new finalizers []string{\"%s\"}",
                 fin);
        return ksim_apierr_invalid(e, rt->group, rt->kind, ksim_obj_meta_str(old, "name"),
                                   "metadata.finalizers", "FieldValueForbidden", detail);
    }
    rc |=
        ksim_kinds_default(rt, obj) | bump_generation(rt, old, obj) | ksim_kinds_maintain(rt, obj);
    if (rc)
        return ksim_apierr_internal(e, "out of memory");
    return 0;
}

int ksim_obj_scale_of(const struct ksim_rtype *rt, const cJSON *obj, cJSON **out)
{
    cJSON *sc = cJSON_CreateObject(), *md, *spec, *status;
    const cJSON *st = ksim_obj_at_dotpath(obj, rt->scale_status_path);
    const cJSON *selp =
        rt->scale_selector_path ? ksim_obj_at_dotpath(obj, rt->scale_selector_path) : NULL;
    struct ksim_sel *sel = NULL;
    struct buf sb;
    const char *f[] = { "name", "namespace", "uid", "resourceVersion", "creationTimestamp" };
    size_t i;
    int rc = -1;

    *out = NULL;
    buf_init(&sb, 64 * 1024);
    if (!sc || !rt->has_scale || !cJSON_AddStringToObject(sc, "kind", "Scale") ||
        !cJSON_AddStringToObject(sc, "apiVersion", "autoscaling/v1") ||
        !(md = cJSON_AddObjectToObject(sc, "metadata")) ||
        !(spec = cJSON_AddObjectToObject(sc, "spec")) ||
        !(status = cJSON_AddObjectToObject(sc, "status")))
        goto out;
    for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        if (ksim_obj_meta_str(obj, f[i]) &&
            !cJSON_AddStringToObject(md, f[i], ksim_obj_meta_str(obj, f[i])))
            goto out;
    if (!cJSON_AddNumberToObject(spec, "replicas", (double)ksim_obj_spec_replicas(rt, obj)) ||
        !cJSON_AddNumberToObject(status, "replicas", cJSON_IsNumber(st) ? st->valuedouble : 0))
        goto out;
    if (!rt->custom &&
        ksim_sel_from_json(kjson_get(obj, "spec.selector"), 1, &sel, NULL) == KERR_OK &&
        !sel->nothing && ksim_sel_to_string(sel, &sb) != KERR_OK)
        goto out;
    if (rt->custom && cJSON_IsString(selp) && buf_appends(&sb, selp->valuestring) != KERR_OK)
        goto out;
    if (sb.len && !cJSON_AddStringToObject(status, "selector", buf_str(&sb)))
        goto out;
    *out = sc;
    sc = NULL;
    rc = 0;
out:
    ksim_sel_free(sel);
    buf_release(&sb);
    cJSON_Delete(sc);
    return rc;
}

int ksim_obj_scale_apply(const struct ksim_rtype *rt, const cJSON *scale, cJSON *obj,
                         const char *name, struct ksim_apierr *e)
{
    const cJSON *r = kjson_get(scale, "spec.replicas");
    char detail[256];

    if (!cJSON_IsNumber(r) || r->valuedouble < 0) {
        snprintf(detail, sizeof(detail),
                 "spec.replicas: Invalid value: %.0f: must be greater than or equal to 0",
                 cJSON_IsNumber(r) ? r->valuedouble : -1.0);
        return ksim_apierr_invalid(e, "autoscaling", "Scale", name, "spec.replicas",
                                   "FieldValueInvalid", detail);
    }
    if (ksim_obj_set_dotpath(obj, rt->scale_spec_path, cJSON_CreateNumber(r->valuedouble)) != 0)
        return ksim_apierr_internal(e, "cannot set %s", rt->scale_spec_path);
    return 0;
}
