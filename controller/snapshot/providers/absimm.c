/*
 * absimm - ABS version-level immutability: the retention of a snapshot's current version
 * extended in place (see absint.h).
 *
 * A container has version-level immutability when Get Container Properties answers
 * x-ms-immutable-storage-with-versioning-enabled: true; only there can a blob version
 * carry its own time-based retention policy. Get Blob Properties gives the policy of the
 * current version (x-ms-immutability-policy-until-date, RFC 1123, and
 * x-ms-immutability-policy-mode, unlocked or locked); Set Blob Immutability Policy
 * (PUT ?comp=immutabilityPolicies, x-ms-version 2020-06-12 or later) sets a later date.
 * A Locked policy only ever grows (the service refuses a shorter date) and stays Locked;
 * an Unlocked one stays Unlocked unless the store asks for a lock (ostore.extend_lock).
 *
 * The container's default retention period is set through Azure Resource Manager
 * (immutableStorageWithVersioning.immutabilityPolicy), which the Blob service does not
 * report: the period is always given (--retention-days).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/log.h"
#include "controller/snapshot/providers/absint.h"

/* Whether the container has version-level immutability (Get Container Properties). */
static enum kerr container_versioned(struct abs *a, bool *on, struct kerr_info *err)
{
    struct shttp_resp r;
    *on = false;
    enum kerr rc =
        abs_do_req(a, "HEAD", "", "restype=container", NULL, NULL, NULL, 0, NULL, 0, &r, err);
    if (rc == KERR_OK) {
        if (r.status == 200) {
            *on = strcasecmp(r.imm_vers, "true") == 0;
        } else {
            rc = abs_status_err("Get Container Properties", a->container, &r, err);
        }
        shttp_resp_release(&r);
    }
    return rc;
}

/* The current version's policy: *until Unix seconds (0 none), locked its mode. */
static enum kerr blob_policy(struct abs *a, const char *key, int64_t *until, bool *locked,
                             struct kerr_info *err)
{
    struct shttp_resp r;
    *until = 0;
    *locked = false;
    enum kerr rc = abs_do_req(a, "HEAD", key, NULL, NULL, NULL, NULL, 0, NULL, 0, &r, err);
    if (rc == KERR_OK) {
        if (r.status != 200) {
            rc = abs_status_err("Get Blob Properties", key, &r, err);
        } else if (r.imm_until[0]) {
            time_t t = curl_getdate(r.imm_until, NULL);
            if (t <= 0) {
                rc = kerr_set(err, KERR_PARSE, "ABS %s: unreadable immutability date \"%s\"", key,
                              r.imm_until);
            }
            *until = t > 0 ? (int64_t)t : 0;
            *locked = strcasecmp(r.imm_mode, "locked") == 0;
        }
        shttp_resp_release(&r);
    }
    return rc;
}

/* Set Blob Immutability Policy on key's current version: until (Unix seconds), mode. */
static enum kerr set_policy(struct abs *a, const char *key, int64_t until, bool lock,
                            struct kerr_info *err)
{
    char date[64];
    char line[128];
    struct tm tm;
    struct shttp_resp r;
    time_t t = (time_t)until;
    if (gmtime_r(&t, &tm) == NULL ||
        strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm) == 0) {
        return kerr_set(err, KERR_INVAL, "retention date out of range");
    }
    snprintf(line, sizeof line, "x-ms-immutability-policy-until-date: %s", date);
    struct curl_slist *h = curl_slist_append(NULL, line);
    h = h ? curl_slist_append(h, lock ? "x-ms-immutability-policy-mode: Locked"
                                      : "x-ms-immutability-policy-mode: Unlocked")
          : NULL;
    enum kerr rc = h ? abs_do_req(a, "PUT", key, "comp=immutabilityPolicies", NULL, h, NULL, 0,
                                  NULL, 0, &r, err)
                     : kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK) {
        rc = r.status == 200 ? KERR_OK
                             : abs_status_err("Set Blob Immutability Policy", key, &r, err);
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    return rc;
}

enum kerr abs_extend(struct ostore *base, const struct ostore_obj *obj, int64_t period,
                     int64_t *until, struct kerr_info *err)
{
    struct abs *a = (struct abs *)base;
    bool on = false;
    bool locked = false;
    int64_t cur = 0;
    *until = 0;
    enum kerr rc = container_versioned(a, &on, err);
    if (rc != KERR_OK) {
        return rc;
    }
    if (!on) {
        return kerr_set(err, KERR_UNSUPPORTED,
                        "container %s has no version-level immutability "
                        "(immutable storage with versioning)",
                        a->container);
    }
    if (period <= 0) {
        return kerr_set(err, KERR_INVAL,
                        "the Blob service does not report container %s's default retention: "
                        "give --retention-days",
                        a->container);
    }
    rc = blob_policy(a, obj->key, &cur, &locked, err);
    if (rc != KERR_OK) {
        return rc;
    }
    int64_t want = (int64_t)time(NULL) + period;
    bool lock = locked || base->extend_lock; /* a Locked policy stays Locked */
    if (cur >= want && (locked || !lock)) {
        *until = cur; /* never shortened */
        log_info("retention already reaches the period, left as it is", "key", obj->key);
        return KERR_OK;
    }
    want = cur > want ? cur : want; /* locking an Unlocked policy keeps its date */
    rc = set_policy(a, obj->key, want, lock, err);
    *until = rc == KERR_OK ? want : cur;
    return rc;
}
