/* cfgguard - etcd's data-dir in its ConfigMap on the members' claims; see cfgguard.h. */
#include "webhook/cfgguard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/kjson.h"
#include "common/ydoc.h"
#include "webhook/cfgkeys.h"
#include "webhook/datamnt.h"
#include "webhook/member.h"

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

/* The values of data-dir (*data) and wal-dir (*wal) in the mapping root; NULL when absent. */
static enum kerr find_dirs(struct ydoc *d, yaml_node_t *root, yaml_node_t **data, yaml_node_t **wal)
{
    yaml_node_t *key, **slot;
    yaml_node_pair_t *p;

    for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        key = yaml_document_get_node(&d->doc, p->key);
        if (!key || key->type != YAML_SCALAR_NODE)
            return ydoc_fail(d, KERR_PARSE, key ? key : root, "keys must be strings");
        if (ydoc_key_is(key, "<<"))
            return ydoc_fail(d, KERR_PARSE, key, "a merge key (<<) may set data-dir or wal-dir");
        slot = ydoc_key_is(key, "data-dir") ? data : ydoc_key_is(key, "wal-dir") ? wal : NULL;
        if (!slot)
            continue;
        if (*slot)
            return ydoc_fail(d, KERR_PARSE, key, "%s is set twice",
                             slot == data ? "data-dir" : "wal-dir");
        *slot = yaml_document_get_node(&d->doc, p->value);
    }
    return KERR_OK;
}

/* The string of scalar val into out (size bytes); absent (NULL, a null): "" when may_lack. */
static enum kerr dir_value(struct ydoc *d, const yaml_node_t *root, const yaml_node_t *val,
                           const char *key, int may_lack, char *out, size_t size)
{
    if (ydoc_is_null(val)) {
        if (!may_lack)
            return ydoc_fail(d, KERR_PARSE, root, "no %s", key);
        return KERR_OK;
    }
    if (val->type != YAML_SCALAR_NODE)
        return ydoc_fail(d, KERR_PARSE, val, "%s must be a string, not %s", key,
                         ydoc_kind(val->type));
    if (memchr(val->data.scalar.value, '\0', val->data.scalar.length) ||
        val->data.scalar.length >= size)
        return ydoc_fail(d, KERR_PARSE, val, "%s has a NUL byte or is longer than %zu bytes", key,
                         size ? size - 1 : 0);
    if (!may_lack && !val->data.scalar.length)
        return ydoc_fail(d, KERR_PARSE, val, "%s is empty", key);
    memcpy(out, val->data.scalar.value, val->data.scalar.length);
    out[val->data.scalar.length] = '\0';
    return KERR_OK;
}

/* data-dir into data (dsize bytes), wal-dir into wal (wsize bytes, "" when unset). */
static enum kerr read_dirs(const char *text, size_t len, char *data, size_t dsize, char *wal,
                           size_t wsize, struct kerr_info *err)
{
    struct ydoc d;
    yaml_node_t *root, *dv = NULL, *wv = NULL;
    enum kerr rc;

    if (dsize)
        data[0] = '\0';
    if (wsize)
        wal[0] = '\0';
    if ((rc = ydoc_load(&d, text, len, CFGGUARD_KEY, err)) != KERR_OK)
        goto done;
    root = ydoc_root(&d);
    if (!root) {
        rc = ydoc_fail(&d, KERR_PARSE, NULL, "empty: no data-dir");
        goto done;
    }
    if ((rc = ydoc_enter(&d, root, YAML_MAPPING_NODE, "the configuration")) == KERR_OK &&
        (rc = find_dirs(&d, root, &dv, &wv)) == KERR_OK &&
        (rc = dir_value(&d, root, dv, "data-dir", 0, data, dsize)) == KERR_OK)
        rc = dir_value(&d, root, wv, "wal-dir", 1, wal, wsize);
done:
    ydoc_release(&d);
    return rc;
}

enum kerr cfgguard_data_dir(const char *text, size_t len, char *out, size_t size,
                            struct kerr_info *err)
{
    char wal[CFGGUARD_DIR_MAX];

    return read_dirs(text, len, out, size, wal, sizeof(wal), err);
}

