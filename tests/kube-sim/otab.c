/* otab - see otab.h. */
#include "tests/kube-sim/otab.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

void ksim_otab_release(struct ksim_otab *t)
{
    size_t i;

    for (i = 0; i < t->n; i++) {
        free(t->entries[i].key);
        cJSON_Delete(t->entries[i].obj);
    }
    free(t->entries);
    memset(t, 0, sizeof(*t));
}

char *ksim_otab_key(const char *ns, const char *name)
{
    if (!ns || !*ns)
        return strdup(name);
    return buf_dupf(strlen(ns) + 1 + strlen(name), "%s/%s", ns, name);
}

size_t ksim_otab_search(const struct ksim_otab *t, const char *key, int *found)
{
    size_t lo = 0, hi = t->n, mid;
    int c;

    *found = 0;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        c = strcmp(t->entries[mid].key, key);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

enum kerr ksim_otab_reserve(struct ksim_otab *t)
{
    struct ksim_otab_entry *ne;
    size_t cap = t->cap ? t->cap * 2 : 16;

    if (t->n < t->cap)
        return KERR_OK;
    ne = realloc(t->entries, cap * sizeof(*ne));
    if (!ne)
        return KERR_NOMEM;
    t->entries = ne;
    t->cap = cap;
    return KERR_OK;
}

void ksim_otab_insert(struct ksim_otab *t, size_t i, char *key, cJSON *obj, uint64_t rv)
{
    memmove(&t->entries[i + 1], &t->entries[i], (t->n - i) * sizeof(t->entries[0]));
    t->entries[i].key = key;
    t->entries[i].obj = obj;
    t->entries[i].rv = rv;
    t->n++;
}

void ksim_otab_remove(struct ksim_otab *t, size_t i, struct ksim_otab_entry *out)
{
    *out = t->entries[i];
    memmove(&t->entries[i], &t->entries[i + 1], (t->n - i - 1) * sizeof(t->entries[0]));
    t->n--;
}

static int ns_match(const struct ksim_otab_entry *e, const char *ns)
{
    size_t len;

    if (!ns || !*ns)
        return 1;
    len = strlen(ns);
    return strncmp(e->key, ns, len) == 0 && e->key[len] == '/';
}

enum kerr ksim_otab_list(const struct ksim_otab *t, const char *ns, ksim_store_match_fn match,
                         void *arg, const char *start_after, size_t limit,
                         struct ksim_store_page *page)
{
    size_t i = 0, last = 0, taken = 0;
    int found;
    cJSON *copy;

    if (start_after) {
        i = ksim_otab_search(t, start_after, &found);
        if (found)
            i++;
    }
    for (; i < t->n; i++) {
        if (!ns_match(&t->entries[i], ns) || (match && !match(t->entries[i].obj, arg)))
            continue;
        if (limit && taken == limit) {
            page->next_key = strdup(t->entries[last].key);
            if (!page->next_key)
                return KERR_NOMEM;
            /*
             * The rest is counted only where it is cheap and reported: without a filter
             * (kube-apiserver leaves remainingItemCount unset for a selector). A page of a
             * filtered list used to test every later object, each page of a paged LIST
             * costing the whole table under the store's lock.
             */
            if (match)
                break;
            if (!ns || !*ns) {
                page->remaining = (long)(t->n - i);
                break;
            }
            for (; i < t->n; i++)
                page->remaining += ns_match(&t->entries[i], ns);
            break;
        }
        copy = cJSON_Duplicate(t->entries[i].obj, 1);
        if (!copy || !cJSON_AddItemToArray(page->items, copy)) {
            cJSON_Delete(copy);
            return KERR_NOMEM;
        }
        taken++;
        last = i;
    }
    return KERR_OK;
}
