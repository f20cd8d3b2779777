/* cmember - what an Etcd's members, or any backup sidecar, may still hold in a store; see
 * cmember.h. */
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

/* What the backup sidecar of one pod spec writes (sidecar_read). */
enum sidecar_kind {
    SIDECAR_WRITES,  /* claim: its store */
    SIDECAR_NONE,    /* it names no store: it writes nothing */
    SIDECAR_UNKNOWN, /* its store cannot be read or claimed */
};

struct sidecar {
    enum sidecar_kind kind;
    struct ststore s;          /* as read: provider, container, prefix for messages */
    struct bstore_claim claim; /* SIDECAR_WRITES only; released by sidecar_free */
    /* SIDECAR_UNKNOWN and SIDECAR_NONE: "is unknown (<reason>)" or "cannot be claimed (<why>)",
     * to follow "the store of ... backup sidecar " */
    char why[STSTORE_WHY_MAX + KERR_MSG_LEN + 32];
};

static void sidecar_free(struct sidecar *sc)
{
    if (sc && sc->kind == SIDECAR_WRITES)
        bstore_claim_release(&sc->claim);
    free(sc);
}

/*
 * The store the backup sidecar of spec (a pod's spec or a template's spec.template.spec) writes,
 * read (common/ststore's ststore_read_spec) and claimed (ststore_claim), into *out (OWNS; free
 * with sidecar_free). Whatever cannot be read or claimed is SIDECAR_UNKNOWN: every caller holds
 * or refuses on it (fail closed). KERR_NOMEM only.
 */
static enum kerr sidecar_read(const cJSON *spec, struct sidecar **out)
{
    char reason[STSTORE_WHY_MAX];
    struct kerr_info one = { 0 };
    struct sidecar *sc = calloc(1, sizeof(*sc));
    enum kerr rc;

    *out = NULL;
    if (!sc)
        return KERR_NOMEM;
    rc = ststore_read_spec(spec, &sc->s, reason, sizeof(reason));
    if (rc != KERR_OK) {
        sc->kind = rc == KERR_NOTFOUND ? SIDECAR_NONE : SIDECAR_UNKNOWN;
        snprintf(sc->why, sizeof(sc->why), "is unknown (%s)", reason);
    } else if ((rc = ststore_claim(&sc->s, &sc->claim, &one)) == KERR_NOMEM) {
        free(sc);
        return rc;
    } else if (rc != KERR_OK) {
        sc->kind = SIDECAR_UNKNOWN;
        snprintf(sc->why, sizeof(sc->why), "cannot be claimed (%s)", one.msg);
    } else {
        sc->kind = SIDECAR_WRITES;
    }
    *out = sc;
    return KERR_OK;
}

/* Whether the sidecar sc writes a store overlapping c. */
static int sidecar_overlaps(const struct sidecar *sc, const struct bstore_claim *c)
{
    return sc->kind == SIDECAR_WRITES && bstore_claims_overlap(&sc->claim, c);
}

