#include "tests/kube-sim/review.h"

#include <stdio.h>
#include <string.h>

static int user_info(cJSON *to, const struct ksim_user *u)
{
    cJSON *ui = cJSON_AddObjectToObject(to, "userInfo"), *g;
    size_t i;

    if (!ui || !cJSON_AddStringToObject(ui, "username", u->name) ||
        (u->uid && *u->uid && !cJSON_AddStringToObject(ui, "uid", u->uid)) ||
        !(g = cJSON_AddArrayToObject(ui, "groups")))
        return -1;
    for (i = 0; i < u->ngroups; i++)
        if (!cJSON_AddItemToArray(g, cJSON_CreateString(u->groups[i])))
            return -1;
    return 0;
}

int ksim_review_is(const struct ksim_rtype *rt)
{
    return !rt->custom && (strcmp(rt->group, "authentication.k8s.io") == 0 ||
                           strcmp(rt->group, "authorization.k8s.io") == 0);
}

int ksim_review_answer(const struct ksim_rtype *rt, const struct ksim_user *user, cJSON *body,
                       cJSON **out, struct ksim_apierr *e)
{
    cJSON *status;
    char gv[128];
    int rc;

    *out = NULL;
    snprintf(gv, sizeof(gv), "%s/%s", rt->group, rt->version);
    cJSON_DeleteItemFromObjectCaseSensitive(body, "status");
    cJSON_DeleteItemFromObjectCaseSensitive(body, "apiVersion");
    cJSON_DeleteItemFromObjectCaseSensitive(body, "kind");
    status = cJSON_AddObjectToObject(body, "status");
    if (strcmp(rt->plural, "selfsubjectreviews") == 0)
        rc = status ? user_info(status, user) : -1;
    else
        rc = status && cJSON_AddTrueToObject(status, "allowed") &&
                     cJSON_AddStringToObject(status, "reason", "kube-sim has no RBAC")
                 ? 0
                 : -1;
    if (rc != 0 || !cJSON_AddStringToObject(body, "apiVersion", gv) ||
        !cJSON_AddStringToObject(body, "kind", rt->kind)) {
        cJSON_Delete(body);
        return ksim_apierr_internal(e, "out of memory");
    }
    *out = body;
    return 201;
}
