/* kube-sim's metadata validation against kube-apiserver's rules and messages: subdomains of 253
 * with parts longer than 63, DNS labels for Namespaces and Services, CronJob names to 52, label
 * keys and values, annotation keys and total size; the 422 as kube-apiserver words it. And the
 * volumes and volume mounts of a Pod's spec, every error in kube-apiserver's order. */
#include "tests/kube-sim/validate.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kube-sim/podval.h"
#include "tests/support/jsonfix.h"

static char why[1024];

static char *rep(char c, size_t n)
{
    char *s = malloc(n + 1);

    cr_assert_not_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

Test(kubesim_validate, subdomains_and_labels)
{
    char *a64 = rep('a', 64), *a253 = rep('a', 253), *a254 = rep('a', 254);

    cr_assert(ksim_valid_subdomain(a64, why, sizeof(why)), "one part may exceed 63: %s", why);
    cr_assert(ksim_valid_subdomain(a253, why, sizeof(why)));
    cr_assert_not(ksim_valid_subdomain(a254, why, sizeof(why)));
    cr_assert_str_eq(why, "must be no more than 253 bytes");
    cr_assert_not(ksim_valid_subdomain("a..b", why, sizeof(why)));
    cr_assert(strstr(why, "a lowercase RFC 1123 subdomain must consist of"), "%s", why);
    cr_assert_not(ksim_valid_subdomain("a-.b", why, sizeof(why)));
    cr_assert_not(ksim_valid_subdomain("Main", why, sizeof(why)));
    cr_assert_not(ksim_valid_dns1123_label(a64, why, sizeof(why)));
    cr_assert_str_eq(why, "must be no more than 63 bytes");
    cr_assert_not(ksim_valid_dns1035_label("1abc", why, sizeof(why)));
    cr_assert(strstr(why, "a DNS-1035 label must consist"), "%s", why);
    cr_assert(ksim_valid_dns1123_label("1abc", why, sizeof(why)));

    cr_assert(ksim_valid_label_value("", why, sizeof(why)));
    cr_assert(ksim_valid_label_value("My_value.1", why, sizeof(why)));
    cr_assert_not(ksim_valid_label_value(a64, why, sizeof(why)));
    cr_assert_str_eq(why, "must be no more than 63 bytes");
    cr_assert_not(ksim_valid_label_value("-x", why, sizeof(why)));
    cr_assert_str_eq(why, "a valid label must be an empty string or consist of alphanumeric "
                          "characters, '-', '_' or '.', and must start and end with an "
                          "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                          "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
                          "[A-Za-z0-9])?')");

    cr_assert(ksim_valid_qualified_name("etcd-warden.io/task", why, sizeof(why)));
    cr_assert(ksim_valid_qualified_name("app", why, sizeof(why)));
    cr_assert_not(ksim_valid_qualified_name("/x", why, sizeof(why)));
    cr_assert_str_eq(why, "prefix part must be non-empty");
    cr_assert_not(ksim_valid_qualified_name("Ex.com/x", why, sizeof(why)));
    cr_assert(strncmp(why, "prefix part a lowercase RFC 1123 subdomain", 42) == 0, "%s", why);
    cr_assert_not(ksim_valid_qualified_name("a/b/c", why, sizeof(why)));
    cr_assert(strncmp(why, "a qualified name must consist", 29) == 0, "%s", why);
    cr_assert_not(ksim_valid_qualified_name("a/", why, sizeof(why)));
    cr_assert_str_eq(why, "name part must be non-empty");
    a64[0] = 'x';
    cr_assert_not(ksim_valid_qualified_name(a64, why, sizeof(why)));
    cr_assert_str_eq(why, "name part must be no more than 63 bytes");
    free(a64);
    free(a253);
    free(a254);
}

static char g_batch[] = "batch", g_core[] = "", p_cj[] = "cronjobs", k_cj[] = "CronJob",
            p_svc[] = "services", k_svc[] = "Service", p_cm[] = "configmaps", k_cm[] = "ConfigMap";

static struct ksim_rtype rt_of(char *group, char *plural, char *kind)
{
    struct ksim_rtype rt;

    memset(&rt, 0, sizeof(rt));
    rt.group = group;
    rt.plural = plural;
    rt.kind = kind;
    return rt;
}

Test(kubesim_validate, objects_answered_as_kube_apiserver)
{
    struct ksim_rtype cj = rt_of(g_batch, p_cj, k_cj), svc = rt_of(g_core, p_svc, k_svc),
                      cm = rt_of(g_core, p_cm, k_cm);
    struct ksim_apierr e;
    cJSON *o;
    char *big, *text;
    size_t n;

    ksim_apierr_clear(&e);
    o = jsonfix_parse(
        "{\"metadata\":{\"name\":\"a-rather-long-etcd-name-of-fifty-three-characters-xyz\"}}");
    cr_assert_eq(ksim_validate_meta(&cj, o, &e), 422);
    cr_assert_str_eq(e.message,
                     "CronJob.batch \"a-rather-long-etcd-name-of-fifty-three-characters-xyz\" "
                     "is invalid: metadata.name: Invalid value: \"a-rather-long-etcd-"
                     "name-of-fifty-three-characters-xyz\": must be no more than 52 "
                     "characters");
    cr_assert_eq(ksim_validate_meta(&cm, o, &e), 0);
    cJSON_Delete(o);

    o = jsonfix_parse("{\"metadata\":{\"name\":\"x\",\"labels\":{\"etcd-warden.io/task\":"
                      "\"a-rather-long-etcd-name-of-44-characters-xyz-extend-immutability\"}}}");
    cr_assert_eq(ksim_validate_meta(&cm, o, &e), 422);
    cr_assert_str_eq(e.message, "ConfigMap \"x\" is invalid: metadata.labels: Invalid value: "
                                "\"a-rather-long-etcd-name-of-44-characters-xyz-extend-"
                                "immutability\": must be no more than 63 bytes");
    cr_assert_str_eq(e.field, "metadata.labels");
    cJSON_Delete(o);
    o = jsonfix_parse("{\"metadata\":{\"name\":\"x\",\"labels\":{\"bad key\":\"v\"}}}");
    cr_assert_eq(ksim_validate_meta(&cm, o, &e), 422);
    cr_assert(strstr(e.message, "metadata.labels: Invalid value: \"bad key\": name part must "),
              "%s", e.message);
    cJSON_Delete(o);
    o = jsonfix_parse("{\"metadata\":{\"name\":\"x\",\"annotations\":{\"Ex.COM/K\":\"v\"}}}");
    cr_assert_eq(ksim_validate_meta(&cm, o, &e), 0, "annotation keys are checked lower-cased");
    cJSON_Delete(o);

    n = KSIM_ANNOTATIONS_MAX;
    big = rep('v', n);
    text = malloc(n + 100);
    cr_assert_not_null(text);
    snprintf(text, n + 100, "{\"metadata\":{\"name\":\"x\",\"annotations\":{\"k\":\"%s\"}}}", big);
    o = jsonfix_parse(text);
    cr_assert_eq(ksim_validate_meta(&cm, o, &e), 422);
    cr_assert_str_eq(e.message, "ConfigMap \"x\" is invalid: metadata.annotations: Too long: may "
                                "not be more than 262144 bytes");
    cJSON_Delete(o);
    free(big);
    free(text);

    cr_assert_eq(ksim_validate_name(&svc, "etcd-main-client", &e), 0);
    cr_assert_eq(ksim_validate_name(&svc, "1-client", &e), 422);
    cr_assert_eq(ksim_validate_name(&cm, "a.b", &e), 0);
}

Test(kubesim_validate, pod_volumes_and_mounts)
{
    struct ksim_fielderr errs[KSIM_PODVAL_MAX];
    cJSON *spec = jsonfix_parse(
        "{\"volumes\":[{\"name\":\"x\"},{\"name\":\"x\"},{\"name\":\"Bad\"},{}],"
        "\"initContainers\":[{\"name\":\"i\",\"volumeMounts\":[{\"name\":\"Bad\","
        "\"mountPath\":\"/b\"}]}],"
        "\"containers\":[{\"name\":\"c\",\"volumeMounts\":[{\"name\":\"x\",\"mountPath\":"
        "\"/a\"},{\"mountPath\":\"/a\"},{\"name\":\"x\"}]},{\"name\":\"d\",\"volumeMounts\":"
        "[{\"name\":\"x\",\"mountPath\":\"/a\"}]}]}");
    const char *want[][2] = {
        { "spec.volumes[1].name", "Duplicate value: \"x\"" },
        { "spec.volumes[2].name", "Invalid value: \"Bad\": a lowercase RFC 1123 label must" },
        { "spec.volumes[3].name", "Required value" },
        { "spec.containers[0].volumeMounts[1].name", "Required value" },
        { "spec.containers[0].volumeMounts[1].name", "Not found: \"\"" },
        { "spec.containers[0].volumeMounts[1].mountPath", "Invalid value: \"/a\": must be unique" },
        { "spec.containers[0].volumeMounts[2].mountPath", "Required value" },
        { "spec.initContainers[0].volumeMounts[0].name", "Not found: \"Bad\"" },
    };
    size_t i, n = ksim_podval_spec(spec, "spec", errs, KSIM_PODVAL_MAX);

    cr_assert_eq(n, sizeof(want) / sizeof(want[0]));
    for (i = 0; i < n; i++) {
        cr_assert_str_eq(errs[i].field, want[i][0], "error %zu", i);
        cr_assert(strncmp(errs[i].body, want[i][1], strlen(want[i][1])) == 0, "error %zu: %s", i,
                  errs[i].body);
    }
    cr_assert_str_eq(errs[0].reason, "FieldValueDuplicate");
    cr_assert_str_eq(errs[4].reason, "FieldValueNotFound");
    cr_assert_str_eq(errs[5].reason, "FieldValueInvalid");
    cr_assert_str_eq(errs[6].reason, "FieldValueRequired");
    cr_assert_eq(ksim_podval_spec(spec, "spec", errs, 2), n, "errors past max are counted");
    cJSON_Delete(spec);

    spec = jsonfix_parse("{\"volumes\":[{\"name\":\"x\"},{\"name\":\"y\"}],\"containers\":["
                         "{\"name\":\"c\",\"volumeMounts\":[{\"name\":\"x\",\"mountPath\":"
                         "\"/a\"},{\"name\":\"x\",\"mountPath\":\"/b\"}]}]}");
    cr_assert_eq(ksim_podval_spec(spec, "spec", errs, KSIM_PODVAL_MAX), 0);
    cJSON_Delete(spec);
    cr_assert_eq(ksim_podval_spec(NULL, "spec", errs, KSIM_PODVAL_MAX), 0);
}

Test(kubesim_validate, pod_errors_answered_together)
{
    static char g_core2[] = "", p_pods[] = "pods", k_pod[] = "Pod";
    struct ksim_rtype pod = rt_of(g_core2, p_pods, k_pod);
    struct ksim_apierr e;
    cJSON *o = jsonfix_parse(
        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"volumes\":[{\"name\":\"x\"},{\"name\":"
        "\"x\"}],\"containers\":[{\"name\":\"c\",\"volumeMounts\":[{\"name\":\"z\","
        "\"mountPath\":\"/a\"}]}]}}");

    ksim_apierr_clear(&e);
    cr_assert_eq(ksim_podval_validate(&pod, o, &e), 422);
    cr_assert_str_eq(e.message, "Pod \"p\" is invalid: [spec.volumes[1].name: Duplicate value: "
                                "\"x\", spec.containers[0].volumeMounts[0].name: Not found: "
                                "\"z\"]");
    cJSON_Delete(o);
}
