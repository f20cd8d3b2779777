/* flagfile - flags plus a YAML file of the same settings; see flagfile.h. */
#include "common/flagfile.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/cfg.h"
#include "common/ydoc.h"

/* What one parse shares between its helpers. */
struct run {
    const struct proc_flag *f;
    size_t nf;
    const char *prog;
    const struct proc_flag *config; /* the config flag of the table */
    int argc;
    char **argv;
    struct flagfile *ff;
    struct ydoc d;
    char **args; /* BORROWED strings (owned by ff), in file order */
    size_t nargs;
};

void flagfile_release(struct flagfile *ff)
{
    proc_strv_release(&ff->owned);
}

/* Append s (TAKES) to the owned list, keeping it NULL-terminated. */
static enum kerr own(struct flagfile *ff, char *s)
{
    char **nv = realloc(ff->owned.v, (ff->owned.n + 2) * sizeof(*nv));

    if (!nv) {
        free(s);
        return KERR_NOMEM;
    }
    ff->owned.v = nv;
    nv[ff->owned.n++] = s;
    nv[ff->owned.n] = NULL;
    return KERR_OK;
}

/* True when argv sets flag name on the command line. */
static int on_command_line(int argc, char **argv, const char *name)
{
    size_t n = strlen(name);
    int i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strncmp(argv[i], "--", 2) == 0 && strncmp(argv[i] + 2, name, n) == 0 &&
            (argv[i][2 + n] == '\0' || argv[i][2 + n] == '='))
            return 1;
    }
    return 0;
}

static const struct proc_flag *find(const struct proc_flag *f, size_t n, const char *name)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (strcmp(f[i].name, name) == 0)
            return &f[i];
    }
    return NULL;
}

/* Check "--key=value" alone, then keep it for the final parse. */
static enum kerr add_arg(struct run *r, const char *key, yaml_node_t *val)
{
    char *argv[2], *s, **nv;
    struct proc_args a;
    struct kerr_info e;
    struct buf b;
    enum kerr rc;

    if (!val || val->type != YAML_SCALAR_NODE)
        return ydoc_fail(&r->d, KERR_INVAL, val, "%s: expected a value, found %s", key,
                         val ? ydoc_kind(val->type) : "nothing");
    if (strlen((const char *)val->data.scalar.value) != val->data.scalar.length)
        return ydoc_fail(&r->d, KERR_INVAL, val, "%s: the value holds a NUL byte", key);
    buf_init(&b, CFG_MAX_FILE);
    rc = buf_appendf(&b, "--%s=%s", key, (const char *)val->data.scalar.value);
    s = rc ? NULL : buf_detach(&b, NULL);
    buf_release(&b);
    if (!s || own(r->ff, s))
        return ydoc_fail(&r->d, KERR_NOMEM, val, "out of memory");
    argv[0] = (char *)r->prog;
    argv[1] = s;
    kerr_clear(&e);
    rc = proc_flags_parse(r->f, r->nf, 2, argv, &a, &e);
    proc_args_release(&a);
    if (rc)
        return ydoc_fail(&r->d, rc, val, "%s: %s", key, e.msg);
    nv = realloc(r->args, (r->nargs + 1) * sizeof(*nv));
    if (!nv)
        return ydoc_fail(&r->d, KERR_NOMEM, val, "out of memory");
    r->args = nv;
    r->args[r->nargs++] = s;
    return KERR_OK;
}

static enum kerr add_setting(struct run *r, yaml_node_pair_t *pair)
{
    yaml_node_t *k = yaml_document_get_node(&r->d.doc, pair->key);
    yaml_node_t *v = yaml_document_get_node(&r->d.doc, pair->value);
    const struct proc_flag *flag;
    const char *key;
    yaml_node_item_t *it;
    enum kerr rc = KERR_OK;

