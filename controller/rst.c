/* rst - restore progress of an Etcd re-created from a backup. */
#include "controller/rst.h"

#include <string.h>

#include "controller/ctl.h"
#include "controller/rctx.h"

void rst_progress_parse(const char *text, struct rst_progress *out)
{
    (void)text;
    memset(out, 0, sizeof(*out));
    out->awaiting_status = true;
    out->awaiting_resources = true;
}

enum kerr rst_progress_print(const struct rst_progress *p, char **out, struct kerr_info *err)
{
    (void)p;
    *out = NULL;
    return kerr_set(err, KERR_UNSUPPORTED, "not yet");
}

enum kerr rst_run(const struct rctx *x, const cJSON *etcd, long *requeue_ms, struct kerr_info *err)
{
    (void)x;
    (void)etcd;
    (void)err;
    *requeue_ms = RST_REQUEUE_MS;
    return KERR_OK;
}

enum kerr rst_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *err)
{
    struct rctx x;

    res->requeue_ms = 0;
    rctx_from_ctl(c, &x);
    return rst_run(&x, etcd, &res->requeue_ms, err);
}
