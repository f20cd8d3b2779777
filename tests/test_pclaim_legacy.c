/* pclaim on kube-sim: a claim a webhook of the release before recorded in a Lease named after a
 * family key of the container (bstore_legacy_keys: "S3|bkt|", ...) during a rolling upgrade is
 * seen where the claims are read: pclaim_take refuses an overlapping claim, and pclaim_admitted
 * holds back the deletion of what it overlaps, as for a record in the store's own Lease. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/pclaim.h"
#include "tests/support/cfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static struct cfix fx;

static void setup(void)
{
    cfix_start(&fx, NULL);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(pclaim_legacy, .init = setup, .fini = teardown, .timeout = 60);

/* What a deletion of prefix in store finds in the claim Leases ("" when nothing). */
static const char *admitted(const char *store, const char *prefix, struct pclaim_other *o)
{
    struct kerr_info err = { 0 };

    OK(pclaim_admitted(fx.c, k8s_client_namespace(fx.c), store, prefix, NULL, 0, o, &err));
    return o->what;
}

/* Etcd ns/name's claim of prefix recorded under the store key store, as a webhook of that
 * release records it. */
static void record(const char *store, const char *ns, const char *name, const char *prefix)
{
    struct pclaim c = { ns, name, store, prefix, NULL, NULL, NULL, NULL, NULL };
    struct pclaim_other o;
    struct kerr_info err = { 0 };

    OK(pclaim_take(fx.c, k8s_client_namespace(fx.c), &c, &o, &err));
    cr_assert_str_eq(o.what, "");
}

Test(pclaim_legacy, a_claim_under_an_earlier_spelling_holds_back_a_deletion)
{
    struct pclaim_other o;
    struct pclaim mine = {
        "ns2", "e2", "Object|bkt|", "shoot--main", NULL, NULL, NULL, NULL, NULL
    };
    struct kerr_info err = { 0 };

    cr_assert_str_eq(admitted("Object|bkt|", "shoot--main", &o), "", "nothing recorded yet");
    /* the release before: Etcd ns1/main's claim under "ABS|bkt|" */
    record("ABS|bkt|", CFIX_NS, "main", "shoot--main");
    /* the claim is seen where it is taken (already so before) ... */
    OK(pclaim_take(fx.c, k8s_client_namespace(fx.c), &mine, &o, &err));
    cr_assert(strstr(o.what, "Etcd " CFIX_NS "/main"), "%s", o.what);
    /* ... and where a deletion reads the claims: on the code before, nothing was found */
    cr_expect(strstr(admitted("Object|bkt|", "shoot--main", &o), "Etcd " CFIX_NS "/main"),
              "a deletion of shoot--main does not see the claim recorded under ABS|bkt|: \"%s\"",
              o.what);
    cr_expect(strstr(admitted("Object|bkt|", "shoot", &o), "shoot--main"), "%s", o.what);
    cr_expect_str_eq(o.ns, CFIX_NS);
}

Test(pclaim_legacy, only_the_container_s_own_spellings_and_overlaps_count)
{
    struct pclaim_other o;

    record("S3|other|", CFIX_NS, "main", "shoot--main");
    record("GCS|bkt|", CFIX_NS, "events", "shoot--events");
    /* another container's spelling, or a prefix that does not overlap: nothing */
    cr_expect_str_eq(admitted("Object|bkt|", "shoot--main", &o), "");
    cr_expect_str_eq(admitted("Object|bkt|", "shoot--x", &o), "");
    /* the container's own: found */
    cr_expect(strstr(admitted("Object|bkt|", "shoot--events", &o), "shoot--events"), "%s", o.what);
    /* a Local store has no earlier spelling */
    cr_expect_str_eq(admitted("Local||", "shoot--events", &o), "");
}
