/*
 * snapchain_sum - verify's summary for the restore drill (its container's
 * termination message) and the restored database's comparison; see snapchain.h.
 */
#include "controller/snapshot/snapchain.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "common/ktime.h"
#include "controller/snapshot/snapdb.h"

#define STR_MAX 1024 /* each string of the summary, cut */

enum kerr snapchain_compare_restored(const char *db_path, size_t max_keys,
                                     struct snapchain_result *r, struct kerr_info *err)
{
    struct snapdb_info db;
    struct kerr_info why = { 0 };
    enum kerr rc = snapdb_inspect(db_path, max_keys, &db, &why);

    if (rc == KERR_NOMEM)
        return kerr_set(err, rc, "%s", why.msg);
    if (rc != KERR_OK) {
        if (r->restorable || !r->reason[0])
            snprintf(r->reason, sizeof(r->reason), "the restored database: %.400s", why.msg);
        r->restorable = false;
        r->fault = -1;
        return KERR_OK;
    }
    r->restored = true;
    r->restored_revision = db.revision;
    r->restored_keys = db.keys;
    if (r->restorable && (db.revision != r->revision || db.keys != r->keys)) {
        r->restorable = false;
        r->fault = -1;
        snprintf(r->reason, sizeof(r->reason),
                 "the restored database holds revision %" PRId64 " and %" PRId64
                 " keys; the chain ends at revision %" PRId64 " with %" PRId64 " keys",
                 db.revision, db.keys, r->revision, r->keys);
    }
    return KERR_OK;
}

/* s cut to max bytes (not inside a UTF-8 sequence) added to o as key. */
static bool add_cut(cJSON *o, const char *key, const char *s, size_t max)
{
    char buf[STR_MAX + 1];
    size_t n = strlen(s);

    if (n > max)
        n = max;
    while (n > 0 && n < strlen(s) && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return cJSON_AddStringToObject(o, key, buf) != NULL;
}

static bool add_figures(cJSON *o, const struct snapchain *c, const struct snapchain_result *r,
                        size_t max)
{
    char t[KTIME_LEN + 1];
    bool ok = cJSON_AddBoolToObject(o, "restorable", r->restorable) &&
              add_cut(o, "prefix", c->prefix, max) &&
              cJSON_AddNumberToObject(o, "snapshots", (double)c->snapshots) &&
              cJSON_AddNumberToObject(o, "chainLength", (double)c->n);

    if (ok && r->restorable && c->n) {
        if (ktime_format((time_t)c->v[c->n - 1].name.created, t) != KERR_OK)
            t[0] = '\0';
        ok = cJSON_AddNumberToObject(o, "revision", (double)r->revision) &&
             cJSON_AddNumberToObject(o, "keys", (double)r->keys) &&
             add_cut(o, "newestSnapshot", c->v[c->n - 1].key, max) &&
             (!t[0] || cJSON_AddStringToObject(o, "newestSnapshotTime", t));
    }
    if (ok && !r->restorable)
        ok = (r->fault < 0 || (size_t)r->fault >= c->n ||
              add_cut(o, "failedObject", c->v[r->fault].key, max)) &&
             add_cut(o, "reason", r->reason, max);
    if (ok && r->restored)
        ok = cJSON_AddNumberToObject(o, "restoredRevision", (double)r->restored_revision) &&
             cJSON_AddNumberToObject(o, "restoredKeys", (double)r->restored_keys);
    return ok;
}

enum kerr snapchain_summary(const struct snapchain *c, const struct snapchain_result *r,
                            const char *error, char **out, struct kerr_info *err)
{
    char *text = NULL;

    *out = NULL;
    /* the strings are cut shorter until the line fits the termination message */
    for (size_t max = STR_MAX; max >= 64 && !text; max /= 2) {
        cJSON *o = cJSON_CreateObject();
        bool ok = o && (c && r ? add_figures(o, c, r, max)
                               : add_cut(o, "error", error ? error : "unknown", max));

        text = ok ? cJSON_PrintUnformatted(o) : NULL;
        cJSON_Delete(o);
        if (!ok)
            return kerr_set(err, KERR_NOMEM, "cannot build the summary");
        if (!text)
            return kerr_set(err, KERR_NOMEM, "cannot print the summary");
        if (strlen(text) >= SNAPCHAIN_SUMMARY_MAX) {
            free(text);
            text = NULL;
        }
    }
    if (!text)
        return kerr_set(err, KERR_TOOBIG, "the summary exceeds %d bytes", SNAPCHAIN_SUMMARY_MAX);
    *out = text;
    return KERR_OK;
}

void snapchain_write_termination_log(const struct snapchain *c, const struct snapchain_result *r,
                                     const char *error)
{
    const char *path = getenv("WARDEN_TERMINATION_LOG");
    int fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                           : open("/dev/termination-log", O_WRONLY | O_TRUNC | O_CLOEXEC);
    char *text = NULL;
    size_t len, off = 0;
    ssize_t w;

    if (fd < 0)
        return;
    if (snapchain_summary(c, r, error, &text, NULL) == KERR_OK) {
        len = strlen(text);
        text[len++] = '\n'; /* over the NUL: the summary is read as a line */
        while (off < len && (w = write(fd, text + off, len - off)) > 0)
            off += (size_t)w;
    }
    free(text);
    close(fd);
}
