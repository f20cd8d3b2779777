/* schemaval - OpenAPI schema validation of custom resources; see schemaval.h. */
#include "tests/kube-sim/schemaval.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kube-sim/goregex.h"
#include "tests/kube-sim/govalue.h"
#include "tests/kube-sim/obj.h"
#include "tests/kube-sim/schemalist.h"

#define PATH_LEN   1024
#define DEPTH_MAX  128
#define UNIQUE_MAX 1000 /* uniqueItems is checked on arrays this long at most */

struct vctx {
    struct ksim_fielderr *errs;
    size_t max, n, count; /* stored, found */
    int quiet;            /* > 0: count errors without storing them (anyOf branches) */
};

static void validate_node(struct vctx *c, const cJSON *s, const cJSON *x, const cJSON *old,
                          const char *path, int depth);

static void validate(struct vctx *c, const cJSON *s, const cJSON *x, const char *path, int depth)
{
    validate_node(c, s, x, NULL, path, depth);
}

static const cJSON *get(const cJSON *s, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(s, key);
}

/* Record an error: field (a leading '.' dropped), cause reason and the body printf'd. */
__attribute__((format(printf, 4, 5))) static void add(struct vctx *c, const char *field,
                                                      const char *reason, const char *fmt, ...)
{
    struct ksim_fielderr *f;
    va_list ap;

    c->count++;
    if (c->quiet || c->n >= c->max)
        return;
    f = &c->errs[c->n++];
    field += field[0] == '.';
    snprintf(f->field, sizeof(f->field), "%s", *field ? field : "<nil>"); /* the root: no path */
    snprintf(f->reason, sizeof(f->reason), "%s", reason);
    va_start(ap, fmt);
    if (vsnprintf(f->body, sizeof(f->body), fmt, ap) < 0)
        f->body[0] = '\0';
    va_end(ap);
}

/* "Invalid value: <v>: <path> in body <detail>" where v is a JSON value or a Go string. */
__attribute__((format(printf, 6, 7))) static void invalid(struct vctx *c, const char *path,
                                                          const char *reason, const cJSON *v,
                                                          const char *vstr, const char *fmt, ...)
{
    char val[256], detail[512];
    struct ksim_text t;
    va_list ap;

    ksim_text_init(&t, val, sizeof(val));
    if (vstr)
        ksim_goval_quote(&t, vstr);
    else
        ksim_goval_value(&t, v);
    va_start(ap, fmt);
    if (vsnprintf(detail, sizeof(detail), fmt, ap) < 0)
        detail[0] = '\0';
    va_end(ap);
    add(c, path, reason, "Invalid value: %s: %s in body %s", val, path, detail);
}

static bool type_has(const cJSON *types, const char *name)
{
    const cJSON *t;

    if (cJSON_IsString(types))
        return strcmp(types->valuestring, name) == 0;
    cJSON_ArrayForEach (t, types) {
        if (cJSON_IsString(t) && strcmp(t->valuestring, name) == 0)
            return true;
    }
    return false;
}

static void type_join(const cJSON *types, char *out, size_t n)
{
    struct ksim_text t;
    const cJSON *e;

    ksim_text_init(&t, out, n);
    if (cJSON_IsString(types)) {
        ksim_text_printf(&t, "%s", types->valuestring);
        return;
    }
    cJSON_ArrayForEach (e, types) {
        if (cJSON_IsString(e))
            ksim_text_printf(&t, "%s%s", t.len ? "," : "", e->valuestring);
    }
}

