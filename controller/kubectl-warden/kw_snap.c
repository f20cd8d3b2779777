/* kw_snap - verify and check-prefixes through warden-snapshot; see kw_snap.h. */
#include "controller/kubectl-warden/kw_snap.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/kjson.h"
#include "common/kubeconfig.h"
#include "common/strlist.h"

extern char **environ;

/* The text of errno value e in b (XSI strerror_r). */
static const char *errtext(int e, char *b, size_t n)
{
    if (strerror_r(e, b, n) != 0)
        snprintf(b, n, "error %d", e);
    return b;
}

#define KW_SNAP_MAX_LISTING (64u * 1024u * 1024u) /* the most of verify's listing kept */

static const struct k8s_resource RES_SECRET = { "", "v1", "secrets", 1 };

/* The credentials variable of provider, and whether it names a file in the directory. */
static const char *cred_var(const char *provider, const char **file)
{
    static const struct {
        const char *names[4];
        const char *var, *file;
    } map[] = {
        { { "aws", "s3", "stackit", NULL }, "AWS_APPLICATION_CREDENTIALS", NULL },
        { { "azure", "abs", NULL, NULL }, "AZURE_APPLICATION_CREDENTIALS", NULL },
        { { "openshift", "ocs", NULL, NULL }, "OPENSHIFT_APPLICATION_CREDENTIALS", NULL },
        { { "gcp", "gcs", NULL, NULL }, "GOOGLE_APPLICATION_CREDENTIALS", "serviceaccount.json" },
    };
    size_t i, j;

    *file = NULL;
    for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        for (j = 0; map[i].names[j]; j++) {
            if (strcasecmp(provider, map[i].names[j]) == 0) {
                *file = map[i].file;
                return map[i].var;
            }
        }
    }
    return NULL;
}

/* Write one key of the Secret (base64 value) as dir/key, 0600. */
static enum kerr write_key(const char *dir, const char *key, const char *b64,
                           struct strlist *written, struct kerr_info *err)
{
    char path[4096], eb[128], *data = NULL;
    size_t len = 0, off = 0;
    ssize_t n;
    enum kerr rc;
    int fd;

    if (!*key || strchr(key, '/') || strcmp(key, ".") == 0 || strcmp(key, "..") == 0)
        return kerr_set(err, KERR_INVAL, "the Secret has a key that is no file name: %s", key);
    if ((rc = kcfg_base64_decode(b64, strlen(b64), &data, &len, err)))
        return rc;
    snprintf(path, sizeof(path), "%s/%s", dir, key);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = kerr_set(err, KERR_IO, "creating %s: %s", path, errtext(errno, eb, sizeof(eb)));
        goto out;
    }
    rc = strlist_add(written, path);
    while (!rc && off < len) {
        n = write(fd, data + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            rc = kerr_set(err, KERR_IO, "writing %s: %s", path, errtext(errno, eb, sizeof(eb)));
        else
            off += (size_t)n;
    }
    if (close(fd) != 0 && !rc)
        rc = kerr_set(err, KERR_IO, "writing %s: %s", path, errtext(errno, eb, sizeof(eb)));
out:
    if (data)
        explicit_bzero(data, len);
    free(data);
    return rc;
}

/* The Secret name in ns as files in a new directory dir (mkdtemp'd template). */
static enum kerr materialize(struct kw *k, const char *name, char *dir, struct strlist *written,
                             struct kerr_info *err)
{
    cJSON *secret = NULL;
    const cJSON *it;
    char eb[128];
    enum kerr rc;

    if ((rc = k8s_get(k->client, &RES_SECRET, k->ns, name, NULL, &secret, err)))
        return rc;
    if (!mkdtemp(dir)) {
        rc = kerr_set(err, KERR_IO, "creating a directory for the credentials: %s",
                      errtext(errno, eb, sizeof(eb)));
        dir[0] = '\0';
        goto out;
    }
    cJSON_ArrayForEach (it, kjson_get_obj(secret, "data")) {
        if (cJSON_IsString(it) && (rc = write_key(dir, it->string, it->valuestring, written, err)))
            break;
    }
out:
    cJSON_Delete(secret);
    return rc;
}

static void unmaterialize(const char *dir, struct strlist *written)
{
    size_t i;

    for (i = 0; i < written->n; i++)
        (void)unlink(written->v[i]);
    if (dir[0])
        (void)rmdir(dir);
}

/* Read fd to its end into out (capped), returning once the writer closed it. */
static void drain(int fd, struct buf *out)
{
    char chunk[8192];
    ssize_t n;

    for (;;) {
        n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (buf_append(out, chunk, (size_t)n) != KERR_OK)
            continue; /* past the cap: read on, so the writer is not blocked */
    }
}

/*
 * Run bin with argv and the variable var=val (var NULL: none); *status its exit status.
 * out non-NULL: its standard output is read into out instead of being shown.
 */
static enum kerr run(const char *bin, char *const *argv, const char *var, const char *val,
                     struct buf *out, int *status, struct kerr_info *err)
{
    posix_spawn_file_actions_t fa;
    int p[2] = { -1, -1 }, st, e;
    char eb[128];
    pid_t pid;

