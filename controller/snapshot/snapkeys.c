/* snapkeys - a bounded set of key hashes (see snapkeys.h). */
#include "controller/snapshot/snapkeys.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SLOTS 1024u

struct snapkeys {
    unsigned char *slot; /* OWNS: cap slots of SNAPKEYS_HASH_LEN bytes; all zero: empty */
    size_t cap, n, max;
    EVP_MD_CTX *md;
};

enum kerr snapkeys_new(size_t max, struct snapkeys **out, struct kerr_info *err)
{
    struct snapkeys *s = calloc(1, sizeof *s);
    *out = NULL;
    if (s == NULL || (s->slot = calloc(MIN_SLOTS, SNAPKEYS_HASH_LEN)) == NULL ||
        (s->md = EVP_MD_CTX_new()) == NULL) {
        snapkeys_free(s);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    s->cap = MIN_SLOTS;
    s->max = max;
    *out = s;
    return KERR_OK;
}

void snapkeys_free(struct snapkeys *s)
{
    if (s) {
        EVP_MD_CTX_free(s->md);
        free(s->slot);
        free(s);
    }
}

void snapkeys_hash(struct snapkeys *s, const void *key, size_t len,
                   unsigned char out[SNAPKEYS_HASH_LEN])
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned dl = 0;
    if (EVP_DigestInit_ex(s->md, EVP_sha256(), NULL) != 1 ||
        EVP_DigestUpdate(s->md, key, len) != 1 || EVP_DigestFinal_ex(s->md, d, &dl) != 1) {
        abort(); /* SHA-256 of memory cannot fail but for a broken library */
    }
    memcpy(out, d, SNAPKEYS_HASH_LEN);
    out[0] |= 1; /* never all zero: that marks an empty slot */
}

static size_t home(const unsigned char *h, size_t cap)
{
    uint64_t v;
    memcpy(&v, h + 8, sizeof v);
    return (size_t)(v & (cap - 1));
}

static bool empty(const unsigned char *slot)
{
    return slot[0] == 0; /* hashes have bit 0 of byte 0 set */
}

/* The slot holding h, or the empty slot where it would go. */
static size_t find(const struct snapkeys *s, const unsigned char *h)
{
    size_t i = home(h, s->cap);
    while (!empty(s->slot + i * SNAPKEYS_HASH_LEN) &&
           memcmp(s->slot + i * SNAPKEYS_HASH_LEN, h, SNAPKEYS_HASH_LEN) != 0)
        i = (i + 1) & (s->cap - 1);
    return i;
}

bool snapkeys_has(const struct snapkeys *s, const unsigned char h[SNAPKEYS_HASH_LEN])
{
    return !empty(s->slot + find(s, h) * SNAPKEYS_HASH_LEN);
}

static enum kerr grow(struct snapkeys *s, struct kerr_info *err)
{
    struct snapkeys t = *s;
    t.cap = s->cap * 2;
    if ((t.slot = calloc(t.cap, SNAPKEYS_HASH_LEN)) == NULL)
        return kerr_set(err, KERR_NOMEM, "key set of %zu slots", t.cap);
    for (size_t i = 0; i < s->cap; i++) {
        const unsigned char *h = s->slot + i * SNAPKEYS_HASH_LEN;
        if (!empty(h))
            memcpy(t.slot + find(&t, h) * SNAPKEYS_HASH_LEN, h, SNAPKEYS_HASH_LEN);
    }
    free(s->slot);
    *s = t;
    return KERR_OK;
}

enum kerr snapkeys_add(struct snapkeys *s, const unsigned char h[SNAPKEYS_HASH_LEN],
                       struct kerr_info *err)
{
    size_t i = find(s, h);
    if (!empty(s->slot + i * SNAPKEYS_HASH_LEN))
        return KERR_OK;
    if (s->n >= s->max)
        return kerr_set(err, KERR_TOOBIG, "more than %zu keys (the key set's bound)", s->max);
    if ((s->n + 1) * 4 > s->cap * 3) {
        enum kerr rc = grow(s, err);
        if (rc != KERR_OK)
            return rc;
        i = find(s, h);
    }
    memcpy(s->slot + i * SNAPKEYS_HASH_LEN, h, SNAPKEYS_HASH_LEN);
    s->n++;
    return KERR_OK;
}

bool snapkeys_del(struct snapkeys *s, const unsigned char h[SNAPKEYS_HASH_LEN])
{
    size_t i = find(s, h), j = i;
    if (empty(s->slot + i * SNAPKEYS_HASH_LEN))
        return false;
    /* Backward-shift deletion: later entries of the run move up where their home allows. */
    for (;;) {
        j = (j + 1) & (s->cap - 1);
        unsigned char *sj = s->slot + j * SNAPKEYS_HASH_LEN;
        if (empty(sj))
            break;
        size_t k = home(sj, s->cap);
        if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
            memcpy(s->slot + i * SNAPKEYS_HASH_LEN, sj, SNAPKEYS_HASH_LEN);
            i = j;
        }
    }
    memset(s->slot + i * SNAPKEYS_HASH_LEN, 0, SNAPKEYS_HASH_LEN);
    s->n--;
    return true;
}

size_t snapkeys_count(const struct snapkeys *s)
{
    return s->n;
}
