/* toggles: careless values of the Etcd annotations users set are refused, with what to do. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "common/ktime.h"
#include "webhook/toggles.h"

#define CTL    "system:serviceaccount:etcd-warden:warden-controller"
#define PERSON "alice@example.com"
#define NOW    "2026-11-24T20:00:00Z"

static const char *const controllers[] = { CTL };
static const char *user = PERSON;

static time_t fixed_clock(void)
{
    struct timespec ts;

    cr_assert_eq(ktime_parse(NOW, &ts, NULL), KERR_OK);
    return ts.tv_sec;
}

static const struct protect_config cfg = { NULL, 0, NULL, 0, NULL, controllers, 1, fixed_clock };
static char last_warning[1024];

static cJSON *etcd(const char *hibernate, const char *reason)
{
    char text[512];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\",\"annotations\":{%s%s%s%s%s%s%s"
             "}},\"spec\":{}}",
             hibernate ? "\"etcd-warden.io/hibernate\":\"" : "", hibernate ? hibernate : "",
             hibernate ? "\"" : "", hibernate && reason ? "," : "",
             reason ? "\"etcd-warden.io/allow-scale-down-without-snapshot\":\"" : "",
             reason ? reason : "", reason ? "\"" : "");
    return cJSON_Parse(text);
}

/* The verdict: "" allowed, else the message. obj and old TAKEN. */
static const char *decide(enum review_op op, cJSON *obj, cJSON *old)
{
    static char msg[1024];
    struct review_req req;
    struct review_resp resp;

    cr_assert_not_null(obj);
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = op;
    req.username = user;
    req.object = obj;
    req.old_object = old;
    cr_assert_eq(toggles_decide(&cfg, &req, &resp, NULL), KERR_OK);
    snprintf(msg, sizeof(msg), "%s", resp.allowed ? "" : resp.message);
    snprintf(last_warning, sizeof(last_warning), "%s", resp.n_warnings ? resp.warnings[0] : "");
    if (!resp.allowed)
        cr_assert_eq(resp.code, 403);
    review_resp_release(&resp);
    cJSON_Delete(obj);
    cJSON_Delete(old);
    return msg;
}

Test(toggles, hibernate_is_true_or_false)
{
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd("true", NULL), etcd(NULL, NULL)), "");
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd("false", NULL), etcd("true", NULL)), "");
    cr_expect_str_eq(decide(REVIEW_OP_CREATE, etcd("true", NULL), NULL), "");
    cr_expect(strstr(decide(REVIEW_OP_UPDATE, etcd("yes", NULL), etcd(NULL, NULL)),
                     "\"yes\" is neither \"true\" (hibernate) nor \"false\""));
    cr_expect_neq(*decide(REVIEW_OP_UPDATE, etcd("True", NULL), etcd(NULL, NULL)), '\0');
    cr_expect_neq(*decide(REVIEW_OP_CREATE, etcd("1", NULL), NULL), '\0');
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd("yes", NULL), etcd("yes", NULL)), "",
                     "a value stored before the rule is not disrupted");
    cr_expect_str_eq(decide(REVIEW_OP_DELETE, etcd("yes", NULL), NULL), "");
}

#define GLASS_OK "2026-11-24T21:00:00Z bucket lost"

Test(toggles, break_glass_needs_an_expiry_and_a_reason)
{
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd(NULL, GLASS_OK), etcd(NULL, NULL)), "");
    cr_expect(strstr(decide(REVIEW_OP_UPDATE, etcd(NULL, ""), etcd(NULL, NULL)), "say why"));
    cr_expect_neq(*decide(REVIEW_OP_UPDATE, etcd(NULL, "  "), etcd(NULL, NULL)), '\0');
    cr_expect_neq(*decide(REVIEW_OP_UPDATE, etcd("true", ""), etcd("true", "x")), '\0');
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd(NULL, ""), etcd(NULL, "")), "");
    cr_expect(strstr(decide(REVIEW_OP_UPDATE, etcd(NULL, "bucket lost"), etcd(NULL, NULL)),
                     "is not an RFC 3339 expiry"));
    cr_expect(strstr(decide(REVIEW_OP_UPDATE, etcd(NULL, "2026-11-24T21:00:00Z"), NULL),
                     "the reason after the expiry is empty"));
    cr_expect(strstr(decide(REVIEW_OP_UPDATE, etcd(NULL, "2026-11-24T19:59:59Z lost"), NULL),
                     "the expiry 2026-11-24T19:59:59Z has passed"));
    cr_expect(strstr(decide(REVIEW_OP_CREATE, etcd(NULL, "2026-11-25T20:00:01Z lost"), NULL),
                     "is more than 24h ahead"));
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd(NULL, "2026-11-25T20:00:00Z lost"), NULL), "");
}

