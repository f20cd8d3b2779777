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

/*
 * Container c mounts volume configMap cm at the configuration's directory as etcd-druid mounts it
 * (no sub path; the volume config_volume's): 1, else 0.
 */
static int serves(const cJSON *sts, const cJSON *c, const char *cm)
{
    const cJSON *m, *v;
    const char *p;

    cJSON_ArrayForEach (m, cJSON_GetObjectItemCaseSensitive(c, "volumeMounts")) {
        p = str_of(m, "mountPath");
        v = datamnt_named(kjson_get_arr(sts, "spec.template.spec.volumes"), str_of(m, "name"));
        if (datamnt_plain(p) && datamnt_below(p, CFGVOL_DIR) && datamnt_below(CFGVOL_DIR, p) &&
            unset(m, "subPath") && unset(m, "subPathExpr") && v && config_volume(v, cm))
            return 1;
    }
    return 0;
}

/* True when the string s names flag (after "-" or "--"), as "<flag>" or "<flag>=<value>". */
static int is_flag(const char *s, const char *flag, const char **value)
{
    size_t n = strlen(flag);

    *value = NULL;
    if (s[0] != '-')
        return 0;
    s += s[1] == '-' ? 2 : 1;
    if (strncmp(s, flag, n) != 0 || (s[n] && s[n] != '='))
        return 0;
    if (s[n] == '=')
        *value = s + n + 1;
    return 1;
}

/*
 * The configuration file container etcd names of its own into *path (NULL: none; etcd-druid's
 * etcd-wrapper takes it from the backup sidecar): etcd's flag --config-file in command or args,
 * or its variable ETCD_CONFIG_FILE. 0, or 1 with why when it cannot be told (the flag inside
 * another word, a value from valueFrom, envFrom that may set the variable).
 */
static int own_config(const cJSON *c, const char **path, char *why, size_t size)
{
    static const char *const lists[] = { "command", "args" };
    const cJSON *a, *e, *from = cJSON_GetObjectItemCaseSensitive(c, "envFrom");
    const char *s, *v;
    size_t i;
    int next = 0;

    *path = NULL;
    for (i = 0; i < 2; i++) {
        cJSON_ArrayForEach (a, cJSON_GetObjectItemCaseSensitive(c, lists[i])) {
            s = cJSON_GetStringValue(a);
            if (next) {
                *path = s ? s : "";
                next = 0;
            } else if (s && is_flag(s, "config-file", &v)) {
                *path = v;
                next = !v;
            } else if (s && (strstr(s, "config-file") || strstr(s, "ETCD_CONFIG_FILE"))) {
                snprintf(why, size,
                         "its container etcd would name etcd's configuration file in \"%.80s\", "
                         "which is not read here",
                         s);
                return 1;
            }
        }
    }
    if (next)
        *path = "";
    if (from && !cJSON_IsNull(from) && !(cJSON_IsArray(from) && !from->child)) {
        snprintf(why, size,
                 "its container etcd would take environment variables from envFrom, which may "
                 "set ETCD_CONFIG_FILE, the configuration file etcd reads");
        return 1;
    }
    cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(c, "env")) {
        if (strcmp(str_of(e, "name"), "ETCD_CONFIG_FILE") != 0)
            continue;
        if (!unset(e, "valueFrom")) {
            snprintf(why, size,
                     "its container etcd would take ETCD_CONFIG_FILE, the configuration file "
                     "etcd reads, from valueFrom");
            return 1;
        }
        *path = str_of(e, "value");
    }
    return 0;
}

/*
 * Container etcd reads etcd's configuration from key etcd.conf.yaml of ConfigMap cm only: from
 * the backup sidecar (br, NULL when the template has none) when it names no file of its own,
 * else from CFGVOL_FILE mounted in it as the sidecar must mount it. 1, else 0 with why.
 */
static int etcd_ok(const cJSON *sts, const cJSON *c, const cJSON *br, const char *cm, char *why,
                   size_t size)
{
    const char *path;

    if (own_config(c, &path, why, size))
        return 0;
    if (!path && br)
        return mounts_ok(sts, c, cm, 0, why, size);
    if (!path) {
        snprintf(why, size,
                 "its container etcd takes etcd's configuration from the backup sidecar, and the "
                 "pod template has no container backup-restore serving key %s of ConfigMap %s",
                 CFGVOL_KEY, cm);
        return 0;
    }
    if (!datamnt_plain(path) || !datamnt_below(path, CFGVOL_FILE) ||
        !datamnt_below(CFGVOL_FILE, path) || !serves(sts, c, cm)) {
        snprintf(why, size,
                 "its container etcd would read etcd's configuration from %.200s, and that is not "
                 "%s served by key %s of ConfigMap %s mounted at %s as etcd-druid mounts it",
                 path, CFGVOL_FILE, CFGVOL_KEY, cm, CFGVOL_DIR);
        return 0;
    }
    return mounts_ok(sts, c, cm, 1, why, size);
}

/*
 * Word s of container backup-restore's command or args leaves the configuration's path as built
 * in: not etcdbrctl's --config-file (its own configuration, which etcd-druid never passes and
 * which is not judged) nor ETCD_CONF set in a shell line. 1, else 0 with why.
 */
static int conf_word(const char *s, char *why, size_t size)
{
    if (!s || (!strstr(s, "config-file") && !strstr(s, "ETCD_CONF")))
        return 1;
    snprintf(why, size,
             "its container backup-restore would run with \"%.80s\": a configuration file "
             "etcd-druid never passes (etcdbrctl's --config-file) or ETCD_CONF, the path of the "
             "etcd configuration it reads (%s), set where it is not judged",
             s, CFGVOL_FILE);
    return 0;
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
    cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(c, "command")) {
        if (!conf_word(cJSON_GetStringValue(e), why, size))
            return 0;
    }
    cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(c, "args")) {
        if (!conf_word(cJSON_GetStringValue(e), why, size))
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
    const cJSON *c, *br;

    snprintf(cm, sizeof(cm), "%.*s-config", LOOKUP_NAME_MAX, etcd);
    if ((br = datamnt_container(sts, "backup-restore")) &&
        (!env_ok(br, why, size) || !mounts_ok(sts, br, cm, 1, why, size)))
        return 1;
    if (br && !serves(sts, br, cm)) {
        snprintf(why, size,
                 "its container backup-restore would not mount key %s of ConfigMap %s at %s as "
                 "etcd-druid mounts it, and would read whatever its image holds at %s",
                 CFGVOL_KEY, cm, CFGVOL_DIR, CFGVOL_FILE);
        return 1;
    }
    if ((c = datamnt_container(sts, "etcd")) && !etcd_ok(sts, c, br, cm, why, size))
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
