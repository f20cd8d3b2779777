/*
 * webhook/cfgguard: etcd's data-dir in the Etcd's ConfigMap <etcd>-config stays at or below
 * the members' claim mount, whoever writes it and whether component protection is on or off
 * (issue 30; e2e attack7_config_datadir).
 */
#include "webhook/cfgguard.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/guardfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/testutil.h"
#include "webhook/datamnt.h"
#include "webhook/wh_dispatch.h"

#define CONF(dir)                                                                        \
    "name: etcd-config\\ndata-dir: " dir "\\nlisten-client-urls: http://0.0.0.0:2379\\n" \
    "initial-cluster-state: new\\n"
#define ANN_OPEN "\"druid.gardener.cloud/disable-etcd-component-protection\":\"\""
#define ETCD(extra)                                                                         \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"uid-e\"" extra \
    ",\"annotations\":{" ANN_OPEN "}},\"spec\":{\"replicas\":3}}"
#define STS                                                                                   \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"uid-sts\"},"     \
    "\"spec\":{\"replicas\":3,\"template\":{\"spec\":{\"containers\":[{\"name\":\"etcd\","    \
    "\"volumeMounts\":[{\"name\":\"etcd-main\",\"mountPath\":\"/var/etcd/data\"},{\"name\":"  \
    "\"scratch\",\"mountPath\":\"/var/etcd/scratch\"},{\"name\":\"etcd-main\",\"mountPath\":" \
    "\"/var/etcd/sub\",\"subPath\":\"x\"}]},{\"name\":\"backup-restore\",\"volumeMounts\":[{" \
    "\"name\":\"etcd-main\",\"mountPath\":\"/srv\"}]}]}},\"volumeClaimTemplates\":[{"         \
    "\"metadata\":{\"name\":\"etcd-main\"}}]}}"

Test(cfgguard, the_etcd_of_a_configmap_name)
{
    char e[LOOKUP_NAME_MAX + 1];

    cr_assert(cfgguard_etcd_of("etcd-main-config", e, sizeof(e)));
    cr_assert_str_eq(e, "etcd-main");
    cr_assert(!cfgguard_etcd_of("-config", e, sizeof(e)));
    cr_assert(!cfgguard_etcd_of("etcd-main-configs", e, sizeof(e)));
    cr_assert(!cfgguard_etcd_of("etcd-main", e, sizeof(e)));
    cr_assert(!cfgguard_etcd_of(NULL, e, sizeof(e)));
    cr_assert(!cfgguard_etcd_of("etcd-main-config", e, 9), "etcd-main does not fit 9 bytes");
}

struct yrow {
    const char *what, *text, *dir, *why;
};

static const struct yrow YROWS[] = {
    { "etcd-druid's", "name: etcd-config\ndata-dir: /var/etcd/data/new.etcd\n",
      "/var/etcd/data/new.etcd", NULL },
    { "quoted, among flow keys", "{\"data-dir\": '/var/etcd/data/x', name: a}", "/var/etcd/data/x",
      NULL },
    { "absent", "name: etcd-config\n", NULL, "no data-dir" },
    { "null", "data-dir:\n", NULL, "no data-dir" },
    { "quoted empty", "data-dir: ''\n", NULL, "data-dir is empty" },
    { "empty text", "", NULL, "no data-dir" },
    { "set twice", "data-dir: /var/etcd/data/a\ndata-dir: /tmp\n", NULL, "set twice" },
    { "set twice ignoring case", "data-dir: /var/etcd/data/a\nDATA-DIR: /tmp\n", NULL,
      "set twice" },
    { "a merge key", "<<: {data-dir: /tmp}\ndata-dir: /var/etcd/data/a\n", NULL, "merge key" },
    { "a list", "data-dir: [/tmp]\n", NULL, "must be a string, not a list" },
    { "not a mapping", "- data-dir: /tmp\n", NULL, "mapping" },
    { "an alias to a mapping twice", "a: &x {b: 1}\nc: *x\ndata-dir: /var/etcd/data/a\n",
      "/var/etcd/data/a", NULL },
    { "not YAML", "data-dir: [\n", NULL, "not YAML" },
    { "a complex key", "? [a]\n: b\ndata-dir: /x\n", NULL, "keys must be strings" },
    { "wal-dir set twice ignoring case", "data-dir: /a\nwal-dir: /b\nWal-Dir: /c\n", NULL,
      "wal-dir is set twice" },
    { "wal-dir a list", "data-dir: /a\nwal-dir: [/b]\n", NULL, "wal-dir must be a string" },
    { "wal-dir by a merge key", "data-dir: /a\n<<: {wal-dir: /tmp}\n", NULL, "merge key" },
};

