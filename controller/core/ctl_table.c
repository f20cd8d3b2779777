/* ctl_table - the capabilities a controller runs; see ctl_table.h. */
#include "controller/core/ctl_table.h"

#include <string.h>

enum kerr ctl_table_init(struct ctl_table *t, const struct ctl_capability *const *caps,
                         const struct ctl_config *cfg, const struct ctl_stub *stubs,
                         struct kerr_info *err)
{
    size_t i;

    memset(t, 0, sizeof(*t));
    t->stubs = stubs;
    for (i = 0; caps && caps[i]; i++) {
        if (i >= CTL_CAPS_MAX)
            return kerr_set(err, KERR_INVAL, "more than %d capabilities", CTL_CAPS_MAX);
        if (!caps[i]->enabled || caps[i]->enabled(cfg))
            t->caps[t->n++] = caps[i];
    }
    return KERR_OK;
}

const struct ctl_key *ctl_table_key(const struct ctl_table *t, const char *kind)
{
    const struct ctl_key *k;
    size_t i;

    for (i = 0; i < t->n; i++) {
        for (k = t->caps[i]->keys; k && k->kind; k++) {
            if (strcmp(k->kind, kind) == 0)
                return k;
        }
    }
    return NULL;
}

/* The stub named name, or NULL. */
static const struct ctl_stub *stub_of(const struct ctl_table *t, const char *name)
{
    const struct ctl_stub *s;

    for (s = t->stubs; s && s->name; s++) {
        if (strcmp(s->name, name) == 0)
            return s;
    }
    return NULL;
}

ctl_etcd_step_fn ctl_table_step_fn(const struct ctl_table *t, const struct ctl_etcd_step *s)
{
    const struct ctl_stub *st;

    if (!t->stubs)
        return s->fn;
    st = stub_of(t, s->name);
    return st ? st->step : NULL;
}

ctl_task_step_fn ctl_table_key_fn(const struct ctl_table *t, const struct ctl_key *k)
{
    const struct ctl_stub *st;

    if (!t->stubs)
        return k->reconcile;
    st = stub_of(t, k->kind);
    return st ? st->key : NULL;
}

const struct ctl_service *ctl_table_service(const struct ctl_table *t, const char *name)
{
    const struct ctl_service *sv;
    size_t i;

    for (i = 0; i < t->n; i++) {
        for (sv = t->caps[i]->services; sv && sv->name; sv++) {
            if (strcmp(sv->name, name) == 0)
                return sv;
        }
    }
    return NULL;
}
