#include "tests/kube-sim/sel.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REQS   64
#define MAX_VALUES 64

enum tok {
    T_ID,
    T_EQ,    /* = */
    T_DEQ,   /* == */
    T_NEQ,   /* != */
    T_NOT,   /* ! */
    T_IN,    /* in */
    T_NOTIN, /* notin */
    T_OPEN,  /* ( */
    T_CLOSE, /* ) */
    T_COMMA, /* , */
    T_GT,    /* > */
    T_LT,    /* < */
    T_END,   /* end of input */
};

struct lexer {
    const char *p;
    char text[320]; /* text of the last T_ID */
};

/* The operator tokens: c alone, or c followed by '=' (with_eq; alone when there is no pair). */
static const struct {
    char c;
    enum tok alone, with_eq;
} ops[] = {
    { '(', T_OPEN, T_OPEN }, { ')', T_CLOSE, T_CLOSE }, { ',', T_COMMA, T_COMMA },
    { '>', T_GT, T_GT },     { '<', T_LT, T_LT },       { '=', T_EQ, T_DEQ },
    { '!', T_NOT, T_NEQ },
};

#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* The index in ops of c, or NOPS. */
static size_t op_of(char c)
{
    size_t i;

    for (i = 0; i < NOPS && ops[i].c != c; i++) {
    }
    return i;
}

static enum tok lex(struct lexer *lx)
{
    size_t n = 0, i;

    while (isspace((unsigned char)*lx->p))
        lx->p++;
    if (!*lx->p)
        return T_END;
    i = op_of(*lx->p);
    if (i < NOPS) {
        if (ops[i].with_eq != ops[i].alone && lx->p[1] == '=') {
            lx->p += 2;
            return ops[i].with_eq;
        }
        lx->p++;
        return ops[i].alone;
    }
    while (*lx->p && !isspace((unsigned char)*lx->p) && op_of(*lx->p) == NOPS) {
        if (n + 1 < sizeof(lx->text))
            lx->text[n++] = *lx->p;
        lx->p++;
    }
    lx->text[n] = '\0';
    if (strcmp(lx->text, "in") == 0)
        return T_IN;
    if (strcmp(lx->text, "notin") == 0)
        return T_NOTIN;
    return T_ID;
}

/* Peek at the next token without consuming it. */
static enum tok peek(struct lexer *lx)
{
    struct lexer copy = *lx;

    return lex(&copy);
}

static int name_ok(const char *s, size_t len, size_t max)
{
    size_t i;

    if (len == 0 || len > max)
        return 0;
    if (!isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[len - 1]))
        return 0;
    for (i = 0; i < len; i++) {
        char c = s[i];

        if (!isalnum((unsigned char)c) && c != '-' && c != '_' && c != '.')
            return 0;
    }
    return 1;
}

static int prefix_ok(const char *s, size_t len)
{
    size_t i;

    if (len == 0 || len > 253)
        return 0;
    for (i = 0; i < len; i++) {
        char c = s[i];

        if (!islower((unsigned char)c) && !isdigit((unsigned char)c) && c != '-' && c != '.')
            return 0;
    }
    return isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[len - 1]);
}

/* A qualified label key: [prefix/]name. */
static int key_ok(const char *key)
{
    const char *slash = strchr(key, '/');

    if (!slash)
        return name_ok(key, strlen(key), 63);
    return prefix_ok(key, (size_t)(slash - key)) && name_ok(slash + 1, strlen(slash + 1), 63);
}

static int value_ok(const char *v)
{
    return v[0] == '\0' || name_ok(v, strlen(v), 63);
}

static void req_release(struct ksim_sel_req *r)
{
    size_t i;

    free(r->key);
    for (i = 0; i < r->nvalues; i++)
        free(r->values[i]);
    free(r->values);
}

void ksim_sel_free(struct ksim_sel *sel)
{
    size_t i;

    if (!sel)
        return;
    for (i = 0; i < sel->n; i++)
        req_release(&sel->reqs[i]);
    free(sel->reqs);
    free(sel);
}

