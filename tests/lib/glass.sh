# shellcheck shell=bash
# Helpers of the e2e scripts that attack break glass (docs/hibernation.md, "Break glass once").
# Source after controller.sh, after ctl_stage:
#
#   glass_uses WHO        # the break-glass records of warden-webhook's Leases that name WHO
#                         # (printed; status 1 when there is none)
#   glass_stage NS...     # in each NS: Etcd etcd-main with its double (5 writes acknowledged,
#                         # no snapshot), break glass set by the operator ("<now + 2h> bucket
#                         # lost"), component protection disabled by alice (the runbook)
#   glass_replicas NS     # spec.replicas of StatefulSet NS/etcd-main as stored
#   glass_up NS [TAG]     # the operator scales NS/etcd-main to 3; returns once the
#                         # StatefulSet controller's status says so (a status write between
#                         # the API server's review and warden-webhook's read of the
#                         # StatefulSet fails a scale-down on break glass with 500)
#   glass_sts_review NS USER UID OLD
#                         # (printed) an AdmissionReview of USER's UPDATE of StatefulSet
#                         # NS/etcd-main from OLD (its JSON) to 0 replicas, request uid UID
#   glass_post FILE PATH  # (printed) warden-webhook's answer to the AdmissionReview in FILE,
#                         # posted to /webhooks/PATH as anyone who reaches its port
#   glass_control NS TAG  # the control: alice scales NS/etcd-main to 0 on the operator's
#                         # break glass; the test fails (naming TAG) when it is refused
#   glass_hold OP RULE NS...
#                         # a second validating webhook (any policy webhook: kube-apiserver
#                         # stores an object only once every validating webhook has answered),
#                         # registered as zz-policy for RULE (a rules entry in flow style); in
#                         # HOLD=$CTL_DIR/hold, while armed-NS exists it holds each OP request
#                         # in NS, writes held-NS-N (the oldObject's resourceVersion) and
#                         # answers once release-NS exists (at most 25 s); HOLD_PID is its pid,
#                         # released and reaped on exit for each NS (holdhook.sh's holdhook_serve)

# shellcheck source=holdhook.sh
. "$(dirname "${BASH_SOURCE[0]}")/holdhook.sh"

glass_uses() {
    kc get leases -A -o json | jq -r '.items[] | select(.metadata.name | startswith("etcd-warden-glass-"))
        | .metadata.annotations["etcd-warden.io/break-glass-used"] // empty' | grep -F "$1"
}

glass_stage() {
    local expiry ns
    expiry=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)
    for ns in "$@"; do
        druid_etcd "$ns" etcd-main
        druid_double_for "$ns" etcd-main
        curl -sf -X POST "$DRUID_DOUBLE_URL/admin/write?n=5" >/dev/null || ctl_fail "$ns: the double takes no writes"
        kc -n "$ns" annotate etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$expiry bucket lost" >/dev/null ||
            ctl_fail "the operator cannot set break glass on $ns"
        WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
            ctl_fail "alice cannot disable protection of $ns"
    done
}

glass_replicas() {
    kc -n "$1" get statefulset etcd-main -o jsonpath='{.spec.replicas}'
}

glass_up() {
    kc -n "$1" scale statefulset etcd-main --replicas=3 >/dev/null ||
        ctl_fail "${2:+$2: }the operator cannot scale $1/etcd-main up"
    ksim_wait 20 _glass_settled "$1" ||
        ctl_fail "${2:+$2: }the status of $1/etcd-main did not catch up with the scale-up"
}
_glass_settled() {
    kc -n "$1" get statefulset etcd-main -o jsonpath='{.metadata.generation} {.status.observedGeneration} {.status.readyReplicas} {.status.availableReplicas}' |
        awk '$1 == $2 && $3 == 3 && $4 == 3 { ok = 1 } END { exit !ok }'
}

glass_sts_review() {
    jq -n --arg ns "$1" --arg user "$2" --arg uid "$3" --argjson old "$4" '{apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: $uid,
        kind: {group: "apps", version: "v1", kind: "StatefulSet"},
        resource: {group: "apps", version: "v1", resource: "statefulsets"},
        requestKind: {group: "apps", version: "v1", kind: "StatefulSet"},
        requestResource: {group: "apps", version: "v1", resource: "statefulsets"},
        name: "etcd-main", namespace: $ns, operation: "UPDATE",
        userInfo: {username: $user, groups: ["system:authenticated"]},
        object: ($old | .spec.replicas = 0), oldObject: $old, dryRun: false,
        options: {apiVersion: "meta.k8s.io/v1", kind: "UpdateOptions"}}}'
}

glass_post() {
    curl -sk --max-time 10 -H 'Content-Type: application/json' --data-binary @"$1" \
        "https://127.0.0.1:$WH_PORT/webhooks/$2"
}

glass_control() {
    local out
    out=$(WH_AS_NS=$1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
    [ "$(glass_replicas "$1")" = 0 ] ||
        ctl_fail "control: $2: alice's scale to 0 on the operator's break glass refused: $out"
    echo "ok: control: $2: alice's scale to 0 admitted on the operator's break glass"
}

glass_hold() {
    local op=$1 rule=$2 ns release=""
    shift 2
    HOLD=$CTL_DIR/hold
    for ns in "$@"; do release="$release $HOLD/release-$ns"; done
    # shellcheck disable=SC2086 # one file a namespace
    holdhook_serve "$HOLD" "$(wh_free_port)" "$op" "" 25 "$rule" $release
    HOLD_PID=$HOLDHOOK_PID
}
