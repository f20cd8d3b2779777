/* ctl_metrics: every running controller's reconcile series exist at 0 from the start, as
 * controller-runtime's do; the backup controllers only where their flags turn them on. */
#include "controller/core/ctl_metrics.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/metricsfix.h"

/* The controllers warden-controller runs with these flags, as its capability table names
 * them: "bucket" with --backup-entries; "backup", "restore", "bschedule" with --backups. */
static char *render_with(int backup_entries, int backups)
{
    static const char *const backup_kinds[] = { "backup", "restore", "bschedule" };
    const char *names[CTL_METRICS_CONTROLLERS_MAX + 1] = { "etcd", "opstask", "immtask" };
    size_t n = 3, i;
    struct ctl_metrics_source src = { 0 };
    struct ctl_metrics *m = NULL;
    struct kerr_info err = { 0 };
    char *text;

    if (backup_entries)
        names[n++] = "bucket";
    for (i = 0; backups && i < sizeof(backup_kinds) / sizeof(backup_kinds[0]); i++)
        names[n++] = backup_kinds[i];
    names[n] = NULL;
    src.controllers = names;
    cr_assert_eq(ctl_metrics_new(&src, &m, &err), KERR_OK, "%s", err.msg);
    text = metricsfix_render(ctl_metrics_registry(m));
    ctl_metrics_free(m);
    return text;
}

static int has_series(const char *text, const char *controller)
{
    char total[160], errors[160];

    snprintf(total, sizeof(total),
             "controller_runtime_reconcile_total{controller=\"%s\",result=\"requeue_after\"} 0",
             controller);
    snprintf(errors, sizeof(errors),
             "controller_runtime_reconcile_errors_total{controller=\"%s\"} 0", controller);
    return strstr(text, total) && strstr(text, errors);
}

Test(ctl_metrics, every_running_controller_at_zero)
{
    static const char *const all[] = { "etcd",   "opstask", "immtask",  "bucket",
                                       "backup", "restore", "bschedule" };
    char *text = render_with(1, 1);
    size_t i;

    for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        cr_expect(has_series(text, all[i]), "no series at 0 for %s:\n%s", all[i], text);
    free(text);
}

Test(ctl_metrics, controllers_turned_off_have_none)
{
    char *text = render_with(0, 0);

    cr_expect(has_series(text, "etcd") && has_series(text, "immtask"), "%s", text);
    cr_expect_null(strstr(text, "controller=\"bucket\""), "%s", text);
    cr_expect_null(strstr(text, "controller=\"bschedule\""), "%s", text);
    free(text);
    text = render_with(1, 0);
    cr_expect(has_series(text, "bucket"), "%s", text);
    cr_expect_null(strstr(text, "controller=\"restore\""), "%s", text);
    free(text);
    text = render_with(0, 1);
    cr_expect_null(strstr(text, "controller=\"bucket\""), "%s", text);
    cr_expect(has_series(text, "backup") && has_series(text, "bschedule"), "%s", text);
    free(text);
}

/* A per-object gauge whose objects are the names in a list the test changes. */
struct objects {
    const char *names[4];
};

static void collect_names(void *src_ctx, ctl_metrics_emit_fn emit, void *emit_ctx)
{
    const struct objects *o = src_ctx;
    const char *v[3] = { "shoot", NULL, NULL };
    size_t i;

    for (i = 0; i < 4 && o->names[i]; i++) {
        v[1] = o->names[i];
        emit(emit_ctx, v, 1.0);
    }
}

/* Each scrape shows exactly the objects collect emits now: one that left the state is gone. */
Test(ctl_metrics, per_object_gauges_follow_the_objects)
{
    static const char *const labels[] = { "etcd_namespace", "etcd", NULL };
    static const struct ctl_metrics_gauge g = { "warden_test_state", "objects in a state", labels,
                                                collect_names };
    const struct ctl_metrics_gauge *gauges[] = { &g, NULL };
    struct objects o = { { "etcd-a", "etcd-b", NULL } };
    struct ctl_metrics_source src = { 0 };
    struct ctl_metrics *m = NULL;
    struct kerr_info err = { 0 };
    char *text;

    src.ctx = &o;
    src.gauges = gauges;
    cr_assert_eq(ctl_metrics_new(&src, &m, &err), KERR_OK, "%s", err.msg);
    text = metricsfix_render(ctl_metrics_registry(m));
    cr_expect_not_null(strstr(text,
                              "warden_test_state{etcd_namespace=\"shoot\",etcd=\"etcd-a\"} 1\n"
                              "warden_test_state{etcd_namespace=\"shoot\",etcd=\"etcd-b\"} 1\n"),
                       "%s", text);
    free(text);
    o.names[0] = "etcd-b";
    o.names[1] = "etcd-c";
    text = metricsfix_render(ctl_metrics_registry(m));
    cr_expect_null(strstr(text, "etcd=\"etcd-a\""), "etcd-a left the state: %s", text);
    cr_expect_not_null(strstr(text, "etcd=\"etcd-b\"} 1\n"), "%s", text);
    cr_expect_not_null(strstr(text, "etcd=\"etcd-c\"} 1\n"), "%s", text);
    free(text);
    o.names[0] = NULL;
    text = metricsfix_render(ctl_metrics_registry(m));
    cr_expect_null(strstr(text, "warden_test_state"), "none in the state: %s", text);
    free(text);
    ctl_metrics_free(m);
}
