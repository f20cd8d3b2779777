/*
 * Unit tests for webhook/cfgkeys.c: the keys of etcd's configuration that fork or lose a live
 * cluster's data (issue 30), read and judged.
 */
#include "webhook/cfgkeys.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/testutil.h"

/* etcd-druid's etcd.conf.yaml (sigs.k8s.io/yaml: keys sorted) with initial-cluster IC. */
#define DRUID(ic)                                                                              \
    "advertise-client-urls:\n  etcd-main-0:\n  - http://etcd-main-0.etcd-main-peer.shoot.svc:" \
    "2379\nauto-compaction-mode: periodic\nauto-compaction-retention: 30m\n"                   \
    "backend-bbolt-freelist-type: array\ndata-dir: /var/etcd/data/new.etcd\n"                  \
    "enable-grpc-gateway: false\ninitial-cluster: " ic "\ninitial-cluster-state: new\n"        \
    "initial-cluster-token: etcd-cluster\nlisten-client-urls: http://0.0.0.0:2379\n"           \
    "listen-peer-urls: http://0.0.0.0:2380\nmetrics: basic\nname: etcd-config\n"               \
    "next-cluster-version-compatible: true\nquota-backend-bytes: 8589934592\n"                 \
    "snapshot-count: 10000\n"
#define IC1 "etcd-main-0=http://etcd-main-0.etcd-main-peer.shoot.svc:2380"
#define IC3                                                                                      \
    IC1 ",etcd-main-1=http://etcd-main-1.etcd-main-peer.shoot.svc:2380,etcd-main-2=http://etcd-" \
        "main-2.etcd-main-peer.shoot.svc:2380"

struct krow {
    const char *what, *now, *old; /* old NULL: a CREATE */
    const char *why;              /* NULL: admitted */
    const char *etcd;             /* the Etcd's spec.memberNamePrefix (NULL: none, "") */
};

static const struct krow KROWS[] = {
    { "etcd-druid's, created", DRUID(IC1), NULL, NULL, NULL },
    { "etcd-druid's scale-up (initial-cluster grows)", DRUID(IC3), DRUID(IC1), NULL, NULL },
    { "etcd-druid's hibernation (initial-cluster empty)", DRUID("\"\""), DRUID(IC3), NULL, NULL },
    { "etcd-druid's quota and snapshot count",
      "data-dir: /var/etcd/data/new.etcd\nname: etcd-config\ninitial-cluster-state: new\n"
      "initial-cluster-token: etcd-cluster\nquota-backend-bytes: 17179869184\n"
      "snapshot-count: 75000\n",
      DRUID(IC1), NULL, NULL },
    { "etcd-druid's values over a foreign old one", DRUID(IC1),
      "name: x\ninitial-cluster-token: t\ninitial-cluster-state: existing\n", NULL, NULL },
    { "keys absent: etcd's defaults, etcd-druid's token and state", "name: etcd-config\n", NULL,
      NULL, NULL },
    { "force-new-cluster true", DRUID(IC1) "force-new-cluster: true\n", DRUID(IC1),
      "force-new-cluster to other than false", NULL },
    { "force-new-cluster ignoring case", DRUID(IC1) "Force-New-Cluster: TRUE\n", DRUID(IC1),
      "force-new-cluster to other than false", NULL },
    { "force-new-cluster quoted", DRUID(IC1) "force-new-cluster: 'false'\n", DRUID(IC1),
      "force-new-cluster to other than false", NULL },
    { "force-new-cluster yes", DRUID(IC1) "force-new-cluster: yes\n", NULL,
      "force-new-cluster to other than false", NULL },
    { "force-new-cluster a list", DRUID(IC1) "force-new-cluster: [true]\n", NULL,
      "force-new-cluster to other than false", NULL },
    { "force-new-cluster false", DRUID(IC1) "force-new-cluster: false\n", DRUID(IC1), NULL, NULL },
    { "force-new-cluster null", DRUID(IC1) "force-new-cluster: ~\n", DRUID(IC1), NULL, NULL },
    { "unsafe-no-fsync true", DRUID(IC1) "unsafe-no-fsync: true\n", DRUID(IC1),
      "unsafe-no-fsync to other than false", NULL },
    { "unsafe-no-fsync False", DRUID(IC1) "UNSAFE-NO-FSYNC: False\n", NULL, NULL, NULL },
    /* an update that leaves the text as it is reads it once: the same refusals */
    { "unsafe-no-fsync true, the text unchanged", DRUID(IC1) "unsafe-no-fsync: true\n",
      DRUID(IC1) "unsafe-no-fsync: true\n", "unsafe-no-fsync to other than false", NULL },
    { "member-name-prefix not the Etcd's, the text unchanged",
      DRUID(IC1) "member-name-prefix: other\n", DRUID(IC1) "member-name-prefix: other\n",
      "member-name-prefix", "mine" },
    { "the token changed", "name: etcd-config\ninitial-cluster-token: mine\n", DRUID(IC1),
      "it changes initial-cluster-token from \"etcd-cluster\" to \"mine\"", NULL },
    { "the token dropped over another one (etcd's default is etcd-druid's)", "name: etcd-config\n",
      "name: etcd-config\ninitial-cluster-token: t\n", NULL, NULL },
    { "the token kept", "name: etcd-config\ninitial-cluster-token: t\n",
      "name: etcd-config\ninitial-cluster-token: t\n", NULL, NULL },
    { "the state existing", "name: etcd-config\ninitial-cluster-state: existing\n", DRUID(IC1),
      "it changes initial-cluster-state from \"new\" to \"existing\"", NULL },
    { "the name changed", "name: etcd-main-0\n", DRUID(IC1),
      "it changes name from \"etcd-config\" to \"etcd-main-0\"", NULL },
    { "the name absent: etcd's default", "data-dir: /d\n", DRUID(IC1),
      "it changes name from \"etcd-config\" to \"default\"", NULL },
    { "the name quoted", "name: \"etcd-config\"\n", DRUID(IC1), NULL, NULL },
    { "a token created", "name: etcd-config\ninitial-cluster-token: mine\n", NULL,
      "written anew (or over a configuration that does not parse), it sets initial-cluster-token",
      NULL },
    { "over an old one that does not parse", "name: etcd-config\ninitial-cluster-token: t\n",
      "name: [", "written anew", NULL },
    { "member-name-prefix kept", DRUID(IC1) "member-name-prefix: p\n",
      DRUID(IC1) "member-name-prefix: p\n", NULL, "p" },
    { "member-name-prefix set over none", DRUID(IC1) "Member-Name-Prefix: p\n", DRUID(IC1),
      "it sets member-name-prefix to \"p\", not the Etcd's spec.memberNamePrefix \"\"", NULL },
    { "member-name-prefix changed over a configuration not the Etcd's",
      DRUID(IC1) "member-name-prefix: p\n", DRUID(IC1) "member-name-prefix: q\n",
      "it changes member-name-prefix from \"q\" to \"p\"", "p" },
    { "member-name-prefix dropped", DRUID(IC1) "member-name-prefix: ''\n",
      DRUID(IC1) "member-name-prefix: p\n",
      "it sets member-name-prefix to \"\", not the Etcd's spec.memberNamePrefix \"p\"", "p" },
    { "member-name-prefix created as the Etcd's", DRUID(IC1) "member-name-prefix: p\n", NULL, NULL,
      "p" },
    { "member-name-prefix created, the Etcd has none", DRUID(IC1) "member-name-prefix: p\n", NULL,
      "it sets member-name-prefix to \"p\", not the Etcd's", NULL },
    { "member-name-prefix left out, the Etcd has one", DRUID(IC1), NULL,
      "it sets member-name-prefix to \"\", not the Etcd's spec.memberNamePrefix \"p\"", "p" },
    { "member-name-prefix null, the Etcd has none", DRUID(IC1) "member-name-prefix: null\n", NULL,
      NULL, NULL },
    { "force-new-cluster with a long s (Go's encoding/json folds it to s)",
      DRUID(IC1) "force-new-clu\xc5\xbfter: true\n", DRUID(IC1),
      "force-new-cluster to other than false", NULL },
    { "the token with a Kelvin sign for k",
      "name: etcd-config\ninitial-cluster-to\xe2\x84\xaa"
      "en: t\n",
      DRUID(IC1), "it changes initial-cluster-token", NULL },
    { "a key with another non-ASCII letter is none of them",
      DRUID(IC1) "force-new-clu\xc3\x9fter: true\n", DRUID(IC1), NULL, NULL },
    { "the token twice ignoring case",
      "name: etcd-config\ninitial-cluster-token: etcd-cluster\nInitial-Cluster-Token: t\n", NULL,
      "initial-cluster-token is set twice", NULL },
    { "a merge key", "<<: {force-new-cluster: true}\nname: etcd-config\n", NULL, "merge key",
      NULL },
    { "the name a mapping", "name: {a: b}\n", NULL, "name must be a string, not a mapping", NULL },
    { "not a mapping", "- name\n", NULL, "mapping", NULL },
    { "not YAML", "name: [\n", NULL, "not YAML", NULL },
};
#define NK (sizeof(KROWS) / sizeof(KROWS[0]))

