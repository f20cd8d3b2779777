/* ctl_cap - what the capability tables share; see ctl_cap.h. */
#include "controller/core/ctl_cap.h"

#include <stdio.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "common/strlist.h"

enum kerr ctl_index_ns_value(const cJSON *obj, const char *path, struct strlist *values)
{
    const char *ns = kjson_get_str(obj, "metadata.namespace");
    const char *value = kjson_get_str(obj, path);
    char v[KOBJ_KEY_MAX];
    int len;

    if (!value || !*value)
        return KERR_OK;
    len = snprintf(v, sizeof(v), "%s/%s", ns ? ns : "", value);
    if (len < 0 || (size_t)len >= sizeof(v))
        return KERR_OK;
    return strlist_add(values, v);
}

/* "<ns>/<spec.etcdName>" of an object whose spec names an Etcd. */
enum kerr ctl_index_etcd_name(void *ctx, const cJSON *obj, struct strlist *values)
{
    (void)ctx;
    return ctl_index_ns_value(obj, "spec.etcdName", values);
}

int ctl_index_etcd_value(const char *ns, const char *etcd, char v[STORE_KEY_MAX])
{
    int n = ns && etcd ? snprintf(v, STORE_KEY_MAX, "%s/%s", ns, etcd) : -1;

    return n >= 0 && n < STORE_KEY_MAX;
}
