/*
 * Tests of common/ststore (the store an Etcd's members write, from its StatefulSet's pod
 * template, and whether its rollout is complete) and of controller/core/cmember (a deletion
 * held by the members' store or a sleep; the store stamp made only of the members' store).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/kjson.h"
#include "common/ststore.h"
#include "controller/core/cmember.h"

#define SIDECAR(args, env) \
    "{\"name\":\"backup-restore\",\"args\":[\"server\"," args "],\"env\":[" env "]}"
#define ARGS(prov, prefix) "\"--storage-provider=" prov "\",\"--store-prefix=" prefix "\""
#define BUCKET(c)          "{\"name\":\"STORAGE_CONTAINER\",\"value\":\"" c "\"}"
/* a Local sidecar as etcd-druid renders it: its volume mounted on $HOME/<container> */
#define LSIDECAR(args, env, at)                                                      \
    "{\"name\":\"backup-restore\",\"args\":[\"server\"," args "],\"env\":[" env "]," \
    "\"volumeMounts\":[{\"name\":\"local-backup\",\"mountPath\":\"" at "\"}]}"
#define LVOL(path) "{\"name\":\"local-backup\",\"hostPath\":{\"path\":\"" path "\"}}"
/* a Local StatefulSet whose pod runs with securityContext psc, its sidecar mounting the volume
 * at "at" with more of its own fields (csc: ",\"securityContext\":{...}" or "") */
#define SC_STS(psc, at, csc)                                                                       \
    "{\"metadata\":{\"generation\":3},\"spec\":{\"template\":{\"spec\":{\"securityContext\":" psc  \
    ",\"containers\":[{\"name\":\"backup-restore\",\"args\":[\"server\"," ARGS(                    \
        "Local", "p") "],\"env\":[" BUCKET("c1") "],\"volumeMounts\":[{\"name\":\"local-backup\"," \
                                                 "\"mountPath\":\"" at "\"}]" csc                  \
                                                 "}],\"volumes\":[" LVOL(                          \
                                                     "/h/x/c1") "]}}},\"status\":" DONE "}"
#define STS(containers, volumes, status)                                                \
    "{\"metadata\":{\"namespace\":\"n\",\"name\":\"etcd-main\",\"generation\":3},"      \
    "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"etcd\"}," containers \
    "],\"volumes\":[" volumes "]}}},\"status\":" status "}"
#define DONE    "{\"observedGeneration\":3,\"currentRevision\":\"r1\",\"updateRevision\":\"r1\"}"
#define ROLLING "{\"observedGeneration\":3,\"currentRevision\":\"r1\",\"updateRevision\":\"r2\"}"
#define BEHIND  "{\"observedGeneration\":2,\"currentRevision\":\"r1\",\"updateRevision\":\"r1\"}"

static enum kerr read_of(const char *json, struct ststore *s)
{
    cJSON *o = cJSON_Parse(json);
    char why[STSTORE_WHY_MAX];
    enum kerr rc;

    cr_assert(o, "fixture: %s", json);
    rc = ststore_read(o, s, why, sizeof(why));
    cr_assert(rc == KERR_OK ? why[0] == '\0' : why[0] != '\0');
    cJSON_Delete(o);
    return rc;
}

Test(ststore, reads_druids_sidecar)
{
    struct ststore s;

    cr_assert_eq(
        read_of(STS(SIDECAR(ARGS("S3", "n--etcd-main"), BUCKET("etcd-bucket")), "", DONE), &s),
        KERR_OK);
    cr_assert_str_eq(s.provider, "S3");
    cr_assert_str_eq(s.container, "etcd-bucket");
    cr_assert_str_eq(s.prefix, "n--etcd-main");
    cr_assert(!s.has_endpoint);
    cr_assert_eq(read_of(STS(SIDECAR(ARGS("S3", "p") ",\"--store-endpoint-override=http://x:1\"",
                                     BUCKET("b")),
                             "", DONE),
                         &s),
                 KERR_OK);
    cr_assert(s.has_endpoint);
    cr_assert_str_eq(s.endpoint, "http://x:1");
}

