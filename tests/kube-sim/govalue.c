/* govalue - Go's printing of validation values and the OpenAPI string formats; see govalue.h. */
#include "tests/kube-sim/govalue.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ksim_text_init(struct ksim_text *t, char *p, size_t n)
{
    t->p = p;
    t->n = n;
    t->len = 0;
    p[0] = '\0';
}

void ksim_text_put(struct ksim_text *t, const char *s, size_t k)
{
    if (t->len + 1 >= t->n)
        return;
    if (k > t->n - t->len - 1)
        k = t->n - t->len - 1;
    memcpy(t->p + t->len, s, k);
    t->len += k;
    t->p[t->len] = '\0';
}

void ksim_text_printf(struct ksim_text *t, const char *fmt, ...)
{
    va_list ap;
    int w;

    if (t->len + 1 >= t->n)
        return;
    va_start(ap, fmt);
    w = vsnprintf(t->p + t->len, t->n - t->len, fmt, ap);
    va_end(ap);
    if (w < 0)
        t->p[t->len] = '\0';
    else
        t->len = t->len + (size_t)w < t->n ? t->len + (size_t)w : t->n - 1;
}

/* Length of the valid UTF-8 sequence at s with its code point in *cp, or 0. */
static size_t utf8_seq(const unsigned char *s, unsigned *cp)
{
    size_t n, i;
    unsigned c = s[0], min;

    if (c < 0xc2 || c > 0xf4)
        return 0;
    n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    c &= n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07;
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

/* Go's unicode.IsPrint, close enough: C1 controls, NBSP, SHY, separators, BOM are not. */
static int go_printable(unsigned cp)
{
    return !(cp < 0xa1 || cp == 0xad || (cp >= 0x2028 && cp <= 0x2029) || cp == 0xfeff ||
             (cp >= 0x200b && cp <= 0x200f) || (cp >= 0xfff9 && cp <= 0xfffb) ||
             (cp & 0xfffe) == 0xfffe);
}

void ksim_goval_quote(struct ksim_text *t, const char *s)
{
    static const char esc[] = "\aa\bb\ff\nn\rr\tt\vv";
    const unsigned char *p = (const unsigned char *)s;
    const char *e;
    unsigned cp;
    size_t k;

    ksim_text_put(t, "\"", 1);
    while (*p) {
        if (*p == '"' || *p == '\\') {
            ksim_text_printf(t, "\\%c", *p++);
        } else if (*p >= 0x20 && *p < 0x7f) {
            ksim_text_put(t, (const char *)p++, 1);
        } else if (*p < 0x80 && (e = strchr(esc, *p)) != NULL) {
            ksim_text_printf(t, "\\%c", e[1]);
            p++;
        } else if (*p < 0x80) {
            ksim_text_printf(t, "\\x%02x", *p++);
        } else if ((k = utf8_seq(p, &cp)) == 0) {
            ksim_text_printf(t, "\\x%02x", *p++);
        } else if (go_printable(cp)) {
            ksim_text_put(t, (const char *)p, k);
            p += k;
        } else {
            ksim_text_printf(t, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
            p += k;
        }
    }
    ksim_text_put(t, "\"", 1);
}

/* The exponent of a "%e" text. */
static int exponent_of(const char *d)
{
    const char *e = strchr(d, 'e');

    return e ? (int)strtol(e + 1, NULL, 10) : 0;
}

void ksim_goval_float(struct ksim_text *t, double f)
{
    char d[64];
    int prec, exp, nd;

    if (isnan(f) || isinf(f)) {
        ksim_text_put(t, isnan(f) ? "NaN" : f > 0 ? "+Inf" : "-Inf", isnan(f) ? 3 : 4);
        return;
    }
    if (f == 0) {
        ksim_text_put(t, signbit(f) ? "-0" : "0", signbit(f) ? 2 : 1);
        return;
    }
    for (prec = 1; prec < 17; prec++) { /* the shortest digits that read back as f */
        snprintf(d, sizeof(d), "%.*e", prec - 1, f);
        if (strtod(d, NULL) == f)
            break;
    }
    snprintf(d, sizeof(d), "%.*e", prec - 1, f);
    exp = exponent_of(d);
    nd = prec;
    if (exp < -4 || exp >= 6) /* Go: shortest %v uses %e from exponent 6 on */
        ksim_text_printf(t, "%.*e", nd - 1, f);
    else
        ksim_text_printf(t, "%.*f", nd - 1 - exp > 0 ? nd - 1 - exp : 0, f);
}

int ksim_goval_int(const cJSON *v, long long *out)
{
    double d;

    if (!cJSON_IsNumber(v))
        return 0;
    d = v->valuedouble;
    if (d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
        return 0;
    *out = (long long)d;
    return 1;
}

const char *ksim_goval_type(const cJSON *v)
{
    long long i;

    if (cJSON_IsString(v))
        return "string";
    if (cJSON_IsBool(v))
        return "boolean";
    if (cJSON_IsNumber(v))
        return ksim_goval_int(v, &i) ? "integer" : "number";
    if (cJSON_IsArray(v))
        return "array";
    if (cJSON_IsObject(v))
        return "object";
    return "null";
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* %#v of a map or slice element. */
static void sharp_value(struct ksim_text *t, const cJSON *v, int depth);

static void sharp_map(struct ksim_text *t, const cJSON *v, int depth)
{
    const cJSON *c, **keys;
    size_t n = 0, i;

    cJSON_ArrayForEach (c, v)
        n++;
    ksim_text_put(t, "map[string]interface {}{", 24);
    keys = n ? calloc(n, sizeof(*keys)) : NULL;
    if (n && !keys) {
        ksim_text_put(t, "...}", 4);
        return;
    }
    i = 0;
    cJSON_ArrayForEach (c, v)
        keys[i++] = c;
    qsort(keys, n, sizeof(*keys), key_cmp);
    for (i = 0; i < n; i++) {
        if (i)
            ksim_text_put(t, ", ", 2);
        ksim_goval_quote(t, keys[i]->string);
        ksim_text_put(t, ":", 1);
        sharp_value(t, keys[i], depth + 1);
    }
    free(keys);
    ksim_text_put(t, "}", 1);
}

static void sharp_value(struct ksim_text *t, const cJSON *v, int depth)
{
    const cJSON *c;
    int first = 1;

    if (depth > 32 || t->len + 1 >= t->n)
        return;
    if (cJSON_IsNull(v)) {
        ksim_text_put(t, "interface {}(nil)", 17);
    } else if (cJSON_IsObject(v)) {
        sharp_map(t, v, depth);
    } else if (cJSON_IsArray(v)) {
        ksim_text_put(t, "[]interface {}{", 15);
        cJSON_ArrayForEach (c, v) {
            ksim_text_put(t, ", ", first ? 0 : 2);
            first = 0;
            sharp_value(t, c, depth + 1);
        }
        ksim_text_put(t, "}", 1);
    } else {
        ksim_goval_value(t, v);
    }
}

void ksim_goval_value(struct ksim_text *t, const cJSON *v)
{
    long long i;

    if (cJSON_IsString(v))
        ksim_goval_quote(t, v->valuestring);
    else if (cJSON_IsBool(v))
        ksim_text_put(t, cJSON_IsTrue(v) ? "true" : "false", cJSON_IsTrue(v) ? 4 : 5);
    else if (ksim_goval_int(v, &i))
        ksim_text_printf(t, "%lld", i);
    else if (cJSON_IsNumber(v))
        ksim_goval_float(t, v->valuedouble);
    else if (cJSON_IsObject(v) || cJSON_IsArray(v))
        sharp_value(t, v, 0);
    else
        ksim_text_put(t, "\"null\"", 6);
}

static const char *const formats[] = { "datetime", "date",  "byte", "uuid", "uuid3",
                                       "uuid4",    "uuid5", "ipv4", "ipv6", "cidr" };

/* The registry's name of format (no '-', lower case) into out, or "" when too long. */
static void normalize(const char *format, char *out, size_t n)
{
    size_t k = 0;

    for (; *format && k + 1 < n; format++) {
        if (*format != '-')
            out[k++] = (char)tolower((unsigned char)*format);
    }
    out[*format ? 0 : k] = '\0';
}

int ksim_goval_format_known(const char *format)
{
    char name[16];
    size_t i;

    normalize(format ? format : "", name, sizeof(name));
    for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        if (strcmp(name, formats[i]) == 0)
            return 1;
    }
    return 0;
}

static int digits(const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return 0;
    }
    return 1;
}

/* strfmt IsDate: YYYY-MM-DD, a real day of that month (time.Parse). */
static int is_date(const char *s, size_t n)
{
    static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    int y, m, d;

    if (n != 10 || s[4] != '-' || s[7] != '-' || !digits(s, 4) || !digits(s + 5, 2) ||
        !digits(s + 8, 2))
        return 0;
    y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    m = (s[5] - '0') * 10 + (s[6] - '0');
    d = (s[8] - '0') * 10 + (s[9] - '0');
    if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
        return 0;
    return !(m == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
}

/* strfmt IsDateTime: date 't' hh:mm:ss(.frac)?(z|+hh:mm), case-insensitive. */
static int is_date_time(const char *s)
{
    const char *t = s;
    size_t n = strlen(s);

    while (*t && *t != 't' && *t != 'T')
        t++;
    if (n < 4 || !*t || !is_date(s, (size_t)(t - s)))
        return 0;
    t++;
    if (strlen(t) < 9 || !digits(t, 2) || t[2] != ':' || !digits(t + 3, 2) || t[5] != ':' ||
        !digits(t + 6, 2) || strncmp(t, "23", 2) > 0 || strncmp(t + 3, "59", 2) > 0 ||
        strncmp(t + 6, "59", 2) > 0)
        return 0;
    t += 8;
    if (*t && *t != 'z' && *t != 'Z' && *t != '+' && *t != '-') {
        t++; /* "(.[0-9]+)?": any character, then digits */
        if (!isdigit((unsigned char)*t))
            return 0;
        while (isdigit((unsigned char)*t))
            t++;
    }
    if ((*t == 'z' || *t == 'Z') && !t[1])
        return 1;
    return (*t == '+' || *t == '-') && strlen(t) == 6 && digits(t + 1, 2) && t[3] == ':' &&
           digits(t + 4, 2);
}

/* base64.StdEncoding.DecodeString succeeds. */
static int is_base64(const char *s)
{
    size_t n = strlen(s), i, pad = 0;

    if (n % 4)
        return 0;
    for (i = 0; i < n; i++) {
        if (s[i] == '=' && i + 2 >= n && (i + 1 == n || s[i + 1] == '='))
            pad++;
        else if (pad || !(isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '/'))
            return 0;
    }
    return pad <= 2;
}

/* 8-4-4-4-12 hex digits; version (0 = any) checked with its variant. */
static int is_uuid(const char *s, int version)
{
    size_t i;

    if (strlen(s) != 36)
        return 0;
    for (i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23 ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
            return 0;
    }
    if (!version)
        return 1;
    return s[14] == '0' + version && strchr("89abAB", s[19]) != NULL;
}

static int is_cidr(const char *s)
{
    char addr[64];
    unsigned char bin[16];
    const char *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : 0;
    int v6, bits;

    if (!slash || n >= sizeof(addr) || !slash[1] || strlen(slash + 1) > 3 ||
        !digits(slash + 1, strlen(slash + 1)))
        return 0;
    memcpy(addr, s, n);
    addr[n] = '\0';
    v6 = strchr(addr, ':') != NULL;
    bits = (int)strtol(slash + 1, NULL, 10);
    return inet_pton(v6 ? AF_INET6 : AF_INET, addr, bin) == 1 && bits <= (v6 ? 128 : 32);
}

int ksim_goval_format_valid(const char *format, const char *s)
{
    unsigned char bin[16];
    char name[16];

    normalize(format ? format : "", name, sizeof(name));
    if (strcmp(name, "datetime") == 0)
        return is_date_time(s);
    if (strcmp(name, "date") == 0)
        return is_date(s, strlen(s));
    if (strcmp(name, "byte") == 0)
        return is_base64(s);
    if (strncmp(name, "uuid", 4) == 0 &&
        (!name[4] || (name[4] >= '3' && name[4] <= '5' && !name[5])))
        return is_uuid(s, name[4] ? name[4] - '0' : 0);
    if (strcmp(name, "ipv4") == 0)
        return inet_pton(AF_INET, s, bin) == 1;
    if (strcmp(name, "ipv6") == 0)
        return strchr(s, ':') && inet_pton(AF_INET6, s, bin) == 1;
    if (strcmp(name, "cidr") == 0)
        return is_cidr(s);
    return 1;
}
