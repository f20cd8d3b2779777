/*
 * smember - the StatefulSet's own member pods and their backup sidecar's port (see smember.h).
 */
#include "controller/core/smember.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "controller/core/etcdspec.h"
#include "controller/core/smport.h"
#include "controller/core/smspec.h"

#define ORDINAL_MAX 999999L

/* The containers a member must run as its template says. */
static const char *const GENUINE[] = { SMEMBER_ETCD, SMEMBER_CONTAINER };
#define N_GENUINE (sizeof(GENUINE) / sizeof(GENUINE[0]))

/* The container named name in array arr (BORROWED), or NULL. */
static const cJSON *container_in(const cJSON *arr, const char *name)
{
    const cJSON *c;

    cJSON_ArrayForEach (c, arr) {
        const char *cn = kjson_get_str(c, "name");

        if (cn && strcmp(cn, name) == 0)
            return c;
    }
    return NULL;
}

int smember_port(const cJSON *sts)
{
    return smport_declared(kjson_get_obj(sts, "spec.template.spec"));
}

/* The ordinal of pod name "<sts>-<n>", else -1. */
static long ordinal(const char *name, const char *sts)
{
    size_t l = strlen(sts);
    const char *s;
    long v = 0;

    if (!name || strncmp(name, sts, l) != 0 || name[l] != '-')
        return -1;
    s = name + l + 1;
    if (!*s || (s[0] == '0' && s[1]))
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > ORDINAL_MAX / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

/* pod's controller ownerReference is the StatefulSet of uid. */
static int owned(const cJSON *pod, const char *uid)
{
    const cJSON *o;

    cJSON_ArrayForEach (o, kjson_get_arr(pod, "metadata.ownerReferences")) {
        const char *k = kjson_get_str(o, "kind"), *u = kjson_get_str(o, "uid");

        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "controller")))
            return k && u && strcmp(k, "StatefulSet") == 0 && strcmp(u, uid) == 0;
    }
    return 0;
}

/* a and b's member key are equal JSON, both absent included. */
static int same_field(const cJSON *a, const cJSON *b, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, key),
                *y = cJSON_GetObjectItemCaseSensitive(b, key);

    return (!x && !y) || (x && y && cJSON_Compare(x, y, 1));
}

/* Container c has volume mount m as it is: volume, path and sub path. */
static int has_mount(const cJSON *c, const cJSON *m)
{
    static const char *const keys[] = { "name", "mountPath", "subPath", "subPathExpr" };
    const cJSON *n;
    size_t k;

    cJSON_ArrayForEach (n, cJSON_GetObjectItemCaseSensitive(c, "volumeMounts")) {
        for (k = 0; k < sizeof(keys) / sizeof(keys[0]) && same_field(n, m, keys[k]); k++)
            ;
        if (k == sizeof(keys) / sizeof(keys[0]))
            return 1;
    }
    return 0;
}

/* A volumeClaimTemplate of sts is named name. */
static int claim_template(const cJSON *sts, const char *name)
{
    const cJSON *t;

    cJSON_ArrayForEach (t, kjson_get_arr(sts, "spec.volumeClaimTemplates")) {
        const char *tn = kjson_get_str(t, "metadata.name");

        if (tn && name && strcmp(tn, name) == 0)
            return 1;
    }
    return 0;
}

/*
 * pod mounts the member claim <template>-<sts>-<o> of every claim template, where the template's
 * genuine containers mount it: 0, else -1 with *why.
 */
