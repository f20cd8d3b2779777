#include "tests/kube-sim/auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

#define MAX_FIELDS 4
#define MAX_FIELD  4096

struct entry {
    char *token; /* OWNS */
    struct ksim_user user;
};

struct ksim_auth {
    struct entry *e; /* OWNS */
    size_t n;
};

static void user_release(struct ksim_user *u)
{
    size_t i;

    free(u->name);
    free(u->uid);
    for (i = 0; i < u->ngroups; i++)
        free(u->groups[i]);
    free(u->groups);
}

void ksim_auth_free(struct ksim_auth *a)
{
    size_t i;

    if (!a)
        return;
    for (i = 0; i < a->n; i++) {
        free(a->e[i].token);
        user_release(&a->e[i].user);
    }
    free(a->e);
    free(a);
}

static int add_group(struct ksim_user *u, const char *g, size_t len)
{
    char **ng;
    size_t i;

    while (len && (*g == ' ' || *g == '\t')) {
        g++;
        len--;
    }
    while (len && (g[len - 1] == ' ' || g[len - 1] == '\t'))
        len--;
    if (!len)
        return 0;
    for (i = 0; i < u->ngroups; i++)
        if (strlen(u->groups[i]) == len && strncmp(u->groups[i], g, len) == 0)
            return 0;
    ng = realloc(u->groups, (u->ngroups + 1) * sizeof(*ng));
    if (!ng)
        return -1;
    u->groups = ng;
    ng[u->ngroups] = strndup(g, len);
    if (!ng[u->ngroups])
        return -1;
    u->ngroups++;
    return 0;
}

/* The groups every authenticated user and service account gets. */
static int implied_groups(struct ksim_user *u)
{
    static const char sa[] = "system:serviceaccount:";
    char nsgroup[512];
    const char *ns, *colon;

    if (strncmp(u->name, sa, sizeof(sa) - 1) == 0) {
        ns = u->name + sizeof(sa) - 1;
        colon = strchr(ns, ':');
        if (colon && colon > ns) {
            if (add_group(u, "system:serviceaccounts", 22) != 0)
                return -1;
            snprintf(nsgroup, sizeof(nsgroup), "system:serviceaccounts:%.*s", (int)(colon - ns),
                     ns);
            if (add_group(u, nsgroup, strlen(nsgroup)) != 0)
                return -1;
        }
    }
    return add_group(u, "system:authenticated", 20);
}

static struct entry *push(struct ksim_auth *a)
{
    struct entry *ne = realloc(a->e, (a->n + 1) * sizeof(*ne));

    if (!ne)
        return NULL;
    a->e = ne;
    memset(&ne[a->n], 0, sizeof(*ne));
    return &ne[a->n++];
}

/* Split one CSV line (quotes allowed, "" is a quote) into up to MAX_FIELDS fields. */
static int split_csv(const char *line, size_t len, struct buf *f, size_t *nf)
{
    size_t i;
    int quoted = 0;
    enum kerr rc = KERR_OK;

    *nf = 1;
    for (i = 0; i < len && rc == KERR_OK; i++) {
        char c = line[i];

        if (quoted) {
            if (c == '"' && i + 1 < len && line[i + 1] == '"') {
                rc = buf_append(&f[*nf - 1], "\"", 1);
                i++;
            } else if (c == '"') {
                quoted = 0;
            } else {
                rc = buf_append(&f[*nf - 1], &c, 1);
            }
        } else if (c == '"') {
            quoted = 1;
        } else if (c == ',') {
            if (*nf == MAX_FIELDS)
                return -1;
            (*nf)++;
        } else if (c != '\r') {
            rc = buf_append(&f[*nf - 1], &c, 1);
        }
    }
    return rc == KERR_OK && !quoted ? 0 : -1;
}

static enum kerr add_line(struct ksim_auth *a, const char *line, size_t len, int lineno,
                          struct kerr_info *err)
{
    struct buf f[MAX_FIELDS];
    struct entry *e;
    const char *g;
    size_t i, glen, nf = 0;
    enum kerr rc = KERR_OK;

    for (i = 0; i < MAX_FIELDS; i++)
        buf_init(&f[i], MAX_FIELD);
    if (split_csv(line, len, f, &nf) != 0 || nf < 2 || !f[0].len || !f[1].len) {
        rc = kerr_set(err, KERR_PARSE, "token file line %d: want token,user,uid[,\"groups\"]",
                      lineno);
        goto out;
    }
    e = push(a);
    if (!e || !(e->token = strdup(buf_str(&f[0]))) || !(e->user.name = strdup(buf_str(&f[1]))) ||
        !(e->user.uid = strdup(nf > 2 ? buf_str(&f[2]) : ""))) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
        goto out;
    }
    for (g = nf > 3 ? buf_str(&f[3]) : ""; *g; g += *g == ',' ? 1 : 0) {
        glen = strcspn(g, ",");
        if (add_group(&e->user, g, glen) != 0) {
            rc = kerr_set(err, KERR_NOMEM, NULL);
            goto out;
        }
        g += glen;
    }
    if (implied_groups(&e->user) != 0)
        rc = kerr_set(err, KERR_NOMEM, NULL);
out:
    for (i = 0; i < MAX_FIELDS; i++)
        buf_release(&f[i]);
    return rc;
}

static enum kerr add_admin(struct ksim_auth *a, const char *token, struct kerr_info *err)
{
    struct entry *e = push(a);

    if (!e || !(e->token = strdup(token)) || !(e->user.name = strdup("kubernetes-admin")) ||
        !(e->user.uid = strdup("")) || add_group(&e->user, "system:masters", 14) != 0 ||
        implied_groups(&e->user) != 0)
        return kerr_set(err, KERR_NOMEM, NULL);
    return KERR_OK;
}

enum kerr ksim_auth_new(const char *csv, const char *admin_token, struct ksim_auth **out,
                        struct kerr_info *err)
{
    struct ksim_auth *a;
    const char *p = csv, *nl;
    size_t len;
    int lineno = 0;
    enum kerr rc = KERR_OK;

    *out = NULL;
    a = calloc(1, sizeof(*a));
    if (!a)
        return kerr_set(err, KERR_NOMEM, NULL);
    if (admin_token && *admin_token)
        rc = add_admin(a, admin_token, err);
    while (rc == KERR_OK && p && *p) {
        nl = strchr(p, '\n');
        len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        if (len && p[0] != '#' && strspn(p, " \t\r") < len)
            rc = add_line(a, p, len, lineno, err);
        p = nl ? nl + 1 : NULL;
    }
    if (rc != KERR_OK) {
        ksim_auth_free(a);
        return rc;
    }
    *out = a;
    return KERR_OK;
}

const struct ksim_user *ksim_auth_lookup(const struct ksim_auth *a, const char *authorization)
{
    const char *tok;
    size_t i;

    if (!a || !authorization || strncmp(authorization, "Bearer ", 7) != 0)
        return NULL;
    tok = authorization + 7;
    while (*tok == ' ')
        tok++;
    if (!*tok)
        return NULL;
    for (i = 0; i < a->n; i++)
        if (strcmp(a->e[i].token, tok) == 0)
            return &a->e[i].user;
    return NULL;
}

int ksim_auth_in_group(const struct ksim_user *u, const char *group)
{
    size_t i;

    for (i = 0; u && i < u->ngroups; i++)
        if (strcmp(u->groups[i], group) == 0)
            return 1;
    return 0;
}
