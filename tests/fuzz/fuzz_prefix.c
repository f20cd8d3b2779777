/*
 * libFuzzer target: what the one-prefix-one-cluster rule reads from
 * untrusted objects. The input is an Etcd or BackupEntry as JSON (projected
 * by webhook/prefix) up to the first NUL, and after it two prefixes
 * separated by a second NUL, checked against kpath's promises (aborts
 * otherwise): cleaning is idempotent and leaves no empty, "." or ".."-after-
 * a-name element nor a trailing '/'; and against bstore's: canonical
 * prefixes are fixed points, a prefix overlaps itself and the whole
 * container, overlap is symmetric, a claim overlaps the claim of its
 * canonical form whatever the endpoints and provider spellings, a store not
 * understood overlaps every claim of its container, and the unparsable-prefix
 * check holds for every canonical prefix and a fuzzed "v1" segment.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/kpath.h"
#include "webhook/prefix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void project(const char *text, size_t len)
{
    static const enum prefix_kind kinds[] = { PREFIX_ETCD, PREFIX_ENTRY };
    struct strlist values;
    cJSON *doc = NULL, *out = NULL;

    if (kjson_parse(text, len, NULL, &doc, NULL, NULL) != KERR_OK)
        return;
    for (size_t i = 0; i < 2; i++) {
        if (prefix_project((void *)&kinds[i], doc, &out) != KERR_OK)
            continue;
        strlist_init(&values);
        if (prefix_index_store(NULL, out, &values) != KERR_OK)
            abort();
        strlist_release(&values);
        cJSON_Delete(out);
    }
    cJSON_Delete(doc);
}

static void cleaned(const char *p)
{
    size_t n = strlen(p) + 2;
    char *a = malloc(n), *b = malloc(n);

    if (!a || !b || kpath_clean(p, a, n) != KERR_OK || kpath_clean(a, b, n) != KERR_OK)
        abort();
    if (strcmp(a, b) != 0 || !*a || strstr(a, "//") || strstr(a, "/./") ||
        (strlen(a) > 1 && a[strlen(a) - 1] == '/'))
        abort();
    free(a);
    free(b);
}

static char s_key[BSTORE_KEY_MAX];

/* bstore: canonical forms are fixed points, without leading '/', and overlap themselves. */
static void canonical(const char *p, const char *q)
{
    size_t n = strlen(p) + 2, m = strlen(p) + 8;
    char *a = malloc(n), *b = malloc(n), *v = malloc(m);
    struct bstore_claim x, y;

    if (!a || !b || !v || bstore_prefix(p, a, n) != KERR_OK || bstore_prefix(a, b, n) != KERR_OK ||
        strcmp(a, b) != 0 || a[0] == '/' || !bstore_prefix_overlap(a, a) ||
        !bstore_prefix_overlap(a, "") || bstore_prefix_overlap(a, q) != bstore_prefix_overlap(q, a))
        abort();
    snprintf(v, m, "%s%sv1", a, *a ? "/" : "");
    if (!bstore_prefix_unparsable(v))
        abort();
    if (bstore_claim_init(&x, "aws", "bkt", p, p, NULL) == KERR_OK) {
        if (bstore_claim_init(&y, "s3", "bkt", q, a, NULL) != KERR_OK ||
            !bstore_claims_overlap(&x, &y) || !bstore_unkeyed_overlap(x.key, "bkt") ||
            !bstore_unkeyed_overlap(x.key, NULL))
            abort();
        bstore_claim_release(&y);
    }
    bstore_claim_release(&x);
    free(a);
    free(b);
    free(v);
    /* a container: an object store's is a bucket name (never a '/'), a Local one any path */
    if (bstore_container_check("aws", p, NULL) == KERR_OK &&
        (strchr(p, '/') || strlen(p) < 3 || strlen(p) > 63 ||
         bstore_key("gcp", p, NULL, s_key, sizeof(s_key)) != KERR_OK))
        abort();
    if (*p && bstore_container_check("Local", p, NULL) != KERR_OK)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 2), *a, *b;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = s[size + 1] = '\0';
    project(s, strlen(s));
    a = s + strlen(s) + (strlen(s) < size ? 1 : 0);
    b = a + strlen(a) + (a + strlen(a) < s + size ? 1 : 0);
    cleaned(a);
    cleaned(b);
    canonical(a, b);
    canonical(b, a);
    free(s);
    return 0;
}
