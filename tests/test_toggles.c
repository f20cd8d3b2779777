/* toggles: careless values of the Etcd annotations users set are refused, with what to do. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "webhook/toggles.h"

static cJSON *etcd(const char *hibernate, const char *reason)
{
    char text[512];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"main\",\"annotations\":{%s%s%s%s%s%s%s"
             "}},\"spec\":{}}",
             hibernate ? "\"etcd-warden.io/hibernate\":\"" : "", hibernate ? hibernate : "",
             hibernate ? "\"" : "", hibernate && reason ? "," : "",
             reason ? "\"etcd-warden.io/allow-scale-down-without-snapshot\":\"" : "",
             reason ? reason : "", reason ? "\"" : "");
    return cJSON_Parse(text);
}

/* The verdict: "" allowed, else the message. obj and old TAKEN. */
static const char *decide(enum review_op op, cJSON *obj, cJSON *old)
{
    static char msg[1024];
    struct review_req req;
    struct review_resp resp;

    cr_assert_not_null(obj);
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = op;
    req.object = obj;
    req.old_object = old;
    cr_assert_eq(toggles_decide(&req, &resp, NULL), KERR_OK);
    snprintf(msg, sizeof(msg), "%s", resp.allowed ? "" : resp.message);
    if (!resp.allowed)
        cr_assert_eq(resp.code, 403);
    review_resp_release(&resp);
    cJSON_Delete(obj);
    cJSON_Delete(old);
    return msg;
}

Test(toggles, hibernate_is_true_or_false)
{
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd("true", NULL), etcd(NULL, NULL)), "");
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd("false", NULL), etcd("true", NULL)), "");
    cr_expect_str_eq(decide(REVIEW_OP_CREATE, etcd("true", NULL), NULL), "");
    cr_expect(strstr(decide(REVIEW_OP_UPDATE, etcd("yes", NULL), etcd(NULL, NULL)),
                     "\"yes\" is neither \"true\" (hibernate) nor \"false\""));
    cr_expect_neq(*decide(REVIEW_OP_UPDATE, etcd("True", NULL), etcd(NULL, NULL)), '\0');
    cr_expect_neq(*decide(REVIEW_OP_CREATE, etcd("1", NULL), NULL), '\0');
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd("yes", NULL), etcd("yes", NULL)), "",
                     "a value stored before the rule is not disrupted");
    cr_expect_str_eq(decide(REVIEW_OP_DELETE, etcd("yes", NULL), NULL), "");
}

Test(toggles, break_glass_needs_a_reason)
{
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd(NULL, "bucket lost"), etcd(NULL, NULL)), "");
    cr_expect(strstr(decide(REVIEW_OP_UPDATE, etcd(NULL, ""), etcd(NULL, NULL)), "say why"));
    cr_expect_neq(*decide(REVIEW_OP_UPDATE, etcd(NULL, "  "), etcd(NULL, NULL)), '\0');
    cr_expect_neq(*decide(REVIEW_OP_UPDATE, etcd("true", ""), etcd("true", "x")), '\0');
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd(NULL, ""), etcd(NULL, "")), "");
}
