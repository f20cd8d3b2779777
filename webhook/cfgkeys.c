/* cfgkeys - the keys of etcd's configuration that fork or lose a live cluster; see cfgkeys.h. */
#include "webhook/cfgkeys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ydoc.h"

enum { K_NAME, K_TOKEN, K_STATE, K_PREFIX, K_FORCE, K_FSYNC, K_N };

/* The keys read, as etcd spells them, with etcd's default and etcd-druid's value. */
static const struct {
    const char *key, *dflt, *druid;
} KEYS[K_N] = {
    [K_NAME] = { "name", "default", CFGKEYS_DRUID_NAME },
    [K_TOKEN] = { "initial-cluster-token", "etcd-cluster", CFGKEYS_DRUID_TOKEN },
    [K_STATE] = { "initial-cluster-state", "new", CFGKEYS_DRUID_STATE },
    [K_PREFIX] = { "member-name-prefix", "",
                   NULL }, /* the Etcd's, which the webhook does not read */
    [K_FORCE] = { "force-new-cluster", NULL, NULL },
    [K_FSYNC] = { "unsafe-no-fsync", NULL, NULL },
};

/* The values of KEYS in the mapping root into val (K_N slots, NULL when absent). */
static enum kerr find_keys(struct ydoc *d, yaml_node_t *root, yaml_node_t **val)
{
    yaml_node_pair_t *p;
    yaml_node_t *key;
    int i;

    for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        key = yaml_document_get_node(&d->doc, p->key);
        if (!key || key->type != YAML_SCALAR_NODE)
            return ydoc_fail(d, KERR_PARSE, key ? key : root, "keys must be strings");
        if (ydoc_key_is(key, "<<"))
            return ydoc_fail(d, KERR_PARSE, key, "a merge key (<<) may set any key");
        for (i = 0; i < K_N && !ydoc_key_is(key, KEYS[i].key); i++)
            ;
        if (i == K_N)
            continue;
        if (val[i])
            return ydoc_fail(d, KERR_PARSE, key, "%s is set twice", KEYS[i].key);
        val[i] = yaml_document_get_node(&d->doc, p->value);
        if (!val[i])
            return ydoc_fail(d, KERR_PARSE, key, "%s has no value", KEYS[i].key);
    }
    return KERR_OK;
}

/* Identity key i's value v as etcd reads it into out (CFGKEYS_VAL_MAX bytes). */
static enum kerr ident_value(struct ydoc *d, const yaml_node_t *v, int i, char *out)
{
    if (!v || ydoc_is_null(v)) {
        snprintf(out, CFGKEYS_VAL_MAX, "%s", KEYS[i].dflt);
        return KERR_OK;
    }
    if (v->type != YAML_SCALAR_NODE)
        return ydoc_fail(d, KERR_PARSE, v, "%s must be a string, not %s", KEYS[i].key,
                         ydoc_kind(v->type));
    if (memchr(v->data.scalar.value, '\0', v->data.scalar.length) ||
        v->data.scalar.length >= CFGKEYS_VAL_MAX)
        return ydoc_fail(d, KERR_PARSE, v, "%s has a NUL byte or is longer than %d bytes",
                         KEYS[i].key, CFGKEYS_VAL_MAX - 1);
    memcpy(out, v->data.scalar.value, v->data.scalar.length);
    out[v->data.scalar.length] = '\0';
    return KERR_OK;
}

/* v (NULL: absent) is set to anything but null or a plain false. */
static int set_true(const yaml_node_t *v)
{
    const char *s;

    if (!v || ydoc_is_null(v))
        return 0;
    if (v->type != YAML_SCALAR_NODE || v->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
        v->data.scalar.length != 5)
        return 1;
    s = (const char *)v->data.scalar.value;
    return strncmp(s, "false", 5) != 0 && strncmp(s, "False", 5) != 0 &&
           strncmp(s, "FALSE", 5) != 0;
}

enum kerr cfgkeys_read(const char *text, size_t len, struct cfgkeys *out, struct kerr_info *err)
{
    yaml_node_t *root, *val[K_N] = { NULL };
    struct ydoc d;
    enum kerr rc;

