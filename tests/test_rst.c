/* rst: the progress annotation (parse, print), and on kube-sim a restore run pass by pass:
 * waiting for the EtcdStatusBackup, the status written through /status, waiting for the
 * inventory, the label, suspend and progress annotations removed at the end with events; an Etcd
 * backed up without status backups going on with its StatefulSet; a refusal of the label removal
 * (a validating webhook) recorded in the progress error and retried. */
#include "controller/restore/rst.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/events.h"
#include "common/kjson.h"
#include "controller/core/etcdspec.h"
#include "controller/core/rctx.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"
#include "tests/support/testutil.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

Test(rst, progress_parse_and_print)
{
    struct rst_progress p;
    struct kerr_info err;
    char *text = NULL;

    rst_progress_parse(NULL, &p);
    cr_assert(p.awaiting_status && p.awaiting_resources && !p.error[0]);
    rst_progress_parse("{not json", &p);
    cr_assert(p.awaiting_status && p.awaiting_resources);
    rst_progress_parse("{\"awaitingStatus\":false,\"awaitingResources\":true,\"error\":\"x\\\"y\"}",
                       &p);
    cr_assert_not(p.awaiting_status);
    cr_assert(p.awaiting_resources);
    cr_assert_str_eq(p.error, "x\"y");
    OK(rst_progress_print(&p, &text, &err));
    cr_assert_str_eq(text,
                     "{\"awaitingStatus\":false,\"awaitingResources\":true,\"error\":\"x\\\"y\"}");
    free(text);
}

/* The scripted validating webhook: refuses removing the restoring label while deny is set. */
static struct {
    atomic_int deny;
    atomic_int refused;
} hook_state;

static cJSON *answer(const cJSON *review, const char *path, void *arg)
{
    const cJSON *req = kjson_get(review, "request");
    int had = kjson_has(req, "oldObject.metadata.labels[etcd-warden.io/restoring]");
    int has = kjson_has(req, "object.metadata.labels[etcd-warden.io/restoring]");
    int refuse = atomic_load(&hook_state.deny) && had && !has;

    (void)path;
    (void)arg;
    if (refuse)
        atomic_fetch_add(&hook_state.refused, 1);
    return ksim_harness_review_answer(
        review, !refuse, 403, refuse ? "the restored Etcd is not valid yet" : NULL, NULL, NULL);
}

static struct cfix fx;
static struct ksim_harness_hook *hk;

static void setup(void)
{
    struct ksim_harness_opts o = { 0 };
    struct ksim_alias alias;
    struct kerr_info err;
    char host[] = "127.0.0.1", svc[] = "hook", ns[] = "hooks", body[8192], *ca;
    long code;
    cJSON *j;

    atomic_store(&hook_state.deny, 0);
    atomic_store(&hook_state.refused, 0);
    OK(ksim_harness_hook_start("hook.hooks.svc", answer, NULL, &hk, &err));
    alias.service = svc;
    alias.namespace = ns;
    alias.host = host;
    alias.port = ksim_harness_hook_port(hk);
    o.aliases = &alias;
    o.naliases = 1;
    o.no_controllers = 1;
    cfix_start(&fx, &o);
    ca = ksim_harness_hook_ca_bundle(hk);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
             "\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":\"etcds\"},\"webhooks\":"
             "[{\"name\":\"etcd.test.io\",\"admissionReviewVersions\":[\"v1\"],\"sideEffects\":"
             "\"None\",\"clientConfig\":{\"service\":{\"name\":\"hook\",\"namespace\":\"hooks\","
             "\"path\":\"/etcd\"},\"caBundle\":\"%s\"},\"rules\":[{\"apiGroups\":["
             "\"druid.gardener.cloud\"],\"apiVersions\":[\"v1alpha1\"],\"operations\":["
             "\"UPDATE\"],\"resources\":[\"etcds\"]}]}]}",
             ca);
    free(ca);
    j = ksimfix_call(fx.h, "POST",
                     "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", NULL,
                     body, &code);
    cr_assert_eq(code, 201, "%s", jsonfix_str(j, "message"));
    cJSON_Delete(j);
}

