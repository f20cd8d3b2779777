#!/usr/bin/env bash
# Break glass and a forged scale-subresource review from someone with no Kubernetes identity,
# on kube-sim with warden-webhook (registered as ctl_stage registers it) and backup-double.
# Issue 30: "an attacker who reaches the webhook", subresources. docs/protection.md
# ("Authenticating the API server"): "A break glass use on an UPDATE or DELETE (a scale to 0,
# a member claim deleted) is recorded only when the object the API server stores is the
# review's oldObject (its uid and resourceVersion read back): a forged review of an object the
# forger cannot read records nothing." kubectl scale goes through statefulsets/scale: the
# review's objects are autoscaling/v1 Scale, not the StatefulSet.
#   S1. Etcd etcd-main (3 members, its bucket lost): the operator sets break glass; mallory
#       posts an UPDATE of statefulsets/scale 3 -> 0 with a made-up uid and resourceVersion
#       (and one without either), on both webhook paths. alice (protection disabled, the
#       operator's runbook) scales the StatefulSet to 0.
#   S0. control: the same in another namespace without mallory: alice's scale is admitted.
# Oracle: what kube-sim stores: the StatefulSet at 3 after alice's scale-down on the operator's
# value, and a break-glass use recorded naming mallory.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/glass.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
glass_stage s0 s1
wh_caught_up

forge() { # META (a JSON object): mallory's scale review of s1/etcd-main 3 -> 0
jq -n --argjson meta "$1" '{apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: "6f1c5a52-0000-4000-8000-00000000a13d",
        kind: {group: "autoscaling", version: "v1", kind: "Scale"},
        resource: {group: "apps", version: "v1", resource: "statefulsets"}, subResource: "scale",
        requestKind: {group: "autoscaling", version: "v1", kind: "Scale"},
        requestResource: {group: "apps", version: "v1", resource: "statefulsets"}, requestSubResource: "scale",
        name: "etcd-main", namespace: "s1", operation: "UPDATE",
        userInfo: {username: "mallory", groups: ["system:authenticated"]},
        object: {apiVersion: "autoscaling/v1", kind: "Scale", metadata: ({name: "etcd-main", namespace: "s1"} + $meta),
            spec: {replicas: 0}, status: {replicas: 3, selector: "app=etcd-statefulset"}},
        oldObject: {apiVersion: "autoscaling/v1", kind: "Scale", metadata: ({name: "etcd-main", namespace: "s1"} + $meta),
            spec: {replicas: 3}, status: {replicas: 3, selector: "app=etcd-statefulset"}},
        dryRun: false, options: {apiVersion: "meta.k8s.io/v1", kind: "UpdateOptions"}}}' >"$CTL_DIR/forged.json"
for path in etcdcomponents scaleguard; do
    answer=$(glass_post "$CTL_DIR/forged.json" "$path")
    echo "mallory's scale ($1) on /webhooks/$path answered: $(jq -c '.response | {allowed, status}' <<<"$answer" 2>/dev/null | head -c 200)"
done
}
forge '{"uid": "0b5f3e1c-1111-4222-8333-444455556666", "resourceVersion": "1"}'
forge '{}'
[ "$(glass_replicas s1)" = 3 ] || ctl_fail "S1: the StatefulSet moved without a request"
wh_caught_up

glass_control s0 S0
out1=$(WH_AS_NS=s1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
rec=$(glass_uses mallory)
if [ "$(glass_replicas s1)" != 0 ]; then
    echo "HOLE: S1: a forged scale-subresource review (mallory: no identity, nothing read, no request to the API server) used up the break glass of s1/etcd-main (recorded: $(head -c 200 <<<"$rec")); the operator's scale-down on it is refused: $(tr '\n' ' ' <<<"$out1" | head -c 300)"
    echo "FAIL: 1 hole(s): a forged scale review uses up break glass"
    exit 1
fi
echo "held: S1: alice's scale to 0 admitted although mallory's scale reviews were posted"
echo "attack13_glass_forged_scale: ok"
