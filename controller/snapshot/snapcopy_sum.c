/*
 * snapcopy_sum - the summary `warden-snapshot copy` leaves in its termination
 * log (see snapcopy.h): compact enough for the kubelet's 4096 bytes.
 */
#include <cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/snapshot/snapcopy.h"

#define ERROR_MAX 200

/* One snapshot's entry appended to arr; 0 on NOMEM. */
static int add_item(cJSON *arr, const struct snapcopy_item *it)
{
    cJSON *s = cJSON_CreateObject();

    if (!s || !cJSON_AddStringToObject(s, "name", it->name.name) ||
        !cJSON_AddStringToObject(s, "kind", snap_kind_str(it->name.kind)) ||
        !cJSON_AddNumberToObject(s, "startRevision", (double)it->name.start_rev) ||
        !cJSON_AddNumberToObject(s, "lastRevision", (double)it->name.last_rev) ||
        !cJSON_AddNumberToObject(s, "size", (double)it->size) ||
        !cJSON_AddStringToObject(s, "md5", it->md5) ||
        !cJSON_AddStringToObject(s, "destination", it->destination) ||
        !cJSON_AddItemToArray(arr, s)) {
        cJSON_Delete(s);
        return 0;
    }
    return 1;
}

/* The summary with every snapshot (all) or the first and the last only. */
static char *print(const struct snapcopy_result *r, const char *error, int all)
{
    cJSON *j = cJSON_CreateObject(), *a = j ? cJSON_AddArrayToObject(j, "snapshots") : NULL;
    size_t n = r ? r->n : 0;
    char *text = NULL;
    int ok = a != NULL;

    for (size_t i = 0; ok && i < n; i++)
        if (all || i == 0 || i + 1 == n)
            ok = add_item(a, &r->v[i]);
    ok = ok && cJSON_AddNumberToObject(j, "total", (double)n) &&
         cJSON_AddStringToObject(j, "error", error);
    if (ok)
        text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return text;
}

enum kerr snapcopy_summary(const struct snapcopy_result *r, const char *error, char **out,
                           struct kerr_info *err)
{
    char line[ERROR_MAX + 1];
    char *text;
    size_t len = 0;

    *out = NULL;
    if (error)
        while (error[len] && error[len] != '\n' && error[len] != '\r' && len < ERROR_MAX)
            len++;
    snprintf(line, sizeof(line), "%.*s", (int)len, error ? error : "");
    text = print(r, line, 1);
    if (text && strlen(text) + 1 >= SNAPCOPY_SUMMARY_MAX) {
        free(text);
        text = print(r, line, 0);
    }
    if (!text)
        return kerr_set(err, KERR_NOMEM, NULL);
    if (strlen(text) + 1 >= SNAPCOPY_SUMMARY_MAX) { /* names are bounded: cannot happen */
        free(text);
        return kerr_set(err, KERR_TOOBIG, "the copy summary exceeds %d bytes",
                        SNAPCOPY_SUMMARY_MAX);
    }
    *out = text;
    return KERR_OK;
}

/*
 * The summary to $WARDEN_TERMINATION_LOG when set, else to /dev/termination-log where it exists
 * (the kubelet mounts it; it is never created on a host). Nothing where it cannot be opened.
 */
void snapcopy_write_termination_log(const struct snapcopy_result *r, const char *error)
{
    const char *path = getenv("WARDEN_TERMINATION_LOG");
    int fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                           : open("/dev/termination-log", O_WRONLY | O_TRUNC | O_CLOEXEC);
    char *text = NULL;
    size_t len, off = 0;
    ssize_t w;

    if (fd < 0)
        return;
    if (snapcopy_summary(r, error, &text, NULL) == KERR_OK) {
        len = strlen(text);
        text[len++] = '\n'; /* the terminating NUL: the summary is used as a line */
        while (off < len && (w = write(fd, text + off, len - off)) > 0)
            off += (size_t)w;
    }
    free(text);
    close(fd);
}