/* kube-openapi's typeValidator. */
static void check_type(struct vctx *c, const cJSON *s, const cJSON *x, const char *path)
{
    const cJSON *types = get(s, "type");
    const char *format = cJSON_IsString(get(s, "format")) ? get(s, "format")->valuestring : "";
    const char *st = ksim_goval_type(x), *dfmt;
    bool has_types = cJSON_IsString(types) || cJSON_GetArraySize(types) > 0;
    bool int_float, str_or_arr = cJSON_IsString(x) || cJSON_IsArray(x);
    char joined[128];

    if (!has_types && !*format)
        return;
    type_join(types, joined, sizeof(joined));
    if (cJSON_IsNull(x)) {
        if (has_types && !type_has(types, "null") && !cJSON_IsTrue(get(s, "nullable")))
            invalid(c, path, "FieldValueTypeInvalid", NULL, "null", "must be of type %s: \"null\"",
                    joined);
        return;
    }
    dfmt = strcmp(st, "integer") == 0 ? "int64" : strcmp(st, "number") == 0 ? "float64" : "";
    int_float = strcmp(st, "integer") == 0 && type_has(types, "number");
    if (!str_or_arr && *format &&
        !(type_has(types, st) || strcmp(dfmt, format) == 0 || int_float)) {
        invalid(c, path, "FieldValueTypeInvalid", NULL, dfmt, "must be of type %s: \"%s\"", format,
                dfmt);
        return;
    }
    if (!(type_has(types, "number") || type_has(types, "integer")) && *format && str_or_arr)
        return;
    if (!(type_has(types, st) || int_float))
        invalid(c, path, "FieldValueTypeInvalid", NULL, st, "must be of type %s: \"%s\"", joined,
                st);
}

/* Run s on x quietly (nothing recorded or counted): whether it found nothing. */
static bool passes(struct vctx *c, const cJSON *s, const cJSON *x, const char *path, int depth)
{
    size_t before = c->count;
    bool ok;

    c->quiet++;
    validate(c, s, x, path, depth);
    c->quiet--;
    ok = c->count == before;
    c->count = before;
    return ok;
}

static void nil_invalid(struct vctx *c, const char *path, const char *what)
{
    char q[PATH_LEN + 8];
    struct ksim_text t;

    ksim_text_init(&t, q, sizeof(q));
    ksim_goval_quote(&t, path);
    add(c, "<nil>", "FieldValueInvalid", "Invalid value: \"\": %s %s", q, what);
}

static void any_of(struct vctx *c, const cJSON *any, const cJSON *x, const char *path, int depth)
{
    const cJSON *b, *first_bad = NULL;

    cJSON_ArrayForEach (b, any) {
        if (passes(c, b, x, path, depth))
            return;
        first_bad = first_bad ? first_bad : b;
    }
    nil_invalid(c, path, "must validate at least one schema (anyOf)");
    validate(c, first_bad, x, path, depth);
}

static void one_of(struct vctx *c, const cJSON *one, const cJSON *x, const char *path, int depth)
{
    const cJSON *b, *first_bad = NULL;
    char msg[128];
    int valid = 0;

    cJSON_ArrayForEach (b, one) {
        if (passes(c, b, x, path, depth))
            valid++;
        else
            first_bad = first_bad ? first_bad : b;
    }
    if (valid == 1)
        return;
    if (valid)
        snprintf(msg, sizeof(msg),
                 "must validate one and only one schema (oneOf). Found %d valid alternatives",
                 valid);
    else
        snprintf(msg, sizeof(msg),
                 "must validate one and only one schema (oneOf). Found none valid");
    nil_invalid(c, path, msg);
    if (!valid && first_bad)
        validate(c, first_bad, x, path, depth);
}

/* anyOf, oneOf, allOf and not (kube-openapi's schemaPropsValidator). */
static void check_props(struct vctx *c, const cJSON *s, const cJSON *x, const char *path, int depth)
{
    const cJSON *all = get(s, "allOf"), *b;
    int valid = 1;

    if (cJSON_GetArraySize(get(s, "anyOf")) > 0)
        any_of(c, get(s, "anyOf"), x, path, depth);
    if (cJSON_GetArraySize(get(s, "oneOf")) > 0)
        one_of(c, get(s, "oneOf"), x, path, depth);
    cJSON_ArrayForEach (b, all) {
        if (!passes(c, b, x, path, depth)) {
            valid = 0;
            validate(c, b, x, path, depth);
        }
    }
    if (!valid)
        nil_invalid(c, path, "must validate all the schemas (allOf)");
    if (cJSON_IsObject(get(s, "not")) && passes(c, get(s, "not"), x, path, depth))
        nil_invalid(c, path, "must not validate the schema (not)");
}

