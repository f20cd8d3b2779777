/* erd_local - a restore drill's Local target: its directory decided once, and who owns it;
 * see erd_int.h. */
#include "controller/backups/erd_int.h"

#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "controller/backups/bkown.h"
#include "controller/core/rctx.h"

#define DIR_MAX (BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX)

/* An EtcdBackup copy's directory as recorded when its copy Job was made, into t. */
static int recorded_copy(struct erd_target *t, char *why, size_t n)
{
    const cJSON *d = kjson_get(t->backup, "status.destination");
    const char *hp = kjson_get_str(d, "hostPath");

    if (!hp || !kjson_get_str(d, "container")) {
        snprintf(why, n,
                 "%s has no copy recorded (status.destination.hostPath): a Local copy is drilled "
                 "where its copy Job wrote it, once it is made",
                 t->what);
        return 0;
    }
    if (snprintf(t->host_path, sizeof(t->host_path), "%s", hp) >= (int)sizeof(t->host_path)) {
        snprintf(why, n, "%s: the recorded hostPath is too long", t->what);
        return 0;
    }
    t->store.container = kjson_get_str(d, "container");
    t->store.prefix = kjson_get_str(d, "prefix") ? kjson_get_str(d, "prefix") : "";
    return 1;
}

enum kerr erd_local_decide(const struct rctx *x, const char *ns, struct erd_target *t,
                           const char **reason, char *why, size_t n, struct kerr_info *err)
{
    const char *kind = bstore_provider_kind(t->store.provider);
    struct kerr_info e = { 0 };
    char dir[DIR_MAX];
    enum kerr rc;

    why[0] = '\0';
    if (!kind || strcmp(kind, "Local") != 0)
        return KERR_OK;
    if (t->backup && !recorded_copy(t, why, n))
        return *reason = "TargetNotFound", KERR_OK;
    if (!t->backup && blocal_hostpath(t->secret, t->host_path, sizeof(t->host_path), &e) != KERR_OK)
        return snprintf(why, n, "%s: %s", t->what, e.msg), *reason = "InvalidTarget", KERR_OK;
    if (blocal_dir(t->host_path, t->store.container, t->store.prefix ? t->store.prefix : "", dir,
                   sizeof(dir), &e) != KERR_OK)
        return snprintf(why, n, "%s: %s", t->what, e.msg), *reason = "InvalidTarget", KERR_OK;
    t->store.host_path = t->host_path; /* the Job mounts what was judged, never read again */
    rc = bkown_local(x->client, ns, dir, "a drill reads", why, n, err);
    if (rc != KERR_OK)
        return kerr_wrap(err, "deciding who owns the Local directory of %s", t->what);
    if (*why)
        *reason = "TargetNotOwned";
    return KERR_OK;
}
