/* bkejob: the deletion Job of a BackupEntry (namespace of the bucket's Secret, the entry's
 * prefix, no --gc-from-timestamp, run once, FallbackToLogsOnError, a name that stays a label
 * value), the summary read from a finished Pod's termination message, the backoff. */
#include "controller/entries/bkejob.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/podjob.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_Parse(s);

    cr_assert_not_null(j, "bad JSON: %s", s);
    return j;
}

static const char BUCKET[] =
    "{\"metadata\":{\"name\":\"shared\"},\"spec\":{\"provider\":\"aws\",\"container\":\"bkt\","
    "\"secretRef\":{\"namespace\":\"ops\",\"name\":\"bucket-creds\"}}}";
static const char ENTRY[] =
    "{\"metadata\":{\"name\":\"shoot--main--0123abcd4567cdef\",\"uid\":\"u1\","
    "\"creationTimestamp\":\"2026-11-01T00:00:00Z\"},"
    "\"spec\":{\"bucketName\":\"shared\",\"prefix\":\"shoot--main\","
    "\"claimedAt\":\"2026-11-02T10:00:00Z\","
    "\"membersSeenAt\":\"2026-11-02T09:00:00Z\"},"
    "\"status\":{\"deletionStartedAt\":\"2026-11-20T00:00:00Z\"}}";

static const char *arg(const cJSON *job, int i)
{
    char path[96];

    snprintf(path, sizeof(path), "spec.template.spec.containers.0.args.%d", i);
    return kjson_get_str(job, path);
}

Test(bkejob, build)
{
    cJSON *b = parse(BUCKET), *e = parse(ENTRY), *job = NULL;
    struct kerr_info err = { 0 };
    const char *name;

    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(kjson_get_str(job, "kind"), "Job");
    /* the entry's "--" would read as the end of its part: the cut form, with the hash */
    name = kjson_get_str(job, "metadata.name");
    cr_assert_eq(strncmp(name, "shoot-main-0123abcd4567cdef--delete-", 36), 0, "%s", name);
    cr_assert_eq(strlen(name), 36 + KNAME_HASH_LEN, "%s", name);
    cr_assert_eq(strspn(name + 36, "0123456789abcdef"), KNAME_HASH_LEN, "%s", name);
    cr_assert_str_eq(kjson_get_str(job, "metadata.annotations[" PODJOB_ANN_OWNER_UID "]"), "u1");
    cr_assert_str_eq(kjson_get_str(job, "metadata.namespace"), "ops");
    cr_assert_str_eq(kjson_get_str(job, "metadata.labels[etcd-warden.io/backup-entry]"),
                     "shoot--main--0123abcd4567cdef");
    cr_assert_str_eq(
        kjson_get_str(job, "spec.template.metadata.labels[etcd-warden.io/backup-entry]"),
        "shoot--main--0123abcd4567cdef");
    cr_assert_null(kjson_get(job, "metadata.ownerReferences"));
    cr_assert_str_eq(kjson_get_str(job, "spec.template.spec.restartPolicy"), "Never");
    cr_assert_str_eq(kjson_get_str(job, "spec.template.spec.containers.0.terminationMessagePolicy"),
                     "FallbackToLogsOnError");
    cr_assert_str_eq(kjson_get_str(job, "spec.template.spec.containers.0.image"), "img:1");
    cr_assert_str_eq(kjson_get_str(job, "spec.template.spec.containers.0.command.0"),
                     "warden-snapshot");
    cr_assert_str_eq(kjson_get_str(job, "spec.template.spec.containers.0.command.1"),
                     "delete-snapshots");
    cr_assert_str_eq(arg(job, 0), "--storage-provider=S3");
    cr_assert_str_eq(arg(job, 1), "--store-container=bkt");
    cr_assert_str_eq(arg(job, 2), "--store-prefix=shoot--main");
    /* provenance: only what the Etcd wrote while it claimed the prefix */
    cr_assert_str_eq(arg(job, 3), "--written-since=2026-11-02T10:00:00Z");
    cr_assert_str_eq(arg(job, 4), "--written-before=2026-11-20T00:00:00Z");
    cr_assert_null(arg(job, 5));
    cr_assert_str_eq(kjson_get_str(job, "spec.template.spec.volumes.0.secret.secretName"),
                     "bucket-creds");
    int64_t limit = -1;
    cr_assert_eq(kjson_get_int64(job, "spec.backoffLimit", &limit), KERR_OK);
    cr_assert_eq(limit, 0);
    cr_assert_eq(kjson_get_int64(job, "spec.activeDeadlineSeconds", &limit), KERR_OK);
    cr_assert_eq(limit, PODJOB_DELETE_DEADLINE_S);
    cJSON_Delete(job);
    cJSON_Delete(b);
    cJSON_Delete(e);
}

