#include "tests/support/mockfix.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/cfg.h"

void mockfix_start(struct mockapi **m, struct k8s_client **c, const char *token,
                   const struct k8s_client_opts *o)
{
    struct cfg_rest rest;
    struct kerr_info err;

    cr_assert_eq(mockapi_new(m, &err), KERR_OK, "%s", err.msg);
    cfg_rest_init(&rest);
    rest.server = strdup(mockapi_url(*m));
    cr_assert_not_null(rest.server);
    if (token) {
        rest.token = strdup(token);
        cr_assert_not_null(rest.token);
    }
    cr_assert_eq(k8s_client_new(&rest, o, c, &err), KERR_OK, "%s", err.msg);
    cfg_rest_release(&rest);
}

void mockfix_stop(struct mockapi *m, struct k8s_client *c)
{
    k8s_client_free(c);
    mockapi_free(m);
}

cJSON *mockfix_body(struct mockapi *m, size_t i, const char *method, const char *path)
{
    const struct mockapi_req *r = mockapi_request(m, i);
    cJSON *j;

    cr_assert_not_null(r, "no request %zu", i);
    cr_assert_str_eq(r->method, method, "request %zu", i);
    if (path)
        cr_assert_str_eq(r->path, path, "request %zu", i);
    j = cJSON_ParseWithLengthOpts(r->body, r->body_len, NULL, 0);
    cr_assert_not_null(j, "request %zu body is not JSON", i);
    return j;
}