/* An Etcd with one annotation key=value (and label lkey=lvalue when lkey is set). */
static cJSON *ann(const char *key, const char *value)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\",\"annotations\":{\"%s\":"
             "\"%s\"}},\"spec\":{}}",
             key, value);
    return cJSON_Parse(text);
}

static cJSON *label(const char *key, const char *value)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\",\"labels\":{\"%s\":"
             "\"%s\"}},\"spec\":{}}",
             key, value);
    return cJSON_Parse(text);
}

static const char *const state[] = {
    "etcd-warden.io/traffic-cut-at",        "etcd-warden.io/hibernation-phase",
    "etcd-warden.io/hibernation-condition", "etcd-warden.io/suspend-added",
    "etcd-warden.io/restore-progress",      "etcd-warden.io/status-backup-exists",
};

/* The state annotations: warden-controller alone sets, changes or removes them. */
Test(toggles, state_is_the_controllers)
{
    size_t i;

    for (i = 0; i < sizeof(state) / sizeof(state[0]); i++) {
        const char *k = state[i];

        cr_assert(toggles_is_state(k), "%s", k);
        user = PERSON;
        cr_expect(strstr(decide(REVIEW_OP_UPDATE, ann(k, "2000-01-01T00:00:00Z"), etcd(NULL, NULL)),
                         "is written by warden-controller only"),
                  "set %s", k);
        cr_expect(strstr(decide(REVIEW_OP_UPDATE, ann(k, "x"), ann(k, "y")),
                         "may not set, change or remove it"),
                  "change %s", k);
        cr_expect_neq(*decide(REVIEW_OP_UPDATE, etcd(NULL, NULL), ann(k, "y")), '\0', "remove %s",
                      k);
        cr_expect_str_eq(decide(REVIEW_OP_UPDATE, ann(k, "y"), ann(k, "y")), "",
                         "an unchanged %s passes", k);
        user = CTL;
        cr_expect_str_eq(decide(REVIEW_OP_UPDATE, ann(k, "x"), ann(k, "y")), "", "%s", k);
        cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd(NULL, NULL), ann(k, "y")), "", "%s", k);
        cr_expect_str_eq(decide(REVIEW_OP_CREATE, ann(k, "y"), NULL), "", "%s", k);
    }
    user = PERSON;
    /* on CREATE: only the mark of a re-creation from a backup (a Velero restore) */
    cr_expect_str_eq(decide(REVIEW_OP_CREATE, ann("etcd-warden.io/status-backup-exists", ""), NULL),
                     "");
    cr_expect_neq(*decide(REVIEW_OP_CREATE, ann("etcd-warden.io/traffic-cut-at", "x"), NULL), '\0');
    cr_expect_neq(*decide(REVIEW_OP_CREATE, ann("etcd-warden.io/suspend-added", "true"), NULL),
                  '\0');
}

/* obj (TAKEN, returned) with the label etcd-warden.io/restoring=true. */
static cJSON *still_restoring(cJSON *obj)
{
    cJSON_AddItemToObject(cJSON_GetObjectItem(obj, "metadata"), "labels",
                          cJSON_Parse("{\"etcd-warden.io/restoring\":\"true\"}"));
    return obj;
}

/* The way out of a restore waiting for a status backup never taken: status-backup-exists=false
 * on an Etcd being restored, by whoever may update it; nothing else, nowhere else. */
Test(toggles, status_backup_false_on_a_restoring_etcd)
{
    const char *k = "etcd-warden.io/status-backup-exists";
    cJSON *restoring = ann(k, "true");

    cJSON_AddItemToObject(cJSON_GetObjectItem(restoring, "metadata"), "labels",
                          cJSON_Parse("{\"etcd-warden.io/restoring\":\"true\"}"));
    user = PERSON;
    cr_expect_str_eq(
        decide(REVIEW_OP_UPDATE, still_restoring(ann(k, "false")), cJSON_Duplicate(restoring, 1)),
        "");
    cr_expect(strstr(
        decide(REVIEW_OP_UPDATE, still_restoring(ann(k, "no")), cJSON_Duplicate(restoring, 1)),
        "is written by warden-controller only"));
    cr_expect(strstr(decide(REVIEW_OP_UPDATE, etcd(NULL, NULL), cJSON_Duplicate(restoring, 1)),
                     "is written by warden-controller only"));
    cr_expect(strstr(decide(REVIEW_OP_UPDATE, ann(k, "false"), ann(k, "true")),
                     "is written by warden-controller only"));
    cJSON_Delete(restoring);
}

/* The restoring label is added on the CREATE of a re-created Etcd, or by warden-controller: an
 * UPDATE by anyone else that adds it to a live Etcd is refused; keeping or removing it is not. */
