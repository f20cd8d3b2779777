/* jscan - a cJSON-exact one-pass JSON filter; see jscan.h. */
#include "webhook/jscan.h"

#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define KEY_MAX 64 /* decoded key bytes compared with a schema's keys (which are shorter) */

struct scan {
    const unsigned char *s;
    size_t len, pos, depth;
    struct buf *out;
    struct jscan_result *res;
    enum kerr out_rc;
};

static const struct jscan_keep keep_all = { JSCAN_ALL, NULL, NULL };

static void emit(struct scan *sc, const void *p, size_t n)
{
    if (sc->out && sc->out_rc == KERR_OK)
        sc->out_rc = buf_append(sc->out, p, n);
}

/* cJSON's buffer_skip_whitespace: every byte <= 32. */
static void skip_ws(struct scan *sc)
{
    while (sc->pos < sc->len && sc->s[sc->pos] <= 32)
        sc->pos++;
}

static void note_nul(struct scan *sc, size_t at)
{
    if (!sc->res->has_nul) {
        sc->res->has_nul = 1;
        sc->res->nul_at = at;
    }
}

static unsigned hex4(const unsigned char *p)
{
    unsigned h = 0, i, c;

    for (i = 0; i < 4; i++) {
        c = p[i];
        if (c >= '0' && c <= '9')
            h = (h << 4) | (c - '0');
        else if (c >= 'A' && c <= 'F')
            h = (h << 4) | (c - 'A' + 10);
        else if (c >= 'a' && c <= 'f')
            h = (h << 4) | (c - 'a' + 10);
        else
            return 0; /* cJSON's parse_hex4 reads an invalid digit as the code 0 */
    }
    return h;
}

/* The decoded key, ASCII only, up to its first NUL; key_len = KEY_MAX + 1 when it cannot match. */
struct key {
    char text[KEY_MAX + 1];
    size_t len;
    int stopped; /* a NUL was decoded: the rest does not count */
};

static void key_put(struct key *k, unsigned cp)
{
    if (!k || k->stopped)
        return;
    if (cp == 0) {
        k->stopped = 1;
        return;
    }
    if (cp >= 0x80 || k->len >= KEY_MAX) {
        k->len = KEY_MAX + 1; /* no schema key has it */
        k->stopped = 1;
        return;
    }
    k->text[k->len++] = (char)cp;
}

/*
 * The first quote or backslash at or after i, or len. Sixteen bytes at a
 * time where SSE2 is there (x86-64 always), a byte at a time otherwise.
 */
static size_t quote_or_escape(const unsigned char *s, size_t i, size_t len)
{
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), escape = _mm_set1_epi8('\\');

    for (; len - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, escape)));
        if (m)
            return i + (size_t)__builtin_ctz(m);
    }
#endif
    for (; i < len; i++) {
        if (s[i] == '"' || s[i] == '\\')
            return i;
    }
    return len;
}

/*
 * The closing quote of the string opened at sc->pos, as cJSON's parse_string
 * finds it: a backslash hides the byte after it. Every byte is looked at
 * once. *escaped: a backslash was seen.
 */
static int string_end(const struct scan *sc, size_t *end, int *escaped)
{
    const unsigned char *s = sc->s;
    size_t i = sc->pos + 1;

    *escaped = 0;
    for (;;) {
        i = quote_or_escape(s, i, sc->len);
        if (i >= sc->len)
            return 0;
        if (s[i] == '"') {
            *end = i;
            return 1;
        }
        *escaped = 1;
        if (i + 1 >= sc->len)
            return 0; /* the last byte is a backslash */
        i += 2;
    }
}

/*
 * cJSON's parse_string: find the closing quote (a backslash hides the next
 * byte), then decode the escapes (b f n r t " \ / and \u with surrogate
 * pairs). *nul (when not NULL) when the text holds a NUL; k (may be NULL)
 * gets the key.
 */