    if (var && setenv(var, val, 1) != 0)
        return kerr_set(err, KERR_NOMEM, "setting %s", var);
    if (out && pipe(p) != 0)
        return kerr_set(err, KERR_IO, "pipe: %s", errtext(errno, eb, sizeof(eb)));
    posix_spawn_file_actions_init(&fa);
    if (out) {
        posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&fa, p[0]);
        posix_spawn_file_actions_addclose(&fa, p[1]);
    }
    e = posix_spawnp(&pid, bin, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (out)
        close(p[1]);
    if (e != 0) {
        if (out)
            close(p[0]);
        return kerr_set(err, KERR_IO,
                        "cannot run %s: %s (put warden-snapshot on PATH or give --snapshot-binary)",
                        bin, errtext(e, eb, sizeof(eb)));
    }
    if (out) {
        drain(p[0], out);
        close(p[0]);
    }
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR)
            return kerr_set(err, KERR_IO, "waiting for %s: %s", bin,
                            errtext(errno, eb, sizeof(eb)));
    }
    if (!WIFEXITED(st))
        return kerr_set(err, KERR_IO, "%s was killed by signal %d", bin, WTERMSIG(st));
    *status = WEXITSTATUS(st);
    return KERR_OK;
}

/* verify's verdict on list's output: the number of snapshots marked sha256=corrupt. */
static size_t corrupt_count(const char *text)
{
    const char *at = text;
    size_t n = 0;

    while ((at = strstr(at, " sha256=corrupt"))) {
        at += strlen(" sha256=corrupt");
        if (*at == '\n' || *at == '\0')
            n++;
    }
    return n;
}

int kw_snap_main(struct kw *k, const char *cmd, const char *bin, const char *const *args,
                 size_t nargs)
{
    struct kerr_info err = { 0 };
    cJSON *etcd = NULL;
    const char *provider, *container, *prefix, *endpoint, *secret, *var = NULL, *file = NULL;
    const char *argv[16];
    char dir[4096], val[4200] = "";
    struct strlist written;
    struct buf listing;
    size_t bad;
    const char *tmp = getenv("TMPDIR");
    size_t n = 0;
    int verify = strcmp(cmd, "verify") == 0, code = KW_EXIT_FAIL, st = 0;

    if (nargs != 1) {
        fprintf(k->msg, "error: %s takes one Etcd name\n", cmd);
        return KW_EXIT_USAGE;
    }
    strlist_init(&written);
    dir[0] = '\0';
    if (k8s_get(k->client, &KW_RES_ETCD, k->ns, args[0], NULL, &etcd, &err) != KERR_OK) {
        kw_fail(k, &err);
        goto out;
    }
    provider = kjson_get_str(etcd, "spec.backup.store.provider");
    container = kjson_get_str(etcd, "spec.backup.store.container");
    prefix = kjson_get_str(etcd, "spec.backup.store.prefix");
    endpoint = kjson_get_str(etcd, "spec.backup.store.endpointOverride");
    secret = kjson_get_str(etcd, "spec.backup.store.secretRef.name");
    if (!provider || !container || !prefix) {
        fprintf(k->msg, "error: etcd %s/%s has no backup store (spec.backup.store)\n", k->ns,
                args[0]);
        goto out;
    }
    var = cred_var(provider, &file);
    if (var && secret) {
        snprintf(dir, sizeof(dir), "%s/kubectl-warden.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (materialize(k, secret, dir, &written, &err) != KERR_OK) {
            kw_fail(k, &err);
            goto out;
        }
        snprintf(val, sizeof(val), "%s%s%s", dir, file ? "/" : "", file ? file : "");
    }
    argv[n++] = bin;
    argv[n++] = verify ? "list" : "check-prefixes";
    argv[n++] = "--storage-provider";
    argv[n++] = provider;
    argv[n++] = "--store-container";
    argv[n++] = container;
    if (verify) {
        argv[n++] = "--store-prefix";
        argv[n++] = prefix;
        argv[n++] = "--verify-hash";
    }
    if (endpoint) {
        argv[n++] = "--store-endpoint-override";
        argv[n++] = endpoint;
    }
    argv[n] = NULL;
    fflush(k->out);
    buf_init(&listing, KW_SNAP_MAX_LISTING);
    if (run(bin, (char *const *)argv, dir[0] ? var : NULL, val, verify ? &listing : NULL, &st,
            &err) != KERR_OK) {
        kw_fail(k, &err);
    } else {
        code = st;
        fwrite(buf_str(&listing), 1, listing.len, k->out);
        if (verify && !st && (bad = corrupt_count(buf_str(&listing)))) {
            fprintf(k->msg, "error: %zu snapshot(s) of etcd %s/%s are corrupt (sha256=corrupt)\n",
                    bad, k->ns, args[0]);
            code = KW_EXIT_FAIL;
        }
    }
    buf_release(&listing);
out:
    unmaterialize(dir, &written);
    strlist_release(&written);
    cJSON_Delete(etcd);
    return code;
}
