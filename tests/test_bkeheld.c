/* bkeheld: the comparison of an Etcd's credentials with its bucket's is made again (a new
 * generation of the Etcd), and once it does not hold the deletion window ends at the last one
 * that did, for good: an edit of a Secret, a secretRef or an endpoint, a bucket's Secret rotated,
 * an entry warden-webhook made for an Etcd that never held them. */
#include "controller/entries/bkeheld.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "common/ktime.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_Parse(s);

    cr_assert_not_null(j, "bad JSON: %s", s);
    return j;
}

static int64_t at(const char *s)
{
    struct timespec ts;

    cr_assert_eq(ktime_parse(s, &ts, NULL), KERR_OK, "%s", s);
    return (int64_t)ts.tv_sec;
}

static const char *lost(const cJSON *e, char out[KTIME_LEN + 1])
{
    int64_t t = 0;

    if (!bkeheld_lost(e, &t))
        return "";
    cr_assert_eq(ktime_format((time_t)t, out), KERR_OK);
    return out;
}

static const char ENTRY[] = "{\"metadata\":{\"name\":\"e\",\"creationTimestamp\":"
                            "\"2026-11-01T00:00:00Z\"},\"spec\":{\"prefix\":\"p\","
                            "\"claimedAt\":\"2026-11-02T00:00:00Z\","
                            "\"etcd\":{\"namespace\":\"t1\",\"name\":\"etcd-main\"}}}";
static const char ETCD[] =
    "{\"metadata\":{\"namespace\":\"t1\",\"name\":\"etcd-main\",\"generation\":%d},"
    "\"spec\":{\"backup\":{\"store\":{\"provider\":\"aws\",\"container\":\"bkt\","
    "\"prefix\":\"p\",\"secretRef\":{\"name\":\"creds\"},\"endpointOverride\":\"%s\"}}}}";

static cJSON *etcd(int gen, const char *endpoint)
{
    char s[1024];

    snprintf(s, sizeof(s), ETCD, gen, endpoint);
    return parse(s);
}

/* Compared when never compared, and again for every new generation of the Etcd (an edit of its
 * store is seen through the watch at once); not again for the same one. */
Test(bkeheld, compared_again_for_a_new_generation)
{
    cJSON *e = parse(ENTRY), *g1 = etcd(1, "http://s3"), *g2 = etcd(2, "http://elsewhere");
    struct kerr_info err = { 0 };

    cr_assert(bkeheld_due(e, g1));
    OK(bkeheld_mark(e, g1, "", at("2026-11-03T00:00:00Z"), &err));
    cr_assert_not(bkeheld_due(e, g1));
    cr_assert(bkeheld_due(e, g2));
    cr_assert_str_eq(kjson_get_str(e, "spec.credentialsHeldAt"), "2026-11-03T00:00:00Z");
    cr_assert_str_eq(kjson_get_str(e, "spec.credentialsHeldAs.store.secretRef.name"), "creds");
    cJSON_Delete(e);
    cJSON_Delete(g1);
    cJSON_Delete(g2);
}

/* The first comparison that does not hold ends the window at the last that did, and nothing
 * moves it after: neither a later loss nor a later match. */
Test(bkeheld, lost_at_the_last_match_for_good)
{
    cJSON *e = parse(ENTRY), *g1 = etcd(1, "http://s3"), *g2 = etcd(2, "http://elsewhere");
    struct kerr_info err = { 0 };
    char out[KTIME_LEN + 1];

    OK(bkeheld_mark(e, g1, "", at("2026-11-03T00:00:00Z"), &err));
    OK(bkeheld_mark(e, g1, "", at("2026-11-04T00:00:00Z"), &err));
    cr_assert_str_eq(lost(e, out), "");
    OK(bkeheld_mark(e, g2, "not the bucket's endpoint", at("2026-11-05T00:00:00Z"), &err));
    cr_assert_str_eq(lost(e, out), "2026-11-04T00:00:00Z");
    OK(bkeheld_mark(e, g1, "", at("2026-11-06T00:00:00Z"), &err));
    OK(bkeheld_mark(e, g2, "again", at("2026-11-07T00:00:00Z"), &err));
    cr_assert_str_eq(lost(e, out), "2026-11-04T00:00:00Z");
    cJSON_Delete(e);
    cJSON_Delete(g1);
    cJSON_Delete(g2);
}

/* Never shown held (an entry warden-webhook made for a moved Etcd, one of an earlier version):
 * lost one second before the claim began, so that the window is empty. */
Test(bkeheld, never_held_is_an_empty_window)
{
    cJSON *e = parse(ENTRY), *g = etcd(1, "");
    struct kerr_info err = { 0 };
    char out[KTIME_LEN + 1];

    OK(bkeheld_mark(e, g, "no credentials", at("2026-11-05T00:00:00Z"), &err));
    cr_assert_str_eq(lost(e, out), "2026-11-01T23:59:59Z");
    cJSON_Delete(e);
    cJSON_Delete(g);
}

/* The release compares what was compared last: the Etcd rebuilt from credentialsHeldAs; none
 * recorded, none rebuilt. */
Test(bkeheld, the_last_compared_etcd_rebuilt)
{
    cJSON *e = parse(ENTRY), *g = etcd(3, "http://s3"), *back = NULL;
    struct kerr_info err = { 0 };

    OK(bkeheld_etcd(e, &back, &err));
    cr_assert_null(back);
    OK(bkeheld_mark(e, g, "", at("2026-11-03T00:00:00Z"), &err));
    OK(bkeheld_etcd(e, &back, &err));
    cr_assert_not_null(back);
    cr_assert_str_eq(kjson_get_str(back, "metadata.namespace"), "t1");
    cr_assert_str_eq(kjson_get_str(back, "metadata.name"), "etcd-main");
    cr_assert_str_eq(kjson_get_str(back, "spec.backup.store.provider"), "aws");
    cr_assert_str_eq(kjson_get_str(back, "spec.backup.store.endpointOverride"), "http://s3");
    cr_assert_str_eq(kjson_get_str(back, "spec.backup.store.secretRef.name"), "creds");
    cr_assert_str_eq(kjson_get_str(back, "spec.backup.store.prefix"), "p");
    cJSON_Delete(back);
    cJSON_Delete(e);
    cJSON_Delete(g);
}
