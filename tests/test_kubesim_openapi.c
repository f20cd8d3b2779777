/*
 * kube-sim's /openapi/v3 as kube-apiserver serves it: the index names each
 * group version's document with the SHA-512 of its JSON (kube-openapi's ETag);
 * the document carries the kinds' schemas (a CRD's own, with apiVersion, kind,
 * metadata as a reference to the published ObjectMeta and the
 * x-kubernetes-group-version-kind kubectl explain looks kinds up by; a
 * built-in kind's standard fields and a description saying so); an outdated
 * hash is redirected, a current one is cacheable; a changed CRD changes the
 * hash and a deleted one leaves the index.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "common/buf.h"
#include "common/kjson.h"
#include "tests/kube-sim/harness.h"
#include "tests/support/ksimfix.h"

static struct ksim_harness *h;

#define CRDS "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
#define CRD(desc)                                                                              \
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","       \
    "\"metadata\":{\"name\":\"widgets.b.example.com\"},\"spec\":{\"group\":\"b.example.com\"," \
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","      \
    "\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},\"versions\":[{\"name\":\"v1\","         \
    "\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","   \
    "\"description\":\"A widget.\",\"properties\":{\"spec\":{\"type\":\"object\","             \
    "\"description\":\"What it is.\",\"properties\":{\"size\":{\"type\":\"integer\","          \
    "\"description\":\"" desc "\"}}}}}}}]}}"
#define GV_KEY "apis/b.example.com/v1"

static void setup(void)
{
    long code;

    h = ksimfix_start(NULL);
    cJSON_Delete(ksimfix_call(h, "POST", CRDS, NULL, CRD("Its size, in cogs."), &code));
    cr_assert_eq(code, 201);
    cr_assert(
        ksimfix_await_status(h, "/apis/b.example.com/v1/namespaces/default/widgets", 200, 10000),
        "the CRD is never served");
}

static void teardown(void)
{
    ksim_harness_stop(h);
}

TestSuite(kubesim_openapi, .init = setup, .fini = teardown, .timeout = 60);

/* The serverRelativeURL of group version key in the index, into url; "" when not listed. */
static void url_of(const char *key, char *url, size_t size)
{
    cJSON *root = ksimfix_call(h, "GET", "/openapi/v3", NULL, NULL, &(long){ 0 });
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(kjson_get(root, "paths"), key);

    cr_assert_not_null(root);
    snprintf(url, size, "%s", e ? kjson_get_str(e, "serverRelativeURL") : "");
    cJSON_Delete(root);
}

static void sha512_hex(const char *data, size_t len, char out[129])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0, i;

    cr_assert(EVP_Digest(data, len, md, &n, EVP_sha512(), NULL));
    for (i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02X", md[i]);
}

/* GET url: its status, headers and body into r (released by the caller). */
static void get(const char *url, struct ksim_http *r)
{
    cr_assert_eq(ksim_harness_call(h, NULL, "GET", url, NULL, NULL, 20000, r), 0, "%s", url);
}

Test(kubesim_openapi, hash_is_the_documents_sha512_and_makes_it_immutable)
{
    char url[512], hash[129], hdr[256], etag[140];
    const char *q;
    struct ksim_http r;

    url_of(GV_KEY, url, sizeof(url));
    q = strstr(url, "?hash=");
    cr_assert_not_null(q, "no hash in %s", url);
    cr_assert_eq(strlen(q + 6), 128, "%s", url);
    get(url, &r);
    cr_assert_eq(r.code, 200);
    sha512_hex(buf_str(&r.body), r.body.len, hash);
    cr_assert_str_eq(q + 6, hash, "the hash is not the SHA-512 of the document");
    snprintf(etag, sizeof(etag), "\"%s\"", hash);
    cr_assert_eq(ksim_http_header(&r, "Etag", hdr, sizeof(hdr)), 0);
    cr_assert_str_eq(hdr, etag);
    cr_assert_eq(ksim_http_header(&r, "Cache-Control", hdr, sizeof(hdr)), 0);
    cr_assert_str_eq(hdr, "public, immutable");
    cr_assert_eq(ksim_http_header(&r, "Expires", hdr, sizeof(hdr)), 0);
    ksim_http_release(&r);

    /* without the hash: the same document, revalidated every time */
    get("/openapi/v3/" GV_KEY, &r);
    cr_assert_eq(r.code, 200);
    cr_assert_eq(ksim_http_header(&r, "Cache-Control", hdr, sizeof(hdr)), 0);
    cr_assert_str_eq(hdr, "no-cache, private");
    ksim_http_release(&r);
}

