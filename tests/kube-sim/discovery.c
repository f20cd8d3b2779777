#include "tests/kube-sim/discovery.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUPS   128
#define MAX_VERSIONS 16

static const char *const verb_names[] = { "create", "delete", "deletecollection", "get",
                                          "list",   "patch",  "update",           "watch" };

cJSON *ksim_disc_version(void)
{
    cJSON *v = cJSON_CreateObject();

    if (!v || !cJSON_AddStringToObject(v, "major", KSIM_KUBE_MAJOR) ||
        !cJSON_AddStringToObject(v, "minor", KSIM_KUBE_MINOR) ||
        !cJSON_AddStringToObject(v, "gitVersion", KSIM_GIT_VERSION) ||
        !cJSON_AddStringToObject(v, "gitCommit", "0000000000000000000000000000000000000000") ||
        !cJSON_AddStringToObject(v, "gitTreeState", "clean") ||
        !cJSON_AddStringToObject(v, "buildDate", "2024-12-11T00:00:00Z") ||
        !cJSON_AddStringToObject(v, "goVersion", "go1.23.4") ||
        !cJSON_AddStringToObject(v, "compiler", "gc") ||
        !cJSON_AddStringToObject(v, "platform", "linux/amd64")) {
        cJSON_Delete(v);
        return NULL;
    }
    return v;
}

cJSON *ksim_disc_api(const char *server_address)
{
    cJSON *v = cJSON_CreateObject();
    cJSON *versions, *addrs, *a;

    if (!v || !cJSON_AddStringToObject(v, "kind", "APIVersions") ||
        !(versions = cJSON_AddArrayToObject(v, "versions")) ||
        !cJSON_AddItemToArray(versions, cJSON_CreateString("v1")) ||
        !(addrs = cJSON_AddArrayToObject(v, "serverAddressByClientCIDRs")) ||
        !(a = cJSON_CreateObject()) || !cJSON_AddItemToArray(addrs, a) ||
        !cJSON_AddStringToObject(a, "clientCIDR", "0.0.0.0/0") ||
        !cJSON_AddStringToObject(a, "serverAddress", server_address)) {
        cJSON_Delete(v);
        return NULL;
    }
    return v;
}

/* The groups and their served versions, in registration order. */
struct group_set {
    char *names[MAX_GROUPS]; /* BORROWED from the registry's rtypes */
    const char *versions[MAX_GROUPS][MAX_VERSIONS];
    size_t nversions[MAX_GROUPS];
    size_t n;
};

static void collect(const struct ksim_rtype *rt, void *arg)
{
    struct group_set *gs = arg;
    size_t i, j;

    if (!*rt->group)
        return;
    for (i = 0; i < gs->n && strcmp(gs->names[i], rt->group) != 0; i++)
        ;
    if (i == gs->n) {
        if (gs->n == MAX_GROUPS)
            return;
        gs->names[gs->n++] = rt->group;
    }
    for (j = 0; j < gs->nversions[i]; j++)
        if (strcmp(gs->versions[i][j], rt->version) == 0)
            return;
    if (gs->nversions[i] < MAX_VERSIONS)
        gs->versions[i][gs->nversions[i]++] = rt->version;
}

static int cmp_version(const void *a, const void *b)
{
    return ksim_reg_version_cmp(*(const char *const *)a, *(const char *const *)b);
}

