/* erst_plan - one pass over an EtcdRestore: its source and target; see erst.h. */
#include "controller/backups/erst.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/lowner.h"
#include "common/rtarget.h"
#include "common/rtrec.h"
#include "controller/backups/bkown.h"
#include "controller/core/claims.h"
#include "controller/core/etcdspec.h"
#include "controller/core/kname.h"

void erst_plan_release(struct erst_plan *p)
{
    cJSON_Delete(p->backup);
    cJSON_Delete(p->etcd);
    cJSON_Delete(p->from_secret);
    cJSON_Delete(p->to_secret);
}

static enum kerr verdict(struct erst_plan *p, int wait, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum kerr verdict(struct erst_plan *p, int wait, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(p->why, sizeof(p->why), fmt, ap);
    va_end(ap);
    p->wait = wait;
    p->refuse = !wait;
    return KERR_OK;
}

static const char *dflt(const char *s, const char *d)
{
    return s ? s : d;
}

static void read_store(const cJSON *o, struct erst_store *s)
{
    s->provider = kjson_get_str(o, "provider");
    s->container = kjson_get_str(o, "container");
    s->prefix = kjson_get_str(o, "prefix");
    s->endpoint = kjson_get_str(o, "endpointOverride");
    s->secret = kjson_get_str(o, "secretRef.name");
}

/* How long ago the restore was created, in ms; 0 when that cannot be told. */
static long age_ms(const cJSON *rs)
{
    struct timespec created;
    time_t now = time(NULL);

    if (ktime_parse(kjson_get_str(rs, "metadata.creationTimestamp"), &created, NULL) != KERR_OK ||
        created.tv_sec > now)
        return 0;
    return (long)(now - created.tv_sec) * 1000L;
}

/* A DNS-1123 subdomain, as an Etcd's name must be: [a-z0-9.-], alphanumeric at both ends,
 * 1-253 characters. */
static int etcd_name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0, i;

    if (n == 0 || n > 253)
        return 0;
    for (i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
              s[i] == '.'))
            return 0;
    return !(s[0] == '-' || s[0] == '.' || s[n - 1] == '-' || s[n - 1] == '.');
}

/* The source: a Completed EtcdBackup's destination and snapshot, or a store. */
static enum kerr resolve_source(const struct erst_ctx *x, const cJSON *rs, struct erst_plan *p,
                                struct kerr_info *err)
{
    const char *ns = kjson_get_str(rs, "metadata.namespace");
    const char *bname = kjson_get_str(rs, "spec.source.backupName");
    const cJSON *store = kjson_get_obj(rs, "spec.source.store");
    const char *pit = kjson_get_str(rs, "spec.source.pointInTime"), *phase;
    struct timespec ts;
    enum kerr rc;

    if (!bname == !store)
        return verdict(p, 0, "spec.source: give exactly one of backupName and store");
    if (store) {
        read_store(store, &p->from);
        if (pit && ktime_parse(pit, &ts, NULL) != KERR_OK)
            return verdict(p, 0, "spec.source.pointInTime \"%s\" is not RFC 3339", pit);
        p->until = pit;
        return KERR_OK;
    }
    if (pit)
        return verdict(p, 0, "spec.source.pointInTime is for a store source only");
    rc = k8s_get(x->client, &ERST_RES_BACKUP, ns, bname, NULL, &p->backup, err);
    if (rc == KERR_NOTFOUND && age_ms(rs) >= x->backup_wait_ms)
        return verdict(p, 0,
                       "EtcdBackup %s not found in namespace %s (waited %lds): check "
                       "spec.source.backupName",
                       bname, dflt(ns, ""), x->backup_wait_ms / 1000);
    if (rc == KERR_NOTFOUND)
        return verdict(p, 1, "waiting for EtcdBackup %s: not found (refused after %lds)", bname,
                       x->backup_wait_ms / 1000);
    if (rc)
        return rc;
    phase = kjson_get_str(p->backup, "status.phase");
    if (phase && strcmp(phase, "Failed") == 0)
        return verdict(p, 0, "EtcdBackup %s Failed: %s", bname,
                       dflt(kjson_get_str(p->backup, "status.error"), "no error recorded"));
    if (!phase || strcmp(phase, "Completed") != 0)
        return verdict(p, 1, "waiting for EtcdBackup %s: phase %s", bname, dflt(phase, "Pending"));
    read_store(kjson_get(p->backup, "spec.destination"), &p->from);
    p->snapshot = kjson_get_str(p->backup, "status.snapshot.name");
    if (!p->snapshot || !*p->snapshot)
        return verdict(p, 0, "EtcdBackup %s is Completed without status.snapshot.name", bname);
    return KERR_OK;
}

