/* kpath - prefixes compared as paths; see kpath.h. */
#include "common/kpath.h"

#include <stdlib.h>
#include <string.h>

/* Go's path.Clean (Rob Pike's lexical rules), into out of at least strlen(p) + 2 bytes. */
static void clean(const char *p, char *out)
{
    size_t n = strlen(p), r = 0, w = 0, dotdot = 0;
    int rooted = n > 0 && p[0] == '/';

    if (n == 0) {
        memcpy(out, ".", 2);
        return;
    }
    if (rooted) {
        out[w++] = '/';
        r = dotdot = 1;
    }
    while (r < n) {
        if (p[r] == '/') {
            r++;
        } else if (p[r] == '.' && (r + 1 == n || p[r + 1] == '/')) {
            r++;
        } else if (p[r] == '.' && p[r + 1] == '.' && (r + 2 == n || p[r + 2] == '/')) {
            r += 2;
            if (w > dotdot) {
                w--;
                while (w > dotdot && out[w] != '/')
                    w--;
            } else if (!rooted) {
                if (w > 0)
                    out[w++] = '/';
                out[w++] = '.';
                out[w++] = '.';
                dotdot = w;
            }
        } else {
            if ((rooted && w != 1) || (!rooted && w != 0))
                out[w++] = '/';
            for (; r < n && p[r] != '/'; r++)
                out[w++] = p[r];
        }
    }
    if (w == 0)
        out[w++] = '.';
    out[w] = '\0';
}

enum kerr kpath_clean(const char *p, char *out, size_t n)
{
    size_t need;
    char *tmp;

    p = p ? p : "";
    need = strlen(p) + 2;
    if (n >= need) {
        clean(p, out);
        return KERR_OK;
    }
    tmp = malloc(need);
    if (!tmp)
        return KERR_NOMEM;
    clean(p, tmp);
    if (strlen(tmp) >= n) {
        free(tmp);
        return KERR_TOOBIG;
    }
    memcpy(out, tmp, strlen(tmp) + 1);
    free(tmp);
    return KERR_OK;
}