static enum kerr add_value(struct ksim_sel_req *r, const char *v, struct kerr_info *err)
{
    char **nv;
    char *copy;

    if (!value_ok(v))
        return kerr_set(err, KERR_PARSE,
                        "unable to parse requirement: values[%zu][%s]: Invalid value: \"%s\": a "
                        "valid label must be an empty string or consist of alphanumeric "
                        "characters, '-', '_' or '.', and must start and end with an "
                        "alphanumeric character",
                        r->nvalues, r->key, v);
    if (r->nvalues >= MAX_VALUES)
        return kerr_set(err, KERR_PARSE, "unable to parse requirement: too many values");
    copy = strdup(v);
    nv = realloc(r->values, (r->nvalues + 1) * sizeof(*nv));
    if (!copy || !nv) {
        free(copy);
        if (nv)
            r->values = nv;
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    r->values = nv;
    r->values[r->nvalues++] = copy;
    return KERR_OK;
}

/* Append an empty requirement with key to sel; *out points at it. */
static enum kerr add_req(struct ksim_sel *sel, const char *key, enum ksim_sel_op op,
                         struct ksim_sel_req **out, struct kerr_info *err)
{
    struct ksim_sel_req *nr;

    if (!key_ok(key))
        return kerr_set(err, KERR_PARSE,
                        "unable to parse requirement: key: Invalid value: \"%s\": name part must "
                        "consist of alphanumeric characters, '-', '_' or '.', and must start and "
                        "end with an alphanumeric character",
                        key);
    if (sel->n >= MAX_REQS)
        return kerr_set(err, KERR_PARSE, "unable to parse requirement: too many requirements");
    nr = realloc(sel->reqs, (sel->n + 1) * sizeof(*nr));
    if (!nr)
        return kerr_set(err, KERR_NOMEM, NULL);
    sel->reqs = nr;
    memset(&nr[sel->n], 0, sizeof(*nr));
    nr[sel->n].key = strdup(key);
    if (!nr[sel->n].key)
        return kerr_set(err, KERR_NOMEM, NULL);
    nr[sel->n].op = op;
    *out = &nr[sel->n++];
    return KERR_OK;
}

/* "( v1, v2 )" after in/notin. */
static enum kerr parse_set(struct lexer *lx, struct ksim_sel_req *r, struct kerr_info *err)
{
    enum tok t;
    enum kerr rc;

    if (lex(lx) != T_OPEN)
        return kerr_set(err, KERR_PARSE, "unable to parse requirement: found '%s', expected: '('",
                        lx->p);
    for (;;) {
        t = lex(lx);
        if (t == T_CLOSE && r->nvalues == 0)
            break;
        if (t == T_ID) {
            rc = add_value(r, lx->text, err);
            if (rc != KERR_OK)
                return rc;
            t = lex(lx);
        } else if (t == T_COMMA || t == T_CLOSE) {
            rc = add_value(r, "", err); /* "(a,)" holds an empty value */
            if (rc != KERR_OK)
                return rc;
        } else {
            return kerr_set(err, KERR_PARSE, "unable to parse requirement: found unexpected token");
        }
        if (t == T_CLOSE)
            break;
        if (t != T_COMMA)
            return kerr_set(err, KERR_PARSE,
                            "unable to parse requirement: found unexpected token, expected: ',' "
                            "or ')'");
    }
    if (r->nvalues == 0)
        return kerr_set(err, KERR_PARSE,
                        "unable to parse requirement: for 'in', 'notin' operators, values set "
                        "can't be empty");
    return KERR_OK;
}

/* One value after =, ==, !=, >, <. */
static enum kerr parse_single(struct lexer *lx, struct ksim_sel_req *r, struct kerr_info *err)
{
    enum tok t = peek(lx);
    char *end = NULL;
    long long v;

