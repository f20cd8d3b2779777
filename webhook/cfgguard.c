/* cfgguard - etcd's data-dir in its ConfigMap on the members' claims; see cfgguard.h. */
#include "webhook/cfgguard.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/kjson.h"
#include "common/ydoc.h"
#include "webhook/datamnt.h"
#include "webhook/member.h"

#define DATA_DIR_MAX 4096 /* PATH_MAX */

int cfgguard_etcd_of(const char *name, char *etcd, size_t size)
{
    size_t n = name ? strlen(name) : 0, ls = strlen(CFGGUARD_SUFFIX);

    if (n <= ls || strcmp(name + n - ls, CFGGUARD_SUFFIX) != 0 || n - ls >= size ||
        n - ls > LOOKUP_NAME_MAX)
        return 0;
    memcpy(etcd, name, n - ls);
    etcd[n - ls] = '\0';
    return 1;
}

static int key_is(const yaml_node_t *k, const char *lit)
{
    return k->data.scalar.length == strlen(lit) &&
           strncasecmp((const char *)k->data.scalar.value, lit, strlen(lit)) == 0;
}

enum kerr cfgguard_data_dir(const char *text, size_t len, char *out, size_t size,
                            struct kerr_info *err)
{
    struct ydoc d;
    yaml_node_t *root, *key, *val = NULL;
    yaml_node_pair_t *p;
    enum kerr rc;

    if (size)
        out[0] = '\0';
    if ((rc = ydoc_load(&d, text, len, CFGGUARD_KEY, err)) != KERR_OK)
        goto done;
    root = ydoc_root(&d);
    if (!root) {
        rc = ydoc_fail(&d, KERR_PARSE, NULL, "empty: no data-dir");
        goto done;
    }
    if ((rc = ydoc_enter(&d, root, YAML_MAPPING_NODE, "the configuration")) != KERR_OK)
        goto done;
    for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        key = yaml_document_get_node(&d.doc, p->key);
        if (!key || key->type != YAML_SCALAR_NODE) {
            rc = ydoc_fail(&d, KERR_PARSE, key ? key : root, "keys must be strings");
            goto done;
        }
        if (key_is(key, "<<")) {
            rc = ydoc_fail(&d, KERR_PARSE, key, "a merge key (<<) may set data-dir");
            goto done;
        }
        if (!key_is(key, "data-dir"))
            continue;
        if (val) {
            rc = ydoc_fail(&d, KERR_PARSE, key, "data-dir is set twice");
            goto done;
        }
        val = yaml_document_get_node(&d.doc, p->value);
    }
    if (ydoc_is_null(val)) {
        rc = ydoc_fail(&d, KERR_PARSE, root, "no data-dir");
        goto done;
    }
    if (val->type != YAML_SCALAR_NODE) {
        rc = ydoc_fail(&d, KERR_PARSE, val, "data-dir must be a string, not %s",
                       ydoc_kind(val->type));
        goto done;
    }
    if (memchr(val->data.scalar.value, '\0', val->data.scalar.length) ||
        val->data.scalar.length >= size) {
        rc = ydoc_fail(&d, KERR_PARSE, val, "data-dir has a NUL byte or is longer than %zu bytes",
                       size ? size - 1 : 0);
        goto done;
    }
    memcpy(out, val->data.scalar.value, val->data.scalar.length);
    out[val->data.scalar.length] = '\0';
done:
    ydoc_release(&d);
    return rc;
}

