/* bentry: an entry found by its claim's name is the claim's only when its spec is the claim. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/bentry.h"
#include "common/blocal.h"
#include "common/bstore.h"

static cJSON *entry(const char *name, const char *provider, const char *container,
                    const char *prefix, const char *hostpath)
{
    char text[1024];
    cJSON *e;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\"%s%s%s},\"spec\":{\"bucketName\":\"\",\"prefix\":"
             "\"%s\",\"store\":{\"provider\":\"%s\",\"container\":\"%s\"},\"etcd\":"
             "{\"namespace\":\"n\",\"name\":\"e\"}}}",
             name, hostpath ? ",\"annotations\":{\"" BLOCAL_HOSTPATH_ANNOTATION "\":\"" : "",
             hostpath ? hostpath : "", hostpath ? "\"}" : "", prefix, provider, container);
    e = cJSON_Parse(text);
    cr_assert_not_null(e, "%s", text);
    return e;
}

static void claim(struct bstore_claim *c, const char *provider, const char *container,
                  const char *prefix)
{
    cr_assert_eq(bstore_claim_init(c, provider, container, NULL, prefix, NULL), KERR_OK);
}

Test(bentry, names_current_and_earlier)
{
    struct bstore_claim c;
    char cur[BSTORE_ENTRY_NAME_MAX + 1], v1[BSTORE_ENTRY_NAME_MAX + 1];

    claim(&c, "aws", "bkt", "shoot--etcd-main");
    cr_assert_eq(bstore_entry_name(&c, cur), KERR_OK);
    cr_assert_eq(bstore_entry_name_v1(&c, v1), KERR_OK);
    /* sha256("Object|bkt|\nshoot--etcd-main") = bb589a0fc030d2f0... */
    cr_assert_str_eq(cur, "shoot--etcd-main--bb589a0fc030d2f0");
    cr_assert_str_eq(v1, "shoot--etcd-main--bb589a0f", "entries of earlier releases: 8 digits");
    bstore_claim_release(&c);
    claim(&c, "aws", "bkt", "");
    cr_assert_eq(bstore_entry_name(&c, cur), KERR_OK);
    cr_assert(strncmp(cur, "root--", 6) == 0 && strlen(cur) == 6 + 16, "%s", cur);
    bstore_claim_release(&c);
}

Test(bentry, is_claims_by_spec_not_name)
{
    struct bstore_claim c;
    cJSON *e;

    claim(&c, "aws", "bkt", "shoot--etcd-main");
    e = entry("x", "S3", "bkt", "/shoot--etcd-main/", NULL);
    cr_assert(bentry_is_claims(e, &c), "the claim however it is spelled");
    cJSON_Delete(e);
    e = entry("x", "S3", "bkt", "shoot__etcd.main", NULL);
    cr_assert(!bentry_is_claims(e, &c), "a prefix that reads alike is another claim");
    cJSON_Delete(e);
    e = entry("x", "S3", "mallory-bkt", "shoot--etcd-main", NULL);
    cr_assert(!bentry_is_claims(e, &c), "another bucket is another claim");
    cJSON_Delete(e);
    e = entry("x", "awss", "bkt", "shoot--etcd-main", NULL);
    cr_assert(!bentry_is_claims(e, &c), "a store not understood is not the claim's");
    cJSON_Delete(e);
    e = cJSON_Parse("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"store\":{\"provider\":\"aws\","
                    "\"container\":\"bkt\"}}}");
    cr_assert(!bentry_is_claims(e, &c), "no prefix: not the claim's");
    cJSON_Delete(e);
    cr_assert(!bentry_is_claims(NULL, &c));
    bstore_claim_release(&c);
}

Test(bentry, is_claims_of_a_local_directory)
{
    struct bstore_claim c = { BLOCAL_KEY, (char *)"var/lib/lb/bkt/shoot/etcd" };
    cJSON *e;

    e = entry("x", "Local", "bkt", "shoot/etcd", "/var/lib/lb");
    cr_assert(bentry_is_claims(e, &c), "the directory its annotation places");
    cJSON_Delete(e);
    e = entry("x", "Local", "bkt", "shoot/etcd", "/var/lib/other");
    cr_assert(!bentry_is_claims(e, &c), "another hostPath, another directory");
    cJSON_Delete(e);
    e = entry("x", "Local", "bkt", "shoot/etcd", NULL);
    cr_assert(!bentry_is_claims(e, &c), "a directory not placed is not the claim's");
    cJSON_Delete(e);
    e = entry("x", "aws", "bkt", "shoot/etcd", "/var/lib/lb");
    cr_assert(!bentry_is_claims(e, &c), "an object store's entry is no directory's");
    cJSON_Delete(e);
}

/* A store of entries by name for bentry_find. */
struct shelf {
    cJSON *items[4];
    int n, gets;
    enum kerr fail;
};

static enum kerr shelf_get(void *ctx, const char *name, cJSON **out, struct kerr_info *err)
{
    struct shelf *s = ctx;

    s->gets++;
    *out = NULL;
    if (s->fail != KERR_OK)
        return kerr_set(err, s->fail, "cannot read");
    for (int i = 0; i < s->n; i++)
        if (strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(s->items[i], "metadata"), "name")
                       ->valuestring,
                   name) == 0) {
            *out = cJSON_Duplicate(s->items[i], 1);
            return KERR_OK;
        }
    return kerr_set(err, KERR_NOTFOUND, "no %s", name);
}