Test(toggles, restoring_label_only_at_create)
{
    const char *l = "etcd-warden.io/restoring";
    const char *m;

    user = PERSON;
    m = decide(REVIEW_OP_UPDATE, label(l, ""), etcd(NULL, NULL));
    cr_expect(strstr(m, "metadata.labels[etcd-warden.io/restoring] marks an Etcd re-created from "
                        "a backup"),
              "%s", m);
    cr_expect(strstr(m, "removing it ends a restore"), "%s", m);
    /* no oldObject to show it was there: refused too */
    cr_expect_neq(*decide(REVIEW_OP_UPDATE, label(l, ""), NULL), '\0');
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, label(l, ""), label(l, "")), "", "kept");
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd(NULL, NULL), label(l, "")), "", "removed");
    cr_expect_str_eq(decide(REVIEW_OP_CREATE, label(l, ""), NULL), "", "on CREATE");
    user = CTL;
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, label(l, ""), etcd(NULL, NULL)), "",
                     "by warden-controller");
    user = PERSON;
}

/*
 * Removing the restoring label ends a restore when it is removed alone (kubectl label NAME
 * etcd-warden.io/restoring-); removed together with other changes, as gardenlet's reconcile
 * does when it writes the Etcd's labels whole beside its timestamp annotation, it is refused
 * (the mutating webhook puts it back first). warden-controller is not bound by it.
 */
Test(toggles, restoring_label_removed_alone_only)
{
    static const char restoring[] =
        "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\",\"labels\":{"
        "\"etcd-warden.io/restoring\":\"\",\"role\":\"main\",\"x\":\"y\"},"
        "\"annotations\":{\"gardener.cloud/timestamp\":\"1\"}},"
        "\"spec\":{\"replicas\":1,\"etcd\":{},\"backup\":{}}}";
    static const char by_hand[] =
        "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\",\"labels\":{"
        "\"role\":\"main\",\"x\":\"y\"},"
        "\"annotations\":{\"gardener.cloud/timestamp\":\"1\"}},"
        "\"spec\":{\"replicas\":1,\"etcd\":{},\"backup\":{}}}";
    static const char gardenlet[] =
        "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\",\"labels\":{"
        "\"role\":\"main\",\"gardener.cloud/role\":\"controlplane\"},"
        "\"annotations\":{\"gardener.cloud/timestamp\":\"2\","
        "\"gardener.cloud/operation\":\"reconcile\"}},"
        "\"spec\":{\"replicas\":1,\"etcd\":{},\"backup\":{}}}";
    static const char timestamp_only[] =
        "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\",\"labels\":{"
        "\"role\":\"main\",\"x\":\"y\"},"
        "\"annotations\":{\"gardener.cloud/timestamp\":\"2\"}},"
        "\"spec\":{\"replicas\":1,\"etcd\":{},\"backup\":{}}}";
    const char *m;

    user = PERSON;
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, cJSON_Parse(by_hand), cJSON_Parse(restoring)), "",
                     "removed alone");
    m = decide(REVIEW_OP_UPDATE, cJSON_Parse(gardenlet), cJSON_Parse(restoring));
    cr_expect(strstr(m, "metadata.labels[etcd-warden.io/restoring] is removed together with "
                        "other changes"),
              "%s", m);
    cr_expect(strstr(m, "kubectl label etcd main etcd-warden.io/restoring-"), "%s", m);
    cr_expect_neq(*decide(REVIEW_OP_UPDATE, cJSON_Parse(timestamp_only), cJSON_Parse(restoring)),
                  '\0', "an annotation changed with it");
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, cJSON_Parse(gardenlet), cJSON_Parse(by_hand)), "",
                     "not restoring: nothing to keep");
    /* any other metadata changed with it: a finalizer, an owner reference, a generateName */
    {
        static const char *const extra[] = {
            "\"finalizers\":[\"example.com/x\"]",
            "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":"
            "\"c\",\"uid\":\"u\"}]",
            "\"generateName\":\"main-\"",
        };
        size_t i;

        for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
            char text[1024];

            snprintf(text, sizeof(text),
                     "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\",%s,\"labels\":{"
                     "\"role\":\"main\",\"x\":\"y\"},"
                     "\"annotations\":{\"gardener.cloud/timestamp\":\"1\"}},"
                     "\"spec\":{\"replicas\":1,\"etcd\":{},\"backup\":{}}}",
                     extra[i]);
            cr_expect_neq(*decide(REVIEW_OP_UPDATE, cJSON_Parse(text), cJSON_Parse(restoring)),
                          '\0', "removed with %s", extra[i]);
        }
    }
    /* what the API server writes itself does not count */
    m = decide(REVIEW_OP_UPDATE,
               cJSON_Parse("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\","
                           "\"resourceVersion\":\"9\",\"generation\":2,\"managedFields\":[{}],"
                           "\"labels\":{\"role\":\"main\",\"x\":\"y\"},\"annotations\":{"
                           "\"gardener.cloud/timestamp\":\"1\"}},\"spec\":{\"replicas\":1,"
                           "\"etcd\":{},\"backup\":{}}}"),
               cJSON_Parse(restoring));
    cr_expect_str_eq(m, "", "resourceVersion, generation, managedFields");
    user = CTL;
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, cJSON_Parse(gardenlet), cJSON_Parse(restoring)), "",
                     "warden-controller ends a restore with its own changes");
    user = PERSON;
}

