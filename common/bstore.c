/* bstore - the identity of a backup store; see bstore.h. */
#include "common/bstore.h"

#include <stdio.h>
#include <string.h>

/* The provider names etcd-druid accepts (StorageProviderFromInfraProvider). */
static const char *const PROVIDERS[][2] = {
    { "aws", "S3" },      { "S3", "S3" },         { "stackit", "S3" }, { "azure", "ABS" },
    { "ABS", "ABS" },     { "alicloud", "OSS" },  { "OSS", "OSS" },    { "openstack", "Swift" },
    { "Swift", "Swift" }, { "gcp", "GCS" },       { "GCS", "GCS" },    { "dell", "ECS" },
    { "ECS", "ECS" },     { "openshift", "OCS" }, { "OCS", "OCS" },    { "Local", "Local" },
    { "local", "Local" },
};

const char *bstore_provider_kind(const char *provider)
{
    size_t i;

    for (i = 0; provider && i < sizeof(PROVIDERS) / sizeof(PROVIDERS[0]); i++)
        if (strcmp(PROVIDERS[i][0], provider) == 0)
            return PROVIDERS[i][1];
    return NULL;
}

enum kerr bstore_key(const char *provider, const char *container, const char *endpoint, char *out,
                     size_t n)
{
    const char *kind = bstore_provider_kind(provider);
    int len;

    if (n)
        out[0] = '\0';
    if (!kind || !container || !*container)
        return KERR_INVAL;
    len = snprintf(out, n, "%s|%s|%s", kind, container, endpoint ? endpoint : "");
    return len < 0 || (size_t)len >= n ? KERR_TOOBIG : KERR_OK;
}
