/* sbk: the desired spec of an EtcdStatusBackup (status copied, inventory of owned kinds sorted),
 * and on kube-sim the backup created owned by the Etcd with the annotation "true", nothing
 * written when nothing changed, updated on a status or component change, an owner reference
 * repaired, deleted with the annotation "false" when turned off, restoring Etcds left alone. */
#include "controller/restore/sbk.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "common/store.h"
#include "controller/core/etcdspec.h"
#include "controller/core/rctx.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

Test(sbk, desired_spec_copies_status_and_sorts_owned_components)
{
    cJSON *etcd = jsonfix_parse("{\"metadata\":{\"name\":\"main\"},\"status\":{\"ready\":true,"
                                "\"members\":[{\"name\":\"main-0\"}]}}");
    cJSON *comps = jsonfix_parse(
        "[{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"main-peer\"}},"
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"main\"}},"
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"d\"}},"
        "{\"kind\":\"Service\",\"metadata\":{\"name\":\"main-client\"}},"
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"gone\","
        "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"}}]");
    cJSON *spec = NULL;
    struct kerr_info err;

    OK(sbk_desired_spec(etcd, comps, &spec, &err));
    jsonfix_assert_sorted(
        spec,
        "{\"components\":[{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"name\":\"main-client\"},"
        "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"name\":\"main-peer\"},"
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"name\":\"main\"}],"
        "\"statusBackup\":{\"members\":[{\"name\":\"main-0\"}],\"ready\":true}}");
    cJSON_Delete(spec);
    (void)kjson_delete(etcd, "status");
    OK(sbk_desired_spec(etcd, NULL, &spec, &err));
    jsonfix_assert_sorted(spec, "{\"components\":[],\"statusBackup\":{}}");
    cJSON_Delete(spec);
    cJSON_Delete(comps);
    cJSON_Delete(etcd);
}

static struct cfix fx;

