#!/usr/bin/env bash
# A member's PVC deleted by the garbage collector on a tenant's word, against the webhook
# registered as the chart registers it (component protection ON). Issue 30: no member's volume
# goes without the final snapshot, break glass aside, whoever asks; the garbage collector is an
# exempt service account, and it deletes whatever the owner references it reads tell it to.
#   G1. Before etcd-druid's StatefulSet first creates member 0 (a new Etcd, or Gardener's
#       scale-up 1 -> 3), a namespace editor creates the PVC `<volumeClaimTemplate>-<sts>-0` with
#       an owner reference to a ConfigMap of hers. The StatefulSet controller uses an existing
#       claim of that name as it is (it neither creates nor re-owns it): member 0 writes its data
#       there. Later, protection on, she deletes the ConfigMap; the garbage collector deletes the
#       member's PVC, and the next restart of the pod starts the member on a new, empty volume.
# Held since the StatefulSet CREATE over such a claim is refused (tests/e2e/attack3_pvc_planted.sh
# goes on from there); the rest stays for a webhook that admits it.
# Checked against what kube-sim stores (its garbage collector acts through the webhooks as
# system:serviceaccount:kube-system:generic-garbage-collector). Fails while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"


kc apply -f - >/dev/null <<EOF || wh_fail "cannot create the namespace"
apiVersion: v1
kind: Namespace
metadata: {name: shoot}
EOF
wh_as alice create configmap bait >/dev/null || wh_fail "alice cannot create a ConfigMap"
uid=$(kc -n shoot get configmap bait -o jsonpath='{.metadata.uid}')
# the claim member 0 of StatefulSet etcd-a will bind, planted before the StatefulSet exists
planted=1
wh_as alice create -f - >/dev/null 2>&1 <<EOF || planted=0
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: etcd-a-etcd-a-0
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: bait, uid: $uid}]
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
# the Etcd, then etcd-druid's components as druid_etcd makes them; its StatefulSet at 3 would
# have member 0 use the claim, and a refusal of it for the planted claim is an answer
kc apply -f - >/dev/null <<EOF || wh_fail "cannot create Etcd shoot/etcd-a"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-a, namespace: shoot, labels: {app: etcd-statefulset, role: main}}
spec:
  replicas: 3
  labels: {app: etcd-statefulset, role: main}
  etcd: {clientPort: 2379, serverPort: 2380, quota: 8Gi}
  backup: {port: 8080, fullSnapshotSchedule: "0 */24 * * *", store: {container: etcd-bucket, prefix: shoot--etcd-a, provider: S3, secretRef: {name: etcd-backup}}}
EOF
wh_caught_up # the caches see the Etcd
druid_components shoot etcd-a "$(kc -n shoot get etcd etcd-a -o jsonpath='{.metadata.uid}')" 3 |
    kc_druid -n shoot create -f - >/dev/null 2>"$WH_DIR/create.err"
if ! kc -n shoot get statefulset etcd-a >/dev/null 2>&1; then
    grep -qF "would use PersistentVolumeClaim shoot/etcd-a-etcd-a-0, which is owned by ConfigMap bait" "$WH_DIR/create.err" ||
        wh_fail "StatefulSet etcd-a not created, but not for the planted claim: $(cat "$WH_DIR/create.err")"
    echo "held: G1: etcd-druid's StatefulSet over the planted claim refused (attack3_pvc_planted)"
    echo "attack3_gc_owner: ok"
    exit 0
fi
druid_pods shoot etcd-a 3
druid_status shoot etcd-a 3
wh_caught_up # the caches see the objects
[ "$(kc -n shoot get statefulset etcd-a -o jsonpath='{.spec.volumeClaimTemplates[0].metadata.name}')" = etcd-a ] ||
    wh_fail "StatefulSet etcd-a's volumeClaimTemplate is not etcd-a"
[ -z "$(kc -n shoot get etcd etcd-a -o jsonpath='{.metadata.annotations.druid\.gardener\.cloud/disable-etcd-component-protection}')" ] ||
    wh_fail "protection is disabled on etcd-a"

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }

# ---- control: alice's own delete of the member PVC is refused (protection on)
[ "$planted" = 0 ] || wh_as alice delete pvc etcd-a-etcd-a-0 --wait=false >/dev/null 2>&1
if [ "$planted" = 1 ] && ! kc -n shoot get pvc etcd-a-etcd-a-0 >/dev/null 2>&1; then
    hole "control: alice deleted member PVC etcd-a-etcd-a-0 herself (protection on)"
else held "control: alice's delete of member PVC etcd-a-etcd-a-0 refused"; fi

# ---- G1: the owner goes, the garbage collector deletes the claim
if [ "$planted" = 0 ]; then
    held "G1: alice's member-named PVC with an owner of hers refused at creation"
else
    wh_as alice delete configmap bait >/dev/null || wh_fail "alice cannot delete her ConfigMap"
    for _ in $(seq 1 50); do # the garbage collector acts in the background: 10 s at most
        kc -n shoot get pvc etcd-a-etcd-a-0 >/dev/null 2>&1 || break
        sleep 0.2
    done
    ts=$(kc -n shoot get pvc etcd-a-etcd-a-0 -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)
    if ! kc -n shoot get pvc etcd-a-etcd-a-0 >/dev/null 2>&1 || [ -n "$ts" ]; then
        hole "G1: the garbage collector deleted PVC etcd-a-etcd-a-0 of running member etcd-a-0 (StatefulSet at $(kc -n shoot get statefulset etcd-a -o jsonpath='{.spec.replicas}'), protection on, no snapshot) after alice deleted the ConfigMap she made its owner"
    else held "G1: the garbage collector's delete of the member PVC refused"; fi
fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a running member's volume deleted without a final snapshot"; exit 1; }
echo "attack3_gc_owner: ok"