static size_t rune_count(const char *s)
{
    size_t n = 0;

    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* kube-openapi's stringValidator (the first failure only) and formatValidator. */
static void check_string(struct vctx *c, const cJSON *s, const cJSON *x, const char *path)
{
    const cJSON *max = get(s, "maxLength"), *min = get(s, "minLength"), *pat = get(s, "pattern");
    const cJSON *fmt = get(s, "format");
    size_t len = rune_count(x->valuestring);
    struct ksim_text t;
    char q[256];

    if (cJSON_IsNumber(max) && (double)len > max->valuedouble) {
        add(c, path, "FieldValueTooLong", "Too long: may not be more than %.0f %s",
            max->valuedouble, max->valuedouble == 1 ? "byte" : "bytes");
    } else if (cJSON_IsNumber(min) && (double)len < min->valuedouble) {
        invalid(c, path, "FieldValueInvalid", x, NULL, "should be at least %.0f chars long",
                min->valuedouble);
    } else if (cJSON_IsString(pat) && *pat->valuestring &&
               ksim_goregex_match(pat->valuestring, x->valuestring) == 0) {
        invalid(c, path, "FieldValueInvalid", x, NULL, "should match '%s'", pat->valuestring);
    }
    if (cJSON_IsString(fmt) && ksim_goval_format_known(fmt->valuestring) &&
        !ksim_goval_format_valid(fmt->valuestring, x->valuestring)) {
        ksim_text_init(&t, q, sizeof(q));
        ksim_goval_quote(&t, x->valuestring);
        invalid(c, path, "FieldValueTypeInvalid", x, NULL, "must be of type %s: %s",
                fmt->valuestring, q);
    }
}

/*
 * The RE of a CEL rule of the one form kube-sim evaluates, self.matches(r'RE')
 * or self.matches(r"RE") (a raw string: no escapes), into out; 0, or -1 for
 * any other rule.
 */
static int cel_matches_re(const char *rule, char *out, size_t n)
{
    static const char head[] = "self.matches(r";
    size_t len;
    char q;

    while (*rule == ' ' || *rule == '\n' || *rule == '\t')
        rule++;
    if (strncmp(rule, head, sizeof(head) - 1) != 0)
        return -1;
    rule += sizeof(head) - 1;
    q = *rule++;
    if ((q != '\'' && q != '"') || !strchr(rule, q))
        return -1;
    len = (size_t)(strchr(rule, q) - rule);
    if (len >= n || rule[len + 1] != ')' || rule[len + 2 + strspn(rule + len + 2, " \n\t")])
        return -1;
    memcpy(out, rule, len);
    out[len] = '\0';
    return 0;
}

/*
 * x-kubernetes-validations on a string: the rules of the form
 * cel_matches_re reads are evaluated, a failure worded as kube-apiserver's
 * ("Invalid value: \"string\": <message>", "failed rule: <rule>" without a
 * message); any other rule is not evaluated (kube-sim has no CEL).
 */
static void check_cel(struct vctx *c, const cJSON *s, const cJSON *x, const char *path)
{
    const cJSON *r, *rule, *msg;
    char re[KSIM_GOREGEX_MAX + 1];

    cJSON_ArrayForEach (r, get(s, "x-kubernetes-validations")) {
        rule = get(r, "rule");
        msg = get(r, "message");
        if (!cJSON_IsString(rule) || cel_matches_re(rule->valuestring, re, sizeof(re)) != 0 ||
            ksim_goregex_match(re, x->valuestring) != 0)
            continue;
        if (cJSON_IsString(msg) && *msg->valuestring)
            add(c, path, "FieldValueInvalid", "Invalid value: \"string\": %s", msg->valuestring);
        else
            add(c, path, "FieldValueInvalid", "Invalid value: \"string\": failed rule: %s",
                rule->valuestring);
    }
}

/* A bound as the message prints it: as int64 for an integer value, else as float64. */
static void bound_text(double b, bool as_int, char *out, size_t n)
{
    struct ksim_text t;

    ksim_text_init(&t, out, n);
    if (as_int)
        ksim_text_printf(&t, "%lld", (long long)b);
    else
        ksim_goval_float(&t, b);
}

static bool below(double v, long long iv, bool is_int, double b, bool excl)
{
    if (is_int)
        return excl ? iv <= (long long)b : iv < (long long)b;
    return excl ? v <= b : v < b;
}

static bool above(double v, long long iv, bool is_int, double b, bool excl)
{
    if (is_int)
        return excl ? iv >= (long long)b : iv > (long long)b;
    return excl ? v >= b : v > b;
}

/* kube-openapi's numberValidator: multipleOf, minimum, maximum. */
static void check_number(struct vctx *c, const cJSON *s, const cJSON *x, const char *path)
{
    const cJSON *mul = get(s, "multipleOf"), *min = get(s, "minimum"), *max = get(s, "maximum");
    bool exmin = cJSON_IsTrue(get(s, "exclusiveMinimum"));
    bool exmax = cJSON_IsTrue(get(s, "exclusiveMaximum"));
    long long iv = 0;
    bool is_int = ksim_goval_int(x, &iv) != 0;
    double v = x->valuedouble, q;
    char b[64];

    if (cJSON_IsNumber(mul) && mul->valuedouble > 0 && (!is_int || (long long)mul->valuedouble)) {
        q = mul->valuedouble < 1 ? 1 / mul->valuedouble * v : v / mul->valuedouble;
        if (is_int ? iv % (long long)mul->valuedouble != 0 : q != floor(q)) {
            bound_text(mul->valuedouble, is_int, b, sizeof(b));
            invalid(c, path, "FieldValueInvalid", x, NULL, "should be a multiple of %s", b);
        }
    }
    if (cJSON_IsNumber(min) && below(v, iv, is_int, min->valuedouble, exmin)) {
        bound_text(min->valuedouble, is_int, b, sizeof(b));
        invalid(c, path, "FieldValueInvalid", x, NULL, "should be greater than %s%s",
                exmin ? "" : "or equal to ", b);
    }
    if (cJSON_IsNumber(max) && above(v, iv, is_int, max->valuedouble, exmax)) {
        bound_text(max->valuedouble, is_int, b, sizeof(b));
        invalid(c, path, "FieldValueInvalid", x, NULL, "should be less than %s%s",
                exmax ? "" : "or equal to ", b);
    }
}

static bool has_duplicates(const cJSON *x)
{
    const cJSON *a, *b;

    if (cJSON_GetArraySize(x) > UNIQUE_MAX)
        return false;
    for (a = x->child; a; a = a->next) {
        for (b = a->next; b; b = b->next) {
            if (cJSON_Compare(a, b, 1))
                return true;
        }
    }
    return false;
}

/* kube-openapi's schemaSliceValidator: items, then minItems, maxItems, uniqueItems. */
static void check_array(struct vctx *c, const cJSON *s, const cJSON *x, const char *path, int depth)
{
    const cJSON *items = get(s, "items"), *min = get(s, "minItems"), *max = get(s, "maxItems");
    const cJSON *v;
    char sub[PATH_LEN];
    int i = 0, n = cJSON_GetArraySize(x);

    if (cJSON_IsObject(items)) {
        cJSON_ArrayForEach (v, x) {
            snprintf(sub, sizeof(sub), "%s[%d]", path, i++);
            validate(c, items, v, sub, depth + 1);
        }
    }
    if (cJSON_IsNumber(min) && n < min->valuedouble)
        add(c, path, "FieldValueInvalid",
            "Invalid value: %d: %s in body should have at least %.0f items", n, path,
            min->valuedouble);
    if (cJSON_IsNumber(max) && n > max->valuedouble)
        add(c, path, "FieldValueTooMany", "Too many: %d: must have at most %.0f %s", n,
            max->valuedouble, max->valuedouble == 1 ? "item" : "items");
    if (cJSON_IsTrue(get(s, "uniqueItems")) && has_duplicates(x))
        add(c, path, "FieldValueInvalid",
            "Invalid value: \"\": %s in body shouldn't contain duplicates", path);
}

/* Whether x equals e as Go's enum check finds (a conversion to e's type first). */
static bool enum_equal(const cJSON *x, const cJSON *e)
{
    long long xi, ei;
    char rune[8];

    if (cJSON_IsNumber(x) && cJSON_IsNumber(e)) {
        if (ksim_goval_int(e, &ei))
            return (ksim_goval_int(x, &xi) ? xi : (long long)x->valuedouble) == ei;
        return x->valuedouble == e->valuedouble;
    }
    if (ksim_goval_int(x, &xi) && cJSON_IsString(e)) { /* Go converts an integer to a rune */
        if (xi < 0 || xi > 0x10ffff || (xi >= 0xd800 && xi <= 0xdfff))
            xi = 0xfffd;
        if (xi < 0x80)
            snprintf(rune, sizeof(rune), "%c", (int)xi);
        else if (xi < 0x800)
            snprintf(rune, sizeof(rune), "%c%c", (int)(0xc0 | (xi >> 6)),
                     (int)(0x80 | (xi & 0x3f)));
        else if (xi < 0x10000)
            snprintf(rune, sizeof(rune), "%c%c%c", (int)(0xe0 | (xi >> 12)),
                     (int)(0x80 | ((xi >> 6) & 0x3f)), (int)(0x80 | (xi & 0x3f)));
        else
            snprintf(rune, sizeof(rune), "%c%c%c%c", (int)(0xf0 | (xi >> 18)),
                     (int)(0x80 | ((xi >> 12) & 0x3f)), (int)(0x80 | ((xi >> 6) & 0x3f)),
                     (int)(0x80 | (xi & 0x3f)));
        return xi != 0 && strcmp(rune, e->valuestring) == 0;
    }
    return !cJSON_IsNull(x) && cJSON_Compare(x, e, 1);
}

/* kube-openapi's basicCommonValidator, reported as field.NotSupported. */
static void check_enum(struct vctx *c, const cJSON *s, const cJSON *x, const char *path)
{
    const cJSON *en = get(s, "enum"), *e;
    char val[256], list[512], *j;
    struct ksim_text t;

    if (cJSON_GetArraySize(en) == 0)
        return;
    cJSON_ArrayForEach (e, en) {
        if (enum_equal(x, e))
            return;
    }
    ksim_text_init(&t, val, sizeof(val));
    ksim_goval_value(&t, x);
    ksim_text_init(&t, list, sizeof(list));
    cJSON_ArrayForEach (e, en) {
        ksim_text_put(&t, ", ", t.len ? 2 : 0);
        if (cJSON_IsString(e)) {
            ksim_goval_quote(&t, e->valuestring);
        } else if ((j = cJSON_PrintUnformatted(e)) != NULL) {
            ksim_goval_quote(&t, j);
            cJSON_free(j);
        }
    }
    add(c, path, "FieldValueNotSupported", "Unsupported value: %s: supported values: %s", val,
        list);
}

static void child_path(const char *path, const char *key, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s", path, *path ? "." : "", key);
}

/* kube-openapi's objectValidator; properties are ratcheted against their old values in old. */
static void check_object(struct vctx *c, const cJSON *s, const cJSON *x, const cJSON *old,
                         const char *path, int depth)
{
    const cJSON *props = get(s, "properties"), *addl = get(s, "additionalProperties");
    const cJSON *minp = get(s, "minProperties"), *maxp = get(s, "maxProperties"), *p, *v;
    char sub[PATH_LEN];
    int n = cJSON_GetArraySize(x);

    if (cJSON_IsNumber(minp) && n < minp->valuedouble) {
        add(c, path, "FieldValueInvalid",
            "Invalid value: %d: %s in body should have at least %.0f properties", n, path,
            minp->valuedouble);
        return;
    }
    if (cJSON_IsNumber(maxp) && n > maxp->valuedouble) {
        add(c, path, "FieldValueTooMany", "Too many: %d: must have at most %.0f %s", n,
            maxp->valuedouble, maxp->valuedouble == 1 ? "item" : "items");
        return;
    }
    if (cJSON_IsObject(addl)) {
        cJSON_ArrayForEach (v, x) {
            if (!v->string || get(props, v->string))
                continue;
            snprintf(sub, sizeof(sub), "%s.%s", path, v->string);
            validate(c, addl, v, sub, depth + 1);
        }
    }
    cJSON_ArrayForEach (p, props) {
        if (!p->string || !(v = get(x, p->string)))
            continue;
        child_path(path, p->string, sub, sizeof(sub));
        validate_node(c, p, v, cJSON_IsObject(old) ? get(old, p->string) : NULL, sub, depth + 1);
    }
    cJSON_ArrayForEach (p, get(s, "required")) {
        if (!cJSON_IsString(p) || get(x, p->valuestring))
            continue;
        snprintf(sub, sizeof(sub), "%s.%s", path, p->valuestring);
        add(c, sub, "FieldValueRequired", "Required value");
    }
}

/*
 * Validate x by s. With old (x's correlated value in the object an update
 * replaces), an unchanged value is not validated: kube-apiserver's
 * ratcheting drops the errors of a value equal to its old one.
 */
static void validate_node(struct vctx *c, const cJSON *s, const cJSON *x, const cJSON *old,
                          const char *path, int depth)
{
    if (!cJSON_IsObject(s) || depth > DEPTH_MAX || (old && cJSON_Compare(old, x, 1)))
        return;
    check_type(c, s, x, path);
    if (cJSON_IsNull(x)) {
        check_enum(c, s, x, path);
        return;
    }
    check_props(c, s, x, path, depth);
    if (cJSON_IsString(x)) {
        check_string(c, s, x, path);
        check_cel(c, s, x, path);
    }
    if (cJSON_IsNumber(x))
        check_number(c, s, x, path);
    if (cJSON_IsArray(x))
        check_array(c, s, x, path, depth);
    check_enum(c, s, x, path);
    if (cJSON_IsObject(x))
        check_object(c, s, x, old, path, depth);
}

size_t ksim_schemaval_check(const cJSON *schema, const cJSON *obj, const cJSON *old,
                            struct ksim_fielderr *errs, size_t max)
{
    struct vctx c;

    memset(&c, 0, sizeof(c));
    c.errs = errs;
    c.max = max;
    validate_node(&c, schema, obj, old, "", 0);
    c.count += ksim_schemalist_check(schema, obj, errs, max, &c.n);
    return c.count;
}

int ksim_schemaval_obj(const struct ksim_rtype *rt, const cJSON *obj, const cJSON *old,
                       struct ksim_apierr *e)
{
    struct ksim_fielderr *errs;
    const char *name;
    size_t n;
    int code = 0;

    if (!rt || !rt->custom || !rt->schema)
        return 0;
    errs = calloc(KSIM_SCHEMAVAL_MAX, sizeof(*errs));
    if (!errs)
        return ksim_apierr_internal(e, "out of memory");
    n = ksim_schemaval_check(rt->schema, obj, old, errs, KSIM_SCHEMAVAL_MAX);
    if (n) {
        name = ksim_obj_meta_str(obj, "name");
        code = ksim_apierr_invalid_list(e, rt->group, rt->kind, name ? name : "", errs,
                                        n < KSIM_SCHEMAVAL_MAX ? n : KSIM_SCHEMAVAL_MAX);
    }
    free(errs);
    return code;
}
