/* toggles - the Etcd annotations users set, checked; see toggles.h. */
#include "webhook/toggles.h"

#include <ctype.h>
#include <string.h>

#include <cJSON.h>

#include "common/hibguard.h"
#include "common/kjson.h"

#define ANN_HIBERNATE "etcd-warden.io/hibernate"

static const char *annotation(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(kjson_get(obj, "metadata.annotations"), key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* 1 when the request sets key to a value the old object did not hold. */
static int changed(const struct review_req *req, const char *key, const char **now)
{
    const char *old = req->op == REVIEW_OP_UPDATE ? annotation(req->old_object, key) : NULL;

    *now = annotation(req->object, key);
    return *now && (!old || strcmp(old, *now) != 0);
}

static int blank(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

enum kerr toggles_decide(const struct review_req *req, struct review_resp *resp,
                         struct kerr_info *err)
{
    const char *v;
    enum kerr rc = KERR_OK;

    if ((req->op != REVIEW_OP_CREATE && req->op != REVIEW_OP_UPDATE) ||
        !cJSON_IsObject(req->object))
        return KERR_OK;
    if (changed(req, ANN_HIBERNATE, &v) && strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
        rc = review_deny(resp,
                         "metadata.annotations[%s]: \"%s\" is neither \"true\" (hibernate) nor "
                         "\"false\" (awake; removing the annotation wakes up too)",
                         ANN_HIBERNATE, v);
    else if (changed(req, HIBGUARD_ANN_BREAK_GLASS, &v) && blank(v))
        rc = review_deny(resp,
                         "metadata.annotations[%s]: the value is the reason recorded with the "
                         "scale-down without a snapshot, and it is empty: say why, e.g. "
                         "\"bucket lost\"",
                         HIBGUARD_ANN_BREAK_GLASS);
    return rc == KERR_OK ? rc : kerr_set(err, rc, "building the answer");
}
