/*
 * Tests of controller/entries/bkefree for Local stores, on an in-process kube-sim: a Local
 * Etcd whose container no BackupBucket names gets the entry of its directory (its Secret's
 * hostPath read when the pass runs), the one warden-webhook records at its admission
 * (webhook/pmove); a move by the Secret leaves that entry pending and gets the new directory
 * its own; the Etcd's deletion leaves every entry pending, never deleted.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/store.h"
#include "controller/core/etcdspec.h"
#include "controller/entries/bke_ctx.h"
#include "controller/entries/bkefree.h"
#include "tests/support/cfix.h"
#include "webhook/pmove.h"

static struct cfix fx;
static struct store *etcds, *entries;

static void setup(void)
{
    struct store_opts o = { 0 };

    cfix_start(&fx, NULL);
    cr_assert_eq(store_new(&o, &etcds, NULL), KERR_OK);
    cr_assert_eq(store_new(&o, &entries, NULL), KERR_OK);
}

static void teardown(void)
{
    store_free(etcds);
    store_free(entries);
    cfix_stop(&fx);
}

TestSuite(bkefree_local, .init = setup, .fini = teardown, .timeout = 60);

/* Secret s in CFIX_NS with hostPath b64, base64 (created, or replaced). */
static void secret(const char *b64)
{
    char text[512];
    cJSON *o, *cur = cfix_get(&fx, &ETCDSPEC_RES_SECRET, "s");

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\","
             "\"namespace\":\"" CFIX_NS "\"},\"data\":{\"hostPath\":\"%s\"}}",
             b64);
    o = cJSON_Parse(text);
    cr_assert_not_null(o);
    if (cur)
        cr_assert_eq(k8s_update(fx.c, &ETCDSPEC_RES_SECRET, CFIX_NS, "s", o, NULL, NULL, NULL),
                     KERR_OK);
    else
        cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_SECRET, o));
    cJSON_Delete(o);
    cJSON_Delete(cur);
}

/* The entries of kube-sim into the cache, as its watch would put them. */
static void sync_entries(void)
{
    cJSON *list = NULL;

    cr_assert_eq(k8s_list_all(fx.c, &BKE_RES_ENTRY, NULL, NULL, &list, NULL), KERR_OK);
    cr_assert_eq(store_replace(entries, cJSON_DetachItemFromObject(list, "items"), NULL, NULL),
                 KERR_OK);
    cJSON_Delete(list);
}

static void pass(void)
{
    struct bke_ctx x = { .client = fx.c, .etcds = etcds, .entries = entries };
    struct kerr_info err = { 0 };
    long requeue = 0;

    cr_assert_eq(bkefree_run(&x, &requeue, &err), KERR_OK, "%s", err.msg);
    sync_entries();
}

/* The name webhook/pmove gives the entry of etcd's directory at hostpath. */
static void name_at(const cJSON *etcd, const char *hostpath, char name[BSTORE_ENTRY_NAME_MAX + 1])
{
    cJSON *e = NULL;

    cr_assert_eq(pmove_local_entry(etcd, hostpath, 1800000000, &e, name, NULL, NULL), KERR_OK);
    cJSON_Delete(e);
}

