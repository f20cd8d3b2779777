/* kname - derived names cut with a hash so that kube-apiserver accepts them. */
#include "controller/kname.h"

#include <stdio.h>
#include <string.h>

#include "common/crypto.h"

enum kerr kname_join(const char *base, const char *suffix, size_t max, char *out, size_t n)
{
    char hex[CRYPTO_SHA256_HEX_LEN + 1];
    size_t blen, slen, keep;
    int w;

    if (!base || !*base)
        return KERR_INVAL;
    suffix = suffix ? suffix : "";
    blen = strlen(base);
    slen = strlen(suffix);
    if (blen + slen <= max) {
        w = snprintf(out, n, "%s%s", base, suffix);
        return w < 0 || (size_t)w >= n ? KERR_TOOBIG : KERR_OK;
    }
    if (max < 2 + KNAME_HASH_LEN + slen)
        return KERR_INVAL;
    if (crypto_sha256_hex(base, blen, hex, NULL) != KERR_OK)
        return KERR_NOMEM;
    keep = max - 1 - KNAME_HASH_LEN - slen;
    if (keep > blen)
        keep = blen;
    while (keep > 0 && base[keep - 1] == '.')
        keep--; /* ".-" is no DNS-1123 subdomain */
    w = snprintf(out, n, "%.*s%s%.*s%s", (int)keep, base, keep ? "-" : "", KNAME_HASH_LEN, hex,
                 suffix);
    return w < 0 || (size_t)w >= n ? KERR_TOOBIG : KERR_OK;
}

enum kerr kname_label_value(const char *s, char out[KNAME_LABEL_MAX + 1])
{
    if (!s || !*s) {
        out[0] = '\0';
        return KERR_OK;
    }
    return kname_join(s, "", KNAME_LABEL_MAX, out, KNAME_LABEL_MAX + 1);
}