    if (t == T_END || t == T_COMMA)
        return r->op == KSIM_SEL_GT || r->op == KSIM_SEL_LT
                   ? kerr_set(err, KERR_PARSE, "unable to parse requirement: missing number")
                   : add_value(r, "", err);
    if (lex(lx) != T_ID)
        return kerr_set(err, KERR_PARSE, "unable to parse requirement: found unexpected token");
    if (r->op == KSIM_SEL_GT || r->op == KSIM_SEL_LT) {
        errno = 0;
        v = strtoll(lx->text, &end, 10);
        if (errno || !end || *end || end == lx->text || v < 0)
            return kerr_set(err, KERR_PARSE,
                            "unable to parse requirement: for 'Gt', 'Lt' operators, the value "
                            "must be an integer");
    }
    return add_value(r, lx->text, err);
}

/* The operator tokens after a key and the requirements they make. */
static const struct {
    enum tok t;
    enum ksim_sel_op op;
} tok_ops[] = {
    { T_EQ, KSIM_SEL_EQ }, { T_DEQ, KSIM_SEL_EQ },      { T_NEQ, KSIM_SEL_NEQ },
    { T_IN, KSIM_SEL_IN }, { T_NOTIN, KSIM_SEL_NOTIN }, { T_GT, KSIM_SEL_GT },
    { T_LT, KSIM_SEL_LT },
};

#define NTOK_OPS (sizeof(tok_ops) / sizeof(tok_ops[0]))

static enum kerr parse_req(struct lexer *lx, struct ksim_sel *sel, struct kerr_info *err)
{
    struct ksim_sel_req *r = NULL;
    enum ksim_sel_op op;
    enum tok t = lex(lx);
    enum kerr rc;
    size_t i;
    char key[sizeof(lx->text)];

    if (t == T_NOT) {
        if (lex(lx) != T_ID)
            return kerr_set(err, KERR_PARSE, "unable to parse requirement: expected a key after !");
        return add_req(sel, lx->text, KSIM_SEL_NOTEXISTS, &r, err);
    }
    if (t != T_ID)
        return kerr_set(err, KERR_PARSE,
                        "unable to parse requirement: found '%s', expected: "
                        "identifier",
                        lx->p);
    snprintf(key, sizeof(key), "%s", lx->text);
    t = peek(lx);
    if (t == T_END || t == T_COMMA)
        return add_req(sel, key, KSIM_SEL_EXISTS, &r, err);
    t = lex(lx);
    for (i = 0; i < NTOK_OPS && tok_ops[i].t != t; i++) {
    }
    if (i == NTOK_OPS)
        return kerr_set(err, KERR_PARSE,
                        "unable to parse requirement: found unexpected token, expected: "
                        "in, notin, =, ==, !=, gt, lt");
    op = tok_ops[i].op;
    rc = add_req(sel, key, op, &r, err);
    if (rc != KERR_OK)
        return rc;
    if (op == KSIM_SEL_IN || op == KSIM_SEL_NOTIN)
        return parse_set(lx, r, err);
    return parse_single(lx, r, err);
}

/* *out = sel when rc is KERR_OK, else free sel; returns rc. */
static enum kerr hand_over(struct ksim_sel *sel, enum kerr rc, struct ksim_sel **out)
{
    if (rc != KERR_OK) {
        ksim_sel_free(sel);
        return rc;
    }
    *out = sel;
    return KERR_OK;
}

enum kerr ksim_sel_parse(const char *text, struct ksim_sel **out, struct kerr_info *err)
{
    struct ksim_sel *sel;
    struct lexer lx;
    enum kerr rc = KERR_OK;
    enum tok t;

