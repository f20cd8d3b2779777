/*
 * Tests of controller/entries/bke_ctx's status writer (bke_write_status), the one writer of a
 * BackupEntry's status for the bucket's entries (bke, bkemake: the PrefixConflict condition
 * written) and the unowned stores' (bkefree: the conditions left as stored), on an in-process
 * kube-sim with the chart's CRDs.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/entries/bke_ctx.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"

static struct cfix fx;

static void setup(void)
{
    cfix_start(&fx, NULL);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(bke_status, .init = setup, .fini = teardown, .timeout = 60);

/* Write st to entry "e" as stored; its resourceVersion after, into rv (n bytes). */
static enum kerr put_st(const struct bke_status *st, char *rv, size_t n)
{
    struct bke_ctx x = { .client = fx.c };
    struct kerr_info err = { 0 };
    cJSON *e = cfix_get(&fx, &BKE_RES_ENTRY, "e");
    enum kerr rc;

    cr_assert_not_null(e);
    rc = bke_write_status(&x, e, st, &err);
    cJSON_Delete(e);
    e = cfix_get(&fx, &BKE_RES_ENTRY, "e");
    snprintf(rv, n, "%s", e ? jsonfix_str(e, "metadata.resourceVersion") : "");
    cJSON_Delete(e);
    return rc;
}

static cJSON *stored(void)
{
    cJSON *e = cfix_get(&fx, &BKE_RES_ENTRY, "e");

    cr_assert_not_null(e);
    return e;
}

Test(bke_status, written_when_it_differs_conditions_kept_or_replaced)
{
    char rv0[64], rv[64];
    cJSON *e = jsonfix_parse(
        "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupEntry\",\"metadata\":"
        "{\"name\":\"e\"},\"spec\":{\"bucketName\":\"b\",\"prefix\":\"p\",\"store\":"
        "{\"provider\":\"S3\",\"container\":\"c\"},\"etcd\":{\"namespace\":\"n\",\"name\":\"x\"}}"
        "}");

    cJSON_Delete(cfix_create(&fx, &BKE_RES_ENTRY, e));
    cJSON_Delete(e);
    cr_assert_eq(put_st(&(struct bke_status){ "Active", "m", 1, "overlaps q" }, rv0, sizeof(rv0)),
                 KERR_OK);
    e = stored();
    cr_assert_str_eq(jsonfix_str(e, "status.phase"), "Active");
    cr_assert_str_eq(jsonfix_str(e, "status.conditions.0.type"), "PrefixConflict");
    cr_assert_str_eq(jsonfix_str(e, "status.conditions.0.message"), "overlaps q");
    cJSON_Delete(e);
    /* the same status: no write, in either mode */
    cr_assert_eq(put_st(&(struct bke_status){ "Active", "m", 1, "overlaps q" }, rv, sizeof(rv)),
                 KERR_OK);
    cr_assert_str_eq(rv, rv0);
    cr_assert_eq(put_st(&(struct bke_status){ "Active", "m", 0, NULL }, rv, sizeof(rv)), KERR_OK);
    cr_assert_str_eq(rv, rv0, "conditions left as stored: nothing to write");
    /* conditions kept: the phase and message change, the condition stays */
    cr_assert_eq(put_st(&(struct bke_status){ "Pending", "m2", 0, NULL }, rv, sizeof(rv)), KERR_OK);
    cr_assert_str_neq(rv, rv0);
    e = stored();
    cr_assert_str_eq(jsonfix_str(e, "status.phase"), "Pending");
    cr_assert_str_eq(jsonfix_str(e, "status.message"), "m2");
    cr_assert_str_eq(jsonfix_str(e, "status.conditions.0.message"), "overlaps q");
    cJSON_Delete(e);
    /* conditions written: none, then another conflict's */
    cr_assert_eq(put_st(&(struct bke_status){ "Pending", "m2", 1, NULL }, rv, sizeof(rv)), KERR_OK);
    e = stored();
    cr_assert_null(kjson_get(e, "status.conditions.0"), "the condition is gone");
    cJSON_Delete(e);
    cr_assert_eq(put_st(&(struct bke_status){ "Pending", "m2", 1, "overlaps r" }, rv, sizeof(rv)),
                 KERR_OK);
    e = stored();
    cr_assert_str_eq(jsonfix_str(e, "status.conditions.0.message"), "overlaps r");
    cJSON_Delete(e);
}

Test(bke_status, an_entry_gone_is_not_found)
{
    struct bke_ctx x = { .client = fx.c };
    struct kerr_info err = { 0 };
    cJSON *e = jsonfix_parse("{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":"
                             "\"BackupEntry\",\"metadata\":{\"name\":\"gone\"}}");

    cr_assert_eq(bke_write_status(&x, e, &(struct bke_status){ "Active", "m", 0, NULL }, &err),
                 KERR_NOTFOUND);
    cJSON_Delete(e);
}