/* dir is absolute and has no "." or ".." component. */
static int plain_path(const char *dir)
{
    const char *s = dir;

    if (*dir != '/')
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

const char *cfgguard_claim_of(const cJSON *sts, const char *dir)
{
    const cJSON *m;

    if (!dir || !plain_path(dir))
        return NULL;
    if (!sts)
        return datamnt_below(dir, DATAMNT_DRUID_PATH) ? "the member claim" : NULL;
    cJSON_ArrayForEach (m, kjson_get_arr(datamnt_container(sts, "etcd"), "volumeMounts")) {
        const char *v = kjson_get_str(m, "name"), *at = kjson_get_str(m, "mountPath");

        if (v && at && *at == '/' && datamnt_claim_volume(sts, v) &&
            !cJSON_GetObjectItemCaseSensitive(m, "subPath") &&
            !cJSON_GetObjectItemCaseSensitive(m, "subPathExpr") && plain_path(at) &&
            datamnt_below(dir, at))
            return v;
    }
    return NULL;
}

int cfgguard_etcd_on_claim(const cJSON *sts)
{
    const cJSON *m;

    if (!sts)
        return 1;
    cJSON_ArrayForEach (m, kjson_get_arr(datamnt_container(sts, "etcd"), "volumeMounts")) {
        const char *v = kjson_get_str(m, "name");

        if (v && datamnt_claim_volume(sts, v))
            return 1;
    }
    return 0;
}

enum kerr cfgguard_judge(const struct lookup *lk, const struct review_req *req,
                         struct review_resp *resp, int *decided)
{
    const char *name = lookup_meta_str(req->object, "name"), *text, *claim;
    char etcd[LOOKUP_NAME_MAX + 1], dir[DATA_DIR_MAX], where[2 * LOOKUP_NAME_MAX];
    struct lookup_etcd e;
    struct kerr_info ke;
    const cJSON *v;
    cJSON *sts = NULL;
    enum kerr rc;

    *decided = 0;
    if (!member_is_kind(req, "", "ConfigMap") ||
        (req->op != REVIEW_OP_CREATE && req->op != REVIEW_OP_UPDATE) ||
        !cJSON_IsObject(req->object))
        return KERR_OK;
    if (!*name)
        name = req->name ? req->name : "";
    if (!cfgguard_etcd_of(name, etcd, sizeof(etcd)))
        return KERR_OK;
    kerr_clear(&ke);
    rc = lk->etcd(lk->ctx, req->namespace, etcd, &e, &ke);
    if (rc == KERR_NOTFOUND && !lookup_unconfirmed(rc, &ke))
        return KERR_OK;
    *decided = 1;
    if (rc != KERR_OK)
        return review_errored(resp, 500,
                              "ConfigMap %s/%s: its Etcd %s could not be read (%s): etcd's "
                              "configuration is not admitted unchecked",
                              req->namespace, name, etcd, ke.msg);
    if (e.deleting) {
        *decided = 0;
        return KERR_OK;
    }
    if (cJSON_GetObjectItemCaseSensitive(kjson_get_obj(req->object, "binaryData"), CFGGUARD_KEY))
        return review_deny(resp,
                           "ConfigMap %s/%s is etcd's configuration of Etcd %s: %s must be text "
                           "in data, where etcd-druid writes it, not in binaryData",
                           req->namespace, name, etcd, CFGGUARD_KEY);
    v = cJSON_GetObjectItemCaseSensitive(kjson_get_obj(req->object, "data"), CFGGUARD_KEY);
    text = cJSON_IsString(v) ? v->valuestring : NULL; /* a key with dots: not a kjson path */
    if (!text)
        return review_deny(resp,
                           "ConfigMap %s/%s is etcd's configuration of Etcd %s and has no %s: "
                           "the members' etcd would not know its data directory",
                           req->namespace, name, etcd, CFGGUARD_KEY);
    kerr_clear(&ke);
    if (cfgguard_data_dir(text, strlen(text), dir, sizeof(dir), &ke) != KERR_OK)
        return review_deny(resp,
                           "ConfigMap %s/%s is etcd's configuration of Etcd %s: %s; etcd's data "
                           "directory must be read from data-dir, on the members' claims",
                           req->namespace, name, etcd, ke.msg);
    if (!lk->sts_object)
        return review_errored(resp, 500,
                              "ConfigMap %s/%s: StatefulSet %s cannot be read here: etcd's "
                              "configuration is not admitted unchecked",
                              req->namespace, name, etcd);
    kerr_clear(&ke);
    rc = lk->sts_object(lk->ctx, req->namespace, etcd, &sts, &ke);
    if (rc != KERR_OK && rc != KERR_NOTFOUND)
        return review_errored(resp, 500,
                              "ConfigMap %s/%s: StatefulSet %s could not be read (%s): etcd's "
                              "configuration is not admitted unchecked",
                              req->namespace, name, etcd, ke.msg);
    claim = cfgguard_claim_of(sts, dir);
    if (claim || !cfgguard_etcd_on_claim(sts)) {
        cJSON_Delete(sts);
        *decided = 0;
        return KERR_OK;
    }
    if (sts)
        snprintf(where, sizeof(where),
                 "container etcd of StatefulSet %s mounts a volumeClaimTemplate's volume", etcd);
    else
        snprintf(where, sizeof(where),
                 "etcd-druid mounts the member claim, %s (StatefulSet %s does not exist)",
                 DATAMNT_DRUID_PATH, etcd);
    rc = review_deny(resp,
                     "ConfigMap %s/%s is etcd's configuration of live Etcd %s: its data-dir "
                     "\"%.256s\" is not at or below a path where %s (an absolute path without . "
                     "or .. components): each member's next start would run etcd on an empty "
                     "data directory, off the data on its claim",
                     req->namespace, name, etcd, dir, where);
    cJSON_Delete(sts);
    return rc;
}