Test(ststore, local_volume)
{
    struct ststore s;

    cr_assert_eq(read_of(STS(LSIDECAR(ARGS("Local", "p"), BUCKET("c1"), "/home/nonroot/c1"),
                             LVOL("/h/x/c1"), DONE),
                         &s),
                 KERR_OK);
    cr_assert_str_eq(s.hostpath, "/h/x");
    /* spec.runAsRoot: etcd-druid mounts it under /root and runs the pod as root */
    cr_assert_eq(read_of(SC_STS("{\"runAsUser\":0}", "/root/c1/", ""), &s), KERR_OK);
    cr_assert_eq(read_of(SC_STS("{\"runAsUser\":65532}", "/home/nonroot/c1", ""), &s), KERR_OK);
    cr_assert_eq(
        read_of(SC_STS("{}", "/home/nonroot/c1", ",\"securityContext\":{\"runAsUser\":65532}"), &s),
        KERR_OK);
    /* the volume's path must end in the container; the volume must be there */
    cr_assert_eq(read_of(STS(LSIDECAR(ARGS("Local", "p"), BUCKET("c1"), "/home/nonroot/c1"),
                             LVOL("/h/x/c2"), DONE),
                         &s),
                 KERR_INVAL);
    cr_assert_eq(
        read_of(STS(LSIDECAR(ARGS("Local", "p"), BUCKET("c1"), "/home/nonroot/c1"), "", DONE), &s),
        KERR_INVAL);
}

/* etcdbrctl writes a Local store at $HOME/<container>/<prefix>: anything that moves that
 * directory away from the volume's root is unknown */
