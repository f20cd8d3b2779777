/*
 * otab - the objects of one resource in kube-sim's store: an array of
 * entries sorted by key ("namespace/name", or "name" for cluster scope), as
 * etcd orders /registry keys, with binary search, insertion and removal at a
 * position, and the page of a list (namespace and match filters, start
 * after a key, limit).
 *
 * Ownership: a struct ksim_otab is embedded by the store (zeroed, then
 * ksim_otab_release) and OWNS its entries' keys and objects.
 * Thread safety: none; the store's lock guards it.
 */
#ifndef KSIM_OTAB_H
#define KSIM_OTAB_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "tests/kube-sim/store.h"

struct ksim_otab_entry {
    char *key;  /* OWNS: "ns/name" or "name" */
    cJSON *obj; /* OWNS */
    uint64_t rv;
};

struct ksim_otab {
    struct ksim_otab_entry *entries; /* OWNS, sorted by key */
    size_t n, cap;
};

/* Free every entry and the array; the table is empty (and zeroed) after. */
void ksim_otab_release(struct ksim_otab *t);

/* The key of ns/name (ns NULL or "": name). NULL without memory; free() it. */
char *ksim_otab_key(const char *ns, const char *name);

/* Index of key, or of its insertion point with *found = 0. */
size_t ksim_otab_search(const struct ksim_otab *t, const char *key, int *found);

/* Make room for one more entry: KERR_OK or KERR_NOMEM. */
enum kerr ksim_otab_reserve(struct ksim_otab *t);

/* Insert at index i (from ksim_otab_search; room reserved): key and obj TAKEN. */
void ksim_otab_insert(struct ksim_otab *t, size_t i, char *key, cJSON *obj, uint64_t rv);

/* Remove the entry at index i into *out, which then OWNS its key and object. */
void ksim_otab_remove(struct ksim_otab *t, size_t i, struct ksim_otab_entry *out);

/*
 * Append to page->items (an array) deep copies of the entries in namespace
 * ns (NULL or "": all) that match accepts (NULL: all), after key
 * start_after (NULL: from the first), at most limit (0: no limit); set
 * page->next_key when more follow, and count them in page->remaining when
 * match is NULL (a filtered page stops at the first match past it). KERR_NOMEM.
 */
enum kerr ksim_otab_list(const struct ksim_otab *t, const char *ns, ksim_store_match_fn match,
                         void *arg, const char *start_after, size_t limit,
                         struct ksim_store_page *page);

#endif