/* A restoring Etcd's suspension is held: removed by anyone but warden-controller, refused. */
Test(toggles, restore_suspension_is_held)
{
    static const char restoring[] =
        "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\",\"labels\":{"
        "\"etcd-warden.io/restoring\":\"\"},\"annotations\":{\"druid.gardener.cloud/"
        "suspend-etcd-spec-reconcile\":\"true\"}},\"spec\":{}}";
    static const char lifted[] =
        "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\",\"labels\":{"
        "\"etcd-warden.io/restoring\":\"\"}},\"spec\":{}}";
    static const char live[] =
        "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\",\"annotations\":{"
        "\"druid.gardener.cloud/suspend-etcd-spec-reconcile\":\"true\"}},\"spec\":{}}";
    const char *m;

    user = PERSON;
    m = decide(REVIEW_OP_UPDATE, cJSON_Parse(lifted), cJSON_Parse(restoring));
    cr_expect(strstr(m, "suspend-etcd-spec-reconcile] is held while Etcd main is restoring"), "%s",
              m);
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, cJSON_Parse(restoring), cJSON_Parse(restoring)), "",
                     "kept");
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE,
                            cJSON_Parse("{\"metadata\":{\"name\":\"main\"},"
                                        "\"spec\":{}}"),
                            cJSON_Parse(live)),
                     "", "not restoring: an operator's to remove");
    user = CTL;
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, cJSON_Parse(lifted), cJSON_Parse(restoring)), "",
                     "warden-controller");
    user = PERSON;
}

Test(toggles, unknown_keys_are_refused_with_the_known_ones)
{
    const char *m;

    user = PERSON;
    m = decide(REVIEW_OP_UPDATE, ann("etcd-warden.io/hibernates", "true"), etcd(NULL, NULL));
    cr_expect(strstr(m, "metadata.annotations[etcd-warden.io/hibernates]: unknown etcd-warden.io "
                        "annotation (a typo?); the known ones are etcd-warden.io/hibernate, "),
              "%s", m);
    cr_expect(strstr(m, "etcd-warden.io/traffic-cut-at"), "%s", m);
    m = decide(REVIEW_OP_CREATE, label("etcd-warden.io/restored", ""), NULL);
    cr_expect(strstr(m, "unknown etcd-warden.io label"), "%s", m);
    cr_expect_str_eq(
        decide(REVIEW_OP_UPDATE, ann("etcd-warden.io/old", "x"), ann("etcd-warden.io/old", "x")),
        "", "a key stored before the rule is not disrupted");
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, ann("example.com/x", "x"), NULL), "");
    cr_expect_str_eq(
        decide(REVIEW_OP_UPDATE, label("etcd-warden.io/allow-delete-while-restoring", ""), NULL),
        "");
}

Test(toggles, retention_type_is_bucket)
{
    user = PERSON;
    cr_expect_str_eq(
        decide(REVIEW_OP_UPDATE, ann("etcd-warden.io/immutability-retention-type", "bucket"), NULL),
        "");
    cr_expect(strstr(
        decide(REVIEW_OP_UPDATE, ann("etcd-warden.io/immutability-retention-type", "buckte"), NULL),
        "unsupported value \"buckte\": the only retention type is \"bucket\""));
}

Test(toggles, presence_annotations_read_as_off_warn)
{
    user = PERSON;
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE,
                            ann("druid.gardener.cloud/disable-etcd-component-protection", "false"),
                            NULL),
                     "");
    cr_expect(strstr(last_warning, "=\"false\" turns it ON: its presence counts"), "%s",
              last_warning);
    decide(REVIEW_OP_UPDATE,
           ann("druid.gardener.cloud/disable-etcd-runtime-component-creation", "No"), NULL);
    cr_expect(strstr(last_warning, "turns it ON"), "%s", last_warning);
    decide(REVIEW_OP_UPDATE, ann("druid.gardener.cloud/disable-etcd-component-protection", ""),
           NULL);
    cr_expect_str_eq(last_warning, "");
}
