#!/usr/bin/env bash
# Break glass used twice on member claims: alice's deletion of member claim 0, admitted by
# warden-webhook and held by another validating webhook, is voided when the claim is touched
# while held; the deletion of member claim 1 then takes the value; and the held deletion
# commits. On kube-sim with warden-webhook (registered as ctl_stage registers it,
# warden-controller not running) and a second validating webhook that holds the claim's DELETE.
# This round's item 1 ("two member claim deletions", "deletion with preconditions").
# docs/hibernation.md (Break glass once): a use on a deletion is void when "the same uid, another
# resourceVersion, no deletionTimestamp" show "that the recorded request never changed the
# object ... and no longer can (its resourceVersion is gone)"; docs/protection.md: "a copy ... of
# a member claim's deletion" is void "once the claim changes (any label or annotation written to
# it moves its resourceVersion)". kube-apiserver's DELETE commits on the resourceVersion it
# judged (etcd3 store conditionalDelete) and, when the object moved, judges it again.
#   C1. c1/etcd-main (3 members, writes acknowledged, no snapshot), break glass set, protection
#       disabled, member claims 0 and 1. alice deletes claim 0: warden-webhook records the use
#       and admits; the policy webhook holds it. The claim is annotated (its resourceVersion
#       moves). alice deletes claim 1 (admitted on the void record, as documented). The policy
#       webhook lets the first deletion go.
#   C0. control: c0, the same without the annotation: the second deletion is refused (the
#       recorded request "may still commit"), the first commits.
# Oracle: what kube-sim stores: C1 holds when not both claims are gone (or deleting).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
. "$(dirname "$0")/../lib/glass.sh"
glass_hold DELETE '{apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [persistentvolumeclaims], scope: Namespaced}' c0 c1
glass_stage c0 c1
wh_caught_up
for ns in c0 c1; do
    for i in 0 1; do
        printf '%s\n' "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}" | kc -n $ns create -f - >/dev/null ||
            ctl_fail "$ns: cannot create member claim $i"
    done
done
wh_caught_up
claim_gone() { # NS I: claim I is gone or deleting
    local ts
    ts=$(kc -n "$1" get pvc "etcd-main-etcd-main-$2" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}

for ns in c0 c1; do
    touch "$HOLD/armed-$ns"
    (WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-0 --wait=false >"$HOLD/first-$ns.out" 2>&1
     echo $? >"$HOLD/first-$ns.rc") &
    ksim_wait 20 test -e "$HOLD/held-$ns-0" || ctl_fail "$ns: the first deletion never reached the holding webhook: $(cat "$HOLD/first-$ns.out")"
done
glass_uses alice >/dev/null || ctl_fail "the held deletion left no break-glass record"
rv0=$(kc -n c1 get pvc etcd-main-etcd-main-0 -o jsonpath='{.metadata.resourceVersion}')
kc -n c1 annotate pvc etcd-main-etcd-main-0 touched=1 >/dev/null || ctl_fail "c1: cannot annotate claim 0"
[ "$(kc -n c1 get pvc etcd-main-etcd-main-0 -o jsonpath='{.metadata.resourceVersion}')" != "$rv0" ] ||
    ctl_fail "c1: the annotation did not move the claim's resourceVersion"
wh_caught_up
for ns in c0 c1; do
    rm -f "$HOLD/armed-$ns"
    out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-1 --wait=false 2>&1) && out="admitted: $out"
    echo "$ns: the second deletion (claim 1): $(tr '\n' ' ' <<<"$out" | head -c 300)"
done
for ns in c0 c1; do touch "$HOLD/release-$ns"; done
for ns in c0 c1; do
    ksim_wait 40 test -e "$HOLD/first-$ns.rc" || ctl_fail "$ns: the first deletion never returned"
    echo "$ns: the first deletion (claim 0): rc $(cat "$HOLD/first-$ns.rc"): $(tr '\n' ' ' <<<"$(cat "$HOLD/first-$ns.out")" | head -c 300)"
done
echo "holding webhook saw: $(cd "$HOLD" && for f in held-*; do echo -n "$f@rv$(cat "$f") "; done)"
sleep 1
claim_gone c0 1 && ctl_fail "control: C0: the second deletion admitted while the first use may still commit"
claim_gone c0 0 || ctl_fail "control: C0: the first deletion on the operator's break glass did not commit: $(cat "$HOLD/first-c0.out")"
echo "ok: control: C0: one use: claim 0 deleted, the deletion of claim 1 refused"
if claim_gone c1 0 && claim_gone c1 1; then
    echo "HOLE: C1: one break-glass value let two member claim deletions through on c1/etcd-main: claim 1 (on the first deletion's record, voided by an annotation) and claim 0 by the held deletion, committed without being judged again on the moved claim"
    echo "FAIL: 1 hole(s): a held claim deletion commits after its record was voided and its value used again"
    exit 1
fi
echo "held: C1: claim 0 $(claim_gone c1 0 && echo gone || echo kept), claim 1 $(claim_gone c1 1 && echo gone || echo kept)"
echo "attack15_glass_held_delete: ok"