static int scan_string(struct scan *sc, int *nul, struct key *k)
{
    const unsigned char *s = sc->s;
    size_t end, p;
    unsigned code, code2;
    int escaped, has_nul = 0;

    if (k)
        memset(k, 0, sizeof(*k));
    if (!string_end(sc, &end, &escaped))
        return 0;
    if (!escaped && !k) {
        /* No escape to check: only a raw NUL byte matters, and only when asked. */
        if (nul)
            *nul = memchr(s + sc->pos + 1, 0, end - sc->pos - 1) != NULL;
        sc->pos = end + 1;
        return 1;
    }
    for (p = sc->pos + 1; p < end;) {
        if (s[p] != '\\') {
            has_nul |= s[p] == 0;
            key_put(k, s[p]);
            p++;
            continue;
        }
        switch (s[p + 1]) {
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
            key_put(k, 0x80); /* a control character: in no schema key */
            p += 2;
            break;
        case '"':
        case '\\':
        case '/':
            key_put(k, s[p + 1]);
            p += 2;
            break;
        case 'u':
            if (end - p < 6)
                return 0;
            code = hex4(s + p + 2);
            if (code >= 0xDC00 && code <= 0xDFFF)
                return 0;
            if (code >= 0xD800 && code <= 0xDBFF) {
                if (end - (p + 6) < 6 || s[p + 6] != '\\' || s[p + 7] != 'u')
                    return 0;
                code2 = hex4(s + p + 8);
                if (code2 < 0xDC00 || code2 > 0xDFFF)
                    return 0;
                key_put(k, 0x80);
                p += 12;
                break;
            }
            has_nul |= code == 0;
            key_put(k, code);
            p += 6;
            break;
        default:
            return 0;
        }
    }
    if (nul)
        *nul = has_nul;
    sc->pos = end + 1;
    return 1;
}

static int is_num_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'e' || c == 'E' || c == '.';
}

static size_t digits(const unsigned char *s, size_t i, size_t n)
{
    size_t j = i;

    while (j < n && s[j] >= '0' && s[j] <= '9')
        j++;
    return j - i;
}

/*
 * cJSON's parse_number: at most 63 bytes of [0-9+-eE.] go to strtod, which
 * reads [+-]? (d+ .? d* | . d+) ([eE] [+-]? d+)? of them; nothing read is
 * an error.
 */
static int scan_number(struct scan *sc)
{
    const unsigned char *s = sc->s + sc->pos;
    size_t n = 0, j = 0, d1, d2 = 0, k;

    while (n < 63 && sc->pos + n < sc->len && is_num_char(s[n]))
        n++;
    if (j < n && (s[j] == '+' || s[j] == '-'))
        j++;
    d1 = digits(s, j, n);
    j += d1;
    if (j < n && s[j] == '.') {
        d2 = digits(s, j + 1, n);
        if (d1 + d2 == 0)
            return 0;
        j += 1 + d2;
    }
    if (d1 + d2 == 0)
        return 0;
    if (j < n && (s[j] == 'e' || s[j] == 'E')) {
        k = j + 1;
        if (k < n && (s[k] == '+' || s[k] == '-'))
            k++;
        if (digits(s, k, n) > 0)
            j = k + digits(s, k, n);
    }
    sc->pos += j;
    return 1;
}

static int scan_value(struct scan *sc, const struct jscan_keep *keep, int out);

static const struct jscan_keep *member_keep(const struct jscan_keep *keep, const struct key *k)
{
    const struct jscan_member *m;

    if (k->len > KEY_MAX)
        return NULL;
    /* k->text has no NUL in its k->len bytes: strncmp stops at the end of either */
    for (m = keep->members; m && m->key; m++) {
        if (m->key[0] == k->text[0] && strncmp(m->key, k->text, k->len) == 0 &&
            m->key[k->len] == '\0')
            return m->keep;
    }
    return NULL;
}

/*
 * cJSON's parse_object. keep NULL: skipped; JSCAN_ALL: every member kept
 * (out: the caller copies the text); JSCAN_MEMBERS: the listed members are
 * written to the output.
 */
static int scan_object(struct scan *sc, const struct jscan_keep *keep, int filter)
{
    const struct jscan_keep *child;
    struct key k;
    size_t kstart;
    int nul, first = 1;

    if (sc->depth >= JSCAN_NESTING_LIMIT)
        return 0;
    sc->depth++;
    sc->pos++;
    if (filter)
        emit(sc, "{", 1);
    skip_ws(sc);
    if (sc->pos < sc->len && sc->s[sc->pos] == '}')
        goto done;
    for (;;) {
        if (sc->pos >= sc->len || sc->s[sc->pos] != '"')
            return 0;
        kstart = sc->pos;
        nul = 0;
        if (!scan_string(sc, keep ? &nul : NULL, filter ? &k : NULL))
            return 0;
        child = !keep ? NULL : filter ? member_keep(keep, &k) : &keep_all;
        if (child && nul)
            note_nul(sc, kstart);
        if (filter && child) {
            if (!first)
                emit(sc, ",", 1);
            emit(sc, sc->s + kstart, sc->pos - kstart);
            emit(sc, ":", 1);
            first = 0;
        }
        skip_ws(sc);
        if (sc->pos >= sc->len || sc->s[sc->pos] != ':')
            return 0;
        sc->pos++;
        skip_ws(sc);
        if (!scan_value(sc, child, filter && child))
            return 0;
        skip_ws(sc);
        if (sc->pos < sc->len && sc->s[sc->pos] == ',') {
            sc->pos++;
            skip_ws(sc);
            continue;
        }
        break;
    }
    if (sc->pos >= sc->len || sc->s[sc->pos] != '}')
        return 0;
done:
    if (filter)
        emit(sc, "}", 1);
    sc->depth--;
    sc->pos++;
    return 1;
}

