/*
 * smember - the StatefulSet's own member pods and their backup sidecar's port (see smember.h).
 */
#include "controller/hibernation/smember.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "controller/core/etcdspec.h"

#define ORDINAL_MAX 999999L

int smember_port(const cJSON *sts)
{
    const cJSON *c, *p;

    cJSON_ArrayForEach (c, kjson_get_arr(sts, "spec.template.spec.containers")) {
        const char *cn = kjson_get_str(c, "name");

        if (!cn || strcmp(cn, SMEMBER_CONTAINER) != 0)
            continue;
        cJSON_ArrayForEach (p, kjson_get_arr(c, "ports")) {
            const char *pn = kjson_get_str(p, "name");
            int64_t v;

            if (pn && strcmp(pn, SMEMBER_PORT_NAME) == 0 &&
                kjson_get_int64(p, "containerPort", &v) == KERR_OK && v > 0 && v <= 65535)
                return (int)v;
        }
    }
    return -1;
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

static int by_ordinal(const void *a, const void *b)
{
    const struct smember *x = a, *y = b;

    return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

enum kerr smember_pick(const cJSON *sts, const cJSON *pods, struct smember *out, int max, int *n,
                       struct kerr_info *err)
{
    const char *name = kjson_get_str(sts, "metadata.name"),
               *uid = kjson_get_str(sts, "metadata.uid");
    int port = smember_port(sts), worst = -1;
    const cJSON *pod;

    *n = 0;
    if (!name || !uid || !*uid || max <= 0)
        return kerr_set(err, KERR_INVAL, "the StatefulSet has no name or uid");
    if (port < 0)
        return kerr_set(err, KERR_INVAL,
                        "the pod template of StatefulSet %s declares no port %s on container %s",
                        name, SMEMBER_PORT_NAME, SMEMBER_CONTAINER);
    cJSON_ArrayForEach (pod, pods) {
        const char *pn = kjson_get_str(pod, "metadata.name"),
                   *ip = kjson_get_str(pod, "status.podIP");
        const char *phase = kjson_get_str(pod, "status.phase");
        long o = ordinal(pn, name);
        struct smember *m;
        int i;

        if (o < 0 || !owned(pod, uid) || !phase || strcmp(phase, "Running") != 0 || !ip || !*ip ||
            strlen(ip) >= SMEMBER_IP_MAX || strlen(pn) >= SMEMBER_NAME_MAX)
            continue;
        for (i = 0; i < *n && out[i].ordinal != o; i++)
            ;
        if (i < *n) /* a name twice (hostile input): the first one stays */
            continue;
        if (*n < max) {
            m = &out[(*n)++];
        } else { /* full: replace the highest ordinal when this one is lower */
            for (worst = 0, i = 1; i < max; i++)
                if (out[i].ordinal > out[worst].ordinal)
                    worst = i;
            if (out[worst].ordinal <= o)
                continue;
            m = &out[worst];
        }
        snprintf(m->pod, sizeof(m->pod), "%s", pn);
        snprintf(m->ip, sizeof(m->ip), "%s", ip);
        m->ordinal = o;
        m->port = port;
    }
    if (*n == 0)
        return kerr_set(err, KERR_INVAL,
                        "StatefulSet %s has no member pod (%s-<n>, owned by it) Running with a "
                        "pod IP",
                        name, name);
    qsort(out, (size_t)*n, sizeof(*out), by_ordinal);
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
