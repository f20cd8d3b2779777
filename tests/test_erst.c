/* erst: the new Etcd built from a live Etcd or a template (marks dropped, the target store,
 * replicas of a hibernated source); on kube-sim, pass by pass: the refusals (two sources, an
 * existing target, a prefix in use by an Etcd or a BackupEntry, overlapping the source, no
 * spec to start from, careless input). The copy itself (the wait for an EtcdBackup and its
 * failure, the copy Job's arguments, the Job's result into the status and the Job deleted,
 * the Etcd created, the crash points) is test_erst_copy.c. */
#include "controller/backups/erst.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/store.h"
#include "controller/backups/cpjob.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"
#include "tests/support/cfix.h"
#include "tests/support/erstfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

/* ---- the new Etcd, pure ---- */

Test(erst, build_from_live_etcd)
{
    cJSON *rs = jsonfix_parse("{\"metadata\":{\"name\":\"r1\",\"namespace\":\"ns1\"},"
                              "\"spec\":{\"target\":{\"etcdName\":\"copy\"}}}");
    cJSON *src = jsonfix_parse(
        "{\"metadata\":{\"name\":\"main\",\"uid\":\"u\",\"resourceVersion\":\"7\","
        "\"finalizers\":[\"x\"],\"labels\":{\"team\":\"a\",\"etcd-warden.io/restoring\":\"\"},"
        "\"annotations\":{\"note\":\"kept\",\"etcd-warden.io/hibernate\":\"true\","
        "\"etcd-warden.io/hibernation-phase\":\"Hibernated\","
        "\"etcd-warden.io/status-backup-exists\":\"true\","
        "\"etcd-warden.io/immutability-retention-type\":\"bucket\","
        "\"druid.gardener.cloud/suspend-etcd-spec-reconcile\":\"\"}},"
        "\"spec\":{\"replicas\":0,\"labels\":{\"app\":\"etcd\"},\"etcd\":{},\"backup\":{\"store\":"
        "{\"provider\":\"aws\",\"container\":\"old\",\"prefix\":\"p\",\"immutability\":{}}}},"
        "\"status\":{\"ready\":true}}");
    struct erst_store to = { "S3", "bkt2", "ns1--copy", "http://s3:1", "creds2" };
    struct kerr_info err = { 0 };
    cJSON *e = NULL;
    int64_t replicas = -1;

    OK(erst_build_etcd(rs, kjson_get(src, "spec"), kjson_get(src, "metadata"), &to, &e, &err));
    cr_assert_str_eq(kjson_get_str(e, "metadata.name"), "copy");
    cr_assert_str_eq(kjson_get_str(e, "metadata.namespace"), "ns1");
    cr_assert_null(kjson_get(e, "metadata.uid"));
    cr_assert_null(kjson_get(e, "metadata.resourceVersion"));
    cr_assert_null(kjson_get(e, "metadata.finalizers"));
    cr_assert_null(kjson_get(e, "status"));
    cr_assert_str_eq(kjson_get_str(e, "metadata.labels[team]"), "a");
    cr_assert_str_eq(kjson_get_str(e, "metadata.labels[" ERST_LABEL_RESTORED_FROM "]"), "r1");
    cr_assert_null(kjson_get(e, "metadata.labels[etcd-warden.io/restoring]"));
    cr_assert_str_eq(kjson_get_str(e, "metadata.annotations[note]"), "kept");
    cr_assert_str_eq(
        kjson_get_str(e, "metadata.annotations[etcd-warden.io/immutability-retention-type]"),
        "bucket");
    cr_assert_null(kjson_get(e, "metadata.annotations[etcd-warden.io/hibernate]"));
    cr_assert_null(kjson_get(e, "metadata.annotations[etcd-warden.io/hibernation-phase]"));
    cr_assert_null(kjson_get(e, "metadata.annotations[etcd-warden.io/status-backup-exists]"));
    cr_assert_null(
        kjson_get(e, "metadata.annotations[druid.gardener.cloud/suspend-etcd-spec-reconcile]"));
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.provider"), "S3");
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.container"), "bkt2");
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.prefix"), "ns1--copy");
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.endpointOverride"), "http://s3:1");
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.secretRef.name"), "creds2");
    cr_assert_null(kjson_get(e, "spec.backup.store.immutability"));
    cr_assert_eq(kjson_get_int64(e, "spec.replicas", &replicas), KERR_OK);
    cr_assert_eq(replicas, 1, "a hibernated source gives 1 replica, not %lld", (long long)replicas);
    /* the source is untouched */
    cr_assert_str_eq(kjson_get_str(src, "spec.backup.store.container"), "old");
    cJSON_Delete(e);
    cJSON_Delete(src);
    cJSON_Delete(rs);
}

