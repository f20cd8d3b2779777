/* goregex - Go (RE2) patterns on POSIX regular expressions; see goregex.h. */
#include "tests/kube-sim/goregex.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define REPEAT_MAX 1000 /* Go's limit on {n,m} */
#define ERE_MAX    (64 * 1024)

#define DEPTH_MAX  64 /* nested groups */

struct tr {
    const char *p;
    char *out;
    size_t n, len;
    int err;
    int prev;                 /* what came last: 0 nothing or an operator, 1 an atom, 2 a repeat */
    int depth;                /* open groups */
    long prod[DEPTH_MAX + 1]; /* per open group: the largest product of nested repeat counts */
    long last;                /* that product for the last atom */
};

/* A byte set: one bit per byte value (0 never matches). */
struct bset {
    unsigned char bit[32];
};

static void add(struct bset *s, int c)
{
    if (c > 0 && c < 256)
        s->bit[c >> 3] |= (unsigned char)(1u << (c & 7));
}

static int has(const struct bset *s, int c)
{
    return (s->bit[c >> 3] >> (c & 7)) & 1;
}

static void add_range(struct bset *s, int lo, int hi)
{
    for (; lo <= hi; lo++)
        add(s, lo);
}

static void put(struct tr *t, const char *s, size_t k)
{
    if (t->err || t->len + k >= t->n) {
        t->err = 1;
        return;
    }
    memcpy(t->out + t->len, s, k);
    t->len += k;
    t->out[t->len] = '\0';
}

static void putc1(struct tr *t, int c)
{
    char b = (char)c;

    put(t, &b, 1);
}

/* A literal byte outside brackets. */
static void put_lit(struct tr *t, int c)
{
    if (c == '^') {
        put(t, "\\^", 2);
    } else if (c && strchr(".[]()*+?{}|$\\", c)) {
        putc1(t, '[');
        putc1(t, c);
        putc1(t, ']');
    } else {
        putc1(t, c);
    }
}

/* The set as a bracket expression (or a literal when it is a lone '^'). */
static void put_set(struct tr *t, const struct bset *s, int neg)
{
    int c, first = 1, n = 0, dash = has(s, '-');

    for (c = 1; c < 256; c++)
        n += has(s, c);
    if (n == 0) {
        t->err = 1;
        return;
    }
    if (n == 1 && has(s, '^') && !neg) {
        put_lit(t, '^');
        return;
    }
    put(t, neg ? "[^" : "[", neg ? 2 : 1);
    if (has(s, ']')) {
        putc1(t, ']'); /* literal only in first place */
        first = 0;
    }
    for (c = 1; c < 256; c++) {
        if (!has(s, c) || strchr("[]-^", c))
            continue;
        putc1(t, c);
        first = 0;
    }
    if (has(s, '[')) {
        putc1(t, '[');
        first = 0;
    }
    if (has(s, '^')) {
        if (first && !neg && dash) {
            putc1(t, '-');
            dash = 0;
        }
        putc1(t, '^');
    }
    if (dash)
        putc1(t, '-');
    putc1(t, ']');
}

