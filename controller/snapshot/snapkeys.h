/*
 * snapkeys - the set of live keys a restore would hold, in bounded memory:
 * each key is kept as the first 16 bytes of its SHA-256 (a collision
 * between two distinct keys of one database has probability about
 * n^2 / 2^129), in an open-addressing table of 16-byte slots that doubles
 * at 3/4 load. Memory: at most 16 / 0.375 ≈ 43 bytes per key, and never
 * more keys than the bound given at creation (KERR_TOOBIG past it): a bound
 * of 1,000,000 keys is at most 32 MiB.
 *
 * Ownership: a struct snapkeys is OWNED by its creator (snapkeys_free).
 * Thread safety: one set per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPKEYS_H
#define CONTROLLER_SNAPSHOT_SNAPKEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"

#define SNAPKEYS_HASH_LEN 16

struct snapkeys;

/* An empty set holding at most max keys. On KERR_OK *out OWNS it. */
enum kerr snapkeys_new(size_t max, struct snapkeys **out, struct kerr_info *err);

/* The key's hash (key BORROWED). */
void snapkeys_hash(struct snapkeys *s, const void *key, size_t len,
                   unsigned char out[SNAPKEYS_HASH_LEN]);

/* Whether the hashed key is in the set. */
bool snapkeys_has(const struct snapkeys *s, const unsigned char h[SNAPKEYS_HASH_LEN]);

/* Add the hashed key (no-op when present). KERR_TOOBIG when the set already holds max keys,
 * KERR_NOMEM. */
enum kerr snapkeys_add(struct snapkeys *s, const unsigned char h[SNAPKEYS_HASH_LEN],
                       struct kerr_info *err);

/* Remove the hashed key; whether it was there. */
bool snapkeys_del(struct snapkeys *s, const unsigned char h[SNAPKEYS_HASH_LEN]);

size_t snapkeys_count(const struct snapkeys *s);

void snapkeys_free(struct snapkeys *s);

#endif
