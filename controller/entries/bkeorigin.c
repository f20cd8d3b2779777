/* bkeorigin - a restored Etcd's claim began with its restore's copy; see bkeorigin.h. */
#include "controller/entries/bkeorigin.h"

#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/core/etcdspec.h"
#include "controller/entries/bkeclaim.h"

static const struct k8s_resource res_restore = { "etcd-warden.io", "v1alpha1", "etcdrestores", 1 };

static int time_at(const cJSON *obj, const char *path, int64_t *t)
{
    struct timespec ts;

    if (ktime_parse(kjson_get_str(obj, path), &ts, NULL) != KERR_OK)
        return 0;
    *t = (int64_t)ts.tv_sec;
    return 1;
}

static int str_eq(const cJSON *a, const char *pa, const cJSON *b, const char *pb)
{
    const char *x = kjson_get_str(a, pa), *y = kjson_get_str(b, pb);

    return x && y && strcmp(x, y) == 0;
}

enum bkeorigin bkeorigin_judge(const cJSON *etcd, const cJSON *restore, int64_t *since)
{
    const char *phase = kjson_get_str(restore, "status.phase");
    const char *prefix = kjson_get_str(restore, "spec.target.store.prefix");
    int64_t gen = 0, created, done, copy;

    if (!restore || !str_eq(restore, "spec.target.etcdName", etcd, "metadata.name"))
        return BKEORIGIN_NONE;
    if (!phase || (strcmp(phase, "Completed") != 0 && strcmp(phase, "Failed") != 0))
        return BKEORIGIN_WAIT; /* its Etcd exists before it is Completed */
    if (strcmp(phase, "Completed") != 0 ||
        !str_eq(restore, "status.etcdName", etcd, "metadata.name") ||
        kjson_get_int64(etcd, "metadata.generation", &gen) != KERR_OK || gen != 1 || !prefix ||
        bkeclaim_same_prefix(prefix, kjson_get_str(etcd, "spec.backup.store.prefix")) != 1 ||
        !time_at(etcd, "metadata.creationTimestamp", &created) ||
        !time_at(restore, "status.completionTime", &done) ||
        !time_at(restore, "status.copyStartedAt", &copy) || created > done || copy > created)
        return BKEORIGIN_NONE;
    *since = copy;
    return BKEORIGIN_RESTORE;
}

enum kerr bkeorigin_since(const struct bke_ctx *x, const cJSON *etcd, enum bkeorigin *what,
                          int64_t *since, struct kerr_info *err)
{
    const char *name = etcdspec_label(etcd, BKEORIGIN_LABEL);
    cJSON *restore = NULL;
    enum kerr rc;

    *what = BKEORIGIN_NONE;
    if (!name || !*name)
        return KERR_OK;
    rc = k8s_get(x->client, &res_restore, kjson_get_str(etcd, "metadata.namespace"), name, NULL,
                 &restore, err);
    if (rc == KERR_OK)
        *what = bkeorigin_judge(etcd, restore, since);
    cJSON_Delete(restore);
    return rc == KERR_NOTFOUND ? KERR_OK : rc;
}

enum kerr bkeorigin_claimed_at(const struct bke_ctx *x, const cJSON *etcd, char out[KTIME_LEN + 1],
                               enum bkeorigin *what, struct kerr_info *err)
{
    int64_t t = 0, gen = 0;
    enum kerr rc = bkeorigin_since(x, etcd, what, &t, err);

    if (rc != KERR_OK || *what == BKEORIGIN_WAIT)
        return rc;
    if (*what != BKEORIGIN_RESTORE &&
        !(time_at(etcd, "metadata.creationTimestamp", &t) &&
          kjson_get_int64(etcd, "metadata.generation", &gen) == KERR_OK && gen == 1))
        t = (int64_t)time(NULL);
    if (ktime_format((time_t)t, out) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "cannot format the time");
    return KERR_OK;
}
