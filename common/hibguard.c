/* hibguard - see hibguard.h. */
#include "common/hibguard.h"

#include <string.h>

#include "common/kjson.h"
#include "common/ktime.h"

static bool str_is(const cJSON *obj, const char *path, const char *want)
{
    const char *s = kjson_get_str(obj, path);

    return s && want && strcmp(s, want) == 0;
}

enum kerr hibguard_cut_at(const cJSON *etcd, time_t *out, struct kerr_info *err)
{
    const char *s = kjson_get_str(etcd, "metadata.annotations[" HIBGUARD_ANN_CUT_AT "]");
    struct timespec ts;

    *out = 0;
    if (!s)
        return kerr_set(err, KERR_NOTFOUND, "annotation %s is absent", HIBGUARD_ANN_CUT_AT);
    if (ktime_parse(s, &ts, NULL) != KERR_OK)
        return kerr_set(err, KERR_PARSE, "annotation %s: \"%.64s\" is not an RFC 3339 time",
                        HIBGUARD_ANN_CUT_AT, s);
    *out = ts.tv_sec;
    return KERR_OK;
}

bool hibguard_task_counts(const cJSON *task, const char *ns, const char *etcd_name, time_t cut_at)
{
    struct timespec created;

    if (!task || !str_is(task, "metadata.namespace", ns) ||
        !str_is(task, "spec.etcdName", etcd_name) ||
        !str_is(task, "spec.config.onDemandSnapshot.type", "full") ||
        !str_is(task, "status.state", "Succeeded"))
        return false;
    if (ktime_parse(kjson_get_str(task, "metadata.creationTimestamp"), &created, NULL) != KERR_OK)
        return false;
    /* strictly after: a task of the cut's own second may predate the cut */
    return created.tv_sec > cut_at;
}
