/* lsel: label selectors matched as the API server matches them, failing closed. */
#include <criterion/criterion.h>

#include "common/lsel.h"

static int m(const char *sel, const char *labels)
{
    cJSON *s = cJSON_Parse(sel), *l = labels ? cJSON_Parse(labels) : NULL;
    struct kerr_info err = { 0 };
    int r = -1, match = 0;

    if (lsel_match(s, l, &match, &err) == KERR_OK)
        r = match;
    cJSON_Delete(s);
    cJSON_Delete(l);
    return r;
}

Test(lsel, match_labels)
{
    cr_expect_eq(m("{}", "{\"a\":\"1\"}"), 1, "the empty selector selects everything");
    cr_expect_eq(m("{}", NULL), 1);
    cr_expect_eq(m("{\"matchLabels\":{\"a\":\"1\"}}", "{\"a\":\"1\",\"b\":\"2\"}"), 1);
    cr_expect_eq(m("{\"matchLabels\":{\"a\":\"1\"}}", "{\"a\":\"2\"}"), 0);
    cr_expect_eq(m("{\"matchLabels\":{\"a\":\"1\"}}", NULL), 0);
    cr_expect_eq(m("{\"matchLabels\":{\"a\":\"1\",\"b\":\"2\"}}", "{\"a\":\"1\"}"), 0);
}

Test(lsel, match_expressions)
{
    const char *in = "{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"In\","
                     "\"values\":[\"x\",\"y\"]}]}";
    const char *notin = "{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"NotIn\","
                        "\"values\":[\"x\"]}]}";
    const char *ex = "{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"Exists\"}]}";
    const char *dne = "{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"DoesNotExist\"}]}";

    cr_expect_eq(m(in, "{\"t\":\"y\"}"), 1);
    cr_expect_eq(m(in, "{\"t\":\"z\"}"), 0);
    cr_expect_eq(m(in, "{}"), 0);
    cr_expect_eq(m(notin, "{\"t\":\"z\"}"), 1);
    cr_expect_eq(m(notin, "{}"), 1, "NotIn holds for an absent label, as in Kubernetes");
    cr_expect_eq(m(notin, "{\"t\":\"x\"}"), 0);
    cr_expect_eq(m(ex, "{\"t\":\"\"}"), 1);
    cr_expect_eq(m(ex, "{}"), 0);
    cr_expect_eq(m(dne, "{}"), 1);
    cr_expect_eq(m(dne, "{\"t\":\"1\"}"), 0);
}

Test(lsel, what_is_no_selector_is_refused)
{
    cr_expect_eq(m("[]", "{}"), -1);
    cr_expect_eq(m("{\"matchLabels\":[]}", "{}"), -1);
    cr_expect_eq(m("{\"matchLabels\":{\"a\":1}}", "{\"a\":\"1\"}"), -1);
    cr_expect_eq(m("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"in\","
                   "\"values\":[\"x\"]}]}",
                   "{\"t\":\"x\"}"),
                 -1, "operators are case-sensitive");
    cr_expect_eq(m("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"In\"}]}", "{}"), -1);
    cr_expect_eq(m("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"Exists\","
                   "\"values\":[\"x\"]}]}",
                   "{\"t\":\"x\"}"),
                 -1);
    cr_expect_eq(m("{\"matchExpressions\":[{\"operator\":\"Exists\"}]}", "{}"), -1);
    cr_expect_eq(m("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"In\","
                   "\"values\":[1]}]}",
                   "{}"),
                 -1);
}