/* cJSON's parse_array; filter: each element written, filtered by keep->elem. */
static int scan_array(struct scan *sc, const struct jscan_keep *keep, int filter)
{
    const struct jscan_keep *child = !keep ? NULL : filter ? keep->elem : &keep_all;
    int first = 1;

    if (sc->depth >= JSCAN_NESTING_LIMIT)
        return 0;
    sc->depth++;
    sc->pos++;
    if (filter)
        emit(sc, "[", 1);
    skip_ws(sc);
    if (sc->pos < sc->len && sc->s[sc->pos] == ']')
        goto done;
    if (sc->pos >= sc->len)
        return 0;
    for (;;) {
        if (filter && !first)
            emit(sc, ",", 1);
        first = 0;
        if (!scan_value(sc, child ? child : filter ? &keep_all : NULL, filter))
            return 0;
        skip_ws(sc);
        if (sc->pos < sc->len && sc->s[sc->pos] == ',') {
            sc->pos++;
            skip_ws(sc);
            continue;
        }
        break;
    }
    if (sc->pos >= sc->len || sc->s[sc->pos] != ']')
        return 0;
done:
    if (filter)
        emit(sc, "]", 1);
    sc->depth--;
    sc->pos++;
    return 1;
}

static int literal(struct scan *sc, const char *word, size_t n)
{
    if (sc->len - sc->pos < n || memcmp(sc->s + sc->pos, word, n) != 0)
        return 0;
    sc->pos += n;
    return 1;
}

/* cJSON's parse_value. keep NULL: skip; out: write the kept value to the output. */
static int scan_value(struct scan *sc, const struct jscan_keep *keep, int out)
{
    size_t start = sc->pos;
    unsigned char c;
    int ok, nul = 0;

    if (sc->pos >= sc->len)
        return 0;
    c = sc->s[sc->pos];
    if (c == '{' && keep && keep->mode == JSCAN_MEMBERS && out)
        return scan_object(sc, keep, 1);
    if (c == '[' && keep && keep->mode == JSCAN_ELEMENTS && out)
        return scan_array(sc, keep, 1);
    if (keep)
        keep = &keep_all;
    switch (c) {
    case '"':
        ok = scan_string(sc, keep ? &nul : NULL, NULL);
        break;
    case '{':
        ok = scan_object(sc, keep, 0);
        break;
    case '[':
        ok = scan_array(sc, keep, 0);
        break;
    case 'n':
        ok = literal(sc, "null", 4);
        break;
    case 'f':
        ok = literal(sc, "false", 5);
        break;
    case 't':
        ok = literal(sc, "true", 4);
        break;
    default:
        ok = (c == '-' || (c >= '0' && c <= '9')) && scan_number(sc);
        break;
    }
    if (ok && keep && nul)
        note_nul(sc, start);
    if (ok && out)
        emit(sc, sc->s + start, sc->pos - start);
    return ok;
}

enum kerr jscan_filter(const char *text, size_t len, const struct jscan_keep *keep, struct buf *out,
                       struct jscan_result *res)
{
    struct scan sc;

    memset(res, 0, sizeof(*res));
    memset(&sc, 0, sizeof(sc));
    sc.s = (const unsigned char *)text;
    sc.len = text ? len : 0;
    sc.out = out;
    sc.res = res;
    if (sc.len > 4 && memcmp(sc.s, "\xEF\xBB\xBF", 3) == 0)
        sc.pos = 3;
    skip_ws(&sc);
    if (!scan_value(&sc, keep, 1))
        return KERR_PARSE;
    if (sc.out_rc)
        return sc.out_rc;
    res->end = sc.pos;
    return KERR_OK;
}
