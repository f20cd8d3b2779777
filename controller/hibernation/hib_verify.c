/*
 * hib_verify - does the final snapshot hold etcd's last write? (see hib_int.h)
 *
 * Cutting the client Service's ports stops new connections only: a client on an established
 * connection (kube-apiserver's gRPC stream, socket-level load balancing) or on the pod
 * network keeps writing. So before the scale to 0 the controller compares etcd's revision
 * with the last revision the store holds, through the one port a hibernating etcd still
 * serves, the backup sidecar's:
 *   - GET /snapshot/latest: the latest full snapshot and its deltas, each with its last
 *     revision (the number the snapshot's name carries, Full-<start>-<last>-<unix>);
 *   - POST /snapshot/full?final=true: the sidecar reads etcd's current revision with its own
 *     client credentials (a Get WithLastRev) and answers the final full snapshot at that
 *     revision; etcd-backup-restore (v0.28, v0.41, v0.43: takeFullSnapshot) skips the upload
 *     when it equals the previous final full snapshot's, so on an idle etcd this costs none.
 * The answer's revision equal to the store's, read VERIFY_QUIET_MS after it: nothing was
 * written since. Higher: etcd moved on; that answer is itself a newer final snapshot, and the
 * question is asked again, at most VERIFY_TRIES times. (A writer that pauses longer than that
 * between two writes is not seen: the check narrows the window, stopping the writers closes
 * it.) etcd's own /metrics (etcd_debugging_mvcc_current_revision) and its
 * maintenance status are served on the client port, which is cut, and etcd-druid's etcd
 * requires client certificates there (client-cert-auth): the sidecar is the only client of
 * a real deployment that may read the revision.
 *
 * Which sidecar: the one of the StatefulSet's own member pods (controller/hibernation/smember.h:
 * <sts>-<n> owned by the StatefulSet's uid, Running, at its pod IP on the port the pod template
 * declares), never the client Service's clusterIP: a tenant may edit that Service once
 * component protection is disabled, and any pod with the selector's labels joins it, so a
 * stand-in of hers could answer both questions from a store of its own. The URL keeps the name
 * <etcd>-client.<ns>.svc, against which the sidecar's certificate is verified. Only the backup
 * leader's sidecar takes snapshots: the members are asked in ordinal order until one answers
 * both questions; none answering leaves the check unconfirmed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/events.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/core/etcdspec.h"
#include "controller/hibernation/hib_int.h"
#include "controller/hibernation/otask.h"
#include "controller/hibernation/sidecar.h"
#include "controller/hibernation/smember.h"

#define VERIFY_TRIES      3       /* answers of the sidecar that may still move on */
#define VERIFY_TIMEOUT_MS 120000L /* one call (a full snapshot of a moved-on etcd uploads) */
#define VERIFY_AGAIN_MS   10000L  /* after a failed check */
#define VERIFY_QUIET_MS   1000L   /* etcd must hold still this long between two reads */

/* The highest last revision of a Snapshot, or of {fullSnapshot, deltaSnapshots}; -1: none. */
static long long last_revision(const cJSON *o)
{
    const cJSON *d;
    long long best = -1;
    int64_t v;

    if (kjson_get_int64(o, "lastRevision", &v) == KERR_OK)
        return v;
    if (kjson_get_int64(o, "fullSnapshot.lastRevision", &v) == KERR_OK)
        best = v;
    cJSON_ArrayForEach (d, kjson_get_arr(o, "deltaSnapshots"))
        if (kjson_get_int64(d, "lastRevision", &v) == KERR_OK && v > best)
            best = v;
    return best;
}

/* One call; *rev its revision. KERR_OK only for a 200 with a revision. */
static enum kerr ask(const struct sidecar_target *t, enum sidecar_kind kind, long long *rev,
                     struct kerr_info *err)
{
    struct sidecar_result res = { 0 };
    enum kerr rc = sidecar_snapshot(t, kind, kind == SIDECAR_FULL, VERIFY_TIMEOUT_MS, &res, err);

    if (rc == KERR_OK && res.http_status != 200)
        rc = kerr_set(err, KERR_HTTP, "%s answered HTTP %ld: %s", sidecar_path(kind, 1),
                      res.http_status, res.excerpt);
    else if (rc == KERR_OK && (*rev = last_revision(res.snapshot)) < 0 && kind == SIDECAR_FULL)
        rc = kerr_set(err, KERR_PARSE, "%s answered no revision", sidecar_path(kind, 1));
    sidecar_result_release(&res);
    return rc;
}

/* Not confirmed: a Warning, phase Failed (the StatefulSet stays up), and a later check. */
static enum kerr unconfirmed(const struct hib_env *env, struct round *r, const char *why,
                             struct kerr_info *err)
{
    const char *kv[] = { HIB_ANN_PHASE, hibplan_phase_name(HIBPLAN_FAILED) };
    enum kerr rc = KERR_OK;