static void teardown(void)
{
    cfix_stop(&fx);
    ksim_harness_hook_stop(hk);
}

TestSuite(rst_kubesim, .init = setup, .fini = teardown, .timeout = 60);

/*
 * The Etcd "main" as the mutating webhook leaves a re-created one: restoring, suspended, and
 * the record that etcd-warden added the suspension.
 */
static cJSON *restored_etcd(const char *backup_exists)
{
    cJSON *e = cfix_etcd("main", NULL, NULL), *live;
    struct kerr_info err;

    OK(kjson_setv(e, (const char *const[]){ "metadata", "labels", ETCDSPEC_LABEL_RESTORING, NULL },
                  cJSON_CreateString(""), &err));
    OK(kjson_setv(e, (const char *const[]){ "metadata", "annotations", ETCDSPEC_ANN_SUSPEND, NULL },
                  cJSON_CreateString(""), &err));
    OK(kjson_setv(
        e, (const char *const[]){ "metadata", "annotations", ETCDSPEC_ANN_SUSPEND_ADDED, NULL },
        cJSON_CreateString("true"), &err));
    OK(kjson_setv(
        e, (const char *const[]){ "metadata", "annotations", ETCDSPEC_ANN_BACKUP_EXISTS, NULL },
        cJSON_CreateString(backup_exists), &err));
    live = cfix_create(&fx, &ETCDSPEC_RES_ETCD, e);
    cJSON_Delete(e);
    return live;
}

/* One pass on a fresh GET; the requeue asked for. */
static long pass(void)
{
    cJSON *e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    struct kerr_info err;
    long requeue = -1;

    cr_assert_not_null(e);
    OK(rst_run(&fx.x, e, &requeue, &err));
    cJSON_Delete(e);
    return requeue;
}

/* The progress annotation now ("" when absent). OWNED by the caller. */
static char *progress(void)
{
    cJSON *e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    const char *p = etcdspec_annotation(e, ETCDSPEC_ANN_RESTORE_PROGRESS);
    char *out = strdup(p ? p : "");

    cJSON_Delete(e);
    return out;
}

#define PROGRESS_IS(want)           \
    do {                            \
        char *p_ = progress();      \
        cr_assert_str_eq(p_, want); \
        free(p_);                   \
    } while (0)

#define PROGRESS_HAS(want)                              \
    do {                                                \
        char *p_ = progress();                          \
        cr_assert_not_null(strstr(p_, want), "%s", p_); \
        free(p_);                                       \
    } while (0)

/* The status backup of live: status and the inventory of the components etcd-druid builds. */
static void create_backup(const cJSON *live, const char *status)
{
    cJSON *b = jsonfix_parse("{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":"
                             "\"EtcdStatusBackup\",\"metadata\":{\"name\":\"main\"}}"),
          *inv = NULL;
    struct kerr_info err;

    OK(kjson_set(b, "spec.statusBackup", jsonfix_parse(status), &err));
    OK(etcdspec_components(live, &inv, &err));
    OK(kjson_set(b, "spec.components", inv, &err));
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_STATUSBACKUP, b));
    cJSON_Delete(b);
}

/* Reasons of the Events about main, joined. */
static int has_event(const char *reason)
{
    static const struct k8s_resource EV = { "events.k8s.io", "v1", "events", 1 };
    cJSON *list = NULL;
    const cJSON *e;
    int found = 0;

    cr_assert_eq(k8s_list(fx.c, &EV, CFIX_NS, NULL, &list, NULL), KERR_OK);
    cJSON_ArrayForEach (e, kjson_get_arr(list, "items"))
        found |= strcmp(jsonfix_str(e, "reason"), reason) == 0;
    cJSON_Delete(list);
    return found;
}

