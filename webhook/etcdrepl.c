/* etcdrepl - etcd-druid's rule on an Etcd's spec.replicas; see etcdrepl.h. */
#include "webhook/etcdrepl.h"

#include <stdint.h>
#include <string.h>

#include "webhook/member.h"

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
    int scale = member_is_kind(req, "autoscaling", "Scale");
    int64_t from, to;
    enum kerr rc;

    if (req->op != REVIEW_OP_UPDATE || member_replicas(req->old_object, scale, &from) != KERR_OK ||
        member_replicas(req->object, scale, &to) != KERR_OK || to == 0 || to >= from)
        rc = review_allow(resp, "spec.replicas of Etcd %s/%s not lowered to a value above 0",
                          req->namespace, req->name);
    else
        rc = refuse(req, resp);
    if (rc)
        kerr_set(err, rc, "building the admission response");
    return rc;
}
