/* ststore - the store an Etcd's members write, from its StatefulSet; see ststore.h. */
#include "common/ststore.h"

#include <stdio.h>
#include <string.h>

#include "common/kjson.h"

#define ARG_PROVIDER "--storage-provider="
#define ARG_PREFIX   "--store-prefix="
#define ARG_ENDPOINT "--store-endpoint-override="
#define ARG_BUCKET   "--store-container="

/* The sidecar's home directories as etcd-druid mounts a Local store under them
 * (MountPathLocalStore: /home/nonroot, /root with spec.runAsRoot), each with the user etcd-druid
 * runs the pod as (getPodSecurityContext: 65532, 0 with spec.runAsRoot), whose home the
 * container runtime gives $HOME; etcdbrctl writes a Local store at $HOME/<container>/<prefix>.
 * No runAsUser at all is the image's user, etcdbrctl's image runs as nonroot. */
static const struct {
    const char *dir;
    int64_t uid;
    bool unset_ok;
} homes[] = { { "/home/nonroot/", 65532, true }, { "/root/", 0, false } };

/* The user the container c of pod spec runs as: 1 with *uid (its securityContext's runAsUser,
 * else the pod's), 0 when neither sets one, -1 when one is not an integer. */
static int run_as(const cJSON *spec, const cJSON *c, int64_t *uid)
{
    const cJSON *sc[] = { kjson_get(c, "securityContext.runAsUser"),
                          kjson_get(spec, "securityContext.runAsUser") };

    for (size_t i = 0; i < 2; i++)
        if (sc[i])
            return kjson_get_int64(i == 0 ? c : spec, "securityContext.runAsUser", uid) == KERR_OK
                       ? 1
                       : -1;
    return 0;
}

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

/* The container c (NULL: the sidecar by its name) cannot be read: why, KERR_INVAL. */
static enum kerr refuse(char *why, size_t n, const cJSON *c, const char *msg, const char *what)
{
    const char *name = c ? kjson_get_str(c, "name") : STSTORE_CONTAINER;

    snprintf(why, n, "the pod's container %.63s: %s%.200s", name ? name : "(unnamed)", msg,
             what ? what : "");
    return KERR_INVAL;
}

/*
 * The sidecar's argv as etcd-druid renders it: strings only, each flag "--name=value". The
 * kubelet expands "$(VAR)" in command and args from the container's env, and pflag gives a
 * bare "--flag" (or "-f") the next arg, and takes nothing after "--" as a flag: what the
 * sidecar then runs cannot be read from the strings. NULL, or the first arg that is not plain.
 */
static const char *argv_not_plain(const cJSON *list)
{
    const cJSON *a;

    cJSON_ArrayForEach (a, list) {
        const char *s = cJSON_GetStringValue(a);

        if (!s)
            return "(not a string)";
        if (strstr(s, "$(") || (s[0] == '-' && !strchr(s, '=')))
            return s;
    }
    return NULL;
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
                   put(out, cap, kjson_get_str(e, "value")) == 0 && *out && !strstr(out, "$(")
               ? 0
               : -1;
}

/* The container of the store: --store-container when given and not empty (etcdbrctl takes
 * the flag before the env), else the env. 0, or -1 (unreadable, absent). */
static int bucket_of(const cJSON *c, char *out, size_t cap)
{
    int r = arg_of(c, ARG_BUCKET, out, cap);

    if (r < 0)
        return -1;
    if (r == 1 && *out)
        return 0;
    return env_bucket(c, out, cap);
}

/* 1 when the one volumeMount of c (in pod spec) named local-backup is on $HOME/<container>
 * for one of etcd-druid's homes, the container running as that home's user, without a
 * subPath: then the sidecar's $HOME/<container> is the volume's root. 0 otherwise. */
static int local_mounted(const cJSON *spec, const cJSON *c, const char *container)
{
    const cJSON *m;
    int twice = 0, user;
    const char *at;
    size_t al, hl, cl = strlen(container);
    int64_t uid = -1;

    m = named(kjson_get(c, "volumeMounts"), STSTORE_LOCAL_VOL, &twice);
    at = kjson_get_str(m, "mountPath");
    if (!m || twice || !at || kjson_has(m, "subPath") || kjson_has(m, "subPathExpr"))
        return 0;
    for (al = strlen(at); al > 1 && at[al - 1] == '/';)
        al--;
    user = run_as(spec, c, &uid);
    for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
        hl = strlen(homes[i].dir);
        if (al == hl + cl && strncmp(at, homes[i].dir, hl) == 0 &&
            strncmp(at + hl, container, cl) == 0)
            return user == 1 ? uid == homes[i].uid : user == 0 && homes[i].unset_ok;
    }
    return 0;
}

/*
 * A Local store's hostPath: the volume's path without "/<container>". etcdbrctl writes at
 * $HOME/<container>/<prefix>: the container must be one path segment, the volume mounted on
 * $HOME/<container> of etcd-druid's homes, and $HOME not set by the template (no env HOME,
 * no envFrom that could set it).
 */