Test(rst_kubesim, status_then_resources_then_resume)
{
    struct ev_opts eo = { .reporting_controller = "etcd-warden.io/controller",
                          .reporting_instance = "test" };
    cJSON *live = restored_etcd("true"), *e;
    struct kerr_info err;

    OK(ev_new(fx.c, &eo, &fx.x.events, &err));
    cr_assert_eq(pass(), RST_REQUEUE_MS);
    PROGRESS_IS("{\"awaitingStatus\":true,\"awaitingResources\":true,\"error\":\"\","
                "\"waiting\":\"waiting for EtcdStatusBackup " CFIX_NS "/main, which does not "
                "exist: apply it from the backup of the cluster's objects (it holds the Etcd's "
                "status), or, when status backups were not enabled, annotate the Etcd "
                "etcd-warden.io/status-backup-exists=false to go on without it\"}");
    cr_assert_eq(pass(), RST_REQUEUE_MS, "still waiting, nothing rewritten");
    create_backup(live, "{\"ready\":true,\"replicas\":3,\"members\":[{\"name\":\"main-0\"}]}");
    cr_assert_eq(pass(), RST_REQUEUE_MS);
    PROGRESS_HAS("{\"awaitingStatus\":false,\"awaitingResources\":true,\"error\":\"\","
                 "\"waiting\":\"waiting for ");
    PROGRESS_HAS("; apply them from the backup of the cluster's objects");
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    jsonfix_assert_sorted(kjson_get(e, "status"),
                          "{\"members\":[{\"name\":\"main-0\"}],\"ready\":true,\"replicas\":3}");
    cr_assert_not_null(etcdspec_label(e, ETCDSPEC_LABEL_RESTORING));
    cJSON_Delete(e);
    cr_assert_eq(cfix_components(&fx, live, NULL), 13);
    cr_assert_eq(pass(), 0);
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert_null(etcdspec_label(e, ETCDSPEC_LABEL_RESTORING), "the restoring label is gone");
    cr_assert_null(etcdspec_annotation(e, ETCDSPEC_ANN_SUSPEND));
    cr_assert_null(etcdspec_annotation(e, ETCDSPEC_ANN_RESTORE_PROGRESS));
    cr_assert_str_eq(etcdspec_annotation(e, ETCDSPEC_ANN_BACKUP_EXISTS), "true");
    cr_assert(cJSON_IsTrue(kjson_get(e, "status.ready")), "the status survived");
    cJSON_Delete(e);
    ev_stop(fx.x.events);
    TESTUTIL_AWAIT(has_event("RestoreCompleted"), 30000);
    cr_assert(has_event("RestoreCompleted"));
    cr_assert(has_event("StatusRestored"));
    cr_assert(has_event("RestoreAwaitingResources"));
    cr_assert(has_event("RestoreAwaitingStatus"));
    ev_free(fx.x.events);
    fx.x.events = NULL;
    cJSON_Delete(live);
}

Test(rst_kubesim, no_status_backups_goes_on_with_the_statefulset)
{
    cJSON *live = restored_etcd("false"), *sts, *e;
    char *p;

    cr_assert_eq(pass(), RST_REQUEUE_MS);
    p = progress();
    cr_assert(strstr(p, "\"awaitingStatus\":false,\"awaitingResources\":true"), "%s", p);
    cr_assert(strstr(p, "automatic status recovery is not possible"), "%s", p);
    free(p);
    cr_assert_eq(cfix_components(&fx, live, NULL), 13);
    cr_assert_eq(pass(), 0);
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert_null(etcdspec_label(e, ETCDSPEC_LABEL_RESTORING));
    cJSON_Delete(e);
    sts = cfix_get(&fx, etcdspec_kind_resource("StatefulSet"), "main");
    cr_assert_not_null(sts);
    cJSON_Delete(sts);
    cJSON_Delete(live);
}