Test(bkefree_local, a_directory_entry_follows_its_etcd_and_outlives_it)
{
    cJSON *etcd = cfix_etcd("main",
                            "{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":"
                            "\"shoot/etcd\",\"secretRef\":{\"name\":\"s\"}}",
                            NULL),
          *stored, *e;
    char lb[BSTORE_ENTRY_NAME_MAX + 1], lb2[BSTORE_ENTRY_NAME_MAX + 1];

    secret("L3Zhci9saWIvbGI="); /* /var/lib/lb */
    stored = cfix_create(&fx, &ETCDSPEC_RES_ETCD, etcd);
    cr_assert_eq(store_put(etcds, cJSON_Duplicate(stored, 1), NULL, NULL, NULL), KERR_OK);
    name_at(stored, "/var/lib/lb", lb);
    name_at(stored, "/var/lib/lb2", lb2);

    pass();
    e = cfix_get(&fx, &BKE_RES_ENTRY, lb);
    cr_assert_not_null(e, "the entry of /var/lib/lb/bkt/shoot/etcd, named as the webhook's");
    cr_assert_str_eq(kjson_get_str(e, "metadata.annotations[" BLOCAL_HOSTPATH_ANNOTATION "]"),
                     "/var/lib/lb");
    cr_assert_str_eq(kjson_get_str(e, "spec.bucketName"), "");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.uid"), kjson_get_str(stored, "metadata.uid"));
    cr_assert_not(kjson_has(e, "spec.etcdDeletedAt"));
    cJSON_Delete(e);

    /* moved by its Secret: the old directory's entry pending, the new one's made */
    secret("L3Zhci9saWIvbGIy"); /* /var/lib/lb2 */
    pass();
    pass();
    e = cfix_get(&fx, &BKE_RES_ENTRY, lb);
    cr_assert(kjson_has(e, "spec.etcdDeletedAt"), "the directory left stays claimed, pending");
    cJSON_Delete(e);
    e = cfix_get(&fx, &BKE_RES_ENTRY, lb2);
    cr_assert_not_null(e, "the new directory's entry");
    cr_assert_not(kjson_has(e, "spec.etcdDeletedAt"));
    cJSON_Delete(e);

    /* deleted: both stay, pending, until the operator deletes them */
    cr_assert_eq(k8s_delete(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_remove(etcds, CFIX_NS "/main", NULL, NULL), KERR_OK);
    pass();
    e = cfix_get(&fx, &BKE_RES_ENTRY, lb2);
    cr_assert(kjson_has(e, "spec.etcdDeletedAt"), "the last directory stays claimed, pending");
    cJSON_Delete(e);
    e = cfix_get(&fx, &BKE_RES_ENTRY, lb);
    cr_assert_not_null(e, "never deleted by warden-controller");
    cJSON_Delete(e);
    cJSON_Delete(stored);
    cJSON_Delete(etcd);
}

/* The entry warden-webhook made at the Etcd's admission is the one warden-controller keeps:
 * found by its name, made Active, no second entry. */
Test(bkefree_local, the_webhooks_entry_is_kept_as_its_own)
{
    cJSON *etcd = cfix_etcd("w",
                            "{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":"
                            "\"shoot/w\",\"secretRef\":{\"name\":\"s\"}}",
                            NULL),
          *stored, *e = NULL, *list = NULL;
    char name[BSTORE_ENTRY_NAME_MAX + 1];

    secret("L3Zhci9saWIvbGI="); /* /var/lib/lb */
    stored = cfix_create(&fx, &ETCDSPEC_RES_ETCD, etcd);
    cr_assert_eq(pmove_local_entry(stored, "/var/lib/lb", 1800000000, &e, name, NULL, NULL),
                 KERR_OK);
    cr_assert_eq(k8s_create(fx.c, &BKE_RES_ENTRY, NULL, e, NULL, NULL, NULL), KERR_OK);
    cJSON_Delete(e);
    sync_entries();
    cr_assert_eq(store_put(etcds, cJSON_Duplicate(stored, 1), NULL, NULL, NULL), KERR_OK);
    pass();
    e = cfix_get(&fx, &BKE_RES_ENTRY, name);
    cr_assert_not_null(e);
    cr_assert_str_eq(kjson_get_str(e, "status.phase"), BSTORE_ENTRY_ACTIVE);
    cr_assert_not(kjson_has(e, "spec.etcdDeletedAt"));
    cJSON_Delete(e);
    cr_assert_eq(k8s_list_all(fx.c, &BKE_RES_ENTRY, NULL, NULL, &list, NULL), KERR_OK);
    cr_assert_eq(cJSON_GetArraySize(kjson_get(list, "items")), 1);
    cJSON_Delete(list);
    cJSON_Delete(stored);
    cJSON_Delete(etcd);
}