ParameterizedTestParameters(cfgkeys, rows)
{
    static size_t idx[NK];

    return testutil_row_params(idx, NK);
}

ParameterizedTest(size_t *i, cfgkeys, rows)
{
    const struct krow *t = &KROWS[*i];
    char why[2048] = "";
    int bad = cfgkeys_refused(t->now, t->old, t->etcd ? t->etcd : "", why, sizeof(why));

    if (!t->why) {
        cr_assert(!bad, "%s: refused: %s", t->what, why);
        return;
    }
    cr_assert(bad, "%s: admitted", t->what);
    cr_assert(strstr(why, t->why), "%s: %s", t->what, why);
}

Test(cfgkeys, read_gives_etcds_values)
{
    struct cfgkeys *k = malloc(sizeof(*k));
    struct kerr_info e;

    cr_assert_not_null(k);
    kerr_clear(&e);
    cr_assert_eq(cfgkeys_read("Name: a\nforce-new-cluster: false\nunsafe-no-fsync: 1\n", 52, k, &e),
                 KERR_OK, "%s", e.msg);
    cr_assert_str_eq(k->name, "a");
    cr_assert_str_eq(k->token, "etcd-cluster");
    cr_assert_str_eq(k->state, "new");
    cr_assert(!k->force_new);
    cr_assert(k->no_fsync, "1 is not a plain false");
    free(k);
}

Test(cfgkeys, a_value_too_long_is_refused)
{
    char *text = malloc(CFGKEYS_VAL_MAX + 16), why[1024];

    cr_assert_not_null(text);
    memcpy(text, "name: ", 6);
    memset(text + 6, 'a', CFGKEYS_VAL_MAX);
    text[6 + CFGKEYS_VAL_MAX] = '\0';
    cr_assert(cfgkeys_refused(text, NULL, "", why, sizeof(why)));
    cr_assert(strstr(why, "longer than"), "%s", why);
    free(text);
}