static void shelf_release(struct shelf *s)
{
    for (int i = 0; i < s->n; i++)
        cJSON_Delete(s->items[i]);
}

/* bentry_find of the victim's claim (aws, bkt, shoot--etcd-main) on s. */
static enum bentry_found find(struct shelf *s, char name[BSTORE_ENTRY_NAME_MAX + 1], cJSON **out)
{
    struct bstore_claim c;
    enum bentry_found f;
    struct kerr_info err;

    claim(&c, "aws", "bkt", "shoot--etcd-main");
    cr_assert_eq(bentry_find(shelf_get, s, &c, &f, out, name, &err), KERR_OK, "%s", err.msg);
    bstore_claim_release(&c);
    return f;
}

#define CUR "shoot--etcd-main--bb589a0fc030d2f0"
#define V1  "shoot--etcd-main--bb589a0f"

Test(bentry, find_none_names_the_current)
{
    struct shelf s = { { 0 }, 0, 0, KERR_OK };
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *out = NULL;

    cr_assert_eq(find(&s, name, &out), BENTRY_NONE);
    cr_assert_null(out);
    cr_assert_str_eq(name, CUR);
}

Test(bentry, find_current)
{
    struct shelf s = { { entry(CUR, "aws", "bkt", "shoot--etcd-main", NULL) }, 1, 0, KERR_OK };
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *out = NULL;

    cr_assert_eq(find(&s, name, &out), BENTRY_CLAIMS);
    cr_assert_str_eq(name, CUR);
    cr_assert_not_null(out);
    cJSON_Delete(out);
    shelf_release(&s);
}

Test(bentry, find_an_earlier_releases_entry)
{
    struct shelf s = { { entry(V1, "aws", "bkt", "shoot--etcd-main", NULL) }, 1, 0, KERR_OK };
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *out = NULL;

    cr_assert_eq(find(&s, name, &out), BENTRY_CLAIMS, "an upgrade keeps the entry it had");
    cr_assert_str_eq(name, V1, "no second entry under the new name");
    cJSON_Delete(out);
    shelf_release(&s);
}

Test(bentry, a_collision_under_the_earlier_name_is_not_the_claims)
{
    /* a tenant's claim (her bucket, a prefix that reads alike) whose 8-digit name is the
     * victim's: not the victim's entry, and the current name stays free for it */
    struct shelf s = {
        { entry(V1, "aws", "mallory-bkt", "shoot__etcd.main", NULL) }, 1, 0, KERR_OK
    };
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *out = NULL;

    cr_assert_eq(find(&s, name, &out), BENTRY_NONE);
    cr_assert_null(out);
    cr_assert_str_eq(name, CUR);
    shelf_release(&s);
}

Test(bentry, a_collision_under_the_current_name_is_another_claims)
{
    struct shelf s = {
        { entry(CUR, "aws", "mallory-bkt", "shoot__etcd.main", NULL) }, 1, 0, KERR_OK
    };
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *out = NULL;

    cr_assert_eq(find(&s, name, &out), BENTRY_OTHER, "never taken for the claim's");
    cr_assert_str_eq(name, CUR);
    cr_assert_not_null(out);
    cJSON_Delete(out);
    shelf_release(&s);
}

Test(bentry, the_claims_earlier_entry_beats_a_collision_under_the_current_name)
{
    struct shelf s = { { entry(CUR, "aws", "mallory-bkt", "x", NULL),
                         entry(V1, "aws", "bkt", "/shoot--etcd-main", NULL) },
                       2,
                       0,
                       KERR_OK };
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *out = NULL;

    cr_assert_eq(find(&s, name, &out), BENTRY_CLAIMS);
    cr_assert_str_eq(name, V1);
    cJSON_Delete(out);
    shelf_release(&s);
}

Test(bentry, a_read_error_decides_nothing)
{
    struct shelf s = { { 0 }, 0, 0, KERR_IO };
    struct bstore_claim c;
    enum bentry_found f = BENTRY_CLAIMS;
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *out = (cJSON *)1;

    claim(&c, "aws", "bkt", "p");
    cr_assert_eq(bentry_find(shelf_get, &s, &c, &f, &out, name, NULL), KERR_IO);
    cr_assert_null(out);
    cr_assert_eq(f, BENTRY_NONE);
    bstore_claim_release(&c);
}

/* bentry_named: an entry under either name is there, whatever its spec (a cache of projections
 * cannot judge it: the stored one decides); none under either, none; a read that fails is an
 * error, not "none". */
Test(bentry, named_under_either_name_whatever_its_spec)
{
    struct shelf v1 = { { cJSON_Parse("{\"metadata\":{\"name\":\"" V1 "\"}}") }, 1, 0, KERR_OK };
    struct shelf none = { { 0 }, 0, 0, KERR_OK };
    struct shelf broken = { { 0 }, 0, 0, KERR_IO };
    struct bstore_claim c;
    struct kerr_info err;
    int any = -1;

    claim(&c, "aws", "bkt", "shoot--etcd-main");
    cr_assert_eq(bentry_named(shelf_get, &v1, &c, &any, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(any, 1, "a projection under the earlier release's name");
    cr_assert_eq(bentry_named(shelf_get, &none, &c, &any, &err), KERR_OK);
    cr_assert_eq(any, 0);
    cr_assert_eq(none.gets, 2, "both names looked up");
    cr_assert_neq(bentry_named(shelf_get, &broken, &c, &any, &err), KERR_OK);
    bstore_claim_release(&c);
    shelf_release(&v1);
}
