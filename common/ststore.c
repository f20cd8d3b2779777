/* ststore - the store an Etcd's members write, from its StatefulSet; see ststore.h. */
#include "common/ststore.h"

#include <stdio.h>
#include <string.h>

#include "common/kjson.h"

#define ARG_PROVIDER "--storage-provider="
#define ARG_PREFIX   "--store-prefix="
#define ARG_ENDPOINT "--store-endpoint-override="

/* Copy v into out (cap bytes): 0, or -1 when it does not fit. */
static int put(char *out, size_t cap, const char *v)
{
    size_t n = strlen(v);

    if (n >= cap)
        return -1;
    memcpy(out, v, n + 1);
    return 0;
}

/* The container of the template named name, or NULL; *twice set when two are. */
static const cJSON *named(const cJSON *list, const char *name, int *twice)
{
    const cJSON *it, *found = NULL;

    cJSON_ArrayForEach (it, list) {
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "name"));

        if (v && strcmp(v, name) == 0) {
            if (found)
                *twice = 1;
            found = it;
        }
    }
    return found;
}

/*
 * The value of the one "<flag>=<value>" among the strings of list into out: 1 found, 0
 * absent, -1 refused (given twice, the bare flag whose value is the next arg, a non-string,
 * a value too long). *seen counts the matches across calls.
 */
static int arg_in(const cJSON *list, const char *flag, char *out, size_t cap, int *seen)
{
    const cJSON *a;
    size_t fl = strlen(flag) - 1; /* without its '=' */

    cJSON_ArrayForEach (a, list) {
        const char *s = cJSON_GetStringValue(a);

        if (!s)
            return -1;
        if (strncmp(s, flag, fl) != 0 || (s[fl] != '=' && s[fl] != '\0'))
            continue;
        if (s[fl] == '\0' || (*seen)++ || put(out, cap, s + fl + 1) != 0)
            return -1;
    }
    return 0;
}

/* The flag's value from the container's command and args (both are the sidecar's argv). */
static int arg_of(const cJSON *c, const char *flag, char *out, size_t cap)
{
    int seen = 0;

    if (arg_in(kjson_get(c, "command"), flag, out, cap, &seen) < 0 ||
        arg_in(kjson_get(c, "args"), flag, out, cap, &seen) < 0)
        return -1;
    return seen;
}

static enum kerr refuse(char *why, size_t n, const char *msg, const char *what)
{
    snprintf(why, n, "the pod's container %s: %s%s", STSTORE_CONTAINER, msg, what ? what : "");
    return KERR_INVAL;
}

/* The env STORAGE_CONTAINER of c into out: 0, or -1 (absent, twice, not a plain value). */
static int env_bucket(const cJSON *c, char *out, size_t cap)
{
    const cJSON *env = kjson_get(c, "env"), *e;
    int twice = 0;

    if (env && !cJSON_IsArray(env))
        return -1;
    e = named(env, STSTORE_ENV_BUCKET, &twice);
    if (!e || twice || kjson_has(e, "valueFrom"))
        return -1;
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "value")) &&
                   put(out, cap, kjson_get_str(e, "value")) == 0 && *out
               ? 0
               : -1;
}

/* A Local store's hostPath: the volume's path without "/<container>". */
static enum kerr local_path(const cJSON *spec, struct ststore *s, char *why, size_t n)
{
    const cJSON *vol;
    const char *path;
    size_t pl, cl = strlen(s->container);
    int twice = 0;

    vol = named(kjson_get(spec, "volumes"), STSTORE_LOCAL_VOL, &twice);
    path = kjson_get_str(vol, "hostPath.path");
    if (!vol || twice || !path)
        return refuse(why, n, "a Local store without one hostPath volume ", STSTORE_LOCAL_VOL);
    pl = strlen(path);
    if (pl <= cl + 1 || path[pl - cl - 1] != '/' || strcmp(path + pl - cl, s->container) != 0 ||
        pl - cl - 1 > BLOCAL_HOSTPATH_MAX)
        return refuse(why, n, "the Local volume's path does not end in the container: ", path);
    memcpy(s->hostpath, path, pl - cl - 1);
    s->hostpath[pl - cl - 1] = '\0';
    return KERR_OK;
}

