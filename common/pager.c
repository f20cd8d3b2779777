/* pager - see pager.h. */
#include "common/pager.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"

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

/* Move the projected items of page to items; copy its resourceVersion and continue token. */
static enum kerr take_page(const struct pager_opts *o, cJSON *page, cJSON *items, char *rv,
                           size_t rv_n, char **cont)
{
    cJSON *list = cJSON_GetObjectItemCaseSensitive(page, "items"), *item, *proj;
    const char *s;
    enum kerr rc;

    while ((item = cJSON_DetachItemFromArray(list, 0))) {
        rc = project(o, item, &proj);
        if (rc != KERR_OK)
            return rc;
        if (!cJSON_AddItemToArray(items, proj)) {
            cJSON_Delete(proj);
            return KERR_NOMEM;
        }
    }
    s = kjson_get_str(page, "metadata.resourceVersion");
    snprintf(rv, rv_n, "%s", s ? s : "");
    s = kjson_get_str(page, "metadata.continue");
    *cont = s && *s ? strdup(s) : NULL;
    return s && *s && !*cont ? KERR_NOMEM : KERR_OK;
}

/* Every page into items. */
static enum kerr list_pages(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                            const struct pager_opts *o, cJSON *items, char *rv, size_t rv_n,
                            struct kerr_info *err)
{
    struct k8s_list_opts lo = { 0 };
    char *cont = NULL;
    cJSON *page = NULL;
    enum kerr rc;

    lo.label_selector = o->label_selector;
    lo.field_selector = o->field_selector;
    lo.limit = o->limit > 0 ? o->limit : 0;
    for (;;) {
        lo.continue_token = cont;
        rc = k8s_list(c, res, ns, &lo, &page, err);
        if (rc == KERR_GONE && cont && lo.limit) {
            /* The continue token expired: start over in one piece, as client-go's pager. */
            while (cJSON_GetArraySize(items) > 0)
                cJSON_DeleteItemFromArray(items, 0);
            free(cont);
            cont = NULL;
            lo.limit = 0;
            continue;
        }
        free(cont);
        cont = NULL;
        if (rc != KERR_OK)
            return rc;
        rc = take_page(o, page, items, rv, rv_n, &cont);
        cJSON_Delete(page);
        if (rc != KERR_OK)
            return kerr_set(err, rc, "list page: %s", kerr_str(rc));
        if (!cont)
            return KERR_OK;
        if (o->stopped && o->stopped(o->stopped_arg)) {
            free(cont);
            return kerr_set(err, KERR_CANCELLED, "list stopped");
        }
    }
}

enum kerr pager_list(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                     const struct pager_opts *o, cJSON **items, char *rv, size_t rv_n,
                     struct kerr_info *err)
{
    cJSON *all = cJSON_CreateArray();
    enum kerr rc;

    *items = NULL;
    if (rv_n)
        rv[0] = '\0';
    if (!all)
        return kerr_set(err, KERR_NOMEM, "out of memory");
    rc = list_pages(c, res, ns, o, all, rv, rv_n, err);
    if (rc != KERR_OK) {
        cJSON_Delete(all);
        return rc;
    }
    *items = all;
    return KERR_OK;
}