/* The window ends when the Etcd was seen gone, not when the deletion starts a grace period
 * later: what a cluster that moved to another seed writes into the prefix meanwhile is not the
 * deleted Etcd's. */
Test(bkejob, window_ends_when_the_etcd_was_gone)
{
    cJSON *b = parse(BUCKET), *e = parse(ENTRY), *job = NULL;
    struct kerr_info err = { 0 };

    cr_assert_not_null(cJSON_AddStringToObject((cJSON *)kjson_get_obj(e, "spec"), "etcdDeletedAt",
                                               "2026-11-13T00:00:00Z"));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 3), "--written-since=2026-11-02T10:00:00Z");
    cr_assert_str_eq(arg(job, 4), "--written-before=2026-11-13T00:00:00Z");
    cJSON_Delete(job);
    cr_assert_not_null(
        cJSON_SetValuestring((cJSON *)kjson_get(e, "spec.etcdDeletedAt"), "2026-11-19T23:59:30Z"));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 4), "--written-before=2026-11-19T23:59:30Z");
    cJSON_Delete(job);
    cJSON_Delete(b);
    cJSON_Delete(e);
}

/* The window ends when the Etcd was last known alive (spec.etcdLastAliveAt, its deletion seen or
 * its last sighting) when that is earlier than when it was seen gone: a controller that was down
 * or paused when the Etcd went does not stretch it (attack6_deleted_unseen,
 * attack21_paused_seen_gone), and what its members uploaded while they terminated stays. */
Test(bkejob, window_ends_when_the_etcd_was_last_known_alive)
{
    cJSON *b = parse(BUCKET), *e = parse(ENTRY), *job = NULL;
    struct kerr_info err = { 0 };
    cJSON *spec = (cJSON *)kjson_get_obj(e, "spec");

    cr_assert_not_null(cJSON_AddStringToObject(spec, "etcdDeletedAt", "2026-11-13T00:00:00Z"));
    cr_assert_not_null(cJSON_AddStringToObject(spec, "etcdLastAliveAt", "2026-11-12T08:00:00Z"));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 4), "--written-before=2026-11-12T08:00:00Z");
    cJSON_Delete(job);
    cJSON_Delete(b);
    cJSON_Delete(e);
}

/* Another Etcd overlapping the released entry's prefix, created before the Etcd was last known
 * alive (spec.overlappedAt): the window ends at its creation. */
Test(bkejob, window_ends_when_another_etcd_overlapped)
{
    cJSON *b = parse(BUCKET), *e = parse(ENTRY), *job = NULL;
    struct kerr_info err = { 0 };
    cJSON *spec = (cJSON *)kjson_get_obj(e, "spec");

    cr_assert_not_null(cJSON_AddStringToObject(spec, "etcdDeletedAt", "2026-11-13T00:00:00Z"));
    cr_assert_not_null(cJSON_AddStringToObject(spec, "etcdLastAliveAt", "2026-11-12T08:00:00Z"));
    cr_assert_not_null(cJSON_AddStringToObject(spec, "overlappedAt", "2026-11-12T07:59:20Z"));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 4), "--written-before=2026-11-12T07:59:20Z");
    cJSON_Delete(job);
    /* one after it changes nothing */
    cJSON_ReplaceItemInObject(spec, "overlappedAt", cJSON_CreateString("2026-11-12T08:00:20Z"));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 4), "--written-before=2026-11-12T08:00:00Z");
    cJSON_Delete(job);
    cJSON_Delete(b);
    cJSON_Delete(e);
}

/* The Etcd was not shown holding the bucket's credentials after spec.credentialsLostAt
 * (controller/entries/bkeheld.h): the window ends there; before the window began, it is empty. */
