#!/usr/bin/env bash
# Break glass used up by a forged CREATE from someone with no Kubernetes identity, on kube-sim
# with warden-webhook (registered as ctl_stage registers it) and backup-double. Issue 30: "an
# attacker who reaches the webhook". docs/protection.md ("Authenticating the API server"): "a
# forged review of an object the forger cannot read records nothing" (for an UPDATE or
# DELETE); "a break glass use on a CREATE ... records that value as used for an object of that
# name: the request creating that same name is admitted on it, any other is refused". A CREATE
# of an Etcd's StatefulSet at 0 replicas needs break glass while pods of its name run, so
# mallory, who only reaches the webhook's port and knows the names (etcd-main, the shoot's
# namespace), posts one for a StatefulSet that exists (the API server would never send such a
# CREATE: the name is taken) and the operator's scale-down on the value is refused. She can
# post it again for every new value, without reading anything: break glass never works.
#   M1. Etcd etcd-main (3 members, writes acknowledged, its bucket lost): the operator sets
#       break glass; mallory posts a CREATE of StatefulSet etcd-main at 0 replicas (made up
#       from etcd-druid's manifest, no uid, no resourceVersion). alice (protection disabled,
#       the operator's runbook) scales the StatefulSet to 0.
#   M0. control: the same in another namespace without mallory: alice's scale is admitted.
# Oracle: what kube-sim stores: StatefulSet etcd-main stored all along (the CREATE could not have
# happened), at 3 after alice's scale-down on the operator's value, and a break-glass use
# recorded naming mallory.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/glass.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
glass_stage m0 m1
wh_caught_up

# mallory's StatefulSet: etcd-druid's manifest as anyone can write it (here taken from another
# namespace's and renamed: nothing of m1's is read), at 0 replicas, no uid, no resourceVersion
obj=$(kc -n m0 get statefulset etcd-main -o json | jq '.metadata.namespace = "m1" | .spec.replicas = 0
    | del(.status, .metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp,
          .metadata.managedFields, .metadata.generation, .metadata.ownerReferences)')
jq -n --argjson obj "$obj" '{apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: "6f1c5a52-0000-4000-8000-00000000a13c",
        kind: {group: "apps", version: "v1", kind: "StatefulSet"},
        resource: {group: "apps", version: "v1", resource: "statefulsets"},
        requestKind: {group: "apps", version: "v1", kind: "StatefulSet"},
        requestResource: {group: "apps", version: "v1", resource: "statefulsets"},
        name: "etcd-main", namespace: "m1", operation: "CREATE",
        userInfo: {username: "mallory", groups: ["system:authenticated"]},
        object: $obj, oldObject: null, dryRun: false,
        options: {apiVersion: "meta.k8s.io/v1", kind: "CreateOptions"}}}' >"$CTL_DIR/forged.json"
for path in etcdcomponents scaleguard; do
    answer=$(glass_post "$CTL_DIR/forged.json" "$path")
    echo "mallory's CREATE on /webhooks/$path answered: $(jq -c '.response | {allowed, status}' <<<"$answer" 2>/dev/null | head -c 200)"
done
[ "$(glass_replicas m1)" = 3 ] || ctl_fail "M1: the StatefulSet moved without a request"
wh_caught_up

glass_control m0 M0
out1=$(WH_AS_NS=m1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
rec=$(glass_uses mallory)
if [ "$(glass_replicas m1)" != 0 ]; then
    echo "HOLE: M1: a forged CREATE of a StatefulSet that exists (mallory: no identity, nothing read, no request to the API server) used up the break glass of m1/etcd-main (recorded: $(head -c 200 <<<"$rec")); the operator's scale-down on it is refused: $(tr '\n' ' ' <<<"$out1" | head -c 300)"
    echo "FAIL: 1 hole(s): a forged CREATE uses up break glass"
    exit 1
fi
echo "held: M1: alice's scale to 0 admitted although mallory's CREATE was posted"
echo "attack13_glass_forged_create: ok"
