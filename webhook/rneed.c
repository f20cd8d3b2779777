/* rneed - what each decision reads of a review, as jscan schemas; see rneed.h. */
#include "webhook/rneed.h"

#include <stddef.h>

static const struct jscan_keep all = { JSCAN_ALL, NULL, NULL };

/*
 * uid and generation: the StatefulSet the final snapshot was checked against (hibguard);
 * uid and resourceVersion: the object a break glass is used on (glass);
 * ownerReferences: an Etcd's StatefulSet and a member PVC recognised by owner (protect);
 * creationTimestamp: a claim younger than the StatefulSet its name reads as (claimalias).
 */
static const struct jscan_member meta_components_m[] = {
    { "name", &all },
    { "namespace", &all },
    { "labels", &all },
    { "deletionTimestamp", &all },
    { "uid", &all },
    { "resourceVersion", &all },
    { "generation", &all },
    { "ownerReferences", &all },
    { "creationTimestamp", &all },
    { NULL, NULL },
};
static const struct jscan_keep meta_components = { JSCAN_MEMBERS, meta_components_m, NULL };
/* the containers' volume mounts and the claim templates' names: a member's data volume */
static const struct jscan_member mount_m[] = { { "name", &all },
                                               { "mountPath", &all },
                                               { "subPath", &all },
                                               { "subPathExpr", &all },
                                               { NULL, NULL } };
static const struct jscan_keep mount = { JSCAN_MEMBERS, mount_m, NULL };
static const struct jscan_keep mounts = { JSCAN_ELEMENTS, NULL, &mount };
/*
 * env, envFrom, command, args and the volumes: where the containers read etcd's configuration
 * (cfgvol: ETCD_CONF, etcdbrctl's and etcd's --config-file, ETCD_CONFIG_FILE)
 */
static const struct jscan_member ctr_m[] = { { "name", &all },    { "volumeMounts", &mounts },
                                             { "env", &all },     { "envFrom", &all },
                                             { "command", &all }, { "args", &all },
                                             { NULL, NULL } };
static const struct jscan_keep ctr = { JSCAN_MEMBERS, ctr_m, NULL };
static const struct jscan_keep ctrs = { JSCAN_ELEMENTS, NULL, &ctr };
static const struct jscan_member pod_m[] = { { "containers", &ctrs },
                                             { "volumes", &all },
                                             { NULL, NULL } };
static const struct jscan_keep pod = { JSCAN_MEMBERS, pod_m, NULL };
static const struct jscan_member tmpl_m[] = { { "spec", &pod }, { NULL, NULL } };
static const struct jscan_keep tmpl = { JSCAN_MEMBERS, tmpl_m, NULL };
static const struct jscan_member vctn_meta_m[] = { { "name", &all }, { NULL, NULL } };
static const struct jscan_keep vctn_meta = { JSCAN_MEMBERS, vctn_meta_m, NULL };
static const struct jscan_member vctn_m[] = { { "metadata", &vctn_meta }, { NULL, NULL } };
static const struct jscan_keep vctn = { JSCAN_MEMBERS, vctn_m, NULL };
static const struct jscan_keep vctns = { JSCAN_ELEMENTS, NULL, &vctn };
/*
 * spec.replicas, spec.ordinals: the scale-down guard of a StatefulSet or a Scale;
 * dataSource, dataSourceRef, volumeName: a member claim seeded with data (claimguard);
 * selector: the labels of the claims a StatefulSet makes (datamnt_claim_pods).
 */
static const struct jscan_member spec_components_m[] = { { "replicas", &all },
                                                         { "ordinals", &all },
                                                         { "selector", &all },
                                                         { "template", &tmpl },
                                                         { "volumeClaimTemplates", &vctns },
                                                         { "dataSource", &all },
                                                         { "dataSourceRef", &all },
                                                         { "volumeName", &all },
                                                         { NULL, NULL } };
static const struct jscan_keep spec_components = { JSCAN_MEMBERS, spec_components_m, NULL };
/* data, binaryData: etcd's configuration in ConfigMap <etcd>-config (cfgguard). */
static const struct jscan_member obj_components_m[] = { { "metadata", &meta_components },
                                                        { "spec", &spec_components },
                                                        { "data", &all },
                                                        { "binaryData", &all },
                                                        { NULL, NULL } };
static const struct jscan_keep obj_components = { JSCAN_MEMBERS, obj_components_m, NULL };

/* metadata whole: the restoring label removed alone, or with any other change (restore) */
static const struct jscan_member obj_etcd_m[] = { { "metadata", &all },
                                                  { "spec", &all },
                                                  { NULL, NULL } };
static const struct jscan_keep obj_etcd = { JSCAN_MEMBERS, obj_etcd_m, NULL };

static const struct jscan_member vct_meta_m[] = { { "ownerReferences", &all }, { NULL, NULL } };
static const struct jscan_keep vct_meta = { JSCAN_MEMBERS, vct_meta_m, NULL };
static const struct jscan_member vct_m[] = { { "metadata", &vct_meta }, { NULL, NULL } };
static const struct jscan_keep vct = { JSCAN_MEMBERS, vct_m, NULL };
static const struct jscan_keep vcts = { JSCAN_ELEMENTS, NULL, &vct };
static const struct jscan_member spec_mutate_m[] = { { "volumeClaimTemplates", &vcts },
                                                     { NULL, NULL } };
