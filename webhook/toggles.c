/* toggles - the etcd-warden.io keys of an Etcd, checked; see toggles.h. */
#include "webhook/toggles.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/buf.h"
#include "common/hibguard.h"
#include "common/jpatch.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "webhook/lookup.h"
#include "webhook/restore.h"

#define ANN_HIBERNATE     "etcd-warden.io/hibernate"
#define ANN_RETENTION     "etcd-warden.io/immutability-retention-type"
#define ANN_SUSPEND_ADDED "etcd-warden.io/suspend-added"
#define PREFIX            "etcd-warden.io/"
#define PTR_MAX           1024u

static const char *const state_keys[] = {
    HIBGUARD_ANN_CUT_AT,
    HIBGUARD_ANN_PHASE,
    HIBGUARD_ANN_CHECKED,
    HIBGUARD_ANN_STORE,
    "etcd-warden.io/hibernation-condition",
    ANN_SUSPEND_ADDED,
    "etcd-warden.io/restore-progress",
    LOOKUP_ANN_STATUS_BACKUP,
};

static const char *const toggle_annotations[] = { ANN_HIBERNATE, HIBGUARD_ANN_BREAK_GLASS,
                                                  ANN_RETENTION };

/* Labels: restoring and allow-delete (toggles), restored-from (the controller's EtcdRestore). */
static const char *const known_labels[] = { LOOKUP_LABEL_RESTORING, LOOKUP_LABEL_ALLOW_DELETE,
                                            "etcd-warden.io/restored-from" };

#define KNOWN_ANNOTATIONS                                          \
    ANN_HIBERNATE ", " HIBGUARD_ANN_BREAK_GLASS ", " ANN_RETENTION \
                  " (set by users); " TOGGLES_STATE_KEYS " (written by warden-controller)"
#define KNOWN_LABELS \
    LOOKUP_LABEL_RESTORING ", " LOOKUP_LABEL_ALLOW_DELETE ", etcd-warden.io/restored-from"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int in(const char *key, const char *const *list, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (strcmp(key, list[i]) == 0)
            return 1;
    }
    return 0;
}

int toggles_is_state(const char *key)
{
    return key && in(key, state_keys, N(state_keys));
}

/* metadata.<map> of obj as an object (values of any type), or NULL. */
static const cJSON *meta_map(const cJSON *obj, const char *map)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    m = cJSON_GetObjectItemCaseSensitive(m, map);
    return cJSON_IsObject(m) ? m : NULL;
}