    if (r->v.phase != HIBPLAN_FAILED)
        rc = hib_patch_etcd(env, r, 1, kv, err);
    if (rc == KERR_OK && r->etcd)
        ev_log_emitf(env->events, r->etcd, EV_WARNING, "FinalSnapshotBehind", "Hibernation",
                     "%s; phase Failed, the StatefulSet stays up and the check is repeated. If "
                     "the writers cannot be stopped and the loss is accepted: kubectl annotate "
                     "etcd -n %s %s %s=\"<RFC 3339 expiry, at most 24h ahead> <reason>\"",
                     why, r->ns, r->name, HIB_ANN_BREAK_GLASS);
    r->defer_ms = VERIFY_AGAIN_MS;
    return rc;
}

/* ktime_sleep_cancellable's test: the controller's stop flag (arg, NULL: never). */
static int stopping(void *arg)
{
    const atomic_int *cancel = arg;

    return cancel && atomic_load(cancel);
}

/*
 * The check on one member's sidecar t: KERR_OK with r->verified set, or with *n answers in seen
 * that kept moving on; else why that sidecar did not answer (the next member is asked).
 */
static enum kerr verify_one(const struct hib_env *env, struct round *r,
                            const struct sidecar_target *t, long long seen[VERIFY_TRIES], int *n,
                            struct kerr_info *e)
{
    long long stored = -1, now = -1;
    enum kerr rc = ask(t, SIDECAR_LATEST, &stored, e);

    *n = 0;
    while (rc == KERR_OK && *n < VERIFY_TRIES) {
        /* a writer between two reads close together may not have written yet */
        if (ktime_sleep_cancellable(VERIFY_QUIET_MS, 50, stopping, (void *)env->cancel) != 0)
            return kerr_set(e, KERR_CANCELLED, "the controller is stopping");
        if ((rc = ask(t, SIDECAR_FULL, &now, e)) != KERR_OK)
            break;
        seen[(*n)++] = now;
        if (now <= stored) { /* nothing written since what the store holds */
            r->verified = true;
            break;
        }
        stored = now; /* that answer is a final snapshot at the newer revision */
    }
    return rc;
}

enum kerr hib_verify(const struct hib_env *env, struct round *r, struct kerr_info *err)
{
    char host[ETCDSPEC_NAME_MAX + 80], why[768], tried[KERR_MSG_LEN] = "";
    struct smember m[SMEMBER_MAX];
    struct sidecar_target t = { 0 };
    struct kerr_info e = { 0 };
    unsigned char *ca = NULL;
    size_t ca_len = 0, used;
    long long seen[VERIFY_TRIES];
    int api = 0, n = 0, members = 0, i;
    enum kerr rc;

    /* the StatefulSet as it is before the question: a scale-up after it voids the answer */
    if (hibguard_checked_format(r->sts, r->checked, sizeof(r->checked), NULL) != KERR_OK)
        r->checked[0] = '\0';
    rc = otask_backup_ca(env->client, r->ns, r->etcd, &ca, &ca_len, &api, &e);
    if (rc == KERR_OK)
        rc = smember_list(env->client, r->ns, r->sts, m, SMEMBER_MAX, &members, &api, &e);
    if (rc != KERR_OK) {
        free(ca);
        if (api)
            return kerr_set(err, rc, "%s", e.msg);
        snprintf(why, sizeof(why),
                 "etcd's revision could not be compared with the final "
                 "snapshot's: %s",
                 e.msg);
        return unconfirmed(env, r, why, err);
    }
    snprintf(host, sizeof(host), "%s-client.%s.svc", r->name, r->ns);
    t.host = host; /* the name the sidecar's certificate carries */
    t.ca_pem = (const char *)ca;
    t.ca_len = ca_len;
    t.cancel = env->cancel;
    /* only the backup leader's sidecar takes snapshots: the members in ordinal order */
    for (i = 0, rc = KERR_INVAL; i < members && !r->verified; i++) {
        t.ip = m[i].ip;
        t.port = m[i].port;
        rc = verify_one(env, r, &t, seen, &n, &e);
        if (rc == KERR_OK || rc == KERR_CANCELLED)
            break; /* an answer (verified, or etcd kept moving on), or stopping */
        kerr_wrap(&e, "pod %s", m[i].pod);
        used = strlen(tried); /* each member's failure, as much as fits */
        if (snprintf(tried + used, sizeof(tried) - used, "%s%s", used ? "; " : "", e.msg) < 0)
            tried[used] = '\0';
    }
    free(ca);
    if (r->verified) {
        log_msg(LOG_INFO, "final snapshot holds etcd's revision", "namespace", r->ns, "name",
                r->name, "pod", m[i].pod, (char *)NULL);
        return KERR_OK;
    }
    if (rc == KERR_CANCELLED) /* stopping: nothing decided, the next leader asks again */
        return kerr_set(err, rc, "revision check of %s/%s: %s", r->ns, r->name, e.msg);
    if (rc != KERR_OK)
        snprintf(why, sizeof(why),
                 "could not ask the backup sidecar of a member whether etcd moved on since the "
                 "final snapshot: %s",
                 tried);
    else
        snprintf(why, sizeof(why),
                 "etcd moved on after the final snapshot: the sidecar of %s read revisions %lld, "
                 "%lld, %lld, each above the last one stored: writes still reach etcd after the "
                 "traffic cut (established connections, the pod network)",
                 m[i].pod, seen[0], seen[1], seen[VERIFY_TRIES - 1]);
    return unconfirmed(env, r, why, err);
}
