#!/usr/bin/env bash
# A record of break glass outlives the break glass: a reader's copy of a scale-down posted to
# the webhook while break glass is set, then the operator takes the break glass back. On
# kube-sim with warden-webhook (registered as ctl_stage registers it) and backup-double.
# Issue 30. docs/protection.md ("Authenticating the API server"): a forged review by someone
# who can read the object "is recorded as that object at that resourceVersion, and the real
# request on it (the same object at the same resourceVersion) is admitted on that record";
# docs/hibernation.md: break glass allows a scale-down "until the expiry"; without it a scale to
# 0 needs a final snapshot taken for this hibernation. Is the record honoured once the
# annotation it was recorded for is gone?
#   U1. Etcd etcd-main (3 members, writes acknowledged): the operator sets break glass; trudy
#       (a viewer who reaches the webhook port) posts a copy of a scale 3 -> 0 of the
#       StatefulSet as stored; the operator removes break glass (the bucket is back). alice
#       (protection disabled) scales the StatefulSet to 0.
#   U0. control: the same without trudy: alice's scale to 0 is refused (no snapshot).
# Oracle: what kube-sim stores (the StatefulSet at 0, no break glass on the Etcd) and what
# backup-double records (writes acknowledged after the last snapshot: none was taken).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/glass.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
glass_stage u0 u1
wh_caught_up

# trudy reads the StatefulSet as stored and posts the scale to 0 she expects alice to make
old=$(kc -n u1 get statefulset etcd-main -o json)
glass_sts_review u1 trudy 6f1c5a52-0000-4000-8000-00000000a13a "$old" >"$CTL_DIR/copy.json"
answer=$(glass_post "$CTL_DIR/copy.json" etcdcomponents)
echo "trudy's copy answered: $(jq -c '.response | {allowed, status}' <<<"$answer" 2>/dev/null | head -c 200)"
[ "$(glass_replicas u1)" = 3 ] || ctl_fail "U1: the StatefulSet moved without a request"

last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
# the operator takes break glass back
for ns in u0 u1; do
    kc -n $ns annotate etcd etcd-main etcd-warden.io/allow-scale-down-without-snapshot- >/dev/null ||
        ctl_fail "$ns: the operator cannot remove break glass"
done
wh_caught_up
out0=$(WH_AS_NS=u0 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
[ "$(glass_replicas u0)" = 3 ] || ctl_fail "control: U0: alice's scale to 0 without break glass or snapshot admitted: $out0"
echo "ok: control: U0: alice's scale to 0 without break glass is refused: $(tr '\n' ' ' <<<"$out0" | head -c 160)"
out1=$(WH_AS_NS=u1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
lw=$(last_write "$DRUID_DOUBLE_URL")
sr=$(stored_rev "$DRUID_DOUBLE_URL")
if [ "$(glass_replicas u1)" = 0 ]; then
    echo "HOLE: U1: StatefulSet u1/etcd-main scaled to 0 with no break glass on its Etcd and writes up to revision $lw acknowledged after the last snapshot (${sr:-none}), admitted on the record of trudy's copy: $(tr '\n' ' ' <<<"$out1" | head -c 300)"
    echo "FAIL: 1 hole(s): a break glass record outlives the annotation"
    exit 1
fi
echo "held: U1: alice's scale to 0 refused once break glass is gone: $(tr '\n' ' ' <<<"$out1" | head -c 160)"
echo "attack13_glass_record_removed: ok"
