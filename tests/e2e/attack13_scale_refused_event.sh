#!/usr/bin/env bash
# What warden-controller tells when warden-webhook refuses its own scale-down, on kube-sim with
# warden-webhook (registered as ctl_stage registers it), warden-controller and backup-double.
# Issue 30: "every event and condition tells the truth". docs/hibernation.md: the Warning
# `ScaleDownWithoutSnapshot` says a scale-down without a snapshot was made. It was emitted
# before the controller's scale to 0, on the controller's own view that break glass allows it:
# when the webhook refused that scale (here: the value was used before, by alice), the event
# still said "scaling to 0 without a final snapshot" and the StatefulSet never moved.
#   S1. Etcd etcd-main (writes acknowledged, the sidecar failing): hibernate=true, phase
#       Failed; warden-controller stopped; the operator sets break glass, alice uses it on a
#       scale 3 -> 2 (protection disabled); warden-controller started: its scale to 0 on that
#       value is refused by warden-webhook.
#   S0. control: a new value set: warden-controller scales to 0 and says so
#       (ScaleDownWithoutSnapshot, "scaled to 0 without a final snapshot").
# Oracle: what kube-sim stores (the StatefulSet's replicas) against the events on the Etcd.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
replicas() { kc -n s1 get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }
druid_etcd s1 etcd-main
druid_double_for s1 etcd-main
E=$DRUID_DOUBLE_URL
curl -sf -X POST "$E/admin/write?n=5" >/dev/null || ctl_fail "the double takes no writes"
curl -sf -X POST "$E/admin/reply?code=500&count=0" >/dev/null || ctl_fail "the double cannot be broken"
WH_AS_NS=s1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection"
ctl_start --snapshot-retries 1
kc -n s1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
ctl_wait_phase s1 etcd-main Failed 60
ctl_stop
ok "S1: hibernation Failed (the sidecar fails), the StatefulSet at $(replicas)"

kc -n s1 annotate etcd etcd-main \
    "etcd-warden.io/allow-scale-down-without-snapshot=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ) bucket lost" >/dev/null ||
    ctl_fail "the operator cannot set break glass"
wh_caught_up
out=$(WH_AS_NS=s1 wh_as alice scale statefulset etcd-main --replicas=2 2>&1)
[ "$(replicas)" = 2 ] || ctl_fail "S1: alice's scale 3 -> 2 on break glass refused: $out"
ok "S1: alice used the break glass on a scale 3 -> 2"

ctl_start --snapshot-retries 1
refused() { ctl_events s1 etcd-main | grep -q '^Warning ScaleDownRefused'; }
said_without() { ctl_events s1 etcd-main | grep -Eq '^Warning ScaleDownWithoutSnapshot: scal(ing|ed) to 0'; }
tried() { refused || said_without; }
ksim_wait 30 tried ||
    ctl_fail "S1: warden-controller did not try to scale to 0: $(ctl_events s1 etcd-main | tail -5)"
sleep 1
[ "$(replicas)" = 2 ] || ctl_fail "S1: the StatefulSet moved to $(replicas) on a used value"
if said_without; then
    echo "HOLE: S1: the StatefulSet stays at $(replicas), refused by warden-webhook, and the Etcd's event says: $(ctl_events s1 etcd-main | grep -E 'ScaleDownWithoutSnapshot: scal(ing|ed) to 0' | head -1 | head -c 300)"
    echo "FAIL: 1 hole(s): ScaleDownWithoutSnapshot emitted for a scale-down that was refused"
    exit 1
fi
ctl_events s1 etcd-main | grep '^Warning ScaleDownRefused' | grep -q "was used at" ||
    ctl_fail "S1: the refusal event does not carry the webhook's answer: $(ctl_events s1 etcd-main | grep ScaleDownRefused | head -1)"
ok "S1: $(ctl_events s1 etcd-main | grep ScaleDownRefused | head -1 | head -c 300)"

# S0: a new value: the scale to 0 is made and said
kc -n s1 annotate --overwrite etcd etcd-main \
    "etcd-warden.io/allow-scale-down-without-snapshot=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ) bucket lost, again" >/dev/null ||
    ctl_fail "the operator cannot set a new break glass value"
ctl_wait_phase s1 etcd-main Hibernated 60
[ "$(replicas)" = 0 ] || ctl_fail "control: S0: Hibernated at $(replicas) replicas"
ctl_events s1 etcd-main | grep -q "^Warning ScaleDownWithoutSnapshot: scaled to 0 without a final snapshot" ||
    ctl_fail "control: S0: no ScaleDownWithoutSnapshot event: $(ctl_events s1 etcd-main | tail -5)"
ok "control: S0: scaled to 0 on a new value, and the event says so"
echo "attack13_scale_refused_event: ok"