ParameterizedTestParameters(cfgguard, data_dir)
{
    static size_t idx[sizeof(YROWS) / sizeof(YROWS[0])];

    return testutil_row_params(idx, sizeof(YROWS) / sizeof(YROWS[0]));
}

ParameterizedTest(size_t *i, cfgguard, data_dir)
{
    const struct yrow *t = &YROWS[*i];
    struct kerr_info e;
    char dir[64];
    enum kerr rc;

    kerr_clear(&e);
    rc = cfgguard_data_dir(t->text, strlen(t->text), dir, sizeof(dir), &e);
    if (t->dir) {
        cr_assert_eq(rc, KERR_OK, "%s: %s", t->what, e.msg);
        cr_assert_str_eq(dir, t->dir, "%s", t->what);
    } else {
        cr_assert_eq(rc, KERR_PARSE, "%s: %d", t->what, rc);
        cr_assert(strstr(e.msg, t->why), "%s: %s", t->what, e.msg);
        cr_assert(strstr(e.msg, CFGGUARD_KEY ":"), "%s: %s", t->what, e.msg);
    }
}

struct wrow {
    const char *what, *text, *data, *wal;
};

static const struct wrow WROWS[] = {
    { "etcd-druid's: no wal-dir", "data-dir: /var/etcd/data/new.etcd\n", "/var/etcd/data/new.etcd",
      "" },
    { "wal-dir null", "data-dir: /d\nwal-dir: ~\n", "/d", "" },
    { "wal-dir empty", "data-dir: /d\nwal-dir: ''\n", "/d", "" },
    { "wal-dir set", "data-dir: /d\nWAL-DIR: /w\n", "/d", "/w" },
};

ParameterizedTestParameters(cfgguard, dirs)
{
    static size_t idx[sizeof(WROWS) / sizeof(WROWS[0])];

    return testutil_row_params(idx, sizeof(WROWS) / sizeof(WROWS[0]));
}

ParameterizedTest(size_t *i, cfgguard, dirs)
{
    const struct wrow *t = &WROWS[*i];
    struct cfgguard_dirs *d = malloc(sizeof(*d));
    struct kerr_info e;

    cr_assert_not_null(d);
    kerr_clear(&e);
    cr_assert_eq(cfgguard_dirs_read(t->text, strlen(t->text), d, &e), KERR_OK, "%s: %s", t->what,
                 e.msg);
    cr_assert_str_eq(d->data, t->data, "%s", t->what);
    cr_assert_str_eq(d->wal, t->wal, "%s", t->what);
    free(d);
}

/* A struct cfgguard_dirs (heap: two paths of CFGGUARD_DIR_MAX) with data and wal. */
static struct cfgguard_dirs *dirs(const char *data, const char *wal)
{
    struct cfgguard_dirs *d = calloc(1, sizeof(*d));

    cr_assert_not_null(d);
    snprintf(d->data, sizeof(d->data), "%s", data);
    snprintf(d->wal, sizeof(d->wal), "%s", wal);
    return d;
}

