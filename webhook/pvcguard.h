/*
 * pvcguard - the member-volume guard: a DELETE of the PVC of a running
 * member (the claim "<volumeClaimTemplate>-<StatefulSet>-<n>" of an Etcd's
 * StatefulSet that exists with n inside its ordinals [start, start +
 * replicas)) is refused for everyone, etcd-druid and the tenants of an Etcd
 * with component protection disabled included: on a cluster the claim waits
 * for its pod (kubernetes.io/pvc-protection), and the pod's next restart
 * starts the member on a new, empty volume. Only a valid break glass
 * (HIBGUARD_ANN_BREAK_GLASS) on the Etcd lets it through, with a warning. A
 * claim of an ordinal outside the StatefulSet's, or of a StatefulSet that is
 * gone, is no running member's and is not judged here. The owners of a
 * member-named claim are judged where it is written (pvcguard_owners) and
 * where a StatefulSet would take it (pvcguard_planted).
 *
 * Thread safety: reentrant, as struct lookup allows.
 */
#ifndef WEBHOOK_PVCGUARD_H
#define WEBHOOK_PVCGUARD_H

#include <time.h>

#include "common/kerr.h"
#include "webhook/glassadm.h"
#include "webhook/lookup.h"
#include "webhook/member.h"
#include "webhook/review.h"

/*
 * Why the break glass on etcd does not count for a request at time now ("" when it counts:
 * set, well formed, not expired), into why (size bytes).
 */
void pvcguard_glass_problem(time_t now, const struct lookup_etcd *etcd, char *why, size_t size);

/* True when req is a DELETE of a PVC that m (member_decode's) says is a running member's. */
int pvcguard_applies(const struct review_req *req, const struct member_meta *m);

/*
 * Judge such a DELETE against etcd (the parent Etcd, looked up) at time now
 * (what the break glass expires against). Admitted on a break glass that counts: the
 * use into *gp, for the caller to record once its decision allows (glassadm_settle).
 * *decided 1:
 * resp holds the refusal; 0: the break glass allowed it (a warning in resp)
 * and the usual checks go on. Returns review_*'s result.
 */
enum kerr pvcguard_judge(time_t now, const struct review_req *req, const struct member_meta *m,
                         const struct lookup_etcd *etcd, struct glassadm_pending *gp,
                         struct review_resp *resp, int *decided);

/*
 * The owners of a member-named PVC: a CREATE or UPDATE of a PVC named
 * "<volumeClaimTemplate>-<E>-<n>", E an Etcd of its namespace, whose new
 * object carries an owner reference to anything but StatefulSet E (apps),
 * Etcd E (druid.gardener.cloud) or Pod E-<n> (the StatefulSet controller's
 * retention policy) is refused for everyone: the garbage collector deletes a
 * claim when any owner goes, so a claim planted with an owner of one's own
 * before the StatefulSet binds it would take the member's volume with that
 * owner. A PVC without such a reference is allowed without a lookup; one proven
 * another application's claim whose name reads as E's too (webhook/claimalias.h, an
 * UPDATE decided on the old object) is allowed (a StatefulSet E the API server does not
 * answer for is a 500).
 * *decided 1: resp holds the refusal (or a 500: an Etcd lookup failed or a
 * cache miss nobody confirmed); 0: not judged, the usual checks go on.
 */
enum kerr pvcguard_owners(const struct lookup *lk, const struct review_req *req,
                          struct review_resp *resp, int *decided);

/*
 * True when req brings ordinals into a StatefulSet: a CREATE with replicas
 * above 0, an UPDATE of it (or of its scale) after which it has an ordinal it
 * had not (a scale-up, spec.ordinals.start moved down). The StatefulSet
 * controller uses the claim "<volumeClaimTemplate>-<StatefulSet>-<n>" of each
 * such ordinal n as it finds it.
 */
int pvcguard_claims(const struct review_req *req);

/*
 * A claim planted before its member: such a request of the StatefulSet of an
 * Etcd (m as member_decode or member_sts_by_name made it; the Etcd found) is
 * refused for everyone while a PVC of its namespace named
 * "<anything>-<StatefulSet>-<n>", n an ordinal it brings in, carries an owner
 * reference other than StatefulSet m->name (apps), Etcd m->part_of
 * (druid.gardener.cloud) or Pod <StatefulSet>-<n>: the member would take that
 * claim, and the garbage collector would delete it with the foreign owner (a
 * claim planted before the Etcd existed escapes pvcguard_owners). The PVCs
 * are listed from the API server (lk->pvcs); no answer (or no lookup) is a
 * 500. The same for such a PVC created with spec.dataSource or spec.dataSourceRef (a clone:
 * the member would start on its data; volumeName is not read, every bound claim has it),
 * unless the break glass on etcd counts at time now (its use into *gp, as pvcguard_judge).
 * *decided 1: resp holds the refusal or the 500; 0: the usual checks go
 * on. Returns review_*'s result.
 */
enum kerr pvcguard_planted(time_t now, const struct lookup *lk, const struct review_req *req,
                           const struct member_meta *m, const struct lookup_etcd *etcd,
                           struct glassadm_pending *gp, struct review_resp *resp, int *decided);

/*
 * A claim a member still mounts: a DELETE of a PVC that no StatefulSet says is a running
 * member's (its StatefulSet deleted with the pods orphaned, or it never was one) whose name
 * has a member claim's shape ("<a>-<b>-<digits>") is refused for everyone while a pod of
 * its namespace mounts it (spec.volumes[].persistentVolumeClaim.claimName), that pod is not
 * being deleted, and is named "<E>-<digits>" for an Etcd E of the namespace that is not
 * being deleted: on a cluster the claim waits for that pod, and the member's next start
 * (re-created by the next StatefulSet) gets a new, empty volume. A valid break glass on E
 * lets it through with a warning. The pods are listed from the API server (lk->pod_items);
 * no answer, or an Etcd lookup the cache missed and nobody confirmed, is a 500. *decided as
 * pvcguard_judge; any other request: 0, nothing looked up. Admitted on a break glass: the
 * use and its Etcd into *pg (its gp.what "" on entry), for the caller to record once its
 * decision allows (glassadm_settle); members of two Etcds admitted on break glass: refused.
 */
struct pvcguard_glass {
    struct glassadm_pending gp;
    char name[LOOKUP_NAME_MAX + 1]; /* the Etcd whose break glass it was */
    struct lookup_etcd etcd;        /* that Etcd, as looked up */
};
enum kerr pvcguard_in_use(time_t now, const struct lookup *lk, const struct review_req *req,
                          struct pvcguard_glass *pg, struct review_resp *resp, int *decided);

#endif