    *out = NULL;
    sel = calloc(1, sizeof(*sel));
    if (!sel)
        return kerr_set(err, KERR_NOMEM, NULL);
    lx.p = text ? text : "";
    lx.text[0] = '\0';
    while (peek(&lx) != T_END) {
        rc = parse_req(&lx, sel, err);
        if (rc != KERR_OK)
            goto out;
        t = lex(&lx);
        if (t == T_END)
            break;
        if (t != T_COMMA) {
            rc = kerr_set(err, KERR_PARSE,
                          "unable to parse requirement: found unexpected token, expected: ','");
            goto out;
        }
        if (peek(&lx) == T_END) {
            rc = kerr_set(err, KERR_PARSE,
                          "unable to parse requirement: found '', expected: identifier");
            goto out;
        }
    }
out:
    return hand_over(sel, rc, out);
}

/* The operators of a LabelSelectorRequirement. */
static const struct {
    const char *name;
    enum ksim_sel_op op;
} json_ops[] = {
    { "In", KSIM_SEL_IN },
    { "NotIn", KSIM_SEL_NOTIN },
    { "Exists", KSIM_SEL_EXISTS },
    { "DoesNotExist", KSIM_SEL_NOTEXISTS },
};

#define NJSON_OPS (sizeof(json_ops) / sizeof(json_ops[0]))

static enum kerr expr_from_json(struct ksim_sel *sel, const cJSON *e, struct kerr_info *err)
{
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(e, "key");
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(e, "operator");
    const cJSON *vals = cJSON_GetObjectItemCaseSensitive(e, "values");
    const cJSON *v;
    struct ksim_sel_req *r = NULL;
    enum ksim_sel_op o;
    enum kerr rc;
    size_t i;

    if (!cJSON_IsString(key) || !cJSON_IsString(op))
        return kerr_set(err, KERR_PARSE, "matchExpressions: key and operator are required");
    for (i = 0; i < NJSON_OPS && strcmp(json_ops[i].name, op->valuestring) != 0; i++) {
    }
    if (i == NJSON_OPS)
        return kerr_set(err, KERR_PARSE, "\"%s\" is not a valid label selector operator",
                        op->valuestring);
    o = json_ops[i].op;
    rc = add_req(sel, key->valuestring, o, &r, err);
    if (rc != KERR_OK)
        return rc;
    cJSON_ArrayForEach (v, vals) {
        if (!cJSON_IsString(v))
            return kerr_set(err, KERR_PARSE, "matchExpressions: values must be strings");
        rc = add_value(r, v->valuestring, err);
        if (rc != KERR_OK)
            return rc;
    }
    if ((o == KSIM_SEL_IN || o == KSIM_SEL_NOTIN) && r->nvalues == 0)
        return kerr_set(err, KERR_PARSE, "for 'in', 'notin' operators, values set can't be empty");
    if ((o == KSIM_SEL_EXISTS || o == KSIM_SEL_NOTEXISTS) && r->nvalues != 0)
        return kerr_set(err, KERR_PARSE, "values set must be empty for exists and does not exist");
    return KERR_OK;
}

enum kerr ksim_sel_from_json(const cJSON *selector, int nil_matches_nothing, struct ksim_sel **out,
                             struct kerr_info *err)
{
    struct ksim_sel *sel;
    struct ksim_sel_req *r = NULL;
    const cJSON *ml, *me, *it;
    enum kerr rc = KERR_OK;

