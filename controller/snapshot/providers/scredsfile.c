/* scredsfile - credential files read by a table of fields (see scredsfile.h). */
#include "controller/snapshot/providers/scredsfile.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/kjson.h"

/* Go's strconv.ParseBool. */
int scredsfile_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
    static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };
    for (size_t i = 0; i < 6; i++) {
        if (strcmp(s, yes[i]) == 0 || strcmp(s, no[i]) == 0) {
            *out = strcmp(s, yes[i]) == 0;
            return 0;
        }
    }
    return -1;
}

static enum kerr set_field(void *obj, const struct scredsfile_field *f, const char *val,
                           struct kerr_info *err)
{
    char *base = obj;
    if (f->type == SCREDSFILE_BOOL) {
        if (scredsfile_parse_bool(val, (bool *)(void *)(base + f->off)) != 0) {
            return kerr_set(err, KERR_PARSE, "credential field %s: \"%.32s\" is not a boolean",
                            f->name, val);
        }
        return KERR_OK;
    }
    char **slot = (char **)(void *)(base + f->off);
    free(*slot);
    *slot = strdup(val);
    return *slot ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
}

/* Whole file into b (capped); ENOENT gives KERR_NOTFOUND. */
static enum kerr read_file(const char *path, struct buf *b, struct kerr_info *err)
{
    char chunk[4096];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return kerr_set(err, errno == ENOENT ? KERR_NOTFOUND : KERR_IO, "cannot open %s: %s", path,
                        errno == ENOENT ? "no such file" : "access failed");
    }
    enum kerr rc = KERR_OK;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            rc = n < 0 ? kerr_set(err, KERR_IO, "cannot read %s", path) : KERR_OK;
            break;
        }
        if (buf_append(b, chunk, (size_t)n) != KERR_OK) {
            rc = kerr_set(err, KERR_TOOBIG, "%s is larger than %d bytes", path, SCREDSFILE_MAX);
            break;
        }
    }
    close(fd);
    return rc;
}

static bool in_form(const struct scredsfile_field *f, unsigned form)
{
    return f->forms == 0 || (f->forms & form) != 0;
}

static enum kerr read_dir(const char *dir, const struct scredsfile_field *fields, void *obj,
                          struct kerr_info *err)
{
    enum kerr rc = KERR_OK;
    struct buf b;
    struct stat st;
    buf_init(&b, SCREDSFILE_MAX);
    for (const struct scredsfile_field *f = fields; f->name && rc == KERR_OK; f++) {
        if (!in_form(f, SCREDSFILE_IN_DIR)) {
            continue;
        }
        char *path = buf_dupf(4096, "%s/%s", dir, f->name);
        if (path && f->type == SCREDSFILE_PATH) {
            char **slot = (char **)(void *)((char *)obj + f->off);
            if (stat(path, &st) == 0) {
                free(*slot);
                *slot = path;
            } else {
                free(path);
            }
            continue;
        }
        buf_reset(&b);
        rc = path ? read_file(path, &b, err) : kerr_set(err, KERR_NOMEM, NULL);
        free(path);
        if (rc == KERR_NOTFOUND) {
            rc = KERR_OK;
            continue;
        }
        if (rc != KERR_OK) {
            break;
        }
        while (b.len > 0 && strchr(" \t\r\n", b.data[b.len - 1]) != NULL) {
            b.data[--b.len] = '\0';
        }
        if (memchr(buf_str(&b), '\0', b.len) != NULL) {
            rc = kerr_set(err, KERR_PARSE, "credential field %s contains a NUL byte", f->name);
            break;
        }
        rc = set_field(obj, f, buf_str(&b), err);
    }
    buf_release(&b);
    return rc;
}

