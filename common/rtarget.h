/*
 * rtarget - the store an EtcdRestore's target is in: the one warden-webhook claims at
 * admission and the one warden-controller's copy Job writes and the restored Etcd uses, told
 * by this one rule (docs/backups-and-restores.md) so that the two never differ:
 *
 *   1. spec.target.store.provider given: it, with spec.target.store.endpointOverride;
 *   2. else with a spec.etcdTemplate: its backup.store's provider and endpointOverride when
 *      it has a provider, else the source store's (4);
 *   3. else (the new Etcd's spec is the live source Etcd's): the source Etcd's
 *      spec.backup.store when it has a provider; a source Etcd that is named but could not be
 *      read tells nothing (RTARGET_UNKNOWN: the restore has no spec to start from either);
 *   4. else the source store's (spec.source.store, or the source EtcdBackup's
 *      spec.destination).
 * Provider and endpoint are always taken together from one of them.
 *
 * Ownership: arguments BORROWED; the strings of the result point into them.
 * Thread safety: pure, reentrant.
 */
#ifndef COMMON_RTARGET_H
#define COMMON_RTARGET_H

#include <cJSON.h>

enum rtarget_from {
    RTARGET_UNKNOWN = 0, /* none of them tells it: refuse */
    RTARGET_OWN,         /* spec.target.store */
    RTARGET_TEMPLATE,    /* spec.etcdTemplate.backup.store */
    RTARGET_ETCD,        /* the live source Etcd's spec.backup.store */
    RTARGET_SOURCE,      /* the source store */
};

struct rtarget {
    const char *provider; /* NULL when RTARGET_UNKNOWN */
    const char *endpoint; /* NULL: none */
};

/*
 * The target store's provider and endpoint of restore (an EtcdRestore) into *out, and where
 * they came from. etcd_store: the live source Etcd's spec.backup.store (NULL: none, or the
 * Etcd not read); etcd_known: 1 when the source Etcd was read (or none is named), 0 when it
 * is named and could not be; source_store: spec.source.store, or the source EtcdBackup's
 * spec.destination (NULL: not known).
 */
enum rtarget_from rtarget_resolve(const cJSON *restore, const cJSON *etcd_store, int etcd_known,
                                  const cJSON *source_store, struct rtarget *out);

/*
 * rtarget_resolve over the objects as the API server stores them, the sources told as
 * warden-webhook tells them at admission: backup the source EtcdBackup (spec.source.backupName,
 * NULL: none named or not read), whose spec.destination is the source store when
 * spec.source.store is not given; etcd the source Etcd (spec.source.etcdName, else the
 * backup's spec.etcdName; NULL: none named, or not read), etcd_known as rtarget_resolve's.
 */
enum rtarget_from rtarget_resolve_objs(const cJSON *restore, const cJSON *etcd, int etcd_known,
                                       const cJSON *backup, struct rtarget *out);

/* The source Etcd's name of restore: spec.source.etcdName, else backup's spec.etcdName (backup
 * NULL: none); NULL when neither names one. */
const char *rtarget_source_etcd(const cJSON *restore, const cJSON *backup);

/*
 * rtarget_resolve_objs with the source EtcdBackup and Etcd found (same namespace as restore)
 * in etcds and backups, arrays of the objects read from the API server (NULL: none read): a
 * source Etcd named and not in etcds tells nothing (etcd_known 0). A target no rule tells is
 * RTARGET_UNKNOWN: whoever reads it as a claim overlaps everything in its container.
 */
enum rtarget_from rtarget_resolve_in(const cJSON *restore, const cJSON *etcds, const cJSON *backups,
                                     struct rtarget *out);

/*
 * 1 while restore (an EtcdRestore as stored) claims its target prefix: from admission until it
 * is Completed (its Etcd claims the prefix then), and once Failed when its copy Job was created
 * (status.jobName): what the copy wrote may still be there (a restore failing at Creating keeps
 * its copied snapshots; a Job killed mid-copy leaves part of them), and whoever is admitted on
 * that prefix next would restore another namespace's data. 0 when Completed, or Failed before
 * any copy started.
 */
int rtarget_claims(const cJSON *restore);

/*
 * How rtarget_local_secret finds a source object: the name of the Secret of the EtcdBackup
 * (backup 1: its spec.destination.secretRef) or Etcd (backup 0: its spec.backup.store.secretRef)
 * ns/name into *secret (NULL: none; valid until the next call). 1 when found, 0 when not.
 */
typedef int (*rtarget_find_fn)(void *ctx, int backup, const char *ns, const char *name,
                               const char **secret);

/*
 * The Secret whose hostPath places restore's target on the node when it is a Local store (the
 * one its copy Job mounts, and warden-webhook reads at admission: webhook/bklocal; one rule for
 * both): its name into *secret (NULL: none, etcd-druid's default hostPath), taken from
 * spec.target.store.secretRef, else spec.etcdTemplate.backup.store.secretRef, else the
 * source's: spec.source.store.secretRef, else the source EtcdBackup's (spec.source.backupName)
 * spec.destination.secretRef, else the source Etcd's (spec.source.etcdName)
 * spec.backup.store.secretRef, both found through lookup. 1 when told; 0 when the source that
 * would tell is not named or not found (the caller takes the target as not placed).
 */
int rtarget_local_secret(const cJSON *restore, rtarget_find_fn lookup, void *ctx,
                         const char **secret);

/* rtarget_local_secret with the sources found in etcds and backups (arrays of items). */
int rtarget_local_secret_in(const cJSON *restore, const cJSON *etcds, const cJSON *backups,
                            const char **secret);

/* "spec.target.store", ...: the field a result came from, for messages. */
const char *rtarget_from_str(enum rtarget_from f);

#endif
