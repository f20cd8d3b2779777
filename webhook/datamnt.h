/*
 * datamnt - where an Etcd's members keep their data, read from a StatefulSet's pod template
 * and from its running pods: the rules that tell a template which would move the members off
 * the data on their claims.
 *
 * etcd-druid mounts the member claim's volume (a volumeClaimTemplate) at /var/etcd/data in
 * containers etcd and backup-restore, and etcd keeps its data in /var/etcd/data/new.etcd
 * (--data-dir, etcd-druid's statefulset/builder.go and configmap/etcdconfig.go). The data is
 * out of reach when the claim's mount goes (pvcguard's unmount rule), when anything else is
 * mounted at or below it (an emptyDir at /var/etcd/data/new.etcd hides the claim's data), and
 * when a re-created StatefulSet adopts the running pods and rolls them onto a template that
 * mounts another claim template (new, empty claims) or no claim there.
 *
 * Paths are compared by their components (repeated and trailing slashes ignored); a path
 * with a "." or ".." component counts as at or below any path (not resolved: refused).
 *
 * Ownership: arguments BORROWED; results point into them. Thread safety: reentrant.
 */
#ifndef WEBHOOK_DATAMNT_H
#define WEBHOOK_DATAMNT_H

#include <stddef.h>

#include <cJSON.h>

/* The container named name in the pod template of StatefulSet sts, or NULL. */
/* The item of array arr whose "name" is name, or NULL. BORROWED from arr. */
const cJSON *datamnt_named(const cJSON *arr, const char *name);

const cJSON *datamnt_container(const cJSON *sts, const char *name);

/* True when name is the name of one of the volumeClaimTemplates of StatefulSet sts. */
int datamnt_claim_volume(const cJSON *sts, const char *name);

/* The same for templates, sts's spec.volumeClaimTemplates read once (BORROWED, NULL: none). */
int datamnt_claim_in(const cJSON *templates, const char *name);

/* True when container c has volume mount m as it is: path, volume and sub path. */
int datamnt_has_mount(const cJSON *c, const cJSON *m);

/* True when mount path p is base or below it (see above). */
int datamnt_below(const char *p, const char *base);

/* path is absolute and has no "." or ".." component. */
int datamnt_plain(const char *path);

/*
 * A mount the pod template of StatefulSet new adds (one old's container of that name does not
 * have) at or below the path where that container of old mounts a claim's volume, other than
 * that mount: NULL when none; else the added mount, *ctr its container's name and *claim old's
 * claim mount it covers.
 */
const cJSON *datamnt_covers(const cJSON *old, const cJSON *new, const char **ctr,
                            const cJSON **claim);

/*
 * Whether StatefulSet sts, created, would roll a running pod of its name off its data: each
 * pod of pods (a JSON array, NULL: none) named <sts>-<n> whose containers mount a claim
 * (a volume with persistentVolumeClaim) must find, in sts's pod template, the container of
 * the same name mounting the same volume at the same path and sub path, that volume a
 * volumeClaimTemplate whose member claim <template>-<sts>-<n> is the pod's claim, and
 * nothing else mounted at or below that path. 0 when every such pod does; 1 with why
 * (size bytes) naming the first pod that does not and what differs.
 */
int datamnt_adopt_problem(const cJSON *sts, const cJSON *pods, char *why, size_t size);

/*
 * Add to root (a projection of StatefulSet sts, lookup_sts_project) what the data-directory
 * rule of etcd's configuration reads (webhook/cfgguard.h): spec.volumeClaimTemplates as the
 * names of its templates ([{metadata: {name}}], non-string names as they are), and
 * spec.template.spec.containers as the container datamnt_container(sts, "etcd") finds, with
 * its name and of each volume mount name, mountPath, subPath and subPathExpr (whatever their
 * type); nothing of either when sts has none. 0, or -1 when out of memory (root then partial).
 */
int datamnt_project(cJSON *root, const cJSON *sts);

/* Where etcd-druid mounts a member's claim in containers etcd and backup-restore. */
#define DATAMNT_DRUID_PATH "/var/etcd/data"

/*
 * The members of StatefulSet sts whose pods are gone but whose claims stay, as pods to judge
 * with datamnt_adopt_problem: for each claim of pvcs (a JSON array of PVCs, NULL: none) named
 * "<T>-<sts>-<ordinal>" and not being deleted, with no pod of that ordinal in pods, a pod
 * <sts>-<ordinal> whose containers etcd and backup-restore mount volume T, that claim, at
 * DATAMNT_DRUID_PATH, as etcd-druid's StatefulSet mounts it. Those members start on the
 * claims when sts is created: its template must keep their data there too. A claim whose T is
 * no volumeClaimTemplate of sts (a renamed template: its member's data would be left behind)
 * is left out only when it provably is another StatefulSet's: its name splits as
 * "<T'>-<S'>-<ordinal>" with S' not sts too (Etcd main beside etcd-main's claims
 * etcd-main-etcd-main-<n>), it carries labels or owner references, and none says it is sts's
 * or Etcd etcd's (an owner reference to StatefulSet sts, Etcd etcd or Pod <sts>-<ordinal>;
 * label app.kubernetes.io/part-of or instance naming etcd; every label of sts's
 * spec.selector.matchLabels). etcd NULL: the Etcd is named as sts. A new array (OWNED by the
 * caller), NULL when out of memory.
 */
cJSON *datamnt_claim_pods(const cJSON *sts, const char *etcd, const cJSON *pvcs, const cJSON *pods);

#endif
