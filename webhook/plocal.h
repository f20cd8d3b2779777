/*
 * plocal - the directory of a Local store on the node, at admission. A Local
 * store's identity is the directory its sidecar writes,
 * path.Clean(hostPath + "/" + container + "/" + prefix) (common/blocal), and
 * its hostPath is in a Secret the tenant may edit. So the webhook reads it
 * fresh when it decides a Local claim, from the API server, never from a
 * cache:
 *
 *   - the candidate's (an Etcd's spec.backup.store.secretRef, in its
 *     namespace; none: etcd-druid's default): a Secret that cannot be read is
 *     a refusal (etcd-druid cannot build the StatefulSet either), a hostPath
 *     that is not understood (relative, with "..") too;
 *   - every other Local claim of the caches: an Etcd's own Secret, an
 *     EtcdBackup copy's recorded hostPath (status.destination.hostPath, as its
 *     copy Job mounted it; else its own Secret), a BackupEntry's bucket's (spec.secretRef: the
 *     directory its deletion Job mounts; a retained copy's entry: its
 *     annotation PREFIX_HOSTPATH). One that cannot be read, or an
 *     entry with neither, is in the way of every Local claim (the safe
 *     side: its directory is not known).
 *
 * A hostPath edited after admission is not seen here; the destructive steps
 * (deletion Jobs, copies) decide again when they run.
 *
 * The projection of a Local claim (webhook/prefix) carries what this needs:
 * claim.local {secret (name, absent: none), container, prefix} of an Etcd or
 * EtcdBackup, {bucket, hostPath (annotated), container, prefix} of a BackupEntry; claim.namespace
 * is the Secret's namespace.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant (the client is).
 */
#ifndef WEBHOOK_PLOCAL_H
#define WEBHOOK_PLOCAL_H

#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"

#define PLOCAL_WHY_MAX 1024

/*
 * The directory (a claim prefix, common/blocal) of the Local store at container and prefix
 * whose backup Secret is ns/secret (secret NULL: none) into dir (n bytes). KERR_OK with why
 * "" when known; why (wn bytes) says what is not (a Secret that cannot be read, a hostPath not
 * understood); KERR_NOMEM only.
 */
enum kerr plocal_dir(struct k8s_client *k, const char *ns, const char *secret,
                     const char *container, const char *prefix, char *dir, size_t n, char *why,
                     size_t wn);

/*
 * The directory of another's Local claim c (its projection, see above) into dir: 1 when known,
 * 0 when not (the caller takes it as in the way). buckets: the cached BackupBuckets (NULL:
 * entries are not known).
 */
int plocal_other(struct k8s_client *k, struct store *buckets, const cJSON *c, char *dir, size_t n);

/*
 * 1 when another's Local claim c (its projection) is in the way of namespace ns claiming the
 * Local directory dir (canonical) at admission: its directory cannot be placed (plocal_other),
 * or it overlaps dir, unless c is an Etcd's or an Etcd's BackupEntry (not an EtcdBackup's
 * copies nor a retained copy's entry: Jobs write those, no StatefulSet) of another namespace and
 * its directory is the directory (or a parent of it) of a cached Local BackupBucket with
 * spec.prefixScope Namespace in whose part dir is ns's (common/lowner's lowner_unmountable): the
 * partition gives that directory to nobody and no StatefulSet may mount it for an Etcd
 * (webhook/stsvol), so it is in nobody's way in their own part. When the buckets cannot be read, in
 * the way. Only admission asks this; the destructive decisions (warden-controller's) count such a
 * claim as overlapping everything.
 */
int plocal_in_the_way(struct k8s_client *k, struct store *buckets, const char *ns, const char *dir,
                      const cJSON *c);

/*
 * Why namespace ns may not claim the Local directory dir (canonical: an Etcd's, an EtcdBackup's
 * or schedule's destination, an EtcdRestore's target) into why (PLOCAL_WHY_MAX bytes, "" when
 * it may): a cached BackupBucket of provider Local with spec.prefixScope Namespace whose
 * partition gives dir to another namespace or to none, or whose directory cannot be placed
 * (common/lowner's lowner_part). Reads only the buckets and their Secrets, never another claim.
 * buckets NULL: none. KERR_NOMEM, or an error of the cache.
 */
enum kerr plocal_part(struct k8s_client *k, struct store *buckets, const char *ns, const char *dir,
                      char *why, struct kerr_info *err);

#endif
