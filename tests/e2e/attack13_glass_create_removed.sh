#!/usr/bin/env bash
# A break glass use on a StatefulSet CREATE outlives the break glass, on kube-sim with
# warden-webhook (registered as ctl_stage registers it) and backup-double. Issue 30.
# docs/protection.md: "a break glass use on a CREATE ... records that value as used for an
# object of that name: the request creating that same name is admitted on it";
# docs/hibernation.md: without break glass a CREATE of an Etcd's StatefulSet at 0 replicas
# while pods of its name run "needs the same snapshot". Is the CREATE record honoured once
# the annotation it was recorded for is gone?
#   E1. Etcd etcd-main (3 members, writes acknowledged), break glass V: alice (protection
#       disabled) orphan-deletes StatefulSet etcd-main and creates it at 0 replicas (the use).
#       The operator scales it back to 3 (members running again), 5 more writes are
#       acknowledged, and removes break glass (the incident is over). alice runs the
#       runbook again.
#   E0. control: the same without the first run: alice's re-creation at 0 with no break glass
#       is refused (no snapshot).
# Oracle: what kube-sim stores (StatefulSet etcd-main at 0 replicas created over running
# members, no break glass on the Etcd) and what backup-double records (writes acknowledged
# after its last snapshot: none was taken).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
replicas() { kc -n "$1" get statefulset etcd-main -o jsonpath='{.spec.replicas}' 2>/dev/null; }
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
expiry=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)
declare -A url
for ns in r0 r1; do
    druid_etcd $ns etcd-main
    druid_double_for $ns etcd-main
    url[$ns]=$DRUID_DOUBLE_URL
    curl -sf -X POST "$DRUID_DOUBLE_URL/admin/write?n=5" >/dev/null || ctl_fail "$ns: the double takes no writes"
    kc -n $ns annotate etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$expiry volume broken" >/dev/null ||
        ctl_fail "the operator cannot set break glass on $ns"
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done
wh_caught_up

recreate0() { # NS: the runbook: orphan-delete StatefulSet etcd-main, create it at 0 replicas
    local ns=$1 out
    kc -n "$ns" get statefulset etcd-main -o json | jq '.spec.replicas = 0 | del(.status)
        | del(.metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp,
              .metadata.managedFields, .metadata.generation)' >"$CTL_DIR/$ns-zero.json"
    out=$(WH_AS_NS=$ns wh_as alice delete statefulset etcd-main --cascade=orphan --wait=false 2>&1) ||
        ctl_fail "$ns: alice's orphaning delete refused: $out"
    ksim_wait 10 ksim_gone -n "$ns" statefulset etcd-main || ctl_fail "$ns: StatefulSet etcd-main not gone"
    WH_AS_NS=$ns wh_as alice create -f "$CTL_DIR/$ns-zero.json" 2>&1
}
pods_of() { kc -n "$1" get pods -o name | grep -c '^pod/etcd-main-[0-9]*$'; }

first_use() { # NS: the runbook's first run on V, then the members back with new writes
    local ns=$1 out
    out=$(recreate0 "$ns")
    [ "$(replicas "$ns")" = 0 ] || ctl_fail "$ns: the first re-creation at 0 on break glass refused: $out"
    # the operator brings the members back: the StatefulSet to 3, its pods running again (the
    # StatefulSet controller deleted the adopted ones at 0 and creates them anew)
    kc -n "$ns" delete pods etcd-main-0 etcd-main-1 etcd-main-2 --ignore-not-found --wait=true >/dev/null ||
        ctl_fail "$ns: cannot delete the old pods"
    kc -n "$ns" scale statefulset etcd-main --replicas=3 >/dev/null || ctl_fail "$ns: the operator cannot scale etcd-main up"
    druid_pods "$ns" etcd-main 3
    [ "$(pods_of "$ns")" = 3 ] || ctl_fail "$ns: the members do not run again"
    curl -sf -X POST "${url[$ns]}/admin/write?n=5" >/dev/null || ctl_fail "$ns: the double takes no writes"
    lw=$(last_write "${url[$ns]}")
    sr=$(stored_rev "${url[$ns]}")
    [ -n "$lw" ] && [ "${sr:-0}" -lt "$lw" ] || ctl_fail "$ns: the oracle cannot judge (last write $lw, snapshot ${sr:-none})"
    local v
    v=$(kc -n "$ns" get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/allow-scale-down-without-snapshot}')
    [ "$v" = "$expiry volume broken" ] || ctl_fail "$ns: the break glass value changed: $v"
    echo "ok: $ns: runbook run once on the break glass; members running again, writes up to revision $lw acknowledged, last snapshot ${sr:-none}"
}
first_use r1
for ns in r0 r1; do
    kc -n $ns annotate etcd etcd-main etcd-warden.io/allow-scale-down-without-snapshot- >/dev/null ||
        ctl_fail "$ns: the operator cannot remove break glass"
done
wh_caught_up
[ "$(pods_of r0)" = 3 ] && [ "$(pods_of r1)" = 3 ] || ctl_fail "the members of r0/r1 do not run"
out=$(recreate0 r0)
[ "$(replicas r0)" = 0 ] && ctl_fail "control: E0: a re-creation at 0 over running members without break glass admitted: $out"
echo "ok: control: E0: the re-creation at 0 without break glass is refused: $(tr '\n' ' ' <<<"$out" | head -c 160)"
out=$(recreate0 r1)
if [ "$(replicas r1)" = 0 ]; then
    echo "HOLE: E1: StatefulSet r1/etcd-main re-created at 0 replicas over its running members with no break glass on the Etcd, writes up to revision $lw acknowledged after the last snapshot (${sr:-none}), admitted on the record of an earlier CREATE: $(tr '\n' ' ' <<<"$out" | head -c 300)"
    echo "FAIL: 1 hole(s): a break glass record on a CREATE outlives the annotation"
    exit 1
fi
echo "held: E1: the re-creation at 0 refused once break glass is gone: $(tr '\n' ' ' <<<"$out" | head -c 160)"
echo "attack13_glass_create_removed: ok"
