/* blocal - where a Local backup store is on the node; see blocal.h. */
#include "common/blocal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/kjson.h"
#include "common/kpath.h"

enum kerr blocal_hostpath(const cJSON *secret, char *out, size_t n, struct kerr_info *err)
{
    const cJSON *v = secret ? kjson_get(secret, "data.hostPath") : NULL;
    unsigned char *raw = NULL;
    size_t len = 0;
    enum kerr rc = KERR_OK;

    if (!v) { /* no Secret, or no key: etcd-druid's default */
        if (strlen(BLOCAL_HOSTPATH_DEFAULT) >= n)
            return kerr_set(err, KERR_TOOBIG, "hostPath does not fit");
        memcpy(out, BLOCAL_HOSTPATH_DEFAULT, sizeof(BLOCAL_HOSTPATH_DEFAULT));
        return KERR_OK;
    }
    if (!cJSON_IsString(v) ||
        crypto_b64_decode(v->valuestring, strlen(v->valuestring), &raw, &len, NULL) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "the Secret's hostPath is not base64");
    if (len > BLOCAL_HOSTPATH_MAX || len >= n)
        rc = kerr_set(err, KERR_TOOBIG, "the Secret's hostPath is longer than %d bytes",
                      len > BLOCAL_HOSTPATH_MAX ? BLOCAL_HOSTPATH_MAX : (int)n - 1);
    else if (len && memchr(raw, '\0', len))
        rc = kerr_set(err, KERR_INVAL, "the Secret's hostPath holds a NUL byte");
    else {
        if (len)
            memcpy(out, raw, len);
        out[len] = '\0';
    }
    free(raw);
    return rc;
}

/* 1 when p has a ".." segment. */
static int backsteps(const char *p)
{
    for (const char *s = p; (s = strstr(s, "..")); s += 2)
        if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
            return 1;
    return 0;
}

enum kerr blocal_dir(const char *hostpath, const char *container, const char *prefix, char *out,
                     size_t n, struct kerr_info *err)
{
    const char *h = hostpath ? hostpath : BLOCAL_HOSTPATH_DEFAULT;
    char *mount = NULL, *rel = NULL, *joined = NULL, *clean = NULL;
    size_t need;
    enum kerr rc = KERR_OK;

    if (!container || !*container)
        return kerr_set(err, KERR_INVAL, "no container");
    if (!prefix)
        return kerr_set(err, KERR_INVAL, "no prefix");
    if (strlen(prefix) > BLOCAL_PREFIX_MAX)
        return kerr_set(err, KERR_INVAL, "prefix of %zu bytes: at most %d", strlen(prefix),
                        BLOCAL_PREFIX_MAX);
    if (strlen(h) > BLOCAL_HOSTPATH_MAX)
        return kerr_set(err, KERR_INVAL, "hostPath of %zu bytes: at most %d", strlen(h),
                        BLOCAL_HOSTPATH_MAX);
    need = strlen(h) + strlen(container) + strlen(prefix) + 4;
    mount = malloc(need);
    rel = malloc(need);
    joined = malloc(need);
    clean = malloc(need);
    if (!mount || !rel || !joined || !clean) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
        goto out;
    }
    /* etcd-druid's volume: hostPath + "/" + container, a string */
    snprintf(mount, need, "%s/%s", h, container);
    if (mount[0] != '/') {
        rc = kerr_set(err, KERR_INVAL,
                      "the Local store's host directory \"%.200s\" (the backup Secret's hostPath "
                      "+ \"/\" + container) is not absolute: set hostPath to an absolute path",
                      mount);
        goto out;
    }
    if (backsteps(mount)) {
        rc = kerr_set(err, KERR_INVAL,
                      "the Local store's host directory \"%.200s\" (the backup Secret's hostPath "
                      "+ \"/\" + container) has a \"..\" segment, which a hostPath volume may not "
                      "have",
                      mount);
        goto out;
    }
    /* the sidecar's path.Join(home, container, prefix) cleans the whole: the directory must
     * stay inside the mount ("/../x" leaves it as "../x" does) */
    if ((rc = kpath_clean(mount, rel, need)) != KERR_OK) {
        rc = kerr_set(err, rc, "the host directory cannot be cleaned");
        goto out;
    }
    snprintf(joined, need, "%s/%s", mount, prefix);
    if ((rc = kpath_clean(joined, clean, need)) != KERR_OK) {
        rc = kerr_set(err, rc, "directory cannot be cleaned");
        goto out;
    }
    if (strcmp(rel, "/") != 0 && (strncmp(clean, rel, strlen(rel)) != 0 ||
                                  (clean[strlen(rel)] != '\0' && clean[strlen(rel)] != '/'))) {
        rc = kerr_set(err, KERR_INVAL,
                      "prefix \"%.200s\" leaves its container (the backup sidecar would write "
                      "outside the mounted host directory)",
                      prefix);
        goto out;
    }
    if (strlen(clean + strspn(clean, "/")) >= n)
        rc = kerr_set(err, KERR_TOOBIG, "the directory does not fit");
    else
        memmove(out, clean + strspn(clean, "/"), strlen(clean + strspn(clean, "/")) + 1);
out:
    free(mount);
    free(rel);
    free(joined);
    free(clean);
    return rc;
}