/* The string value of key in map; "" for a value that is not a string; NULL when absent. */
static const char *value_of(const cJSON *map, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(map, key);

    if (!v)
        return NULL;
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* 1 when the request sets key to a value the old object did not hold. */
static int changed(const struct review_req *req, const char *key, const char **now)
{
    const char *old = req->op == REVIEW_OP_UPDATE
                          ? value_of(meta_map(req->old_object, "annotations"), key)
                          : NULL;

    *now = value_of(meta_map(req->object, "annotations"), key);
    return *now && !same(old, *now);
}

static int blank(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

static int is_controller(const struct protect_config *cfg, const struct review_req *req)
{
    return cfg && protect_user_in(req->username, cfg->controllers, cfg->n_controllers);
}

/*
 * True when a CREATE by someone other than the controller may carry the
 * state annotation key: the mark of a re-creation from a backup, and the
 * suspend-added the mutating webhook writes beside it.
 */
static int create_may_carry(const cJSON *ann, const char *key)
{
    if (strcmp(key, LOOKUP_ANN_STATUS_BACKUP) == 0)
        return 1;
    return strcmp(key, ANN_SUSPEND_ADDED) == 0 &&
           cJSON_GetObjectItemCaseSensitive(ann, LOOKUP_ANN_STATUS_BACKUP) != NULL;
}

/*
 * True when an UPDATE by someone other than the controller may change the state annotation
 * key as it does: status-backup-exists set to "false" on an Etcd being restored, the way out
 * of a restore waiting for a status backup that was never taken (the restore goes on with the
 * StatefulSet alone; removing the restoring label, which anyone may, ends it altogether).
 */
static int update_may_change(const struct review_req *req, const char *key, const char *to)
{
    const cJSON *labels = meta_map(req->old_object, "labels");

    return req->op == REVIEW_OP_UPDATE && strcmp(key, LOOKUP_ANN_STATUS_BACKUP) == 0 && to &&
           strcmp(to, "false") == 0 &&
           cJSON_GetObjectItemCaseSensitive(labels, LOOKUP_LABEL_RESTORING) != NULL;
}

/*
 * True when req, an UPDATE by someone other than the controller, adds the restoring label: the
 * mark of an Etcd re-created from a backup, which the mutating webhook adds on that CREATE. On
 * a live Etcd it would stop the controller's live steps there (hibernation, the status backup),
 * put the status backup's copy over the live status and open status-backup-exists to anyone.
 */
static int adds_restoring(const struct protect_config *cfg, const struct review_req *req)
{
    return req->op == REVIEW_OP_UPDATE && !is_controller(cfg, req) &&
           !cJSON_GetObjectItemCaseSensitive(meta_map(req->old_object, "labels"),
                                             LOOKUP_LABEL_RESTORING) &&
           cJSON_GetObjectItemCaseSensitive(meta_map(req->object, "labels"),
                                            LOOKUP_LABEL_RESTORING);
}

/*
 * True when req, an UPDATE by someone other than the controller, removes etcd-druid's suspension
 * from a restoring Etcd: etcd-druid would reconcile it before its components are back (and wake
 * a StatefulSet restored at 0), at once if warden-controller is not running to set it again.
 */
static int lifts_restore_suspension(const struct protect_config *cfg, const struct review_req *req)
{
    return req->op == REVIEW_OP_UPDATE && !is_controller(cfg, req) &&
           cJSON_GetObjectItemCaseSensitive(meta_map(req->old_object, "labels"),
                                            LOOKUP_LABEL_RESTORING) &&
           cJSON_GetObjectItemCaseSensitive(meta_map(req->old_object, "annotations"),
                                            LOOKUP_ANN_SUSPEND_RECONCILE) &&
           !cJSON_GetObjectItemCaseSensitive(meta_map(req->object, "annotations"),
                                             LOOKUP_ANN_SUSPEND_RECONCILE);
}

int toggles_keeps_restoring(const struct protect_config *cfg, const struct review_req *req)
{
    return !is_controller(cfg, req) && restore_removal(req) == RESTORE_REMOVAL_WITH_OTHERS;
}

/* The first state annotation req sets, changes or removes that its user may not; NULL: none. */
static const char *forbidden_state(const struct protect_config *cfg, const struct review_req *req)
{
    const cJSON *ann = meta_map(req->object, "annotations");
    const cJSON *old =
        req->op == REVIEW_OP_UPDATE ? meta_map(req->old_object, "annotations") : NULL;
    size_t i;

    if (is_controller(cfg, req))
        return NULL;
    for (i = 0; i < N(state_keys); i++) {
        const char *a = value_of(old, state_keys[i]), *b = value_of(ann, state_keys[i]);

        if (same(a, b))
            continue;
        if (req->op == REVIEW_OP_CREATE && create_may_carry(ann, state_keys[i]))
            continue;
        if (update_may_change(req, state_keys[i], b))
            continue;
        return state_keys[i];
    }
    return NULL;
}

/* The first etcd-warden.io/ key of metadata.<map> that req adds and that is not known; NULL. */
static const char *unknown_key(const struct review_req *req, const char *map,
                               const char *const *known, size_t n, int annotations)
{
    const cJSON *m = meta_map(req->object, map), *it;
    const cJSON *old = req->op == REVIEW_OP_UPDATE ? meta_map(req->old_object, map) : NULL;

    cJSON_ArrayForEach (it, m) {
        const char *k = it->string;

        if (!k || strncmp(k, PREFIX, sizeof(PREFIX) - 1) != 0 || in(k, known, n) ||
            (annotations && toggles_is_state(k)) || cJSON_GetObjectItemCaseSensitive(old, k))
            continue;
        return k;
    }
    return NULL;
}

static time_t now_of(const struct protect_config *cfg)
{
    return cfg && cfg->clock ? cfg->clock() : time(NULL);
}

static enum kerr check_break_glass(const struct protect_config *cfg, const char *v,
                                   struct review_resp *resp, int *denied)
{
    struct kerr_info e;
    const char *reason = "";
    time_t exp = 0, now = now_of(cfg);
    char at[KTIME_LEN + 1] = "";

    *denied = 1;
    kerr_clear(&e);
    if (blank(v))
        return review_deny(resp,
                           "metadata.annotations[%s]: the value is \"<RFC 3339 expiry> "
                           "<reason>\", the reason recorded with the scale-down without a "
                           "snapshot, and it is empty: say why and until when, e.g. "
                           "\"2026-11-29T12:00:00Z bucket lost\"",
                           HIBGUARD_ANN_BREAK_GLASS);
    if (hibguard_break_glass(v, &exp, &reason, &e) != KERR_OK)
        return review_deny(resp, "metadata.annotations[%s]: %s", HIBGUARD_ANN_BREAK_GLASS, e.msg);
    if (ktime_format(exp, at) != KERR_OK)
        snprintf(at, sizeof(at), "?");
    if (exp <= now)
        return review_deny(resp,
                           "metadata.annotations[%s]: the expiry %s has passed: break glass is "
                           "for one incident, give an expiry ahead (at most 24h)",
                           HIBGUARD_ANN_BREAK_GLASS, at);
    if (exp - now > HIBGUARD_BREAK_GLASS_MAX_S)
        return review_deny(resp,
                           "metadata.annotations[%s]: the expiry %s is more than 24h ahead: break "
                           "glass is for one incident, not an Etcd unguarded for good",
                           HIBGUARD_ANN_BREAK_GLASS, at);
    *denied = 0;
    return KERR_OK;
}

/* Each value check; *denied when resp was denied. */
static enum kerr check_values(const struct protect_config *cfg, const struct review_req *req,
                              struct review_resp *resp, int *denied)
{
    const char *v;

    *denied = 1;
    if (changed(req, ANN_HIBERNATE, &v) && strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
        return review_deny(resp,
                           "metadata.annotations[%s]: \"%s\" is neither \"true\" (hibernate) nor "
                           "\"false\" (awake; removing the annotation wakes up too)",
                           ANN_HIBERNATE, v);
    if (changed(req, ANN_RETENTION, &v) && strcmp(v, "bucket") != 0)
        return review_deny(resp,
                           "metadata.annotations[%s]: unsupported value \"%s\": the only "
                           "retention type is \"bucket\" (remove the annotation for none)",
                           ANN_RETENTION, v);
    if (changed(req, HIBGUARD_ANN_BREAK_GLASS, &v))
        return check_break_glass(cfg, v, resp, denied);
    *denied = 0;
    return KERR_OK;
}

static int reads_off(const char *v)
{
    static const char *const off[] = { "false", "no", "0", "off", "disabled" };
    size_t i;

    for (i = 0; i < N(off); i++) {
        if (strcasecmp(v, off[i]) == 0)
            return 1;
    }
    return 0;
}

static enum kerr warn_presence(const struct review_req *req, struct review_resp *resp)
{
    static const char *const keys[] = { LOOKUP_ANN_DISABLE_PROTECTION, LOOKUP_ANN_DISABLE_RUNTIME };
    const char *v;
    enum kerr rc = KERR_OK;
    size_t i;

    for (i = 0; i < N(keys) && !rc; i++) {
        if (changed(req, keys[i], &v) && reads_off(v))
            rc = review_warn(resp,
                             "metadata.annotations[%s]=\"%s\" turns it ON: its presence counts, "
                             "not its value; remove the annotation (kubectl annotate etcd %s "
                             "%s-) to keep the default",
                             keys[i], v, lookup_meta_str(req->object, "name"), keys[i]);
    }
    return rc;
}

enum kerr toggles_decide(const struct protect_config *cfg, const struct review_req *req,
                         struct review_resp *resp, struct kerr_info *err)
{
    const char *k;
    int denied = 0;
    enum kerr rc = KERR_OK;

    if ((req->op != REVIEW_OP_CREATE && req->op != REVIEW_OP_UPDATE) ||
        !cJSON_IsObject(req->object))
        return KERR_OK;
    if ((k = forbidden_state(cfg, req)))
        rc = review_deny(resp,
                         "metadata.annotations[%s] is written by warden-controller only: it is "
                         "part of the state the scale-down guard decides from, and %s may not "
                         "set, change or remove it (state annotations: %s)",
                         k, req->username, TOGGLES_STATE_KEYS);
    else if (adds_restoring(cfg, req))
        rc = review_deny(resp,
                         "metadata.labels[%s] marks an Etcd re-created from a backup: it is set "
                         "when such an Etcd is created, and %s may not add it to Etcd %s, which "
                         "is live (warden-controller would stop its live steps and restore its "
                         "status from the status backup); removing it ends a restore",
                         LOOKUP_LABEL_RESTORING, req->username ? req->username : "(unknown)",
                         req->name ? req->name : "(unnamed)");
    else if (lifts_restore_suspension(cfg, req))
        rc = review_deny(resp,
                         "metadata.annotations[%s] is held while Etcd %s is restoring: without "
                         "it etcd-druid would reconcile the Etcd before its components are back; "
                         "to end the restore, remove the label alone: kubectl label etcd %s %s- "
                         "(warden-controller then lifts the suspension it added)",
                         LOOKUP_ANN_SUSPEND_RECONCILE, lookup_meta_str(req->object, "name"),
                         lookup_meta_str(req->object, "name"), LOOKUP_LABEL_RESTORING);
    else if (toggles_keeps_restoring(cfg, req))
        rc = review_deny(resp,
                         "metadata.labels[%s] is removed together with other changes (as a "
                         "controller that writes the Etcd's labels whole does; gardenlet's "
                         "reconcile is one): the restore of Etcd %s goes on. To end it by hand, "
                         "remove the label alone: kubectl label etcd %s %s-",
                         LOOKUP_LABEL_RESTORING, lookup_meta_str(req->object, "name"),
                         lookup_meta_str(req->object, "name"), LOOKUP_LABEL_RESTORING);
    else if (!is_controller(cfg, req) &&
             (k = unknown_key(req, "annotations", toggle_annotations, N(toggle_annotations), 1)))
        rc = review_deny(resp,
                         "metadata.annotations[%s]: unknown etcd-warden.io annotation (a typo?); "
                         "the known ones are %s",
                         k, KNOWN_ANNOTATIONS);
    else if (!is_controller(cfg, req) &&
             (k = unknown_key(req, "labels", known_labels, N(known_labels), 0)))
        rc = review_deny(resp,
                         "metadata.labels[%s]: unknown etcd-warden.io label (a typo?); the "
                         "known ones are %s",
                         k, KNOWN_LABELS);
    else if (!(rc = check_values(cfg, req, resp, &denied)) && !denied)
        rc = warn_presence(req, resp);
    return rc == KERR_OK ? rc : kerr_set(err, rc, "building the answer");
}

enum kerr toggles_strip_patch(const struct protect_config *cfg, const struct review_req *req,
                              const cJSON *obj, cJSON *patch, int *removed,
                              struct review_resp *resp, struct kerr_info *err)
{
    const cJSON *ann = meta_map(obj, "annotations");
    struct buf ptr;
    size_t i;
    enum kerr rc = KERR_OK;

    *removed = 0;
    if (req->op != REVIEW_OP_CREATE || !ann || is_controller(cfg, req))
        return KERR_OK;
    buf_init(&ptr, PTR_MAX);
    for (i = 0; i < N(state_keys) && !rc; i++) {
        if (!cJSON_GetObjectItemCaseSensitive(ann, state_keys[i]) ||
            create_may_carry(ann, state_keys[i]))
            continue;
        buf_reset(&ptr);
        if ((rc = jpatch_ptr_append(&ptr, "metadata")) ||
            (rc = jpatch_ptr_append(&ptr, "annotations")) ||
            (rc = jpatch_ptr_append(&ptr, state_keys[i]))) {
            kerr_set(err, rc, "building the patch path");
            break;
        }
        if ((rc = jpatch_remove(patch, buf_str(&ptr), err)))
            break;
        (*removed)++;
        if ((rc = review_warn(resp,
                              "metadata.annotations[%s] removed: warden-controller alone writes "
                              "it (a restored or re-applied Etcd starts without it)",
                              state_keys[i])))
            kerr_set(err, rc, "building the answer");
    }
    buf_release(&ptr);
    return rc;
}
