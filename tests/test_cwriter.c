/*
 * Tests of controller/core/cwriter: any backup sidecar of the cluster, in any workload or pod,
 * under any container name, holds a deletion of a prefix its store overlaps, or of any prefix
 * when its store cannot be read (fail closed); finished pods and Jobs do not.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/ststore.h"
#include "controller/core/cwriter.h"

#define ARGS(prov, prefix) "\"--storage-provider=" prov "\",\"--store-prefix=" prefix "\""
#define BUCKET(c)          "{\"name\":\"STORAGE_CONTAINER\",\"value\":\"" c "\"}"
#define NAMED(name, args, env) \
    "{\"name\":\"" name "\",\"args\":[\"server\"," args "],\"env\":[" env "]}"
#define WRITES(prefix) NAMED("backup-restore", ARGS("S3", prefix), BUCKET("etcd-bucket"))
#define MAIN           "{\"name\":\"main\",\"image\":\"nginx\"}"

#define META           "\"metadata\":{\"namespace\":\"w\",\"name\":\"writer\"}"
#define TEMPLATE(cs)   "{\"spec\":{\"containers\":[" cs "]}}"
#define WORKLOAD(cs)   "{" META ",\"spec\":{\"replicas\":0,\"template\":" TEMPLATE(cs) "}}"
#define JOB(cs, conds) \
    "{" META ",\"spec\":{\"template\":" TEMPLATE(cs) "},\"status\":{\"conditions\":[" conds "]}}"
#define CRONJOB(cs) \
    "{" META        \
    ",\"spec\":{\"suspend\":true,\"jobTemplate\":{\"spec\":{\"template\":" TEMPLATE(cs) "}}}}"
#define POD(phase, field, cs) \
    "{" META ",\"spec\":{\"" field "\":[" cs "]},\"status\":{\"phase\":\"" phase "\"}}"
#define COND(type, status) "{\"type\":\"" type "\",\"status\":\"" status "\"}"

static const char *held(const char *obj, enum cwriter_kind kind, const char *entry_prefix)
{
    static char why[CWRITER_WHY_MAX];
    cJSON *o = cJSON_Parse(obj);
    struct bstore_claim c;

    cr_assert(o, "fixture: %s", obj);
    cr_assert_eq(bstore_claim_init(&c, "aws", "etcd-bucket", NULL, entry_prefix, NULL), KERR_OK);
    cr_assert_eq(cwriter_held_in(o, kind, &c, why, sizeof(why)), KERR_OK);
    bstore_claim_release(&c);
    cJSON_Delete(o);
    return why;
}

Test(cwriter, other_writers_hold)
{
    /* a StatefulSet of no Etcd, no labels: its template writes inside the prefix */
    cr_assert(strstr(held(WORKLOAD(MAIN "," WRITES("a/etcd/sub")), CWRITER_STATEFULSET, "a/etcd"),
                     "StatefulSet w/writer runs a backup sidecar (container backup-restore) that "
                     "writes prefix \"a/etcd/sub\""));
    /* a bare pod writing a prefix of which the entry's is a part */
    cr_assert(
        strstr(held(POD("Running", "containers", MAIN "," WRITES("a")), CWRITER_POD, "a/etcd"),
               "pod w/writer runs a backup sidecar"));
    /* apart: nothing */
    cr_assert_str_eq(held(WORKLOAD(WRITES("b/etcd")), CWRITER_STATEFULSET, "a/etcd"), "");
    cr_assert_str_eq(held(WORKLOAD(MAIN), CWRITER_DEPLOYMENT, "a/etcd"), "");
    /* unknown store (a provider not known, a store that cannot be claimed): held */
    cr_assert(strstr(held(POD("Pending", "containers",
                              NAMED("backup-restore", ARGS("awss", "x"), BUCKET("etcd-bucket"))),
                          CWRITER_POD, "a/etcd"),
                     "its store is unknown ("));
    cr_assert(strstr(held(WORKLOAD(NAMED("backup-restore", ARGS("S3", "x"), BUCKET("a/b"))),
                          CWRITER_STATEFULSET, "a/etcd"),
                     "its store cannot be claimed ("));
    /* two sidecars: each is read */
    cr_assert_str_eq(held(WORKLOAD(WRITES("a") "," WRITES("b")), CWRITER_STATEFULSET, "zzz"), "");
    cr_assert(strstr(held(WORKLOAD(WRITES("a") "," WRITES("b")), CWRITER_STATEFULSET, "b/etcd"),
                     "writes prefix \"b\""));
    /* no containers at all: not understood, held */
    cr_assert_neq(*held("{\"metadata\":{\"name\":\"x\"},\"spec\":{}}", CWRITER_POD, "a/etcd"),
                  '\0');
}

