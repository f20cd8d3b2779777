/* cwriter - any backup sidecar of the cluster that may still write a store; see cwriter.h. */
#include "controller/core/cwriter.h"

#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "common/pager.h"
#include "common/ststore.h"

#define WRITERS_PAGE 250 /* items per page of the cluster-wide LISTs */

static const struct {
    struct k8s_resource res;
    const char *kind;     /* for messages */
    const char *template; /* the pod spec in the object */
} kinds[CWRITER_KINDS] = {
    [CWRITER_STATEFULSET] = { { "apps", "v1", "statefulsets", 1 },
                              "StatefulSet",
                              "spec.template.spec" },
    [CWRITER_DEPLOYMENT] = { { "apps", "v1", "deployments", 1 },
                             "Deployment",
                             "spec.template.spec" },
    [CWRITER_REPLICASET] = { { "apps", "v1", "replicasets", 1 },
                             "ReplicaSet",
                             "spec.template.spec" },
    [CWRITER_DAEMONSET] = { { "apps", "v1", "daemonsets", 1 }, "DaemonSet", "spec.template.spec" },
    [CWRITER_JOB] = { { "batch", "v1", "jobs", 1 }, "Job", "spec.template.spec" },
    [CWRITER_CRONJOB] = { { "batch", "v1", "cronjobs", 1 },
                          "CronJob",
                          "spec.jobTemplate.spec.template.spec" },
    [CWRITER_POD] = { { "", "v1", "pods", 1 }, "pod", "spec" },
};

const struct k8s_resource *cwriter_resource(enum cwriter_kind kind)
{
    return kind < CWRITER_KINDS ? &kinds[kind].res : NULL;
}

/* Whether a pod's phase, or a Job's conditions, say its containers never run again. */
static int finished(const cJSON *obj, enum cwriter_kind kind)
{
    const char *phase = kjson_get_str(obj, "status.phase");
    const cJSON *cond;

    if (kind == CWRITER_POD)
        return phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
    if (kind != CWRITER_JOB)
        return 0;
    cJSON_ArrayForEach (cond, kjson_get(obj, "status.conditions")) {
        const char *type = kjson_get_str(cond, "type"), *status = kjson_get_str(cond, "status");

        if (type && status && strcmp(status, "True") == 0 &&
            (strcmp(type, "Complete") == 0 || strcmp(type, "Failed") == 0))
            return 1;
    }
    return 0;
}

/* The first init or ephemeral container of spec that may be a backup sidecar, or NULL. */
static const cJSON *side_container(const cJSON *spec)
{
    static const char *const lists[] = { "initContainers", "ephemeralContainers" };
    const cJSON *it;

    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
        cJSON_ArrayForEach (it, kjson_get(spec, lists[i]))
            if (ststore_looks_like_sidecar(it))
                return it;
    return NULL;
}

/* The hold of container ct (in spec, that may be a sidecar) over c into why, or "". */
static enum kerr container_held(const cJSON *spec, const cJSON *ct, const char *what,
                                const struct bstore_claim *c, char *why, size_t n)
{
    const char *cname = kjson_get_str(ct, "name");
    char reason[STSTORE_WHY_MAX];
    struct kerr_info one = { 0 };
    struct ststore s;
    struct bstore_claim sc;
    enum kerr rc = ststore_read_container(spec, ct, &s, reason, sizeof(reason));

    if (rc == KERR_NOTFOUND)
        return KERR_OK; /* it names no store: it writes nothing */
    if (rc != KERR_OK) {
        snprintf(why, n,
                 "%s runs a backup sidecar (container %.63s) that may write it: its store "
                 "is unknown (%s)",
                 what, cname ? cname : "(unnamed)", reason);
        return KERR_OK;
    }
    if ((rc = ststore_claim(&s, &sc, &one)) == KERR_NOMEM)
        return rc;
    if (rc != KERR_OK) {
        snprintf(why, n,
                 "%s runs a backup sidecar (container %.63s) that may write it: its store "
                 "cannot be claimed (%s)",
                 what, cname ? cname : "(unnamed)", one.msg);
        return KERR_OK;
    }
    if (bstore_claims_overlap(&sc, c))
        snprintf(
            why, n,
            "%s runs a backup sidecar (container %.63s) that writes prefix \"%s\" of container "
            "%s (provider %s)",
            what, cname ? cname : "(unnamed)", s.prefix, s.container, s.provider);
    bstore_claim_release(&sc);
    return KERR_OK;
}

