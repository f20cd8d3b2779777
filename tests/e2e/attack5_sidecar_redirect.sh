#!/usr/bin/env bash
# The final snapshot and the revision check answered by a tenant's stand-in instead of the
# member's backup sidecar, on kube-sim with warden-webhook, warden-controller and backup-double.
# Issue 30: the guard decides from facts only etcd-warden or the API server writes, and the
# StatefulSet never reaches 0 without a final snapshot holding its last write, a tenant of an
# Etcd with component protection disabled included. warden-controller reaches the sidecar at
# the client Service's clusterIP on the Service's backuprestore port: the Service is a
# component, which the tenant may change once protection is disabled (a port, a targetPort, a
# selector that picks the tenant's pod: kube-sim routes by clusterIP and port, so the port
# models them). The stand-in answers the final snapshot task and both questions of the check
# from a store of its own; the member's sidecar is never asked.
#   S1. protection disabled: the tenant points the client Service's backuprestore port at her
#       stand-in on the same clusterIP; clients write to etcd (the real sidecar's double);
#       hibernate=true.
# Oracle: ground truth. The real double records every acknowledged write and every snapshot
# it stored: the StatefulSet at 0 (what kube-sim stores) with a write acknowledged before the
# cut missing from the real store is the loss. Fails (HOLE) while the hole exists.
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

druid_etcd s1 etcd-main
druid_double_for s1 etcd-main
REAL=$DRUID_DOUBLE_URL
ip=$(kc -n s1 get service etcd-main-client -o jsonpath='{.spec.clusterIP}')
port=$(wh_free_port)
druid_double_start "$ip" "$port" || ctl_fail "cannot start the tenant's stand-in on $ip:$port"
FAKE=$DRUID_DOUBLE_URL
write "$REAL" 5
ctl_start

# the tenant: protection disabled, the backuprestore port of the client Service to her stand-in
WH_AS_NS=s1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection"
wh_caught_up # the caches see it
i=$(kc -n s1 get service etcd-main-client -o jsonpath='{range .spec.ports[*]}{.name}{"\n"}{end}' |
    grep -nx backuprestore | cut -d: -f1)
out=$(WH_AS_NS=s1 wh_as alice patch service etcd-main-client --type json -p \
    "[{\"op\":\"replace\",\"path\":\"/spec/ports/$((i - 1))/port\",\"value\":$port}]" 2>&1)
echo "S1: alice's patch of the client Service's backuprestore port: ${out:-refused}"
write "$REAL" 5
WH_AS_NS=s1 wh_as alice annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null ||
    ctl_fail "alice cannot hibernate the Etcd"

holes=0
deadline=$((SECONDS + 60))
while [ $SECONDS -lt $deadline ]; do
    [ "$(replicas s1)" = 0 ] && break
    sleep 0.2
done
w=$(last_write "$REAL")
s=$(stored_rev "$REAL")
asked=$(curl -sf "$FAKE/admin/requests" | jq -r '"\(.method) \(.path)"' | sort | uniq -c | awk '{printf "%s%s %s %s", (NR > 1 ? ", " : ""), $1, $2, $3}')
if [ "$(replicas s1)" = 0 ]; then # the events of the sleep that followed
    ksim_wait 15 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n s1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\\.io/hibernation-phase}')\" = Hibernated ]" || true
fi
if [ "$(replicas s1)" = 0 ] && [ "${s:-0}" -lt "${w:-0}" ]; then
    echo "HOLE: S1: StatefulSet s1/etcd-main reached 0 with write ${w:-0} acknowledged and the member's store holding ${s:-nothing}: the final snapshot and the revision check were answered by alice's stand-in (${asked:-none}) on the port she set; the member's sidecar was asked $(curl -sf "$REAL/admin/requests" | grep -c . || true) times; event: $(ctl_events s1 etcd-main | grep Hibernated: | tail -1)"
    holes=1
else
    echo "held: S1: the StatefulSet at $(replicas s1), the member's store at ${s:-nothing} of ${w:-0} (the stand-in asked: ${asked:-none}), phase $(ctl_phase s1 etcd-main)"
fi
ctl_stop

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a StatefulSet at 0 without a final snapshot holding its last write"; exit 1; }
echo "attack5_sidecar_redirect: ok"