/* The new Etcd's spec (template or live source Etcd) and the target store with its defaults. */
static enum kerr resolve_target(const struct erst_ctx *x, const cJSON *rs, struct erst_plan *p,
                                struct kerr_info *err)
{
    const char *ns = kjson_get_str(rs, "metadata.namespace");
    const char *src = rtarget_source_etcd(rs, p->backup);
    const cJSON *t = kjson_get_obj(rs, "spec.target.store"), *dstore;
    struct rtarget rt;
    enum kerr rc;

    if (src) {
        rc = k8s_get(x->client, &ETCDSPEC_RES_ETCD, ns, src, NULL, &p->etcd, err);
        if (rc && rc != KERR_NOTFOUND)
            return rc;
    }
    p->spec = kjson_get_obj(rs, "spec.etcdTemplate");
    if (!p->spec && p->etcd) {
        p->spec = kjson_get_obj(p->etcd, "spec");
        p->meta = kjson_get_obj(p->etcd, "metadata");
    }
    if (!p->spec)
        return verdict(p, 0,
                       "no spec.etcdTemplate and %s%s%s: the new Etcd's spec comes from the "
                       "template or the live source Etcd (an EtcdStatusBackup keeps no spec)",
                       src ? "the source Etcd " : "no source Etcd (spec.source.etcdName)",
                       src ? src : "", src ? " does not exist" : "");
    dstore = kjson_get_obj(p->spec, "backup.store");
    p->to.container = kjson_get_str(t, "container");
    p->to.prefix = kjson_get_str(t, "prefix");
    /* the store the webhook claimed: one rule for both (common/rtarget) */
    rtarget_resolve_objs(rs, p->etcd, 1, p->backup, &rt);
    p->to.provider = rt.provider;
    p->to.endpoint = rt.endpoint;
    p->to.secret = kjson_get_str(t, "secretRef.name");
    if (!p->to.secret)
        p->to.secret = dstore && kjson_get_str(dstore, "secretRef.name")
                           ? kjson_get_str(dstore, "secretRef.name")
                           : p->from.secret;
    snprintf(p->to_host, sizeof(p->to_host), "%s",
             dflt(kjson_get_str(rs, "status.targetHostPath"), ""));
    if (!p->to.container || !p->to.prefix)
        return verdict(p, 0, "spec.target.store: container and prefix are required");
    return KERR_OK;
}

static enum kerr get_secret(const struct erst_ctx *x, const char *ns, const char *name,
                            const char *side, cJSON **out, struct erst_plan *p,
                            struct kerr_info *err)
{
    enum kerr rc;

    if (!name)
        return verdict(p, 0, "the %s store has no secretRef", side);
    rc = k8s_get(x->client, &ETCDSPEC_RES_SECRET, ns, name, NULL, out, err);
    if (rc == KERR_NOTFOUND)
        return verdict(p, 0, "the Secret %s of the %s store is not in namespace %s", name, side,
                       ns);
    return rc;
}

/*
 * The target resolved now is the one warden-webhook admitted (common/rtrec): its record in the
 * claim Lease of the store it resolved, else refused (a source Etcd moved meanwhile); no record
 * anywhere: nothing admitted to keep to. Leases that cannot be read: a wait (status.error), a
 * Warning event ClaimsUnreadable.
 */
static enum kerr admitted(const struct erst_ctx *x, const cJSON *rs, struct erst_plan *p,
                          struct kerr_info *err)
{
    const struct rtarget live = { p->to.provider, p->to.endpoint };
    const char *lease_ns = k8s_client_namespace(x->client);
    enum rtrec_verdict v;
    char why[ERST_PLAN_WHY_MAX - 200];
    enum kerr rc;

    if (!lease_ns || !*lease_ns)
        return kerr_set(err, KERR_INVAL, "no namespace for the claim Leases");
    rc = rtrec_check(x->client, lease_ns, rs, &live, &v, why, sizeof(why), err);
    if (rc != KERR_OK) { /* no copy until the record can be read: looked at again */
        erst_event(x, rs, EV_WARNING, "ClaimsUnreadable",
                   "no copy: the claim Leases could not be read (retried): %s", err->msg);
        verdict(p, 1, "the claim Leases could not be read: %.400s", err->msg);
        kerr_clear(err);
        return KERR_OK;
    }
    if (v != RTREC_MOVED)
        return KERR_OK;
    return verdict(p, 0,
                   "spec.target.store: %s: the copy writes only the target admitted; delete this "
                   "restore and create it again (with spec.target.store.provider to keep the "
                   "target from moving)",
                   why);
}

