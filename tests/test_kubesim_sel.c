#include "tests/kube-sim/fsel.h"
#include "tests/kube-sim/sel.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static cJSON *labels(const char *json)
{
    cJSON *l = cJSON_ParseWithLengthOpts(json, strlen(json), NULL, 0);

    cr_assert_not_null(l, "bad test JSON %s", json);
    return l;
}

static int match(const char *selector, const char *json)
{
    struct ksim_sel *sel = NULL;
    struct kerr_info err;
    cJSON *l = labels(json);
    int m;

    cr_assert_eq(ksim_sel_parse(selector, &sel, &err), KERR_OK, "%s: %s", selector, err.msg);
    m = ksim_sel_matches(sel, l);
    ksim_sel_free(sel);
    cJSON_Delete(l);
    return m;
}

Test(kubesim_sel, equality_forms)
{
    cr_assert(match("app=web", "{\"app\":\"web\"}"));
    cr_assert(match("app==web", "{\"app\":\"web\"}"));
    cr_assert_not(match("app=web", "{\"app\":\"db\"}"));
    cr_assert_not(match("app=web", "{}"));
    cr_assert(match("app!=web", "{\"app\":\"db\"}"));
    cr_assert(match("app!=web", "{}"), "!= matches an absent key, as labels.Parse does");
    cr_assert_not(match("app!=web", "{\"app\":\"web\"}"));
    cr_assert(match("app=", "{\"app\":\"\"}"));
}

Test(kubesim_sel, set_forms)
{
    cr_assert(match("env in (prod, staging)", "{\"env\":\"staging\"}"));
    cr_assert_not(match("env in (prod,staging)", "{\"env\":\"dev\"}"));
    cr_assert_not(match("env in (prod)", "{}"));
    cr_assert(match("env notin (prod)", "{\"env\":\"dev\"}"));
    cr_assert(match("env notin (prod)", "{}"));
    cr_assert_not(match("env notin (prod,dev)", "{\"env\":\"dev\"}"));
}

Test(kubesim_sel, exists_and_not_exists)
{
    cr_assert(match("tier", "{\"tier\":\"x\"}"));
    cr_assert_not(match("tier", "{}"));
    cr_assert(match("!tier", "{}"));
    cr_assert_not(match("!tier", "{\"tier\":\"\"}"));
}

Test(kubesim_sel, conjunction_and_prefixed_keys)
{
    const char *l = "{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/"
                    "part-of\":\"main\",\"x\":\"1\"}";

    cr_assert(match("app.kubernetes.io/managed-by=etcd-druid,app.kubernetes.io/part-of in "
                    "(main,other),!missing",
                    l));
    cr_assert_not(match("app.kubernetes.io/managed-by=etcd-druid,x!=1", l));
    cr_assert(match("x>0,x<2", l));
    cr_assert_not(match("x>1", l));
}

Test(kubesim_sel, empty_selects_everything)
{
    struct ksim_sel *sel = NULL;

    cr_assert_eq(ksim_sel_parse("", &sel, NULL), KERR_OK);
    cr_assert(ksim_sel_is_everything(sel));
    cr_assert(ksim_sel_matches(sel, NULL));
    ksim_sel_free(sel);
}

Test(kubesim_sel, syntax_errors)
{
    const char *bad[] = { "a in ()", "a in (x", "=x",  "a=b,", "a b",
                          "a==b==c", "-a=b",    "a>x", "a/=b", "a in x" };
    struct ksim_sel *sel = NULL;
    struct kerr_info err;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_expect_eq(ksim_sel_parse(bad[i], &sel, &err), KERR_PARSE, "accepted: %s", bad[i]);
        cr_expect_null(sel);
        cr_expect_not_null(strstr(err.msg, "unable to parse requirement"), "%s: %s", bad[i],
                           err.msg);
    }
}

Test(kubesim_sel, label_selector_json)
{
    cJSON *js = labels("{\"matchLabels\":{\"app\":\"web\"},\"matchExpressions\":[{\"key\":"
                       "\"env\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]},{\"key\":\"x\","
                       "\"operator\":\"DoesNotExist\"}]}");
    cJSON *yes = labels("{\"app\":\"web\",\"env\":\"b\"}");
    cJSON *no = labels("{\"app\":\"web\",\"env\":\"b\",\"x\":\"1\"}");
    struct ksim_sel *sel = NULL;
    struct buf b;

    cr_assert_eq(ksim_sel_from_json(js, 1, &sel, NULL), KERR_OK);
    cr_assert(ksim_sel_matches(sel, yes));
    cr_assert_not(ksim_sel_matches(sel, no));
    buf_init(&b, 1024);
    cr_assert_eq(ksim_sel_to_string(sel, &b), KERR_OK);
    cr_assert_str_eq(buf_str(&b), "app=web,env in (a,b),!x");
    buf_release(&b);
    ksim_sel_free(sel);
    cJSON_Delete(js);
    cJSON_Delete(yes);
    cJSON_Delete(no);
}

Test(kubesim_sel, nil_and_empty_label_selector)
{
    cJSON *empty = labels("{}");
    cJSON *l = labels("{\"a\":\"b\"}");
    struct ksim_sel *sel = NULL;

    cr_assert_eq(ksim_sel_from_json(NULL, 1, &sel, NULL), KERR_OK);
    cr_assert_not(ksim_sel_matches(sel, l), "a nil selector matches nothing");
    ksim_sel_free(sel);
    cr_assert_eq(ksim_sel_from_json(NULL, 0, &sel, NULL), KERR_OK);
    cr_assert(ksim_sel_matches(sel, l), "webhook selectors default to everything");
    ksim_sel_free(sel);
    cr_assert_eq(ksim_sel_from_json(empty, 1, &sel, NULL), KERR_OK);
    cr_assert(ksim_sel_matches(sel, l));
    ksim_sel_free(sel);
    cJSON_Delete(empty);
    cJSON_Delete(l);
}

Test(kubesim_sel, bad_operator_in_json)
{
    cJSON *js = labels("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Gt\"}]}");
    struct ksim_sel *sel = NULL;

    cr_assert_eq(ksim_sel_from_json(js, 1, &sel, NULL), KERR_PARSE);
    cr_assert_null(sel);
    cJSON_Delete(js);
}

Test(kubesim_sel, field_selectors)
{
    cJSON *obj = labels("{\"metadata\":{\"name\":\"a,b\",\"namespace\":\"ns1\"},\"spec\":{"
                        "\"replicas\":3,\"paused\":false}}");
    struct ksim_fsel *fs = NULL;
    struct kerr_info err;

    cr_assert_eq(ksim_fsel_parse("metadata.name=a\\,b,metadata.namespace!=x", &fs, &err), KERR_OK,
                 "%s", err.msg);
    cr_assert_eq(fs->n, 2);
    cr_assert(ksim_fsel_matches(fs, obj));
    ksim_fsel_free(fs);
    cr_assert_eq(ksim_fsel_parse("metadata.namespace==ns2", &fs, NULL), KERR_OK);
    cr_assert_not(ksim_fsel_matches(fs, obj));
    ksim_fsel_free(fs);
    cr_assert_eq(ksim_fsel_parse("spec.replicas=3,spec.paused=false", &fs, NULL), KERR_OK);
    cr_assert(ksim_fsel_matches(fs, obj));
    ksim_fsel_free(fs);
    cr_assert_eq(ksim_fsel_parse("metadata.name", &fs, NULL), KERR_PARSE);
    cr_assert_eq(ksim_fsel_parse("=x", &fs, NULL), KERR_PARSE);
    cJSON_Delete(obj);
}
