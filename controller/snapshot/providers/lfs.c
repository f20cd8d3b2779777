/* lfs - Local directory provider (see lfs.h). */
#include "controller/snapshot/providers/lfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/crypto.h"

#define TMP_DIR ".warden-snapshot-tmp"

struct lfs {
    struct ostore base;
    char *root;
};

struct ostore_upload {
    char *tmp;
    char *dst;
    int fd;
};

static enum kerr sys_fail(struct kerr_info *err, const char *what, const char *path)
{
    char msg[128];
    int e = errno;
    if (strerror_r(e, msg, sizeof msg) != 0) {
        snprintf(msg, sizeof msg, "errno %d", e);
    }
    return kerr_set(err, e == ENOENT ? KERR_NOTFOUND : KERR_IO, "%s %s: %s", what, path, msg);
}

static char *path_of(const struct lfs *l, const char *key)
{
    return buf_dupf(8192, "%s/%s", l->root, key);
}

static enum kerr walk(struct lfs *l, const char *rel, const char *prefix, struct ostore_list *out,
                      int depth, struct kerr_info *err)
{
    char *dir = path_of(l, rel);
    DIR *d = dir ? opendir(dir) : NULL;
    enum kerr rc = KERR_OK;
    if (d == NULL) {
        rc = (dir && errno == ENOENT) ? KERR_OK : sys_fail(err, "cannot list", dir ? dir : rel);
        free(dir);
        return rc;
    }
    struct dirent *e;
    while (rc == KERR_OK && (e = readdir(d)) != NULL) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            (depth == 0 && strcmp(e->d_name, TMP_DIR) == 0)) {
            continue;
        }
        char *key = buf_dupf(8192, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        char *p = key ? path_of(l, key) : NULL;
        if (p == NULL || lstat(p, &st) != 0) {
            rc = p ? sys_fail(err, "cannot stat", p) : kerr_set(err, KERR_NOMEM, NULL);
        } else if (S_ISDIR(st.st_mode) && depth < 16) {
            size_t kl = strlen(key);
            if (strncmp(key, prefix, kl < strlen(prefix) ? kl : strlen(prefix)) == 0) {
                rc = walk(l, key, prefix, out, depth + 1, err);
            }
        } else if (S_ISREG(st.st_mode) && strncmp(key, prefix, strlen(prefix)) == 0) {
            struct ostore_obj o = { .key = key, .size = st.st_size, .mtime = st.st_mtime };
            rc = ostore_list_add(out, &o, err);
        }
        free(p);
        free(key);
    }
    closedir(d);
    free(dir);
    return rc;
}

static enum kerr l_list(struct ostore *s, const char *prefix, struct ostore_list *out,
                        struct kerr_info *err)
{
    return walk((struct lfs *)s, "", prefix, out, 0, err);
}

static enum kerr file_md5(int fd, char out[33], struct kerr_info *err)
{
    unsigned char buf[65536];
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned dl = 0;
    ssize_t n;
    enum kerr rc = KERR_OK;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (md == NULL || EVP_DigestInit_ex(md, EVP_md5(), NULL) != 1) {
        EVP_MD_CTX_free(md);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        EVP_DigestUpdate(md, buf, (size_t)n);
    }
    if (n < 0 || EVP_DigestFinal_ex(md, d, &dl) != 1) {
        rc = kerr_set(err, KERR_IO, "cannot read the file for its MD5");
    }
    for (unsigned i = 0; rc == KERR_OK && i < dl; i++) {
        snprintf(out + 2 * i, 3, "%02x", d[i]);
    }
    EVP_MD_CTX_free(md);
    return rc;
}