/*
 * A Local source's directory, decided in the pass that makes the Job (p->from_host, which the
 * Job mounts): a source EtcdBackup's copy where its copy Job wrote it
 * (status.destination.hostPath), else the source Secret's hostPath as read now (p->from_secret);
 * refused unless the restore's namespace owns it (controller/backups/bkown.h). Not Local: nothing.
 */
static enum kerr check_source_local(const struct erst_ctx *x, const char *ns, struct erst_plan *p,
                                    struct kerr_info *err)
{
    const char *rec = kjson_get_str(p->backup, "status.destination.hostPath");
    char dir[ERST_HOST_MAX + 2 * BSTORE_PREFIX_MAX], why[ERST_PLAN_WHY_MAX - 40];
    struct kerr_info e = { 0 };
    enum kerr rc;

    if (strcmp(bstore_provider_kind(p->from.provider), "Local") != 0)
        return KERR_OK;
    if (p->backup && !rec)
        return verdict(p, 0,
                       "spec.source.backupName: the EtcdBackup records no directory of its Local "
                       "copy (status.destination.hostPath)");
    if (rec && snprintf(p->from_host, sizeof(p->from_host), "%s", rec) >= (int)sizeof(p->from_host))
        return verdict(p, 0, "spec.source.backupName: the recorded hostPath is too long");
    if ((!rec && blocal_hostpath(p->from_secret, p->from_host, sizeof(p->from_host), &e)) ||
        blocal_dir(p->from_host, p->from.container, p->from.prefix, dir, sizeof(dir), &e))
        return verdict(p, 0, "the source store: %.500s", e.msg);
    rc = bkown_local(x->client, ns, dir, "a restore reads", why, sizeof(why), err);
    if (rc != KERR_OK)
        return kerr_wrap(err, "deciding who owns the Local source");
    return *why ? verdict(p, 0, "spec.source: %s", why) : KERR_OK;
}

/*
 * A Local target's directory dir (canonical, placed by p->to_host: the hostPath of the target
 * Secret read in this pass, which the copy Job mounts) refused unless it is the namespace's part
 * of every partitioned Local BackupBucket (common/lowner's lowner_part_now: the rule
 * warden-webhook admitted the target by; the Secret may have been edited since). Not Local:
 * nothing.
 */
static enum kerr check_target_part(const struct erst_ctx *x, const char *ns, struct erst_plan *p,
                                   const char *dir, struct kerr_info *err)
{
    char why[ERST_PLAN_WHY_MAX - 200];
    enum kerr rc;

    if (strcmp(bstore_provider_kind(p->to.provider), "Local") != 0)
        return KERR_OK;
    rc = lowner_part_now(x->client, ns, dir, "a restore writes", why, sizeof(why), err);
    if (rc != KERR_OK)
        return kerr_wrap(err, "deciding whose part the Local target is");
    return *why ? verdict(p, 0,
                          "spec.target.store: the copy Job would mount the hostPath \"%.100s\" of "
                          "Secret %.60s (read now; admitted by what it said then): %s",
                          p->to_host, dflt(p->to.secret, ""), why)
                : KERR_OK;
}

/* The checks before anything is written (Pending): target name and prefix free, Secrets there. */
static enum kerr check_target(const struct erst_ctx *x, const cJSON *rs, struct erst_plan *p,
                              struct kerr_info *err)
{
    const char *ns = kjson_get_str(rs, "metadata.namespace");
    const char *target = kjson_get_str(rs, "spec.target.etcdName");
    char why[ERST_PLAN_WHY_MAX - 160], dwhy[CLAIMS_WHY_MAX] = "";
    struct bstore_claim a = { "", NULL }, b = { "", NULL };
    struct kerr_info claim_err = { 0 };
    enum kerr rc;
    int used = 0;