enum kerr cfgguard_dirs_read(const char *text, size_t len, struct cfgguard_dirs *out,
                             struct kerr_info *err)
{
    return read_dirs(text, len, out->data, sizeof(out->data), out->wal, sizeof(out->wal), err);
}

/* a and b are plain paths (datamnt_plain) naming the same directory (datamnt.h's comparison). */
static int same_dir(const char *a, const char *b)
{
    return datamnt_plain(a) && datamnt_plain(b) && datamnt_below(a, b) && datamnt_below(b, a);
}

/* A mount of container etcd of sts on a claim's volume, no sub path, at a plain path. */
static int claim_mount(const cJSON *sts, const cJSON *m)
{
    const char *v = kjson_get_str(m, "name"), *at = kjson_get_str(m, "mountPath");

    return v && at && datamnt_claim_volume(sts, v) &&
           !cJSON_GetObjectItemCaseSensitive(m, "subPath") &&
           !cJSON_GetObjectItemCaseSensitive(m, "subPathExpr") && datamnt_plain(at);
}

const char *cfgguard_claim_of(const cJSON *sts, const char *dir)
{
    const cJSON *m;

    if (!dir || !datamnt_plain(dir))
        return NULL;
    if (!sts)
        return datamnt_below(dir, DATAMNT_DRUID_PATH) ? "the member claim" : NULL;
    cJSON_ArrayForEach (m, kjson_get_arr(datamnt_container(sts, "etcd"), "volumeMounts")) {
        if (claim_mount(sts, m) && datamnt_below(dir, kjson_get_str(m, "mountPath")))
            return kjson_get_str(m, "name");
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

void cfgguard_wal_of(const struct cfgguard_dirs *d, char *out, size_t size)
{
    if (d->wal[0])
        snprintf(out, size, "%s", d->wal);
    else
        snprintf(out, size, "%s/%s", d->data, CFGGUARD_WAL_SUBDIR);
}

/*
 * The claim volume container etcd of sts keeps the members' data on: the one it mounts at
 * etcd-druid's path, else the only one it mounts (claim_mount); NULL when it mounts none, or
 * several and none at etcd-druid's path (which one holds the data is not known).
 */
static const char *member_volume(const cJSON *sts)
{
    const char *v = NULL, *n;
    const cJSON *m;
    int several = 0;

    cJSON_ArrayForEach (m, kjson_get_arr(datamnt_container(sts, "etcd"), "volumeMounts")) {
        if (!claim_mount(sts, m))
            continue;
        n = kjson_get_str(m, "name");
        if (same_dir(kjson_get_str(m, "mountPath"), DATAMNT_DRUID_PATH))
            return n;
        several |= v && strcmp(v, n) != 0;
        v = v ? v : n;
    }
    return several ? NULL : v;
}

int cfgguard_druid_place(const cJSON *sts, const struct cfgguard_dirs *d)
{
    char parent[CFGGUARD_DIR_MAX], wal[CFGGUARD_WAL_MAX], want[CFGGUARD_WAL_MAX];
    size_t n = strlen(d->data), ln = strlen(CFGGUARD_DATA_SUBDIR);
    const char *vol = member_volume(sts);
    const cJSON *m;
    int at_mount = 0;

    while (n > 1 && d->data[n - 1] == '/')
        n--;
    if (!datamnt_plain(d->data) || n <= ln || d->data[n - ln - 1] != '/' ||
        memcmp(d->data + n - ln, CFGGUARD_DATA_SUBDIR, ln) != 0)
        return 0;
    memcpy(parent, d->data, n - ln); /* up to and with the slash before new.etcd */
    parent[n - ln] = '\0';
    if (!sts)
        at_mount = same_dir(parent, DATAMNT_DRUID_PATH);
    cJSON_ArrayForEach (m, kjson_get_arr(datamnt_container(sts, "etcd"), "volumeMounts")) {
        if (claim_mount(sts, m) && vol && strcmp(kjson_get_str(m, "name"), vol) == 0 &&
            same_dir(parent, kjson_get_str(m, "mountPath")))
            at_mount = 1;
    }
    cfgguard_wal_of(d, wal, sizeof(wal));
    snprintf(want, sizeof(want), "%s/%s", d->data, CFGGUARD_WAL_SUBDIR);
    return at_mount && same_dir(wal, want);
}

int cfgguard_same_place(const struct cfgguard_dirs *a, const struct cfgguard_dirs *b)
{
    char wa[CFGGUARD_WAL_MAX], wb[CFGGUARD_WAL_MAX];

    cfgguard_wal_of(a, wa, sizeof(wa));
    cfgguard_wal_of(b, wb, sizeof(wb));
    return same_dir(a->data, b->data) && same_dir(wa, wb);
}

/* The etcd.conf.yaml text (in data) of the configuration an UPDATE replaces, else NULL. */
static const char *old_text(const struct review_req *req)
{
    const cJSON *v;

    if (req->op != REVIEW_OP_UPDATE || !cJSON_IsObject(req->old_object))
        return NULL;
    v = cJSON_GetObjectItemCaseSensitive(kjson_get_obj(req->old_object, "data"), CFGGUARD_KEY);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/*
 * The directories of the configuration req replaces into *old: 1 when its oldObject holds an
 * etcd.conf.yaml in data that parses and keeps data-dir and the WAL on a claim of sts. now_text
 * and now: the new configuration and its directories (the same text reads the same).
 */
static int old_dirs(const struct review_req *req, const cJSON *sts, const char *now_text,
                    const struct cfgguard_dirs *now, struct cfgguard_dirs *old)
{
    const char *text = old_text(req);
    char wal[CFGGUARD_WAL_MAX];

    if (text && strcmp(text, now_text) == 0)
        *old = *now;
    else if (!text || cfgguard_dirs_read(text, strlen(text), old, NULL) != KERR_OK)
        return 0;
    cfgguard_wal_of(old, wal, sizeof(wal));
    return cfgguard_claim_of(sts, old->data) && cfgguard_claim_of(sts, wal);
}

/* Why the directories of now are refused into why (size bytes): 1, or 0 when admitted. */
static int dirs_problem(const struct review_req *req, const cJSON *sts, const char *etcd,
                        const char *now_text, const struct cfgguard_dirs *now, char *why,
                        size_t size)
{
    struct cfgguard_dirs old;
    char where[2 * LOOKUP_NAME_MAX], wal[CFGGUARD_WAL_MAX], owal[CFGGUARD_WAL_MAX];
    int had = old_dirs(req, sts, now_text, now, &old);

    if (sts)
        snprintf(where, sizeof(where),
                 "container etcd of StatefulSet %s mounts a volumeClaimTemplate's volume", etcd);
    else
        snprintf(where, sizeof(where),
                 "etcd-druid mounts the member claim, %s (StatefulSet %s does not exist)",
                 DATAMNT_DRUID_PATH, etcd);
    cfgguard_wal_of(now, wal, sizeof(wal));
    if (!cfgguard_claim_of(sts, now->data) || !cfgguard_claim_of(sts, wal)) {
        snprintf(why, size,
                 "its %s \"%.256s\" is not at or below a path where %s (an absolute path "
                 "without . or .. components): each member's next start would run etcd on %s, "
                 "off the data on its claim",
                 cfgguard_claim_of(sts, now->data) ? "wal-dir" : "data-dir",
                 cfgguard_claim_of(sts, now->data) ? now->wal : now->data, where,
                 cfgguard_claim_of(sts, now->data) ? "an empty write-ahead log"
                                                   : "an empty data directory");
        return 1;
    }
    if (had && !cfgguard_same_place(&old, now)) {
        int data = !same_dir(old.data, now->data);

        cfgguard_wal_of(&old, owal, sizeof(owal));
        snprintf(why, size,
                 "it moves etcd's %s from \"%.256s\" to \"%.256s\": etcd does not move its "
                 "data, so each member's next start would run etcd on an empty %s while the "
                 "data stays where it was",
                 data ? "data-dir" : "write-ahead log", data ? old.data : owal,
                 data ? now->data : wal, data ? "data directory" : "write-ahead log");
        return 1;
    }
    if (!had && !cfgguard_druid_place(sts, now)) {
        snprintf(why, size,
                 "written %s, it must put data-dir where etcd-druid does, %s directly in a "
                 "path where %s, and no wal-dir elsewhere than %s in it (data-dir \"%.256s\", "
                 "write-ahead log \"%.256s\"): another directory would be empty at the members' "
                 "next start",
                 req->op == REVIEW_OP_CREATE ? "anew"
                                             : "over a configuration without a "
                                               "readable data-dir on the claims",
                 CFGGUARD_DATA_SUBDIR, where, CFGGUARD_WAL_SUBDIR, now->data, wal);
        return 1;
    }
    return 0;
}

/* *text: the etcd.conf.yaml text of req's object; NULL with the refusal in resp. */
static enum kerr conf_text(const struct review_req *req, const char *name, const char *etcd,
                           struct review_resp *resp, const char **text)
{
    const cJSON *v;

    *text = NULL;
    if (cJSON_GetObjectItemCaseSensitive(kjson_get_obj(req->object, "binaryData"), CFGGUARD_KEY))
        return review_deny(resp,
                           "ConfigMap %s/%s is etcd's configuration of Etcd %s: %s must be text "
                           "in data, where etcd-druid writes it, not in binaryData",
                           req->namespace, name, etcd, CFGGUARD_KEY);
    v = cJSON_GetObjectItemCaseSensitive(kjson_get_obj(req->object, "data"), CFGGUARD_KEY);
    if (!cJSON_IsString(v)) /* a key with dots: not a kjson path */
        return review_deny(resp,
                           "ConfigMap %s/%s is etcd's configuration of Etcd %s and has no %s: "
                           "the members' etcd would not know its data directory",
                           req->namespace, name, etcd, CFGGUARD_KEY);
    *text = v->valuestring;
    return KERR_OK;
}

enum kerr cfgguard_judge(const struct lookup *lk, const struct review_req *req,
                         struct review_resp *resp, int *decided)
{
    const char *name = lookup_meta_str(req->object, "name"), *text;
    char etcd[LOOKUP_NAME_MAX + 1], why[3072];
    struct cfgguard_dirs *now = NULL;
    struct lookup_etcd e;
    struct kerr_info ke;
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
    if ((rc = conf_text(req, name, etcd, resp, &text)) != KERR_OK || !text)
        return rc;
    if (!(now = malloc(sizeof(*now))))
        return review_errored(resp, 500, "ConfigMap %s/%s: out of memory", req->namespace, name);
    kerr_clear(&ke);
    if (cfgguard_dirs_read(text, strlen(text), now, &ke) != KERR_OK) {
        rc = review_deny(resp,
                         "ConfigMap %s/%s is etcd's configuration of Etcd %s: %s; etcd's data "
                         "directory must be read from data-dir, on the members' claims",
                         req->namespace, name, etcd, ke.msg);
        goto out;
    }
    if (!e.member_prefix_ok) {
        rc = review_deny(resp,
                         "ConfigMap %s/%s is etcd's configuration of Etcd %s, whose "
                         "spec.memberNamePrefix is not a name that can be judged: not admitted",
                         req->namespace, name, etcd);
        goto out;
    }
    if (cfgkeys_refused(text, old_text(req), e.member_prefix, why, sizeof(why))) { /* cfgkeys.h */
        rc = review_deny(resp, "ConfigMap %s/%s is etcd's configuration of live Etcd %s: %s",
                         req->namespace, name, etcd, why);
        goto out;
    }
    if (!lk->sts_object) {
        rc = review_errored(resp, 500,
                            "ConfigMap %s/%s: StatefulSet %s cannot be read here: etcd's "
                            "configuration is not admitted unchecked",
                            req->namespace, name, etcd);
        goto out;
    }
    kerr_clear(&ke);
    rc = lk->sts_object(lk->ctx, req->namespace, etcd, &sts, &ke);
    if (rc != KERR_OK && (rc != KERR_NOTFOUND || lookup_unconfirmed(rc, &ke))) {
        rc = review_errored(resp, 500,
                            "ConfigMap %s/%s: StatefulSet %s could not be read (%s): etcd's "
                            "configuration is not admitted unchecked",
                            req->namespace, name, etcd, ke.msg);
        goto out;
    }
    rc = KERR_OK;
    if (!cfgguard_etcd_on_claim(sts) ||
        !dirs_problem(req, sts, etcd, text, now, why, sizeof(why))) {
        *decided = 0;
        goto out;
    }
    rc = review_deny(resp, "ConfigMap %s/%s is etcd's configuration of live Etcd %s: %s",
                     req->namespace, name, etcd, why);
out:
    cJSON_Delete(sts);
    free(now);
    return rc;
}