/* Add \d \s \w (lower case) or their complements (upper case) to s. 0, or -1 if not a class. */
static int add_class_escape(struct bset *s, int c)
{
    struct bset k;
    int i, neg = isupper(c) != 0;

    memset(&k, 0, sizeof(k));
    switch (tolower(c)) {
    case 'd':
        add_range(&k, '0', '9');
        break;
    case 's':
        add(&k, '\t');
        add(&k, '\n');
        add(&k, '\f');
        add(&k, '\r');
        add(&k, ' ');
        break;
    case 'w':
        add_range(&k, '0', '9');
        add_range(&k, 'A', 'Z');
        add_range(&k, 'a', 'z');
        add(&k, '_');
        break;
    default:
        return -1;
    }
    for (i = 1; i < 256; i++) {
        if (has(&k, i) != neg)
            add(s, i);
    }
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * A single-character escape after '\' at t->p: the byte, or -1 when it is
 * not one (t->p then still at the escaped character). Advances past it.
 */
static int char_escape(struct tr *t)
{
    static const char ctl[] = "n\nt\tr\rf\fv\va\a";
    const char *q;
    int c = (unsigned char)*t->p, h1, h2;

    if (c == 'x') {
        h1 = hexval((unsigned char)t->p[1]);
        h2 = h1 < 0 ? -1 : hexval((unsigned char)t->p[2]);
        if (h1 < 0 || h2 < 0 || h1 * 16 + h2 == 0 || h1 * 16 + h2 >= 0x80)
            return -1;
        t->p += 3;
        return h1 * 16 + h2;
    }
    if (c && (q = strchr(ctl, c)) && (q - ctl) % 2 == 0) {
        t->p++;
        return (unsigned char)q[1];
    }
    if (c > 0 && c < 0x80 && ispunct(c)) {
        t->p++;
        return c;
    }
    return -1;
}

static const char *const class_names[][2] = {
    { "alpha", "AZaz" },     { "digit", "09" },
    { "alnum", "AZaz09" },   { "upper", "AZ" },
    { "lower", "az" },       { "xdigit", "09AFaf" },
    { "word", "AZaz09__" },  { "blank", "  \t\t" },
    { "space", "\t\r  " },   { "cntrl", "\x01\x1f\x7f\x7f" },
    { "punct", "!/:@[`{~" }, { "graph", "!~" },
    { "print", " ~" },       { "ascii", "\x01\x7f" },
};

/* "[:name:]" or "[:^name:]" at t->p into s. 0, or -1. */
static int add_named_class(struct tr *t, struct bset *s)
{
    const char *end = strstr(t->p + 2, ":]"), *name = t->p + 2, *r;
    struct bset k;
    size_t i, len;
    int c, neg = *name == '^';

    if (!end)
        return -1;
    name += neg;
    len = (size_t)(end - name);
    for (i = 0; i < sizeof(class_names) / sizeof(class_names[0]); i++) {
        if (strlen(class_names[i][0]) == len && strncmp(name, class_names[i][0], len) == 0)
            break;
    }
    if (i == sizeof(class_names) / sizeof(class_names[0]))
        return -1;
    memset(&k, 0, sizeof(k));
    for (r = class_names[i][1]; r[0] && r[1]; r += 2)
        add_range(&k, (unsigned char)r[0], (unsigned char)r[1]);
    if (strcmp(class_names[i][0], "space") == 0)
        add_range(&k, '\t', '\r');
    for (c = 1; c < 256; c++) {
        if (has(&k, c) != neg)
            add(s, c);
    }
    t->p = end + 2;
    return 0;
}

/* One bracket item's first character: a byte (>= 0), or -2 when a class was added. -1 on error. */
static int bracket_atom(struct tr *t, struct bset *s)
{
    int c = (unsigned char)*t->p;

    if (c == '[' && t->p[1] == ':')
        return add_named_class(t, s) == 0 ? -2 : -1;
    if (c == '\\') {
        t->p++;
        if (add_class_escape(s, (unsigned char)*t->p) == 0) {
            t->p++;
            return -2;
        }
        return char_escape(t);
    }
    if (c == 0 || c >= 0x80)
        return -1;
    t->p++;
    return c;
}

/* A bracket expression; t->p just after '['. */
static void bracket(struct tr *t)
{
    struct bset s;
    int neg = 0, first = 1, lo, hi;

    memset(&s, 0, sizeof(s));
    if (*t->p == '^') {
        neg = 1;
        t->p++;
    }
    for (;;) {
        if (*t->p == ']' && !first) {
            t->p++;
            break;
        }
        first = 0;
        lo = bracket_atom(t, &s);
        if (lo == -1)
            goto bad;
        if (lo == -2 || t->p[0] != '-' || t->p[1] == ']' || t->p[1] == '\0') {
            add(&s, lo);
            continue;
        }
        t->p++;
        hi = bracket_atom(t, &s);
        if (hi < 0 || hi < lo)
            goto bad;
        add_range(&s, lo, hi);
    }
    put_set(t, &s, neg);
    return;
bad:
    t->err = 1;
}

/* Length of a valid "{n}", "{n,}" or "{n,m}" at p (its count, m or else n, in *count), else 0. */
static size_t repeat_len(const char *p, long *count)
{
    const char *q = p + 1;
    long n = 0, m = -1;

    if (!isdigit((unsigned char)*q))
        return 0;
    while (isdigit((unsigned char)*q) && n <= REPEAT_MAX)
        n = n * 10 + (*q++ - '0');
    if (*q == ',') {
        q++;
        if (isdigit((unsigned char)*q)) {
            m = 0;
            while (isdigit((unsigned char)*q) && m <= REPEAT_MAX)
                m = m * 10 + (*q++ - '0');
        }
    }
    if (*q != '}' || n > REPEAT_MAX || m > REPEAT_MAX || (m >= 0 && m < n))
        return 0;
    *count = m >= 0 ? m : n;
    return (size_t)(q - p) + 1;
}

static void escape(struct tr *t)
{
    struct bset s;
    int c;

    t->p++;
    memset(&s, 0, sizeof(s));
    if (add_class_escape(&s, (unsigned char)*t->p) == 0) {
        t->p++;
        put_set(t, &s, 0);
        return;
    }
    c = char_escape(t);
    if (c < 0)
        t->err = 1;
    else
        put_lit(t, c);
}

static void group(struct tr *t)
{
    const char *gt;

    if (t->p[1] != '?') {
        t->p++;
    } else if (t->p[2] == ':') {
        t->p += 3;
    } else if ((t->p[2] == 'P' && t->p[3] == '<') || t->p[2] == '<') {
        gt = strchr(t->p, '>');
        if (!gt || gt == t->p + (t->p[2] == '<' ? 3 : 4)) {
            t->err = 1;
            return;
        }
        t->p = gt + 1;
    } else {
        t->err = 1;
        return;
    }
    putc1(t, '(');
}

static void atom_done(struct tr *t, long inner)
{
    t->prev = 1;
    t->last = inner;
    if (inner > t->prod[t->depth])
        t->prod[t->depth] = inner;
}

/*
 * A repeat (count k, 0 for * + ?) of the last atom. Go refuses one without
 * an atom, a repeat of a repeat, and nested repeat counts above 1000.
 */
static void repeated(struct tr *t, long k)
{
    long p = k > 0 ? t->last * k : t->last;

    if (t->prev != 1 || p > REPEAT_MAX) {
        t->err = 1;
        return;
    }
    if (p > t->prod[t->depth])
        t->prod[t->depth] = p;
    t->prev = 2;
}

static void close_group(struct tr *t)
{
    long inner;

    if (t->depth == 0) {
        t->err = 1;
        return;
    }
    inner = t->prod[t->depth--];
    putc1(t, ')');
    t->p++;
    atom_done(t, inner);
}

static void open_group(struct tr *t)
{
    group(t);
    if (t->err || t->depth == DEPTH_MAX) {
        t->err = 1;
        return;
    }
    t->prod[++t->depth] = 1;
    t->prev = 0;
}

static void step(struct tr *t)
{
    long count = 0;
    size_t k;
    int c = (unsigned char)*t->p;

    switch (c) {
    case '(':
        open_group(t);
        return;
    case ')':
        close_group(t);
        return;
    case '{':
        k = repeat_len(t->p, &count);
        if (!k)
            break;
        repeated(t, count);
        put(t, t->p, k);
        t->p += k;
        if (*t->p == '?') /* non-greedy: the same strings match */
            t->p++;
        return;
    case '*':
    case '+':
    case '?':
        repeated(t, 0);
        putc1(t, c);
        if (*++t->p == '?')
            t->p++;
        return;
    case '|':
        putc1(t, c);
        t->p++;
        t->prev = 0;
        return;
    case '^':
    case '$':
        putc1(t, c);
        t->p++;
        atom_done(t, 1);
        return;
    default:
        break;
    }
    if (c == '\\') {
        escape(t);
    } else if (c == '[') {
        t->p++;
        bracket(t);
    } else if (c == '.') {
        put(t, "[^\n]", 4);
        t->p++;
    } else {
        put_lit(t, c);
        t->p++;
    }
    atom_done(t, 1);
}

int ksim_goregex_translate(const char *pattern, char *out, size_t n)
{
    struct tr t;

    if (!n)
        return -1;
    out[0] = '\0';
    if (!pattern || strlen(pattern) > KSIM_GOREGEX_MAX)
        return -1;
    memset(&t, 0, sizeof(t));
    t.p = pattern;
    t.out = out;
    t.n = n;
    t.prod[0] = 1;
    while (*t.p && !t.err)
        step(&t);
    if (t.err || t.depth) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}

int ksim_goregex_compile(const char *pattern, regex_t *re)
{
    char *ere = malloc(ERE_MAX);
    int rc = -1;

    if (ere && ksim_goregex_translate(pattern, ere, ERE_MAX) == 0)
        rc = regcomp(re, ere, REG_EXTENDED | REG_NOSUB) == 0 ? 0 : -1;
    free(ere);
    return rc;
}

int ksim_goregex_match(const char *pattern, const char *s)
{
    regex_t re;
    int rc;

    if (ksim_goregex_compile(pattern, &re) != 0)
        return -1;
    rc = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return rc;
}
