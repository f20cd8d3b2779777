/* bkeorigin: a restored Etcd's claim begins with its restore's copy only when the EtcdRestore's
 * status (warden-controller's) shows it created this Etcd, on this prefix, before it completed;
 * a label alone (a tenant's) links nothing. */
#include "controller/entries/bkeorigin.h"

#include <criterion/criterion.h>
#include <stdio.h>

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_Parse(s);

    cr_assert_not_null(j, "bad JSON: %s", s);
    return j;
}

static cJSON *etcd(const char *created, int gen, const char *prefix)
{
    char s[512];

    snprintf(s, sizeof(s),
             "{\"metadata\":{\"name\":\"etcd-back\",\"namespace\":\"shoot\",\"generation\":%d,"
             "\"creationTimestamp\":\"%s\",\"labels\":{\"" BKEORIGIN_LABEL "\":\"r\"}},"
             "\"spec\":{\"backup\":{\"store\":{\"prefix\":\"%s\"}}}}",
             gen, created, prefix);
    return parse(s);
}

static cJSON *restore(const char *phase, const char *etcd_name, const char *prefix)
{
    char s[768];

    snprintf(s, sizeof(s),
             "{\"metadata\":{\"name\":\"r\"},\"spec\":{\"target\":{\"etcdName\":\"etcd-back\","
             "\"store\":{\"prefix\":\"%s\"}}},\"status\":{\"phase\":\"%s\",\"etcdName\":\"%s\","
             "\"copyStartedAt\":\"2026-11-10T00:00:00Z\","
             "\"completionTime\":\"2026-11-10T00:05:00Z\"}}",
             prefix, phase, etcd_name);
    return parse(s);
}

static enum bkeorigin judge(cJSON *e, cJSON *r, int64_t *since)
{
    enum bkeorigin o = bkeorigin_judge(e, r, since);

    cJSON_Delete(e);
    cJSON_Delete(r);
    return o;
}

Test(bkeorigin, completed_restore_of_this_etcd)
{
    int64_t since = 0;

    cr_assert_eq(judge(etcd("2026-11-10T00:04:00Z", 1, "restored--shoot"),
                       restore("Completed", "etcd-back", "/restored--shoot"), &since),
                 BKEORIGIN_RESTORE);
    cr_assert_eq(since, 1794268800, "the copy's start");
}

Test(bkeorigin, in_flight_waits)
{
    int64_t since = 0;

    cr_assert_eq(judge(etcd("2026-11-10T00:04:00Z", 1, "restored--shoot"),
                       restore("Copying", "", "restored--shoot"), &since),
                 BKEORIGIN_WAIT);
}

Test(bkeorigin, not_shown_to_be_the_restores)
{
    int64_t since = 0;

    /* created after the restore completed: an Etcd made again, by anyone */
    cr_assert_eq(judge(etcd("2026-11-10T00:06:00Z", 1, "restored--shoot"),
                       restore("Completed", "etcd-back", "restored--shoot"), &since),
                 BKEORIGIN_NONE);
    /* moved to another prefix since */
    cr_assert_eq(judge(etcd("2026-11-10T00:04:00Z", 2, "restored--shoot"),
                       restore("Completed", "etcd-back", "restored--shoot"), &since),
                 BKEORIGIN_NONE);
    cr_assert_eq(judge(etcd("2026-11-10T00:04:00Z", 1, "victim"),
                       restore("Completed", "etcd-back", "restored--shoot"), &since),
                 BKEORIGIN_NONE);
    /* the restore says another Etcd, or failed */
    cr_assert_eq(judge(etcd("2026-11-10T00:04:00Z", 1, "restored--shoot"),
                       restore("Completed", "other", "restored--shoot"), &since),
                 BKEORIGIN_NONE);
    cr_assert_eq(judge(etcd("2026-11-10T00:04:00Z", 1, "restored--shoot"),
                       restore("Failed", "etcd-back", "restored--shoot"), &since),
                 BKEORIGIN_NONE);
    /* a label naming no restore */
    cr_assert_eq(judge(etcd("2026-11-10T00:04:00Z", 1, "restored--shoot"), NULL, &since),
                 BKEORIGIN_NONE);
    cr_assert_eq(since, 0);
}
