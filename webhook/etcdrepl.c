/* etcdrepl - etcd-druid's rule on an Etcd's spec.replicas; see etcdrepl.h. */
#include "webhook/etcdrepl.h"

#include <stdint.h>
#include <string.h>

#include "common/kjson.h"

/*
 * spec.replicas of obj: *r and 1, or 0 when it is absent (a Scale: 0, the
 * field is omitted when empty) or not a number.
 */
static int replicas_of(const cJSON *obj, int scale, int64_t *r)
{
    enum kerr rc = kjson_get_int64(obj, "spec.replicas", r);

    if (rc == KERR_NOTFOUND && scale && cJSON_IsObject(obj)) {
        *r = 0;
        return 1;
    }
    return rc == KERR_OK;
}

/*
 * Refuse as kube-apiserver refuses the Etcd when the CRD's rule fails: the
 * field error field.Invalid(spec.replicas, <the schema type>, <the rule's
 * message>), as apiextensions-apiserver's CEL validation builds it, in an
 * Invalid status for the Etcd (a Scale is validated as its Etcd).
 */
static enum kerr refuse(const struct review_req *req, struct review_resp *resp)
{
    cJSON *details = cJSON_CreateObject(), *cause;
    enum kerr rc = KERR_NOMEM;

    if (details && cJSON_AddStringToObject(details, "name", req->name) &&
        cJSON_AddStringToObject(details, "group", "druid.gardener.cloud") &&
        cJSON_AddStringToObject(details, "kind", "Etcd") && (cause = cJSON_CreateObject()) &&
        cJSON_AddItemToArray(cJSON_AddArrayToObject(details, "causes"), cause) &&
        cJSON_AddStringToObject(cause, "reason", "FieldValueInvalid") &&
        cJSON_AddStringToObject(cause, "message", ETCDREPL_DETAIL) &&
        cJSON_AddStringToObject(cause, "field", "spec.replicas"))
        rc = review_invalid(
            resp, details,
            "Etcd.druid.gardener.cloud \"%s\" is invalid: spec.replicas: " ETCDREPL_DETAIL,
            req->name);
    cJSON_Delete(details);
    return rc;
}

enum kerr etcdrepl_decide(const struct review_req *req, struct review_resp *resp,
                          struct kerr_info *err)
{
    int scale = strcmp(req->kind_group, "autoscaling") == 0 && strcmp(req->kind_kind, "Scale") == 0;
    int64_t from, to;
    enum kerr rc;

    if (req->op != REVIEW_OP_UPDATE || !replicas_of(req->old_object, scale, &from) ||
        !replicas_of(req->object, scale, &to) || to == 0 || to >= from)
        rc = review_allow(resp, "spec.replicas of Etcd %s/%s not lowered to a value above 0",
                          req->namespace, req->name);
    else
        rc = refuse(req, resp);
    if (rc)
        kerr_set(err, rc, "building the admission response");
    return rc;
}
