#!/usr/bin/env bash
# warden-webhook end to end on kube-sim, driven with kubectl as different users:
# registered through webhook configurations shaped like etcd-druid's chart (the
# component webhook with an objectSelector on managed-by, the statefulsets/scale
# webhook without) plus the Etcd validating and mutating webhooks; then every
# component-protection rule, the restoring rules and the mutating patches,
# asserting what kubectl prints.
set -euo pipefail
. "$(dirname "$0")/../lib/webhook.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

DRUID=system:serviceaccount:etcd-druid:etcd-druid
WARDEN=system:serviceaccount:etcd-warden:warden-controller
GC=system:serviceaccount:kube-system:generic-garbage-collector
MEMBER=system:serviceaccount:shoot:etcd-main
wh_init
cat >"$WH_DIR/tokens.csv" <<EOF
admin-token,admin,u-admin,"system:masters"
druid-token,$DRUID,u-druid,"system:serviceaccounts"
warden-token,$WARDEN,u-warden,"system:serviceaccounts"
gc-token,$GC,u-gc,"system:serviceaccounts"
member-token,$MEMBER,u-member,"system:serviceaccounts"
alice-token,alice,u-alice,"dev"
EOF

wh_certs
kubesim_start --token-file "$WH_DIR/tokens.csv" --service-alias "$(wh_alias)"
wh_etcd_crd
wh_start --reconciler-service-account "$DRUID" --reconciler-service-account "$WARDEN" \
    --etcd-components-webhook-exempt-service-accounts "$GC" \
    --webhook-server-tls-server-cert-dir "$WH_DIR/certs"

# etcd-druid's configuration, then the etcd-warden ones.
wh_register_druid
wh_register_etcd --components

# As denied, retrying until the webhook's cache has caught up with a change.
denied_soon() {
    if ! ksim_wait 10 wh_denied "$@" >/dev/null 2>&1; then
        wh_denied "$@"
        return
    fi
    echo "ok: $1"
}

COMP='admission webhook "etcdcomponents.webhooks.druid.gardener.cloud" denied the request: '
SCALE='admission webhook "stsscale.etcdcomponents.webhooks.druid.gardener.cloud" denied the request: '
# StatefulSets and member PVCs: the chart's members entry (no objectSelector)
MEMBERS='admission webhook "members.etcdcomponents.webhooks.etcd-warden.io" denied the request: '
deny_msg() { # user
    echo "changes from service account $1 are disallowed at the moment. Please consider disabling component protection by setting annotation \`druid.gardener.cloud/disable-etcd-component-protection\` on the parent Etcd resource"
}

# ---- an Etcd and its components, created by etcd-druid
wh_etcd shoot etcd-main
LABELS=$(wh_managed_labels etcd-main)
wh_as druid apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ConfigMap
metadata: {name: etcd-main-config, labels: $LABELS}
data: {etcd.conf.yaml: "name: etcd-config\ndata-dir: /var/etcd/data/new.etcd\n"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: etcd-main-scratch, labels: $LABELS}
---
apiVersion: v1
kind: Service
metadata: {name: etcd-main-client, labels: $LABELS}
spec: {ports: [{name: client, port: 2379}]}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: etcd-main, labels: $LABELS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: etcd-main, labels: $LABELS}
rules: []
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: etcd-main-0, labels: $LABELS}
spec: {holderIdentity: etcd-main-0}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: etcd-main, labels: $LABELS}
spec: {minAvailable: 2, selector: {matchLabels: $LABELS}}
---
$(wh_statefulset etcd-main)
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: etcd-main-etcd-main-0, labels: $LABELS}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unmanaged}
EOF

# ---- component protection
wh_denied "a person edits a managed ConfigMap" "$COMP$(deny_msg alice)" \
    alice label configmap etcd-main-config edited=yes
wh_denied "a person deletes the client Service" "$COMP$(deny_msg alice)" \
    alice delete service etcd-main-client
wh_denied "a person edits the Role" "$COMP$(deny_msg alice)" alice label role etcd-main x=y
wh_denied "a person edits the PDB" "$COMP$(deny_msg alice)" alice label pdb etcd-main x=y
wh_denied "a person scales the StatefulSet" "$SCALE$(deny_msg alice)" \
    alice scale statefulset etcd-main --replicas=5
wh_denied "a person scales the StatefulSet down to fewer members" \
    "scaling StatefulSet shoot/etcd-main from 3 to 1 replicas (its members 1..2 are deleted) is refused" \
    alice scale statefulset etcd-main --replicas=1
wh_denied "a person deletes a member's PVC" \
    "${MEMBERS}PersistentVolumeClaim shoot/etcd-main-etcd-main-0 cannot be deleted by alice: it is the volume of running member etcd-main-0 of Etcd etcd-main" \
    alice delete pvc etcd-main-etcd-main-0