static cJSON *gv(const char *group, const char *version)
{
    cJSON *o = cJSON_CreateObject();
    char text[512];

    snprintf(text, sizeof(text), "%s/%s", group, version);
    if (!o || !cJSON_AddStringToObject(o, "groupVersion", text) ||
        !cJSON_AddStringToObject(o, "version", version)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *group_doc(struct group_set *gs, size_t i, int with_kind)
{
    cJSON *g = cJSON_CreateObject(), *versions;
    size_t j;

    qsort(gs->versions[i], gs->nversions[i], sizeof(gs->versions[i][0]), cmp_version);
    if (!g ||
        (with_kind && (!cJSON_AddStringToObject(g, "kind", "APIGroup") ||
                       !cJSON_AddStringToObject(g, "apiVersion", "v1"))) ||
        !cJSON_AddStringToObject(g, "name", gs->names[i]) ||
        !(versions = cJSON_AddArrayToObject(g, "versions")))
        goto fail;
    for (j = 0; j < gs->nversions[i]; j++)
        if (!cJSON_AddItemToArray(versions, gv(gs->names[i], gs->versions[i][j])))
            goto fail;
    if (!cJSON_AddItemToObject(g, "preferredVersion", gv(gs->names[i], gs->versions[i][0])))
        goto fail;
    return g;
fail:
    cJSON_Delete(g);
    return NULL;
}

cJSON *ksim_disc_groups(struct ksim_reg *reg)
{
    struct group_set *gs = calloc(1, sizeof(*gs));
    cJSON *list = cJSON_CreateObject(), *groups;
    size_t i;

    if (!gs || !list || !cJSON_AddStringToObject(list, "kind", "APIGroupList") ||
        !cJSON_AddStringToObject(list, "apiVersion", "v1") ||
        !(groups = cJSON_AddArrayToObject(list, "groups")))
        goto fail;
    ksim_reg_each(reg, collect, gs);
    for (i = 0; i < gs->n; i++)
        if (!cJSON_AddItemToArray(groups, group_doc(gs, i, 0)))
            goto fail;
    free(gs);
    return list;
fail:
    free(gs);
    cJSON_Delete(list);
    return NULL;
}

cJSON *ksim_disc_group(struct ksim_reg *reg, const char *group)
{
    struct group_set *gs = calloc(1, sizeof(*gs));
    cJSON *doc = NULL;
    size_t i;

    if (!gs)
        return NULL;
    ksim_reg_each(reg, collect, gs);
    for (i = 0; i < gs->n; i++)
        if (strcmp(gs->names[i], group) == 0)
            doc = group_doc(gs, i, 1);
    free(gs);
    return doc;
}

static int add_strings(cJSON *o, const char *key, char **v, size_t n)
{
    cJSON *arr;
    size_t i;

    if (n == 0)
        return 0;
    arr = cJSON_AddArrayToObject(o, key);
    for (i = 0; arr && i < n; i++)
        if (!cJSON_AddItemToArray(arr, cJSON_CreateString(v[i])))
            return -1;
    return arr ? 0 : -1;
}

static cJSON *resource(const char *name, const char *singular, int namespaced, const char *kind,
                       unsigned verbs)
{
    cJSON *r = cJSON_CreateObject(), *vs;
    size_t i;

    if (!r || !cJSON_AddStringToObject(r, "name", name) ||
        !cJSON_AddStringToObject(r, "singularName", singular) ||
        !cJSON_AddBoolToObject(r, "namespaced", namespaced) ||
        !cJSON_AddStringToObject(r, "kind", kind) || !(vs = cJSON_AddArrayToObject(r, "verbs")))
        goto fail;
    for (i = 0; i < sizeof(verb_names) / sizeof(verb_names[0]); i++)
        if ((verbs & (1u << i)) && !cJSON_AddItemToArray(vs, cJSON_CreateString(verb_names[i])))
            goto fail;
    return r;
fail:
    cJSON_Delete(r);
    return NULL;
}

struct res_ctx {
    const char *group, *version;
    cJSON *list;
    int found, failed;
};

static const unsigned sub_verbs = KSIM_VERB_GET | KSIM_VERB_PATCH | KSIM_VERB_UPDATE;

static int add_subresources(struct res_ctx *c, const struct ksim_rtype *rt)
{
    char name[300];
    cJSON *r;

    if (rt->has_status) {
        snprintf(name, sizeof(name), "%s/status", rt->plural);
        if (!cJSON_AddItemToArray(c->list, resource(name, "", rt->namespaced, rt->kind, sub_verbs)))
            return -1;
    }
    if (rt->has_scale) {
        snprintf(name, sizeof(name), "%s/scale", rt->plural);
        r = resource(name, "", rt->namespaced, "Scale", sub_verbs);
        if (!r || !cJSON_AddStringToObject(r, "group", "autoscaling") ||
            !cJSON_AddStringToObject(r, "version", "v1") || !cJSON_AddItemToArray(c->list, r)) {
            cJSON_Delete(r);
            return -1;
        }
    }
    return 0;
}

static void add_resource(const struct ksim_rtype *rt, void *arg)
{
    struct res_ctx *c = arg;
    cJSON *r;

    if (strcmp(rt->group, c->group) != 0 || strcmp(rt->version, c->version) != 0)
        return;
    c->found = 1;
    r = resource(rt->plural, rt->singular, rt->namespaced, rt->kind, rt->verbs);
    if (!r || add_strings(r, "shortNames", rt->short_names.v, rt->short_names.n) != 0 ||
        add_strings(r, "categories", rt->categories.v, rt->categories.n) != 0 ||
        !cJSON_AddItemToArray(c->list, r)) {
        cJSON_Delete(r);
        c->failed = 1;
        return;
    }
    if (add_subresources(c, rt) != 0)
        c->failed = 1;
}

cJSON *ksim_disc_resources(struct ksim_reg *reg, const char *group, const char *version)
{
    struct res_ctx c = { group, version, NULL, 0, 0 };
    cJSON *doc = cJSON_CreateObject();
    char gvs[512];

    if (*group)
        snprintf(gvs, sizeof(gvs), "%s/%s", group, version);
    else
        snprintf(gvs, sizeof(gvs), "%s", version);
    if (!doc || !cJSON_AddStringToObject(doc, "kind", "APIResourceList") ||
        !cJSON_AddStringToObject(doc, "apiVersion", "v1") ||
        !cJSON_AddStringToObject(doc, "groupVersion", gvs) ||
        !(c.list = cJSON_AddArrayToObject(doc, "resources"))) {
        cJSON_Delete(doc);
        return NULL;
    }
    ksim_reg_each(reg, add_resource, &c);
    if (!c.found || c.failed) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}
