/* kname - derived names cut with a hash so that kube-apiserver accepts them. */
#include "controller/core/kname.h"

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

/* tag: [a-z] words joined by single '-', the last one not KNAME_HASH_LEN hex digits. */
static int tag_ok(const char *tag)
{
    size_t i, word = 0, hex = 0;

    for (i = 0; tag[i]; i++) {
        if (tag[i] == '-') {
            if (word == 0 || !tag[i + 1])
                return 0;
            word = hex = 0;
        } else if (tag[i] >= 'a' && tag[i] <= 'z') {
            word++;
            hex += tag[i] <= 'f';
        } else {
            return 0;
        }
    }
    return i > 0 && !(word == KNAME_HASH_LEN && hex == word);
}

/* owner as it stands in the plain form: [a-z0-9-], alphanumeric at both ends, no "--". */
static int plain_ok(const char *owner)
{
    size_t i;

    for (i = 0; owner[i]; i++) {
        char c = owner[i];

        if (c == '-' && (i == 0 || !owner[i + 1] || owner[i + 1] == '-'))
            return 0;
        if (c != '-' && !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return 0;
    }
    return i > 0;
}

enum kerr kname_job(const char *owner, const char *tag, char out[KNAME_LABEL_MAX + 1])
{
    char hex[CRYPTO_SHA256_HEX_LEN + 1], cut[KNAME_LABEL_MAX + 1];
    size_t olen, tlen, keep, n = 0, i;
    int w;

    out[0] = '\0';
    if (!owner || !*owner || !tag || !tag_ok(tag))
        return KERR_INVAL;
    olen = strlen(owner);
    tlen = strlen(tag);
    if (tlen > KNAME_LABEL_MAX - 4 - KNAME_HASH_LEN)
        return KERR_INVAL;
    if (plain_ok(owner) && olen + 2 + tlen <= KNAME_LABEL_MAX) {
        w = snprintf(out, KNAME_LABEL_MAX + 1, "%s--%s", owner, tag);
        return w < 0 || w > KNAME_LABEL_MAX ? KERR_INTERNAL : KERR_OK;
    }
    keep = KNAME_LABEL_MAX - 3 - tlen - KNAME_HASH_LEN;
    for (i = 0; owner[i] && n < keep; i++) {
        char c = owner[i];

        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            cut[n++] = c;
        else if (n > 0 && cut[n - 1] != '-')
            cut[n++] = '-';
    }
    while (n > 0 && cut[n - 1] == '-')
        n--;
    if (n == 0)
        cut[n++] = 'x';
    cut[n] = '\0';
    if (crypto_sha256_hex(owner, olen, hex, NULL) != KERR_OK)
        return KERR_NOMEM;
    w = snprintf(out, KNAME_LABEL_MAX + 1, "%s--%s-%.*s", cut, tag, KNAME_HASH_LEN, hex);
    return w < 0 || w > KNAME_LABEL_MAX ? KERR_INTERNAL : KERR_OK;
}
