/*
 * libFuzzer target: common/blocal, the directory of a Local store on the node, from the
 * hostPath of a tenant's backup Secret (hostile: the tenant writes it), a container and a
 * prefix.
 *
 * Input: hostPath, container and prefix, split at the first two NULs; the hostPath is also
 * given base64-encoded as a Secret's data.hostPath.
 * Properties checked: it never crashes; a directory it returns is canonical (no leading '/',
 * no "." or ".." segment, no "//", no trailing '/'), fits its buffer, and lies under the host
 * directory hostPath + "/" + container as cleaned; the Secret's value decodes to the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "common/blocal.h"
#include "common/crypto.h"
#include "common/kpath.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dup_n(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);

    if (!s)
        abort();
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static void canonical(const char *d)
{
    size_t n = strlen(d);

    if (d[0] == '/' || (n && d[n - 1] == '/') || strstr(d, "//") || strcmp(d, ".") == 0 ||
        strcmp(d, "..") == 0 || strncmp(d, "./", 2) == 0 || strncmp(d, "../", 3) == 0 ||
        strstr(d, "/./") || strstr(d, "/../") || (n >= 2 && strcmp(d + n - 2, "/.") == 0) ||
        (n >= 3 && strcmp(d + n - 3, "/..") == 0))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p1 = memchr(data, 0, size), *p2;
    size_t n1 = p1 ? (size_t)(p1 - data) : size, rest = p1 ? size - n1 - 1 : 0, n2;
    char *h, *c, *x, *mount, *mclean, *b64 = NULL, out[8192], tiny[8], hp[BLOCAL_HOSTPATH_MAX + 1];
    size_t blen = 0;
    cJSON *secret;

    p2 = p1 ? memchr(p1 + 1, 0, rest) : NULL;
    n2 = p2 ? (size_t)(p2 - p1 - 1) : rest;
    h = dup_n(data, n1);
    c = dup_n(p1 ? p1 + 1 : data, p1 ? n2 : 0);
    x = dup_n(p2 ? p2 + 1 : data, p2 ? rest - n2 - 1 : 0);
    (void)blocal_dir(h, c, x, tiny, sizeof(tiny), NULL);
    if (blocal_dir(h, c, x, out, sizeof(out), NULL) == KERR_OK) {
        canonical(out);
        mount = malloc(strlen(h) + strlen(c) + 3);
        mclean = malloc(strlen(h) + strlen(c) + 3);
        if (!mount || !mclean)
            abort();
        snprintf(mount, strlen(h) + strlen(c) + 3, "%s/%s", h, c);
        if (kpath_clean(mount, mclean, strlen(h) + strlen(c) + 3) != KERR_OK)
            abort();
        /* under the mount: its cleaned form (without the leading '/') starts the directory */
        if (strcmp(mclean, "/") != 0 &&
            (strncmp(out, mclean + 1, strlen(mclean + 1)) != 0 ||
             (out[strlen(mclean + 1)] != '\0' && out[strlen(mclean + 1)] != '/')))
            abort();
        free(mount);
        free(mclean);
    }
    if (crypto_b64_encode(data, n1, &b64, &blen, NULL) == KERR_OK) {
        secret = cJSON_CreateObject();
        if (!secret ||
            !cJSON_AddStringToObject(cJSON_AddObjectToObject(secret, "data"), "hostPath", b64))
            abort();
        if (blocal_hostpath(secret, hp, sizeof(hp), NULL) == KERR_OK &&
            (strlen(hp) != n1 || memcmp(hp, data, n1) != 0))
            abort();
        cJSON_Delete(secret);
        free(b64);
    }
    free(h);
    free(c);
    free(x);
    return 0;
}
