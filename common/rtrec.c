/* rtrec - the target store an EtcdRestore was admitted with; see rtrec.h. */
#include "common/rtrec.h"

#include <stdio.h>
#include <string.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/pclaim.h"

static const struct k8s_resource res_lease = { "coordination.k8s.io", "v1", "leases", 1 };

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

    return cJSON_IsString(v) ? v->valuestring : "";
}

static const char *meta(const cJSON *restore, const char *k)
{
    const char *s = kjson_get_str(kjson_get(restore, "metadata"), k);

    return s ? s : "";
}

const cJSON *rtrec_find(const cJSON *rec, const cJSON *restore)
{
    const char *uid = meta(restore, "uid");
    const cJSON *r;

    cJSON_ArrayForEach (r, rec) {
        if (!cJSON_IsObject(r) || strcmp(str(r, "kind"), PCLAIM_KIND_RESTORE) != 0 ||
            strcmp(str(r, "namespace"), meta(restore, "namespace")) != 0 ||
            strcmp(str(r, "name"), meta(restore, "name")) != 0)
            continue;
        if (*str(r, "uid") && strcmp(str(r, "uid"), uid) != 0)
            continue; /* an earlier restore of that name */
        return r;
    }
    return NULL;
}

/*
 * 1 when a Local record (its prefix: the directory warden-webhook placed by the target's
 * Secret, common/blocal) is of container and prefix: the directory ends in their join. Where
 * on the node it is, the controller decides again with the Secret its copy Job mounts.
 */
static int local_same(const cJSON *record, const char *container, const char *prefix)
{
    char tail[2 * BLOCAL_PREFIX_MAX + 8];
    const char *rec = str(record, "prefix");
    size_t rn = strlen(rec), tn;

    if (blocal_dir("/", container, prefix, tail, sizeof(tail), NULL) != KERR_OK)
        return 0;
    tn = strlen(tail);
    return rn >= tn && strcmp(rec + rn - tn, tail) == 0 &&
           (rn == tn || !*tail || rec[rn - tn - 1] == '/');
}

enum rtrec_verdict rtrec_judge(const char *lease, const cJSON *record, const struct rtarget *live,
                               const char *container, const char *prefix, char *why, size_t n)
{
    struct bstore_claim c = { "", NULL };
    struct kerr_info e = { 0 };
    char name[64] = "";
    enum rtrec_verdict v = RTREC_MOVED;

    if (bstore_claim_init(&c, live->provider, container, live->endpoint, prefix, &e) != KERR_OK)
        snprintf(why, n, "the target store now resolved (provider \"%s\") cannot be keyed: %s",
                 live->provider ? live->provider : "", e.msg);
    else if (pclaim_lease_name(c.key, name, sizeof(name)), strcmp(name, lease) != 0)
        snprintf(why, n,
                 "the target store is now %s (provider \"%s\", resolved now), not the store it "
                 "was admitted with (provider \"%s\")",
                 c.key, live->provider, str(record, "provider"));
    else if (strcmp(c.key, BLOCAL_KEY) == 0 ? !local_same(record, container, prefix)
                                            : strcmp(c.prefix, str(record, "prefix")) != 0)
        snprintf(why, n, "the target prefix is now \"%s\", not \"%s\" as admitted", c.prefix,
                 str(record, "prefix"));
    else
        v = RTREC_SAME;
    bstore_claim_release(&c);
    return v;
}

enum kerr rtrec_check(struct k8s_client *k, const char *lease_ns, const cJSON *restore,
                      const struct rtarget *live, enum rtrec_verdict *v, char *why, size_t n,
                      struct kerr_info *err)
{
    cJSON *list = NULL, *item;
    enum kerr rc;

    *v = RTREC_NONE;
    why[0] = '\0';
    rc = k8s_list_all(k, &res_lease, lease_ns, NULL, &list, err);
    if (rc != KERR_OK)
        return kerr_wrap(err, "listing the claim Leases of %s", lease_ns);
    cJSON_ArrayForEach (item, kjson_get_arr(list, "items")) {
        const char *name = kjson_get_str(item, "metadata.name");
        cJSON *rec;
        const cJSON *r;

        if (!name || strncmp(name, PCLAIM_LEASE_PREFIX, strlen(PCLAIM_LEASE_PREFIX)) != 0)
            continue;
        rec = pclaim_records(item);
        if ((r = rtrec_find(rec, restore)))
            *v = rtrec_judge(name, r, live, kjson_get_str(restore, "spec.target.store.container"),
                             kjson_get_str(restore, "spec.target.store.prefix"), why, n);
        cJSON_Delete(rec);
        if (*v != RTREC_NONE)
            break;
    }
    cJSON_Delete(list);
    return KERR_OK;
}
