#!/usr/bin/env bash
# Break glass used by a tenant's partial scale-down, then honoured again by warden-controller's
# own hibernation, on kube-sim with warden-webhook (registered as ctl_stage registers it),
# warden-controller and backup-double. Issue 30. docs/toggles.md: break glass "allows one
# scale-down: the webhook records the first request it lets through ... and refuses the next on
# the same value", and "the controller scales down without one once an attempt has failed";
# docs/hibernation.md ("Break glass once"): "allows one scale-down: one request that only it
# lets through (a scale-down to 0 or to fewer members ...), whoever asks". warden-controller
# removes the annotation only after a scale-down to 0, so after a partial scale-down on it the
# value stays on the Etcd. Does warden-controller's own scale to 0 count as a second use?
#   P1. Etcd etcd-main (3 members, writes acknowledged). alice (protection disabled, break
#       glass "member 2 volume corrupt") scales the StatefulSet 3 -> 2 (use 1), re-enables
#       protection. 5 more writes acknowledged. The sidecar answers 500 to every snapshot;
#       hibernate=true.
#   P0. control: the partial scale-down on break glass is admitted.
# Held on the first runs: warden-controller reaches ScalingDown on the value, and the webhook
# refuses its scale to 0 (the value was used); the StatefulSet stays at 2.
# Oracle: what kube-sim stores (the StatefulSet at 0) and what backup-double records (writes
# acknowledged after the last successful snapshot: none was taken).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
replicas() { kc -n p1 get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }
at() { [ "$(replicas)" = "$1" ]; }
phase() { ctl_phase p1 etcd-main; }
settled() { at 0 || [ "$(phase)" = Failed ] || [ "$(phase)" = ScalingDown ]; }

druid_etcd p1 etcd-main
druid_double_for p1 etcd-main
U=$DRUID_DOUBLE_URL
curl -sf -X POST "$U/admin/write?n=3" >/dev/null || ctl_fail "the double takes no writes"
ctl_start --snapshot-retries 2
V="$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ) member 2 volume corrupt"
WH_AS_NS=p1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= \
    "etcd-warden.io/allow-scale-down-without-snapshot=$V" >/dev/null || ctl_fail "alice cannot set break glass"
wh_caught_up
out=$(WH_AS_NS=p1 wh_as alice patch statefulset etcd-main --type merge -p '{"spec":{"replicas":2}}' 2>&1)
at 2 || ctl_fail "control: P0: the partial scale-down on break glass refused: $out"
WH_AS_NS=p1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection- >/dev/null ||
    ctl_fail "alice cannot re-enable protection"
kc -n p1 delete pod etcd-main-2 --wait=true >/dev/null || ctl_fail "cannot delete member 2's pod"
echo "ok: control: P0: the partial scale-down 3 -> 2 admitted on break glass (use 1)"
curl -sf -X POST "$U/admin/write?n=5" >/dev/null || ctl_fail "the double takes no writes"
[ "$(kc -n p1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/allow-scale-down-without-snapshot}')" = "$V" ] ||
    echo "note: the annotation is no longer the value used"

druid_double_admin 'reply?code=500&count=0' || ctl_fail "cannot make the double fail"
kc -n p1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot ask hibernation"
ksim_wait 60 settled || ctl_fail "P1: neither Failed nor at 0 within 60 s: phase $(phase), replicas $(replicas)"
ksim_wait 15 at 0 # the scale-down, when it comes, follows at once
sleep 10 # what warden-controller tells meanwhile
lw=$(last_write "$U")
sr=$(stored_rev "$U")
if at 0 && [ "${sr:-0}" -lt "${lw:-0}" ]; then
    echo "HOLE: P1: warden-controller scaled StatefulSet p1/etcd-main to 0 on a break glass value already used by alice's partial scale-down, with writes up to revision $lw acknowledged after the last snapshot (${sr:-none}); events: $(ctl_events p1 etcd-main | tr '\n' ';' | head -c 300)"
    echo "FAIL: 1 hole(s): warden-controller's scale-down without a snapshot is a second use of one break glass value"
    exit 1
fi
echo "held: P1: the hibernation stays up on the used value (phase $(phase), replicas $(replicas)); events: $(ctl_events p1 etcd-main | tr '\n' ';' | head -c 2000); condition: $(kc -n p1 get etcd etcd-main -o jsonpath="{.metadata.annotations.etcd-warden\\.io/hibernation-condition}" | head -c 400)"
echo "attack13_glass_controller_second: ok"