    *out = NULL;
    sel = calloc(1, sizeof(*sel));
    if (!sel)
        return kerr_set(err, KERR_NOMEM, NULL);
    if (!selector || cJSON_IsNull(selector)) {
        sel->nothing = nil_matches_nothing;
        *out = sel;
        return KERR_OK;
    }
    if (!cJSON_IsObject(selector)) {
        rc = kerr_set(err, KERR_PARSE, "label selector must be an object");
        goto out;
    }
    ml = cJSON_GetObjectItemCaseSensitive(selector, "matchLabels");
    cJSON_ArrayForEach (it, ml) {
        if (!cJSON_IsString(it) || !it->string) {
            rc = kerr_set(err, KERR_PARSE, "matchLabels values must be strings");
            goto out;
        }
        rc = add_req(sel, it->string, KSIM_SEL_EQ, &r, err);
        if (rc == KERR_OK)
            rc = add_value(r, it->valuestring, err);
        if (rc != KERR_OK)
            goto out;
    }
    me = cJSON_GetObjectItemCaseSensitive(selector, "matchExpressions");
    cJSON_ArrayForEach (it, me) {
        rc = expr_from_json(sel, it, err);
        if (rc != KERR_OK)
            goto out;
    }
out:
    return hand_over(sel, rc, out);
}

static int in_values(const struct ksim_sel_req *r, const char *v)
{
    size_t i;

    for (i = 0; i < r->nvalues; i++)
        if (strcmp(r->values[i], v) == 0)
            return 1;
    return 0;
}

static int cmp_int(const struct ksim_sel_req *r, const char *v)
{
    char *end = NULL;
    long long have, want;

    errno = 0;
    have = strtoll(v, &end, 10);
    if (errno || !end || *end || end == v || r->nvalues != 1)
        return 0;
    want = strtoll(r->values[0], NULL, 10);
    return r->op == KSIM_SEL_GT ? have > want : have < want;
}

static int req_matches(const struct ksim_sel_req *r, const cJSON *labels)
{
    const cJSON *l = labels ? cJSON_GetObjectItemCaseSensitive(labels, r->key) : NULL;
    const char *v = cJSON_IsString(l) ? l->valuestring : NULL;

    switch (r->op) {
    case KSIM_SEL_EQ:
    case KSIM_SEL_IN:
        return v && in_values(r, v);
    case KSIM_SEL_NEQ:
    case KSIM_SEL_NOTIN:
        return !v || !in_values(r, v);
    case KSIM_SEL_EXISTS:
        return v != NULL;
    case KSIM_SEL_NOTEXISTS:
        return v == NULL;
    case KSIM_SEL_GT:
    case KSIM_SEL_LT:
        return v && cmp_int(r, v);
    }
    return 0;
}

int ksim_sel_matches(const struct ksim_sel *sel, const cJSON *labels)
{
    size_t i;

    if (!sel)
        return 1;
    if (sel->nothing)
        return 0;
    for (i = 0; i < sel->n; i++)
        if (!req_matches(&sel->reqs[i], labels))
            return 0;
    return 1;
}

int ksim_sel_is_everything(const struct ksim_sel *sel)
{
    return !sel || (!sel->nothing && sel->n == 0);
}

static enum kerr append_values(const struct ksim_sel_req *r, struct buf *out)
{
    size_t i;
    enum kerr rc = buf_appends(out, " (");

    for (i = 0; rc == KERR_OK && i < r->nvalues; i++)
        rc = buf_appendf(out, "%s%s", i ? "," : "", r->values[i]);
    return rc == KERR_OK ? buf_appends(out, ")") : rc;
}

/* The text of an operator with one value. */
static const char *single_op_text(enum ksim_sel_op op)
{
    return op == KSIM_SEL_EQ ? "=" : op == KSIM_SEL_NEQ ? "!=" : op == KSIM_SEL_GT ? ">" : "<";
}

enum kerr ksim_sel_to_string(const struct ksim_sel *sel, struct buf *out)
{
    size_t i;
    enum kerr rc = KERR_OK;
    const struct ksim_sel_req *r;

    for (i = 0; sel && rc == KERR_OK && i < sel->n; i++) {
        r = &sel->reqs[i];
        if (i)
            rc = buf_appends(out, ",");
        if (rc != KERR_OK)
            break;
        switch (r->op) {
        case KSIM_SEL_EQ:
        case KSIM_SEL_NEQ:
        case KSIM_SEL_GT:
        case KSIM_SEL_LT:
            rc = buf_appendf(out, "%s%s%s", r->key, single_op_text(r->op),
                             r->nvalues ? r->values[0] : "");
            break;
        case KSIM_SEL_IN:
        case KSIM_SEL_NOTIN:
            rc = buf_appendf(out, "%s %s", r->key, r->op == KSIM_SEL_IN ? "in" : "notin");
            if (rc == KERR_OK)
                rc = append_values(r, out);
            break;
        case KSIM_SEL_EXISTS:
            rc = buf_appends(out, r->key);
            break;
        case KSIM_SEL_NOTEXISTS:
            rc = buf_appendf(out, "!%s", r->key);
            break;
        }
    }
    return rc;
}
