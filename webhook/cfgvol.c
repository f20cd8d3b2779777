/* cfgvol - where an Etcd's containers read etcd's configuration; see cfgvol.h. */
#include "webhook/cfgvol.h"

#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "webhook/datamnt.h"

/* The string member key of obj, "" when absent or not a string. BORROWED. */
static const char *str_of(const cJSON *obj, const char *key)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));

    return v ? v : "";
}

/* True when member key of obj is absent, null or "". */
static int unset(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    const char *s = cJSON_GetStringValue(v);

    return !v || cJSON_IsNull(v) || (s && !*s);
}

/* True when volume v is configMap cm projecting key etcd.conf.yaml at etcd.conf.yaml only. */
static int config_volume(const cJSON *v, const char *cm)
{
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(v, "configMap"), *k, *items, *it;

    cJSON_ArrayForEach (k, v) {
        if (strcmp(k->string, "name") != 0 && strcmp(k->string, "configMap") != 0)
            return 0; /* another source besides: not understood */
    }
    if (!cJSON_IsObject(src) || strcmp(str_of(src, "name"), cm) != 0)
        return 0;
    items = cJSON_GetObjectItemCaseSensitive(src, "items");
    if (!items || cJSON_IsNull(items))
        return 1;
    if (!cJSON_IsArray(items) || cJSON_GetArraySize(items) != 1)
        return 0;
    it = cJSON_GetArrayItem(items, 0);
    return strcmp(str_of(it, "key"), CFGVOL_KEY) == 0 &&
           strcmp(str_of(it, "path"), CFGVOL_KEY) == 0;
}

/*
 * Container c of sts reads the configuration from ConfigMap cm only: 1, else 0 with why. Its
 * mounts at, over or below the configuration's file are judged; with above 0, only those at or
 * below the configuration's directory (container etcd: a mount above it, such as one at
 * /var/etcd, is not its configuration).
 */
static int mounts_ok(const cJSON *sts, const cJSON *c, const char *cm, int above, char *why,
                     size_t size)
{
    const cJSON *m, *v;
    const char *p, *ctr = str_of(c, "name");

    cJSON_ArrayForEach (m, cJSON_GetObjectItemCaseSensitive(c, "volumeMounts")) {
        p = str_of(m, "mountPath");
        /* a path not plain may resolve anywhere: judged as at the configuration */
        if (datamnt_plain(p) && !(above && datamnt_below(CFGVOL_FILE, p)) &&
            !datamnt_below(p, above ? CFGVOL_FILE : CFGVOL_DIR))
            continue;
        v = datamnt_named(kjson_get_arr(sts, "spec.template.spec.volumes"), str_of(m, "name"));
        if (datamnt_plain(p) && datamnt_below(p, CFGVOL_DIR) && datamnt_below(CFGVOL_DIR, p) &&
            unset(m, "subPath") && unset(m, "subPathExpr") && v && config_volume(v, cm))
            continue;
        snprintf(why, size,
                 "its container %s would mount volume %s at %s, where it reads etcd's "
                 "configuration %s, and that is not key %s of ConfigMap %s mounted at %s as "
                 "etcd-druid mounts it (volume configMap %s, items absent or key %s at path %s, "
                 "no sub path, nothing else at or over it)",
                 ctr, str_of(m, "name"), p, CFGVOL_FILE, CFGVOL_KEY, cm, CFGVOL_DIR, cm, CFGVOL_KEY,
                 CFGVOL_KEY);
        return 0;
    }
    return 1;
}

/* Container c (backup-restore) takes the configuration's path as built in: 1, else 0. */
static int env_ok(const cJSON *c, char *why, size_t size)
{
    const cJSON *e, *from = cJSON_GetObjectItemCaseSensitive(c, "envFrom");

    if (from && !cJSON_IsNull(from) && !(cJSON_IsArray(from) && !from->child)) {
        snprintf(why, size,
                 "its container %s would take environment variables from envFrom, which may set "
                 "ETCD_CONF, the path of the etcd configuration it reads (%s unset)",
                 str_of(c, "name"), CFGVOL_FILE);
        return 0;
    }
    cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(c, "env")) {
        if (strcmp(str_of(e, "name"), "ETCD_CONF") != 0)
            continue;
        if (unset(e, "valueFrom") && strcmp(str_of(e, "value"), CFGVOL_FILE) == 0)
            continue;
        snprintf(why, size,
                 "its container %s would set ETCD_CONF, the path of the etcd configuration it "
                 "reads, to something else than %s",
                 str_of(c, "name"), CFGVOL_FILE);
        return 0;
    }
    return 1;
}

int cfgvol_problem(const cJSON *sts, const char *etcd, char *why, size_t size)
{
    char cm[LOOKUP_NAME_MAX + 16];
    const cJSON *c;

    snprintf(cm, sizeof(cm), "%.*s-config", LOOKUP_NAME_MAX, etcd);
    if ((c = datamnt_container(sts, "backup-restore")) &&
        (!env_ok(c, why, size) || !mounts_ok(sts, c, cm, 1, why, size)))
        return 1;
    if ((c = datamnt_container(sts, "etcd")) && !mounts_ok(sts, c, cm, 0, why, size))
        return 1;
    return 0;
}

int cfgvol_applies(const struct review_req *req)
{
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(req->object, "metadata"), "labels");
    const char *part =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, LOOKUP_LABEL_PART_OF));
    char why[4 * LOOKUP_NAME_MAX + 512];

    if ((req->op != REVIEW_OP_CREATE && req->op != REVIEW_OP_UPDATE) ||
        !member_is_kind(req, "apps", "StatefulSet") || !cJSON_IsObject(req->object))
        return 0;
    return cfgvol_problem(req->object, lookup_meta_str(req->object, "name"), why, sizeof(why)) ||
           (part && cfgvol_problem(req->object, part, why, sizeof(why)));
}

enum kerr cfgvol_judge(const struct review_req *req, const struct member_meta *m,
                       const struct lookup_etcd *etcd, struct review_resp *resp, int *decided)
{
    char why[4 * LOOKUP_NAME_MAX + 512];

    *decided = 0;
    if (!cfgvol_applies(req) || !m->part_of || etcd->deleting ||
        !cfgvol_problem(req->object, m->part_of, why, sizeof(why)))
        return KERR_OK;
    *decided = 1;
    return review_deny(resp,
                       "%s StatefulSet %s/%s of live Etcd %s is refused: %s. The backup sidecar "
                       "hands that file to etcd as written, and only key %s of ConfigMap "
                       "%s-config is judged where etcd keeps its data: another file there could "
                       "move etcd's data-dir, and each member's next start would run etcd on an "
                       "empty data directory. Mount the configuration as etcd-druid does",
                       req->op == REVIEW_OP_CREATE ? "creating" : "updating", m->ns, m->name,
                       m->part_of, why, CFGVOL_KEY, m->part_of);
}