Test(erst, build_from_template_keeps_its_replicas)
{
    cJSON *rs = jsonfix_parse("{\"metadata\":{\"name\":\"r1\",\"namespace\":\"ns1\"},"
                              "\"spec\":{\"target\":{\"etcdName\":\"copy\"}}}");
    cJSON *t = jsonfix_parse("{\"replicas\":5,\"labels\":{\"app\":\"x\"},\"etcd\":{}}");
    struct erst_store to = { "ABS", "ckt", "p", NULL, NULL };
    struct kerr_info err = { 0 };
    cJSON *e = NULL;
    int64_t replicas = -1;

    OK(erst_build_etcd(rs, t, NULL, &to, &e, &err));
    cr_assert_eq(kjson_get_int64(e, "spec.replicas", &replicas), KERR_OK);
    cr_assert_eq(replicas, 5);
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.provider"), "ABS");
    cr_assert_null(kjson_get(e, "spec.backup.store.endpointOverride"));
    cr_assert_null(kjson_get(e, "spec.backup.store.secretRef"));
    cr_assert_str_eq(kjson_get_str(e, "metadata.labels[" ERST_LABEL_RESTORED_FROM "]"), "r1");
    cr_assert_null(kjson_get(e, "metadata.annotations.note"));
    cJSON_Delete(e);
    cJSON_Delete(t);
    cJSON_Delete(rs);
}

/* ---- on kube-sim ---- */

TestSuite(erst_kubesim, .init = setup, .fini = teardown, .timeout = 60);

Test(erst_kubesim, refusals)
{
    etcd("main", SRC_STORE);
    restore("two", "{\"source\":{\"backupName\":\"b\",\"store\":" SRC_STORE "},"
                   "\"target\":{\"etcdName\":\"copy\",\"store\":{\"container\":\"ckt\","
                   "\"prefix\":\"p\"}}}");
    assert_refused("two", "exactly one of backupName and store");
    restore("inplace", "{\"source\":{\"store\":" SRC_STORE "},\"target\":{\"etcdName\":\"main\","
                       "\"store\":{\"container\":\"ckt\",\"prefix\":\"p\"}}}");
    assert_refused("inplace", "Etcd ns1/main exists");
    /* "ns1--main/x" lies inside the live Etcd's prefix "ns1--main" of the same store */
    restore("inside", STORE_SPEC("ns1--main/x"));
    assert_refused("inside", "overlaps the source prefix");
    etcd("other", "{\"provider\":\"S3\",\"container\":\"bkt\",\"prefix\":\"team/other\"}");
    restore("used", STORE_SPEC("team"));
    assert_refused("used", "the prefix \"team/other\" of Etcd ns1/other");
    restore("nospec", "{\"source\":{\"store\":" SRC_STORE "},\"target\":{\"etcdName\":\"copy\","
                      "\"store\":{\"container\":\"ckt\",\"prefix\":\"p\"}}}");
    assert_refused("nospec", "an EtcdStatusBackup keeps no spec");
    restore("gone", "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"deleted\"},"
                    "\"target\":{\"etcdName\":\"copy\",\"store\":{\"container\":\"ckt\","
                    "\"prefix\":\"p\"}}}");
    assert_refused("gone", "the source Etcd deleted does not exist");
    restore("nosecret", "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"main\"},"
                        "\"target\":{\"etcdName\":\"copy\",\"store\":{\"container\":\"ckt\","
                        "\"prefix\":\"p\",\"secretRef\":{\"name\":\"nope\"}}}}");
    assert_refused("nosecret", "the Secret nope of the target store");
    restore("oss", "{\"source\":{\"store\":{\"provider\":\"alicloud\",\"container\":\"bkt\","
                   "\"prefix\":\"p\",\"secretRef\":{\"name\":\"creds\"}},\"etcdName\":\"main\"},"
                   "\"target\":{\"etcdName\":\"copy\",\"store\":{\"container\":\"ckt\","
                   "\"prefix\":\"p\"}}}");
    assert_refused("oss", "the copy Job: ");
}

/*
 * A prefix kept by a BackupEntry of a deleted Etcd, or holding an EtcdBackup's copies, is in
 * use (read from the API server when the restore is checked); so is a sibling the backup
 * sidecar lists with it ("team-b" beside "team"); another prefix is not.
 */
