#!/usr/bin/env bash
# A hibernated Etcd's member claims swapped for claims cloned from a tenant's volume, against the
# webhook registered as the chart registers it. Issue 30: the StatefulSet reaches 0 only with a
# final snapshot that holds its last write; the wake must come back with it. A hibernated
# Etcd's claims are outside its StatefulSet's ordinals ([0, 0)) and may be deleted ("judged as
# before"): the members would start empty and etcd-backup-restore restores the final snapshot.
# A claim of a member's name is planted-checked for its owner references only: one created
# with spec.dataSource (a clone of another claim, or a VolumeSnapshot) is admitted, and the
# StatefulSet's scale-up takes it. A member that starts on a data directory that holds an etcd
# database is not restored: etcd-backup-restore's data validator skips the revision check for a
# cluster of more than one member ("Skipping check for revision consistency of etcd member as
# it will get in sync with etcd leader.", pkg/initializer/validator/datavalidator.go:159 at
# v0.43.0), so the members come up on the cloned data and the final snapshot is never read.
#   W1. protection disabled: Etcd etcd-main hibernated (spec.replicas 0, StatefulSet at 0, its
#       three member claims kept); alice deletes the three claims and creates
#       etcd-main-etcd-main-<n> again with spec.dataSource her claim stale-copy (no owner
#       reference); Gardener wakes the Etcd (spec.replicas 3), etcd-druid scales the
#       StatefulSet to 3.
#   W2. the same with protection on (alice's claim DELETE is expected to be refused by
#       component protection).
#   W3. protection disabled, Etcd etcd-main of w3 running at 3: alice creates the claim member 3
#       would take on a scale-up, etcd-main-etcd-main-3, as a clone of stale-copy, then one
#       pre-bound by spec.volumeName (the CREATE itself is the request judged: no claim is
#       deleted first).
# Oracle: what kube-sim stores: StatefulSet etcd-main at 3 replicas while a claim
# etcd-main-etcd-main-<n> its members bind carries spec.dataSource stale-copy (created by
# alice after the members' data was written). Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

claims() { # the member claims of NS/etcd-main (as the StatefulSet controller made them), or
    # with SOURCE as alice's clones of it
    local i
    for i in 0 1 2; do
        cat <<EOF
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 16Gi}}
EOF
        [ -z "${1:-}" ] || echo "  dataSource: {kind: PersistentVolumeClaim, name: $1}"
    done
}
for ns in w1 w2; do # hibernated: Etcd and StatefulSet at 0, the claims kept
    druid_etcd $ns etcd-main --replicas 0
    claims | kc -n $ns create -f - >/dev/null || wh_fail "cannot create the member claims of $ns"
    WH_AS_NS=$ns wh_as alice create -f - >/dev/null <<EOF || wh_fail "alice cannot create her claim in $ns"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: stale-copy}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
done
WH_AS_NS=w1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable protection of w1/etcd-main"
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
swapped() { # the member claims of NS carrying dataSource stale-copy
    kc -n "$1" get pvc -o jsonpath='{range .items[*]}{.metadata.name} {.spec.dataSource.name}{"\n"}{end}' |
        awk '$1 ~ /^etcd-main-etcd-main-[0-9]+$/ && $2 == "stale-copy"' | wc -l
}

for ns in w1 w2; do
    out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
    ksim_wait 5 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n $ns get pvc etcd-main-etcd-main-0 >/dev/null 2>&1" >/dev/null 2>&1 || true
    out+=$(claims stale-copy | WH_AS_NS=$ns wh_as alice create -f - 2>&1)
    wh_caught_up # the caches see them
    # the wake: Gardener's spec.replicas, etcd-druid's scale-up of the StatefulSet
    kc -n $ns patch etcd etcd-main --type merge -p '{"spec":{"replicas":3}}' >/dev/null ||
        wh_fail "$ns: the wake of Etcd etcd-main refused"
    up=$(kc_druid -n $ns scale statefulset etcd-main --replicas 3 2>&1)
    n=$(swapped $ns)
    if [ "$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 3 ] && [ "$n" -gt 0 ]; then
        hole "${ns^^}: StatefulSet $ns/etcd-main woken to 3 with $n member claim(s) alice re-created as clones of her claim stale-copy during hibernation: the members start on its data, and etcd-backup-restore, which skips the revision check for a multi-member cluster, never restores the final snapshot"
    else held "${ns^^}: $n claim(s) swapped, StatefulSet at $(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}'): $(tr '\n' ' ' <<<"$out $up" | head -c 400)"; fi
done

# ---- W3: a claim of a running Etcd's next member, seeded with data at its CREATE
druid_etcd w3 etcd-main
WH_AS_NS=w3 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable protection of w3/etcd-main"
wh_caught_up # the caches see the Etcd
for src in "dataSource: {kind: PersistentVolumeClaim, name: stale-copy}" "volumeName: pv-old-data"; do
    out=$(printf '%s\n' "apiVersion: v1" "kind: PersistentVolumeClaim" \
        "metadata: {name: etcd-main-etcd-main-3}" \
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}, $src}" |
        WH_AS_NS=w3 wh_as alice create -f - 2>&1)
    if kc -n w3 get pvc etcd-main-etcd-main-3 >/dev/null 2>&1; then
        hole "W3: alice created claim w3/etcd-main-etcd-main-3 of live Etcd etcd-main with $src: the scale-up's member 3 starts on that data"
        kc -n w3 delete pvc etcd-main-etcd-main-3 --wait=false >/dev/null 2>&1
    else held "W3 ($src): $(head -c 300 <<<"$out")"; fi
done

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a hibernated Etcd woken on claims a tenant swapped"; exit 1; }
echo "attack6_claim_swap: ok"