Test(rst_kubesim, a_refused_resume_is_recorded_and_retried)
{
    cJSON *live = restored_etcd("true"), *e;
    char *p;

    create_backup(live, "{\"ready\":true}");
    cr_assert_eq(cfix_components(&fx, live, NULL), 13);
    atomic_store(&hook_state.deny, 1);
    cr_assert_eq(pass(), RST_REQUEUE_MS);
    cr_assert_eq(atomic_load(&hook_state.refused), 1);
    p = progress();
    cr_assert(strstr(p, "\"awaitingStatus\":false,\"awaitingResources\":false"), "%s", p);
    cr_assert(strstr(p, "admission webhook \\\"etcd.test.io\\\" denied the request: the restored "
                        "Etcd is not valid yet"),
              "%s", p);
    free(p);
    atomic_store(&hook_state.deny, 0);
    cr_assert_eq(pass(), 0);
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert_null(etcdspec_label(e, ETCDSPEC_LABEL_RESTORING), "resumed on the retry");
    cr_assert_null(etcdspec_annotation(e, ETCDSPEC_ANN_RESTORE_PROGRESS));
    cJSON_Delete(e);
    cJSON_Delete(live);
}

Test(rst_kubesim, a_missing_component_keeps_it_waiting)
{
    cJSON *live = restored_etcd("true"), *e;
    struct kerr_info err;

    create_backup(live, "{}");
    cr_assert_eq(cfix_components(&fx, live, NULL), 13);
    OK(k8s_delete(fx.c, etcdspec_kind_resource("Lease"), CFIX_NS, "main-full-snap", NULL, NULL,
                  &err));
    cr_assert_eq(pass(), RST_REQUEUE_MS);
    PROGRESS_IS("{\"awaitingStatus\":false,\"awaitingResources\":true,\"error\":\"\","
                "\"waiting\":\"waiting for 1 components: Lease/main-full-snap; apply them "
                "from the backup of the cluster's objects (etcd-druid re-creates those it owns "
                "once the Etcd reconciles)\"}");
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert_not_null(etcdspec_label(e, ETCDSPEC_LABEL_RESTORING));
    cJSON_Delete(e);
    cJSON_Delete(live);
}