    if (!k || k->type != YAML_SCALAR_NODE)
        return ydoc_fail(&r->d, KERR_INVAL, k, "keys are flag names");
    key = (const char *)k->data.scalar.value;
    flag = find(r->f, r->nf, key);
    if (!flag)
        return ydoc_fail(&r->d, KERR_INVAL, k, "unknown setting \"%.64s\"", key);
    if (flag == r->config)
        return ydoc_fail(&r->d, KERR_INVAL, k, "%s cannot be set in the config file", key);
    if (!v || ydoc_is_null(v) || on_command_line(r->argc, r->argv, key))
        return KERR_OK;
    if (v->type != YAML_SEQUENCE_NODE)
        return add_arg(r, key, v);
    if (flag->type != PROC_FLAG_LIST && flag->type != PROC_FLAG_STRINGS)
        return ydoc_fail(&r->d, KERR_INVAL, v, "%s: expected one value, found a list", key);
    if ((rc = ydoc_enter(&r->d, v, YAML_SEQUENCE_NODE, key)))
        return rc;
    for (it = v->data.sequence.items.start; !rc && it < v->data.sequence.items.top; it++)
        rc = add_arg(r, key, yaml_document_get_node(&r->d.doc, *it));
    return rc;
}

static enum kerr file_args(struct run *r, const char *path, size_t max_file, struct kerr_info *err)
{
    char *text = NULL;
    size_t len = 0;
    yaml_node_t *root;
    yaml_node_pair_t *p;
    enum kerr rc;

    rc = cfg_read_file(path, max_file, &text, &len, err);
    if (rc)
        return kerr_wrap(err, "--%s", r->config->name);
    rc = ydoc_load(&r->d, text, len, path, err);
    root = rc ? NULL : ydoc_root(&r->d);
    if (root && !(rc = ydoc_enter(&r->d, root, YAML_MAPPING_NODE, "the config file"))) {
        for (p = root->data.mapping.pairs.start; !rc && p < root->data.mapping.pairs.top; p++)
            rc = add_setting(r, p);
    }
    ydoc_release(&r->d);
    free(text);
    return rc;
}

/* Parse the file's arguments, then the command line's, in one table pass. */
static enum kerr parse_all(struct run *r, struct kerr_info *err)
{
    struct proc_args a;
    char **all;
    size_t i;
    enum kerr rc;

    all = calloc((size_t)r->argc + r->nargs + 1, sizeof(*all));
    if (!all)
        return kerr_set(err, KERR_NOMEM, "out of memory");
    all[0] = r->argv[0];
    for (i = 0; i < r->nargs; i++)
        all[1 + i] = r->args[i];
    for (i = 1; i < (size_t)r->argc; i++)
        all[r->nargs + i] = r->argv[i];
    rc = proc_flags_parse(r->f, r->nf, r->argc + (int)r->nargs, all, &a, err);
    r->ff->verbosity = a.verbosity;
    if (!rc && a.npos > 0)
        rc = kerr_set(err, KERR_INVAL, "unexpected argument \"%.64s\"", a.pos[0]);
    proc_args_release(&a);
    free(all);
    return rc;
}

enum kerr flagfile_parse(const struct proc_flag *f, size_t nf, const char *prog,
                         const char *config_flag, size_t max_file, int argc, char **argv,
                         struct flagfile *ff, struct kerr_info *err)
{
    struct run r;
    struct proc_args a;
    const char *path;
    enum kerr rc;

    memset(ff, 0, sizeof(*ff));
    memset(&r, 0, sizeof(r));
    r.f = f;
    r.nf = nf;
    r.prog = prog;
    r.argc = argc;
    r.argv = argv;
    r.ff = ff;
    r.config = config_flag ? find(f, nf, config_flag) : NULL;
    if (config_flag && (!r.config || r.config->type != PROC_FLAG_STRING))
        return kerr_set(err, KERR_INTERNAL, "flagfile: no string flag --%s", config_flag);
    rc = proc_flags_parse(f, nf, argc, argv, &a, err);
    ff->help = a.help;
    ff->verbosity = a.verbosity;
    proc_args_release(&a);
    if (rc || ff->help)
        return rc;
    path = r.config ? *(const char **)r.config->value : NULL;
    if (path && *path && (rc = file_args(&r, path, max_file, err)))
        goto out;
    rc = parse_all(&r, err);
out:
    free(r.args);
    return rc;
}