static enum kerr l_head(struct ostore *s, const char *key, struct ostore_obj *out,
                        struct kerr_info *err)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    char *p = path_of((struct lfs *)s, key);
    int fd = p ? open(p, O_RDONLY | O_CLOEXEC) : -1;
    enum kerr rc = KERR_OK;
    if (fd < 0 || fstat(fd, &st) != 0) {
        rc = p ? sys_fail(err, "cannot open", p) : kerr_set(err, KERR_NOMEM, NULL);
    } else {
        char mark[8] = "";
        ssize_t ml = fgetxattr(fd, OSTORE_COPY_MARK_LOCAL, mark, sizeof mark - 1);
        out->own_copy = ml == 4 && memcmp(mark, "true", 4) == 0;
        ml = fgetxattr(fd, OSTORE_SHA256_LOCAL, out->sha256, sizeof out->sha256 - 1);
        out->sha256[ml == (ssize_t)sizeof out->sha256 - 1 ? ml : 0] = '\0';
        out->size = st.st_size;
        out->mtime = st.st_mtime;
        out->key = strdup(key);
        rc = out->key ? file_md5(fd, out->md5, err) : kerr_set(err, KERR_NOMEM, NULL);
    }
    if (fd >= 0) {
        close(fd);
    }
    free(p);
    if (rc != KERR_OK) {
        ostore_obj_release(out);
    }
    return rc;
}

static enum kerr l_read(struct ostore *s, const struct ostore_obj *src, int64_t off, void *dst,
                        size_t len, struct kerr_info *err)
{
    char *p = path_of((struct lfs *)s, src->key);
    int fd = p ? open(p, O_RDONLY | O_CLOEXEC) : -1;
    enum kerr rc = KERR_OK;
    size_t got = 0;
    if (fd < 0) {
        rc = p ? sys_fail(err, "cannot open", p) : kerr_set(err, KERR_NOMEM, NULL);
    }
    while (rc == KERR_OK && got < len) {
        ssize_t n = pread(fd, (char *)dst + got, len - got, (off_t)(off + (int64_t)got));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            rc = n < 0 ? sys_fail(err, "cannot read", p)
                       : kerr_set(err, KERR_IO, "%s is shorter than listed", src->key);
        }
        got += n > 0 ? (size_t)n : 0;
    }
    if (fd >= 0) {
        close(fd);
    }
    free(p);
    return rc;
}

