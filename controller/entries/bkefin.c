/* bkefin - the finalizer of a BackupEntry whose deletion Job may run; see bkefin.h. */
#include "controller/entries/bkefin.h"

#include <string.h>

#include "common/k8s.h"
#include "common/kjson.h"

int bkefin_has(const cJSON *obj)
{
    const cJSON *f;

    cJSON_ArrayForEach (f, kjson_get_arr(obj, "metadata.finalizers"))
        if (cJSON_IsString(f) && strcmp(f->valuestring, BKEFIN_FINALIZER) == 0)
            return 1;
    return 0;
}

/* entry updated with its finalizers but BKEFIN_FINALIZER, plus it when add. */
static enum kerr put_finalizers(const struct bke_ctx *x, const cJSON *entry, int add, cJSON **out,
                                struct kerr_info *err)
{
    cJSON *copy = cJSON_Duplicate(entry, 1), *fins = cJSON_CreateArray();
    const cJSON *f;
    enum kerr rc;

    if (!copy || !fins) {
        cJSON_Delete(copy);
        cJSON_Delete(fins);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    cJSON_ArrayForEach (f, kjson_get_arr(entry, "metadata.finalizers"))
        if (cJSON_IsString(f) && strcmp(f->valuestring, BKEFIN_FINALIZER) != 0)
            cJSON_AddItemToArray(fins, cJSON_CreateString(f->valuestring));
    if (add)
        cJSON_AddItemToArray(fins, cJSON_CreateString(BKEFIN_FINALIZER));
    rc = kjson_set(copy, "metadata.finalizers", fins, err);
    if (rc == KERR_OK)
        rc = k8s_update(x->client, &BKE_RES_ENTRY, NULL, kjson_get_str(entry, "metadata.name"),
                        copy, NULL, out, err);
    cJSON_Delete(copy);
    return rc;
}

enum kerr bkefin_add(const struct bke_ctx *x, const cJSON *entry, cJSON **out,
                     struct kerr_info *err)
{
    *out = NULL;
    if (bkefin_has(entry)) {
        *out = cJSON_Duplicate(entry, 1);
        return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    return put_finalizers(x, entry, 1, out, err);
}

enum kerr bkefin_remove(const struct bke_ctx *x, const cJSON *entry, struct kerr_info *err)
{
    enum kerr rc;

    if (!bkefin_has(entry))
        return KERR_OK;
    rc = put_finalizers(x, entry, 0, NULL, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        return KERR_OK;
    }
    return rc;
}
