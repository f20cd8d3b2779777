#!/usr/bin/env bash
# Break glass used twice, on kube-sim with warden-webhook (registered as ctl_stage registers
# it), warden-controller and a backup-double per Etcd. Issue 30 / docs/hibernation.md "Break
# glass once": etcd-warden.io/allow-scale-down-without-snapshot "allows one scale-down", is
# removed after use, and the next scale-down needs a snapshot again. The webhook admits on
# the annotation alone, and only warden-controller's own hibernation flow removes it: a use
# outside that flow, or a use while warden-controller is down, leaves it standing (up to 24 h)
# for any later scale-down, which then loses the writes made since.
#   R1. warden-controller running. A tenant (protection disabled, the refusal's own advice:
#       "if you must") sets break glass and scales StatefulSet etcd-main 3 -> 2: admitted (use
#       1), then re-enables protection. The annotation is not removed. Clients write.
#       etcd-druid's scale to 0 (its pre-sync fallback after three failed attempts, or any
#       reconciler's) is admitted on the same annotation (use 2).
#   R2. warden-controller down. An operator sets break glass for a broken bucket; etcd-druid
#       scales to 0 (use 1); Gardener wakes the Etcd (etcd-druid scales back to 3); clients
#       write; etcd-druid scales to 0 again (use 2): admitted.
# Oracle: ground truth. The double records every acknowledged write and every snapshot; the
# second scale-down reaching 0 (what kube-sim stores) with a write acknowledged after the first
# use missing from the store is the loss. Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage

last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
write() { curl -sf -X POST "$1/admin/write?n=$2" >/dev/null; }
replicas() { kc -n "$1" get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }
glass() { kc -n "$1" get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/allow-scale-down-without-snapshot}'; }
expiry() { date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ; }

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
# The second scale-down, judged on what kube-sim stores and what the double recorded.
#   judge CASE NS URL OUT
judge() {
    local w s
    w=$(last_write "$3")
    s=$(stored_rev "$3")
    if [ "$(replicas "$2")" = 0 ] && [ "${s:-0}" -lt "${w:-0}" ]; then
        hole "$1: a second scale-down to 0 on one break glass was admitted: StatefulSet $2/etcd-main at 0 with write ${w:-0} acknowledged and the store holding ${s:-nothing}"
    else held "$1: the second scale-down refused (replicas $(replicas "$2"), last write ${w:-none}, stored ${s:-none}): $4"; fi
}

# ---- R1: a partial scale-down uses it, warden-controller running
ctl_start
druid_etcd r1 etcd-main
druid_double_for r1 etcd-main
R1=$DRUID_DOUBLE_URL
write "$R1" 3
WH_AS_NS=r1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= \
    "etcd-warden.io/allow-scale-down-without-snapshot=$(expiry) member 2 volume corrupt" >/dev/null ||
    ctl_fail "R1: alice cannot set break glass"
WH_AS_NS=r1 wh_await_admitted 10 "R1: the partial scale-down on break glass was refused" \
    wh_as alice patch statefulset etcd-main --type merge -p '{"spec":{"replicas":2}}'
WH_AS_NS=r1 wh_as alice patch statefulset etcd-main --type merge -p '{"spec":{"replicas":2}}' >/dev/null 2>&1 ||
    ctl_fail "R1: the partial scale-down on break glass was refused"
WH_AS_NS=r1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection- >/dev/null ||
    ctl_fail "R1: alice cannot re-enable protection"
echo "R1: use 1 (3 -> 2) admitted; waiting up to 15 s for the annotation to go"
for _ in $(seq 1 75); do [ -n "$(glass r1)" ] || break; sleep 0.2; done
[ -z "$(glass r1)" ] || echo "R1: break glass still set after its use: $(glass r1)"
write "$R1" 5
sleep 1
out=$(kc_druid -n r1 patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}' 2>&1)
judge R1 r1 "$R1" "$out"

# ---- R2: warden-controller down, two scale-downs to 0
ctl_stop
druid_etcd r2 etcd-main
druid_double_for r2 etcd-main
R2=$DRUID_DOUBLE_URL
write "$R2" 3
kc -n r2 annotate etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$(expiry) bucket lost" >/dev/null ||
    ctl_fail "R2: the operator cannot set break glass"
wh_await_admitted 10 "R2: use 1 (etcd-druid's scale to 0 on break glass) was refused" \
    kc_druid -n r2 patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}'
kc_druid -n r2 patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}' >/dev/null 2>&1 ||
    ctl_fail "R2: use 1 (etcd-druid's scale to 0 on break glass) was refused"
kc_druid -n r2 patch statefulset etcd-main --type merge -p '{"spec":{"replicas":3}}' >/dev/null ||
    ctl_fail "R2: etcd-druid cannot wake the Etcd"
echo "R2: use 1 (3 -> 0) admitted, woken again (0 -> 3)"
write "$R2" 5
sleep 1
out=$(kc_druid -n r2 patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}' 2>&1)
judge R2 r2 "$R2" "$out"

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): one break glass let more than one scale-down through"; exit 1; }
echo "attack5_break_glass_reuse: ok"