static int claims_of(const cJSON *sts, const cJSON *pod, const char *name, long o, char *why,
                     size_t size)
{
    const cJSON *t, *v, *c, *m;
    const char *cn;
    char want[2 * SMEMBER_NAME_MAX + 24];
    size_t i;
    int n = 0;

    cJSON_ArrayForEach (t, kjson_get_arr(sts, "spec.volumeClaimTemplates")) {
        const char *tn = kjson_get_str(t, "metadata.name");

        if (!tn || !*tn)
            return smspec_why(why, size, "a volumeClaimTemplate of the StatefulSet has no name");
        snprintf(want, sizeof(want), "%s-%s-%ld", tn, name, o);
        v = container_in(kjson_get_arr(pod, "spec.volumes"), tn);
        cn = v ? kjson_get_str(v, "persistentVolumeClaim.claimName") : NULL;
        if (!cn || strcmp(cn, want) != 0)
            return smspec_why(why, size, "its volume %s is not the member claim %s", tn, want);
        n++;
    }
    if (!n)
        return smspec_why(why, size,
                          "the StatefulSet has no volumeClaimTemplate (no member claim)");
    for (i = 0; i < N_GENUINE; i++) {
        c = container_in(kjson_get_arr(sts, "spec.template.spec.containers"), GENUINE[i]);
        cJSON_ArrayForEach (m, (c ? cJSON_GetObjectItemCaseSensitive(c, "volumeMounts") : NULL)) {
            if (claim_template(sts, kjson_get_str(m, "name")) &&
                !has_mount(container_in(kjson_get_arr(pod, "spec.containers"), GENUINE[i]), m))
                return smspec_why(
                    why, size, "its container %s does not mount claim volume %s at %s", GENUINE[i],
                    kjson_get_str(m, "name"),
                    kjson_get_str(m, "mountPath") ? kjson_get_str(m, "mountPath") : "");
        }
    }
    return 0;
}

int smember_ordinals(const cJSON *sts, long *lo, long *hi)
{
    int64_t r = 1, s = 0;

    if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sts, "spec"),
                                         "replicas") &&
        kjson_get_int64(sts, "spec.replicas", &r) != KERR_OK)
        return 0;
    if (kjson_get_obj(sts, "spec.ordinals") &&
        cJSON_GetObjectItemCaseSensitive(kjson_get_obj(sts, "spec.ordinals"), "start") &&
        kjson_get_int64(sts, "spec.ordinals.start", &s) != KERR_OK)
        return 0;
    if (r < 0 || s < 0 || r > ORDINAL_MAX || s > ORDINAL_MAX - r)
        return 0;
    *lo = (long)s;
    *hi = (long)(s + r);
    return 1;
}

long smember_is_member(const cJSON *sts, const cJSON *pod, char *why, size_t size)
{
    const char *name = kjson_get_str(sts, "metadata.name"),
               *uid = kjson_get_str(sts, "metadata.uid"), *pn = kjson_get_str(pod, "metadata.name"),
               *ip = kjson_get_str(pod, "status.podIP"),
               *phase = kjson_get_str(pod, "status.phase");
    const cJSON *tc, *pc;
    char tw[SMEMBER_NAME_MAX + 160];
    long o, lo, hi;
    size_t i;

    if (size)
        why[0] = '\0';
    if (!name || !*name || !uid || !*uid)
        return smspec_why(why, size, "the StatefulSet has no name or uid");
    if (!smember_ordinals(sts, &lo, &hi))
        return smspec_why(why, size, "the StatefulSet's replicas or ordinals are not valid");
    if ((o = ordinal(pn, name)) < 0 || strlen(pn) >= SMEMBER_NAME_MAX)
        return smspec_why(why, size, "not named %s-<ordinal>", name);
    if (o < lo || o >= hi)
        return smspec_why(why, size, "ordinal %ld outside the StatefulSet's [%ld, %ld)", o, lo, hi);
    if (!owned(pod, uid))
        return smspec_why(why, size, "not controlled by StatefulSet %s (uid %s)", name, uid);
    for (i = 0; i < N_GENUINE; i++) {
        tc = container_in(kjson_get_arr(sts, "spec.template.spec.containers"), GENUINE[i]);
        pc = container_in(kjson_get_arr(pod, "spec.containers"), GENUINE[i]);
        if (!tc)
            return smspec_why(why, size, "the StatefulSet's template has no container %s",
                              GENUINE[i]);
        if (!pc || !same_field(tc, pc, "image") || !same_field(tc, pc, "command") ||
            !same_field(tc, pc, "args"))
            return smspec_why(why, size,
                              "its container %s is not the template's (image, command, args)",
                              GENUINE[i]);
    }
    if (smport_check(kjson_get_obj(sts, "spec.template.spec"), tw, sizeof(tw)) < 0)
        return smspec_why(why, size, "the StatefulSet's pod template is not etcd-druid's: %s", tw);
    if (claims_of(sts, pod, name, o, why, size) < 0 || smspec_differs(sts, pod, why, size) < 0 ||
        smport_check(kjson_get_obj(pod, "spec"), why, size) < 0)
        return -1;
    if (!phase || strcmp(phase, "Running") != 0 || !ip || !*ip || strlen(ip) >= SMEMBER_IP_MAX)
        return smspec_why(why, size, "not Running with a pod IP");
    return o;
}

