/* strlist - see strlist.h. The array doubles from 8 slots. */
#include "common/strlist.h"

#include <stdlib.h>
#include <string.h>

void strlist_init(struct strlist *l)
{
    memset(l, 0, sizeof(*l));
}

void strlist_release(struct strlist *l)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

enum kerr strlist_addn(struct strlist *l, const char *s, size_t len)
{
    char **nv;
    size_t ncap;

    if (l->n == l->cap) {
        ncap = l->cap ? l->cap * 2 : 8;
        nv = realloc(l->v, ncap * sizeof(*nv));
        if (!nv)
            return KERR_NOMEM;
        l->v = nv;
        l->cap = ncap;
    }
    l->v[l->n] = strndup(s, len);
    if (!l->v[l->n])
        return KERR_NOMEM;
    l->n++;
    return KERR_OK;
}

enum kerr strlist_add(struct strlist *l, const char *s)
{
    return strlist_addn(l, s, strlen(s));
}

int strlist_has(const struct strlist *l, const char *s)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return 1;
    return 0;
}