Test(bkejob, window_ends_when_the_credentials_were_lost)
{
    cJSON *b = parse(BUCKET), *e = parse(ENTRY), *job = NULL;
    struct kerr_info err = { 0 };
    cJSON *spec = (cJSON *)kjson_get_obj(e, "spec");

    cr_assert_not_null(cJSON_AddStringToObject(spec, "etcdDeletedAt", "2026-11-13T00:00:00Z"));
    cr_assert_not_null(cJSON_AddStringToObject(spec, "credentialsLostAt", "2026-11-05T00:00:00Z"));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 3), "--written-since=2026-11-02T10:00:00Z");
    cr_assert_str_eq(arg(job, 4), "--written-before=2026-11-05T00:00:00Z");
    cJSON_Delete(job);
    cJSON_ReplaceItemInObject(spec, "credentialsLostAt",
                              cJSON_CreateString("2026-11-02T09:59:59Z"));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 3), "--written-since=2026-11-02T10:00:00Z");
    cr_assert_str_eq(arg(job, 4), "--written-before=2026-11-02T09:59:59Z");
    cJSON_Delete(job);
    cJSON_Delete(b);
    cJSON_Delete(e);
}

/* The bucket's endpointOverride reaches the Job as the sidecar gets it (it wins over the
 * Secret's endpoint): without it the deletion would go to another endpoint. */
Test(bkejob, endpoint_override_is_passed)
{
    cJSON *b = parse("{\"metadata\":{\"name\":\"shared\"},\"spec\":{\"provider\":\"aws\","
                     "\"container\":\"bkt\",\"endpointOverride\":\"https://s3.example:9000\","
                     "\"secretRef\":{\"namespace\":\"ops\",\"name\":\"bucket-creds\"}}}"),
          *e = parse(ENTRY), *job = NULL;
    struct kerr_info err = { 0 };
    int i, found = 0;

    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    for (i = 0; arg(job, i); i++)
        found |= strcmp(arg(job, i), "--store-endpoint-override=https://s3.example:9000") == 0;
    cr_assert(found, "no --store-endpoint-override in the Job's args");
    cJSON_Delete(job);
    cJSON_Delete(b);
    cJSON_Delete(e);
}

/* A Local bucket: the Job mounts the host directory its Secret's hostPath names (as etcd-druid
 * reads it), the default one only when the Secret has none. */
Test(bkejob, local_host_path_from_the_secret)
{
    cJSON *b = parse("{\"metadata\":{\"name\":\"loc\"},\"spec\":{\"provider\":\"Local\","
                     "\"container\":\"bkt\",\"secretRef\":{\"namespace\":\"ops\","
                     "\"name\":\"local-bucket\"}}}"),
          *e = parse(ENTRY),
          *job = NULL,
          /* "/var/lib/buckets/" */
              *sec = parse("{\"data\":{\"hostPath\":\"L3Zhci9saWIvYnVja2V0cy8=\"}}"),
          *bare = parse("{\"data\":{}}"), *s3 = parse(BUCKET);
    struct kerr_info err = { 0 };

    cr_assert_str_eq(bkejob_local_secret(b), "local-bucket");
    cr_assert_null(bkejob_local_secret(s3));
    OK(bkejob_build(e, b, sec, "img:1", NULL, &job, &err));
    cr_assert_str_eq(kjson_get_str(job, "spec.template.spec.volumes.0.hostPath.path"),
                     "/var/lib/buckets/bkt");
    cr_assert_str_eq(arg(job, 0), "--storage-provider=Local");
    cJSON_Delete(job);
    OK(bkejob_build(e, b, bare, "img:1", NULL, &job, &err));
    cr_assert_str_eq(kjson_get_str(job, "spec.template.spec.volumes.0.hostPath.path"),
                     "/etc/gardener/local-backupbuckets/bkt");
    cJSON_Delete(job);
    cJSON_Delete(sec);
    cJSON_Delete(bare);
    cJSON_Delete(s3);
    cJSON_Delete(b);
    cJSON_Delete(e);
}

