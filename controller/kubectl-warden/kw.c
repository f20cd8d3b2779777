/* kw - what the commands of kubectl-warden share; see kw.h. */
#include "controller/kubectl-warden/kw.h"

#include <stdlib.h>
#include <string.h>

#include "common/cfg.h"
#include "common/kjson.h"
#include "common/ktime.h"

const struct k8s_resource KW_RES_ETCD = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };
const struct k8s_resource KW_RES_OPSTASK = { "druid.gardener.cloud", "v1alpha1", "etcdopstasks",
                                             1 };
const struct k8s_resource KW_RES_LEASE = { "coordination.k8s.io", "v1", "leases", 1 };
const struct k8s_resource KW_RES_IMMTASK = { "etcd-warden.io", "v1alpha1",
                                             "extendfullsnapshotimmutabilitytasks", 1 };
const struct k8s_resource KW_RES_ENTRY = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };
const struct k8s_resource KW_RES_BACKUP = { "etcd-warden.io", "v1alpha1", "etcdbackups", 1 };
const struct k8s_resource KW_RES_DRILL = { "etcd-warden.io", "v1alpha1", "etcdrestoredrills", 1 };
const struct k8s_resource KW_RES_SCHEDULE = { "etcd-warden.io", "v1alpha1", "etcdbackupschedules",
                                              1 };
const struct k8s_resource KW_RES_RESTORE = { "etcd-warden.io", "v1alpha1", "etcdrestores", 1 };
const struct k8s_resource KW_RES_EVENT = { "events.k8s.io", "v1", "events", 1 };

enum kerr kw_init(struct kw *k, const struct kw_opts *o, struct kerr_info *err)
{
    struct cfg_rest rest;
    struct k8s_client_opts co = { 0 };
    enum kerr rc;

    memset(k, 0, sizeof(*k));
    k->o = *o;
    k->out = stdout;
    k->msg = stderr;
    rc = cfg_load_context(o->kubeconfig, o->context && *o->context ? o->context : NULL, &rest, err);
    if (rc)
        return rc;
    co.user_agent = "kubectl-warden";
    co.request_timeout_ms = 30000;
    co.max_retries = 2;
    rc = k8s_client_new(&rest, &co, &k->client, err);
    cfg_rest_release(&rest);
    if (rc)
        return rc;
    k->ns = o->ns && *o->ns ? o->ns : k8s_client_namespace(k->client);
    return KERR_OK;
}

void kw_release(struct kw *k)
{
    k8s_client_free(k->client);
    k->client = NULL;
}

time_t kw_time(const char *s)
{
    struct timespec ts;

    if (!s || !*s || ktime_parse(s, &ts, NULL) != KERR_OK)
        return 0;
    return ts.tv_sec;
}

void kw_age(time_t t, time_t now, char out[32])
{
    long d = (long)(now - t);

    if (t == 0) {
        snprintf(out, 32, "-");
        return;
    }
    if (d < 0)
        d = 0;
    if (d < 120)
        snprintf(out, 32, "%lds", d);
    else if (d < 3600)
        snprintf(out, 32, "%ldm", d / 60);
    else if (d < 86400)
        snprintf(out, 32, d % 3600 >= 60 ? "%ldh%ldm" : "%ldh", d / 3600, d % 3600 / 60);
    else
        snprintf(out, 32, d % 86400 >= 3600 ? "%ldd%ldh" : "%ldd", d / 86400, d % 86400 / 3600);
}

enum kerr kw_list_where(struct kw *k, const struct k8s_resource *res, const char *ns,
                        const char *path, const char *value, cJSON **out, struct kerr_info *err)
{
    cJSON *list = NULL, *items, *it, *next, *arr;
    const char *v;
    enum kerr rc;

    *out = NULL;
    rc = k8s_list_all(k->client, res, ns, NULL, &list, err);
    if (rc)
        return rc;
    arr = cJSON_CreateArray();
    items = cJSON_DetachItemFromObject(list, "items");
    cJSON_Delete(list);
    if (!arr) {
        cJSON_Delete(items);
        return kerr_set(err, KERR_NOMEM, "out of memory");
    }
    for (it = items ? items->child : NULL; it; it = next) {
        next = it->next;
        v = path ? kjson_get_str(it, path) : NULL;
        if (path && (!v || strcmp(v, value) != 0))
            continue;
        cJSON_AddItemToArray(arr, cJSON_DetachItemViaPointer(items, it));
    }
    cJSON_Delete(items);
    *out = arr;
    return KERR_OK;
}

const cJSON *kw_newest(const cJSON *arr)
{
    const cJSON *it, *best = NULL;
    time_t t, bt = 0;

    cJSON_ArrayForEach (it, arr) {
        t = kw_time(kjson_get_str(it, "metadata.creationTimestamp"));
        if (!best || t >= bt) {
            best = it;
            bt = t;
        }
    }
    return best;
}

int kw_fail(struct kw *k, const struct kerr_info *err)
{
    fprintf(k->msg ? k->msg : stderr, "error: %s\n", err->msg[0] ? err->msg : "failed");
    return KW_EXIT_FAIL;
}

int kw_print_json(struct kw *k, const cJSON *v)
{
    char *s = cJSON_Print(v);

    if (!s) {
        fprintf(k->msg, "error: out of memory\n");
        return KW_EXIT_FAIL;
    }
    fprintf(k->out, "%s\n", s);
    free(s);
    return KW_EXIT_OK;
}