enum kerr ststore_read(const cJSON *sts, struct ststore *out, char *why, size_t n)
{
    return ststore_read_spec(kjson_get(sts, "spec.template.spec"), out, why, n);
}

enum kerr ststore_read_spec(const cJSON *spec, struct ststore *out, char *why, size_t n)
{
    const cJSON *cs = kjson_get(spec, "containers"), *c, *args;
    int twice = 0, r;

    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    if (!cJSON_IsArray(cs))
        return refuse(why, n, "no pod containers", NULL);
    c = named(cs, STSTORE_CONTAINER, &twice);
    if (!c || twice)
        return refuse(why, n, twice ? "named twice" : "absent", NULL);
    args = kjson_get(c, "args");
    if (!cJSON_IsArray(args) ||
        (kjson_has(c, "command") && !cJSON_IsArray(kjson_get(c, "command"))))
        return refuse(why, n, "no args", NULL);
    /* etcd-druid renders no store args for an Etcd without a backup store: nothing written */
    if (arg_of(c, ARG_PROVIDER, out->provider, sizeof(out->provider)) == 0 &&
        arg_of(c, ARG_PREFIX, out->prefix, sizeof(out->prefix)) == 0 &&
        arg_of(c, ARG_ENDPOINT, out->endpoint, sizeof(out->endpoint)) == 0 &&
        !named(kjson_get(c, "env"), STSTORE_ENV_BUCKET, &twice)) {
        snprintf(why, n, "the pod's container %s names no backup store", STSTORE_CONTAINER);
        return KERR_NOTFOUND;
    }
    if (arg_of(c, ARG_PROVIDER, out->provider, sizeof(out->provider)) != 1)
        return refuse(why, n, "not exactly one readable ", ARG_PROVIDER);
    if (!bstore_provider_kind(out->provider))
        return refuse(why, n, "a provider etcd-warden does not know: ", out->provider);
    if (arg_of(c, ARG_PREFIX, out->prefix, sizeof(out->prefix)) != 1)
        return refuse(why, n, "not exactly one readable ", ARG_PREFIX);
    r = arg_of(c, ARG_ENDPOINT, out->endpoint, sizeof(out->endpoint));
    if (r < 0)
        return refuse(why, n, "more than one or an unreadable ", ARG_ENDPOINT);
    out->has_endpoint = r == 1;
    if (env_bucket(c, out->container, sizeof(out->container)) != 0)
        return refuse(why, n, "not exactly one plain env ", STSTORE_ENV_BUCKET);
    if (strcmp(bstore_provider_kind(out->provider), "Local") == 0)
        return local_path(spec, out, why, n);
    return KERR_OK;
}

bool ststore_rolled_out(const cJSON *sts, int64_t want)
{
    int64_t gen = 0, seen = 0;
    const char *cur = kjson_get_str(sts, "status.currentRevision");
    const char *upd = kjson_get_str(sts, "status.updateRevision");

    if (kjson_get_int64(sts, "metadata.generation", &gen) != KERR_OK ||
        kjson_get_int64(sts, "status.observedGeneration", &seen) != KERR_OK)
        return false;
    if (want > 0 ? seen < want || want > gen : seen != gen)
        return false;
    return cur && upd && *cur && strcmp(cur, upd) == 0;
}

enum kerr ststore_claim(const struct ststore *s, struct bstore_claim *c, struct kerr_info *err)
{
    const char *kind = bstore_provider_kind(s->provider);

    if (kind && strcmp(kind, "Local") == 0)
        return bstore_local_claim_init(c, s->hostpath, s->container, s->prefix, err);
    return bstore_claim_init(c, s->provider, s->container, s->has_endpoint ? s->endpoint : NULL,
                             s->prefix, err);
}