Test(cfgguard, the_places_of_data_and_wal)
{
    cJSON *sts = jsonfix_parse(STS);
    struct cfgguard_dirs *druid = dirs("/var/etcd/data/new.etcd", ""),
                         *slash = dirs("//var/etcd/data/new.etcd/", ""),
                         *wal =
                             dirs("/var/etcd/data/new.etcd", "/var/etcd/data/new.etcd/member/wal"),
                         *other = dirs("/var/etcd/data/other", ""),
                         *owal = dirs("/var/etcd/data/new.etcd", "/var/etcd/data/wal"),
                         *top = dirs("/var/etcd/data", ""),
                         *dots = dirs("/var/etcd/data/../data/new.etcd", "");
    char w[CFGGUARD_WAL_MAX];

    cfgguard_wal_of(druid, w, sizeof(w));
    cr_assert_str_eq(w, "/var/etcd/data/new.etcd/member/wal");
    cfgguard_wal_of(owal, w, sizeof(w));
    cr_assert_str_eq(w, "/var/etcd/data/wal");
    cr_assert(cfgguard_same_place(druid, slash), "repeated and trailing slashes");
    cr_assert(cfgguard_same_place(druid, wal), "wal-dir at its default");
    cr_assert(!cfgguard_same_place(druid, other), "issue 30: data-dir elsewhere on the claim");
    cr_assert(!cfgguard_same_place(druid, owal), "wal-dir elsewhere on the claim");
    cr_assert(!cfgguard_same_place(dots, dots), "a .. component is no place");
    cr_assert(cfgguard_druid_place(sts, druid));
    cr_assert(cfgguard_druid_place(sts, slash));
    cr_assert(cfgguard_druid_place(sts, wal));
    cr_assert(cfgguard_druid_place(NULL, druid), "StatefulSet gone: etcd-druid's mount");
    cr_assert(!cfgguard_druid_place(sts, other));
    cr_assert(!cfgguard_druid_place(sts, owal));
    cr_assert(!cfgguard_druid_place(sts, top));
    cr_assert(!cfgguard_druid_place(sts, dots));
    cr_assert(!cfgguard_druid_place(NULL, other));
    free(druid);
    free(slash);
    free(wal);
    free(other);
    free(owal);
    free(top);
    free(dots);
    cJSON_Delete(sts);
}

/* A StatefulSet whose container etcd mounts claim volumes a at pa and b at pb. */
static cJSON *two_mounts(const char *a, const char *pa, const char *b, const char *pb)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\"},\"spec\":{"
             "\"template\":{\"spec\":{\"containers\":[{\"name\":\"etcd\",\"volumeMounts\":["
             "{\"name\":\"%s\",\"mountPath\":\"%s\"},{\"name\":\"%s\",\"mountPath\":\"%s\"}]}]}},"
             "\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"etcd-main\"}},{\"metadata\":"
             "{\"name\":\"other\"}}]}}",
             a, pa, b, pb);
    return jsonfix_parse(text);
}

/* Rule 3 puts the data on the members' claim volume only, when etcd mounts two. */
Test(cfgguard, etcd_druids_place_is_on_the_members_claim_volume)
{
    struct cfgguard_dirs *data = dirs("/var/etcd/data/new.etcd", ""),
                         *other = dirs("/var/etcd/other/new.etcd", ""),
                         *again = dirs("/srv/again/new.etcd", "");
    cJSON *sts = two_mounts("other", "/var/etcd/other", "etcd-main", "/var/etcd/data");

    cr_assert(cfgguard_druid_place(sts, data), "the volume at etcd-druid's path");
    cr_assert(!cfgguard_druid_place(sts, other), "another claim: empty at the next start");
    cJSON_Delete(sts);
    sts = two_mounts("etcd-main", "/var/etcd/other", "other", "/srv/again");
    cr_assert(!cfgguard_druid_place(sts, other), "two claims, neither at etcd-druid's path");
    cr_assert(!cfgguard_druid_place(sts, again), "two claims, neither at etcd-druid's path");
    cJSON_Delete(sts);
    sts = two_mounts("etcd-main", "/var/etcd/other", "etcd-main", "/srv/again");
    cr_assert(cfgguard_druid_place(sts, other), "one claim volume, mounted twice");
    cr_assert(cfgguard_druid_place(sts, again), "one claim volume, mounted twice");
    cJSON_Delete(sts);
    free(data);
    free(other);
    free(again);
}