enum kerr scredsfile_parse_json(const char *text, size_t len, const struct scredsfile_field *fields,
                                void *obj, struct kerr_info *err)
{
    cJSON *root = NULL;
    struct kjson_limits lim = { SCREDSFILE_MAX * 4, 8 };
    enum kerr rc = kjson_parse(text, len, &lim, &root, NULL, err);
    if (rc != KERR_OK) {
        return kerr_wrap(err, "credentials JSON");
    }
    if (!cJSON_IsObject(root)) {
        rc = kerr_set(err, KERR_PARSE, "credentials JSON is not an object");
    }
    for (const struct scredsfile_field *f = fields; f->name && rc == KERR_OK; f++) {
        if (!in_form(f, SCREDSFILE_IN_JSON)) {
            continue;
        }
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, f->name);
        if (v == NULL || cJSON_IsNull(v)) {
            continue;
        }
        if (f->type == SCREDSFILE_BOOL && cJSON_IsBool(v)) {
            *(bool *)(void *)((char *)obj + f->off) = cJSON_IsTrue(v);
        } else if (f->type == SCREDSFILE_STR && cJSON_IsString(v)) {
            rc = set_field(obj, f, v->valuestring, err);
        } else {
            rc = kerr_set(err, KERR_PARSE, "credential field %s must be a JSON %s", f->name,
                          f->type == SCREDSFILE_BOOL ? "boolean" : "string");
        }
    }
    cJSON_Delete(root);
    return rc;
}

enum kerr scredsfile_check_required(const struct scredsfile_field *fields, const void *obj,
                                    struct kerr_info *err)
{
    for (const struct scredsfile_field *f = fields; f->name; f++) {
        if (!f->required || f->type != SCREDSFILE_STR) {
            continue;
        }
        const char *v = *(char *const *)(const void *)((const char *)obj + f->off);
        if (v == NULL || v[0] == '\0') {
            return kerr_set(err, KERR_INVAL, "credential field %s is missing or empty", f->name);
        }
    }
    return KERR_OK;
}

enum kerr scredsfile_dir_json(const char *dir, char **out, struct kerr_info *err)
{
    struct dirent **names = NULL;
    *out = NULL;
    int n = scandir(dir, &names, NULL, NULL);
    if (n < 0) {
        return kerr_set(err, errno == ENOENT ? KERR_NOTFOUND : KERR_IO,
                        "cannot list the credentials directory %s: %s", dir,
                        errno == ENOENT ? "no such directory" : "access failed");
    }
    /* Go's os.ReadDir order (bytes), the first whose extension (from the last dot) is .json */
    const char *best = NULL;
    for (int i = 0; i < n; i++) {
        const char *dot = strrchr(names[i]->d_name, '.');
        if (dot && strcmp(dot, ".json") == 0 &&
            (best == NULL || strcmp(names[i]->d_name, best) < 0)) {
            best = names[i]->d_name;
        }
    }
    enum kerr rc = KERR_OK;
    if (best && (*out = buf_dupf(8192, "%s/%s", dir, best)) == NULL) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    for (int i = 0; i < n; i++) {
        free(names[i]);
    }
    free(names);
    return rc;
}

enum kerr scredsfile_read(bool dir, const char *path, const struct scredsfile_field *fields,
                          void *obj, struct kerr_info *err)
{
    if (dir) {
        char *json = NULL;
        enum kerr rc = scredsfile_dir_json(path, &json, err);
        if (rc == KERR_OK && json) {
            rc = scredsfile_read(false, json, fields, obj, err);
            if (rc != KERR_OK) {
                kerr_wrap(err, "%s", json);
            }
            free(json);
            return rc;
        }
        rc = rc == KERR_NOTFOUND ? KERR_OK : rc;
        return rc ? rc : read_dir(path, fields, obj, err);
    }
    struct buf b;
    buf_init(&b, SCREDSFILE_MAX * 4);
    enum kerr rc = read_file(path, &b, err);
    if (rc == KERR_OK) {
        rc = scredsfile_parse_json(buf_str(&b), b.len, fields, obj, err);
    }
    buf_release(&b);
    return rc;
}
