/* wh_dispatch - body to AdmissionReview answer; see wh_dispatch.h. */
#include "webhook/wh_dispatch.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "webhook/mutate.h"
#include "webhook/prefix.h"
#include "webhook/bigrev.h"
#include "webhook/bkadm.h"
#include "webhook/etcdimm.h"
#include "webhook/etcdrepl.h"
#include "webhook/restore.h"
#include "webhook/stsvol.h"
#include "webhook/toggles.h"
#include "webhook/review.h"

static const char *const paths[WH_HOOK__COUNT] = {
    "/webhooks/etcdcomponents", "/webhooks/etcd",    "/webhooks/etcd-mutate",
    "/webhooks/scaleguard",     "/webhooks/backups",
};

static const char *const results[WH_RESULT__COUNT] = { "allowed", "denied", "errored" };

const char *wh_hook_path(enum wh_hook h)
{
    return h < WH_HOOK__COUNT ? paths[h] : "";
}

int wh_hook_from_path(const char *path, enum wh_hook *out)
{
    int i;

    for (i = 0; i < WH_HOOK__COUNT; i++) {
        if (strcmp(path, paths[i]) == 0) {
            *out = (enum wh_hook)i;
            return 0;
        }
    }
    return -1;
}

enum kerr wh_dispatch_init(struct wh_dispatch *d, const struct protect_config *protect,
                           const struct lookup *lookup, struct metrics_registry *registry,
                           struct kerr_info *err)
{
    static const char *const labels[] = { "webhook", "result", NULL };
    struct metrics_vec *v = NULL;
    const char *values[3] = { NULL, NULL, NULL };
    enum kerr rc;
    int h, r;

    memset(d, 0, sizeof(*d));
    d->protect = protect;
    d->lookup = lookup;
    if (!registry)
        return KERR_OK;
    rc = metrics_register(registry, METRICS_COUNTER, "warden_webhook_decisions_total",
                          "Admission decisions by webhook and result (allowed, denied, errored)",
                          labels, NULL, 0, &v, err);
    for (h = 0; !rc && h < WH_HOOK__COUNT; h++) {
        for (r = 0; !rc && r < WH_RESULT__COUNT; r++) {
            values[0] = paths[h];
            values[1] = results[r];
            rc = metrics_with(v, values, &d->decisions[h][r], err);
        }
    }
    return rc;
}

/* What each decision reads: the selective decoder parses only that. */
static const enum review_need needs[WH_HOOK__COUNT] = {
    REVIEW_NEED_COMPONENTS, REVIEW_NEED_ETCD, REVIEW_NEED_MUTATE,
    REVIEW_NEED_COMPONENTS, REVIEW_NEED_ALL,
};

static enum wh_result result_of(const struct review_resp *resp)
{
    if (resp->allowed)
        return WH_RESULT_ALLOWED;
    /* a refusal carries its reason (Forbidden, Invalid); an error has none */
    return resp->reason && *resp->reason ? WH_RESULT_DENIED : WH_RESULT_ERRORED;
}

static void log_review(enum wh_hook h, const struct review_req *req, const struct review_resp *resp,
                       enum wh_result res)
{
    char code[16];
    enum log_level level = res == WH_RESULT_ALLOWED ? LOG_DEBUG : LOG_INFO;

    if (!log_enabled(level))
        return;
    snprintf(code, sizeof(code), "%d", resp->code);
    log_msg(level, "admission review", "webhook", paths[h], "uid", req->uid, "operation",
            req->operation, "kind", req->kind_kind, "namespace", req->namespace, "name", req->name,
            "user", req->username, "result", results[res], "code", code, "message",
            resp->message ? resp->message : "", (const char *)0);
}

/*
 * A review over the parse budget is refused, not errored: an error (HTTP 400) is a failed call,
 * which failurePolicy Ignore admits unchecked, and padding a request past the budget would
 * then skip every rule. Unless it is proven none of the guard's business (webhook/bigrev.h,
 * the components endpoints only): its envelope and the objects' labels are read to tell, and
 * such a review is allowed. Else its envelope (uid, kind, names; no object) is read to answer
 * it: allowed false, code 413. KERR_TOOBIG when even that cannot be read (the 400 follows).
 */
static enum kerr too_big(const struct wh_dispatch *d, enum wh_hook h, struct review_req *req,
                         const char *body, size_t len, const struct kerr_info *why,
                         struct review_resp *resp, char **out, size_t *out_len,
                         struct kerr_info *err)
{
    enum wh_result res = WH_RESULT_DENIED;
    char proof[512];
    struct kerr_info e;
    enum kerr rc = KERR_TOOBIG;