Test(cfgguard, a_data_dir_too_long_is_refused)
{
    char text[200], dir[16];
    struct kerr_info e;

    snprintf(text, sizeof(text), "data-dir: /var/etcd/data/%0100d\n", 7);
    cr_assert_eq(cfgguard_data_dir(text, strlen(text), dir, sizeof(dir), &e), KERR_PARSE);
    cr_assert(strstr(e.msg, "longer than 15 bytes"), "%s", e.msg);
}

Test(cfgguard, the_claim_under_a_data_dir)
{
    cJSON *sts = jsonfix_parse(STS);

    cr_assert_str_eq(cfgguard_claim_of(sts, "/var/etcd/data/new.etcd"), "etcd-main");
    cr_assert_str_eq(cfgguard_claim_of(sts, "/var/etcd/data"), "etcd-main");
    cr_assert_str_eq(cfgguard_claim_of(sts, "//var/etcd//data/new.etcd/"), "etcd-main");
    cr_assert_null(cfgguard_claim_of(sts, "/var/etcd/scratch/new.etcd"), "not a claim's volume");
    cr_assert_null(cfgguard_claim_of(sts, "/var/etcd/sub/new.etcd"), "a sub path of the claim");
    cr_assert_null(cfgguard_claim_of(sts, "/srv/new.etcd"), "the sidecar's mount, not etcd's");
    cr_assert_null(cfgguard_claim_of(sts, "/var/etcd/data/../scratch"), "a .. component");
    cr_assert_null(cfgguard_claim_of(sts, "/var/etcd/data/./x"), "a . component");
    cr_assert_null(cfgguard_claim_of(sts, "var/etcd/data/new.etcd"), "relative to etcd's cwd");
    cr_assert_null(cfgguard_claim_of(sts, "/var/etcd/database"), "a sibling, not below");
    cr_assert_null(cfgguard_claim_of(sts, "/tmp/new.etcd"));
    cr_assert_str_eq(cfgguard_claim_of(NULL, "/var/etcd/data/new.etcd"), "the member claim",
                     "the StatefulSet gone: etcd-druid's mount");
    cr_assert_null(cfgguard_claim_of(NULL, "/tmp/new.etcd"));
    cr_assert(cfgguard_etcd_on_claim(sts));
    cr_assert(cfgguard_etcd_on_claim(NULL), "etcd-druid's StatefulSet mounts its claim");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(sts, "spec"), "volumeClaimTemplates");
    cr_assert(!cfgguard_etcd_on_claim(sts), "no claim template: no claim mounted");
    cJSON_Delete(sts);
}

/* A request through a webhook: ConfigMap name with data (JSON object text, NULL: none). */
struct row {
    const char *what;
    enum wh_hook hook;
    const char *op, *name, *data, *binary, *etcd;
    int sts, fail, allowed;
    const char *message;
    const char *old; /* the data of the old object of an UPDATE (NULL: CM_OK) */
};

#define CM_OK     "{\"etcd.conf.yaml\":\"" CONF("/var/etcd/data/new.etcd") "\"}"
#define CM_OFF    "{\"etcd.conf.yaml\":\"" CONF("/var/etcd/scratch/new.etcd") "\"}"
#define CM_TMP    "{\"etcd.conf.yaml\":\"" CONF("/tmp/new.etcd") "\"}"
#define CM_ELSE   "{\"etcd.conf.yaml\":\"" CONF("/var/etcd/data/other") "\"}"
#define CM_WAL(w) "{\"etcd.conf.yaml\":\"" CONF("/var/etcd/data/new.etcd") "wal-dir: " w "\\n\"}"
#define CM_KEY(k) "{\"etcd.conf.yaml\":\"" CONF("/var/etcd/data/new.etcd") k "\"}"
#define FORKS     "is etcd's configuration of live Etcd etcd-main: it sets force-new-cluster"
#define MOVES     "it moves etcd's data-dir from \"/var/etcd/data/new.etcd\" to "
#define DRUIDS    "it must put data-dir where etcd-druid does, new.etcd directly in a path where"
#define ETCD_OK   ETCD("")
#define ETCD_GONE                                                                    \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-other\",\"uid\":\"u\"}," \
    "\"spec\":{\"replicas\":3}}"
