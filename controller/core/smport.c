/*
 * smport - the backup sidecar's port, from a pod spec etcd-druid builds (see smport.h).
 */
#include "controller/core/smport.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"

#define LONG_FLAG    "--server-port"
#define DEFAULT_PORT 8080 /* etcdbrctl's, without the flag (pkg/server/types.go) */

/* The containers and init containers etcd-druid's StatefulSet builder makes. */
static const char *const CONTAINERS[] = { SMPORT_ETCD, SMPORT_SIDECAR };
static const char *const INITS[] = { "change-permissions", "change-backup-bucket-permissions" };

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static int fail(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;

    if (size) {
        va_start(ap, fmt);
        if (vsnprintf(why, size, fmt, ap) < 0)
            why[0] = '\0';
        va_end(ap);
    }
    return -1;
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The container named name in array arr (BORROWED), or NULL. */
static const cJSON *container_in(const cJSON *arr, const char *name)
{
    const cJSON *c;

    cJSON_ArrayForEach (c, arr) {
        const char *cn = str_of(c, "name");

        if (cn && strcmp(cn, name) == 0)
            return c;
    }
    return NULL;
}

int smport_declared(const cJSON *spec)
{
    const cJSON *c = container_in(cJSON_GetObjectItemCaseSensitive(spec, "containers"),
                                  SMPORT_SIDECAR),
                *p;

    cJSON_ArrayForEach (p, (c ? cJSON_GetObjectItemCaseSensitive(c, "ports") : NULL)) {
        const char *pn = str_of(p, "name");
        int64_t v;

        if (pn && strcmp(pn, SMPORT_NAME) == 0 &&
            kjson_get_int64(p, "containerPort", &v) == KERR_OK && v > 0 && v <= 65535)
            return (int)v;
    }
    return -1;
}

static int in_list(const char *s, const char *const *list, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (strcmp(s, list[i]) == 0)
            return 1;
    }
    return 0;
}

/* Container c declares port number port (containerPort or hostPort). */
static int declares(const cJSON *c, int port)
{
    static const char *const keys[] = { "containerPort", "hostPort" };
    const cJSON *p;
    size_t k;
    int64_t v;

    cJSON_ArrayForEach (p, cJSON_GetObjectItemCaseSensitive(c, "ports")) {
        for (k = 0; k < N_OF(keys); k++) {
            if (kjson_get_int64(p, keys[k], &v) == KERR_OK && v == port)
                return 1;
        }
    }
    return 0;
}

/*
 * The containers (key) of spec are all named in allowed, once each, and none but the sidecar
 * declares port: 0, else -1 with *why.
 */
static int containers_ok(const cJSON *spec, const char *key, const char *what,
                         const char *const *allowed, size_t n, int port, char *why, size_t size)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(spec, key), *c;
    const char *cn;

    if (arr && !cJSON_IsArray(arr))
        return fail(why, size, "its %ss are not a list", what);
    cJSON_ArrayForEach (c, arr) {
        cn = str_of(c, "name");
        if (!cn || !in_list(cn, allowed, n))
            return fail(why, size,
                        "it runs %s %s, which etcd-druid does not make (it shares the pod's "
                        "network with the sidecar)",
                        what, cn ? cn : "(unnamed)");
        if (container_in(arr, cn) != c)
            return fail(why, size, "it has %s %s twice", what, cn);
        if ((strcmp(key, "containers") != 0 || strcmp(cn, SMPORT_SIDECAR) != 0) &&
            declares(c, port))
            return fail(why, size, "its %s %s declares the sidecar's port %d", what, cn, port);
    }
    return 0;
}

/* s is a port number in plain decimal (no sign, no leading zero, no base prefix). */
static long decimal_port(const char *s)
{
    long v = 0;

    if (!s || !*s || (s[0] == '0'))
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 65535)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v <= 65535 ? v : -1;
}

/*
 * The value of a port flag at args[*i] (its own text after the flag, rest; or the next item
 * when rest is NULL, *i then advanced): 1 when it is port, else 0.
 */
static int flag_is(const cJSON *args, int *i, const char *rest, int port)
{
    if (!rest) {
        const cJSON *next = cJSON_GetArrayItem(args, ++*i);

        rest = cJSON_IsString(next) ? next->valuestring : NULL;
    }
    return decimal_port(rest) == port;
}

/* The sidecar container c's command and args listen on port: 0, else -1 with *why. */
static int args_ok(const cJSON *c, int port, char *why, size_t size)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(c, "args"), *a;
    const char *s;
    size_t l = strlen(LONG_FLAG);
    int i, n, ok, flags;

    if (cJSON_GetObjectItemCaseSensitive(c, "command"))
        return fail(why, size,
                    "its container %s has a command (etcd-druid runs the image's entrypoint)",
                    SMPORT_SIDECAR);
    if (args && !cJSON_IsArray(args))
        return fail(why, size, "its container %s's args are not a list", SMPORT_SIDECAR);
    n = cJSON_GetArraySize(args);
    for (i = 0, flags = 0; i < n; i++) {
        a = cJSON_GetArrayItem(args, i);
        if (!cJSON_IsString(a))
            return fail(why, size, "its container %s has an arg that is not a string",
                        SMPORT_SIDECAR);
        s = a->valuestring;
        if (strncmp(s, LONG_FLAG, l) == 0 && (s[l] == '\0' || s[l] == '='))
            ok = ++flags && flag_is(args, &i, s[l] ? s + l + 1 : NULL, port);
        else if (s[0] == '-' && s[1] == 'p')
            ok = ++flags && flag_is(args, &i, s[2] ? s + 2 + (s[2] == '=') : NULL, port);
        else
            ok = !(s[0] == '-' && s[1] && s[1] != '-');
        if (!ok)
            return fail(why, size,
                        "its container %s's args (%s) do not make it listen on its declared "
                        "port server %d",
                        SMPORT_SIDECAR, s, port);
    }
    if (!flags && port != DEFAULT_PORT)
        return fail(why, size,
                    "its container %s's args set no --server-port: it listens on %d, not on its "
                    "declared port server %d",
                    SMPORT_SIDECAR, DEFAULT_PORT, port);
    return 0;
}

int smport_check(const cJSON *spec, char *why, size_t size)
{
    const cJSON *eph = cJSON_GetObjectItemCaseSensitive(spec, "ephemeralContainers");
    int port = smport_declared(spec);

    if (size)
        why[0] = '\0';
    if (!cJSON_IsObject(spec))
        return fail(why, size, "it has no pod spec");
    if (port < 0)
        return fail(why, size, "it declares no port %s on container %s", SMPORT_NAME,
                    SMPORT_SIDECAR);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "hostNetwork")))
        return fail(why, size, "it runs in the node's network (hostNetwork)");
    if (eph && (!cJSON_IsArray(eph) || cJSON_GetArraySize(eph)))
        return fail(why, size, "it runs an ephemeral container");
    if (containers_ok(spec, "containers", "container", CONTAINERS, N_OF(CONTAINERS), port, why,
                      size) < 0 ||
        containers_ok(spec, "initContainers", "init container", INITS, N_OF(INITS), port, why,
                      size) < 0 ||
        args_ok(container_in(cJSON_GetObjectItemCaseSensitive(spec, "containers"), SMPORT_SIDECAR),
                port, why, size) < 0)
        return -1;
    return port;
}