wh_allowed "a person edits an unmanaged ConfigMap" alice label configmap unmanaged x=y
wh_allowed "etcd-druid edits a managed ConfigMap" druid label configmap etcd-main-config by=druid
wh_allowed "warden-controller edits a managed ConfigMap" warden label configmap etcd-main-config \
    by=warden --overwrite
wh_allowed "etcd-druid scales the StatefulSet" druid scale statefulset etcd-main --replicas=3
wh_allowed "an etcd member renews its Lease" member annotate lease etcd-main-0 renew=1
wh_denied "an etcd member edits a ConfigMap" "$COMP$(deny_msg "$MEMBER")" \
    member label configmap etcd-main-config x=y
wh_allowed "the exempt service account edits while the Etcd is idle" gc label service \
    etcd-main-client gc=yes

# Etcd being reconciled: the exempt service account is refused too.
kc -n shoot patch etcd etcd-main --subresource=status --type=merge \
    -p '{"status":{"lastOperation":{"type":"Reconcile","state":"Processing"}}}' >/dev/null
denied_soon "the exempt service account during a reconciliation" "$COMP$(deny_msg "$GC")" \
    gc label service etcd-main-client gc=again --overwrite

# Etcd being deleted: only the reconcilers and exempt accounts may delete.
kc -n shoot patch etcd etcd-main --subresource=status --type=merge \
    -p '{"status":{"lastOperation":{"type":"Delete","state":"Processing"}}}' >/dev/null
denied_soon "a person deletes during the deletion of the Etcd" \
    "${COMP}no external intervention allowed during ongoing deletion of Etcd etcd-main by etcd-druid" \
    alice delete configmap etcd-main-scratch
wh_allowed "the exempt service account deletes during the deletion" gc delete configmap \
    etcd-main-scratch

# The protection annotation on the Etcd turns it off.
kc -n shoot annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= \
    >/dev/null
ksim_wait 10 wh_as alice label configmap etcd-main-config protection=off ||
    wh_fail "the disable annotation was not honoured"
echo "ok: protection disabled by the Etcd annotation"

# ---- the restoring rules
EW='admission webhook "etcd.webhooks.etcd-warden.io" denied the request: '
wh_restored_etcd shoot etcd-restored true '{store: {prefix: ""}}'
got=$(kc -n shoot get etcd etcd-restored \
    -o jsonpath='{.metadata.labels.etcd-warden\.io/restoring}|{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')
[ "$got" = "|true" ] || wh_fail "the mutating webhook did not mark the restored Etcd: '$got'"
wh_is_restoring shoot etcd-restored || wh_fail "no restoring label"
echo "ok: a re-created Etcd is marked restoring and suspended"

wh_denied "a spec change while restoring" \
    "spec changes not allowed while etcd-warden.io/restoring label exists" \
    admin patch etcd etcd-restored --type=merge -p '{"spec":{"replicas":3}}'
# KubeDirector's form: the reasons start on a new line after the API server's prefix.
out=$(kc -n shoot patch etcd etcd-restored --type=merge -p '{"spec":{"replicas":3}}' 2>&1) || true
[ "$out" = "Error from server (Forbidden): $EW
spec changes not allowed while etcd-warden.io/restoring label exists" ] ||
    wh_fail "unexpected form of the restoring denial: $out"
# kubectl scale etcd goes through etcds/scale, whose Scale shows no labels: the Etcd is looked up
ksim_wait 10 wh_denied "x" "spec changes not allowed while etcd-warden.io/restoring label exists" \
    admin scale etcd etcd-restored --replicas=5 >/dev/null 2>&1 ||
    wh_denied "kubectl scale etcd while restoring (etcds/scale)" \
        "spec changes not allowed while etcd-warden.io/restoring label exists" \
        admin scale etcd etcd-restored --replicas=5
echo "ok: kubectl scale etcd while restoring (etcds/scale) is refused as a patch is"
wh_denied "a delete while restoring" \
    "delete not allowed while etcd-warden.io/restoring label exists, unless etcd-warden.io/allow-delete-while-restoring label also exists" \
    admin delete etcd etcd-restored
wh_denied "leaving the restoring state with an invalid Etcd" \
    "etcd-warden.io/restoring label cannot be removed: spec.backup.store.prefix is missing although a store is set" \
    admin label etcd etcd-restored etcd-warden.io/restoring-
wh_denied "leaving the restoring state together with a spec change" \
    "spec changes not allowed while etcd-warden.io/restoring label exists" admin patch etcd etcd-restored --type=merge \
    -p '{"metadata":{"labels":{"etcd-warden.io/restoring":null}},"spec":{"backup":{"store":{"prefix":"shoot--r"}}}}'
wh_allowed "a metadata edit while restoring" admin label etcd etcd-restored team=storage
wh_allowed "the allow-delete label while restoring" admin label etcd etcd-restored \
    etcd-warden.io/allow-delete-while-restoring=
wh_allowed "a delete with the allow-delete label" admin delete etcd etcd-restored

wh_restored_etcd shoot etcd-back false '{store: {prefix: shoot--etcd-back}}' '{team: storage}'
wh_is_restoring shoot etcd-back || wh_fail "no restoring label next to existing labels"
# gardenlet's reconcile (GetAndCreateOrMergePatch) writes the Etcd's labels whole beside its
# timestamp: its merge patch drops every other label. The restore goes on: the label is put back.
out=$(wh_as admin patch etcd etcd-back --type=merge -p '{"metadata":{"annotations":{
    "gardener.cloud/operation":"reconcile","gardener.cloud/timestamp":"2026-11-30T20:00:00Z"},
    "labels":{"etcd-warden.io/restoring":null,"team":null,"role":"main",
    "gardener.cloud/role":"controlplane"}}}' 2>&1) || wh_fail "gardenlet's merge patch refused: $out"