#define ETCD_DELETING ETCD(",\"deletionTimestamp\":\"2026-11-18T00:00:00Z\"")
#define C             WH_HOOK_COMPONENTS
#define G             WH_HOOK_SCALEGUARD
#define OFF           "is not at or below a path where container etcd of StatefulSet etcd-main"

static const struct row ROWS[] = {
    { "K1: an UPDATE moving data-dir off the claim", C, "UPDATE", "etcd-main-config", CM_OFF, NULL,
      ETCD_OK, 1, 0, 0, "data-dir \"/var/etcd/scratch/new.etcd\" " OFF, NULL },
    { "K1 on the scale-guard path", G, "UPDATE", "etcd-main-config", CM_OFF, NULL, ETCD_OK, 1, 0, 0,
      OFF, NULL },
    { "K2: her own ConfigMap created", C, "CREATE", "etcd-main-config", CM_TMP, NULL, ETCD_OK, 1, 0,
      0, "data-dir \"/tmp/new.etcd\" " OFF, NULL },
    { "K2 on the scale-guard path", G, "CREATE", "etcd-main-config", CM_TMP, NULL, ETCD_OK, 1, 0, 0,
      OFF, NULL },
    { "etcd-druid's data-dir", C, "UPDATE", "etcd-main-config", CM_OK, NULL, ETCD_OK, 1, 0, 1, NULL,
      NULL },
    { "etcd-druid's data-dir, created", G, "CREATE", "etcd-main-config", CM_OK, NULL, ETCD_OK, 1, 0,
      1, NULL, NULL },
    { "the StatefulSet not created yet: etcd-druid's mount", C, "CREATE", "etcd-main-config", CM_OK,
      NULL, ETCD_OK, 0, 0, 1, NULL, NULL },
    { "the StatefulSet not created yet, off etcd-druid's mount", C, "CREATE", "etcd-main-config",
      CM_TMP, NULL, ETCD_OK, 0, 0, 0, "etcd-druid mounts the member claim, /var/etcd/data", NULL },
    { "no etcd.conf.yaml", C, "UPDATE", "etcd-main-config", "{\"other\":\"x\"}", NULL, ETCD_OK, 1,
      0, 0, "has no etcd.conf.yaml", NULL },
    { "no data at all", G, "CREATE", "etcd-main-config", NULL, NULL, ETCD_OK, 1, 0, 0,
      "has no etcd.conf.yaml", NULL },
    { "etcd.conf.yaml in binaryData", C, "UPDATE", "etcd-main-config", "{}",
      "{\"etcd.conf.yaml\":\"ZGF0YS1kaXI6IC90bXAK\"}", ETCD_OK, 1, 0, 0, "not in binaryData",
      NULL },
    { "data-dir twice", C, "UPDATE", "etcd-main-config",
      "{\"etcd.conf.yaml\":\"data-dir: /var/etcd/data/new.etcd\\nData-Dir: /tmp\\n\"}", NULL,
      ETCD_OK, 1, 0, 0, "data-dir is set twice", NULL },
    { "not YAML", C, "UPDATE", "etcd-main-config", "{\"etcd.conf.yaml\":\"data-dir: [\"}", NULL,
      ETCD_OK, 1, 0, 0, "not YAML", NULL },
    { "the ConfigMap of no Etcd", C, "CREATE", "etcd-main-config", CM_TMP, NULL, ETCD_GONE, 1, 0, 1,
      NULL, NULL },
    { "an Etcd being deleted", C, "UPDATE", "etcd-main-config", CM_TMP, NULL, ETCD_DELETING, 1, 0,
      1, NULL, NULL },
    { "another ConfigMap", C, "CREATE", "etcd-main-settings", CM_TMP, NULL, ETCD_OK, 1, 0, 1, NULL,
      NULL },
    { "a StatefulSet whose etcd mounts no claim", C, "UPDATE", "etcd-main-config", CM_TMP, NULL,
      ETCD_OK, 2, 0, 1, NULL, NULL },
    { "the lookups failing", C, "UPDATE", "etcd-main-config", CM_OK, NULL, ETCD_OK, 1, 1, 0,
      "could not be read", NULL },
    { "issue 30: data-dir moved elsewhere on the claim", C, "UPDATE", "etcd-main-config", CM_ELSE,
      NULL, ETCD_OK, 1, 0, 0, MOVES "\"/var/etcd/data/other\"", NULL },
    { "data-dir elsewhere on the claim, created", C, "CREATE", "etcd-main-config", CM_ELSE, NULL,
      ETCD_OK, 1, 0, 0, DRUIDS, NULL },
    { "data-dir elsewhere on the claim, created before the StatefulSet", C, "CREATE",
      "etcd-main-config", CM_ELSE, NULL, ETCD_OK, 0, 0, 0, DRUIDS, NULL },
    { "issue 30: wal-dir off the claim", C, "UPDATE", "etcd-main-config", CM_WAL("/tmp/wal"), NULL,
      ETCD_OK, 1, 0, 0, "its wal-dir \"/tmp/wal\" is not at or below a path where container etcd",
      NULL },
    { "wal-dir elsewhere on the claim", G, "UPDATE", "etcd-main-config",
      CM_WAL("/var/etcd/data/wal"), NULL, ETCD_OK, 1, 0, 0,
      "it moves etcd's write-ahead log from \"/var/etcd/data/new.etcd/member/wal\" to "
      "\"/var/etcd/data/wal\"",
      NULL },
    { "wal-dir elsewhere on the claim, created", C, "CREATE", "etcd-main-config",
      CM_WAL("/var/etcd/data/wal"), NULL, ETCD_OK, 1, 0, 0, DRUIDS, NULL },
    { "wal-dir at its default", C, "UPDATE", "etcd-main-config",
      CM_WAL("/var/etcd/data/new.etcd/member/wal"), NULL, ETCD_OK, 1, 0, 1, NULL, NULL },
    { "data-dir kept elsewhere on the claim", C, "UPDATE", "etcd-main-config", CM_ELSE, NULL,
      ETCD_OK, 1, 0, 1, NULL, CM_ELSE },
    { "data-dir moved back to etcd-druid's", C, "UPDATE", "etcd-main-config", CM_OK, NULL, ETCD_OK,
      1, 0, 0, "it moves etcd's data-dir from \"/var/etcd/data/other\"", CM_ELSE },
    { "over an old one without etcd.conf.yaml: etcd-druid's", C, "UPDATE", "etcd-main-config",
      CM_OK, NULL, ETCD_OK, 1, 0, 1, NULL, "{}" },
    { "over an old one without etcd.conf.yaml: elsewhere", C, "UPDATE", "etcd-main-config", CM_ELSE,
      NULL, ETCD_OK, 1, 0, 0, "over a configuration without a readable data-dir", "{}" },
    { "over an old one off the claim: elsewhere", C, "UPDATE", "etcd-main-config", CM_ELSE, NULL,
      ETCD_OK, 1, 0, 0, "over a configuration without a readable data-dir", CM_TMP },
    { "issue 30: force-new-cluster", C, "UPDATE", "etcd-main-config",
      CM_KEY("force-new-cluster: true\\n"), NULL, ETCD_OK, 1, 0, 0, FORKS, NULL },
    { "force-new-cluster created before the StatefulSet", G, "CREATE", "etcd-main-config",
      CM_KEY("Force-New-Cluster: true\\n"), NULL, ETCD_OK, 0, 0, 0, FORKS, NULL },
    { "force-new-cluster where etcd mounts no claim", C, "UPDATE", "etcd-main-config",
      CM_KEY("force-new-cluster: true\\n"), NULL, ETCD_OK, 2, 0, 0, FORKS, NULL },
    { "issue 30: unsafe-no-fsync", C, "UPDATE", "etcd-main-config",
      CM_KEY("unsafe-no-fsync: true\\n"), NULL, ETCD_OK, 1, 0, 0, "it sets unsafe-no-fsync", NULL },
    { "issue 30: another cluster token", C, "UPDATE", "etcd-main-config",
      CM_KEY("initial-cluster-token: mine\\n"), NULL, ETCD_OK, 1, 0, 0,
      "it changes initial-cluster-token from \"etcd-cluster\" to \"mine\"", NULL },
    { "a token of her own created", C, "CREATE", "etcd-main-config",
      CM_KEY("initial-cluster-token: mine\\n"), NULL, ETCD_OK, 1, 0, 0,
      "it sets initial-cluster-token to \"mine\"", NULL },
    { "etcd-druid's scale-up: initial-cluster and the false flags", C, "UPDATE", "etcd-main-config",
      CM_KEY("initial-cluster: a=http://a:2380,b=http://b:2380\\nforce-new-cluster: false\\n"),
      NULL, ETCD_OK, 1, 0, 1, NULL, CM_KEY("initial-cluster: a=http://a:2380\\n") },
    { "the keys of an Etcd being deleted", C, "UPDATE", "etcd-main-config",
      CM_KEY("force-new-cluster: true\\n"), NULL, ETCD_DELETING, 1, 0, 1, NULL, NULL },
};
#define NROWS (sizeof(ROWS) / sizeof(ROWS[0]))

