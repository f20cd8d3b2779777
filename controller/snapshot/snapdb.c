/* snapdb - an etcd database file's revision and live keys; see snapdb.h. */
#include "controller/snapshot/snapdb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/snapshot/snapkeys.h"

#define DEFAULT_MAX_KEYS 1000000u

struct scan {
    int fd;
    struct snapkeys *keys;
};

static enum kerr scan_read(void *ctx, int64_t off, void *dst, size_t len, struct kerr_info *err)
{
    const struct scan *sc = ctx;

    for (size_t got = 0; got < len;) {
        ssize_t r = pread(sc->fd, (char *)dst + got, len - got, (off_t)(off + (int64_t)got));

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return kerr_set(err, KERR_PARSE, "cannot read the database at %lld",
                            (long long)(off + (int64_t)got));
        got += (size_t)r;
    }
    return KERR_OK;
}

static enum kerr scan_kv(void *ctx, int64_t rev, const unsigned char *key, size_t klen, bool tomb,
                         struct kerr_info *err)
{
    const struct scan *sc = ctx;
    unsigned char h[SNAPKEYS_HASH_LEN];

    (void)rev;
    snapkeys_hash(sc->keys, key, klen, h);
    if (tomb) {
        snapkeys_del(sc->keys, h);
        return KERR_OK;
    }
    return snapkeys_add(sc->keys, h, err) == KERR_TOOBIG ? KERR_PARSE : KERR_OK;
}

enum kerr snapdb_scan_fd(int fd, int64_t size, struct snapkeys *keys, struct snapbolt_info *info,
                         struct kerr_info *err)
{
    struct scan sc = { .fd = fd, .keys = keys };

    return snapbolt_scan(scan_read, &sc, size, scan_kv, &sc, info, err);
}

enum kerr snapdb_inspect(const char *path, size_t max_keys, struct snapdb_info *out,
                         struct kerr_info *err)
{
    struct snapkeys *keys = NULL;
    struct snapbolt_info info;
    struct stat st;
    int fd;
    enum kerr rc;

    memset(out, 0, sizeof(*out));
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return kerr_set(err, KERR_IO, "cannot open the database %s: %m", path);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return kerr_set(err, KERR_IO, "the database %s is not a regular file", path);
    }
    rc = snapkeys_new(max_keys ? max_keys : DEFAULT_MAX_KEYS, &keys, err);
    if (rc == KERR_OK)
        rc = snapdb_scan_fd(fd, (int64_t)st.st_size, keys, &info, err);
    if (rc == KERR_OK) {
        out->revision = info.revision;
        out->keys = (int64_t)snapkeys_count(keys);
    } else if (rc == KERR_PARSE) {
        kerr_wrap(err, "the database %s", path);
    }
    snapkeys_free(keys);
    close(fd);
    return rc;
}