static void setup(void)
{
    cfix_start(&fx, NULL);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(sbk_kubesim, .init = setup, .fini = teardown, .timeout = 60);

/* The Etcd as the dispatch hands it over: a fresh GET. */
static cJSON *fresh(void)
{
    cJSON *e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");

    cr_assert_not_null(e);
    return e;
}

/* Write status (JSON text) through /status. */
static void set_status(const char *status)
{
    cJSON *e = fresh();
    struct kerr_info err;

    OK(kjson_set(e, "status", jsonfix_parse(status), &err));
    OK(k8s_update(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", e,
                  &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
    cJSON_Delete(e);
}

/* One pass on a fresh Etcd; the counters. */
static struct sbk_stats pass(void)
{
    struct sbk_stats st;
    struct kerr_info err;
    cJSON *e = fresh();

    OK(sbk_run(&fx.x, e, &st, &err));
    cJSON_Delete(e);
    return st;
}

static cJSON *setup_etcd(void)
{
    cJSON *e = cfix_etcd("main", NULL, NULL), *live = cfix_create(&fx, &ETCDSPEC_RES_ETCD, e);

    cJSON_Delete(e);
    cr_assert_eq(cfix_components(&fx, live, jsonfix_str(live, "metadata.uid")), 13);
    set_status("{\"ready\":true,\"replicas\":3}");
    return live;
}

Test(sbk_kubesim, created_owned_then_quiet_then_updated)
{
    cJSON *live = setup_etcd(), *b, *b2, *e;
    struct sbk_stats st = pass();
    char owners[128], expect[128];

    cr_assert_eq(st.created, 1);
    cr_assert_eq(st.annotated, 1);
    b = cfix_get(&fx, &ETCDSPEC_RES_STATUSBACKUP, "main");
    cr_assert_not_null(b);
    snprintf(expect, sizeof(expect), "%s:1", jsonfix_str(live, "metadata.uid"));
    cr_assert_str_eq(cfix_owners(&fx, &ETCDSPEC_RES_STATUSBACKUP, "main", owners, sizeof(owners)),
                     expect);
    jsonfix_assert_sorted(kjson_get(b, "spec.statusBackup"), "{\"ready\":true,\"replicas\":3}");
    cr_assert_eq(cJSON_GetArraySize(kjson_get(b, "spec.components")), 13);
    cr_assert_str_eq(jsonfix_str(b, "spec.components[0].kind"), "ConfigMap");
    e = fresh();
    cr_assert_str_eq(etcdspec_annotation(e, ETCDSPEC_ANN_BACKUP_EXISTS), "true");
    cJSON_Delete(e);
    /* nothing changed: nothing written */
    st = pass();
    cr_assert_eq(st.created + st.updated + st.annotated + st.deleted, 0);
    b2 = cfix_get(&fx, &ETCDSPEC_RES_STATUSBACKUP, "main");
    cr_assert_str_eq(jsonfix_str(b, "metadata.resourceVersion"),
                     jsonfix_str(b2, "metadata.resourceVersion"));
    cJSON_Delete(b2);
    /* the status changes: the backup follows */
    set_status("{\"ready\":false,\"replicas\":3}");
    st = pass();
    cr_assert_eq(st.updated, 1);
    cr_assert_eq(st.annotated, 0);
    b2 = cfix_get(&fx, &ETCDSPEC_RES_STATUSBACKUP, "main");
    jsonfix_assert_sorted(kjson_get(b2, "spec.statusBackup"), "{\"ready\":false,\"replicas\":3}");
    cJSON_Delete(b2);
    cJSON_Delete(b);
    cJSON_Delete(live);
}

Test(sbk_kubesim, a_new_component_and_a_stale_owner_are_written)
{
    cJSON *live = setup_etcd(), *cm, *b;
    struct sbk_stats st = pass();
    struct kerr_info err;
    char owners[128], expect[128];

    cr_assert_eq(st.created, 1);
    cm = jsonfix_parse("{\"metadata\":{\"name\":\"extra\",\"labels\":{\"app.kubernetes.io/"
                       "managed-by\":\"etcd-druid\",\"app.kubernetes.io/part-of\":\"main\"}}}");
    cJSON_Delete(cfix_create(&fx, etcdspec_kind_resource("ConfigMap"), cm));
    cJSON_Delete(cm);
    st = pass();
    cr_assert_eq(st.updated, 1);
    b = cfix_get(&fx, &ETCDSPEC_RES_STATUSBACKUP, "main");
    cr_assert_eq(cJSON_GetArraySize(kjson_get(b, "spec.components")), 14);
    /* an owner reference to an older Etcd of the name */
    OK(kjson_set_str((cJSON *)kjson_get(b, "metadata.ownerReferences[0]"), "uid", "old", &err));
    OK(k8s_update(fx.c, &ETCDSPEC_RES_STATUSBACKUP, CFIX_NS, "main", b, NULL, NULL, &err));
    st = pass();
    cr_assert_eq(st.updated, 1);
    snprintf(expect, sizeof(expect), "%s:1", jsonfix_str(live, "metadata.uid"));
    cr_assert_str_eq(cfix_owners(&fx, &ETCDSPEC_RES_STATUSBACKUP, "main", owners, sizeof(owners)),
                     expect);
    cJSON_Delete(b);
    cJSON_Delete(live);
}

Test(sbk_kubesim, turned_off_deletes_the_backup_and_says_false)
{
    cJSON *live = setup_etcd(), *e;
    struct sbk_stats st = pass();

    cr_assert_eq(st.created, 1);
    fx.x.backup_cluster_status = 0;
    st = pass();
    cr_assert_eq(st.deleted, 1);
    cr_assert_eq(st.annotated, 1);
    cr_assert_null(cfix_get(&fx, &ETCDSPEC_RES_STATUSBACKUP, "main"));
    e = fresh();
    cr_assert_str_eq(etcdspec_annotation(e, ETCDSPEC_ANN_BACKUP_EXISTS), "false");
    cJSON_Delete(e);
    st = pass();
    cr_assert_eq(st.created + st.updated + st.annotated + st.deleted, 0);
    /* on again: created, "true" */
    fx.x.backup_cluster_status = 1;
    st = pass();
    cr_assert_eq(st.created, 1);
    cr_assert_eq(st.annotated, 1);
    cJSON_Delete(live);
}

Test(sbk_kubesim, restoring_or_deleting_etcds_are_left_alone)
{
    cJSON *live = setup_etcd(), *e = fresh(), *p;
    struct sbk_stats st;
    struct kerr_info err;

    p = jsonfix_parse("{\"metadata\":{\"labels\":{\"etcd-warden.io/restoring\":\"\"}}}");
    OK(k8s_patch(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", K8S_PATCH_MERGE, p, NULL, NULL, &err));
    cJSON_Delete(e);
    st = pass();
    cr_assert_eq(st.created + st.annotated, 0);
    cr_assert_null(cfix_get(&fx, &ETCDSPEC_RES_STATUSBACKUP, "main"));
    e = fresh();
    cr_assert_null(etcdspec_annotation(e, ETCDSPEC_ANN_BACKUP_EXISTS));
    (void)kjson_delete(e, "metadata.labels");
    OK(kjson_set_str(e, "metadata.deletionTimestamp", "2026-01-01T00:00:00Z", &err));
    OK(sbk_run(&fx.x, e, &st, &err));
    cr_assert_eq(st.created + st.annotated, 0);
    cJSON_Delete(e);
    cJSON_Delete(p);
    cJSON_Delete(live);
}

Test(sbk_kubesim, cache_read_first_stale_copy_is_a_conflict)
{
    cJSON *live = setup_etcd(), *b, *e, *p;
    struct store *cache = NULL;
    struct sbk_stats st = pass();
    struct kerr_info err;

    cr_assert_eq(st.created, 1);
    OK(store_new(NULL, &cache, &err));
    b = cfix_get(&fx, &ETCDSPEC_RES_STATUSBACKUP, "main");
    OK(store_put(cache, b, NULL, NULL, &err));
    fx.x.statusbackups = cache;
    st = pass();
    cr_assert_eq(st.created + st.updated + st.annotated, 0, "the cached copy is current");
    /* someone writes the backup; the cache has not seen it yet */
    p = jsonfix_parse("{\"metadata\":{\"labels\":{\"x\":\"y\"}}}");
    OK(k8s_patch(fx.c, &ETCDSPEC_RES_STATUSBACKUP, CFIX_NS, "main", K8S_PATCH_MERGE, p, NULL, NULL,
                 &err));
    set_status("{\"ready\":false}");
    e = fresh();
    cr_assert_eq(sbk_run(&fx.x, e, &st, &err), KERR_CONFLICT, "%s", err.msg);
    cJSON_Delete(e);
    /* the informer catches up: the next pass writes */
    OK(store_put(cache, cfix_get(&fx, &ETCDSPEC_RES_STATUSBACKUP, "main"), NULL, NULL, &err));
    st = pass();
    cr_assert_eq(st.updated, 1);
    b = cfix_get(&fx, &ETCDSPEC_RES_STATUSBACKUP, "main");
    cr_assert(cJSON_IsFalse(kjson_get(b, "spec.statusBackup.ready")));
    cr_assert_str_eq(jsonfix_str(b, "metadata.labels.x"), "y", "the other write survived");
    fx.x.statusbackups = NULL;
    store_free(cache);
    cJSON_Delete(b);
    cJSON_Delete(p);
    cJSON_Delete(live);
}