static char *review(const struct row *t)
{
    char *body = malloc(8192), obj[4096];
    const char *old = strcmp(t->op, "UPDATE") == 0 ? "" : NULL;

    cr_assert_not_null(body);
    snprintf(obj, sizeof(obj),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
             "\"shoot\",\"name\":\"%s\",\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-"
             "druid\",\"app.kubernetes.io/part-of\":\"etcd-main\"}}%s%s%s%s}",
             t->name, t->data ? ",\"data\":" : "", t->data ? t->data : "",
             t->binary ? ",\"binaryData\":" : "", t->binary ? t->binary : "");
    snprintf(body, 8192,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"0000-7777\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":"
             "\"ConfigMap\"},\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":"
             "\"configmaps\"},\"name\":\"%s\",\"namespace\":\"shoot\",\"operation\":\"%s\","
             "\"userInfo\":{\"username\":\"%s\"},\"object\":%s,\"oldObject\":%s%s%s}}",
             t->name, t->op, GUARDFIX_PERSON, obj,
             old ? "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
                   "\"shoot\",\"name\":\"etcd-main-config\"},\"data\":"
                 : "null",
             old ? (t->old ? t->old : CM_OK) : "", old ? "}" : "");
    return body;
}

ParameterizedTestParameters(cfgguard, rows)
{
    static size_t idx[NROWS];

    return testutil_row_params(idx, NROWS);
}