Test(cwriter, other_writers_that_do_not_hold)
{
    /* no backup sidecar; another prefix; another container; no store named; finished */
    cr_assert_str_eq(held(WORKLOAD("{\"name\":\"backup\"}"), CWRITER_STATEFULSET, "a/etcd"), "");
    cr_assert_str_eq(held(WORKLOAD(WRITES("a/etcd-2")), CWRITER_STATEFULSET, "a/etcd/x"), "");
    cr_assert_str_eq(held(WORKLOAD(NAMED("backup-restore", ARGS("S3", "a/etcd"), BUCKET("other"))),
                          CWRITER_STATEFULSET, "a/etcd"),
                     "");
    cr_assert_str_eq(held(WORKLOAD("{\"name\":\"backup-restore\",\"args\":[\"server\"]}"),
                          CWRITER_STATEFULSET, "a/etcd"),
                     "");
    cr_assert_str_eq(held(POD("Failed", "initContainers", WRITES("a/etcd")), CWRITER_POD, "a/etcd"),
                     "");
    /* a StatefulSet is judged by its template, not by a "status.phase" */
    cr_assert_neq(
        *held("{\"metadata\":{\"name\":\"s\"},\"status\":{\"phase\":\"Failed\"},"
              "\"spec\":{\"template\":{\"spec\":{\"containers\":[" WRITES("a/etcd") "]}}}}",
              CWRITER_STATEFULSET, "a/etcd"),
        '\0');
}

/* A sidecar is recognised whatever its container's name. */
Test(cwriter, any_container_name)
{
    /* by its store flags */
    cr_assert(
        strstr(held(WORKLOAD(MAIN "," NAMED("br", ARGS("S3", "a/etcd"), BUCKET("etcd-bucket"))),
                    CWRITER_STATEFULSET, "a"),
               "(container br) that writes prefix \"a/etcd\""));
    /* by its env STORAGE_CONTAINER alone: no provider readable, unknown */
    cr_assert(strstr(
        held(WORKLOAD("{\"name\":\"x\",\"args\":[\"server\"],\"env\":[" BUCKET("etcd-bucket") "]}"),
             CWRITER_DEPLOYMENT, "zzz"),
        "(container x) that may write it: its store is unknown ("));
    /* by its image, with no args at all: unknown */
    cr_assert(strstr(held(WORKLOAD("{\"name\":\"x\",\"image\":\"europe-docker.pkg.dev/gardener-"
                                   "project/releases/gardener/etcdbrctl:v0.43.0\"}"),
                          CWRITER_DAEMONSET, "zzz"),
                     "DaemonSet w/writer runs a backup sidecar (container x)"));
    /* a store flag inside a shell line: not "no store", unknown */
    cr_assert(strstr(held(WORKLOAD("{\"name\":\"x\",\"command\":[\"sh\"],\"args\":[\"/s.sh\","
                                   "\"etcdbrctl server --store-prefix=a\"]}"),
                          CWRITER_REPLICASET, "zzz"),
                     "ReplicaSet w/writer runs a backup sidecar (container x) that may write it"));
    /* its store flags in env values its args name by $(VAR): unknown (attack21_writer_env_values)
     */
    cr_assert(strstr(held(WORKLOAD("{\"name\":\"agent\",\"args\":[\"server\",\"$(P)\"],"
                                   "\"env\":[{\"name\":\"P\",\"value\":\"--store-prefix=zz\"}]}"),
                          CWRITER_DEPLOYMENT, "a"),
                     "(container agent) that may write it: its store is unknown"));
    /* an etcdbrctl image without any store: it writes nothing */
    cr_assert_str_eq(held(WORKLOAD("{\"name\":\"x\",\"image\":\"etcdbrctl:v0.28.4\","
                                   "\"args\":[\"server\"]}"),
                          CWRITER_STATEFULSET, "a"),
                     "");
    /* an init or ephemeral container that may be a sidecar, under any name: held */
    cr_assert(strstr(held(POD("Running", "initContainers",
                              NAMED("copy", ARGS("S3", "zzz"), BUCKET("etcd-bucket"))),
                          CWRITER_POD, "a/etcd"),
                     "init or ephemeral container copy that may be a backup sidecar"));
    cr_assert_neq(
        *held(POD("Running", "ephemeralContainers", WRITES("zzz")), CWRITER_POD, "a/etcd"), '\0');
}

