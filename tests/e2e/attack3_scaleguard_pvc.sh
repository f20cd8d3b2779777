#!/usr/bin/env bash
# A member PVC relabelled and deleted, component protection ON, with the chart's
# webhook.componentProtection=false: etcd-druid's own component webhook protects the
# components (registered here with the rules etcd-druid's chart ships,
# charts/templates/validatingwebhookconfig.yaml: PVC DELETE only, by the objectSelector
# app.kubernetes.io/managed-by: etcd-druid) and etcd-warden registers the scale-down guard alone
# (StatefulSets and their scale). Issue 30 item 4 ("A PVC is relabelled and then deleted:
# admitted, because no StatefulSet matches its labels any more") was closed by the members
# entry, which the chart renders only with componentProtection on: here no webhook sees a PVC
# UPDATE, and the relabelled PVC's DELETE no longer matches etcd-druid's objectSelector.
#   L1. a namespace editor removes the managed-by label of member PVC etcd-a-etcd-a-0 of a
#       running 3-member StatefulSet, then deletes it.
# etcd-druid's webhook is played by warden-webhook's /webhooks/etcdcomponents, which answers
# as etcd-druid's handler does (docs/protection.md); neither request reaches it. Checked against
# what kube-sim stores. Fails while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
kc apply -f - >/dev/null <<EOF || wh_fail "cannot register the webhooks"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: etcd-druid}
webhooks:
$(wh_webhook etcdcomponents.webhooks.druid.gardener.cloud /webhooks/etcdcomponents "v1beta1, v1")
  matchPolicy: Exact
  objectSelector:
    matchLabels: {app.kubernetes.io/managed-by: etcd-druid}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [serviceaccounts, services, configmaps], scope: "*"}
  - {apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [persistentvolumeclaims], scope: "*"}
  - {apiGroups: [rbac.authorization.k8s.io], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [roles, rolebindings], scope: "*"}
  - {apiGroups: [apps], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [statefulsets], scope: "*"}
  - {apiGroups: [policy], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [poddisruptionbudgets], scope: "*"}
  - {apiGroups: [batch], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [jobs], scope: "*"}
  - {apiGroups: [coordination.k8s.io], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [leases], scope: "*"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: etcd-warden}
webhooks:
$(wh_webhook scaleguard.webhooks.etcd-warden.io /webhooks/scaleguard "v1beta1, v1")
  matchPolicy: Exact
  rules:
  - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE, DELETE], resources: [statefulsets], scope: "*"}
$(wh_webhook stsscale.scaleguard.webhooks.etcd-warden.io /webhooks/scaleguard "v1beta1, v1")
  matchPolicy: Exact
  rules:
  - {apiGroups: [apps], apiVersions: [v1], operations: [UPDATE], resources: [statefulsets/scale], scope: "*"}
$(wh_webhook members.scaleguard.webhooks.etcd-warden.io /webhooks/scaleguard "v1beta1, v1")
  matchPolicy: Exact
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE, DELETE], resources: [persistentvolumeclaims], scope: "*"}
$(wh_webhook etcd.webhooks.etcd-warden.io /webhooks/etcd)
  matchPolicy: Equivalent
  rules:
  - {apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [CREATE, UPDATE, DELETE], resources: [etcds], scope: Namespaced}
  - {apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [UPDATE], resources: [etcds/scale], scope: Namespaced}
EOF

druid_etcd shoot etcd-a
for i in 0 1 2; do # the member PVCs, labelled as the StatefulSet controller labels them
    cat <<EOF
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: etcd-a-etcd-a-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-a}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
done | kc -n shoot create -f - >/dev/null || wh_fail "cannot create the member PVCs"
wh_caught_up # the caches see the objects
[ "$(kc -n shoot get statefulset etcd-a -o jsonpath='{.spec.replicas}')" = 3 ] || wh_fail "etcd-a is not at 3 replicas"

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
gone() { # PVC NAME deleted or being deleted
    local ts
    ts=$(kc -n shoot get pvc "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}

# ---- control: the labelled member PVC's delete is refused (protection on)
wh_as alice delete pvc etcd-a-etcd-a-1 --wait=false >/dev/null 2>&1
if gone etcd-a-etcd-a-1; then hole "control: alice deleted labelled member PVC etcd-a-etcd-a-1 (protection on)"
else held "control: alice's delete of labelled member PVC etcd-a-etcd-a-1 refused"; fi

# ---- L1: relabel, then delete
wh_as alice label pvc etcd-a-etcd-a-0 app.kubernetes.io/managed-by- >/dev/null 2>&1
wh_as alice delete pvc etcd-a-etcd-a-0 --wait=false >/dev/null 2>&1
if gone etcd-a-etcd-a-0; then
    hole "L1: alice removed the managed-by label of member PVC etcd-a-etcd-a-0 and deleted it (StatefulSet at 3, protection on, no snapshot)"
else held "L1: relabel and delete of member PVC etcd-a-etcd-a-0 refused"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a running member's volume deleted without a final snapshot"; exit 1; }
echo "attack3_scaleguard_pvc: ok"