Test(ststore, local_home)
{
    struct ststore s;
    static const char *const bad[] = {
        /* $HOME is the user's home: the mount's home must be the user's */
        SC_STS("{}", "/root/c1", ""),
        SC_STS("{\"runAsUser\":65532}", "/root/c1", ""),
        SC_STS("{\"runAsUser\":0}", "/home/nonroot/c1", ""),
        SC_STS("{\"runAsUser\":0}", "/home/nonroot/c1",
               ",\"securityContext\":{\"runAsUser\":1000}"),
        SC_STS("{\"runAsUser\":\"0\"}", "/root/c1", ""),
        /* not mounted, mounted elsewhere, twice, with a subPath */
        STS(SIDECAR(ARGS("Local", "p"), BUCKET("c1")), LVOL("/h/x/c1"), DONE),
        STS(LSIDECAR(ARGS("Local", "p"), BUCKET("c1"), "/home/nonroot"), LVOL("/h/x/c1"), DONE),
        STS(LSIDECAR(ARGS("Local", "p"), BUCKET("c1"), "/home/nonroot/c1/v"), LVOL("/h/x/c1"),
            DONE),
        STS("{\"name\":\"backup-restore\",\"args\":[\"server\"," ARGS(
                "Local", "p") "],"
                              "\"env\":[" BUCKET(
                                  "c1") "],\"volumeMounts\":[{\"name\":\"local-backup\","
                                        "\"mountPath\":\"/home/nonroot/c1\",\"subPath\":\"v\"}]}",
            LVOL("/h/x/c1"), DONE),
        /* $HOME set by the template */
        STS(LSIDECAR(ARGS("Local", "p"),
                     BUCKET("c1") ",{\"name\":\"HOME\",\"value\":\"/home/nonroot/c1/v\"}",
                     "/home/nonroot/c1"),
            LVOL("/h/x/c1"), DONE),
        STS("{\"name\":\"backup-restore\",\"args\":[\"server\"," ARGS(
                "Local",
                "p") "],"
                     "\"env\":[" BUCKET("c1") "],\"envFrom\":[{\"configMapRef\":{\"name\":\"h\"}}],"
                                              "\"volumeMounts\":[{\"name\":\"local-backup\","
                                              "\"mountPath\":\"/home/nonroot/c1\"}]}",
            LVOL("/h/x/c1"), DONE),
        /* a container of more than one segment, from the flag (which etcdbrctl reads first) */
        STS(LSIDECAR(ARGS("Local", "p") ",\"--store-container=c1/v\"", BUCKET("c1"),
                     "/home/nonroot/c1"),
            LVOL("/h/x/c1"), DONE),
        STS(LSIDECAR(ARGS("Local", "p"), BUCKET(".."), "/home/nonroot/.."), LVOL("/h/x/.."), DONE),
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(read_of(bad[i], &s), KERR_INVAL, "accepted: %s", bad[i]);
}

/* etcdbrctl takes --store-container before STORAGE_CONTAINER; an empty flag leaves the env */
Test(ststore, container_flag)
{
    struct ststore s;

    cr_assert_eq(
        read_of(STS(SIDECAR(ARGS("S3", "p") ",\"--store-container=other\"", BUCKET("b")), "", DONE),
                &s),
        KERR_OK);
    cr_assert_str_eq(s.container, "other");
    cr_assert_eq(
        read_of(STS(SIDECAR(ARGS("S3", "p") ",\"--store-container=other\"", ""), "", DONE), &s),
        KERR_OK);
    cr_assert_str_eq(s.container, "other");
    cr_assert_eq(
        read_of(STS(SIDECAR(ARGS("S3", "p") ",\"--store-container=\"", BUCKET("b")), "", DONE), &s),
        KERR_OK);
    cr_assert_str_eq(s.container, "b");
    cr_assert_eq(read_of(STS(SIDECAR(ARGS("S3", "p") ",\"--store-container=a\","
                                                     "\"--store-container=b\"",
                                     BUCKET("b")),
                             "", DONE),
                         &s),
                 KERR_INVAL);
    /* the flag alone is a store: not "writes nothing" */
    cr_assert_eq(read_of(STS(SIDECAR("\"--store-container=b\"", ""), "", DONE), &s), KERR_INVAL);
}

Test(ststore, unknown_templates)
{
    struct ststore s;
    static const char *const bad[] = {
        STS("{\"name\":\"other\"}", "", DONE), /* no sidecar */
        STS(SIDECAR(ARGS("S3", "p"), BUCKET("b")) "," SIDECAR(ARGS("S3", "q"), BUCKET("b")), "",
            DONE),                                                                /* two */
        STS(SIDECAR(ARGS("S3", "p") "," ARGS("S3", "q"), BUCKET("b")), "", DONE), /* args twice */
        STS(SIDECAR(ARGS("awss", "p"), BUCKET("b")), "", DONE),                   /* unknown */
        STS(SIDECAR("\"--store-prefix=p\"", BUCKET("b")), "", DONE),              /* no provider */
        STS(SIDECAR("\"--storage-provider=S3\"", BUCKET("b")), "", DONE),         /* no prefix */
        STS(SIDECAR(ARGS("S3", "p"), ""), "", DONE),                              /* no container */
        STS(SIDECAR(ARGS("S3", "p"), BUCKET("b") "," BUCKET("c")), "", DONE),     /* env twice */
        STS(SIDECAR(ARGS("S3", "p"), "{\"name\":\"STORAGE_CONTAINER\",\"valueFrom\":{}}"), "",
            DONE),                                                 /* not plain */
        STS(SIDECAR(ARGS("S3", "p") ",7", BUCKET("b")), "", DONE), /* not a string */
        "{}",
        /* pflag takes "--flag value" too: a bare flag is not understood */
        STS(SIDECAR("\"--storage-provider\",\"S3\",\"--store-prefix=p\"", BUCKET("b")), "", DONE),
        STS(SIDECAR("\"--store-prefix\",\"p\"", ""), "", DONE),
        /* the kubelet expands $(VAR) in args and env values; pflag gives a bare flag the
           next arg and reads nothing after "--" as a flag */
        STS(SIDECAR(ARGS("S3", "n/$(P)"), BUCKET("b") ",{\"name\":\"P\",\"value\":\"x\"}"), "",
            DONE),
        STS(SIDECAR(ARGS("S3", "p"), BUCKET("$(B)")), "", DONE),
        STS(SIDECAR("\"--schedule\"," ARGS("S3", "p"), BUCKET("b")), "", DONE),
        STS(SIDECAR("\"-s\"," ARGS("S3", "p"), BUCKET("b")), "", DONE),
        STS(SIDECAR(ARGS("S3", "p") ",\"--\"", BUCKET("b")), "", DONE),
        STS("{\"name\":\"backup-restore\",\"command\":[\"etcdbrctl\",\"$(CMD)\"],"
            "\"args\":[" ARGS("S3", "p") "],\"env\":[" BUCKET("b") "]}",
            "", DONE),
        /* the command is the sidecar's argv too */
        STS("{\"name\":\"backup-restore\",\"command\":[\"etcdbrctl\",\"--store-prefix=q\"],"
            "\"args\":[" ARGS("S3", "p") "],\"env\":[" BUCKET("b") "]}",
            "", DONE),
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(read_of(bad[i], &s), KERR_INVAL, "accepted: %s", bad[i]);
    cr_assert_eq(ststore_read(NULL, &s, (char[8]){ 0 }, 8), KERR_INVAL);
}

Test(ststore, rollout)
{
    cJSON *done = cJSON_Parse(STS("{}", "", DONE)), *rolling = cJSON_Parse(STS("{}", "", ROLLING)),
          *behind = cJSON_Parse(STS("{}", "", BEHIND)), *none = cJSON_Parse(STS("{}", "", "{}"));

    cr_assert(ststore_rolled_out(done, 0));
    cr_assert(!ststore_rolled_out(rolling, 0));
    cr_assert(!ststore_rolled_out(behind, 0));
    cr_assert(!ststore_rolled_out(none, 0));
    /* the template of generation 2 is the one that counts (a scale since): seen at 2 */
    cr_assert(ststore_rolled_out(behind, 2));
    cr_assert(!ststore_rolled_out(behind, 3));
    cr_assert(!ststore_rolled_out(done, 4));
    cJSON_Delete(done);
    cJSON_Delete(rolling);
    cJSON_Delete(behind);
    cJSON_Delete(none);
}

/* ---- cmember ---- */

#define ETCD(ann, prefix)                                                                   \
    "{\"metadata\":{\"namespace\":\"n\",\"name\":\"etcd-main\",\"annotations\":{" ann "}}," \
    "\"spec\":{\"backup\":{\"store\":{\"provider\":\"aws\",\"container\":\"etcd-bucket\","  \
    "\"prefix\":\"" prefix "\"}}}}"

static const char *held(const char *etcd, const char *sts, const char *entry_prefix)
{
    static char why[CMEMBER_WHY_MAX];
    cJSON *e = etcd ? cJSON_Parse(etcd) : NULL, *s = sts ? cJSON_Parse(sts) : NULL;
    struct bstore_claim c;

    cr_assert(!etcd || e);
    cr_assert(!sts || s);
    cr_assert_eq(bstore_claim_init(&c, "aws", "etcd-bucket", NULL, entry_prefix, NULL), KERR_OK);
    cr_assert_eq(cmember_held_in(e, s, &c, why, sizeof(why)), KERR_OK);
    bstore_claim_release(&c);
    cJSON_Delete(e);
    cJSON_Delete(s);
    return why;
}

#define OLD_STS(status) STS(SIDECAR(ARGS("S3", "n--etcd-main"), BUCKET("etcd-bucket")), "", status)

Test(cmember, move_not_reconciled_holds)
{
    /* the spec moved, the template still writes the old prefix */
    cr_assert_neq(*held(ETCD("", "moved/x"), OLD_STS(DONE), "n--etcd-main"), '\0');
    cr_assert(strstr(held(ETCD("", "moved/x"), OLD_STS(DONE), "n--etcd-main"), "still write"));
    /* reconciled and rolled out: the old prefix is free */
    cr_assert_eq(*held(ETCD("", "moved/x"),
                       STS(SIDECAR(ARGS("S3", "moved/x"), BUCKET("etcd-bucket")), "", DONE),
                       "n--etcd-main"),
                 '\0');
    /* another container's template: apart */
    cr_assert_eq(*held(ETCD("", "moved/x"),
                       STS(SIDECAR(ARGS("S3", "n--etcd-main"), BUCKET("other")), "", DONE),
                       "n--etcd-main"),
                 '\0');
    /* rolling, unknown: held */
    cr_assert_neq(*held(ETCD("", "moved/x"),
                        STS(SIDECAR(ARGS("S3", "moved/x"), BUCKET("etcd-bucket")), "", ROLLING),
                        "n--etcd-main"),
                  '\0');
    cr_assert_neq(*held(ETCD("", "moved/x"), STS("{\"name\":\"x\"}", "", DONE), "n--etcd-main"),
                  '\0');
    /* no Etcd, no StatefulSet: nothing holds it; a StatefulSet left alone still does */
    cr_assert_eq(*held(NULL, NULL, "n--etcd-main"), '\0');
    cr_assert_neq(*held(NULL, OLD_STS(DONE), "n--etcd-main"), '\0');
}

Test(cmember, sleep_holds)
{
    cr_assert(strstr(
        held(ETCD("\"etcd-warden.io/final-snapshot-store\":\"x/-/-\"", "p"), NULL, "n--etcd-main"),
        "hibernated"));
}

static int stamp_same(const char *etcd, const char *sts, int64_t gen)
{
    cJSON *e = cJSON_Parse(etcd), *s = sts ? cJSON_Parse(sts) : NULL;
    char why[512];
    int same = -1;

    cr_assert_eq(cmember_stamp_store(e, NULL, s, gen, &same, why, sizeof(why)), KERR_OK);
    cr_assert(same ? why[0] == '\0' : why[0] != '\0');
    cJSON_Delete(e);
    cJSON_Delete(s);
    return same;
}

Test(cmember, stamp_only_of_the_members_store)
{
    /* ... once every pod runs that template */
    cr_assert_neq(*held(ETCD("", "moved/x"),
                        STS(SIDECAR("\"--server-port=8080\"", ""), "", ROLLING), "n--etcd-main"),
                  '\0');
    cr_assert_eq(stamp_same(ETCD("", "n--etcd-main"), OLD_STS(DONE), 0), 1);
    cr_assert_eq(stamp_same(ETCD("", "moved/x"), OLD_STS(DONE), 0), 0);
    /* ... once every pod runs that template */
    cr_assert_neq(*held(ETCD("", "moved/x"),
                        STS(SIDECAR("\"--server-port=8080\"", ""), "", ROLLING), "n--etcd-main"),
                  '\0');
    cr_assert_eq(stamp_same(ETCD("", "n--etcd-main"), OLD_STS(ROLLING), 0), 0);
    /* ... once every pod runs that template */
    cr_assert_neq(*held(ETCD("", "moved/x"),
                        STS(SIDECAR("\"--server-port=8080\"", ""), "", ROLLING), "n--etcd-main"),
                  '\0');
    cr_assert_eq(stamp_same(ETCD("", "n--etcd-main"), OLD_STS(BEHIND), 0), 0);
    /* ... once every pod runs that template */
    cr_assert_neq(*held(ETCD("", "moved/x"),
                        STS(SIDECAR("\"--server-port=8080\"", ""), "", ROLLING), "n--etcd-main"),
                  '\0');
    cr_assert_eq(stamp_same(ETCD("", "n--etcd-main"), OLD_STS(BEHIND), 2), 1);
    /* ... once every pod runs that template */
    cr_assert_neq(*held(ETCD("", "moved/x"),
                        STS(SIDECAR("\"--server-port=8080\"", ""), "", ROLLING), "n--etcd-main"),
                  '\0');
    cr_assert_eq(stamp_same(ETCD("", "n--etcd-main"), NULL, 0), 0);
    /* ... once every pod runs that template */
    cr_assert_neq(*held(ETCD("", "moved/x"),
                        STS(SIDECAR("\"--server-port=8080\"", ""), "", ROLLING), "n--etcd-main"),
                  '\0');
    cr_assert_eq(stamp_same(ETCD("", "n--etcd-main"), STS("{\"name\":\"x\"}", "", DONE), 0), 0);
}

Test(ststore, no_store)
{
    struct ststore s;

    /* etcd-druid's sidecar of an Etcd without a backup store: its members write nothing */
    cr_assert_eq(read_of(STS(SIDECAR("\"--server-port=8080\"", ""), "", DONE), &s), KERR_NOTFOUND);
    cr_assert_eq(*held(ETCD("", "moved/x"), STS(SIDECAR("\"--server-port=8080\"", ""), "", DONE),
                       "n--etcd-main"),
                 '\0');
    /* ... once every pod runs that template */
    cr_assert_neq(*held(ETCD("", "moved/x"),
                        STS(SIDECAR("\"--server-port=8080\"", ""), "", ROLLING), "n--etcd-main"),
                  '\0');
    cr_assert_eq(stamp_same(ETCD("", "n--etcd-main"),
                            STS(SIDECAR("\"--server-port=8080\"", ""), "", DONE), 0),
                 0);
}

/* ---- a pod's own spec; the member pods that outlive their StatefulSet ---- */

#define POD(name, phase, containers, volumes)                                               \
    "{\"metadata\":{\"namespace\":\"n\",\"name\":\"" name "\"},\"spec\":{\"containers\":["  \
    "{\"name\":\"etcd\"}," containers "],\"volumes\":[" volumes "]},\"status\":{\"phase\":" \
    "\"" phase "\"}}"
#define WRITES(prefix) SIDECAR(ARGS("S3", prefix), BUCKET("etcd-bucket"))

Test(ststore, pod_spec)
{
    cJSON *o = cJSON_Parse(POD("etcd-main-0", "Running", WRITES("n--etcd-main"), ""));
    char why[STSTORE_WHY_MAX];
    struct ststore s;

    cr_assert(o);
    cr_assert_eq(ststore_read_spec(kjson_get(o, "spec"), &s, why, sizeof(why)), KERR_OK);
    cr_assert_str_eq(s.prefix, "n--etcd-main");
    cr_assert_str_eq(s.container, "etcd-bucket");
    /* a StatefulSet is not a pod spec: nothing read */
    cr_assert_eq(ststore_read_spec(o, &s, why, sizeof(why)), KERR_INVAL);
    cJSON_Delete(o);
}

/* The hold of pods items over entry_prefix, the Etcd and its StatefulSet as read (NULL: gone). */
static const char *pods_held_by(const char *items, const char *etcd, const char *sts,
                                const char *entry_prefix)
{
    static char why[CMEMBER_WHY_MAX];
    cJSON *p = cJSON_Parse(items), *e = etcd ? cJSON_Parse(etcd) : NULL,
          *s = sts ? cJSON_Parse(sts) : NULL;
    struct bstore_claim c;

    cr_assert(p, "fixture: %s", items);
    cr_assert(!etcd || e);
    cr_assert(!sts || s);
    cr_assert_eq(bstore_claim_init(&c, "aws", "etcd-bucket", NULL, entry_prefix, NULL), KERR_OK);
    cr_assert_eq(cmember_pods_held_in(p, e, s, "n", "etcd-main", &c, why, sizeof(why)), KERR_OK);
    bstore_claim_release(&c);
    cJSON_Delete(p);
    cJSON_Delete(e);
    cJSON_Delete(s);
    return why;
}

static const char *pods_held(const char *items, const char *entry_prefix)
{
    return pods_held_by(items, NULL, NULL, entry_prefix);
}

Test(cmember, orphaned_pods_hold)
{
    /* a running member writes the prefix: held, naming the pod */
    cr_assert(strstr(pods_held("[" POD("etcd-main-1", "Running", WRITES("n--etcd-main"), "") "]",
                               "n--etcd-main"),
                     "pod n/etcd-main-1"));
    /* a pending one may still start writing it */
    cr_assert_neq(*pods_held("[" POD("etcd-main-0", "Pending", WRITES("n--etcd-main/x"), "") "]",
                             "n--etcd-main"),
                  '\0');
    /* unknown store (no sidecar, a provider not known): held (fail closed) */
    cr_assert(strstr(
        pods_held("[" POD("etcd-main-0", "Running", "{\"name\":\"x\"}", "") "]", "n--etcd-main"),
        "unknown"));
    cr_assert_neq(
        *pods_held("[" POD("etcd-main-0", "Running",
                           SIDECAR(ARGS("Nope", "n--etcd-main"), BUCKET("etcd-bucket")), "") "]",
                   "n--etcd-main"),
        '\0');
    /* the second pod holds even when the first does not */
    cr_assert_neq(*pods_held("[" POD("etcd-main-0", "Running", WRITES("other"), "") "," POD(
                                 "etcd-main-1", "Running", WRITES("n--etcd-main"), "") "]",
                             "n--etcd-main"),
                  '\0');
}

Test(cmember, pods_that_do_not_hold)
{
    /* none; another prefix; another container; no store at all */
    cr_assert_eq(*pods_held("[]", "n--etcd-main"), '\0');
    cr_assert_eq(
        *pods_held("[" POD("etcd-main-0", "Running", WRITES("moved/x"), "") "]", "n--etcd-main"),
        '\0');
    cr_assert_eq(*pods_held("[" POD("etcd-main-0", "Running",
                                    SIDECAR(ARGS("S3", "n--etcd-main"), BUCKET("other")), "") "]",
                            "n--etcd-main"),
                 '\0');
    cr_assert_eq(*pods_held("[" POD("etcd-main-0", "Running",
                                    "{\"name\":\"backup-restore\",\"args\":[\"server\"]}", "") "]",
                            "n--etcd-main"),
                 '\0');
    /* finished pods never run again, whatever they wrote or say */
    cr_assert_eq(*pods_held("[" POD("etcd-main-0", "Succeeded", WRITES("n--etcd-main"), "") "," POD(
                                "etcd-main-1", "Failed", "{\"name\":\"x\"}", "") "]",
                            "n--etcd-main"),
                 '\0');
}

Test(cmember, pod_hold_names_why_it_runs)
{
    const char *one = "[" POD("etcd-main-1", "Running", WRITES("n--etcd-main"), "") "]";
    const char *moved = STS(SIDECAR(ARGS("S3", "moved/x"), BUCKET("etcd-bucket")), "", DONE);

    /* the StatefulSet exists (its template moved): the pod has only not rolled yet */
    cr_assert(strstr(pods_held_by(one, ETCD("", "moved/x"), moved, "n--etcd-main"),
                     "StatefulSet n/etcd-main exists and its template does not write there: the "
                     "pod has not rolled onto it yet"));
    cr_assert(!strstr(pods_held_by(one, ETCD("", "moved/x"), moved, "n--etcd-main"), "deleted"));
    /* the StatefulSet was deleted orphaning it, the Etcd is there */
    cr_assert(strstr(pods_held_by(one, ETCD("", "moved/x"), NULL, "n--etcd-main"),
                     "(its StatefulSet was deleted leaving it running)"));
    /* both gone */
    cr_assert(strstr(pods_held_by(one, NULL, NULL, "n--etcd-main"),
                     "(its Etcd and its StatefulSet were deleted leaving it running)"));
}

/* A store that is read but cannot be claimed (a container no bucket can be named) holds. */
#define UNCLAIMABLE SIDECAR(ARGS("S3", "n--etcd-main"), BUCKET("a/b"))

Test(cmember, unclaimable_store_holds)
{
    cr_assert(strstr(held(ETCD("", "moved/x"), STS(UNCLAIMABLE, "", DONE), "n--etcd-main"),
                     "backup sidecar cannot be claimed ("));
    cr_assert(strstr(pods_held("[" POD("etcd-main-0", "Running",
                                       SIDECAR(ARGS("S3", "x"), BUCKET("a/b")), "") "]",
                               "n--etcd-main"),
                     "of its backup sidecar cannot be claimed ("));
    cr_assert_eq(stamp_same(ETCD("", "n--etcd-main"), STS(UNCLAIMABLE, "", DONE), 0), 0);
    /* unknown also while rolling; unknown before its rollout is looked at */
    cr_assert(strstr(held(ETCD("", "moved/x"), STS(UNCLAIMABLE, "", ROLLING), "n--etcd-main"),
                     "cannot be claimed"));
    cr_assert(
        strstr(held(ETCD("", "moved/x"), STS("{\"name\":\"x\"}", "", ROLLING), "n--etcd-main"),
               "is unknown ("));
}

Test(cmember, member_selector)
{
    char sel[160], name[CMEMBER_LABEL_MAX + 2];

    cr_assert_eq(cmember_selector("etcd-main", sel, sizeof(sel)), 1);
    cr_assert_str_eq(sel, "app.kubernetes.io/managed-by=etcd-druid,"
                          "app.kubernetes.io/part-of=etcd-main");
    memset(name, 'a', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    cr_assert_eq(cmember_selector(name, sel, sizeof(sel)), 0); /* 64: no label carries it */
    name[CMEMBER_LABEL_MAX] = '\0';
    cr_assert_eq(cmember_selector(name, sel, sizeof(sel)), 1);
    cr_assert_eq(cmember_selector("etcd-main", sel, 8), 0);
    cr_assert_eq(cmember_selector("", sel, sizeof(sel)), 0);
}
