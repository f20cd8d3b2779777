/*
 * inflist - the list half of common/informer (see informer.h and
 * informer_int.h): the LIST through common/pager, the store's replacement
 * and the handlers of its differences, and the resync.
 */
#include "common/informer_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jarena.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/pager.h"
#include "common/strlist.h"

/* ---- handlers ---- */

void inf_call_add(struct inf *inf, const cJSON *obj)
{
    size_t i;

    for (i = 0; i < inf->nh; i++)
        if (inf->h[i].on_add)
            inf->h[i].on_add(inf->h[i].ctx, obj);
}

void inf_call_update(struct inf *inf, const cJSON *old_obj, const cJSON *new_obj)
{
    size_t i;

    for (i = 0; i < inf->nh; i++)
        if (inf->h[i].on_update)
            inf->h[i].on_update(inf->h[i].ctx, old_obj, new_obj);
}

void inf_call_delete(struct inf *inf, const cJSON *obj)
{
    size_t i;

    for (i = 0; i < inf->nh; i++)
        if (inf->h[i].on_delete)
            inf->h[i].on_delete(inf->h[i].ctx, obj);
}

/*
 * The handlers of a relist's changes. Their new objects are read from the store one at a
 * time (lazy_new), each into the thread's arena (the handlers borrow them for the call): the
 * list's objects are never all trees at once. Only this thread writes the informer's objects,
 * so the store holds what the list put there.
 */
static void dispatch_changes(struct inf *inf, const struct store_changes *ch)
{
    const struct store_change *c;
    cJSON *obj;
    size_t i;

    for (i = 0; i < ch->n; i++) {
        c = &ch->v[i];
        obj = NULL;
        if (c->kind == STORE_DELETED)
            inf_call_delete(inf, c->old_obj);
        else if (store_get_arena(inf->store, c->key, &obj, NULL) != KERR_OK)
            continue;
        else if (c->kind == STORE_ADDED)
            inf_call_add(inf, obj);
        else
            inf_call_update(inf, c->old_obj, obj);
        jarena_delete(obj);
    }
}

/* Whether key is one of this informer's (a shared store holds other informers' too). */
static int in_scope(const struct inf *inf, const char *key)
{
    return !inf->o.scope || strncmp(key, inf->o.scope, strlen(inf->o.scope)) == 0;
}

void inf_resync(struct inf *inf)
{
    struct strlist keys;
    cJSON *obj;
    size_t i;

    strlist_init(&keys);
    if (store_keys(inf->store, &keys, NULL) == KERR_OK) {
        for (i = 0; i < keys.n && !inf_stopping(inf); i++) {
            if (!in_scope(inf, keys.v[i]) || store_get(inf->store, keys.v[i], &obj, NULL))
                continue;
            inf_call_update(inf, obj, obj);
            cJSON_Delete(obj);
        }
    }
    strlist_release(&keys);
    inf_stat_inc(inf, &inf->st.resyncs);
    inf->next_resync_ms = ktime_mono_ms() + inf->o.resync_ms;
}

/* ---- list ---- */

/*
 * A listed item of a compact store: the projection kept as its compact text
 * (a raw item, see storeent_prepare), so a large list waits for the swap as
 * text, not as trees. ctx is the struct inf.
 */
static enum kerr project_text(void *ctx, const cJSON *obj, cJSON **out)
{
    struct inf *inf = ctx;
    cJSON *proj = NULL;
    char *text;
    enum kerr rc = KERR_OK;

    *out = NULL;
    if (inf->o.project)
        rc = inf->o.project(inf->o.project_ctx, obj, &proj);
    if (rc != KERR_OK)
        return rc;
    text = cJSON_PrintUnformatted(proj ? proj : obj);
    cJSON_Delete(proj);
    *out = text ? cJSON_CreateRaw(text) : NULL;
    free(text);
    return *out ? KERR_OK : KERR_NOMEM;
}

static enum kerr list(struct inf *inf)
{
    struct pager_opts po = { .label_selector = inf->o.label_selector,
                             .field_selector = inf->o.field_selector,
                             .limit = inf->o.page_size,
                             .project = inf->o.compact ? project_text : inf->o.project,
                             .project_ctx = inf->o.compact ? (void *)inf : inf->o.project_ctx,
                             .stopped = inf_stopping,
                             .stopped_arg = inf,
                             .arena = 1 };
    struct kerr_info err;
    struct store_changes ch;
    char rv[INF_RV_MAX] = "";
    cJSON *items = NULL;
    enum kerr rc;

    kerr_clear(&err);
    store_changes_init(&ch);
    ch.lazy_new = 1;
    rc = pager_list(inf->client, inf->o.res, inf->o.ns, &po, &items, rv, sizeof(rv), &err);
    if (rc != KERR_OK) {
        if (rc == KERR_CANCELLED)
            return rc;
        inf_stat_inc(inf, &inf->st.list_errors);
        log_warn("informer list failed", "informer", inf->o.name, "error", err.msg);
        return rc;
    }
    /*
     * KERR_NOMEM after the swap only loses handler calls: the store is right.
     * Without handlers no list of changes is built: it would copy every object.
     */
    rc = store_replace_scope(inf->store, inf->o.scope, items, inf->nh ? &ch : NULL, &err);
    if (rc != KERR_OK && rc != KERR_NOMEM) {
        inf_stat_inc(inf, &inf->st.list_errors);
        log_warn("informer list unusable", "informer", inf->o.name, "error", err.msg);
        store_changes_release(&ch);
        return rc;
    }
    inf_set_rv(inf, rv);
    dispatch_changes(inf, &ch);
    store_changes_release(&ch);
    pthread_mutex_lock(&inf->mu);
    inf->st.relists += inf->st.lists ? 1 : 0;
    inf->st.lists++;
    inf->synced = 1;
    pthread_cond_broadcast(&inf->cond);
    pthread_mutex_unlock(&inf->mu);
    log_debug("informer listed", "informer", inf->o.name, "resourceVersion", rv);
    return KERR_OK;
}

enum kerr inf_list(struct inf *inf)
{
    struct kerr_info err;
    enum kerr rc;
    int reserved;

    /*
     * The pages, and the objects handed to the handlers, are parsed into the thread's arena
     * (common/jarena; a malloc per node was most of the sync's CPU), made large enough for
     * a page for the list's time. Without that memory they are malloc'd nodes as before.
     */
    kerr_clear(&err);
    reserved = jarena_thread_reserve(INF_LIST_ARENA, &err) == KERR_OK;
    if (!reserved)
        log_debug("informer list without its arena", "informer", inf->o.name, "error", err.msg);
    rc = list(inf);
    if (reserved) /* else a tree of the block may be alive: the block stays */
        jarena_thread_release();
    return rc;
}