/* Workloads with no pod now (0 replicas, a suspended CronJob, a Job not done) hold; what never
 * runs again (a finished pod or Job) does not. */
Test(cwriter, podless_and_finished)
{
    static const enum cwriter_kind workloads[] = { CWRITER_STATEFULSET, CWRITER_DEPLOYMENT,
                                                   CWRITER_REPLICASET, CWRITER_DAEMONSET };

    for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
        cr_assert_neq(*held(WORKLOAD(WRITES("a/etcd")), workloads[i], "a/etcd"), '\0', "kind %zu",
                      i);
    cr_assert(strstr(held(CRONJOB(WRITES("a/etcd")), CWRITER_CRONJOB, "a"), "CronJob w/writer"));
    cr_assert(strstr(held(JOB(WRITES("a/etcd"), ""), CWRITER_JOB, "a"), "Job w/writer"));
    cr_assert_neq(*held(JOB(WRITES("a/etcd"), COND("Complete", "False")), CWRITER_JOB, "a"), '\0');
    cr_assert_str_eq(held(JOB(WRITES("a/etcd"), COND("Complete", "True")), CWRITER_JOB, "a"), "");
    cr_assert_str_eq(held(JOB(WRITES("a/etcd"), COND("Failed", "True")), CWRITER_JOB, "a"), "");
    cr_assert_str_eq(held(POD("Succeeded", "containers", WRITES("a/etcd")), CWRITER_POD, "a"), "");
    cr_assert_str_eq(held(POD("Failed", "containers", WRITES("a/etcd")), CWRITER_POD, "a"), "");
    /* a Job's conditions on another kind are not read */
    cr_assert_neq(*held(JOB(WRITES("a/etcd"), COND("Complete", "True")), CWRITER_STATEFULSET, "a"),
                  '\0');
}

/* etcd-druid's compaction Job (etcdbrctl compact, store flags, container compact-backup). */
Test(cwriter, druid_compaction_job)
{
    const char *job = JOB("{\"name\":\"compact-backup\",\"image\":\"etcdbrctl:v0.43.0\","
                          "\"args\":[\"compact\",\"--data-dir=/var/etcd/data/compaction.etcd\","
                          "\"--snapstore-temp-directory=/var/etcd/data/compaction.temp\","
                          "\"--enable-snapshot-lease-renewal=true\"," ARGS(
                              "S3", "a/etcd") "],"
                                              "\"env\":[" BUCKET("etcd-bucket") "]}",
                          "");

    cr_assert(strstr(held(job, CWRITER_JOB, "a/etcd"), "(container compact-backup) that writes"));
    cr_assert_str_eq(held(job, CWRITER_JOB, "b/etcd"), "");
}

Test(cwriter, resources)
{
    cr_assert_str_eq(cwriter_resource(CWRITER_CRONJOB)->resource, "cronjobs");
    cr_assert_str_eq(cwriter_resource(CWRITER_DAEMONSET)->group, "apps");
    cr_assert_null(cwriter_resource(CWRITER_KINDS));
}
