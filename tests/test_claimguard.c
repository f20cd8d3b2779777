/*
 * Tests of the member claims of a live Etcd (webhook/claimguard; issue 30, sixth attack):
 * a claim "<template>-<Etcd>-<n>" of a live Etcd is deleted only with the Etcd, or once it
 * is hibernated with a final snapshot of this sleep, or on break glass, whoever asks and
 * whatever holds or mounts it (its pods deleted first, its StatefulSet orphan-deleted); a
 * claim of an Etcd that exists is not created with spec.dataSource, dataSourceRef or
 * volumeName, nor bound by an UPDATE of spec.volumeName but by the persistent volume
 * controller, break glass aside. Each sent through the decode - decide - encode pipeline
 * with in-memory lookups, on both endpoints (and both review decoders).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/guardfix.h"
#include "tests/support/testutil.h"
#include "webhook/claimguard.h"
#include "webhook/protect.h"
#include "webhook/wh_dispatch.h"

#define DRUID    GUARDFIX_DRUID
#define PERSON   GUARDFIX_PERSON
#define COMP     WH_HOOK_COMPONENTS
#define GUARD    WH_HOOK_SCALEGUARD
#define ANN_OPEN "\"druid.gardener.cloud/disable-etcd-component-protection\":\"\""
#define GLASS_OK \
    "\"etcd-warden.io/allow-scale-down-without-snapshot\":\"2026-11-20T00:00:00Z gone\""
#define CUT "2026-11-17T10:00:00Z"
/* the store digest of STORE (hibguard_store_digest), and its stamp (hibguard_store_stamp: no
 * Secret named): its final snapshot checked and taken there */
#define STORE_DIGEST "e577b118d354851af56edfc71c18b330"
#define STORE_STAMP  "\"etcd-warden.io/final-snapshot-store\":\"" STORE_DIGEST "/-/-\""
/* the StatefulSet the final snapshot was checked against: uid-sts at generation 1 */
#define CHECKED(v) "\"etcd-warden.io/final-snapshot-checked\":\"" v "\""
#define SLEPT(phase)                                                                        \
    "\"etcd-warden.io/hibernation-phase\":\"" phase "\",\"etcd-warden.io/traffic-cut-at\":" \
    "\"" CUT "\""
#define ASLEEP(phase) SLEPT(phase) "," STORE_STAMP "," CHECKED("uid-sts/1")
#define STORE         "\"backup\":{\"store\":{\"container\":\"b\",\"prefix\":\"p\",\"provider\":\"S3\"}}"
/* Etcd shoot/etcd-main at replicas, annotations ann, metadata extra, a backup store or none */
#define ETCD_R(replicas, ann, extra, backup)                                                \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"uid-e\"" extra \
    ",\"annotations\":{" ann "}},\"spec\":{\"replicas\":" #replicas backup "}}"
#define ETCD(ann)       ETCD_R(3, ann, "", "," STORE)
#define DELETING        ",\"deletionTimestamp\":\"2026-11-18T00:00:00Z\""
#define NOT_DELETED     "which is not being deleted"
#define SNAPSHOT_BEFORE "2026-11-17T09:00:00Z"
#define SNAPSHOT_AFTER  "2026-11-17T10:05:00Z"

/* StatefulSet etcd-main (uid uid) at replicas and generation, created at created. */
#define STS_G(uid, generation, replicas, created)                                         \
    "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"" uid "\"," \
    "\"generation\":" #generation ",\"creationTimestamp\":\"" created "\",\"labels\":{"   \
    "\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/"                \
    "part-of\":\"etcd-main\"}},\"spec\":{\"replicas\":" #replicas "}}]"
/* ... as warden-controller's scale to 0 left it: the generation after the stamp's */
#define STS(replicas, created) STS_G("uid-sts", 2, replicas, created)
#define STS_OLD                STS(0, "2026-11-01T00:00:00Z")

struct row {
    const char *title;
    enum wh_hook hook;
    const char *op, *pvc, *user;
    const char *etcd; /* NULL: no Etcd */
    const char *sts;  /* a JSON list, NULL: none */
    const char *task; /* creationTimestamp of a Succeeded full snapshot task, NULL: none */
    const char *spec; /* a CREATE's spec members (JSON text); an UPDATE's "OLD|NEW" */
    int unconfirmed;  /* the Etcd lookup misses with nobody to confirm */
    int allowed;
    const char *message;
};