static enum kerr local_path(const cJSON *spec, const cJSON *c, struct ststore *s, char *why,
                            size_t n)
{
    const cJSON *vol;
    const char *path;
    size_t pl, cl = strlen(s->container);
    int twice = 0;

    if (strchr(s->container, '/') || strcmp(s->container, ".") == 0 ||
        strcmp(s->container, "..") == 0)
        return refuse(why, n, c, "a Local container that is not one path segment: ", s->container);
    if (named(kjson_get(c, "env"), "HOME", &twice) || kjson_has(c, "envFrom"))
        return refuse(why, n, c,
                      "a Local store under a $HOME the template sets (env HOME or envFrom)", NULL);
    if (!local_mounted(spec, c, s->container))
        return refuse(why, n, c,
                      "a Local store whose volume is not mounted once, without subPath, on "
                      "/home/nonroot/ (user 65532 or none) or /root/ (user 0) + the container: ",
                      s->container);

    vol = named(kjson_get(spec, "volumes"), STSTORE_LOCAL_VOL, &twice);
    path = kjson_get_str(vol, "hostPath.path");
    if (!vol || twice || !path)
        return refuse(why, n, c, "a Local store without one hostPath volume ", STSTORE_LOCAL_VOL);
    pl = strlen(path);
    if (pl <= cl + 1 || path[pl - cl - 1] != '/' || strcmp(path + pl - cl, s->container) != 0 ||
        pl - cl - 1 > BLOCAL_HOSTPATH_MAX)
        return refuse(why, n, c, "the Local volume's path does not end in the container: ", path);
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
    const cJSON *cs = kjson_get(spec, "containers"), *c;
    int twice = 0;

    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    if (!cJSON_IsArray(cs))
        return refuse(why, n, NULL, "no pod containers", NULL);
    c = named(cs, STSTORE_CONTAINER, &twice);
    if (!c || twice)
        return refuse(why, n, NULL, twice ? "named twice" : "absent", NULL);
    return ststore_read_container(spec, c, out, why, n);
}

/* Whether s contains a store flag of etcdbrctl's. */
static int has_store_flag(const char *s)
{
    static const char *const flags[] = { "--storage-provider", "--store-prefix",
                                         "--store-container", "--store-endpoint-override" };

    for (size_t i = 0; s && i < sizeof(flags) / sizeof(flags[0]); i++)
        if (strstr(s, flags[i]))
            return 1;
    return 0;
}

/* Whether one of the strings of list contains a store flag of etcdbrctl's. */
static int names_store_flag(const cJSON *list)
{
    const cJSON *a;

    cJSON_ArrayForEach (a, list)
        if (has_store_flag(cJSON_GetStringValue(a)))
            return 1;
    return 0;
}

bool ststore_looks_like_sidecar(const cJSON *c)
{
    const char *name = kjson_get_str(c, "name"), *image = kjson_get_str(c, "image");
    const cJSON *e;
    int twice = 0;

    if (name && strcmp(name, STSTORE_CONTAINER) == 0)
        return true;
    if (image && (strstr(image, "etcdbrctl") || strstr(image, "etcd-backup-restore")))
        return true;
    if (names_store_flag(kjson_get(c, "command")) || names_store_flag(kjson_get(c, "args")))
        return true;
    /* a value the kubelet puts into its argv by $(VAR) */
    cJSON_ArrayForEach (e, kjson_get(c, "env"))
        if (has_store_flag(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "value"))))
            return true;
    return named(kjson_get(c, "env"), STSTORE_ENV_BUCKET, &twice) != NULL;
}

enum kerr ststore_read_container(const cJSON *spec, const cJSON *c, struct ststore *out, char *why,
                                 size_t n)
{
    const cJSON *args;
    const char *bad;
    int twice = 0, r;

    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    args = kjson_get(c, "args");
    if (!cJSON_IsArray(args) ||
        (kjson_has(c, "command") && !cJSON_IsArray(kjson_get(c, "command"))))
        return refuse(why, n, c, "no args", NULL);
    if ((bad = argv_not_plain(kjson_get(c, "command"))) || (bad = argv_not_plain(args)))
        return refuse(why, n, c,
                      "an arg that is not a plain \"--flag=value\" (a $(VAR) the kubelet "
                      "expands, a bare flag taking the next arg, or \"--\"): ",
                      bad);
    /* etcd-druid renders no store args for an Etcd without a backup store: nothing written;
     * a store flag inside another arg ("sh -c '... --store-prefix=x'") is not "no store" */
    if (!names_store_flag(kjson_get(c, "command")) && !names_store_flag(args) &&
        arg_of(c, ARG_PROVIDER, out->provider, sizeof(out->provider)) == 0 &&
        arg_of(c, ARG_PREFIX, out->prefix, sizeof(out->prefix)) == 0 &&
        arg_of(c, ARG_ENDPOINT, out->endpoint, sizeof(out->endpoint)) == 0 &&
        arg_of(c, ARG_BUCKET, out->container, sizeof(out->container)) == 0 &&
        !named(kjson_get(c, "env"), STSTORE_ENV_BUCKET, &twice)) {
        snprintf(why, n, "the pod's container %.63s names no backup store",
                 kjson_get_str(c, "name") ? kjson_get_str(c, "name") : "(unnamed)");
        return KERR_NOTFOUND;
    }
    if (arg_of(c, ARG_PROVIDER, out->provider, sizeof(out->provider)) != 1)
        return refuse(why, n, c, "not exactly one readable ", ARG_PROVIDER);
    if (!bstore_provider_kind(out->provider))
        return refuse(why, n, c, "a provider etcd-warden does not know: ", out->provider);
    if (arg_of(c, ARG_PREFIX, out->prefix, sizeof(out->prefix)) != 1)
        return refuse(why, n, c, "not exactly one readable ", ARG_PREFIX);
    r = arg_of(c, ARG_ENDPOINT, out->endpoint, sizeof(out->endpoint));
    if (r < 0)
        return refuse(why, n, c, "more than one or an unreadable ", ARG_ENDPOINT);
    out->has_endpoint = r == 1;
    if (bucket_of(c, out->container, sizeof(out->container)) != 0)
        return refuse(why, n, c, "neither one readable " ARG_BUCKET " nor exactly one plain env ",
                      STSTORE_ENV_BUCKET);
    if (strcmp(bstore_provider_kind(out->provider), "Local") == 0)
        return local_path(spec, c, out, why, n);
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
