/* cfix - kube-sim, CRDs, an Etcd and its components for the restore-side step tests. */
#include "tests/support/cfix.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/log.h"
#include "controller/core/etcdspec.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimcli.h"
#include "tests/support/ksimfix.h"

void cfix_start(struct cfix *f, const struct ksim_harness_opts *opts)
{
    char cmd[512], *out = NULL;
    const char *src = getenv("WARDEN_SOURCE_DIR");

    memset(f, 0, sizeof(*f));
    log_set_level(LOG_WARN);
    f->h = ksimfix_start(opts);
    f->c = ksimcli_admin(f->h);
    snprintf(cmd, sizeof(cmd), "apply -f '%s/charts/etcd-warden/crds'", src ? src : ".");
    cr_assert_eq(ksim_harness_kubectl(f->h, NULL, cmd, &out), 0, "%s", out ? out : "");
    free(out);
    ksimcli_create_ns(f->c, CFIX_NS);
    f->x.client = f->c;
    f->x.backup_cluster_status = 1;
}

void cfix_stop(struct cfix *f)
{
    k8s_client_free(f->c);
    ksim_harness_stop(f->h);
    memset(f, 0, sizeof(*f));
}

cJSON *cfix_etcd(const char *name, const char *store, const char *schedule)
{
    char text[2048];
    cJSON *e;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"" CFIX_NS "\"},"
             "\"spec\":{\"replicas\":3,\"labels\":{\"app\":\"etcd\"},\"etcd\":{},"
             "\"backup\":{}}}",
             name);
    e = jsonfix_parse(text);
    if (store)
        cr_assert_eq(kjson_set(e, "spec.backup.store", jsonfix_parse(store), NULL), KERR_OK);
    if (schedule)
        cr_assert_eq(kjson_set_str(e, "spec.backup.fullSnapshotSchedule", schedule, NULL), KERR_OK);
    return e;
}

cJSON *cfix_create(struct cfix *f, const struct k8s_resource *res, const cJSON *obj)
{
    struct kerr_info err;
    cJSON *out = NULL;

    cr_assert_eq(k8s_create(f->c, res, CFIX_NS, obj, NULL, &out, &err), KERR_OK, "create %s: %s",
                 res->resource, err.msg);
    return out;
}

cJSON *cfix_get(struct cfix *f, const struct k8s_resource *res, const char *name)
{
    struct kerr_info err;
    cJSON *out = NULL;
    enum kerr rc = k8s_get(f->c, res, CFIX_NS, name, NULL, &out, &err);

    cr_assert(rc == KERR_OK || rc == KERR_NOTFOUND, "get %s/%s: %s", res->resource, name, err.msg);
    return out;
}

/* A component of kind named name, for etcd, owned by owner_uid (or not). */
static cJSON *component(const cJSON *etcd, const char *kind, const char *name,
                        const char *owner_uid)
{
    const char *en = kjson_get_str(etcd, "metadata.name");
    char text[2048];
    cJSON *o;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"" CFIX_NS "\",\"labels\":{\"app.kubernetes.io/managed-by\":"
             "\"etcd-druid\",\"app.kubernetes.io/part-of\":\"%s\"}}}",
             etcdspec_kind_api_version(kind), kind, name, en);
    o = jsonfix_parse(text);
    if (strcmp(kind, "StatefulSet") == 0)
        cr_assert_eq(kjson_set(o, "spec",
                               jsonfix_parse("{\"replicas\":0,\"serviceName\":\"x\",\"selector\":"
                                             "{\"matchLabels\":{\"app\":\"etcd\"}},\"template\":"
                                             "{\"metadata\":{\"labels\":{\"app\":\"etcd\"}},"
                                             "\"spec\":{\"containers\":[{\"name\":\"etcd\","
                                             "\"image\":\"etcd\"}]}}}"),
                               NULL),
                     KERR_OK);
    if (owner_uid) {
        cJSON *ref = NULL, *copy = cJSON_Duplicate(etcd, 1);

        cr_assert_eq(kjson_set_str(copy, "metadata.uid", owner_uid, NULL), KERR_OK);
        cr_assert_eq(etcdspec_owner_ref(copy, &ref, NULL), KERR_OK);
        cr_assert_eq(kjson_set(o, "metadata.ownerReferences", cJSON_CreateArray(), NULL), KERR_OK);
        cJSON_AddItemToArray((cJSON *)kjson_get(o, "metadata.ownerReferences"), ref);
        cJSON_Delete(copy);
    }
    return o;
}

int cfix_components(struct cfix *f, const cJSON *etcd, const char *owner_uid)
{
    cJSON *list = NULL, *o, *out;
    const cJSON *c;
    int n = 0;

    cr_assert_eq(etcdspec_components(etcd, &list, NULL), KERR_OK);
    cJSON_ArrayForEach (c, list) {
        const char *kind = kjson_get_str(c, "kind");

        o = component(etcd, kind, kjson_get_str(c, "name"), owner_uid);
        out = cfix_create(f, etcdspec_kind_resource(kind), o);
        cJSON_Delete(o);
        cJSON_Delete(out);
        n++;
    }
    cJSON_Delete(list);
    return n;
}

const char *cfix_owners(struct cfix *f, const struct k8s_resource *res, const char *name, char *out,
                        size_t n)
{
    cJSON *o = cfix_get(f, res, name);
    const cJSON *r;
    size_t used = 0;

    out[0] = '\0';
    if (!o) {
        snprintf(out, n, "-");
        return out;
    }
    cJSON_ArrayForEach (r, kjson_get_arr(o, "metadata.ownerReferences")) {
        int w = snprintf(out + used, n - used, "%s%s:%d", used ? "," : "",
                         kjson_get_str(r, "uid") ? kjson_get_str(r, "uid") : "?",
                         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "controller")));

        if (w < 0 || (size_t)w >= n - used)
            break;
        used += (size_t)w;
    }
    cJSON_Delete(o);
    return out;
}
