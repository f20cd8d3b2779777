/*
 * oref - owner references (KubeDirector's repair, adapted to etcd-druid's
 * components): the references
 * an object should have so that the live Etcd is its one controller
 * (oref_compute), and the repair of one object by a JSON patch with a
 * precondition (oref_repair). Shared by the owner-reference pass
 * (controller/restore/orefpass.h), the status backup (controller/restore/sbk.h)
 * and the immutability task's CronJob (controller/immutability/imt.h).
 *
 * A repair is a JSON patch [{"op":"test","path":"/metadata/resourceVersion"},
 * {"op":"add","path":"/metadata/ownerReferences",...}]: a concurrent write
 * fails the test (422, or 409), the object is read again and the repair
 * computed anew, up to OREF_TRIES times; nothing is ever overwritten blindly.
 *
 * Ownership: arguments BORROWED; results as documented. Thread safety:
 * reentrant (the I/O through the thread-safe client).
 */
#ifndef CONTROLLER_OREF_H
#define CONTROLLER_OREF_H

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"

#define OREF_TRIES 5

/* Counters of one pass (or one object). */
struct oref_stats {
    int checked;   /* objects looked at */
    int repaired;  /* objects patched */
    int conflicts; /* precondition failures retried */
};

/*
 * The ownerReferences refs (BORROWED; an array or NULL) should have so that
 * want (BORROWED; a controller reference {apiVersion, kind, name, uid, ...})
 * is the one controller: references with want's uid, or to an owner of
 * want's kind, API group and name with another uid, are replaced by one copy
 * of want (at the place of the first of them, else at the end); every other
 * reference is kept, its controller flag cleared. On KERR_OK *out OWNS the
 * new array and *changed says whether it differs from refs.
 */
enum kerr oref_compute(const cJSON *refs, const cJSON *want, cJSON **out, int *changed,
                       struct kerr_info *err);

/*
 * Repair one object (res, ns, name) so that its ownerReferences hold want
 * (BORROWED) as oref_compute says. cur (BORROWED, may be NULL: read with a
 * GET) is what the caller knows of it (metadata.resourceVersion and
 * ownerReferences suffice, as in a projected cache). Patches with the
 * resourceVersion test; on a failed precondition reads the object again
 * (st->conflicts) and retries, up to OREF_TRIES. An object that is gone is
 * not an error. st (optional) is added to.
 */
enum kerr oref_repair(struct k8s_client *k, const struct k8s_resource *res, const char *ns,
                      const char *name, const cJSON *cur, const cJSON *want, struct oref_stats *st,
                      struct kerr_info *err);

#endif
