/* pclaim_read - what the claim Leases say, read only; see pclaim.h and pclaim_int.h. */
#include "common/pclaim.h"

#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/pclaim_int.h"

/*
 * 1 when the EtcdRestore of source record r, recorded at, may still read at now: stored (the
 * uid recorded, when any) and neither Completed nor Failed; not stored yet within
 * PCLAIM_PENDING_S of its admission (another webhook may still hold it); or that cannot be
 * told (the safe side). 0 when it is stored and over, or was never stored (refused after
 * admission, or deleted).
 */
static int source_reads(struct k8s_client *k, const cJSON *r, time_t now)
{
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(r, "at");
    cJSON *o = NULL;
    const char *uid, *phase;
    enum kerr rc = k8s_get(k, &PCLAIM_RES_RESTORE, pclaim_rec_str(r, "namespace"),
                           pclaim_rec_str(r, "name"), NULL, &o, NULL);
    int reads = 1;

    uid = rc == KERR_OK ? kjson_get_str(o, "metadata.uid") : NULL;
    if (rc == KERR_NOTFOUND || (rc == KERR_OK && *pclaim_rec_str(r, "uid") &&
                                (!uid || strcmp(uid, pclaim_rec_str(r, "uid")) != 0)))
        reads = !cJSON_IsNumber(at) || at->valuedouble + PCLAIM_PENDING_S >= (double)now;
    else if (rc == KERR_OK && (phase = kjson_get_str(o, "status.phase")) &&
             (strcmp(phase, "Completed") == 0 || strcmp(phase, "Failed") == 0))
        reads = 0;
    cJSON_Delete(o);
    return reads;
}

/* 1 when the restore target record r is in the way of an owner of what it overlaps at now: its
 * restore stored and claiming its target (or that cannot be told), or not stored yet within
 * PCLAIM_PENDING_S of its admission (another webhook may still hold it). */
static int target_in_the_way(struct k8s_client *k, const cJSON *r, time_t now)
{
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(r, "at");
    int state = pclaim_rec_restore_state(k, r);

    return state == 1 ||
           (state == -1 && cJSON_IsNumber(at) && at->valuedouble + PCLAIM_PENDING_S >= (double)now);
}

/* 1 when restore target record r counts for c: pclaim_restores' conflict (others NULL), or a
 * record of a namespace other than others in the way of an owner of what it overlaps. */
static int restore_counts(struct k8s_client *k, const cJSON *r, const struct pclaim *c,
                          const char *others, time_t now)
{
    if (!cJSON_IsObject(r) || !pclaim_rec_is_restore(r) ||
        !bstore_overlap(c->store, c->prefix, pclaim_rec_str(r, "prefix")))
        return 0;
    if (others)
        return strcmp(pclaim_rec_str(r, "namespace"), others) != 0 && target_in_the_way(k, r, now);
    return pclaim_rec_live(r, now) && !pclaim_rec_same_owner(r, c) &&
           !(c->etcd && strcmp(pclaim_rec_str(r, "namespace"), c->ns) == 0 &&
             strcmp(pclaim_rec_str(r, "etcd"), c->etcd) == 0) &&
           pclaim_rec_restore_claims(k, r);
}

/* The records of claim Lease lease_ns/name into *rec (OWNED; NULL when there is none). */
static enum kerr lease_records(struct k8s_client *k, const char *lease_ns, const char *name,
                               cJSON **rec, struct kerr_info *err)
{
    cJSON *lease = NULL;
    enum kerr rc = k8s_get(k, &PCLAIM_RES_LEASE, lease_ns, name, NULL, &lease, err);

    *rec = NULL;
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        return KERR_OK;
    }
    if (rc == KERR_OK)
        *rec = pclaim_records(lease);
    cJSON_Delete(lease);
    return rc;
}

/* The first restore target of c's store's Lease that restore_counts, into *o. */
static enum kerr first_restore(struct k8s_client *k, const char *lease_ns, const struct pclaim *c,
                               const char *others, struct pclaim_other *o, struct kerr_info *err)
{
    cJSON *rec, *r;
    char name[64];
    time_t now = time(NULL);
    enum kerr rc;

    o->what[0] = o->ns[0] = o->refused[0] = '\0';
    pclaim_lease_name(c->store, name, sizeof(name));
    if ((rc = lease_records(k, lease_ns, name, &rec, err)) != KERR_OK)
        return rc;
    cJSON_ArrayForEach (r, rec) {
        if (restore_counts(k, r, c, others, now)) {
            pclaim_rec_describe(r, o);
            break;
        }
    }
    cJSON_Delete(rec);
    return KERR_OK;
}

enum kerr pclaim_restores(struct k8s_client *k, const char *lease_ns, const struct pclaim *c,
                          struct pclaim_other *o, struct kerr_info *err)
{
    return first_restore(k, lease_ns, c, NULL, o, err);
}

enum kerr pclaim_restore_targets(struct k8s_client *k, const char *lease_ns, const char *store,
                                 const char *prefix, const char *ns, struct pclaim_other *o,
                                 struct kerr_info *err)
{
    return first_restore(k, lease_ns,
                         &(struct pclaim){ ns, "", store, prefix, NULL, NULL, NULL, NULL, NULL },
                         ns, o, err);
}

/* pclaim_admitted over the Lease name: the first record that counts into *o. */
static enum kerr admitted_in(struct k8s_client *k, const char *lease_ns, const char *name,
                             const char *store, const char *prefix, const struct pclaim *own,
                             time_t before, struct pclaim_other *o, struct kerr_info *err)
{
    const cJSON *at;
    cJSON *rec, *r;
    time_t now = time(NULL);
    enum kerr rc = lease_records(k, lease_ns, name, &rec, err);

    if (rc != KERR_OK)
        return rc;
    cJSON_ArrayForEach (r, rec) {
        if (!cJSON_IsObject(r) || !pclaim_rec_live(r, now) ||
            !bstore_overlap(store, prefix, pclaim_rec_str(r, "prefix")) ||
            (pclaim_rec_is_restore(r) && !pclaim_rec_restore_claims(k, r)) ||
            (pclaim_rec_is_source(r) && !source_reads(k, r, now)))
            continue;
        at = cJSON_GetObjectItemCaseSensitive(r, "at");
        if (own && pclaim_rec_same_owner(r, own) && at->valuedouble <= (double)before)
            continue; /* the admission of the Etcd that is gone, not of one created again */
        pclaim_rec_describe(r, o);
        break;
    }
    cJSON_Delete(rec);
    return KERR_OK;
}

enum kerr pclaim_admitted(struct k8s_client *k, const char *lease_ns, const char *store,
                          const char *prefix, const struct pclaim *own, time_t before,
                          struct pclaim_other *o, struct kerr_info *err)
{
    char names[1 + BSTORE_LEGACY_N][64];
    int n = pclaim_lease_names(store, names);
    enum kerr rc = KERR_OK;

    o->what[0] = o->ns[0] = o->refused[0] = '\0';
    if (n < 0)
        return kerr_set(err, KERR_TOOBIG, "container too long");
    /* the store's own Lease, then an earlier release's spellings of it */
    for (int i = 0; i < n && rc == KERR_OK && !*o->what; i++)
        rc = admitted_in(k, lease_ns, names[i], store, prefix, own, before, o, err);
    return rc;
}