static const struct row rows[] = {
    /* DELETE */
    { "P1: protection disabled, the pods and the StatefulSet gone: refused", COMP, "DELETE",
      "etcd-main-etcd-main-0", PERSON, ETCD(ANN_OPEN), NULL, NULL, "", 0, 0,
      "it is the claim of member etcd-main-0 of Etcd etcd-main, " NOT_DELETED
      ", and it is not hibernated" },
    { "P3: etcd-druid itself, guard only", GUARD, "DELETE", "data-etcd-main-2", DRUID, ETCD(""),
      NULL, NULL, "", 0, 0, NOT_DELETED },
    { "the exempt garbage collector's identity is no exception", GUARD, "DELETE",
      "etcd-main-etcd-main-1", "system:serviceaccount:kube-system:generic-garbage-collector",
      ETCD(""), NULL, NULL, "", 0, 0, NOT_DELETED },
    { "the Etcd being deleted: its claims go", GUARD, "DELETE", "etcd-main-etcd-main-0", DRUID,
      ETCD_R(3, "", DELETING, "," STORE), NULL, NULL, "", 0, 1, "" },
    { "the Etcd gone: no live claim", GUARD, "DELETE", "etcd-main-etcd-main-0", PERSON, NULL, NULL,
      NULL, "", 0, 1, "" },
    { "an ordinal past spec.replicas: still the live Etcd's (3 -> 0 -> 1 would free 1 and 2)",
      GUARD, "DELETE", "etcd-main-etcd-main-3", PERSON, ETCD(""), NULL, NULL, "", 0, 0,
      NOT_DELETED },
    { "spec.replicas 0: every ordinal is a sleeping member's", GUARD, "DELETE",
      "etcd-main-etcd-main-7", PERSON, ETCD_R(0, "", "", "," STORE), NULL, NULL, "", 0, 0,
      NOT_DELETED },
    { "a leading zero is no ordinal the StatefulSet controller writes", GUARD, "DELETE",
      "etcd-main-etcd-main-01", PERSON, ETCD(""), NULL, NULL, "", 0, 1, "" },
    { "a name of no Etcd's", GUARD, "DELETE", "data-web-0", PERSON, ETCD(""), NULL, NULL, "", 0, 1,
      "" },
    { "hibernated with the final snapshot: the claims may go", COMP, "DELETE",
      "etcd-main-etcd-main-0", PERSON, ETCD(ANN_OPEN "," ASLEEP("Hibernated")), STS_OLD,
      SNAPSHOT_AFTER, "", 0, 1, "" },
    { "hibernated with the final snapshot, etcd-druid, guard only", GUARD, "DELETE",
      "etcd-main-etcd-main-2", DRUID, ETCD_R(0, ASLEEP("Hibernated"), "", "," STORE), STS_OLD,
      SNAPSHOT_AFTER, "", 0, 1, "" },
    { "scaled down unchecked (its glass used): no final snapshot record", GUARD, "DELETE",
      "etcd-main-etcd-main-0", PERSON, ETCD(SLEPT("Hibernated")), STS_OLD, SNAPSHOT_AFTER, "", 0, 0,
      "scaled down without a final snapshot checked against its last write" },
    { "the store moved since the final snapshot", GUARD, "DELETE", "etcd-main-etcd-main-0", PERSON,
      ETCD(SLEPT("Hibernated") "," CHECKED("uid-sts/1") ",\"etcd-warden.io/final-snapshot-store\":"
                                                        "\"0123456789abcdef0123456789abcdef/-/-\""),
      STS_OLD, SNAPSHOT_AFTER, "", 0, 0, "taken for another backup store" },
    { "hibernated, the snapshot before the cut", GUARD, "DELETE", "etcd-main-etcd-main-0", PERSON,
      ETCD(ASLEEP("Hibernated")), STS_OLD, SNAPSHOT_BEFORE, "", 0, 0,
      "no full snapshot EtcdOpsTask of it has Succeeded since its traffic cut at " CUT },
    { "hibernated, no snapshot", GUARD, "DELETE", "etcd-main-etcd-main-0", PERSON,
      ETCD(ASLEEP("Hibernated")), STS_OLD, NULL, "", 0, 0, "no full snapshot" },
    { "hibernated, the StatefulSet re-created after the cut", GUARD, "DELETE",
      "etcd-main-etcd-main-0", PERSON, ETCD(ASLEEP("Hibernated")), STS(0, "2026-11-18T08:00:00Z"),
      SNAPSHOT_AFTER, "", 0, 0, "was created at 2026-11-18T08:00:00Z, after its traffic cut" },
    { "hibernated, the StatefulSet gone", GUARD, "DELETE", "etcd-main-etcd-main-0", PERSON,
      ETCD(ASLEEP("Hibernated")), NULL, SNAPSHOT_AFTER, "", 0, 0, "is not found" },
    /* issue 30: the facts of a sleep do not outlive it */
    { "woken behind its back and scaled to 0 again: a generation past the scale to 0", GUARD,
      "DELETE", "etcd-main-etcd-main-0", PERSON, ETCD(ANN_OPEN "," ASLEEP("Hibernated")),
      STS_G("uid-sts", 4, 0, "2026-11-01T00:00:00Z"), SNAPSHOT_AFTER, "", 0, 0,
      "its StatefulSet etcd-main (now uid-sts/4) is not the one scaled down on the final "
      "snapshot" },
    { "woken behind its back, every fact an earlier version read still true: refused", COMP,
      "DELETE", "etcd-main-etcd-main-2", PERSON,
      ETCD(ANN_OPEN "," SLEPT("Hibernated") "," CHECKED(
          "uid-sts/1") ",\"etcd-warden.io/final-snapshot-store\":\"" STORE_DIGEST "\""),
      STS_G("uid-sts", 4, 0, "2026-11-01T00:00:00Z"), SNAPSHOT_AFTER, "", 0, 0,
      "(now uid-sts/4) is not the one scaled down on the final snapshot" },
    { "woken behind its back, ScalingDown, scaled to 0 again", GUARD, "DELETE",
      "etcd-main-etcd-main-1", DRUID, ETCD(ASLEEP("ScalingDown")),
      STS_G("uid-sts", 3, 0, "2026-11-01T00:00:00Z"), SNAPSHOT_AFTER, "", 0, 0,
      "not the one scaled down on the final snapshot" },
    { "at 0 already when checked, unchanged since: the claims may go", GUARD, "DELETE",
      "etcd-main-etcd-main-0", PERSON, ETCD(ASLEEP("Hibernated")),
      STS_G("uid-sts", 1, 0, "2026-11-01T00:00:00Z"), SNAPSHOT_AFTER, "", 0, 1, "" },
    { "another StatefulSet than the one checked", GUARD, "DELETE", "etcd-main-etcd-main-0", PERSON,
      ETCD(ASLEEP("Hibernated")), STS_G("uid-other", 2, 0, "2026-11-01T00:00:00Z"), SNAPSHOT_AFTER,
      "", 0, 0, "(now uid-other/2) is not the one scaled down" },
    { "hibernated without the StatefulSet stamp (an earlier version dropped it)", GUARD, "DELETE",
      "etcd-main-etcd-main-0", PERSON, ETCD(SLEPT("Hibernated") "," STORE_STAMP), STS_OLD,
      SNAPSHOT_AFTER, "", 0, 0, "no annotation etcd-warden.io/final-snapshot-store or" },
    { "an earlier version's store stamp (the store digest alone) does not qualify", GUARD, "DELETE",
      "etcd-main-etcd-main-0", PERSON,
      ETCD(SLEPT("Hibernated") "," CHECKED("uid-sts/1") ",\"etcd-warden.io/final-snapshot-store\":"
                                                        "\"" STORE_DIGEST "\""),
      STS_OLD, SNAPSHOT_AFTER, "", 0, 0, "or a stamp of an earlier version" },
    { "woken (phase WakingUp), the old snapshot", GUARD, "DELETE", "etcd-main-etcd-main-0", PERSON,
      ETCD(ASLEEP("WakingUp")), STS_OLD, SNAPSHOT_AFTER, "", 0, 0,
      "hibernation phase \"WakingUp\"" },
    { "without a backup store the claims are the only copy", GUARD, "DELETE",
      "etcd-main-etcd-main-0", PERSON, ETCD_R(3, ASLEEP("Hibernated"), "", ""), STS_OLD, NULL, "",
      0, 0, "no backup store" },
    { "break glass lets it through", GUARD, "DELETE", "etcd-main-etcd-main-0", PERSON,
      ETCD(GLASS_OK), NULL, NULL, "", 0, 1, "" },
    { "an unconfirmed cache miss: 500", GUARD, "DELETE", "etcd-main-etcd-main-0", PERSON, ETCD(""),
      NULL, NULL, "", 1, 0, "cannot be looked up" },
    /* CREATE */
    { "W1: a clone of another claim", GUARD, "CREATE", "etcd-main-etcd-main-0", PERSON, ETCD(""),
      NULL, NULL, "\"dataSource\":{\"kind\":\"PersistentVolumeClaim\",\"name\":\"stale-copy\"}", 0,
      0, "cannot be created with spec.dataSource by " PERSON },
    { "a VolumeSnapshot by dataSourceRef, components, protection disabled", COMP, "CREATE",
      "data-etcd-main-4", PERSON, ETCD(ANN_OPEN), NULL, NULL,
      "\"dataSourceRef\":{\"apiGroup\":\"snapshot.storage.k8s.io\",\"kind\":\"VolumeSnapshot\","
      "\"name\":\"s\"}",
      0, 0, "spec.dataSourceRef" },
    { "pre-bound to a volume, by etcd-druid", COMP, "CREATE", "etcd-main-etcd-main-1", DRUID,
      ETCD(""), NULL, NULL, "\"volumeName\":\"pv-old\"", 0, 0, "spec.volumeName" },
    { "the StatefulSet controller's own claim", GUARD, "CREATE", "etcd-main-etcd-main-1",
      "system:serviceaccount:kube-system:statefulset-controller", ETCD(""), NULL, NULL,
      "\"accessModes\":[\"ReadWriteOnce\"],\"volumeName\":\"\"", 0, 1, "" },
    { "no Etcd of that name", GUARD, "CREATE", "etcd-main-etcd-main-1", PERSON, NULL, NULL, NULL,
      "\"volumeName\":\"pv-old\"", 0, 1, "" },
    { "break glass", GUARD, "CREATE", "etcd-main-etcd-main-1", PERSON, ETCD(GLASS_OK), NULL, NULL,
      "\"volumeName\":\"pv-old\"", 0, 1, "" },
    { "a CREATE with an unconfirmed miss: 500", COMP, "CREATE", "etcd-main-etcd-main-1", PERSON,
      ETCD(""), NULL, NULL, "\"volumeName\":\"pv-old\"", 1, 0, "cannot be looked up" },
    /* UPDATE: spec.volumeName set once, on a claim not bound yet */
    { "V1: a plain claim pre-bound by a tenant's UPDATE", COMP, "UPDATE", "etcd-main-etcd-main-0",
      PERSON, ETCD(""), NULL, NULL, "|\"volumeName\":\"pv-old\"", 0, 0,
      "cannot be bound by " PERSON " to volume pv-old (spec.volumeName)" },
    { "pre-bound by etcd-druid, guard only", GUARD, "UPDATE", "etcd-main-etcd-main-2", DRUID,
      ETCD(""), NULL, NULL, "\"volumeName\":\"\"|\"volumeName\":\"pv-old\"", 0, 0,
      "spec.volumeName" },
    { "the persistent volume controller binds it", GUARD, "UPDATE", "etcd-main-etcd-main-0",
      "system:serviceaccount:kube-system:persistent-volume-binder", ETCD(""), NULL, NULL,
      "|\"volumeName\":\"pvc-0a1b\"", 0, 1, "" },
    { "the controller manager without service account credentials", GUARD, "UPDATE",
      "etcd-main-etcd-main-0", "system:kube-controller-manager", ETCD(""), NULL, NULL,
      "|\"volumeName\":\"pvc-0a1b\"", 0, 1, "" },
    { "a bound claim's UPDATE keeps its volume", COMP, "UPDATE", "etcd-main-etcd-main-0", PERSON,
      ETCD(""), NULL, NULL,
      "\"volumeName\":\"pvc-0a1b\"|\"volumeName\":\"pvc-0a1b\",\"resources\":{}", 0, 1, "" },
    { "an UPDATE binding with break glass", GUARD, "UPDATE", "etcd-main-etcd-main-1", PERSON,
      ETCD(GLASS_OK), NULL, NULL, "|\"volumeName\":\"pv-old\"", 0, 1, "" },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* A review of op on PVC name by user; a CREATE's object carries spec, an UPDATE's objects
 * the two sides of "OLD|NEW". */
static char *review(const char *op, const char *name, const char *user, const char *spec)
{
    char *body = malloc(4096), obj[1024], old[1024];
    const char *bar = strchr(spec, '|');

    cr_assert_not_null(body);
    snprintf(obj, sizeof(obj),
             "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"%s\"},\"spec\":{%s}}", name,
             bar ? bar + 1 : spec);
    if (strcmp(op, "UPDATE") == 0) {
        cr_assert_not_null(bar, "an UPDATE row's spec is \"OLD|NEW\"");
        snprintf(old, sizeof(old),
                 "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"%s\"},\"spec\":{%.*s}}", name,
                 (int)(bar - spec), spec);
    }
    snprintf(body, 4096,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"0000-6666\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":"
             "\"PersistentVolumeClaim\"},\"resource\":{\"group\":\"\",\"version\":\"v1\","
             "\"resource\":\"persistentvolumeclaims\"},\"name\":\"%s\",\"namespace\":\"shoot\","
             "\"operation\":\"%s\",\"userInfo\":{\"username\":\"%s\"},\"object\":%s,"
             "\"oldObject\":%s}}",
             name, op, user, strcmp(op, "DELETE") == 0 ? "null" : obj,
             strcmp(op, "CREATE") == 0   ? "null"
             : strcmp(op, "UPDATE") == 0 ? old
                                         : obj);
    return body;
}

/* The Etcd lookup of a cache that misses with the fallback limit reached. */
static enum kerr unconfirmed(void *ctx, const char *ns, const char *name, struct lookup_etcd *out,
                             struct kerr_info *err)
{
    (void)ctx;
    (void)ns;
    (void)out;
    kerr_set(err, KERR_NOTFOUND, "etcds.druid.gardener.cloud \"%s\" not found", name);
    snprintf(err->reason, sizeof(err->reason), "%s", LOOKUP_REASON_UNCONFIRMED);
    return KERR_NOTFOUND;
}

static cJSON *glass_store;

static cJSON *decide(const struct row *t)
{
    struct protect_config cfg;
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_CreateArray(), *sts = cJSON_Parse(t->sts ? t->sts : "[]");
    cJSON *tasks = cJSON_CreateArray(), *pods = cJSON_CreateArray(), *doc;
    char task[512], *body = review(t->op, t->pvc, t->user, t->spec);

    guardfix_config(&cfg);
    if (t->etcd)
        cJSON_AddItemToArray(etcds, cJSON_Parse(t->etcd));
    if (t->task) {
        snprintf(
            task, sizeof(task),
            "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main-final-snapshot-1\","
            "\"creationTimestamp\":\"%s\"},\"spec\":{\"etcdName\":\"etcd-main\",\"config\":"
            "{\"onDemandSnapshot\":{\"type\":\"full\"}}},\"status\":{\"state\":\"Succeeded\"}}",
            t->task);
        cJSON_AddItemToArray(tasks, cJSON_Parse(task));
    }
    mem.etcds = etcds;
    mem.stses = sts;
    mem.tasks = tasks;
    mem.pods = pods;
    mem.pvcs = pods;
    mem.glass = glass_store;
    lookup_mem_bind(&mem, &lk);
    if (t->unconfirmed)
        lk.etcd = unconfirmed;
    doc = guardfix_dispatch(&cfg, &mem, &lk, t->hook, !t->unconfirmed && !glass_store, body);
    cJSON_Delete(etcds);
    cJSON_Delete(sts);
    cJSON_Delete(tasks);
    cJSON_Delete(pods);
    free(body);
    return doc;
}

ParameterizedTestParameters(claimguard, rows)
{
    static size_t idx[NROWS];

    return testutil_row_params(idx, NROWS);
}

ParameterizedTest(size_t *i, claimguard, rows)
{
    const struct row *t = &rows[*i];
    cJSON *doc = decide(t);
    const char *warning = kjson_get_str(doc, "response.warnings.0");

    guardfix_expect(doc, t->title, t->allowed, t->message);
    if (strstr(t->title, "break glass"))
        cr_expect(warning && strstr(warning, "allowed by annotation"), "%s: warning %s", t->title,
                  warning ? warning : "(none)");
    cJSON_Delete(doc);
}

/* Break glass once: the first claim deleted (or seeded) on the value is recorded, the next is
 * refused saying so, on either endpoint. */
Test(claimguard, break_glass_once)
{
    static const struct row steps[] = {
        { "the first", GUARD, "DELETE", "etcd-main-etcd-main-0", PERSON,
          ETCD(ANN_OPEN "," GLASS_OK), NULL, NULL, "", 0, 1, "" },
        { "the second", COMP, "DELETE", "etcd-main-etcd-main-1", PERSON,
          ETCD(ANN_OPEN "," GLASS_OK), NULL, NULL, "", 0, 0, "its value was used at " },
        { "a seeded claim on the same value", GUARD, "CREATE", "etcd-main-etcd-main-1", PERSON,
          ETCD(GLASS_OK), NULL, NULL, "\"volumeName\":\"pv\"", 0, 0, "its value was used at " },
    };
    cJSON *doc;

    glass_store = cJSON_CreateArray();
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        doc = decide(&steps[i]);
        guardfix_expect(doc, steps[i].title, steps[i].allowed, steps[i].message);
        cr_expect_eq(cJSON_GetArraySize(glass_store), 1, "%s", steps[i].title);
        cJSON_Delete(doc);
    }
    cJSON_Delete(glass_store);
    glass_store = NULL;
}

