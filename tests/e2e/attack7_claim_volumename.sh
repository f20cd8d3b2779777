#!/usr/bin/env bash
# A member claim bound to a volume of the tenant's choosing by an UPDATE, against the webhook
# registered as the chart registers it. Issue 30: the StatefulSet reaches 0 only with a final
# snapshot that holds its last write, and the wake must come back with it; a member's volume is
# the member's. The sixth attack closed a claim of an Etcd's member name created with
# spec.dataSource, spec.dataSourceRef or spec.volumeName ("pre-bound to a volume that may hold
# old data", docs/protection.md): the member would start on that data, and
# etcd-backup-restore, which skips its revision check for a member of a multi-member cluster,
# never restores the final snapshot. kube-apiserver lets anyone who may update a claim set
# spec.volumeName once while it is empty ("volumeName changes are allowed once",
# ValidatePersistentVolumeClaimUpdate): a claim created plain and still unbound (a
# WaitForFirstConsumer class binds only when a pod uses it) can be pre-bound afterwards. A PVC
# UPDATE is judged only when it changes the labels or owner references, and the StatefulSet's
# scale-up over its claims does not read spec.volumeName ("as every bound claim carries it").
#   V1. protection on: Etcd etcd-main of v1 hibernated (spec.replicas 0, StatefulSet at 0), its
#       member claims gone (deleted with the final snapshot, or whenScaled: Delete); alice
#       creates etcd-main-etcd-main-0..2 plain (admitted, as it should be), then patches each
#       with spec.volumeName pv-old-data-<n>; Gardener wakes the Etcd (spec.replicas 3) and
#       etcd-druid scales the StatefulSet to 3.
#   V2. protection on: Etcd etcd-main of v2 running at 3; alice creates the claim member 3 would
#       take, etcd-main-etcd-main-3, plain, then patches it with spec.volumeName pv-old-data;
#       the Etcd is scaled up (spec.replicas 4) and etcd-druid scales the StatefulSet to 4.
# Oracle: what kube-sim stores: StatefulSet etcd-main at the woken (scaled) replicas while a
# claim etcd-main-etcd-main-<n> of its members carries the spec.volumeName alice wrote (no
# binder ran: kube-sim binds nothing). Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

druid_etcd v1 etcd-main --replicas 0 # hibernated: Etcd and StatefulSet at 0, no claims
druid_etcd v2 etcd-main              # running at 3
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
plain() { # NS N: alice's plain claim etcd-main-etcd-main-N (no owner, no data source)
    printf '%s\n' "apiVersion: v1" "kind: PersistentVolumeClaim" \
        "metadata: {name: etcd-main-etcd-main-$2}" \
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}" |
        WH_AS_NS=$1 wh_as alice create -f - >/dev/null 2>&1 || wh_fail "$1: alice cannot create a plain claim etcd-main-etcd-main-$2"
}
bind() { # NS N VOLUME: alice sets spec.volumeName of claim etcd-main-etcd-main-N
    WH_AS_NS=$1 wh_as alice patch pvc "etcd-main-etcd-main-$2" --type merge -p "{\"spec\":{\"volumeName\":\"$3\"}}" 2>&1
}
prebound() { # NS FIRST LAST: the claims etcd-main-etcd-main-FIRST..LAST carrying alice's volume
    local i n=0
    for ((i = $2; i <= $3; i++)); do
        [ "$(kc -n "$1" get pvc "etcd-main-etcd-main-$i" -o jsonpath='{.spec.volumeName}' 2>/dev/null)" = "pv-old-data-$i" ] && n=$((n + 1))
    done
    echo $n
}
sts() { kc -n "$1" get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }

# ---- control: the sixth attack's fix, spec.volumeName at the CREATE
out=$(printf '%s\n' "apiVersion: v1" "kind: PersistentVolumeClaim" "metadata: {name: etcd-main-etcd-main-3}" \
    "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}, volumeName: pv-old-data-3}" |
    WH_AS_NS=v2 wh_as alice create -f - 2>&1)
! kc -n v2 get pvc etcd-main-etcd-main-3 >/dev/null 2>&1 ||
    wh_fail "control: a claim of member 3 created with spec.volumeName (the sixth attack's fix is not there): $out"
echo "ok: control: a member claim created with spec.volumeName is refused"

# ---- V1: a hibernated Etcd's claims re-created plain, then pre-bound
out=""
for i in 0 1 2; do plain v1 $i; done
for i in 0 1 2; do out+=$(bind v1 $i pv-old-data-$i)$'\n'; done
wh_caught_up # the caches see them
kc -n v1 patch etcd etcd-main --type merge -p '{"spec":{"replicas":3}}' >/dev/null || wh_fail "V1: the wake of Etcd etcd-main refused"
up=$(kc_druid -n v1 scale statefulset etcd-main --replicas 3 2>&1)
n=$(prebound v1 0 2)
if [ "$(sts v1)" = 3 ] && [ "$n" -gt 0 ]; then
    hole "V1: StatefulSet v1/etcd-main woken to 3 with $n member claim(s) alice created plain during hibernation and then bound by spec.volumeName to volumes of her choosing (pv-old-data-<n>): the members start on that data, and etcd-backup-restore never restores the final snapshot"
else held "V1: $n claim(s) pre-bound, StatefulSet at $(sts v1): $(tr '\n' ' ' <<<"$out $up" | head -c 400)"; fi

# ---- V2: the next member's claim created plain, then pre-bound, then the scale-up
plain v2 3
out=$(bind v2 3 pv-old-data-3)
sleep 1
kc -n v2 patch etcd etcd-main --type merge -p '{"spec":{"replicas":4}}' >/dev/null || wh_fail "V2: the scale-up of Etcd etcd-main refused"
up=$(kc_druid -n v2 scale statefulset etcd-main --replicas 4 2>&1)
n=$(prebound v2 3 3)
if [ "$(sts v2)" = 4 ] && [ "$n" -gt 0 ]; then
    hole "V2: StatefulSet v2/etcd-main scaled to 4 with the claim of member 3 bound by alice's spec.volumeName pv-old-data-3 (set by an UPDATE of the plain claim she created): member 3 starts on that data"
else held "V2: $n claim pre-bound, StatefulSet at $(sts v2): $(tr '\n' ' ' <<<"$out $up" | head -c 400)"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): members started on claims pre-bound by a tenant's UPDATE"; exit 1; }
echo "attack7_claim_volumename: ok"