/* sts as the webhook's cache keeps it (wh_cache: lookup_sts_project, datamnt_project). */
static cJSON *projected(cJSON *sts)
{
    cJSON *p = lookup_sts_project(sts);

    cr_assert_not_null(p);
    cr_assert_eq(datamnt_project(p, sts), 0);
    cJSON_Delete(sts);
    return p;
}

/* Row t with the StatefulSet whole (proj 0) or as the cache keeps it (1). */
static void run_row(const struct row *t, int proj)
{
    struct protect_config cfg;
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_CreateArray(), *stses = cJSON_CreateArray(), *doc, *sts = NULL;
    char *body = review(t);

    guardfix_config(&cfg);
    cJSON_AddItemToArray(etcds, jsonfix_parse(t->etcd));
    if (t->sts == 1)
        sts = jsonfix_parse(STS);
    if (t->sts == 2) /* no volumeClaimTemplate: nothing etcd mounts is a claim */
        sts = jsonfix_parse("{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\"},"
                            "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":"
                            "\"etcd\",\"volumeMounts\":[{\"name\":\"d\",\"mountPath\":"
                            "\"/var/etcd/data\"}]}]}}}}");
    if (sts)
        cJSON_AddItemToArray(stses, proj ? projected(sts) : sts);
    mem.etcds = etcds;
    mem.stses = stses;
    mem.fail = t->fail ? KERR_API : KERR_OK;
    lookup_mem_bind(&mem, &lk);
    doc = guardfix_dispatch(&cfg, &mem, &lk, t->hook, !t->fail, body);
    guardfix_expect(doc, t->what, t->allowed, t->message);
    cJSON_Delete(doc);
    free(body);
    cJSON_Delete(etcds);
    cJSON_Delete(stses);
}

