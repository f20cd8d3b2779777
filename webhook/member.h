/*
 * member - recognition: whether the object of a review is a component of an
 * Etcd, and which one. A component by its kind and etcd-druid's labels
 * (managed-by, part-of); a statefulsets/scale request by its StatefulSet; a
 * PVC by the one StatefulSet whose labels it matches, else by its
 * StatefulSet owner or by name ("<volumeClaimTemplate>-<StatefulSet>-<n>",
 * unless proven another application's claim: webhook/claimalias.h), so a
 * relabel does not unprotect it; a StatefulSet without the labels by an
 * Etcd owner or an Etcd of its name (member_sts_by_name).
 *
 * An UPDATE of a component is recognised on the OLD object when that one is
 * a component of an Etcd (managed, with a part-of label): a request cannot
 * rewrite the labels that decide whether it is checked; the label it
 * changes is recorded. A PVC UPDATE is judged at all only when it changes
 * what makes it a member's (member_pvc_judged), and then on the old object.
 *
 * Thread safety: every function is reentrant (the lookups are called as
 * struct lookup allows).
 */
#ifndef WEBHOOK_MEMBER_H
#define WEBHOOK_MEMBER_H

#include <stdint.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "webhook/lookup.h"
#include "webhook/review.h"

/*
 * The partial object metadata the checks read. Strings are BORROWED from the
 * review (or point into sts, the storage of a parent StatefulSet's view): valid
 * while both live.
 */
struct member_meta {
    const char *ns, *name;
    int managed;
    const char *part_of; /* NULL when the label is absent */
    int deleting;
    struct lookup_sts sts; /* storage when the metadata is a parent StatefulSet's */
    /*
     * An UPDATE of a component: the label (LOOKUP_LABEL_MANAGED_BY or
     * LOOKUP_LABEL_PART_OF) whose value the request changes while the old
     * object is a component of an Etcd, with its old and new values (NULL:
     * absent); label is NULL when there is none.
     */
    const char *label, *label_old, *label_new;
    /*
     * A PVC of a StatefulSet (sts filled): live is 1 when its name is
     * "<volumeClaimTemplate>-<StatefulSet>-<ordinal>" with the ordinal inside
     * the StatefulSet's ordinals (or those are not valid numbers), the claim of
     * a running member; ordinal is that ordinal (-1 when the name has none).
     */
    int live;
    long ordinal;
    const char *pvc; /* the PVC's own name (NULL: not a PVC) */
};

/* What member_decode made of a review. */
enum member_decoded {
    MEMBER_META,        /* the metadata is in *m */
    MEMBER_UNSUPPORTED, /* not a kind recognised here (or a PVC of no StatefulSet) */
    MEMBER_ANSWERED     /* resp holds the answer (400 undecodable, 500 failed lookup) */
};

/* A kind etcd-druid creates for an Etcd. */
struct member_component {
    const char *group, *kind;
    int runtime; /* not created when runtime component creation is disabled */
};

/* True when the review's kind is group/kind. */
int member_is_kind(const struct review_req *req, const char *group, const char *kind);

/*
 * spec.replicas of obj, the object of a StatefulSet, an Etcd or the Scale of
 * either (scale nonzero), in *r (0 first; any integer, the caller judges the
 * range). KERR_OK when it is an integer, or when obj is a Scale object
 * without the field (0: the field is omitted when empty); KERR_NOTFOUND when
 * it is absent otherwise (obj NULL, or not a Scale's); KERR_INVAL when it is
 * not an integer.
 */
enum kerr member_replicas(const cJSON *obj, int scale, int64_t *r);

/*
 * spec.replicas of a StatefulSet (scale 0) or of its Scale as a count:
 * member_replicas, with absent read as the StatefulSet's default, 1, or a
 * Scale's 0 (obj NULL included); -1 when it is not an integer in [0, max].
 */
long member_replicas_count(const cJSON *obj, int scale, long max);

/* The component kind of the review, or NULL when it is none. BORROWED (static). */
const struct member_component *member_component_of(const struct review_req *req);

/* Why raw cannot be decoded as an object, in the words of Go's decoder; NULL when it can. */
const char *member_raw_problem(const cJSON *raw);

/*
 * Decode the metadata of req into *m (zeroed first): a component's (UPDATE:
 * recognised on the old object), a scale subresource's StatefulSet, a PVC's
 * StatefulSet. MEMBER_ANSWERED sets resp and *rc (review_errored's result).
 */
enum member_decoded member_decode(const struct lookup *lk, const struct review_req *req,
                                  struct member_meta *m, struct review_resp *resp, enum kerr *rc);

/*
 * True when a PVC UPDATE changes what makes the PVC a member's (the managed-by
 * or part-of label, its owner references) or cannot be decoded: then it is
 * judged on the old object, as its DELETE would be.
 */
int member_pvc_judged(const struct review_req *req);

/*
 * A StatefulSet without etcd-druid's labels is still an Etcd's when an Etcd
 * owns it or one of its name lives in its namespace: m (its name set) then
 * names that Etcd (managed, part-of), and the Etcd lookup that follows
 * decides (not found: not an Etcd's). Strings BORROWED from req.
 */
void member_sts_by_name(const struct review_req *req, struct member_meta *m);

#endif