/* The readings of a name: every "<template>-<etcd>" split, the ordinal as written. */
Test(claimguard, split)
{
    char e[LOOKUP_NAME_MAX + 1];
    size_t pos = 0;
    long ord = -1;

    cr_assert(claimguard_split("a-b-c-12", &pos, e, sizeof(e), &ord));
    cr_expect_str_eq(e, "b-c");
    cr_expect_eq(ord, 12);
    cr_assert(claimguard_split("a-b-c-12", &pos, e, sizeof(e), &ord));
    cr_expect_str_eq(e, "c");
    cr_expect_not(claimguard_split("a-b-c-12", &pos, e, sizeof(e), &ord));
    pos = 0;
    cr_expect_not(claimguard_split("a-b-012", &pos, e, sizeof(e), &ord), "a leading zero");
    pos = 0;
    cr_expect_not(claimguard_split("a-b-2147483648", &pos, e, sizeof(e), &ord), "past int32");
    pos = 0;
    cr_expect_not(claimguard_split("-b-1", &pos, e, sizeof(e), &ord), "no template");
    pos = 0;
    cr_expect_not(claimguard_split("ab-1", &pos, e, sizeof(e), &ord), "no Etcd");
    pos = 0;
    cr_expect_not(claimguard_split(NULL, &pos, e, sizeof(e), &ord));
    pos = 0;
    cr_expect_not(claimguard_split("a-b-c-1", &pos, e, 1, &ord), "no Etcd name fits");
}

/* What the webhook's caches keep (the projections) still tells the member range and when the
 * StatefulSet was created. */
Test(claimguard, projections_keep_what_the_rule_reads)
{
    cJSON *etcd = cJSON_Parse(ETCD_R(5, ASLEEP("Hibernated"), "", "," STORE));
    cJSON *list = cJSON_Parse(STS_OLD), *sts = cJSON_GetArrayItem(list, 0), *pe, *ps;
    struct lookup_etcd ve;
    struct lookup_sts vs;

    cr_assert_not_null(etcd);
    cr_assert_not_null(sts);
    pe = lookup_etcd_project(etcd);
    ps = lookup_sts_project(sts);
    cr_assert_eq(lookup_etcd_from_json(pe, &ve, NULL), KERR_OK);
    cr_assert_eq(lookup_sts_from_json(ps, &vs, NULL), KERR_OK);
    cr_expect_eq(ve.replicas, 5);
    cr_expect_eq(vs.created, 1793491200, "created %lld", (long long)vs.created);
    cr_expect_eq(vs.replicas, 0);
    cJSON_Delete(pe);
    cJSON_Delete(ps);
    cJSON_Delete(etcd);
    cJSON_Delete(list);
}