    if ((rc = ydoc_load(&d, text, len, CFGKEYS_FILE, err)) != KERR_OK)
        goto done;
    root = ydoc_root(&d);
    if (!root) {
        rc = ydoc_fail(&d, KERR_PARSE, NULL, "empty");
        goto done;
    }
    if ((rc = ydoc_enter(&d, root, YAML_MAPPING_NODE, "the configuration")) != KERR_OK ||
        (rc = find_keys(&d, root, val)) != KERR_OK ||
        (rc = ident_value(&d, val[K_NAME], K_NAME, out->name)) != KERR_OK ||
        (rc = ident_value(&d, val[K_TOKEN], K_TOKEN, out->token)) != KERR_OK ||
        (rc = ident_value(&d, val[K_STATE], K_STATE, out->state)) != KERR_OK ||
        (rc = ident_value(&d, val[K_PREFIX], K_PREFIX, out->prefix)) != KERR_OK)
        goto done;
    out->force_new = set_true(val[K_FORCE]);
    out->no_fsync = set_true(val[K_FSYNC]);
done:
    ydoc_release(&d);
    return rc;
}

#define IDENT_WHY                                                                               \
    "a member bootstrapped or restored from a backup with another identity than its cluster's " \
    "forks it or does not join it"

/* Identity value i of c. */
static const char *ident(const struct cfgkeys *c, int i)
{
    return i == K_NAME ? c->name : i == K_TOKEN ? c->token : i == K_STATE ? c->state : c->prefix;
}

int cfgkeys_problem(const struct cfgkeys *now, const struct cfgkeys *old, const char *etcd_prefix,
                    char *why, size_t size)
{
    int i;

    if (now->force_new || now->no_fsync) {
        snprintf(why, size, "it sets %s to other than false (etcd-druid never sets it): %s",
                 now->force_new ? "force-new-cluster" : "unsafe-no-fsync",
                 now->force_new ? "each member's next start would make it a one-member cluster "
                                  "of its own, the members diverging and losing the writes "
                                  "they did not all have"
                                : "etcd would acknowledge writes it has not written to disk, "
                                  "lost when a node crashes");
        return 1;
    }
    if (etcd_prefix && strcmp(now->prefix, etcd_prefix) != 0) {
        snprintf(why, size,
                 "it sets member-name-prefix to \"%.256s\", not the Etcd's spec.memberNamePrefix "
                 "\"%.256s\" (etcd-druid writes that one): the backup sidecar would name the "
                 "members otherwise than the cluster knows them",
                 now->prefix, etcd_prefix);
        return 1;
    }
    if (old && strcmp(now->prefix, old->prefix) != 0) {
        snprintf(why, size,
                 "it changes member-name-prefix from \"%.256s\" to \"%.256s\" (the Etcd's, "
                 "which cannot change): the backup sidecar would name the members otherwise than "
                 "the cluster knows them",
                 old->prefix, now->prefix);
        return 1;
    }
    for (i = K_NAME; i <= K_STATE; i++) {
        if (strcmp(ident(now, i), KEYS[i].druid) == 0 ||
            (old && strcmp(ident(now, i), ident(old, i)) == 0))
            continue;
        if (old)
            snprintf(why, size,
                     "it changes %s from \"%.256s\" to \"%.256s\", not etcd-druid's \"%s\": %s",
                     KEYS[i].key, ident(old, i), ident(now, i), KEYS[i].druid, IDENT_WHY);
        else
            snprintf(why, size,
                     "written anew (or over a configuration that does not parse), it sets %s to "
                     "\"%.256s\", not etcd-druid's \"%s\": %s",
                     KEYS[i].key, ident(now, i), KEYS[i].druid, IDENT_WHY);
        return 1;
    }
    return 0;
}

int cfgkeys_refused(const char *now, const char *old, const char *etcd_prefix, char *why,
                    size_t size)
{
    struct cfgkeys *k = malloc(2 * sizeof(*k));
    struct kerr_info ke;
    int had, bad = 1;

    if (!k) {
        snprintf(why, size, "out of memory reading %s", CFGKEYS_FILE);
        return 1;
    }
    kerr_clear(&ke);
    if (cfgkeys_read(now, strlen(now), &k[0], &ke) != KERR_OK) {
        snprintf(why, size, "%s", ke.msg);
        goto out;
    }
    /* the same text reads the same (the common update: the configuration unchanged) */
    if (old && strcmp(old, now) == 0) {
        k[1] = k[0];
        had = 1;
    } else {
        had = old && cfgkeys_read(old, strlen(old), &k[1], NULL) == KERR_OK;
    }
    bad = cfgkeys_problem(&k[0], had ? &k[1] : NULL, etcd_prefix, why, size);
out:
    free(k);
    return bad;
}
