#!/usr/bin/env bash
# One break glass value, two re-creations of an Etcd's StatefulSet at 0 replicas, on kube-sim
# with warden-webhook (registered as ctl_stage registers it) and backup-double. Issue 30.
# docs/hibernation.md ("Break glass once"): "allows one scale-down: one request that only it
# lets through (... a StatefulSet created ... )"; "a value used once stays used when it is set
# again after another one was used (a re-applied manifest, a runbook run twice)"; "A later
# request on the same value is refused". docs/protection.md: "a break glass use on a CREATE
# ... records that value as used for an object of that name: the request creating that same
# name is admitted on it". A CREATE of the Etcd's StatefulSet at 0 replicas while pods of its
# name run is a path to zero (docs/hibernation.md: "needs the same snapshot when pods of its
# name run"), and break glass lets one through. Its use is recorded for the name only, so the
# runbook run a second time (the next day's incident, the same annotation still on the Etcd:
# nothing removes it while warden-controller is down) is "the request creating that same name"
# and is admitted on the old record: the writes acknowledged since the first run are in no
# snapshot when the members are deleted.
#   R1. Etcd etcd-main (3 members, writes acknowledged), the operator sets break glass V; alice
#       (protection disabled) orphan-deletes StatefulSet etcd-main and creates it at 0
#       replicas: admitted on V (the one use). The operator scales it back to 3 (members
#       running again), 5 more writes are acknowledged; alice runs the runbook again.
#   R2. the same first run, then alice scales the StatefulSet to 0 on the same value.
#   R3. the same first run, then alice deletes the StatefulSet with its pods on the same value.
#   R0. control: the first run alone is admitted (a value allows one).
# R2 and R3 are refused ("its value was used"); R1 is admitted on the first run's record.
# Oracle: what kube-sim stores (StatefulSet etcd-main at 0 replicas, created after the pods of
# its name ran again) and what backup-double records (writes acknowledged after its last
# snapshot: no snapshot was ever taken).
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
for ns in r0 r1 r2 r3; do
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

[ "$(pods_of r0)" = 3 ] && [ "$(pods_of r1)" = 3 ] || ctl_fail "the members of r0/r1 do not run"
out0=$(recreate0 r0)
[ "$(replicas r0)" = 0 ] || ctl_fail "control: R0: the re-creation at 0 on the operator's break glass refused: $out0"
echo "ok: control: R0: StatefulSet etcd-main re-created at 0 replicas on the operator's break glass (one use)"

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
holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
for ns in r1 r2 r3; do first_use $ns; done

# R1: the runbook again, the members running
[ "$(pods_of r1)" = 3 ] || ctl_fail "R1: the members of r1 do not run"
out=$(recreate0 r1)
if [ "$(replicas r1)" = 0 ]; then
    hole "R1: one break glass value let StatefulSet r1/etcd-main be re-created at 0 replicas twice; the second time its members ran and writes up to revision $lw were acknowledged after the last snapshot (none): $(tr '\n' ' ' <<<"$out" | head -c 300)"
else
    grep -q "was used" <<<"$out" || ctl_fail "R1: the second run refused for another reason: $out"
    echo "held: R1: the second run of the runbook on the same value is refused"
fi
# R2: after the CREATE's use, a plain scale to 0 on the same value
out=$(WH_AS_NS=r2 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
if [ "$(replicas r2)" = 0 ]; then
    hole "R2: after its use on a CREATE, the same break glass value let r2/etcd-main be scaled 3 -> 0 with writes acknowledged after the last snapshot: $(tr '\n' ' ' <<<"$out" | head -c 300)"
else
    grep -q "was used" <<<"$out" || ctl_fail "R2: the scale to 0 refused for another reason: $out"
    echo "held: R2: a scale to 0 on the value a CREATE used is refused"
fi
# R3: after the CREATE's use, a DELETE of the StatefulSet with its pods on the same value
out=$(WH_AS_NS=r3 wh_as alice delete statefulset etcd-main --wait=false 2>&1)
if ! kc -n r3 get statefulset etcd-main >/dev/null 2>&1; then
    hole "R3: after its use on a CREATE, the same break glass value let r3/etcd-main be deleted with its pods, writes acknowledged after the last snapshot: $(tr '\n' ' ' <<<"$out" | head -c 300)"
else
    grep -q "was used" <<<"$out" || ctl_fail "R3: the deletion refused for another reason: $out"
    echo "held: R3: a DELETE with the pods on the value a CREATE used is refused"
fi
if [ "$holes" -gt 0 ]; then
    echo "FAIL: $holes hole(s): a break glass use on a StatefulSet CREATE lets further paths to zero through"
    exit 1
fi
echo "attack13_glass_recreate: ok"
