/* cmember - what an Etcd's members may still hold in a store; see cmember.h. */
#include "controller/core/cmember.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hibguard.h"
#include "common/kjson.h"
#include "common/ststore.h"
#include "controller/core/claims.h"
#include "controller/core/etcdspec.h"

static const struct k8s_resource RES_STS = { "apps", "v1", "statefulsets", 1 };

static const char *str_or(const cJSON *o, const char *path, const char *dflt)
{
    const char *v = kjson_get_str(o, path);
    return v ? v : dflt;
}

enum kerr cmember_held_in(const cJSON *etcd, const cJSON *sts, const struct bstore_claim *c,
                          char *why, size_t n)
{
    const char *ns = str_or(etcd ? etcd : sts, "metadata.namespace", "?");
    const char *name = str_or(etcd ? etcd : sts, "metadata.name", "?");
    char reason[STSTORE_WHY_MAX];
    struct ststore *s;
    struct bstore_claim tc;
    struct kerr_info one = { 0 };
    enum kerr rc;

    why[0] = '\0';
    if (etcd && etcdspec_annotation(etcd, HIBGUARD_ANN_STORE)) {
        snprintf(why, n,
                 "Etcd %s/%s is hibernated and its final snapshot is in the store of its stamp "
                 "%s: its entries are kept until it wakes",
                 ns, name, HIBGUARD_ANN_STORE);
        return KERR_OK;
    }
    if (!sts)
        return KERR_OK;
    if (!(s = calloc(1, sizeof(*s))))
        return KERR_NOMEM;
    rc = ststore_read(sts, s, reason, sizeof(reason));
    if (rc != KERR_OK && rc != KERR_NOTFOUND) {
        snprintf(why, n,
                 "the members of Etcd %s/%s may still write it: the store of StatefulSet "
                 "%s/%s's backup sidecar is unknown (%s)",
                 ns, name, ns, name, reason);
        goto out;
    }
    if (!ststore_rolled_out(sts, 0)) {
        snprintf(why, n,
                 "the members of Etcd %s/%s may still write it: StatefulSet %s/%s's rollout is "
                 "not complete (status.observedGeneration, currentRevision and updateRevision "
                 "not those of its template), so its pods may run an earlier template's store",
                 ns, name, ns, name);
        goto out;
    }
    if (rc == KERR_NOTFOUND) /* its members, all on this template, write no backups */
        goto out;
    rc = ststore_claim(s, &tc, &one);
    if (rc == KERR_NOMEM) {
        free(s);
        return rc;
    }
    if (rc != KERR_OK)
        snprintf(why, n,
                 "the members of Etcd %s/%s may still write it: the store of StatefulSet "
                 "%s/%s's backup sidecar cannot be claimed (%s)",
                 ns, name, ns, name, one.msg);
    else {
        if (bstore_claims_overlap(&tc, c))
            snprintf(why, n,
                     "the members of Etcd %s/%s still write it: StatefulSet %s/%s's backup "
                     "sidecar writes prefix \"%s\" of container %s (etcd-druid has not "
                     "reconciled the Etcd's new store into its pod template yet)",
                     ns, name, ns, name, s->prefix, s->container);
        bstore_claim_release(&tc);
    }
out:
    free(s);
    return KERR_OK;
}

static enum kerr get_opt(struct k8s_client *k, const struct k8s_resource *res, const char *ns,
                         const char *name, cJSON **out, struct kerr_info *err)
{
    enum kerr rc = k8s_get(k, res, ns, name, NULL, out, err);

    if (rc == KERR_NOTFOUND) {
        *out = NULL;
        kerr_clear(err);
        return KERR_OK;
    }
    return rc;
}

int cmember_selector(const char *name, char *sel, size_t n)
{
    int w;

    if (!name || !*name || strlen(name) > CMEMBER_LABEL_MAX)
        return 0;
    w = snprintf(sel, n,
                 ETCDSPEC_LABEL_MANAGED_BY "=" ETCDSPEC_MANAGED_BY_DRUID "," ETCDSPEC_LABEL_PART_OF
                                           "=%s",
                 name);
    return w > 0 && (size_t)w < n;
}

/* Why pod (not finished), a member of Etcd ns/name, holds c: into why (n bytes), or "". */
static enum kerr pod_held(const cJSON *pod, const char *ns, const char *name,
                          const struct bstore_claim *c, char *why, size_t n)
{
    const char *pname = str_or(pod, "metadata.name", "?");
    char reason[STSTORE_WHY_MAX];
    struct ststore *s;
    struct bstore_claim pc;
    struct kerr_info one = { 0 };
    enum kerr rc;

    if (!(s = calloc(1, sizeof(*s))))
        return KERR_NOMEM;
    rc = ststore_read_spec(kjson_get(pod, "spec"), s, reason, sizeof(reason));
    if (rc == KERR_NOTFOUND) /* its sidecar names no store: it writes nothing */
        rc = KERR_OK;
    else if (rc != KERR_OK)
        snprintf(why, n,
                 "pod %s/%s, a member of Etcd %s/%s, still exists and may write it: the store "
                 "of its backup sidecar is unknown (%s)",
                 ns, pname, ns, name, reason);
    else if ((rc = ststore_claim(s, &pc, &one)) != KERR_OK)
        snprintf(why, n,
                 "pod %s/%s, a member of Etcd %s/%s, still exists and may write it: the store "
                 "of its backup sidecar cannot be claimed (%s)",
                 ns, pname, ns, name, one.msg);
    else {
        if (bstore_claims_overlap(&pc, c))
            snprintf(why, n,
                     "pod %s/%s, a member of Etcd %s/%s, still exists and its backup sidecar "
                     "writes prefix \"%s\" of container %s (its StatefulSet or Etcd was "
                     "deleted leaving it running)",
                     ns, pname, ns, name, s->prefix, s->container);
        bstore_claim_release(&pc);
    }
    free(s);
    return rc == KERR_NOMEM ? rc : KERR_OK;
}