Test(bkejob, long_entry_name_stays_a_label_value)
{
    char name[300], out[KNAME_LABEL_MAX + 1];

    memset(name, 'a', 250);
    name[250] = '\0';
    cr_assert_eq(bkejob_name(name, out), KERR_OK);
    cr_assert_leq(strlen(out), KNAME_LABEL_MAX);
    cr_assert(strstr(out, "--delete-") == out + strlen(out) - 9 - KNAME_HASH_LEN, "%s", out);
    cr_assert_eq(bkejob_name("shoot-main", out), KERR_OK);
    cr_assert_str_eq(out, "shoot-main--delete");
}

Test(bkejob, build_refuses)
{
    cJSON *b = parse("{\"metadata\":{\"name\":\"b\"},\"spec\":{\"provider\":\"aws\","
                     "\"container\":\"bkt\"}}"),
          *oss =
              parse("{\"metadata\":{\"name\":\"b\"},\"spec\":{\"provider\":\"alicloud\","
                    "\"container\":\"bkt\",\"secretRef\":{\"namespace\":\"o\",\"name\":\"s\"}}}"),
          *e = parse(ENTRY), *job = NULL;
    struct kerr_info err = { 0 };

    cr_assert_eq(bkejob_build(e, b, NULL, "i", NULL, &job, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "secretRef"), "%s", err.msg);
    cr_assert_eq(bkejob_build(e, oss, NULL, "i", NULL, &job, &err), KERR_UNSUPPORTED);
    cr_assert_null(job);
    cJSON_Delete(b);
    cJSON_Delete(oss);
    cJSON_Delete(e);
}

static cJSON *pod(int code, const char *message)
{
    cJSON *p = parse("{}");
    cJSON *t = parse("{}");

    cJSON_AddNumberToObject(t, "exitCode", code);
    if (message)
        cJSON_AddStringToObject(t, "message", message);
    cr_assert_eq(kjson_set(p, "status.containerStatuses", cJSON_CreateArray(), NULL), KERR_OK);
    cJSON *cs = cJSON_CreateObject();
    cJSON_AddItemToArray((cJSON *)kjson_get(p, "status.containerStatuses"), cs);
    cr_assert_eq(kjson_set(cs, "state.terminated", t, NULL), KERR_OK);
    return p;
}

Test(bkejob, read_pod)
{
    struct podjob_summary s;
    cJSON *p = pod(0, "{\"level\":\"info\",\"msg\":\"x\"}\n"
                      "{\"prefix\":\"p\",\"deleted\":3,\"locked\":2,\"failed\":0,\"remaining\":2,"
                      "\"earliestDeletable\":\"2030-01-02T03:04:05Z\",\"dryRun\":false}\n");

    podjob_read_pod(p, &s);
    cr_assert(s.terminated && s.parsed);
    cr_assert_eq(s.exit_code, 0);
    cr_assert_eq(s.deleted, 3);
    cr_assert_eq(s.locked, 2);
    cr_assert_eq(s.remaining, 2);
    cr_assert_str_eq(s.earliest, "2030-01-02T03:04:05Z");
    cJSON_Delete(p);

    p = pod(1, "{\"level\":\"error\",\"msg\":\"delete-snapshots failed\"}");
    podjob_read_pod(p, &s);
    cr_assert(s.terminated && !s.parsed);
    cr_assert_eq(s.exit_code, 1);
    cr_assert(strstr(s.message, "delete-snapshots failed"));
    cJSON_Delete(p);

    p = pod(0, "{\"deleted\":1e300,\"locked\":0,\"failed\":0,\"remaining\":0}");
    podjob_read_pod(p, &s);
    cr_assert(s.terminated && !s.parsed, "a count out of range is no summary");
    cJSON_Delete(p);

    p = pod(0, NULL); /* a kubelet keeps no log tail on exit 0 */
    podjob_read_pod(p, &s);
    cr_assert(s.terminated && !s.parsed);
    cJSON_Delete(p);

    p = parse("{\"status\":{\"phase\":\"Running\"}}");
    podjob_read_pod(p, &s);
    cr_assert(!s.terminated);
    cJSON_Delete(p);
}

Test(bkejob, backoff)
{
    cr_assert_eq(podjob_backoff_ms(1), PODJOB_BACKOFF_MS);
    cr_assert_eq(podjob_backoff_ms(2), 2 * PODJOB_BACKOFF_MS);
    cr_assert_eq(podjob_backoff_ms(100), PODJOB_BACKOFF_MAX_MS);
}

