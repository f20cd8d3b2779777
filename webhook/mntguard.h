/*
 * mntguard - the data-mount guards of an Etcd's StatefulSet: an UPDATE whose pod template
 * no longer mounts the members' claim volumes as it did, or mounts something over them, and
 * a CREATE that would adopt running pods (or start members on the claims they left) onto a
 * template that does not mount their data where they keep it. Both are refused for everyone,
 * as a running member's PVC DELETE is (webhook/pvcguard.h), unless the break glass on the
 * Etcd counts (pvcguard_glass_problem). What a template mounts is webhook/datamnt's to read.
 *
 * Thread safety: reentrant, as struct lookup allows.
 */
#ifndef WEBHOOK_MNTGUARD_H
#define WEBHOOK_MNTGUARD_H

#include <time.h>

#include "common/kerr.h"
#include "webhook/glassadm.h"
#include "webhook/lookup.h"
#include "webhook/member.h"
#include "webhook/review.h"

/*
 * True when req is an UPDATE of a StatefulSet (running or hibernated: the claims hold
 * the members' data either way) after which a container of its pod template no longer
 * mounts a volume of its
 * volumeClaimTemplates as it did (the same container, path, volume and sub path): an
 * emptyDir put at the data directory, the mount dropped, the container removed; or mounts
 * anything new at or below where it mounts such a volume (an emptyDir at
 * /var/etcd/data/new.etcd, etcd's --data-dir: datamnt_covers).
 */
int mntguard_remounts(const struct review_req *req);

/*
 * Judge such an UPDATE of the StatefulSet of Etcd etcd (m as member_decode or
 * member_sts_by_name made it) at time now: refused for everyone, etcd-druid and an Etcd
 * with component protection disabled included, as a running member's PVC DELETE is (each
 * member would (re)start without its data); a valid break glass lets it through with a
 * warning (its use into *gp, as pvcguard_judge: webhook/pvcguard.h). *decided as pvcguard_judge.
 */
enum kerr mntguard_mounts(time_t now, const struct review_req *req, const struct member_meta *m,
                          const struct lookup_etcd *etcd, struct glassadm_pending *gp,
                          struct review_resp *resp, int *decided);

/*
 * Judge a CREATE of the StatefulSet of Etcd etcd (m as member_decode or member_sts_by_name
 * made it) at time now: it adopts the running pods of its name and rolls them onto its
 * template, so it is refused for everyone when a pod of its name (listed from the API server,
 * lk->pod_items) keeps its data on a claim the template would not mount there, or under
 * something else it would mount (datamnt_adopt_problem; their spec is the fact), and when a
 * member claim of its name whose pod is gone (lk->pvcs) would not be mounted as etcd-druid
 * mounts it (datamnt_claim_pods): those members start on it. A valid break glass lets it
 * through with a warning (its use into *gp). No pod or PVC list: a 500.
 * *decided as pvcguard_judge; any other request: 0, nothing looked up.
 */
enum kerr mntguard_adopts(time_t now, const struct lookup *lk, const struct review_req *req,
                          const struct member_meta *m, const struct lookup_etcd *etcd,
                          struct glassadm_pending *gp, struct review_resp *resp, int *decided);

#endif
