/* snapname - snapshot object names (see snapname.h). */
#include "controller/snapshot/snapname.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

/* Decimal digits only, at most 18 of them (no overflow), into *out. */
static int parse_num(const char *s, size_t n, int64_t *out)
{
    int64_t v = 0;
    if (n == 0 || n > 18) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return -1;
        }
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

/* Where the version level starts: the last "v1/" or "v2/" at the key's start or after '/'. */
static const char *find_version(const char *key)
{
    const char *found = NULL;
    for (const char *p = key; *p != '\0'; p++) {
        bool boundary = (p == key) || p[-1] == '/';
        if (boundary && p[0] == 'v' && (p[1] == '1' || p[1] == '2') && p[2] == '/') {
            found = p;
        }
    }
    return found;
}

/*
 * "<ts>[.<field>...]", read as ParseSnapshot does: the fields after the time are split at
 * '.'; the first is the compression suffix unless it is "final", and the name is final when
 * the last field is "final".
 */
static enum kerr parse_time_suffix(const char *s, struct snap_name *out, struct kerr_info *err)
{
    const char *dot = strchr(s, '.');
    size_t n = dot ? (size_t)(dot - s) : strlen(s);
    if (parse_num(s, n, &out->created) != 0) {
        return kerr_set(err, KERR_PARSE, "invalid creation time in snapshot name");
    }
    const char *rest = s + n;
    snprintf(out->suffix, sizeof out->suffix, "%s", rest);
    if (*rest == '\0') {
        return KERR_OK;
    }
    const char *next = strchr(rest + 1, '.');
    size_t fl = next ? (size_t)(next - rest) : strlen(rest);
    if (!(fl == 6 && memcmp(rest, ".final", 6) == 0)) {
        memcpy(out->compression, rest, fl);
        out->compression[fl] = '\0';
    }
    const char *last = strrchr(rest, '.');
    out->is_final = strcmp(last, ".final") == 0;
    return KERR_OK;
}

/* The SnapName "Kind-start-last-ts[suffixes]" of len n at s. */
static enum kerr parse_snapname(const char *s, size_t n, struct snap_name *out,
                                struct kerr_info *err)
{
    const char *tok[4];
    size_t len[4];
    size_t nt = 0;
    const char *p = s;
    const char *end = s + n;
    if (n == 0 || n >= SNAP_NAME_MAX) {
        return kerr_set(err, KERR_PARSE, "snapshot name empty or too long");
    }
    memcpy(out->name, s, n);
    out->name[n] = '\0';
    while (p <= end) {
        const char *dash = memchr(p, '-', (size_t)(end - p));
        const char *stop = dash ? dash : end;
        if (nt == 4) {
            return kerr_set(err, KERR_PARSE, "snapshot name has more than 4 '-' fields");
        }
        tok[nt] = p;
        len[nt++] = (size_t)(stop - p);
        p = stop + 1;
    }
    if (nt != 4) {
        return kerr_set(err, KERR_PARSE, "snapshot name has %zu '-' fields, not 4", nt);
    }
    if (len[0] == 4 && memcmp(tok[0], "Full", 4) == 0) {
        out->kind = SNAP_FULL;
    } else if (len[0] == 4 && memcmp(tok[0], "Incr", 4) == 0) {
        out->kind = SNAP_INCR;
    } else {
        return kerr_set(err, KERR_PARSE, "unknown snapshot kind \"%.*s\"", (int)len[0] % 32,
                        tok[0]);
    }
    if (parse_num(tok[1], len[1], &out->start_rev) != 0 ||
        parse_num(tok[2], len[2], &out->last_rev) != 0) {
        return kerr_set(err, KERR_PARSE, "invalid revision in snapshot name");
    }
    if (out->start_rev > out->last_rev) {
        return kerr_set(err, KERR_PARSE, "start revision %lld is after last revision %lld",
                        (long long)out->start_rev, (long long)out->last_rev);
    }
    return parse_time_suffix(out->name + (tok[3] - s), out, err);
}