enum kerr cmember_held_in(const cJSON *etcd, const cJSON *sts, const struct bstore_claim *c,
                          char *why, size_t n)
{
    const char *ns = str_or(etcd ? etcd : sts, "metadata.namespace", "?");
    const char *name = str_or(etcd ? etcd : sts, "metadata.name", "?");
    struct sidecar *sc;
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
    if ((rc = sidecar_read(kjson_get(sts, "spec.template.spec"), &sc)) != KERR_OK)
        return rc;
    if (sc->kind == SIDECAR_UNKNOWN)
        snprintf(why, n,
                 "the members of Etcd %s/%s may still write it: the store of StatefulSet "
                 "%s/%s's backup sidecar %s",
                 ns, name, ns, name, sc->why);
    else if (!ststore_rolled_out(sts, 0))
        snprintf(why, n,
                 "the members of Etcd %s/%s may still write it: StatefulSet %s/%s's rollout is "
                 "not complete (status.observedGeneration, currentRevision and updateRevision "
                 "not those of its template), so its pods may run an earlier template's store",
                 ns, name, ns, name);
    else if (sidecar_overlaps(sc, c))
        snprintf(why, n,
                 "the members of Etcd %s/%s still write it: StatefulSet %s/%s's backup "
                 "sidecar writes prefix \"%s\" of container %s (etcd-druid has not "
                 "reconciled the Etcd's new store into its pod template yet)",
                 ns, name, ns, name, sc->s.prefix, sc->s.container);
    /* else: apart, or its members, all on this template, write no backups */
    sidecar_free(sc);
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

/* Why a member pod still runs a sidecar its Etcd's StatefulSet no longer names, for messages. */
static void left_running(const cJSON *etcd, const cJSON *sts, char *out, size_t n)
{
    if (sts)
        snprintf(out, n,
                 "StatefulSet %s/%s exists and its template does not write there: the pod has "
                 "not rolled onto it yet",
                 str_or(sts, "metadata.namespace", "?"), str_or(sts, "metadata.name", "?"));
    else if (etcd)
        snprintf(out, n, "its StatefulSet was deleted leaving it running");
    else
        snprintf(out, n, "its Etcd and its StatefulSet were deleted leaving it running");
}

/* Why pod (not finished), a member of Etcd ns/name, holds c: into why (n bytes), or "". */
static enum kerr pod_held(const cJSON *pod, const cJSON *etcd, const cJSON *sts, const char *ns,
                          const char *name, const struct bstore_claim *c, char *why, size_t n)
{
    const char *pname = str_or(pod, "metadata.name", "?");
    char how[512];
    struct sidecar *sc;
    enum kerr rc;

    if ((rc = sidecar_read(kjson_get(pod, "spec"), &sc)) != KERR_OK)
        return rc;
    if (sc->kind == SIDECAR_UNKNOWN)
        snprintf(why, n,
                 "pod %s/%s, a member of Etcd %s/%s, still exists and may write it: the store "
                 "of its backup sidecar %s",
                 ns, pname, ns, name, sc->why);
    else if (sidecar_overlaps(sc, c)) {
        left_running(etcd, sts, how, sizeof(how));
        snprintf(why, n,
                 "pod %s/%s, a member of Etcd %s/%s, still exists and its backup sidecar "
                 "writes prefix \"%s\" of container %s (%s)",
                 ns, pname, ns, name, sc->s.prefix, sc->s.container, how);
    }
    /* else: apart, or its sidecar names no store: it writes nothing */
    sidecar_free(sc);
    return KERR_OK;
}

/* Whether pod's phase says its containers never run again. */
static int finished(const cJSON *pod)
{
    const char *phase = kjson_get_str(pod, "status.phase");

    return phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
}

enum kerr cmember_pods_held_in(const cJSON *items, const cJSON *etcd, const cJSON *sts,
                               const char *ns, const char *name, const struct bstore_claim *c,
                               char *why, size_t n)
{
    const cJSON *pod;
    enum kerr rc = KERR_OK;

    why[0] = '\0';
    cJSON_ArrayForEach (pod, items) {
        if (finished(pod))
            continue; /* its containers never run again */
        if ((rc = pod_held(pod, etcd, sts, ns, name, c, why, n)) != KERR_OK || *why)
            break;
    }
    return rc;
}

/* The member pods of Etcd ns/name listed now: their hold over c into why (n bytes). */
static enum kerr pods_held(struct k8s_client *k, const cJSON *etcd, const cJSON *sts,
                           const char *ns, const char *name, const struct bstore_claim *c,
                           char *why, size_t n)
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
        rc = cmember_pods_held_in(kjson_get_arr(list, "items"), etcd, sts, ns, name, c, why, n);
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
        rc = pods_held(k, etcd, sts, ns, name, c, why, n);
    if (rc == KERR_NOMEM)
        kerr_set(err, rc, "the members' store");
    cJSON_Delete(etcd);
    cJSON_Delete(sts);
    return rc;
}

enum kerr cmember_stamp_store(const cJSON *etcd, const cJSON *secret, const cJSON *sts, int64_t gen,
                              int *same, char *why, size_t n)
{
    struct sidecar *sc;
    struct bstore_claim spec;
    struct kerr_info one = { 0 };
    enum kerr rc;

    *same = 0;
    why[0] = '\0';
    if (!sts) {
        snprintf(why, n, "its StatefulSet was not read");
        return KERR_OK;
    }
    if ((rc = sidecar_read(kjson_get(sts, "spec.template.spec"), &sc)) != KERR_OK)
        return rc;
    if (sc->kind != SIDECAR_WRITES)
        snprintf(why, n, "the store its members' backup sidecar writes %s", sc->why);
    else if (!ststore_rolled_out(sts, gen))
        snprintf(why, n,
                 "its StatefulSet's rollout is not complete: its members may run an "
                 "earlier template's store");
    else if ((rc = claims_of_placed(etcd, "spec.backup.store", secret, &spec, &one)) != KERR_OK)
        snprintf(why, n, "the store its spec names cannot be claimed (%s)", one.msg);
    else {
        *same = strcmp(sc->claim.key, spec.key) == 0 && strcmp(sc->claim.prefix, spec.prefix) == 0;
        if (!*same)
            snprintf(why, n,
                     "its members' backup sidecar writes prefix \"%s\" of container %s "
                     "(provider %s), not the store its spec names (etcd-druid has not "
                     "reconciled spec.backup.store into the StatefulSet)",
                     sc->s.prefix, sc->s.container, sc->s.provider);
        bstore_claim_release(&spec);
    }
    sidecar_free(sc);
    return rc == KERR_NOMEM ? rc : KERR_OK;
}