    if (!bstore_provider_kind(p->from.provider) || !p->from.container || !p->from.prefix)
        return verdict(p, 0, "the source store: unknown provider \"%s\" or no container/prefix",
                       dflt(p->from.provider, ""));
    if (!bstore_provider_kind(p->to.provider))
        return verdict(p, 0, "the target store: unknown provider \"%s\"", dflt(p->to.provider, ""));
    if ((rc = admitted(x, rs, p, err)) != KERR_OK || p->refuse)
        return rc;
    if (bstore_claim_init(&a, p->from.provider, p->from.container, p->from.endpoint, p->from.prefix,
                          &claim_err) == KERR_OK &&
        bstore_claim_init(&b, p->to.provider, p->to.container, p->to.endpoint, p->to.prefix,
                          &claim_err) == KERR_OK)
        used = bstore_claims_overlap(&a, &b);
    else /* fail closed: what cannot be compared may be the source */
        used = -1;
    /* a source a deletion Job is emptying: the copy would take whatever it has not reached */
    rc = used < 0 ? KERR_OK : claims_find_deleting(x->client, &a, dwhy, err);
    bstore_claim_release(&a);
    bstore_claim_release(&b);
    if (rc != KERR_OK)
        return rc;
    if (used < 0)
        return verdict(p, 0, "the target store cannot be compared with the source: %s",
                       claim_err.msg);
    if (*dwhy)
        return verdict(p, 0,
                       "spec.source: the source prefix \"%.128s\" overlaps %.300s: a copy would "
                       "read whatever its deletion has not reached yet; restore from it only once "
                       "the deletion is stopped (kubectl delete backupentry)",
                       p->from.prefix, dwhy);
    if (used)
        return verdict(p, 0,
                       "spec.target.store.prefix \"%s\" overlaps the source prefix \"%s\": the "
                       "backup sidecar lists a prefix as a plain string, so the new cluster's "
                       "snapshots would become the source's newest and its restore would fail",
                       p->to.prefix, p->from.prefix);
    /* the Secrets first: a Local target is checked where the Job built from this same Secret
     * writes (p->to_host, which the Job mounts), never where the Secret points later */
    if ((rc = get_secret(x, ns, p->from.secret, "source", &p->from_secret, p, err)) || p->refuse)
        return rc;
    if ((rc = check_source_local(x, ns, p, err)) || p->refuse)
        return rc;
    if ((rc = get_secret(x, ns, p->to.secret, "target", &p->to_secret, p, err)) || p->refuse)
        return rc;
    if (strcmp(bstore_provider_kind(p->to.provider), "Local") == 0 &&
        (blocal_hostpath(p->to_secret, p->to_host, sizeof(p->to_host), &claim_err) != KERR_OK ||
         blocal_dir(p->to_host, p->to.container, p->to.prefix, why, sizeof(why), &claim_err) !=
             KERR_OK))
        return verdict(p, 0, "the target store's Secret %s: %s", p->to.secret, claim_err.msg);
    if ((rc = check_target_part(x, ns, p, why, err)) != KERR_OK || p->refuse)
        return rc;
    used = erst_prefix_in_use(x->client, ns, target, &p->to, p->to_host, why, sizeof(why), err);
    if (used < 0)
        return err->code == KERR_INVAL ? verdict(p, 0, "%s", err->msg) : err->code;
    if (used)
        return verdict(p, 0,
                       "spec.target.store.prefix \"%s\" is in use: it overlaps %s in the same "
                       "store: one prefix, one cluster",
                       p->to.prefix, why);
    return KERR_OK;
}

/* A restore never touches an existing Etcd: the target name must be free. */
static enum kerr check_name(const struct erst_ctx *x, const cJSON *rs, struct erst_plan *p,
                            struct kerr_info *err)
{
    const char *ns = kjson_get_str(rs, "metadata.namespace");
    const char *target = kjson_get_str(rs, "spec.target.etcdName");
    cJSON *cur = NULL;
    enum kerr rc = k8s_get(x->client, &ETCDSPEC_RES_ETCD, ns, target, NULL, &cur, err);

    cJSON_Delete(cur);
    if (rc == KERR_OK)
        return verdict(p, 0,
                       "Etcd %s/%s exists: a restore creates a new Etcd, never restores in place",
                       ns, target);
    return rc == KERR_NOTFOUND ? KERR_OK : rc;
}

enum kerr erst_plan_resolve(const struct erst_ctx *x, const cJSON *rs, int checks,
                            struct erst_plan *p, struct kerr_info *err)
{
    const char *target = kjson_get_str(rs, "spec.target.etcdName");
    enum kerr rc;

    if (checks && !etcd_name_ok(target))
        return verdict(p, 0,
                       "spec.target.etcdName \"%.253s\" is not a valid Etcd name: lowercase "
                       "letters, digits, '-' and '.', starting and ending with a letter or digit, "
                       "at most 253 characters (e.g. etcd-restored)",
                       dflt(target, ""));
    rc = resolve_source(x, rs, p, err);

    if (!rc && checks && !p->wait && !p->refuse)
        rc = check_name(x, rs, p, err);
    if (!rc && !p->wait && !p->refuse)
        rc = resolve_target(x, rs, p, err);
    if (!rc && checks && !p->wait && !p->refuse)
        rc = check_target(x, rs, p, err);
    return rc;
}
