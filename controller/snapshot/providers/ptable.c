/* ptable - the table of storage providers (see ptable.h). */
#include "controller/snapshot/providers/ptable.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/bstore.h"

#include "controller/snapshot/providers/abs.h"
#include "controller/snapshot/providers/gcs.h"
#include "controller/snapshot/providers/lfs.h"
#include "controller/snapshot/providers/s3.h"
#include "controller/snapshot/providers/screds.h"

static enum kerr open_s3(const struct ostore_config *cfg, struct ostore **out,
                         struct kerr_info *err)
{
    return s3_open(cfg->container, cfg->endpoint_override, out, err);
}

static enum kerr open_abs(const struct ostore_config *cfg, struct ostore **out,
                          struct kerr_info *err)
{
    return abs_open(cfg->container, cfg->endpoint_override, out, err);
}

static enum kerr open_gcs(const struct ostore_config *cfg, struct ostore **out,
                          struct kerr_info *err)
{
    return gcs_open(cfg->container, cfg->endpoint_override, out, err);
}

static enum kerr open_ecs(const struct ostore_config *cfg, struct ostore **out,
                          struct kerr_info *err)
{
    return s3_open_with(cfg->container, cfg->endpoint_override, screds_ecs_from_env, out, err);
}

static enum kerr open_ocs(const struct ostore_config *cfg, struct ostore **out,
                          struct kerr_info *err)
{
    return s3_open_with(cfg->container, cfg->endpoint_override, screds_ocs_from_env, out, err);
}

static enum kerr open_local(const struct ostore_config *cfg, struct ostore **out,
                            struct kerr_info *err)
{
    return lfs_open(cfg->container, out, err);
}

struct provider {
    const char *kind; /* etcd-backup-restore's name (common/bstore knows etcd-druid's names) */
    /* Opens a store of this kind; NULL: known, not supported yet. */
    enum kerr (*open)(const struct ostore_config *cfg, struct ostore **out, struct kerr_info *err);
};

static const struct provider providers[] = {
    { "S3", open_s3 },   { "ABS", open_abs },     { "GCS", open_gcs }, { "ECS", open_ecs },
    { "OCS", open_ocs }, { "Local", open_local }, { "Swift", NULL },   { "OSS", NULL },
};

static const struct provider *find(const char *name)
{
    const char *kind = bstore_provider_kind(name);

    for (size_t i = 0; kind && i < sizeof providers / sizeof providers[0]; i++)
        if (strcmp(kind, providers[i].kind) == 0)
            return &providers[i];
    return NULL;
}

enum kerr ptable_check(const char *provider, struct kerr_info *err)
{
    const struct provider *p = provider ? find(provider) : NULL;
    const char *all = bstore_provider_list();
    char valid[256] = "", name[32];
    size_t w = 0;

    if (p && p->open)
        return KERR_OK;
    /* the names etcd-druid accepts whose store this program opens, in bstore's order */
    for (const char *t = all; *t; t += strspn(t, ", ")) {
        size_t len = strcspn(t, ", ");
        const struct provider *q;
        int k;

        snprintf(name, sizeof name, "%.*s", (int)len, t);
        t += len;
        q = find(name);
        if (!q || !q->open)
            continue;
        k = snprintf(valid + w, sizeof valid - w, "%s%s", w ? ", " : "", name);
        if (k < 0 || (size_t)k >= sizeof valid - w)
            break;
        w += (size_t)k;
    }
    if (p)
        return kerr_set(err, KERR_INVAL, "storage provider %.32s is not supported yet; one of %s",
                        provider, valid);
    return kerr_set(err, KERR_INVAL, "unknown storage provider \"%.32s\"; one of %s",
                    provider ? provider : "", valid);
}

enum kerr ptable_open(const struct ostore_config *cfg, struct ostore **out, struct kerr_info *err)
{
    const struct provider *p;
    struct kerr_info why = { 0 };
    enum kerr rc;
    *out = NULL;
    if (cfg->provider == NULL || cfg->container == NULL || cfg->container[0] == '\0') {
        return kerr_set(err, KERR_INVAL, "--storage-provider and --store-container are required");
    }
    p = find(cfg->provider);
    if (p == NULL) {
        return kerr_set(err, KERR_INVAL, "unknown storage provider \"%.32s\" (accepted: %s)",
                        cfg->provider, bstore_provider_list());
    }
    if (p->open == NULL) {
        return kerr_set(err, KERR_UNSUPPORTED, "storage provider %s is not supported yet",
                        cfg->provider);
    }
    /* an object store's container is a bucket name: "b/t" would address bucket b's prefix t */
    if (bstore_container_check(cfg->provider, cfg->container, &why) != KERR_OK) {
        return kerr_set(err, KERR_INVAL, "--store-container: %s", why.msg);
    }
    rc = p->open(cfg, out, err);
    if (rc == KERR_OK) {
        (*out)->part_size = cfg->part_size ? cfg->part_size : OSTORE_PART_SIZE;
        (*out)->copy_part_threshold =
            cfg->copy_part_threshold ? cfg->copy_part_threshold : OSTORE_COPY_PART_THRESHOLD;
    }
    return rc;
}
