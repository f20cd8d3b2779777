/* ptable and s3_url: a container that is no bucket name never addresses another bucket's or
 * another prefix's objects (issue 29: "b/t" written as bucket b, key "t/..."). */
#include "controller/snapshot/providers/ptable.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "controller/snapshot/providers/s3.h"
#include "controller/snapshot/providers/s3int.h"

static enum kerr path_style(struct screds_s3 *c, struct kerr_info *err)
{
    memset(c, 0, sizeof *c);
    c->access_key = strdup("AK");
    c->secret_key = strdup("SK");
    c->region = strdup("us-east-1");
    c->endpoint = strdup("http://127.0.0.1:9");
    c->path_style = true;
    return c->access_key && c->secret_key && c->region && c->endpoint
               ? KERR_OK
               : kerr_set(err, KERR_NOMEM, NULL);
}

Test(ptable, a_container_with_a_slash_is_refused_before_any_request)
{
    static const char *providers[] = { "aws", "S3", "azure", "gcp", "dell", "ocs" };
    struct ostore_config cfg;
    struct ostore *s = NULL;
    struct kerr_info err = { 0 };
    size_t i;

    for (i = 0; i < sizeof(providers) / sizeof(providers[0]); i++) {
        memset(&cfg, 0, sizeof(cfg));
        cfg.provider = providers[i];
        cfg.container = "etcd-bucket/team2";
        cr_assert_eq(ptable_open(&cfg, &s, &err), KERR_INVAL, "%s", providers[i]);
        cr_assert_null(s);
        cr_assert(strstr(err.msg, "--store-container: container \"etcd-bucket/team2\" is not a "
                                  "bucket name"),
                  "%s", err.msg);
    }
    cfg.container = "ab";
    cr_assert_eq(ptable_open(&cfg, &s, &err), KERR_INVAL);
}

Test(ptable, the_bucket_is_escaped_in_path_style_urls)
{
    struct ostore *st = NULL;
    struct kerr_info err = { 0 };
    char *url = NULL;

    /* s3_open_with is below ptable's refusal: the URL itself keeps the bucket one segment */
    cr_assert_eq(s3_open_with("b/t", NULL, path_style, &st, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(s3_url((struct s3 *)st, "etcd-main/v2/Full-1", NULL, &url, &err), KERR_OK);
    cr_assert_str_eq(url, "http://127.0.0.1:9/b%2Ft/etcd-main/v2/Full-1");
    free(url);
    ostore_free(st);
    cr_assert_eq(s3_open_with("etcd-bucket", NULL, path_style, &st, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(s3_url((struct s3 *)st, "p/x", "list-type=2", &url, &err), KERR_OK);
    cr_assert_str_eq(url, "http://127.0.0.1:9/etcd-bucket/p/x?list-type=2");
    free(url);
    ostore_free(st);
}