Test(rst_kubesim, a_hibernated_etcd_stays_suspended)
{
    cJSON *live = restored_etcd("true"), *e, *p;
    struct kerr_info err;

    p = jsonfix_parse("{\"metadata\":{\"annotations\":{\"etcd-warden.io/hibernate\":\"true\","
                      "\"etcd-warden.io/hibernation-phase\":\"Hibernated\"}}}");
    OK(k8s_patch(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", K8S_PATCH_MERGE, p, NULL, NULL, &err));
    create_backup(live, "{}");
    cr_assert_eq(cfix_components(&fx, live, NULL), 13);
    cr_assert_eq(pass(), 0);
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert_null(etcdspec_label(e, ETCDSPEC_LABEL_RESTORING), "resumed");
    cr_assert_not_null(etcdspec_annotation(e, ETCDSPEC_ANN_SUSPEND),
                       "hibernation keeps etcd-druid suspended");
    cJSON_Delete(e);
    cJSON_Delete(p);
    cJSON_Delete(live);
}

Test(rst_kubesim, an_operators_suspension_outlives_the_restore)
{
    cJSON *live = restored_etcd("true"), *e, *p;
    struct kerr_info err;

    /* the Etcd was backed up while an operator held etcd-druid: the webhook added nothing */
    p = jsonfix_parse("{\"metadata\":{\"annotations\":{\"etcd-warden.io/suspend-added\":null,"
                      "\"druid.gardener.cloud/suspend-etcd-spec-reconcile\":"
                      "\"operator-maintenance\"}}}");
    OK(k8s_patch(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", K8S_PATCH_MERGE, p, NULL, NULL, &err));
    create_backup(live, "{}");
    cr_assert_eq(cfix_components(&fx, live, NULL), 13);
    cr_assert_eq(pass(), 0);
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert_null(etcdspec_label(e, ETCDSPEC_LABEL_RESTORING), "resumed");
    cr_assert_str_eq(etcdspec_annotation(e, ETCDSPEC_ANN_SUSPEND), "operator-maintenance");
    cJSON_Delete(e);
    cJSON_Delete(p);
    cJSON_Delete(live);
}

/* Remove the restoring label as a person does (kubectl label etcd main etcd-warden.io/restoring-).
 */
static void remove_label_by_hand(void)
{
    cJSON *p = jsonfix_parse("{\"metadata\":{\"labels\":{\"etcd-warden.io/restoring\":null}}}");
    struct kerr_info err;

    OK(k8s_patch(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", K8S_PATCH_MERGE, p, NULL, NULL, &err));
    cJSON_Delete(p);
}

/* The note of the first Event with reason about main, "" when none. OWNED by the caller. */
static char *event_note(const char *reason, char *type, size_t n)
{
    static const struct k8s_resource EV = { "events.k8s.io", "v1", "events", 1 };
    cJSON *list = NULL;
    const cJSON *e;
    char *note = NULL;

    cr_assert_eq(k8s_list(fx.c, &EV, CFIX_NS, NULL, &list, NULL), KERR_OK);
    cJSON_ArrayForEach (e, kjson_get_arr(list, "items")) {
        if (!note && strcmp(jsonfix_str(e, "reason"), reason) == 0) {
            note = strdup(jsonfix_str(e, "note"));
            snprintf(type, n, "%s", jsonfix_str(e, "type"));
        }
    }
    cJSON_Delete(list);
    return note ? note : strdup("");
}

/*
 * `kubectl druid reconciliation resume` removes the suspension a restore holds: the next pass
 * sets it again, recorded as etcd-warden's, with a Warning, and goes no further; the pass
 * after it carries on with the restore.
 */
Test(rst_kubesim, a_suspension_removed_mid_restore_is_set_again)
{
    struct ev_opts eo = { .reporting_controller = "etcd-warden.io/controller",
                          .reporting_instance = "test" };
    cJSON *live = restored_etcd("true"), *e, *p;
    struct kerr_info err;
    char type[16] = "";
    char *note;

    OK(ev_new(fx.c, &eo, &fx.x.events, &err));
    p = jsonfix_parse("{\"metadata\":{\"annotations\":{\"druid.gardener.cloud/"
                      "suspend-etcd-spec-reconcile\":null}}}");
    OK(k8s_patch(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", K8S_PATCH_MERGE, p, NULL, NULL, &err));
    cr_assert_gt(pass(), 0, "asks to be called again");
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert_str_eq(etcdspec_annotation(e, ETCDSPEC_ANN_SUSPEND), "true");
    cr_assert_str_eq(etcdspec_annotation(e, ETCDSPEC_ANN_SUSPEND_ADDED), "true");
    cr_assert_not_null(etcdspec_label(e, ETCDSPEC_LABEL_RESTORING), "still restoring");
    cr_assert_null(etcdspec_annotation(e, ETCDSPEC_ANN_RESTORE_PROGRESS), "nothing else done");
    cJSON_Delete(e);
    ev_stop(fx.x.events);
    TESTUTIL_AWAIT(has_event("SuspensionReasserted"), 30000);
    ev_free(fx.x.events);
    fx.x.events = NULL;
    note = event_note("SuspensionReasserted", type, sizeof(type));
    cr_assert_str_eq(type, "Warning");
    cr_assert_not_null(strstr(note, "was removed while the restore holds it"), "%s", note);
    free(note);
    /* the next pass goes on: awaiting the status backup */
    cr_assert_gt(pass(), 0);
    PROGRESS_HAS("\"awaitingStatus\":true");
    /* removed without its record too (an operator's, or one never recorded): set again */
    p = (cJSON_Delete(p), jsonfix_parse("{\"metadata\":{\"annotations\":{\"druid.gardener.cloud/"
                                        "suspend-etcd-spec-reconcile\":null,\"etcd-warden.io/"
                                        "suspend-added\":null}}}"));
    OK(k8s_patch(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", K8S_PATCH_MERGE, p, NULL, NULL, &err));
    pass();
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert_str_eq(etcdspec_annotation(e, ETCDSPEC_ANN_SUSPEND), "true");
    cJSON_Delete(e);
    cJSON_Delete(p);
    cJSON_Delete(live);
}

/*
 * The toggle of docs/toggles.md: the restoring label removed by hand mid-restore. The pass
 * that follows lifts what etcd-warden added (its suspension, the progress) and tells what was
 * skipped.
 */
Test(rst_kubesim, a_label_removed_by_hand_lifts_what_etcd_warden_added)
{
    struct ev_opts eo = { .reporting_controller = "etcd-warden.io/controller",
                          .reporting_instance = "test" };
    cJSON *live = restored_etcd("true"), *e;
    struct kerr_info err;
    char type[32] = "", *note;

    OK(ev_new(fx.c, &eo, &fx.x.events, &err));
    cr_assert_eq(pass(), RST_REQUEUE_MS); /* waiting for the status backup */
    remove_label_by_hand();
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert(rst_ended_by_hand(e));
    cJSON_Delete(e);
    cr_assert_eq(pass(), 0);
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert_null(etcdspec_annotation(e, ETCDSPEC_ANN_SUSPEND), "etcd-druid left suspended");
    cr_assert_null(etcdspec_annotation(e, ETCDSPEC_ANN_SUSPEND_ADDED));
    cr_assert_null(etcdspec_annotation(e, ETCDSPEC_ANN_RESTORE_PROGRESS), "stale progress");
    cr_assert_not(rst_ended_by_hand(e));
    cJSON_Delete(e);
    cr_assert_eq(pass(), 0, "nothing more to do");
    ev_stop(fx.x.events);
    TESTUTIL_AWAIT(has_event("RestoreEndedByHand"), 30000);
    note = event_note("RestoreEndedByHand", type, sizeof(type));
    cr_assert_str_eq(type, "Warning");
    cr_assert(strstr(note, "removed by hand before the restore finished (still awaiting the "
                           "status from the EtcdStatusBackup and components)") &&
                  strstr(note, "lifted the suspension it had added"),
              "%s", note);
    free(note);
    ev_free(fx.x.events);
    fx.x.events = NULL;
    cJSON_Delete(live);
}

Test(rst_kubesim, a_label_removed_by_hand_keeps_a_hibernation_or_an_operators_suspension)
{
    cJSON *live = restored_etcd("true"), *e, *p;
    struct kerr_info err;

    p = jsonfix_parse("{\"metadata\":{\"annotations\":{\"etcd-warden.io/hibernate\":\"true\","
                      "\"etcd-warden.io/hibernation-phase\":\"Hibernated\"}}}");
    OK(k8s_patch(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", K8S_PATCH_MERGE, p, NULL, NULL, &err));
    cJSON_Delete(p);
    cr_assert_eq(pass(), RST_REQUEUE_MS);
    remove_label_by_hand();
    cr_assert_eq(pass(), 0);
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert_not_null(etcdspec_annotation(e, ETCDSPEC_ANN_SUSPEND), "hibernation holds it");
    cr_assert_null(etcdspec_annotation(e, ETCDSPEC_ANN_RESTORE_PROGRESS));
    cJSON_Delete(e);
    /* an operator's suspension (no record that etcd-warden added it) stays too */
    p = jsonfix_parse("{\"metadata\":{\"labels\":{\"etcd-warden.io/restoring\":\"\"},"
                      "\"annotations\":{\"etcd-warden.io/hibernate\":null,"
                      "\"etcd-warden.io/hibernation-phase\":null,"
                      "\"etcd-warden.io/suspend-added\":null,"
                      "\"druid.gardener.cloud/suspend-etcd-spec-reconcile\":\"operator\"}}}");
    OK(k8s_patch(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", K8S_PATCH_MERGE, p, NULL, NULL, &err));
    cJSON_Delete(p);
    cr_assert_eq(pass(), RST_REQUEUE_MS);
    remove_label_by_hand();
    cr_assert_eq(pass(), 0);
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert_str_eq(etcdspec_annotation(e, ETCDSPEC_ANN_SUSPEND), "operator");
    cr_assert_null(etcdspec_annotation(e, ETCDSPEC_ANN_RESTORE_PROGRESS));
    cJSON_Delete(e);
    cJSON_Delete(live);
}