enum kerr snap_parse(const char *key, struct snap_name *out, struct kerr_info *err)
{
    memset(out, 0, sizeof *out);
    const char *v = key ? find_version(key) : NULL;
    if (v == NULL) {
        return kerr_set(err, KERR_PARSE, "no v1/ or v2/ level in the key");
    }
    out->prefix_len = (size_t)(v - key);
    out->layout = v[1] - '0';
    const char *p = v + 3;
    if (out->layout == 1) {
        const char *slash = strchr(p, '/');
        size_t dl = slash ? (size_t)(slash - p) : 0;
        if (dl == 0 || dl >= SNAP_DIR_MAX) {
            return kerr_set(err, KERR_PARSE, "v1 key without a snapshot directory");
        }
        memcpy(out->snap_dir, p, dl);
        out->snap_dir[dl] = '\0';
        p = slash + 1;
    }
    const char *slash = strchr(p, '/');
    size_t nl = slash ? (size_t)(slash - p) : strlen(p);
    if (slash != NULL) {
        if (slash[1] == '\0' || strchr(slash + 1, '/') != NULL) {
            return kerr_set(err, KERR_PARSE, "invalid snapshot path (chunk)");
        }
        out->is_chunk = true;
    }
    return parse_snapname(p, nl, out, err);
}

const char *snap_kind_str(enum snap_kind kind)
{
    return kind == SNAP_FULL ? "Full" : "Incr";
}

enum kerr snap_build_name(struct snap_name *s, struct kerr_info *err)
{
    bool ok = s->suffix[0] == '\0' || (s->suffix[0] == '.' && strpbrk(s->suffix, "/-") == NULL);
    if (!ok || s->start_rev < 0 || s->last_rev < s->start_rev || s->created < 0) {
        return kerr_set(err, KERR_INVAL, "cannot build a snapshot name from these fields");
    }
    int n =
        snprintf(s->name, sizeof s->name, "%s-%08lld-%08lld-%lld%s", snap_kind_str(s->kind),
                 (long long)s->start_rev, (long long)s->last_rev, (long long)s->created, s->suffix);
    if (n < 0 || (size_t)n >= sizeof s->name) {
        return kerr_set(err, KERR_INVAL, "snapshot name too long");
    }
    return KERR_OK;
}

enum kerr snap_key(const char *store_prefix, const struct snap_name *s, char **out,
                   struct kerr_info *err)
{
    *out = NULL;
    const char *sep = (store_prefix[0] == '\0') ? "" : "/";
    if (s->layout == 1) {
        *out = buf_dupf(4096, "%s%sv1/%s/%s", store_prefix, sep, s->snap_dir, s->name);
    } else {
        *out = buf_dupf(4096, "%s%sv2/%s", store_prefix, sep, s->name);
    }
    return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, "snapshot key too long");
}

int snap_cmp(const struct snap_name *a, const struct snap_name *b)
{
    if (a->last_rev != b->last_rev) {
        return a->last_rev < b->last_rev ? -1 : 1;
    }
    if (a->is_chunk != b->is_chunk) {
        return a->is_chunk ? 1 : -1;
    }
    if (a->created != b->created) {
        return a->created < b->created ? -1 : 1;
    }
    return 0;
}

enum kerr snap_clean_prefix(const char *prefix, char **out, struct kerr_info *err)
{
    size_t n = strlen(prefix);
    bool rooted = n > 0 && prefix[0] == '/';
    char *res = malloc(n + 2);
    size_t len = 0;
    *out = NULL;
    if (res == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    if (rooted) {
        res[len++] = '/';
    }
    for (const char *p = prefix; *p;) {
        while (*p == '/') {
            p++;
        }
        const char *e = strchr(p, '/');
        size_t el = e ? (size_t)(e - p) : strlen(p);
        size_t base = rooted ? 1 : 0;
        if (el == 0 || (el == 1 && p[0] == '.')) {
            /* empty or "." element */
        } else if (el == 2 && p[0] == '.' && p[1] == '.') {
            /* ".." drops the last element; at the root it stays the root; in a relative
             * path with nothing (or only "..") left it is kept, as path.Clean keeps it */
            bool only_up = len >= base + 2 && memcmp(res + len - 2, "..", 2) == 0 &&
                           (len == base + 2 || res[len - 3] == '/');
            if (len > base && !only_up) {
                while (len > base && res[len - 1] != '/') {
                    len--;
                }
                len = len > base ? len - 1 : base;
            } else if (!rooted) {
                if (len > base) {
                    res[len++] = '/';
                }
                memcpy(res + len, "..", 2);
                len += 2;
            }
        } else {
            if (len > base) {
                res[len++] = '/';
            }
            memcpy(res + len, p, el);
            len += el;
        }
        p += el;
    }
    res[len] = '\0';
    if (strcmp(res, "/") == 0) {
        res[0] = '\0';
    }
    *out = res;
    return KERR_OK;
}
