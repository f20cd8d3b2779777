/* pborn - a namespace created again is another owner; see pborn.h. */
#include "common/pborn.h"

#include <stdio.h>

#include "common/kjson.h"
#include "common/ktime.h"

static const struct k8s_resource res_namespace = { "", "v1", "namespaces", 0 };

enum kerr pborn_check(struct k8s_client *k, const char *ns, const char *name, const char *entry,
                      const char *entry_created, char *why, size_t n)
{
    struct kerr_info e = { 0 };
    struct timespec made, born;
    const char *at;
    cJSON *obj = NULL;
    enum kerr rc = k8s_get(k, &res_namespace, NULL, ns, NULL, &obj, &e);

    why[0] = '\0';
    if (rc == KERR_NOMEM)
        return rc;
    at = rc == KERR_OK ? kjson_get_str(obj, "metadata.creationTimestamp") : NULL;
    if (rc != KERR_OK)
        snprintf(why, n,
                 "BackupEntry %s of Etcd %s/%s holds this prefix, and namespace %s cannot be "
                 "read to tell whether it is the one the entry was made for: %s",
                 entry, ns, name, ns, e.msg[0] ? e.msg : kerr_str(rc));
    else if (!at || !entry_created || ktime_parse(at, &born, NULL) != KERR_OK ||
             ktime_parse(entry_created, &made, NULL) != KERR_OK)
        snprintf(why, n,
                 "BackupEntry %s of Etcd %s/%s holds this prefix, and the creation times of it "
                 "and of namespace %s are not known",
                 entry, ns, name, ns);
    else if (born.tv_sec > made.tv_sec)
        snprintf(why, n,
                 "BackupEntry %s (made %s) holds this prefix for Etcd %s/%s of an earlier "
                 "namespace %s: this namespace was created after it (%s), and a namespace "
                 "created again is another owner; the backups stay the earlier one's until the "
                 "entry is gone (its bucket's deletion grace period, or the operator deletes it)",
                 entry, entry_created, ns, name, ns, at);
    cJSON_Delete(obj);
    return KERR_OK;
}