static enum kerr l_up_begin(struct ostore *s, const char *key, int64_t size,
                            struct ostore_upload **out, struct kerr_info *err)
{
    struct lfs *l = (struct lfs *)s;
    char rnd[17];
    (void)size;
    *out = NULL;
    struct ostore_upload *u = calloc(1, sizeof *u);
    char *tmpdir = path_of(l, TMP_DIR);
    if (u == NULL || tmpdir == NULL || crypto_random_hex(8, rnd, sizeof rnd, err) != KERR_OK) {
        free(u);
        free(tmpdir);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    u->fd = -1;
    if (mkdir(tmpdir, 0700) != 0 && errno != EEXIST) {
        enum kerr rc = sys_fail(err, "cannot create", tmpdir);
        free(tmpdir);
        free(u);
        return rc;
    }
    u->tmp = buf_dupf(8192, "%s/%s", tmpdir, rnd);
    u->dst = path_of(l, key);
    free(tmpdir);
    if (u->tmp && u->dst) {
        u->fd = open(u->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    }
    if (u->fd < 0) {
        enum kerr rc =
            u->tmp ? sys_fail(err, "cannot create", u->tmp) : kerr_set(err, KERR_NOMEM, NULL);
        free(u->tmp);
        free(u->dst);
        free(u);
        return rc;
    }
    *out = u;
    return KERR_OK;
}

static enum kerr l_up_part(struct ostore *s, struct ostore_upload *u, const void *data, size_t len,
                           struct kerr_info *err)
{
    (void)s;
    for (size_t done = 0; done < len;) {
        ssize_t n = write(u->fd, (const char *)data + done, len - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return sys_fail(err, "cannot write", u->dst);
        }
        done += (size_t)n;
    }
    return KERR_OK;
}

static void l_up_abort(struct ostore *s, struct ostore_upload *u)
{
    (void)s;
    if (u == NULL) {
        return;
    }
    if (u->fd >= 0) {
        close(u->fd);
    }
    unlink(u->tmp);
    free(u->tmp);
    free(u->dst);
    free(u);
}

/* mkdir -p of the parent directories of path. */
static enum kerr make_parents(char *path, struct kerr_info *err)
{
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        int r = mkdir(path, 0755);
        int e = errno;
        if (r != 0 && e != EEXIST) {
            enum kerr rc = sys_fail(err, "cannot create", path);
            *p = '/';
            return rc;
        }
        *p = '/';
    }
    return KERR_OK;
}

static enum kerr l_up_commit(struct ostore *s, struct ostore_upload *u, struct kerr_info *err)
{
    enum kerr rc = KERR_OK;
    const char *sha = s->copy_sha256;
    if (fsetxattr(u->fd, OSTORE_COPY_MARK_LOCAL, "true", 4, 0) != 0) {
        rc = sys_fail(err, "cannot mark (extended attribute " OSTORE_COPY_MARK_LOCAL ")", u->dst);
    } else if (sha[0] && fsetxattr(u->fd, OSTORE_SHA256_LOCAL, sha, strlen(sha), 0) != 0) {
        rc = sys_fail(err, "cannot record (extended attribute " OSTORE_SHA256_LOCAL ")", u->dst);
    } else if (fsync(u->fd) != 0) {
        rc = sys_fail(err, "cannot write", u->dst);
    } else if (close(u->fd) != 0) {
        u->fd = -1;
        rc = sys_fail(err, "cannot write", u->dst);
    } else {
        u->fd = -1;
        rc = make_parents(u->dst, err);
    }
    if (rc == KERR_OK && link(u->tmp, u->dst) != 0) {
        rc = errno == EEXIST ? kerr_set(err, KERR_EXISTS, "%s already exists", u->dst)
                             : sys_fail(err, "cannot create", u->dst);
    }
    l_up_abort(s, u);
    return rc;
}

static enum kerr l_del(struct ostore *s, const struct ostore_obj *obj, struct kerr_info *err)
{
    char *p = path_of((struct lfs *)s, obj->key);
    enum kerr rc = KERR_OK;
    if (p == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    if (unlink(p) != 0) {
        rc = errno == EPERM ? kerr_set(err, KERR_FORBIDDEN, "%s is immutable", obj->key)
                            : sys_fail(err, "cannot delete", p);
    }
    free(p);
    return rc;
}

static void l_destroy(struct ostore *s)
{
    struct lfs *l = (struct lfs *)s;
    free(l->root);
    free(l);
}

static const struct ostore_ops lfs_ops = {
    .name = "Local",
    .list = l_list,
    .head = l_head,
    .read = l_read,
    .up_begin = l_up_begin,
    .up_part = l_up_part,
    .up_commit = l_up_commit,
    .up_abort = l_up_abort,
    .copy = NULL,
    .del = l_del,
    .destroy = l_destroy,
};

enum kerr lfs_open(const char *dir, struct ostore **out, struct kerr_info *err)
{
    struct stat st;
    const char *home = getenv("HOME");
    char *root = NULL;
    *out = NULL;
    if (dir[0] != '/' && (home == NULL || home[0] == '\0')) {
        return kerr_set(err, KERR_INVAL, "store container %s is relative and $HOME is not set",
                        dir);
    }
    root = dir[0] == '/' ? strdup(dir) : buf_dupf(8192, "%s/%s", home, dir);
    if (root == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        enum kerr rc = kerr_set(err, KERR_NOTFOUND, "store container %s is not a directory", root);
        free(root);
        return rc;
    }
    struct lfs *l = calloc(1, sizeof *l);
    if (l == NULL) {
        free(root);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    l->root = root;
    l->base.ops = &lfs_ops;
    *out = &l->base;
    return KERR_OK;
}
