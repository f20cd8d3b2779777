#!/usr/bin/env bash
# A member's claim planted before its Etcd exists, against the webhook registered as the chart
# registers it (component protection ON), etcd-druid's components created as etcd-druid.
# Issue 30: the PVC rule (a member-named claim owned only by its StatefulSet, Etcd or Pod) is
# decided when the claim is written, and then only while the Etcd exists.
#   P1. A namespace editor creates ConfigMap bait and PVC etcd-a-etcd-a-0 owned by it, before
#       Etcd etcd-a exists. etcd-druid creates the StatefulSet; member 0 takes the claim as it
#       is. Once the Etcd is hibernated (replicas 0, no backup store: nothing to wait for), the
#       ordinal no longer runs, and deleting bait makes the garbage collector delete member 0's
#       volume: the Etcd wakes without it.
#   P2. The same claim planted for ordinal 2 of Etcd etcd-b at 1 replica: the StatefulSet is
#       created at 1, and its scale-up to 3 would bring the planted claim in.
# Held: the StatefulSet CREATE (P1) and the scale-up (P2) are refused, naming the claim and
# its owner; the claim put right as the refusal says, etcd-druid's CREATE goes through.
# Checked against what kube-sim stores (its garbage collector is real and acts through the
# webhooks as system:serviceaccount:kube-system:generic-garbage-collector).
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }

# Etcd NS/NAME at REPLICAS members, without a backup store, as a user applies it.
new_etcd() {
    kc apply -f - >/dev/null <<EOF || wh_fail "cannot create Etcd $1/$2"
apiVersion: v1
kind: Namespace
metadata: {name: $1}
---
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1, labels: {app: etcd-statefulset, role: main}}
spec:
  replicas: $3
  labels: {app: etcd-statefulset, role: main}
  etcd: {clientPort: 2379, serverPort: 2380, quota: 8Gi}
  backup: {port: 8080, fullSnapshotSchedule: "0 */24 * * *"}
EOF
}

# alice's ConfigMap bait in NS and the claim NAME owned by it (no Etcd of its name yet).
plant() {
    local ns=$1 pvc=$2 uid
    kc apply -f - >/dev/null <<EOF || wh_fail "cannot create namespace $ns"
apiVersion: v1
kind: Namespace
metadata: {name: $ns}
EOF
    WH_AS_NS=$ns wh_as alice create configmap bait >/dev/null || wh_fail "alice cannot create a ConfigMap"
    uid=$(kc -n "$ns" get configmap bait -o jsonpath='{.metadata.uid}')
    WH_AS_NS=$ns wh_as alice create -f - >/dev/null <<EOF || wh_fail "alice's claim $pvc before the Etcd is refused"
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: $pvc
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: bait, uid: $uid}]
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
}

# etcd-druid creates the components of NS/NAME (REPLICAS); the errors go to $WH_DIR/create.err.
components() {
    local uid
    uid=$(kc -n "$1" get etcd "$2" -o jsonpath='{.metadata.uid}')
    druid_components "$1" "$2" "$uid" "$3" | kc_druid -n "$1" create -f - >/dev/null 2>"$WH_DIR/create.err"
}

# ---- P1: the claim planted before the Etcd; etcd-druid creates the StatefulSet
plant shoot etcd-a-etcd-a-0
new_etcd shoot etcd-a 3
wh_caught_up # the caches see the Etcd
components shoot etcd-a 3
if kc -n shoot get statefulset etcd-a >/dev/null 2>&1; then
    druid_pods shoot etcd-a 3 # member 0 runs on the planted claim
    kc_druid -n shoot scale statefulset etcd-a --replicas 0 >/dev/null 2>&1 ||
        wh_fail "etcd-druid cannot hibernate etcd-a (no backup store)"
    wh_as alice delete configmap bait >/dev/null || wh_fail "alice cannot delete her ConfigMap"
    for _ in $(seq 1 50); do # the garbage collector acts in the background: 10 s at most
        kc -n shoot get pvc etcd-a-etcd-a-0 >/dev/null 2>&1 || break
        sleep 0.2
    done
    if ! kc -n shoot get pvc etcd-a-etcd-a-0 >/dev/null 2>&1; then
        hole "P1: StatefulSet etcd-a was created over alice's claim etcd-a-etcd-a-0 (owned by her ConfigMap bait), and after the hibernation the garbage collector deleted member 0's volume when she deleted bait"
    else
        hole "P1: StatefulSet etcd-a was created over alice's claim etcd-a-etcd-a-0 (owned by her ConfigMap bait)"
    fi
else
    msg=$(cat "$WH_DIR/create.err")
    case $msg in
    *"PersistentVolumeClaim shoot/etcd-a-etcd-a-0, which is owned by ConfigMap bait"*"kubectl patch pvc -n shoot etcd-a-etcd-a-0"*)
        held "P1: etcd-druid's StatefulSet over the planted claim refused: ${msg:0:240}..." ;;
    *) wh_fail "P1: StatefulSet etcd-a not created, but not for the planted claim: $msg" ;;
    esac
    # put right as the refusal says: the claim loses its foreign owner, then etcd-druid's CREATE
    wh_as alice patch pvc etcd-a-etcd-a-0 --type json \
        -p '[{"op": "remove", "path": "/metadata/ownerReferences"}]' >/dev/null ||
        wh_fail "alice cannot remove the owner reference of her claim"
    kc_druid -n shoot create -f - >/dev/null 2>"$WH_DIR/create.err" < <(
        druid_components shoot etcd-a "$(kc -n shoot get etcd etcd-a -o jsonpath='{.metadata.uid}')" 3 |
            awk '/^---$/{if (sts) print buf; buf=""; sts=0} {buf=buf $0 "\n"} /^kind: StatefulSet$/{sts=1} END{if (sts) printf "%s", buf}'
    ) || wh_fail "P1: etcd-druid's StatefulSet still refused once the claim is put right: $(cat "$WH_DIR/create.err")"
    held "P1: the claim put right, etcd-druid created StatefulSet etcd-a"
fi

# ---- P2: the claim of ordinal 2 planted before the Etcd; the scale-up 1 -> 3 brings it in
plant shoot2 etcd-b-etcd-b-2
new_etcd shoot2 etcd-b 1
sleep 2
components shoot2 etcd-b 1 || wh_fail "P2: etcd-druid cannot create the components at 1 replica: $(cat "$WH_DIR/create.err")"
out=$(kc_druid -n shoot2 patch statefulset etcd-b --type merge -p '{"spec":{"replicas":3}}' 2>&1)
if [ "$(kc -n shoot2 get statefulset etcd-b -o jsonpath='{.spec.replicas}')" = 3 ]; then
    hole "P2: etcd-druid scaled StatefulSet etcd-b 1 -> 3 over alice's claim etcd-b-etcd-b-2 (owned by her ConfigMap bait)"
else
    case $out in
    *"scaling up StatefulSet shoot2/etcd-b"*"etcd-b-etcd-b-2, which is owned by ConfigMap bait"*)
        held "P2: the scale-up over the planted claim refused" ;;
    *) wh_fail "P2: scale-up refused, but not for the planted claim: $out" ;;
    esac
fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a member took a claim planted with a foreign owner"; exit 1; }
echo "attack3_pvc_planted: ok"
