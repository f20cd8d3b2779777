/*
 * pager - see pager.h. The first page becomes the List that is returned:
 * its items are replaced by an array the (projected) items of every page go
 * to, and each later page brings its resourceVersion; metadata.continue and
 * remainingItemCount are dropped as pages are taken.
 */
#include "common/pager.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jarena.h"
#include "common/kjson.h"

#define MAX_PAGES 100000

/* The projection of obj (TAKES) into *out. */
static enum kerr project(const struct pager_opts *o, cJSON *obj, cJSON **out)
{
    enum kerr rc;

    if (!o->project) {
        *out = obj;
        return KERR_OK;
    }
    rc = o->project(o->project_ctx, obj, out);
    cJSON_Delete(obj);
    return rc;
}

/* Move the items of the array from (may be NULL or not an array), projected, to the end of items.
 */
static enum kerr take_items(const struct pager_opts *o, cJSON *from, cJSON *items)
{
    cJSON *item, *proj;
    enum kerr rc;

    while (cJSON_IsArray(from) && (item = cJSON_DetachItemFromArray(from, 0))) {
        rc = project(o, item, &proj);
        if (rc != KERR_OK)
            return rc;
        if (!cJSON_AddItemToArray(items, proj)) {
            cJSON_Delete(proj);
            return KERR_NOMEM;
        }
    }
    return KERR_OK;
}

/* Whether pages are parsed into the thread's arena: only when no item of them is kept. */
static int in_arena(const struct pager_opts *o)
{
    return o->arena && o->project;
}

/* Release a page from k8s_list. */
static void page_free(const struct pager_opts *o, cJSON *page)
{
    if (in_arena(o))
        jarena_delete(page);
    else
        cJSON_Delete(page);
}

/*
 * The first page as the List (*list): the page itself, or in the arena a copy of it without
 * its items (no node of the arena may outlive it). Its items move, projected, to a fresh
 * "items" array, *items.
 */
static enum kerr start_list(const struct pager_opts *o, cJSON *page, cJSON **list, cJSON **items)
{
    cJSON *orig = cJSON_DetachItemFromObjectCaseSensitive(page, "items");
    enum kerr rc;

    *list = in_arena(o) ? cJSON_Duplicate(page, 1) : page;
    *items = *list ? cJSON_AddArrayToObject(*list, "items") : NULL;
    rc = *items ? take_items(o, orig, *items) : KERR_NOMEM;
    cJSON_Delete(orig); /* an arena's nodes too: cJSON's free skips them */
    return rc;
}

/* A later page: its items to the end of items, (a copy of) its resourceVersion to list's. */
static enum kerr add_page(const struct pager_opts *o, cJSON *list, cJSON *items, cJSON *page)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(list, "metadata");
    const char *rv = kjson_get_str(page, "metadata.resourceVersion");

    if (rv && cJSON_IsObject(meta)) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
        if (!cJSON_AddStringToObject(meta, "resourceVersion", rv))
            return KERR_NOMEM;
    }
    return take_items(o, cJSON_GetObjectItemCaseSensitive(page, "items"), items);
}

/* Remove metadata.continue (and remainingItemCount) from page; a copy when it was non-empty. */
static enum kerr take_continue(cJSON *page, char **out)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(page, "metadata");
    const char *cont = kjson_get_str(page, "metadata.continue");

    *out = cont && *cont ? strdup(cont) : NULL;
    if (cont && *cont && !*out)
        return KERR_NOMEM;
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "continue");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "remainingItemCount");
    return KERR_OK;
}

/* Take one page into *list (the first) or onto it, and its continue token. */
static enum kerr take_page(const struct pager_opts *o, cJSON **list, cJSON **items, cJSON *page,
                           char **token, struct kerr_info *err)
{
    enum kerr rc = take_continue(page, token);

    if (rc == KERR_OK && !*list)
        rc = start_list(o, page, list, items);
    else if (rc == KERR_OK)
        rc = add_page(o, *list, *items, page);
    if (page != *list)
        page_free(o, page);
    return rc == KERR_OK ? KERR_OK : kerr_set(err, rc, "list page: %s", kerr_str(rc));
}

/* Ask before the next page: KERR_OK to go on. */
static enum kerr go_on(const struct pager_opts *o, const struct k8s_resource *res, const char *prev,
                       const char *token, int pages, struct kerr_info *err)
{
    if ((prev && strcmp(prev, token) == 0) || pages > MAX_PAGES)
        return kerr_set(err, KERR_PARSE, "LIST %s: continue token does not advance", res->resource);
    if (o->stopped && o->stopped(o->stopped_arg))
        return kerr_set(err, KERR_CANCELLED, "list stopped");
    return KERR_OK;
}

/* Every page into *out; *gone is set when a continuation page (not the first) answered 410. */
static enum kerr list_pages(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                            const struct pager_opts *o, struct k8s_list_opts lo, cJSON **out,
                            int *gone, struct kerr_info *err)
{
    cJSON *list = NULL, *items = NULL, *page = NULL;
    char *token = NULL, *prev = NULL;
    enum kerr rc;
    int pages = 1;

    for (;;) {
        rc = k8s_list(c, res, ns, &lo, &page, err);
        *gone = rc == KERR_GONE && list;
        if (rc == KERR_OK)
            rc = take_page(o, &list, &items, page, &token, err);
        if (rc != KERR_OK || !token)
            break;
        rc = go_on(o, res, prev, token, ++pages, err);
        if (rc != KERR_OK)
            break;
        free(prev);
        prev = token;
        token = NULL;
        lo.continue_token = prev;
        lo.resource_version = NULL; /* a version with continue is a 400 */
        lo.resource_version_match = NULL;
    }
    free(prev);
    free(token);
    if (rc != KERR_OK)
        cJSON_Delete(list);
    else
        *out = list;
    return rc;
}

enum kerr pager_list_object(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                            const struct pager_opts *o, cJSON **out, struct kerr_info *err)
{
    struct k8s_list_opts lo = { .arena = in_arena(o),
                                .label_selector = o->label_selector,
                                .field_selector = o->field_selector,
                                .limit = o->limit > 0 ? o->limit : 0,
                                .resource_version = o->resource_version,
                                .resource_version_match = o->resource_version_match,
                                .timeout_seconds = o->timeout_seconds };
    int gone = 0;
    enum kerr rc;

    *out = NULL;
    rc = list_pages(c, res, ns, o, lo, out, &gone, err);
    if (rc == KERR_GONE && gone) {
        lo.limit = 0; /* the continue token expired: one full list, as client-go's pager */
        rc = list_pages(c, res, ns, o, lo, out, &gone, err);
    }
    return rc;
}

enum kerr pager_list(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                     const struct pager_opts *o, cJSON **items, char *rv, size_t rv_n,
                     struct kerr_info *err)
{
    cJSON *list = NULL;
    const char *s;
    enum kerr rc;

    *items = NULL;
    if (rv_n)
        rv[0] = '\0';
    rc = pager_list_object(c, res, ns, o, &list, err);
    if (rc != KERR_OK)
        return rc;
    s = kjson_get_str(list, "metadata.resourceVersion");
    snprintf(rv, rv_n, "%s", s ? s : "");
    *items = cJSON_DetachItemFromObjectCaseSensitive(list, "items");
    cJSON_Delete(list);
    return KERR_OK;
}
