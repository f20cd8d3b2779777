/* podval - kube-apiserver's Pod volume and volume mount rules (see podval.h). */
#include "tests/kube-sim/podval.h"

#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/kube-sim/govalue.h"
#include "tests/kube-sim/obj.h"
#include "tests/kube-sim/validate.h"

/* Errors found so far: kept up to max, all counted. */
struct found {
    struct ksim_fielderr *errs;
    size_t max, n;
};

/* Add "<field>: <type>[: <quoted value>][: <detail>]" (value NULL: none, as field.Required). */
static void add(struct found *f, const char *field, const char *reason, const char *type,
                const char *value, const char *detail)
{
    struct ksim_fielderr *fe;
    struct ksim_text t;

    if (f->n++ >= f->max)
        return;
    fe = &f->errs[f->n - 1];
    snprintf(fe->field, sizeof(fe->field), "%s", field);
    snprintf(fe->reason, sizeof(fe->reason), "%s", reason);
    ksim_text_init(&t, fe->body, sizeof(fe->body));
    ksim_text_printf(&t, "%s", type);
    if (value) {
        ksim_text_printf(&t, ": ");
        ksim_goval_quote(&t, value);
    }
    if (detail && *detail)
        ksim_text_printf(&t, ": %s", detail);
}

/* A string field, "" when absent or not a string (as Go's zero value). */
static const char *str_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsString(v) ? v->valuestring : "";
}

/* 1 when item i of arr has the string field key equal to s, for one of the first n items. */
static int seen_before(const cJSON *arr, int n, const char *key, const char *s, const int *valid)
{
    int i;

    for (i = 0; i < n; i++)
        if ((!valid || valid[i]) && strcmp(str_of(cJSON_GetArrayItem(arr, i), key), s) == 0)
            return 1;
    return 0;
}

/*
 * ValidateVolumes: valid[i] is 1 for each volume without error (those mounts may name);
 * at most nvalid volumes are judged, the others count as invalid.
 */
static void check_volumes(const cJSON *vols, const char *prefix, int *valid, int nvalid,
                          struct found *f)
{
    char field[256], why[512];
    const char *name;
    size_t before;
    int i, n = cJSON_GetArraySize(vols);

    for (i = 0; i < n && i < nvalid; i++) {
        name = str_of(cJSON_GetArrayItem(vols, i), "name");
        snprintf(field, sizeof(field), "%s.volumes[%d].name", prefix, i);
        before = f->n;
        if (!*name)
            add(f, field, "FieldValueRequired", "Required value", NULL, NULL);
        else if (!ksim_valid_dns1123_label(name, why, sizeof(why)))
            add(f, field, "FieldValueInvalid", "Invalid value", name, why);
        if (seen_before(vols, i, "name", name, valid))
            add(f, field, "FieldValueDuplicate", "Duplicate value", name, NULL);
        valid[i] = f->n == before;
    }
}

/* ValidateVolumeMounts of one container at cpath. */
static void check_mounts(const cJSON *c, const char *cpath, const cJSON *vols, const int *valid,
                         int nvalid, struct found *f)
{
    const cJSON *mounts = cJSON_GetObjectItemCaseSensitive(c, "volumeMounts");
    const cJSON *m;
    char field[256];
    const char *name, *path;
    int j, n = cJSON_GetArraySize(mounts), nv = cJSON_GetArraySize(vols);

    for (j = 0; j < n; j++) {
        m = cJSON_GetArrayItem(mounts, j);
        name = str_of(m, "name");
        path = str_of(m, "mountPath");
        snprintf(field, sizeof(field), "%s.volumeMounts[%d].name", cpath, j);
        if (!*name)
            add(f, field, "FieldValueRequired", "Required value", NULL, NULL);
        if (!seen_before(vols, nv < nvalid ? nv : nvalid, "name", name, valid))
            add(f, field, "FieldValueNotFound", "Not found", name, NULL);
        snprintf(field, sizeof(field), "%s.volumeMounts[%d].mountPath", cpath, j);
        if (!*path)
            add(f, field, "FieldValueRequired", "Required value", NULL, NULL);
        if (seen_before(mounts, j, "mountPath", path, NULL))
            add(f, field, "FieldValueInvalid", "Invalid value", path, "must be unique");
    }
}

static void check_containers(const cJSON *spec, const char *prefix, const char *key,
                             const cJSON *vols, const int *valid, int nvalid, struct found *f)
{
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(spec, key);
    char cpath[128];
    int i, n = cJSON_GetArraySize(cs);

    for (i = 0; i < n; i++) {
        snprintf(cpath, sizeof(cpath), "%s.%s[%d]", prefix, key, i);
        check_mounts(cJSON_GetArrayItem(cs, i), cpath, vols, valid, nvalid, f);
    }
}

/* Volumes judged at most (a Pod's volumes are few; more are counted invalid). */
#define VOLUMES_MAX 256

size_t ksim_podval_spec(const cJSON *spec, const char *prefix, struct ksim_fielderr *errs,
                        size_t max)
{
    struct found f = { errs, max, 0 };
    const cJSON *vols;
    int valid[VOLUMES_MAX] = { 0 };

    if (!cJSON_IsObject(spec))
        return 0;
    vols = cJSON_GetObjectItemCaseSensitive(spec, "volumes");
    check_volumes(vols, prefix, valid, VOLUMES_MAX, &f);
    check_containers(spec, prefix, "containers", vols, valid, VOLUMES_MAX, &f);
    check_containers(spec, prefix, "initContainers", vols, valid, VOLUMES_MAX, &f);
    return f.n;
}

int ksim_podval_validate(const struct ksim_rtype *rt, const cJSON *obj, struct ksim_apierr *e)
{
    struct ksim_fielderr errs[KSIM_PODVAL_MAX];
    const char *name = ksim_obj_meta_str(obj, "name");
    size_t n = ksim_podval_spec(kjson_get(obj, "spec"), "spec", errs, KSIM_PODVAL_MAX);

    if (!n)
        return 0;
    return ksim_apierr_invalid_list(e, rt->group, rt->kind, name ? name : "", errs,
                                    n < KSIM_PODVAL_MAX ? n : KSIM_PODVAL_MAX);
}
