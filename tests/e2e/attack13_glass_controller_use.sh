#!/usr/bin/env bash
# Break glass used by warden-controller's own scale-down, then set again, on kube-sim with
# warden-webhook (registered as ctl_stage registers it), warden-controller and backup-double.
# Issue 30. docs/hibernation.md ("Break glass once"): "Every value used is remembered for 25
# hours ..., so a value used once stays used when it is set again after another one was used
# (a re-applied manifest, a runbook run twice)"; docs/toggles.md: break glass "allows one
# scale-down". With break glass set while the final snapshot fails, warden-controller scales
# the StatefulSet to 0 itself (docs/toggles.md: "the controller scales down without one once
# an attempt has failed") and removes the annotation (BreakGlassUsed). Is that use recorded,
# so that the same value applied again (the operator's manifest re-applied) allows nothing?
#   C1. Etcd etcd-main (3 members, writes acknowledged), its sidecar answers 500 to every
#       snapshot. hibernate=true; the attempts fail; the operator sets break glass V:
#       warden-controller scales to 0 (use 1) and removes V. The Etcd is woken
#       (hibernate removed, 3 replicas again), 5 more writes acknowledged. The operator's
#       manifest is re-applied (V again); alice (protection disabled) scales the
#       StatefulSet to 0.
#   C0. control: the hibernation on V itself goes through (Hibernated, StatefulSet at 0); and
#       when the re-applied V is refused, a new value allows alice's scale-down.
# Oracle: what kube-sim stores (StatefulSet at 0 replicas) and what backup-double records
# (writes acknowledged after the last successful snapshot: none was ever taken).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
replicas() { kc -n c1 get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }
glass() { kc -n c1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/allow-scale-down-without-snapshot}'; }
no_glass() { [ -z "$(glass)" ]; }
at() { [ "$(replicas)" = "$1" ]; }

druid_etcd c1 etcd-main
druid_double_for c1 etcd-main
U=$DRUID_DOUBLE_URL
curl -sf -X POST "$U/admin/write?n=3" >/dev/null || ctl_fail "the double takes no writes"
druid_double_admin 'reply?code=500&count=0' || ctl_fail "cannot make the double fail"
ctl_start --snapshot-retries 2
kc -n c1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot ask hibernation"
ctl_wait_phase c1 etcd-main Failed 40
V="$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ) backups broken, hibernate anyway"
kc -n c1 annotate etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$V" >/dev/null ||
    ctl_fail "the operator cannot set break glass"
ctl_wait_phase c1 etcd-main Hibernated 30
at 0 || ctl_fail "control: C0: Hibernated on break glass but the StatefulSet is at $(replicas)"
ksim_wait 15 no_glass || ctl_fail "C1: break glass not removed after its use: $(glass)"
echo "ok: control: C0: hibernated on break glass by warden-controller (use 1), the annotation removed"

kc -n c1 annotate etcd etcd-main etcd-warden.io/hibernate- >/dev/null || ctl_fail "cannot wake"
ctl_wait_phase c1 etcd-main "" 30
ksim_wait 15 at 3 || ctl_fail "C1: not woken: StatefulSet at $(replicas)"
[ "$(kc -n c1 get pods -o name | grep -c '^pod/etcd-main-[0-9]*$')" = 3 ] || {
    kc -n c1 delete pods etcd-main-0 etcd-main-1 etcd-main-2 --ignore-not-found --wait=true >/dev/null
    druid_pods c1 etcd-main 3
}
curl -sf -X POST "$U/admin/write?n=5" >/dev/null || ctl_fail "the double takes no writes"
lw=$(last_write "$U")
sr=$(stored_rev "$U")
[ -n "$lw" ] && [ "${sr:-0}" -lt "$lw" ] || ctl_fail "the oracle cannot judge (last write $lw, snapshot ${sr:-none})"
echo "C1: woken, writes up to revision $lw acknowledged, last snapshot ${sr:-none}"

out=$(kc -n c1 annotate --overwrite etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$V" 2>&1) ||
    ctl_fail "C1: the re-applied manifest refused: $out"
WH_AS_NS=c1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection"
wh_caught_up
out=$(WH_AS_NS=c1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
if at 0; then
    echo "HOLE: C1: the break glass value warden-controller used for its scale-down, applied again, let alice scale StatefulSet c1/etcd-main to 0 with writes up to revision $lw acknowledged after the last snapshot (${sr:-none}): $(tr '\n' ' ' <<<"$out" | head -c 300)"
    echo "FAIL: 1 hole(s): a break glass use by warden-controller is not recorded; the value re-applied allows another scale-down"
    exit 1
fi
grep -q "was used" <<<"$out" || ctl_fail "C1: alice's scale-down refused for another reason: $out"
echo "held: C1: the re-applied value is refused: $(tr '\n' ' ' <<<"$out" | head -c 200)"
V2="$(date -u -d '+3 hours' +%Y-%m-%dT%H:%M:%SZ) second incident"
kc -n c1 annotate --overwrite etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$V2" >/dev/null ||
    ctl_fail "the operator cannot set a new value"
wh_caught_up
out=$(WH_AS_NS=c1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
at 0 || ctl_fail "control: C0: a new value does not allow alice's scale-down: $out"
echo "ok: control: C0: a new value allows one scale-down"
echo "attack13_glass_controller_use: ok"