Test(erst_kubesim, prefix_of_a_backup_entry_or_copy)
{
    static const struct k8s_resource res_entry = { "etcd-warden.io", "v1alpha1", "backupentries",
                                                   0 };
    cJSON *entry = jsonfix_parse(
        "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupEntry\","
        "\"metadata\":{\"name\":\"ns1--gone--0123abcd4567cdef\"},\"spec\":{\"bucketName\":\"b\","
        "\"prefix\":\"team\",\"store\":{\"provider\":\"S3\",\"container\":\"bkt\"},"
        "\"etcd\":{\"namespace\":\"ns1\",\"name\":\"gone\",\"uid\":\"u\"},"
        "\"etcdDeletedAt\":\"2026-01-01T00:00:00Z\"}}");
    cJSON *backup = jsonfix_parse(
        "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\","
        "\"metadata\":{\"name\":\"nightly\",\"namespace\":\"ns1\"},\"spec\":{\"etcdName\":"
        "\"other\",\"destination\":{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":"
        "\"/offsite/x\",\"secretRef\":{\"name\":\"creds\"}}},"
        "\"status\":{\"phase\":\"Completed\",\"destination\":{\"provider\":\"aws\","
        "\"container\":\"bkt\",\"prefix\":\"/offsite/x\"}}}");

    cJSON_Delete(cfix_create(&fx, &res_entry, entry));
    {
        /* its copy was written: status.destination, stored through the status subresource */
        cJSON *created = cfix_create(&fx, &ERST_RES_BACKUP, backup);
        struct kerr_info err;

        cr_assert_eq(
            kjson_set(created, "status", cJSON_Duplicate(kjson_get(backup, "status"), 1), NULL),
            KERR_OK);
        cr_assert_eq(k8s_update(fx.c, &ERST_RES_BACKUP, CFIX_NS, "nightly", created,
                                &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err),
                     KERR_OK, "%s", err.msg);
        cJSON_Delete(created);
    }
    etcd("main", SRC_STORE);
    restore("entry", STORE_SPEC("team/sub"));
    assert_refused("entry", "BackupEntry ns1--gone--0123abcd4567cdef of Etcd ns1/gone");
    restore("sibling", STORE_SPEC("team-b"));
    assert_refused("sibling", "BackupEntry ns1--gone--0123abcd4567cdef of Etcd ns1/gone");
    restore("copies", STORE_SPEC("offsite"));
    assert_refused("copies", "the copies of EtcdBackup ns1/nightly");
    restore("beside", STORE_SPEC("ns1--restored"));
    cr_assert_eq(run("beside"), ERST_POLL_MS);
    cr_assert_str_eq(st("beside", "phase"), ERST_PHASE_COPYING, "%s", st("beside", "error"));
    cJSON_Delete(entry);
    cJSON_Delete(backup);
}

/* The sidecar lists "ns1--main" as a plain string: a target "ns1--main-2" would put the new
 * cluster's snapshots into the source's listing. */
Test(erst_kubesim, a_sibling_of_the_source)
{
    etcd("main", SRC_STORE);
    restore("sib", STORE_SPEC("ns1--main-2"));
    assert_refused("sib", "overlaps the source prefix \"ns1--main\"");
    restore("slash", STORE_SPEC("/ns1--main"));
    assert_refused("slash", "overlaps the source prefix");
}

/* Careless input refused at once, before any Job: a target name that is no Etcd name, and a
 * backupName no EtcdBackup has once the wait for one is over. */
Test(erst_kubesim, careless_input)
{
    static const char *const bad[] = { "Etcd_Restored", "-copy", "copy.", "UPPER", "a b" };
    char spec[512];
    size_t i;

    etcd("main", SRC_STORE);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char name[16];

        snprintf(name, sizeof(name), "bad%zu", i);
        snprintf(spec, sizeof(spec),
                 "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"main\"},"
                 "\"target\":{\"etcdName\":\"%s\",\"store\":{\"container\":\"ckt\","
                 "\"prefix\":\"p\"}}}",
                 bad[i]);
        restore(name, spec);
        snprintf(spec, sizeof(spec), "spec.target.etcdName \"%s\" is not a valid Etcd name",
                 bad[i]);
        assert_refused(name, spec);
        snprintf(spec, sizeof(spec), "%s--restore", name);
        cr_assert_null(cfix_get(&fx, &RES_JOB, spec), "a Job for %s", bad[i]);
    }
    restore("valid", STORE_SPEC("ns1--copy")); /* target "copy" */
    cr_assert_eq(run("valid"), ERST_POLL_MS, "%s", st("valid", "error"));
    restore("typo", BACKUP_SPEC("no-such-backup"));
    cr_assert_eq(run("typo"), ERST_WAIT_MS);
    cr_assert(strstr(st("typo", "error"), "not found (refused after 60s)"), "%s",
              st("typo", "error"));
    ctx.backup_wait_ms = 0; /* the wait over */
    assert_refused("typo", "EtcdBackup no-such-backup not found in namespace ns1 (waited 0s): "
                           "check spec.source.backupName");
}
