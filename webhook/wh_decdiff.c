/* wh_decdiff - the differential check of the review decoders; see wh_decdiff.h. */
#include "webhook/wh_decdiff.h"

#include <stdlib.h>
#include <string.h>

static enum kerr answer(const struct protect_config *cfg, const struct lookup *lk, int full_tree,
                        enum wh_hook h, const char *body, size_t len, char **out, size_t *out_len,
                        unsigned int *status, struct kerr_info *err)
{
    struct wh_dispatch d;
    enum kerr rc = wh_dispatch_init(&d, cfg, lk, NULL, err);

    if (rc)
        return rc;
    d.full_tree = full_tree;
    return wh_dispatch_review(&d, h, body, len, out, out_len, status, err);
}

enum kerr wh_decdiff_check(const struct protect_config *cfg, const struct lookup *lk_tree,
                           const struct lookup *lk_sel, enum wh_hook h, const char *body,
                           size_t len, struct kerr_info *err)
{
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    unsigned int sa = 0, sb = 0;
    enum kerr ra, rb, rc = KERR_OK;
    struct kerr_info ea, eb;

    kerr_clear(&ea);
    kerr_clear(&eb);
    ra = answer(cfg, lk_tree, 1, h, body, len, &a, &la, &sa, &ea);
    rb = answer(cfg, lk_sel, 0, h, body, len, &b, &lb, &sb, &eb);
    if (ra == KERR_NOMEM || rb == KERR_NOMEM)
        rc = kerr_set(err, KERR_NOMEM, "answering the review");
    else if (ra != rb)
        rc = kerr_set(err, KERR_INVAL, "%s: whole tree %s (%s), selective %s (%s)", wh_hook_path(h),
                      kerr_name(ra), ea.msg, kerr_name(rb), eb.msg);
    else if (ra == KERR_OK && (sa != sb || la != lb || memcmp(a, b, la) != 0))
        rc = kerr_set(err, KERR_INVAL, "%s: whole tree %u %.*s, selective %u %.*s", wh_hook_path(h),
                      sa, (int)(la > 400 ? 400 : la), a, sb, (int)(lb > 400 ? 400 : lb), b);
    free(a);
    free(b);
    return rc;
}

static const char etcds_json[] =
    "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"u1\"},"
    "\"status\":{\"lastOperation\":{\"type\":\"Reconcile\",\"state\":\"Processing\"}}},"
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-b\",\"uid\":\"u2\",\"annotations\":{"
    "\"druid.gardener.cloud/disable-etcd-runtime-component-creation\":\"\"}},"
    "\"status\":{\"lastOperation\":{\"type\":\"Delete\",\"state\":\"Error\"}}},"
    "{\"metadata\":{\"namespace\":\"default\",\"name\":\"etcd-test\",\"uid\":\"u3\"}}]";
static const char stses_json[] =
    "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"labels\":{"
    "\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/part-of\":"
    "\"etcd-main\"}}},{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-b\","
    "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\",\"labels\":{"
    "\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/part-of\":\"etcd-b\"}}}]";

static const char *const reconcilers[] = { "system:serviceaccount:druid:etcd-druid",
                                           "system:serviceaccount:etcd-warden:warden-controller" };
static const char *const exempt[] = {
    "system:serviceaccount:kube-system:generic-garbage-collector"
};

enum kerr wh_decdiff_fixture(const char *body, size_t len, struct kerr_info *err)
{
    static cJSON *etcds, *stses;
    struct protect_config cfg = { reconcilers, 2, exempt, 1, NULL, NULL, 0, NULL };
    struct lookup_mem ma, mb;
    struct lookup la, lb;
    enum kerr rc = KERR_OK;
    int h, fail;

    if (!etcds)
        etcds = cJSON_Parse(etcds_json);
    if (!stses)
        stses = cJSON_Parse(stses_json);
    if (!etcds || !stses)
        return kerr_set(err, KERR_NOMEM, "parsing the fixture's parents");
    for (fail = 0; fail < 2 && !rc; fail++) {
        for (h = 0; h < WH_HOOK__COUNT && !rc; h++) {
            memset(&ma, 0, sizeof(ma));
            ma.etcds = etcds;
            ma.stses = stses;
            ma.fail = fail ? KERR_API : KERR_OK;
            mb = ma;
            lookup_mem_bind(&ma, &la);
            lookup_mem_bind(&mb, &lb);
            rc = wh_decdiff_check(&cfg, &la, &lb, (enum wh_hook)h, body, len, err);
            if (!rc && ma.calls != mb.calls)
                rc = kerr_set(err, KERR_INVAL, "%s: %d lookups with whole trees, %d selective",
                              wh_hook_path((enum wh_hook)h), ma.calls, mb.calls);
        }
    }
    return rc;
}