    kerr_clear(&e);
    review_req_release(req);
    if ((h == WH_HOOK_COMPONENTS || h == WH_HOOK_SCALEGUARD) && d->lookup)
        rc = review_req_decode_sel(req, body, len, REVIEW_NEED_LABELS, &e);
    if (rc == KERR_OK && bigrev_unguarded(d->lookup, req, proof, sizeof(proof))) {
        res = WH_RESULT_ALLOWED;
        if (review_allow(resp, "%s, so the guard has no business with it", proof))
            return kerr_set(err, KERR_NOMEM, "building the answer");
    } else {
        if (rc == KERR_OK)
            log_info("a review too large to decide is refused", "kind", req->kind_kind, "namespace",
                     req->namespace, "name", req->name, "because", proof);
        review_req_release(req);
        kerr_clear(&e);
        if ((rc = review_req_decode_sel(req, body, len, REVIEW_NEED_ENVELOPE, &e)) != KERR_OK)
            return rc == KERR_NOMEM ? kerr_set(err, rc, "decoding the review") : KERR_TOOBIG;
        if (review_errored(resp, 413, "%s", why->msg))
            return kerr_set(err, KERR_NOMEM, "building the answer");
    }
    if (d->decisions[h][res])
        metrics_inc(d->decisions[h][res]);
    log_review(h, req, resp, res);
    return review_encode(req, resp, out, out_len, err);
}

static enum kerr decide(const struct wh_dispatch *d, enum wh_hook h, const struct review_req *req,
                        struct review_resp *resp, struct kerr_info *err)
{
    switch (h) {
    case WH_HOOK_COMPONENTS:
    case WH_HOOK_SCALEGUARD: {
        enum kerr rc = h == WH_HOOK_COMPONENTS
                           ? protect_decide(d->protect, d->lookup, req, resp, err)
                           : protect_guard_decide(d->protect, d->lookup, req, resp, err);

        /* the Local directory an Etcd's StatefulSet mounts (with --backup-entries: the claim
         * caches), whoever asks */
        if (rc == KERR_OK && resp->allowed && d->prefix)
            rc = stsvol_decide(d->prefix, req, resp, err);
        return rc;
    }
    case WH_HOOK_ETCD: {
        enum kerr rc;

        /* etcd-druid's CRD rule: spec.replicas grows or goes to 0 (the Etcd or etcds/scale) */
        if ((rc = etcdrepl_decide(req, resp, err)) || !resp->allowed)
            return rc;
        /* etcd-druid's CRD rules: the fields naming the members and their volumes stay */
        if ((rc = etcdimm_decide(req, resp, err)) || !resp->allowed)
            return rc;
        /* kubectl scale etcd: a Scale, neither labels nor annotations to check but the Etcd's */
        if (strcmp(req->kind_group, "autoscaling") == 0 && strcmp(req->kind_kind, "Scale") == 0)
            return restore_decide_scale(d->lookup, req, resp, err);
        rc = restore_decide(req, resp, err);

        if (rc == KERR_OK && resp->allowed)
            rc = toggles_decide(d->protect, req, resp, err);
        if (rc == KERR_OK && resp->allowed && d->prefix)
            rc = prefix_cache_decide(d->prefix, req, resp, err);
        return rc;
    }
    case WH_HOOK_MUTATE:
        return mutate_decide(d->protect, d->lookup, req, resp, err);
    case WH_HOOK_BACKUPS: /* served with --backup-entries only (the claim caches) */
        return d->prefix ? bkadm_decide(d->prefix, req, resp, err) : KERR_OK;
    case WH_HOOK__COUNT:
        break;
    }
    return kerr_set(err, KERR_INVAL, "unknown webhook %d", (int)h);
}

enum kerr wh_dispatch_review(const struct wh_dispatch *d, enum wh_hook h, const char *body,
                             size_t len, char **out, size_t *out_len, unsigned int *http_status,
                             struct kerr_info *err)
{
    struct review_req req;
    struct review_resp resp;
    struct kerr_info derr;
    enum wh_result res;
    enum kerr rc;

    *out = NULL;
    *out_len = 0;
    *http_status = 200;
    review_req_init(&req);
    review_resp_init(&resp);
    kerr_clear(&derr);
    if (h >= WH_HOOK__COUNT)
        rc = review_req_decode(&req, body, len, &derr);
    else if (d->full_tree)
        rc = review_req_decode_tree(&req, body, len, needs[h], &derr);
    else
        rc = review_req_decode_sel(&req, body, len, needs[h], &derr);
    if (rc == KERR_NOMEM) {
        kerr_set(err, rc, "decoding the review");
        goto out;
    }
    if (rc == KERR_TOOBIG && h < WH_HOOK__COUNT) {
        rc = too_big(d, h, &req, body, len, &derr, &resp, out, out_len, err);
        if (rc != KERR_TOOBIG)
            goto out;
    }
    if (rc) {
        log_info("undecodable admission review", "webhook", wh_hook_path(h), "error", derr.msg);
        *http_status = 400;
        if (h < WH_HOOK__COUNT && d->decisions[h][WH_RESULT_ERRORED])
            metrics_inc(d->decisions[h][WH_RESULT_ERRORED]);
        rc = review_encode_error(NULL, 400, derr.msg, out, out_len, err);
        goto out;
    }
    if ((rc = decide(d, h, &req, &resp, err)))
        goto out;
    res = result_of(&resp);
    if (d->decisions[h][res])
        metrics_inc(d->decisions[h][res]);
    log_review(h, &req, &resp, res);
    rc = review_encode(&req, &resp, out, out_len, err);
out:
    review_resp_release(&resp);
    review_req_release(&req);
    return rc;
}
