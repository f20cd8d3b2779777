/* bkeseen: where a BackupEntry's deletion window begins: not before one of its Etcd's members
 * was seen running (the member rule of controller/core/smember), unless etcd-warden wrote the
 * prefix for it (a restore's copy, a retained EtcdBackup copy); nowhere without either. */
#include "controller/entries/bkeseen.h"

#include <criterion/criterion.h>
#include <stdio.h>

#include "tests/support/jsonfix.h"

#define MOUNT "\"volumeMounts\":[{\"name\":\"data\",\"mountPath\":\"/var/etcd/data\"}]"
#define ETCD_C \
    "{\"name\":\"etcd\",\"image\":\"etcd-wrapper:v0.4.2\",\"args\":[\"start-etcd\"]," MOUNT "}"
#define BR_C                                                                             \
    "{\"name\":\"backup-restore\",\"image\":\"etcdbrctl:v0.34.0\",\"args\":[\"server\"," \
    "\"--server-port=8443\"],\"ports\":[{\"name\":\"server\",\"containerPort\":8443}]," MOUNT "}"

static const char *STS = "{\"metadata\":{\"name\":\"etcd-x\",\"uid\":\"u-sts\"},\"spec\":{"
                         "\"replicas\":3,\"template\":{\"spec\":{\"containers\":[" ETCD_C "," BR_C
                         "]}},\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"data\"}}]}}";

/* Pod name of the StatefulSet u-sts, in phase, its etcd container's image. OWNED. */
static cJSON *pod(const char *name, const char *phase, const char *image)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\",\"ownerReferences\":[{\"kind\":\"StatefulSet\","
             "\"uid\":\"u-sts\",\"controller\":true}]},\"spec\":{\"containers\":["
             "{\"name\":\"etcd\",\"image\":\"%s\",\"args\":[\"start-etcd\"]," MOUNT "}," BR_C
             "],\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":"
             "\"data-etcd-x-%s\"}}]},"
             "\"status\":{\"phase\":\"%s\",\"podIP\":\"10.0.0.7\"}}",
             name, image, name + 7, phase);
    return jsonfix_parse(text);
}

Test(bkeseen, one_running_member_is_enough)
{
    cJSON *sts = jsonfix_parse(STS), *pods = cJSON_CreateArray();

    cr_assert_not(bkeseen_any_member(sts, pods), "no pods");
    cr_assert_not(bkeseen_any_member(sts, NULL));
    cJSON_AddItemToArray(pods, pod("etcd-x-0", "Pending", "etcd-wrapper:v0.4.2"));
    cJSON_AddItemToArray(pods, pod("etcd-x-1", "Running", "evil:latest"));
    cJSON_AddItemToArray(pods, pod("etcd-x-3", "Running", "etcd-wrapper:v0.4.2"));
    cJSON_AddItemToArray(pods, pod("other-1", "Running", "etcd-wrapper:v0.4.2"));
    cr_assert_not(bkeseen_any_member(sts, pods),
                  "not running, another image, past the ordinals, another name: none a member");
    cJSON_AddItemToArray(pods, pod("etcd-x-2", "Running", "etcd-wrapper:v0.4.2"));
    cr_assert(bkeseen_any_member(sts, pods));
    cJSON_Delete(pods);
    cJSON_Delete(sts);
}

static enum bkeseen start(const char *entry, int64_t *t1)
{
    cJSON *e = jsonfix_parse(entry);
    enum bkeseen s = bkeseen_start(e, t1);

    cJSON_Delete(e);
    return s;
}

