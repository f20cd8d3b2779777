/* rsource - the source an EtcdRestore from an EtcdBackup reads; see rsource.h. */
#include "webhook/rsource.h"

#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "webhook/prefix.h"

static const struct k8s_resource RES_BACKUP = { "etcd-warden.io", "v1alpha1", "etcdbackups", 1 };

void rsource_set(struct rsource *out, const char *key, const char *prefix)
{
    if (!key || !prefix || strcmp(key, PREFIX_STORE_UNKEYED) == 0 ||
        strlen(key) >= sizeof(out->key) || strlen(prefix) >= sizeof(out->prefix))
        return;
    snprintf(out->key, sizeof(out->key), "%s", key);
    snprintf(out->prefix, sizeof(out->prefix), "%s", prefix);
}

enum kerr rsource_of_backup(struct store *backups, struct k8s_client *k, const char *ns,
                            const char *name, struct rsource *out, struct kerr_info *err)
{
    struct bstore_claim c = { "", NULL };
    const cJSON *d;
    cJSON *b = NULL;
    char id[512];
    enum kerr rc;

    memset(out, 0, sizeof(*out));
    if (!ns || !name || !*name || snprintf(id, sizeof(id), "%s/%s", ns, name) >= (int)sizeof(id))
        return KERR_OK;
    if (backups && store_get(backups, id, &b, NULL) == KERR_OK && b) {
        rsource_set(out, kjson_get_str(b, "claim.store"), kjson_get_str(b, "claim.prefix"));
        cJSON_Delete(b);
        return KERR_OK;
    }
    if (!k)
        return KERR_OK;
    rc = k8s_get(k, &RES_BACKUP, ns, name, NULL, &b, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        return KERR_OK;
    }
    if (rc != KERR_OK)
        return rc;
    d = kjson_get_obj(b, "status.destination");
    if (d && bstore_claim_init(&c, kjson_get_str(d, "provider"), kjson_get_str(d, "container"),
                               kjson_get_str(d, "endpointOverride"), kjson_get_str(d, "prefix"),
                               NULL) == KERR_OK)
        rsource_set(out, c.key, c.prefix);
    bstore_claim_release(&c);
    cJSON_Delete(b);
    return KERR_OK;
}
