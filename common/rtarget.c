/* rtarget - the store an EtcdRestore's target is in; see rtarget.h. */
#include "common/rtarget.h"

#include <stddef.h>
#include <string.h>

#include "common/kjson.h"

static enum rtarget_from take(const cJSON *store, enum rtarget_from f, struct rtarget *out)
{
    const char *p = kjson_get_str(store, "provider");

    if (!p || !*p)
        return RTARGET_UNKNOWN;
    out->provider = p;
    out->endpoint = kjson_get_str(store, "endpointOverride");
    return f;
}

enum rtarget_from rtarget_resolve(const cJSON *restore, const cJSON *etcd_store, int etcd_known,
                                  const cJSON *source_store, struct rtarget *out)
{
    const cJSON *tmpl = kjson_get_obj(restore, "spec.etcdTemplate");
    enum rtarget_from f;

    out->provider = NULL;
    out->endpoint = NULL;
    if ((f = take(kjson_get_obj(restore, "spec.target.store"), RTARGET_OWN, out)))
        return f;
    if (tmpl) {
        if ((f = take(kjson_get_obj(tmpl, "backup.store"), RTARGET_TEMPLATE, out)))
            return f;
    } else if ((f = take(etcd_store, RTARGET_ETCD, out))) {
        return f;
    } else if (!etcd_known) {
        return RTARGET_UNKNOWN;
    }
    return take(source_store, RTARGET_SOURCE, out);
}

const char *rtarget_from_str(enum rtarget_from f)
{
    switch (f) {
    case RTARGET_OWN:
        return "spec.target.store";
    case RTARGET_TEMPLATE:
        return "spec.etcdTemplate.backup.store";
    case RTARGET_ETCD:
        return "the source Etcd's spec.backup.store";
    case RTARGET_SOURCE:
        return "the source store";
    case RTARGET_UNKNOWN:
        break;
    }
    return "(unknown)";
}

int rtarget_claims(const cJSON *restore)
{
    const char *phase = kjson_get_str(restore, "status.phase");
    const char *job = kjson_get_str(restore, "status.jobName");

    if (phase && strcmp(phase, "Completed") == 0)
        return 0;
    if (phase && strcmp(phase, "Failed") == 0)
        return job && *job;
    return 1;
}