Test(bkeseen, start)
{
    int64_t t = -1;

    /* 2026-11-02T10:00:00Z is 1793613600 */
    cr_assert_eq(start("{\"spec\":{\"claimedAt\":\"2026-11-02T10:00:00Z\"}}", &t), BKESEEN_NONE);
    cr_assert_eq(t, -1);
    cr_assert_eq(start("{\"spec\":{\"claimedAt\":\"2026-11-02T10:00:00Z\","
                       "\"membersSeenAt\":\"2026-11-02T10:00:30Z\"}}",
                       &t),
                 BKESEEN_MEMBERS);
    cr_assert_eq(t, 1793613630, "the sighting, later than the claim");
    cr_assert_eq(start("{\"spec\":{\"claimedAt\":\"2026-11-02T10:00:00Z\","
                       "\"membersSeenAt\":\"2026-11-01T10:00:00Z\"}}",
                       &t),
                 BKESEEN_MEMBERS);
    cr_assert_eq(t, 1793613600, "the claim, later than the sighting");
    cr_assert_eq(
        start("{\"spec\":{\"claimedAt\":\"2026-11-02T10:00:00Z\",\"origin\":\"Restore\"}}", &t),
        BKESEEN_COPY);
    cr_assert_eq(t, 1793613600);
    cr_assert_eq(start("{\"metadata\":{\"creationTimestamp\":\"2026-11-02T10:00:00Z\","
                       "\"annotations\":{\"etcd-warden.io/retained-copy-of\":\"a/b\"}}}",
                       &t),
                 BKESEEN_COPY, "an entry of an earlier version: its creation");
    /* a claim time that is no time is not replaced by the creation */
    cr_assert_eq(start("{\"metadata\":{\"creationTimestamp\":\"2026-11-02T10:00:00Z\"},"
                       "\"spec\":{\"claimedAt\":\"soon\",\"origin\":\"Restore\"}}",
                       &t),
                 BKESEEN_NONE);
    cr_assert_eq(start("{\"spec\":{\"origin\":\"Restore\"}}", &t), BKESEEN_NONE);
}

Test(bkeseen, reattached_starts_again)
{
    int64_t t = -1;

    cr_assert_eq(start("{\"spec\":{\"claimedAt\":\"2026-11-02T10:00:00Z\","
                       "\"membersSeenAt\":\"2026-11-02T10:00:30Z\","
                       "\"reattachedAt\":\"2026-11-02T11:00:00Z\"}}",
                       &t),
                 BKESEEN_MEMBERS);
    cr_assert_eq(t, 1793617201,
                 "the second after the reattachment's (another writer may have written in it "
                 "just before), later than the claim and a sighting before");
    cr_assert_eq(start("{\"spec\":{\"claimedAt\":\"2026-11-02T10:00:00Z\","
                       "\"membersSeenAt\":\"2026-11-02T11:00:30Z\","
                       "\"reattachedAt\":\"2026-11-02T11:00:00Z\"}}",
                       &t),
                 BKESEEN_MEMBERS);
    cr_assert_eq(t, 1793617230, "members seen again after the reattachment");
    cr_assert_eq(start("{\"spec\":{\"claimedAt\":\"2026-11-02T10:00:00Z\","
                       "\"membersSeenAt\":\"2026-11-02T11:00:00Z\","
                       "\"reattachedAt\":\"2026-11-02T11:00:00Z\"}}",
                       &t),
                 BKESEEN_MEMBERS);
    cr_assert_eq(t, 1793617201, "members seen in the reattachment's second: the second after");
    cr_assert_eq(start("{\"spec\":{\"claimedAt\":\"2026-11-02T10:00:00Z\","
                       "\"reattachedAt\":\"2026-11-02T11:00:00Z\"},\"metadata\":{"
                       "\"annotations\":{\"etcd-warden.io/retained-copy-of\":\"a/b\"}}}",
                       &t),
                 BKESEEN_COPY);
    cr_assert_eq(t, 1793617201, "a retained copy's entry reattached: from the second after");
    t = -1;
    cr_assert_eq(start("{\"spec\":{\"claimedAt\":\"2026-11-02T10:00:00Z\","
                       "\"membersSeenAt\":\"2026-11-02T10:00:30Z\","
                       "\"reattachedAt\":\"later\"}}",
                       &t),
                 BKESEEN_NONE, "a reattachment time that is no time shows nothing");
    cr_assert_eq(t, -1);
}

Test(bkeseen, needed)
{
    cJSON *e = jsonfix_parse("{\"spec\":{\"claimedAt\":\"2026-11-02T10:00:00Z\"}}");

    cr_assert(bkeseen_needed(e));
    cr_assert_not_null(cJSON_AddStringToObject(cJSON_GetObjectItem(e, "spec"), "membersSeenAt",
                                               "2026-11-02T10:00:30Z"));
    cr_assert_not(bkeseen_needed(e), "recorded once");
    cJSON_Delete(e);
    e = jsonfix_parse("{\"spec\":{\"claimedAt\":\"2026-11-02T10:00:00Z\",\"origin\":\"Restore\"}}");
    cr_assert_not(bkeseen_needed(e), "a restore's copy is provenance");
    cJSON_Delete(e);
}
