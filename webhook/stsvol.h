/*
 * stsvol - the directory on the node an Etcd's StatefulSet mounts for its Local backups, judged
 * where it is made real: a StatefulSet CREATE or UPDATE (/webhooks/etcdcomponents and
 * /webhooks/scaleguard, whoever asks, etcd-druid included).
 *
 * etcd-druid turns a Local Etcd's backup Secret into the StatefulSet's volume "local-backup", a
 * hostPath "<hostPath>/<container>" mounted at "<home>/<container>" in container backup-restore
 * (internal/component/statefulset/builder.go, getBackupVolume and getEtcdBackupVolumeMount), and
 * the sidecar writes and garbage-collects "<home>/<container>/<prefix>", its container and prefix
 * as the template gives them (common/ststore: "--store-prefix=", env STORAGE_CONTAINER). So the
 * directory judged is the one the template really gives the sidecar: path.Clean(volume path +
 * "/" + the template's --store-prefix) on the node, never the Etcd's spec (a tenant who disabled
 * component protection edits the template at will, and the volume of a partitioned Local bucket
 * is the bucket's whole directory). A Secret edit after the Etcd's admission is no request the
 * webhook judges; the StatefulSet etcd-druid builds from it is. So a StatefulSet of a live Etcd
 * is judged on a CREATE, and on an UPDATE that changes what ststore reads, the "local-backup"
 * hostPath, the volumes or any container's mounts (a scale is not judged), whether or not
 * component protection is disabled (the rule protects other tenants), and refused unless that
 * directory is one the Etcd may claim, by the rules an Etcd's claim is admitted by
 * (webhook/prefix, plocal):
 *   - not in a partitioned Local bucket's directory outside the namespace's part (the bucket's
 *     own directory, a parent of it, another namespace's part, nobody's: plocal_part);
 *   - not overlapping another claim: another Etcd (its Secret read now), a BackupEntry of
 *     another Etcd or of this Etcd being deleted, an EtcdBackup's copies; one that cannot be
 *     placed, or whose store is not understood, is in the way.
 * Fail closed: a volume that cannot be read (two of that name, a path that is no string), a
 * sidecar store ststore cannot read for a Local Etcd or beside a "local-backup" volume, a
 * "local-backup" volume beside a sidecar whose store is not Local or absent, the sidecar's
 * "local-backup" mount not exactly one at "<dir>/<STORAGE_CONTAINER>" or with a subPath or
 * subPathExpr, another hostPath volume mounted by the sidecar, any other mount of the sidecar
 * at or below its "local-backup" mount, a hostPath volume another container mounts there, a
 * path that is not absolute or has a ".." segment, a prefix that leaves the directory, a
 * StatefulSet labelled as an Etcd's whose Etcd the cache does not hold, and caches not synced
 * are refused (the last two with a 500). A StatefulSet of no Etcd (neither labelled as one nor
 * named after a cached Etcd) is not judged here.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant (the caches and client are).
 */
#ifndef WEBHOOK_STSVOL_H
#define WEBHOOK_STSVOL_H

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"
#include "webhook/prefix_cache.h"
#include "webhook/review.h"

/* The volume etcd-druid mounts a Local store's host directory by. */
#define STSVOL_VOLUME "local-backup"

/* What stsvol_hostpath found in a StatefulSet. */
enum stsvol_found {
    STSVOL_NONE, /* no volume of that name, or one that is no hostPath: nothing on the node */
    STSVOL_PATH, /* a hostPath volume: *path */
    STSVOL_BAD,  /* volumes that cannot be read: two of that name, a path that is no string */
};

/* The hostPath path of volume STSVOL_VOLUME in the pod template of StatefulSet sts into *path
 * (BORROWED from sts, set for STSVOL_PATH only). Pure. */
enum stsvol_found stsvol_hostpath(const cJSON *sts, const char **path);

/* 1 when req is a StatefulSet CREATE or UPDATE whose new object has a STSVOL_VOLUME volume, a
 * Local backup sidecar or a backup sidecar whose store cannot be read, and, for an UPDATE, what
 * that sidecar reads, the volumes or a container's mounts changed (see above). Pure. */
int stsvol_applies(const struct review_req *req);

/*
 * The rule for req against the projected caches (webhook/prefix: etcds, entries, backups or
 * NULL; buckets: the BackupBuckets whole, or NULL; routed: as prefix_check_local's), the
 * Secrets read now through k: resp denied
 * (403, or 500 when the caches cannot answer) when refused, left as it was otherwise.
 * KERR_NOMEM / KERR_TOOBIG when the answer cannot be built.
 */
enum kerr stsvol_check(struct k8s_client *k, struct store *buckets, int routed, struct store *etcds,
                       struct store *entries, struct store *backups, const struct review_req *req,
                       struct review_resp *resp, struct kerr_info *err);

/*
 * stsvol_check against the caches of pc (its client reads the Secrets now): resp denied
 * (403, or 500 when the caches cannot answer) when refused, left as it was otherwise.
 * KERR_NOMEM / KERR_TOOBIG when the answer cannot be built.
 */
enum kerr stsvol_decide(struct prefix_cache *pc, const struct review_req *req,
                        struct review_resp *resp, struct kerr_info *err);

#endif