ParameterizedTest(size_t *i, cfgguard, rows)
{
    run_row(&ROWS[*i], 0);
    run_row(&ROWS[*i], 1); /* issue 33: the same answers from the cache's projection */
}

Test(cfgguard, no_statefulset_lookup_is_a_500)
{
    struct row t = {
        "no sts_object",       C,   "UPDATE", "etcd-main-config", CM_OK, NULL, ETCD_OK, 1, 0, 0,
        "cannot be read here", NULL
    };
    struct protect_config cfg;
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_CreateArray(), *doc;
    char *body = review(&t);
    int64_t code = 0;

    guardfix_config(&cfg);
    cJSON_AddItemToArray(etcds, jsonfix_parse(t.etcd));
    mem.etcds = etcds;
    lookup_mem_bind(&mem, &lk);
    lk.sts_object = NULL;
    doc = guardfix_dispatch(&cfg, &mem, &lk, t.hook, false, body);
    guardfix_expect(doc, t.what, 0, t.message);
    cr_assert_eq(kjson_get_int64(doc, "response.status.code", &code), KERR_OK);
    cr_assert_eq(code, 500);
    cJSON_Delete(doc);
    free(body);
    cJSON_Delete(etcds);
}

/* A StatefulSet lookup only a cache answered, with no API answer (wh_cache past its limit). */
static enum kerr sts_unconfirmed(void *ctx, const char *ns, const char *name, cJSON **obj,
                                 struct kerr_info *err)
{
    (void)ctx;
    (void)ns;
    *obj = NULL;
    kerr_set(err, KERR_NOTFOUND, "statefulsets.apps \"%s\" not found", name);
    snprintf(err->reason, sizeof(err->reason), "%s", LOOKUP_REASON_UNCONFIRMED);
    return KERR_NOTFOUND;
}

/* Issue 33: a StatefulSet the cache misses and nobody confirmed gone is a 500, not "gone". */
Test(cfgguard, an_unconfirmed_statefulset_miss_is_a_500)
{
    struct row t = {
        "unconfirmed miss",  C,   "CREATE", "etcd-main-config", CM_OK, NULL, ETCD_OK, 0, 0, 0,
        "could not be read", NULL
    };
    struct protect_config cfg;
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_CreateArray(), *doc;
    char *body = review(&t);
    int64_t code = 0;

    guardfix_config(&cfg);
    cJSON_AddItemToArray(etcds, jsonfix_parse(t.etcd));
    mem.etcds = etcds;
    lookup_mem_bind(&mem, &lk);
    lk.sts_object = sts_unconfirmed;
    doc = guardfix_dispatch(&cfg, &mem, &lk, t.hook, false, body);
    guardfix_expect(doc, t.what, 0, t.message);
    cr_assert_eq(kjson_get_int64(doc, "response.status.code", &code), KERR_OK);
    cr_assert_eq(code, 500);
    cJSON_Delete(doc);
    free(body);
    cJSON_Delete(etcds);
}