static const struct jscan_keep spec_mutate = { JSCAN_MEMBERS, spec_mutate_m, NULL };
static const struct jscan_member obj_mutate_m[] = { { "metadata", &all },
                                                    { "spec", &spec_mutate },
                                                    { NULL, NULL } };
static const struct jscan_keep obj_mutate = { JSCAN_MEMBERS, obj_mutate_m, NULL };
/* oldObject's metadata: an Etcd UPDATE's restoring label removed alone (restore) */
static const struct jscan_member old_mutate_m[] = { { "metadata", &all }, { NULL, NULL } };
static const struct jscan_keep old_mutate = { JSCAN_MEMBERS, old_mutate_m, NULL };

static const struct jscan_member user_m[] = { { "username", &all }, { NULL, NULL } };
static const struct jscan_keep user = { JSCAN_MEMBERS, user_m, NULL };
/* options of a DELETE: an orphaning one is not guarded (webhook/protect.h). */
static const struct jscan_member options_m[] = { { "propagationPolicy", &all },
                                                 { "orphanDependents", &all },
                                                 { NULL, NULL } };
static const struct jscan_keep options = { JSCAN_MEMBERS, options_m, NULL };

#define REQUEST_MEMBERS(object, old)                                                             \
    { "uid", &all }, { "kind", &all }, { "resource", &all }, { "subResource", &all },            \
        { "name", &all }, { "namespace", &all }, { "operation", &all }, { "userInfo", &user },   \
        { "dryRun", &all }, { "options", &options }, { "object", object }, { "oldObject", old }, \
    {                                                                                            \
        NULL, NULL                                                                               \
    }

static const struct jscan_member req_components_m[] = { REQUEST_MEMBERS(&obj_components,
                                                                        &obj_components) };
static const struct jscan_member req_etcd_m[] = { REQUEST_MEMBERS(&obj_etcd, &obj_etcd) };
static const struct jscan_member req_mutate_m[] = { REQUEST_MEMBERS(&obj_mutate, &old_mutate) };
static const struct jscan_keep req_components = { JSCAN_MEMBERS, req_components_m, NULL };
static const struct jscan_keep req_etcd = { JSCAN_MEMBERS, req_etcd_m, NULL };
static const struct jscan_keep req_mutate = { JSCAN_MEMBERS, req_mutate_m, NULL };
static const struct jscan_member req_envelope_m[] = { REQUEST_MEMBERS(NULL, NULL) };
/* the objects' name, namespace and labels: whether a review too large to decide is the guard's */
static const struct jscan_member meta_labels_m[] = {
    { "name", &all }, { "namespace", &all }, { "labels", &all }, { NULL, NULL }
};
static const struct jscan_keep meta_labels = { JSCAN_MEMBERS, meta_labels_m, NULL };
static const struct jscan_member obj_labels_m[] = { { "metadata", &meta_labels }, { NULL, NULL } };
static const struct jscan_keep obj_labels = { JSCAN_MEMBERS, obj_labels_m, NULL };
static const struct jscan_member req_labels_m[] = { REQUEST_MEMBERS(&obj_labels, &obj_labels) };
static const struct jscan_keep req_envelope = { JSCAN_MEMBERS, req_envelope_m, NULL };
static const struct jscan_keep req_labels = { JSCAN_MEMBERS, req_labels_m, NULL };

#define ROOT_MEMBERS(request)                                         \
    { "apiVersion", &all }, { "kind", &all }, { "request", request }, \
    {                                                                 \
        NULL, NULL                                                    \
    }

static const struct jscan_member root_components_m[] = { ROOT_MEMBERS(&req_components) };
static const struct jscan_member root_etcd_m[] = { ROOT_MEMBERS(&req_etcd) };
static const struct jscan_member root_mutate_m[] = { ROOT_MEMBERS(&req_mutate) };
static const struct jscan_keep root_components = { JSCAN_MEMBERS, root_components_m, NULL };
static const struct jscan_keep root_etcd = { JSCAN_MEMBERS, root_etcd_m, NULL };
static const struct jscan_keep root_mutate = { JSCAN_MEMBERS, root_mutate_m, NULL };
static const struct jscan_member root_envelope_m[] = { ROOT_MEMBERS(&req_envelope) };
static const struct jscan_keep root_envelope = { JSCAN_MEMBERS, root_envelope_m, NULL };
static const struct jscan_member root_labels_m[] = { ROOT_MEMBERS(&req_labels) };
static const struct jscan_keep root_labels = { JSCAN_MEMBERS, root_labels_m, NULL };

const struct jscan_keep *rneed_components(void)
{
    return &root_components;
}

const struct jscan_keep *rneed_etcd(void)
{
    return &root_etcd;
}

const struct jscan_keep *rneed_mutate(void)
{
    return &root_mutate;
}

const struct jscan_keep *rneed_envelope(void)
{
    return &root_envelope;
}

const struct jscan_keep *rneed_labels(void)
{
    return &root_labels;
}