Test(kubesim_openapi, crd_schema_as_kube_apiserver_publishes_it)
{
    cJSON *doc = ksimfix_call(h, "GET", "/openapi/v3/" GV_KEY, NULL, NULL, &(long){ 0 });
    const cJSON *schemas = kjson_get(doc, "components.schemas"), *w, *gvk, *meta;

    cr_assert_not_null(doc);
    /* the group's labels reversed, the version, the kind */
    w = cJSON_GetObjectItemCaseSensitive(schemas, "com.example.b.v1.Widget");
    cr_assert_not_null(w, "no com.example.b.v1.Widget");
    cr_assert_str_eq(kjson_get_str(w, "description"), "A widget.");
    cr_assert_str_eq(kjson_get_str(w, "properties.spec.properties.size.description"),
                     "Its size, in cogs.");
    gvk = kjson_get(w, "x-kubernetes-group-version-kind");
    cr_assert(cJSON_IsArray(gvk) && cJSON_GetArraySize(gvk) == 1);
    cr_assert_str_eq(kjson_get_str(gvk->child, "group"), "b.example.com");
    cr_assert_str_eq(kjson_get_str(gvk->child, "version"), "v1");
    cr_assert_str_eq(kjson_get_str(gvk->child, "kind"), "Widget");
    cr_assert_eq(cJSON_GetArraySize(gvk->child), 3, "group, version and kind only");
    cr_assert_str_eq(kjson_get_str(w, "properties.apiVersion.type"), "string");
    cr_assert_str_eq(kjson_get_str(w, "properties.kind.type"), "string");
    meta = kjson_get(w, "properties.metadata.allOf");
    cr_assert_str_eq(kjson_get_str(meta->child, "$ref"),
                     "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(
                           schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
                       "the reference leads nowhere");
    /* the kind's path carries the same group-version-kind */
    cr_assert_not_null(
        kjson_get(cJSON_GetObjectItemCaseSensitive(
                      kjson_get(doc, "paths"),
                      "/apis/b.example.com/v1/namespaces/{namespace}/widgets/{name}"),
                  "patch.x-kubernetes-group-version-kind"));
    cJSON_Delete(doc);
}

Test(kubesim_openapi, builtin_kinds_say_what_is_published)
{
    cJSON *doc = ksimfix_call(h, "GET", "/openapi/v3/apis/apps/v1", NULL, NULL, &(long){ 0 });
    const cJSON *sts = cJSON_GetObjectItemCaseSensitive(kjson_get(doc, "components.schemas"),
                                                        "io.k8s.api.apps.v1.StatefulSet");

    cr_assert_not_null(sts);
    cr_assert_not_null(strstr(kjson_get_str(sts, "description"), "standard fields only"));
    cr_assert_not_null(kjson_get(sts, "properties.metadata.allOf"));
    cJSON_Delete(doc);
    doc = ksimfix_call(h, "GET", "/openapi/v3/api/v1", NULL, NULL, &(long){ 0 });
    cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(kjson_get(doc, "components.schemas"),
                                                        "io.k8s.api.core.v1.Pod"));
    cJSON_Delete(doc);
}

Test(kubesim_openapi, changed_crd_changes_the_hash_and_redirects_the_old_one)
{
    char before[512], after[512], loc[512];
    long code;
    struct ksim_http r;
    cJSON *crd;

    url_of(GV_KEY, before, sizeof(before));
    crd = ksimfix_call(h, "GET", CRDS "/widgets.b.example.com", NULL, NULL, &code);
    cr_assert_eq(code, 200);
    cJSON_Delete(crd);
    cJSON_Delete(ksimfix_call(h, "PATCH", CRDS "/widgets.b.example.com",
                              "application/merge-patch+json",
                              "{\"spec\":{\"versions\":[{\"name\":\"v1\",\"served\":true,"
                              "\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":"
                              "\"object\",\"description\":\"A changed widget.\"}}}]}}",
                              &code));
    cr_assert_eq(code, 200);
    url_of(GV_KEY, after, sizeof(after));
    cr_assert_str_neq(before, after, "the hash did not change");
    get(before, &r);
    cr_assert_eq(r.code, 301);
    cr_assert_eq(ksim_http_header(&r, "Location", loc, sizeof(loc)), 0);
    cr_assert_str_eq(loc, after);
    ksim_http_release(&r);

    cJSON_Delete(ksimfix_call(h, "DELETE", CRDS "/widgets.b.example.com", NULL, NULL, &code));
    cr_assert_eq(code, 200);
    cr_assert(ksimfix_await_status(h, "/openapi/v3/" GV_KEY, 404, 10000),
              "the deleted CRD's document is still served");
    url_of(GV_KEY, after, sizeof(after));
    cr_assert_str_eq(after, "", "the index still lists the deleted CRD");
}
