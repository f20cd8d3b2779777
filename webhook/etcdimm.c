/* etcdimm - etcd-druid's immutable Etcd fields; see etcdimm.h. */
#include "webhook/etcdimm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/kjson.h"

/* A field and the messages of its two rules, verbatim from etcd-druid's CRD. */
struct rule {
    const char *field;
    const char *changed;  /* on the field: self == oldSelf */
    const char *presence; /* on spec: has(oldSelf.F) == has(self.F) */
};

static const struct rule rules[] = {
    { "memberNamePrefix", "etcd.spec.memberNamePrefix is an immutable field",
      "etcd.spec.memberNamePrefix is an immutable field." },
    { "storageClass", "etcd.spec.storageClass is an immutable field",
      "etcd.spec.storageClass is an immutable field." },
    { "volumeClaimTemplate", "etcd.spec.VolumeClaimTemplate is an immutable field",
      "etcd.spec.volumeClaimTemplate is an immutable field." },
};

#define NRULES  (sizeof(rules) / sizeof(rules[0]))
#define MSG_MAX 4096

/*
 * One cause of a broken rule, as apiextensions-apiserver's CEL validation
 * builds it (field.Invalid(path, <the schema type>, <the rule's message>)):
 * appended to causes, and "<field>: <detail>" to msg. 0 when out of memory.
 */
static int add_cause(cJSON *causes, struct buf *msg, const char *field, const char *type,
                     const char *text)
{
    char *detail = buf_dupf(MSG_MAX, "Invalid value: \"%s\": %s", type, text);
    cJSON *c = cJSON_CreateObject();
    int ok = detail && c && cJSON_AddItemToArray(causes, c);

    if (!ok)
        cJSON_Delete(c);
    ok = ok && cJSON_AddStringToObject(c, "reason", "FieldValueInvalid") &&
         cJSON_AddStringToObject(c, "message", detail) &&
         cJSON_AddStringToObject(c, "field", field) &&
         buf_appendf(msg, "%s%s: %s", msg->len ? ", " : "", field, detail) == KERR_OK;
    free(detail);
    return ok;
}

/* The causes of the rules old -> cur breaks, in causes and msg; their count, -1 on NOMEM. */
static int check(const cJSON *old, const cJSON *cur, cJSON *causes, struct buf *msg)
{
    const cJSON *a, *b;
    char path[64];
    size_t i;
    int n = 0;

    /* the rules on spec first, as the validator runs a node's rules before its fields' */
    for (i = 0; i < NRULES; i++) {
        a = cJSON_GetObjectItemCaseSensitive(old, rules[i].field);
        b = cJSON_GetObjectItemCaseSensitive(cur, rules[i].field);
        if (!a != !b) {
            if (!add_cause(causes, msg, "spec", "object", rules[i].presence))
                return -1;
            n++;
        }
    }
    for (i = 0; i < NRULES; i++) {
        a = cJSON_GetObjectItemCaseSensitive(old, rules[i].field);
        b = cJSON_GetObjectItemCaseSensitive(cur, rules[i].field);
        if (!a || !b || cJSON_Compare(a, b, 1))
            continue;
        snprintf(path, sizeof(path), "spec.%s", rules[i].field);
        if (!add_cause(causes, msg, path, "string", rules[i].changed))
            return -1;
        n++;
    }
    return n;
}

enum kerr etcdimm_decide(const struct review_req *req, struct review_resp *resp,
                         struct kerr_info *err)
{
    const cJSON *old = kjson_get(req->old_object, "spec"), *cur = kjson_get(req->object, "spec");
    cJSON *details = NULL, *causes;
    struct buf msg;
    enum kerr rc = KERR_NOMEM;
    int n = 0;

    buf_init(&msg, MSG_MAX);
    if (req->op != REVIEW_OP_UPDATE || strcmp(req->kind_kind, "Etcd") != 0 ||
        !cJSON_IsObject(old) || !cJSON_IsObject(cur)) {
        rc =
            review_allow(resp, "Etcd %s/%s: no immutable field changed", req->namespace, req->name);
    } else if ((details = cJSON_CreateObject()) &&
               cJSON_AddStringToObject(details, "name", req->name) &&
               cJSON_AddStringToObject(details, "group", "druid.gardener.cloud") &&
               cJSON_AddStringToObject(details, "kind", "Etcd") &&
               (causes = cJSON_AddArrayToObject(details, "causes")) &&
               (n = check(old, cur, causes, &msg)) == 0) {
        rc =
            review_allow(resp, "Etcd %s/%s: no immutable field changed", req->namespace, req->name);
    } else if (n > 0) {
        rc = review_invalid(resp, details, "Etcd.druid.gardener.cloud \"%s\" is invalid: %s%s%s",
                            req->name, n > 1 ? "[" : "", buf_str(&msg), n > 1 ? "]" : "");
    }
    cJSON_Delete(details);
    buf_release(&msg);
    if (rc)
        kerr_set(err, rc, "building the admission response");
    return rc;
}
