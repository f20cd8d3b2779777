/* ctl - the warden-controller process; see ctl.h. */
#include "controller/ctl.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/workqueue.h"
#include "controller/ctl_config.h"

struct ctl {
    const struct ctl_config *cfg; /* BORROWED */
    struct k8s_client *client;    /* BORROWED or OWNED (own_client) */
    int own_client;
    struct ev_recorder *events;
    struct metrics_registry *reg;
    struct store *stores[CTL_C_COUNT]; /* BORROWED from the informers */
    struct wq *queue;
};

struct k8s_client *ctl_client(struct ctl *c)
{
    return c->client;
}

struct ev_recorder *ctl_events(struct ctl *c)
{
    return c->events;
}

const struct ctl_config *ctl_cfg(const struct ctl *c)
{
    return c->cfg;
}

struct store *ctl_store(struct ctl *c, enum ctl_cache w)
{
    return (unsigned)w < CTL_C_COUNT ? c->stores[w] : NULL;
}

struct metrics_registry *ctl_metrics(struct ctl *c)
{
    return c->reg;
}

void ctl_enqueue(struct ctl *c, const char *kind, const char *ns, const char *name, long after_ms)
{
    struct buf b;

    if (!c->queue)
        return;
    buf_init(&b, WQ_KEY_MAX);
    if (!buf_appendf(&b, "%s/%s/%s", kind, ns ? ns : "", name))
        (void)wq_add_after(c->queue, b.data, after_ms);
    buf_release(&b);
}

void ctl_enqueue_etcd(struct ctl *c, const char *ns, const char *name, long after_ms)
{
    ctl_enqueue(c, "etcd", ns, name, after_ms);
}

enum kerr ctl_new(const struct ctl_config *cfg, const struct ctl_opts *opts, struct ctl **out,
                  struct kerr_info *err)
{
    (void)cfg;
    (void)opts;
    *out = NULL;
    return kerr_set(err, KERR_UNSUPPORTED, "warden-controller: not built yet");
}

enum kerr ctl_start(struct ctl *c, struct kerr_info *err)
{
    (void)c;
    return kerr_set(err, KERR_UNSUPPORTED, "warden-controller: not built yet");
}

int ctl_synced(struct ctl *c)
{
    (void)c;
    return 0;
}

int ctl_leading(struct ctl *c)
{
    (void)c;
    return 0;
}

void ctl_stop(struct ctl *c)
{
    (void)c;
}

enum kerr ctl_run(struct ctl *c, struct kerr_info *err)
{
    return ctl_start(c, err);
}

void ctl_free(struct ctl *c)
{
    if (!c)
        return;
    ctl_stop(c);
    wq_free(c->queue);
    free(c);
}