enum kerr cmember_pods_held_in(const cJSON *items, const char *ns, const char *name,
                               const struct bstore_claim *c, char *why, size_t n)
{
    const cJSON *pod;
    const char *phase;
    enum kerr rc = KERR_OK;

    why[0] = '\0';
    cJSON_ArrayForEach (pod, items) {
        phase = kjson_get_str(pod, "status.phase");
        if (phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0))
            continue; /* finished: its containers never run again */
        if ((rc = pod_held(pod, ns, name, c, why, n)) != KERR_OK || *why)
            break;
    }
    return rc;
}

/* The member pods of Etcd ns/name listed now: their hold over c into why (n bytes). */
static enum kerr pods_held(struct k8s_client *k, const char *ns, const char *name,
                           const struct bstore_claim *c, char *why, size_t n)
{
    char sel[sizeof(ETCDSPEC_LABEL_MANAGED_BY ETCDSPEC_MANAGED_BY_DRUID ETCDSPEC_LABEL_PART_OF) +
             CMEMBER_LABEL_MAX + 8];
    struct kerr_info one = { 0 };
    cJSON *list = NULL;
    enum kerr rc;

    why[0] = '\0';
    if (!cmember_selector(name, sel, sizeof(sel)))
        return KERR_OK;
    rc = k8s_list_all(k, &ETCDSPEC_RES_POD, ns, &(struct k8s_list_opts){ .label_selector = sel },
                      &list, &one);
    if (rc == KERR_NOMEM)
        return rc;
    if (rc != KERR_OK)
        snprintf(why, n,
                 "the pods of namespace %s (%s) cannot be listed, so members of Etcd %s/%s may "
                 "still write it: %s",
                 ns, sel, ns, name, one.msg[0] ? one.msg : kerr_str(rc));
    else
        rc = cmember_pods_held_in(kjson_get_arr(list, "items"), ns, name, c, why, n);
    cJSON_Delete(list);
    return rc;
}

enum kerr cmember_held(struct k8s_client *k, const char *ns, const char *name,
                       const struct bstore_claim *c, char *why, size_t n, struct kerr_info *err)
{
    cJSON *etcd = NULL, *sts = NULL;
    enum kerr rc;

    why[0] = '\0';
    if (!ns || !*ns || !name || !*name)
        return KERR_OK;
    rc = get_opt(k, &ETCDSPEC_RES_ETCD, ns, name, &etcd, err);
    if (rc == KERR_OK)
        rc = get_opt(k, &RES_STS, ns, name, &sts, err);
    if (rc == KERR_OK)
        rc = cmember_held_in(etcd, sts, c, why, n);
    if (rc == KERR_OK && !*why)
        rc = pods_held(k, ns, name, c, why, n);
    if (rc == KERR_NOMEM)
        kerr_set(err, rc, "the members' store");
    cJSON_Delete(etcd);
    cJSON_Delete(sts);
    return rc;
}

enum kerr cmember_stamp_store(const cJSON *etcd, const cJSON *secret, const cJSON *sts, int64_t gen,
                              int *same, char *why, size_t n)
{
    char reason[STSTORE_WHY_MAX];
    struct ststore *s;
    struct bstore_claim tc, sc;
    struct kerr_info one = { 0 };
    enum kerr rc = KERR_OK;

    *same = 0;
    why[0] = '\0';
    if (!sts) {
        snprintf(why, n, "its StatefulSet was not read");
        return KERR_OK;
    }
    if (!(s = calloc(1, sizeof(*s))))
        return KERR_NOMEM;
    if (ststore_read(sts, s, reason, sizeof(reason)) != KERR_OK)
        snprintf(why, n, "the store its members' backup sidecar writes is unknown (%s)", reason);
    else if (!ststore_rolled_out(sts, gen))
        snprintf(why, n,
                 "its StatefulSet's rollout is not complete: its members may run an "
                 "earlier template's store");
    else if ((rc = ststore_claim(s, &tc, &one)) != KERR_OK)
        snprintf(why, n, "the store its members' backup sidecar writes cannot be claimed (%s)",
                 one.msg);
    else {
        if ((rc = claims_of_placed(etcd, "spec.backup.store", secret, &sc, &one)) != KERR_OK)
            snprintf(why, n, "the store its spec names cannot be claimed (%s)", one.msg);
        else {
            *same = strcmp(tc.key, sc.key) == 0 && strcmp(tc.prefix, sc.prefix) == 0;
            if (!*same)
                snprintf(why, n,
                         "its members' backup sidecar writes prefix \"%s\" of container %s "
                         "(provider %s), not the store its spec names (etcd-druid has not "
                         "reconciled spec.backup.store into the StatefulSet)",
                         s->prefix, s->container, s->provider);
            bstore_claim_release(&sc);
        }
        bstore_claim_release(&tc);
    }
    free(s);
    return rc == KERR_NOMEM ? rc : KERR_OK;
}