/* An entry of an earlier version bounds by its creation; without a deletion start (or any
 * time) the Job is not built: what the Etcd wrote cannot be told apart. */
Test(bkejob, window_from_the_entry_or_refused)
{
    cJSON *b = parse(BUCKET), *e = parse(ENTRY), *job = NULL;
    struct kerr_info err = { 0 };

    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(e, "spec"), "claimedAt");
    cr_assert_not_null(
        cJSON_SetValuestring((cJSON *)kjson_get(e, "spec.membersSeenAt"), "2026-10-01T00:00:00Z"));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 3), "--written-since=2026-11-01T00:00:00Z");
    cJSON_Delete(job);
    job = NULL;
    cJSON_DeleteItemFromObject(e, "status");
    cr_assert_eq(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err), KERR_INVAL);
    cr_assert_null(job);
    cJSON_Delete(b);
    cJSON_Delete(e);
}

/* T1 is no earlier than a member of the Etcd was first seen running (spec.membersSeenAt): what
 * lands in the prefix between the claim and that sighting is not shown to be the Etcd's. */
Test(bkejob, window_starts_when_a_member_was_seen)
{
    cJSON *b = parse(BUCKET), *e = parse(ENTRY), *job = NULL;
    struct kerr_info err = { 0 };

    cr_assert_not_null(
        cJSON_SetValuestring((cJSON *)kjson_get(e, "spec.membersSeenAt"), "2026-11-05T12:00:00Z"));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 3), "--written-since=2026-11-05T12:00:00Z");
    cr_assert_str_eq(arg(job, 4), "--written-before=2026-11-20T00:00:00Z");
    cJSON_Delete(job);
    cJSON_Delete(b);
    cJSON_Delete(e);
}

/* No member ever seen and nothing etcd-warden wrote for it (attack6_claim_without_writes): an
 * empty window, so that the Job deletes nothing and counts everything as kept; an entry of an
 * earlier version (no field) too. */
Test(bkejob, nothing_seen_deletes_nothing)
{
    cJSON *b = parse(BUCKET), *e = parse(ENTRY), *job = NULL;
    struct kerr_info err = { 0 };

    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(e, "spec"), "membersSeenAt");
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 3), "--written-since=2026-11-20T00:00:01Z");
    cr_assert_str_eq(arg(job, 4), "--written-before=2026-11-20T00:00:00Z");
    cJSON_Delete(job);
    job = NULL;
    /* a sighting that is no time is none */
    cr_assert_not_null(
        cJSON_AddStringToObject((cJSON *)kjson_get_obj(e, "spec"), "membersSeenAt", "yesterday"));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 3), "--written-since=2026-11-20T00:00:01Z");
    cJSON_Delete(job);
    cJSON_Delete(b);
    cJSON_Delete(e);
}

/* etcd-warden wrote the prefix for the owner (a restore's copy: spec.origin Restore; a retained
 * EtcdBackup copy's entry): the window starts at spec.claimedAt without a sighting. */
Test(bkejob, copies_start_at_the_claim)
{
    cJSON *b = parse(BUCKET), *e = parse(ENTRY), *job = NULL;
    struct kerr_info err = { 0 };
    cJSON *spec = (cJSON *)kjson_get_obj(e, "spec");

    cJSON_DeleteItemFromObject(spec, "membersSeenAt");
    cr_assert_not_null(cJSON_AddStringToObject(spec, "origin", "Restore"));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 3), "--written-since=2026-11-02T10:00:00Z");
    cJSON_Delete(job);
    job = NULL;
    /* an origin it does not know is none */
    cr_assert_not_null(cJSON_SetValuestring((cJSON *)kjson_get(e, "spec.origin"), "Tenant"));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 3), "--written-since=2026-11-20T00:00:01Z");
    cJSON_Delete(job);
    job = NULL;
    OK(kjson_set_str(e, "metadata.annotations[etcd-warden.io/retained-copy-of]", "ns/bk", &err));
    OK(bkejob_build(e, b, NULL, "img:1", NULL, &job, &err));
    cr_assert_str_eq(arg(job, 3), "--written-since=2026-11-02T10:00:00Z");
    cJSON_Delete(job);
    cJSON_Delete(b);
    cJSON_Delete(e);
}
