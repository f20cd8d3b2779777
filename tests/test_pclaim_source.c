/* pclaim on kube-sim: an EtcdRestore's source recorded at admission (PCLAIM_KIND_SOURCE) holds
 * back a deletion of what it reads (pclaim_admitted) until the restore is stored and over,
 * and stands in no claim's way. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/pclaim.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const struct k8s_resource RES_RESTORE = { "etcd-warden.io", "v1alpha1", "etcdrestores", 1 };

/* EtcdRestore r, reading shoot--main of bucket bkt */
static const char RESTORE[] =
    "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdRestore\",\"metadata\":"
    "{\"name\":\"r\"},\"spec\":{\"source\":{\"store\":{\"provider\":\"S3\",\"container\":"
    "\"bkt\",\"prefix\":\"shoot--main\",\"secretRef\":{\"name\":\"creds\"}}},\"target\":"
    "{\"etcdName\":\"main\",\"store\":{\"container\":\"bkt\",\"prefix\":\"restored\"}}}}";

static struct cfix fx;

static void setup(void)
{
    cfix_start(&fx, NULL);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(pclaim_source, .init = setup, .fini = teardown, .timeout = 60);

/* What a deletion of prefix in store Object|bkt| finds in the claim Lease ("" when nothing). */
static const char *admitted(const char *prefix, struct pclaim_other *o)
{
    struct kerr_info err = { 0 };

    OK(pclaim_admitted(fx.c, k8s_client_namespace(fx.c), "Object|bkt|", prefix, NULL, 0, o, &err));
    return o->what;
}

static void take(const struct pclaim *c, struct pclaim_other *o)
{
    struct kerr_info err = { 0 };

    OK(pclaim_take(fx.c, k8s_client_namespace(fx.c), c, o, &err));
}

Test(pclaim_source, a_restore_admitted_and_not_stored_holds_back_the_deletion_of_its_source)
{
    struct pclaim src = { CFIX_NS, "r",  "Object|bkt|", "shoot--main", PCLAIM_KIND_SOURCE,
                          NULL,    NULL, NULL,          NULL };
    struct pclaim etcd = { "other", "e",  "Object|bkt|", "shoot--main/x", NULL, NULL,
                           NULL,    NULL, NULL };
    struct pclaim_other o;
    struct kerr_info err = { 0 };
    cJSON *r, *stored;

    cr_assert_str_eq(admitted("shoot--main", &o), "", "nothing recorded yet");
    take(&src, &o);
    cr_assert_str_eq(o.what, "");
    cr_assert_str_eq(o.refused, "");
    cr_assert_str_eq(admitted("shoot--main", &o),
                     "the source prefix \"shoot--main\" of EtcdRestore ns1/r, admitted to read it",
                     "not stored yet: only the Lease says it will be read");
    cr_assert_neq(*admitted("shoot", &o), '\0', "a containing prefix");
    cr_assert_str_eq(admitted("shoot--other", &o), "", "a prefix it does not read");
    /* a read, not a claim: an Etcd of another namespace is admitted there as before */
    take(&etcd, &o);
    cr_assert_str_eq(o.what, "", "%s", o.what);
    cr_assert_str_eq(o.refused, "");

    /* stored and running: still read */
    r = jsonfix_parse(RESTORE);
    stored = cfix_create(&fx, &RES_RESTORE, r);
    cr_assert_not_null(stored);
    cr_assert_neq(*admitted("shoot--main/y", &o), '\0');
    /* over: the deletion goes on */
    cr_assert_eq(kjson_set(stored, "status", jsonfix_parse("{\"phase\":\"Completed\"}"), NULL),
                 KERR_OK);
    OK(k8s_update(fx.c, &RES_RESTORE, CFIX_NS, "r", stored,
                  &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
    cr_assert_str_eq(admitted("shoot--main/y", &o), "", "%s", o.what);
    cJSON_Delete(stored);
    cJSON_Delete(r);
}

/* The record names its restore by uid: another restore of that name over does not end it. */
Test(pclaim_source, another_restore_of_its_name_does_not_end_it)
{
    struct pclaim src = { CFIX_NS,
                          "r",
                          "Object|bkt|",
                          "shoot--main",
                          PCLAIM_KIND_SOURCE,
                          NULL,
                          NULL,
                          NULL,
                          "uid-of-the-admitted-one" };
    struct pclaim_other o;
    struct kerr_info err = { 0 };
    cJSON *r, *stored;

    take(&src, &o);
    r = jsonfix_parse(RESTORE);
    stored = cfix_create(&fx, &RES_RESTORE, r);
    cr_assert_eq(kjson_set(stored, "status", jsonfix_parse("{\"phase\":\"Failed\"}"), NULL),
                 KERR_OK);
    OK(k8s_update(fx.c, &RES_RESTORE, CFIX_NS, "r", stored,
                  &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
    cr_assert_neq(*admitted("shoot--main", &o), '\0');
    cJSON_Delete(stored);
    cJSON_Delete(r);
}

/* Write the claim Lease of Object|bkt| holding one source record of restore r made at. */
static void lease_with_source_at(time_t at)
{
    static const struct k8s_resource res_lease = { "coordination.k8s.io", "v1", "leases", 1 };
    struct kerr_info err = { 0 };
    char name[64], text[1024];
    cJSON *l;

    pclaim_lease_name("Object|bkt|", name, sizeof(name));
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{"
             "\"name\":\"%s\",\"annotations\":{\"" PCLAIM_ANNOTATION "\":\"[{\\\"kind\\\":"
             "\\\"" PCLAIM_KIND_SOURCE "\\\",\\\"namespace\\\":\\\"" CFIX_NS "\\\",\\\"name\\\":"
             "\\\"r\\\",\\\"prefix\\\":\\\"shoot--main\\\",\\\"at\\\":%lld}]\"}}}",
             name, (long long)at);
    l = jsonfix_parse(text);
    OK(k8s_create(fx.c, &res_lease, k8s_client_namespace(fx.c), l, NULL, NULL, &err));
    cJSON_Delete(l);
}

/* A restore admitted and never stored (another webhook refused it, or it was deleted) holds
 * the deletion back only while the API server may still store it (PCLAIM_PENDING_S). */
Test(pclaim_source, a_restore_never_stored_holds_back_only_while_it_may_be)
{
    struct pclaim_other o;

    lease_with_source_at(time(NULL) - PCLAIM_PENDING_S - 5);
    cr_assert_str_eq(admitted("shoot--main", &o), "", "%s", o.what);
}

Test(pclaim_source, a_restore_not_stored_yet_holds_back)
{
    struct pclaim_other o;

    lease_with_source_at(time(NULL) - 5);
    cr_assert_neq(*admitted("shoot--main", &o), '\0');
}