enum kerr smember_pick(const cJSON *sts, const cJSON *pods, struct smember *out, int max, int *n,
                       struct kerr_info *err)
{
    const char *name = kjson_get_str(sts, "metadata.name"),
               *uid = kjson_get_str(sts, "metadata.uid");
    char why[SMEMBER_NAME_MAX + 160];
    int port = smember_port(sts);
    const cJSON *pod;
    long lo, hi, o;

    *n = 0;
    if (!name || !uid || !*uid || max <= 0)
        return kerr_set(err, KERR_INVAL, "the StatefulSet has no name or uid");
    if (port < 0)
        return kerr_set(err, KERR_INVAL,
                        "the pod template of StatefulSet %s declares no port %s on container %s",
                        name, SMEMBER_PORT_NAME, SMEMBER_CONTAINER);
    if (smport_check(kjson_get_obj(sts, "spec.template.spec"), why, sizeof(why)) < 0)
        return kerr_set(err, KERR_INVAL,
                        "the pod template of StatefulSet %s is not one etcd-druid builds around "
                        "the sidecar's port, which is not asked: %s",
                        name, why);
    if (!smember_ordinals(sts, &lo, &hi))
        return kerr_set(err, KERR_INVAL,
                        "StatefulSet %s: its spec.replicas or spec.ordinals.start is not valid",
                        name);
    if (hi == lo)
        return kerr_set(err, KERR_INVAL, "StatefulSet %s has no member (0 replicas)", name);
    if (hi - lo > max)
        return kerr_set(err, KERR_INVAL, "StatefulSet %s has %ld members, more than the %d asked",
                        name, hi - lo, max);
    for (o = lo; o < hi; o++) {
        struct smember *m = &out[*n];

        snprintf(m->pod, sizeof(m->pod), "%s-%ld", name, o);
        cJSON_ArrayForEach (pod, pods) {
            const char *pn = kjson_get_str(pod, "metadata.name");

            if (pn && strcmp(pn, m->pod) == 0)
                break; /* a name twice (hostile input): the first one decides */
        }
        if (!pod) {
            *n = 0;
            return kerr_set(err, KERR_INVAL, "member pod %s of StatefulSet %s does not exist",
                            m->pod, name);
        }
        if (smember_is_member(sts, pod, why, sizeof(why)) != o) {
            *n = 0;
            return kerr_set(err, KERR_INVAL,
                            "pod %s is not a member of StatefulSet %s that can be asked: %s",
                            m->pod, name, why);
        }
        snprintf(m->ip, sizeof(m->ip), "%s", kjson_get_str(pod, "status.podIP"));
        m->ordinal = o;
        m->port = port;
        (*n)++;
    }
    return KERR_OK;
}

enum kerr smember_list(struct k8s_client *client, const char *ns, const cJSON *sts,
                       struct smember *out, int max, int *n, int *api, struct kerr_info *err)
{
    cJSON *list = NULL;
    enum kerr rc;

    *n = 0;
    rc = k8s_list_all(client, &ETCDSPEC_RES_POD, ns, NULL, &list, err);
    if (rc != KERR_OK) {
        *api = rc == KERR_API || rc == KERR_TOOMANY || rc == KERR_HTTP || rc == KERR_TIMEOUT;
        return kerr_wrap(err, "listing the pods of %s", ns);
    }
    rc = smember_pick(sts, kjson_get_arr(list, "items"), out, max, n, err);
    cJSON_Delete(list);
    return rc;
}