wh_is_restoring shoot etcd-back || wh_fail "gardenlet's merge patch ended the restore: $out"
[ "$(kc -n shoot get etcd etcd-back -o jsonpath='{.metadata.labels.team}|{.metadata.labels.role}')" = "|main" ] ||
    wh_fail "gardenlet's labels were not written: $(kc -n shoot get etcd etcd-back -o jsonpath='{.metadata.labels}')"
grep -q "^Warning: metadata.labels\[etcd-warden.io/restoring\] kept: it was removed together with other changes" <<<"$out" ||
    wh_fail "kubectl printed no warning for the label put back: $out"
echo "ok: gardenlet's merge patch of the labels keeps the restore going, with a warning"
wh_allowed "leaving the restoring state with a valid Etcd" admin label etcd etcd-back \
    etcd-warden.io/restoring-
wh_allowed "a spec change once restored" admin patch etcd etcd-back --type=merge \
    -p '{"spec":{"replicas":3}}'
wh_allowed "kubectl scale etcd once restored" admin scale etcd etcd-back --replicas=5

# ---- etcd-druid's CRD rule on spec.replicas, answered as kube-apiserver answers the rule
# (422 Invalid, the field error in details): kubectl prints what it prints for the CRD
INV='The Etcd "etcd-back" is invalid: spec.replicas: Invalid value: "integer": Replicas can either be increased or be downscaled to 0.'
out=$(kc -n shoot patch etcd etcd-back --type=merge -p '{"spec":{"replicas":3}}' 2>&1) &&
    wh_fail "Etcd etcd-back lowered 5 -> 3: $out"
[ "$out" = "$INV" ] || wh_fail "kubectl printed for Etcd etcd-back lowered 5 -> 3: $out"
echo "ok: a partial scale-down of an Etcd is Invalid, as etcd-druid's CRD rule answers"
out=$(kc -n shoot scale etcd etcd-back --replicas=1 2>&1) && wh_fail "kubectl scale etcd 5 -> 1: $out"
[ "$out" = "$INV" ] || wh_fail "kubectl printed for kubectl scale etcd 5 -> 1: $out"
[ "$(kc -n shoot get etcd etcd-back -o jsonpath='{.spec.replicas}')" = 5 ] ||
    wh_fail "Etcd etcd-back is no longer at 5 replicas"
echo "ok: kubectl scale etcd 5 -> 1 is Invalid too"

# ---- owner references of restored components
uid=$(kc -n shoot get etcd etcd-back -o jsonpath='{.metadata.uid}')
ref() { # uid
    echo "{apiVersion: druid.gardener.cloud/v1alpha1, kind: Etcd, name: etcd-back, uid: $1, controller: true}"
}
BACK=$(wh_managed_labels etcd-back)
wh_as druid apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ConfigMap
metadata: {name: restored-stale, labels: $BACK, ownerReferences: [$(ref 0000-old-uid)]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: restored-live, labels: $BACK, ownerReferences: [$(ref "$uid")]}
EOF
got=$(wh_as druid get configmap restored-stale -o jsonpath='{.metadata.ownerReferences}')
[ -z "$got" ] || wh_fail "the stale owner reference was kept: $got"
got=$(wh_as druid get configmap restored-live -o jsonpath='{.metadata.ownerReferences[0].uid}')
[ "$got" = "$uid" ] || wh_fail "the live owner reference was dropped: '$got'"
echo "ok: stale owner references dropped, live ones kept"

# ---- the webhook logs the review uid; SIGTERM drains and exits
grep -q '"msg":"admission review".*"uid":"[0-9a-f-]\{8,\}"' "$WH_LOG" ||
    wh_fail "no review log line with a uid"
wh_stop
grep -q 'webhook server stopped' "$WH_LOG" || wh_fail "no drain on SIGTERM"
echo "webhook_kubectl: all checks passed"