enum kerr cwriter_held_in(const cJSON *obj, enum cwriter_kind kind, const struct bstore_claim *c,
                          char *why, size_t n)
{
    const char *ns = kjson_get_str(obj, "metadata.namespace"),
               *name = kjson_get_str(obj, "metadata.name");
    const cJSON *spec, *cs, *ct;
    char what[320];
    enum kerr rc = KERR_OK;

    why[0] = '\0';
    if (kind >= CWRITER_KINDS || finished(obj, kind))
        return KERR_OK; /* its containers never run again */
    snprintf(what, sizeof(what), "%s %.63s/%.253s", kinds[kind].kind, ns ? ns : "?",
             name ? name : "?");
    spec = kjson_get(obj, kinds[kind].template);
    cs = kjson_get(spec, "containers");
    if ((ct = side_container(spec))) {
        snprintf(why, n,
                 "%s runs an init or ephemeral container %.63s that may be a backup sidecar, "
                 "whose store etcd-warden does not read: it may write it",
                 what, kjson_get_str(ct, "name") ? kjson_get_str(ct, "name") : "(unnamed)");
        return KERR_OK;
    }
    if (!cJSON_IsArray(cs)) {
        snprintf(why, n,
                 "%s has no readable pod containers: it may run a backup sidecar that "
                 "writes it",
                 what);
        return KERR_OK;
    }
    cJSON_ArrayForEach (ct, cs) {
        if (!ststore_looks_like_sidecar(ct))
            continue;
        if ((rc = container_held(spec, ct, what, c, why, n)) != KERR_OK || *why)
            break;
    }
    return rc;
}

/* One cluster-wide LIST judged page by page (cwriter_held_in), stopped at a hold. */
struct scan {
    const struct bstore_claim *c;
    enum cwriter_kind kind;
    char *why;
    size_t n;
};

/* The pager's projection: judge obj while nothing holds, keep nothing of it. */
static enum kerr scan_one(void *ctx, const cJSON *obj, cJSON **out)
{
    struct scan *s = ctx;

    if (!(*out = cJSON_CreateNull()))
        return KERR_NOMEM;
    return *s->why ? KERR_OK : cwriter_held_in(obj, s->kind, s->c, s->why, s->n);
}

static int scan_stopped(void *arg)
{
    return *((struct scan *)arg)->why != '\0';
}

/* The hold of every object of kind in the cluster over c into why (n bytes). */
static enum kerr scan_held(struct k8s_client *k, enum cwriter_kind kind,
                           const struct bstore_claim *c, char *why, size_t n)
{
    struct scan s = { .c = c, .kind = kind, .why = why, .n = n };
    struct pager_opts po = { .limit = WRITERS_PAGE,
                             .project = scan_one,
                             .project_ctx = &s,
                             .stopped = scan_stopped,
                             .stopped_arg = &s };
    struct kerr_info one = { 0 };
    cJSON *items = NULL;
    char rv[128];
    enum kerr rc;

    why[0] = '\0';
    rc = pager_list(k, &kinds[kind].res, NULL, &po, &items, rv, sizeof(rv), &one);
    cJSON_Delete(items);
    if (*why || rc == KERR_OK)
        return KERR_OK;
    if (rc == KERR_NOMEM)
        return rc;
    snprintf(why, n,
             "the %s of the cluster cannot be listed, so a backup sidecar may still write it: %s",
             kinds[kind].res.resource, one.msg[0] ? one.msg : kerr_str(rc));
    return KERR_OK;
}

enum kerr cwriter_held(struct k8s_client *k, const struct bstore_claim *c, char *why, size_t n,
                       struct kerr_info *err)
{
    enum kerr rc = KERR_OK;

    why[0] = '\0';
    for (int kind = 0; kind < CWRITER_KINDS && rc == KERR_OK && !*why; kind++)
        rc = scan_held(k, (enum cwriter_kind)kind, c, why, n);
    if (rc == KERR_NOMEM)
        kerr_set(err, rc, "the backup sidecars of the cluster");
    return rc;
}
