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
 * The answer's revision equal to the store's, over at least HQUIET_MS between the stored
 * snapshot's time and the answer's Date (both on the sidecar's clock; what they do not cover
 * is waited on the controller's clock and the question asked again: hquiet.h): nothing was
 * written since. Higher: etcd moved on; that answer is itself a newer final snapshot, and the
 * question is asked again, at most VERIFY_TRIES times. (A writer that pauses longer than that
 * between two writes is not seen: the check narrows the window, stopping the writers closes
 * it.) etcd's own /metrics (etcd_debugging_mvcc_current_revision) and its
 * maintenance status are served on the client port, which is cut, and etcd-druid's etcd
 * requires client certificates there (client-cert-auth): the sidecar is the only client of
 * a real deployment that may read the revision.
 *
 * Which sidecar: the one of the StatefulSet's own member pods (controller/core/smember.h:
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
#include "controller/hibernation/hquiet.h"
#include "controller/hibernation/otask.h"
#include "controller/hibernation/sidecar.h"
#include "controller/core/smember.h"

#define VERIFY_TRIES      3       /* answers of the sidecar that may still move on */
#define VERIFY_TIMEOUT_MS 120000L /* one call (a full snapshot of a moved-on etcd uploads) */
#define VERIFY_AGAIN_MS   10000L  /* after a failed check */
#define VERIFY_POSTS      8       /* answers of one sidecar before it is given up */

/*
 * The highest last revision of a Snapshot, or of {fullSnapshot, deltaSnapshots}; -1: none.
 * *carrier (BORROWED from o) the Snapshot that carries it.
 */
static long long last_revision(const cJSON *o, const cJSON **carrier)
{
    const cJSON *d;
    long long best = -1;
    int64_t v;

    *carrier = NULL;
    if (kjson_get_int64(o, "lastRevision", &v) == KERR_OK) {
        *carrier = o;
        return v;
    }
    if (kjson_get_int64(o, "fullSnapshot.lastRevision", &v) == KERR_OK) {
        best = v;
        *carrier = kjson_get_obj(o, "fullSnapshot");
    }
    cJSON_ArrayForEach (d, kjson_get_arr(o, "deltaSnapshots"))
        if (kjson_get_int64(d, "lastRevision", &v) == KERR_OK && v > best) {
            best = v;
            *carrier = d;
        }
    return best;
}

/*
 * One call; *rev its revision, *snap (OWNS, cJSON_Delete; NULL if none) the Snapshot that
 * carries it, *date_ms the answer's Date (-1: none or unreadable). KERR_OK only for a 200,
 * with a revision for SIDECAR_FULL.
 */
static enum kerr ask(const struct sidecar_target *t, enum sidecar_kind kind, long long *rev,
                     cJSON **snap, int64_t *date_ms, struct kerr_info *err)
{
    struct sidecar_result res = { 0 };
    enum kerr rc = sidecar_snapshot(t, kind, kind == SIDECAR_FULL, VERIFY_TIMEOUT_MS, &res, err);
    const cJSON *carrier = NULL;

    *snap = NULL;
    *date_ms = -1;
    if (rc == KERR_OK && res.http_status != 200)
        rc = kerr_set(err, KERR_HTTP, "%s answered HTTP %ld: %s", sidecar_path(kind, 1),
                      res.http_status, res.excerpt);
    else if (rc == KERR_OK && (*rev = last_revision(res.snapshot, &carrier)) < 0 &&
             kind == SIDECAR_FULL)
        rc = kerr_set(err, KERR_PARSE, "%s answered no revision", sidecar_path(kind, 1));
    if (rc == KERR_OK && carrier && !(*snap = cJSON_Duplicate(carrier, 1)))
        rc = kerr_set(err, KERR_NOMEM, "out of memory");
    if (rc == KERR_OK)
        *date_ms = hquiet_date_ms(res.date);
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

/* The verdict on an answer, in the debug log. */
static void log_verdict(const struct round *r, const struct hquiet_in *q, enum hquiet_verdict v,
                        long wait_ms)
{
    char rev[48], wait[24], seen[32] = "unknown";
    int64_t start;

    if (!log_enabled(LOG_DEBUG))
        return;
    snprintf(rev, sizeof(rev), "%lld/%lld", q->answer_rev, q->stored_rev);
    snprintf(wait, sizeof(wait), "%ld", wait_ms);
    start = hquiet_snapshot_ms(q->answer);
    if (start >= 0 && q->date_ms >= 0) /* on the sidecar's clock: its Date - the snapshot's time */
        snprintf(seen, sizeof(seen), "%lld", (long long)(q->date_ms - start));
    log_msg(LOG_DEBUG, "revision check answer", "namespace", r->ns, "name", r->name,
            "revision/stored", rev, "verdict", hquiet_verdict_name(v), "quiet_ms", seen, "wait_ms",
            wait, (char *)NULL);
}

/*
 * The check on one member's sidecar t: KERR_OK with r->verified set, or with *n answers in seen
 * that kept moving on; else why that sidecar did not answer (the next member is asked).
 * The quiet second is witnessed by the sidecar's own times where they show it (hquiet.h);
 * only what they do not show is waited.
 */
static enum kerr verify_one(const struct hib_env *env, struct round *r,
                            const struct sidecar_target *t, long long seen[VERIFY_TRIES], int *n,
                            struct kerr_info *e)
{
    struct hquiet_in q = { .stored_rev = -1, .date_ms = -1 };
    cJSON *stored = NULL, *answer = NULL;
    enum hquiet_verdict v;
    long wait_ms = 0;
    int64_t unused;
    int posts;
    enum kerr rc = ask(t, SIDECAR_LATEST, &q.stored_rev, &stored, &unused, e);

    *n = 0;
    for (posts = 0; rc == KERR_OK && !r->verified && *n < VERIFY_TRIES; posts++) {
        if (posts == VERIFY_POSTS) {
            rc = kerr_set(e, KERR_PARSE, "%d answers of the sidecar did not settle", VERIFY_POSTS);
            break;
        }
        /* a writer between two reads close together may not have written yet */
        if (wait_ms > 0 &&
            ktime_sleep_cancellable(wait_ms, 50, stopping, (void *)env->cancel) != 0) {
            rc = kerr_set(e, KERR_CANCELLED, "the controller is stopping");
            break;
        }
        q.waited = wait_ms > 0;
        if ((rc = ask(t, SIDECAR_FULL, &q.answer_rev, &answer, &q.date_ms, e)) != KERR_OK)
            break;
        q.stored = stored;
        q.answer = answer;
        v = hquiet_decide(&q, &wait_ms);
        log_verdict(r, &q, v, wait_ms);
        if (v == HQUIET_QUIET) /* nothing written since what the store holds */
            r->verified = true;
        if (v == HQUIET_MOVED)
            seen[(*n)++] = q.answer_rev;
        if (v == HQUIET_MOVED || v == HQUIET_AGAIN) { /* the answer is the newest stored */
            cJSON_Delete(stored);
            stored = answer;
            answer = NULL;
            q.stored_rev = q.answer_rev;
        }
        cJSON_Delete(answer);
        answer = NULL;
    }
    cJSON_Delete(stored);
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
