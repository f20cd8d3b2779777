/*
 * Tests of controller/hibernation/hib_note's phase events (issue 30): what the events of
 * ScalingDown and Hibernated say of the final snapshot is what happened. A snapshot after the
 * cut that was not checked against etcd's last revision (break glass) is Warning
 * ScaleDownSnapshotUnverified, never ScaleDownWithoutSnapshot (no snapshot since the cut, the
 * scale's own event); "final full snapshot taken" only after the check. Each row acts on an
 * Etcd of its own; the events are read back from kube-sim, where the recorder writes them.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "controller/hibernation/hib_int.h"
#include "tests/support/cfix.h"
#include "tests/support/hibfix.h"
#include "tests/support/testutil.h"

#define STORE "{\"container\":\"bkt\",\"prefix\":\"ns1/%s\",\"provider\":\"S3\"}"

static const struct k8s_resource RES_EV = { "events.k8s.io", "v1", "events", 1 };
static struct hibfix x;

static void setup(void)
{
    hibfix_start(&x);
}

static void teardown(void)
{
    hibfix_stop(&x);
}

TestSuite(hib_note, .init = setup, .fini = teardown, .timeout = 60);

struct row {
    const char *etcd;
    enum hibplan_phase phase;
    bool verify;      /* hibplan_opts.verify */
    bool store;       /* the Etcd has a backup store */
    bool counted;     /* a full snapshot after the cut counts */
    bool verified;    /* the sidecar confirmed it holds etcd's revision (this call) */
    bool glass;       /* break glass set */
    bool checked;     /* ScalingDown stamped the StatefulSet checked (kept while Hibernated) */
    int attempt;      /* final snapshot attempts */
    const char *want; /* "<type> <reason>" of the one event */
    const char *has;  /* in its note (NULL: no check) */
};

static const struct row ROWS[] = {
    { "n1", HIBPLAN_SCALING, true, true, true, false, true, false, 2,
      "Warning ScaleDownSnapshotUnverified", "not confirmed to hold etcd's last revision" },
    { "n2", HIBPLAN_SCALING, true, true, true, true, false, false, 1, "Normal HibernationPhase",
      "ScalingDown" },
    { "n3", HIBPLAN_SCALING, true, true, true, true, true, false, 1, "Normal HibernationPhase",
      "ScalingDown" }, /* break glass present, not needed: the check passed */
    { "n4", HIBPLAN_SCALING, true, true, true, false, false, false, 1, "Normal HibernationPhase",
      "ScalingDown" }, /* already at 0: nothing scaled on the snapshot */
    { "n5", HIBPLAN_SCALING, false, true, true, false, false, false, 1, "Normal HibernationPhase",
      "ScalingDown" }, /* the check is off: no break glass involved */
    { "n6", HIBPLAN_SCALING, true, true, false, false, true, false, 2, "Normal HibernationPhase",
      "ScalingDown" }, /* no snapshot: the scale's own ScaleDownWithoutSnapshot */
    { "n7", HIBPLAN_HIBERNATED, true, true, true, true, false, true, 1, "Normal Hibernated",
      "final full snapshot taken, checked to hold etcd's last revision" },
    { "n8", HIBPLAN_HIBERNATED, true, true, true, false, false, false, 2, "Normal Hibernated",
      "a full snapshot taken after the cut, not checked against etcd's last revision" },
    { "n9", HIBPLAN_HIBERNATED, true, true, false, false, false, false, 3, "Normal Hibernated",
      "without a final snapshot (break glass after a failed attempt)" },
    { "n10", HIBPLAN_HIBERNATED, true, true, false, false, false, false, 0, "Normal Hibernated",
      "without a final snapshot (the StatefulSet was at 0)" },
    { "n11", HIBPLAN_HIBERNATED, false, true, true, false, false, true, 1, "Normal Hibernated",
      "(the revision check is off)" },
    { "n12", HIBPLAN_HIBERNATED, true, false, false, false, false, false, 0, "Normal Hibernated",
      "no backup store (no snapshot)" },
};
#define NROWS (sizeof(ROWS) / sizeof(ROWS[0]))

/* The events about Etcd name as "<type> <reason>: <note>" lines, OWNED (free). */
static char *events_of(const char *name, int *n)
{
    struct buf b;
    cJSON *list = NULL;
    const cJSON *ev;

    buf_init(&b, 1 << 20);
    *n = 0;
    cr_assert_eq(k8s_list(x.f.c, &RES_EV, CFIX_NS, NULL, &list, NULL), KERR_OK);
    cJSON_ArrayForEach (ev, kjson_get_arr(list, "items")) {
        const char *about = kjson_get_str(ev, "regarding.name");
        const char *note = kjson_get_str(ev, "note");

        if (!about || strcmp(about, name) != 0)
            continue;
        (*n)++;
        cr_assert_eq(buf_appendf(&b, "%s %s: %s\n", kjson_get_str(ev, "type"),
                                 kjson_get_str(ev, "reason"), note ? note : ""),
                     KERR_OK);
    }
    cJSON_Delete(list);
    return buf_detach(&b, NULL);
}

static void emit(const struct row *w)
{
    char *store = buf_dupf(256, STORE, w->etcd);
    cJSON *etcd = hibfix_etcd(&x, w->etcd, w->store ? store : NULL, NULL, 0);
    cJSON *ann = cJSON_GetObjectItem(cJSON_GetObjectItem(etcd, "metadata"), "annotations");
    struct round r = { 0 };

    free(store);
    if (!ann)
        ann = cJSON_AddObjectToObject(cJSON_GetObjectItem(etcd, "metadata"), "annotations");
    if (w->glass)
        cJSON_AddStringToObject(ann, HIB_ANN_BREAK_GLASS, "2099-01-01T00:00:00Z store-gone");
    if (w->checked)
        cJSON_AddStringToObject(ann, HIB_ANN_CHECKED, "uid-1/7");
    r.ns = CFIX_NS;
    r.name = w->etcd;
    r.etcd = etcd;
    r.v.store = w->store;
    r.v.counted = w->counted;
    r.v.verified = r.verified = w->verified;
    r.v.break_glass = w->glass;
    r.v.attempt = w->attempt;
    x.hib.plan.verify = w->verify;
    hib_phase_event(&x.hib, &r, w->phase);
    cJSON_Delete(etcd);
}

Test(hib_note, each_phase_event_says_what_happened_to_the_final_snapshot)
{
    for (size_t i = 0; i < NROWS; i++)
        emit(&ROWS[i]);
    for (size_t i = 0; i < NROWS; i++) {
        const struct row *w = &ROWS[i];
        char *seen = NULL;
        int n = 0;

        TESTUTIL_AWAIT((free(seen), seen = events_of(w->etcd, &n), n > 0), 10000);
        cr_expect_eq(n, 1, "%s: one event, got %d:\n%s", w->etcd, n, seen);
        cr_expect(strncmp(seen, w->want, strlen(w->want)) == 0 && seen[strlen(w->want)] == ':',
                  "%s: want %s, got %s", w->etcd, w->want, seen);
        cr_expect(!w->has || strstr(seen, w->has), "%s: want \"%s\" in %s", w->etcd, w->has, seen);
        cr_expect(!strstr(seen, "ScaleDownWithoutSnapshot"), "%s: %s", w->etcd, seen);
        /* only the checked snapshot is "the final full snapshot taken" */
        cr_expect(!strstr(seen, "final full snapshot taken") || (w->verify && w->checked), "%s: %s",
                  w->etcd, seen);
        free(seen);
    }
}
