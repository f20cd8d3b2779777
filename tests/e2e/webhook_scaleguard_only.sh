#!/usr/bin/env bash
# The scale-down guard alone (/webhooks/scaleguard), registered as the chart registers it with
# webhook.componentProtection=false, where etcd-druid's own component webhook protects the
# components: a managed StatefulSet of an Etcd with a backup store cannot go to 0 replicas
# (patch or `kubectl scale`, a person or etcd-druid) on a full snapshot of this hibernation:
# only warden-controller's patch of the StatefulSet it checked that snapshot against does, in
# phase ScalingDown; nor be deleted with its pods; a request that also drops the
# managed-by or part-of label is judged by the old object, and only the reconcilers change
# those labels; what only component protection refuses (a person labelling or scaling a
# StatefulSet) goes through, as it is left to etcd-druid's webhook.
set -euo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
# The chart's two guard entries (templates/webhookconfigurations.yaml), and nothing else.
kc apply -f - >/dev/null <<EOT
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
EOT
druid_etcd shoot etcd-main

M="scaling StatefulSet shoot/etcd-main to 0 replicas needs a full snapshot of Etcd etcd-main taken for this hibernation"

CUT=$(date -u +%Y-%m-%dT%H:%M:%SZ)
wh_as warden annotate etcd etcd-main --overwrite "etcd-warden.io/traffic-cut-at=$CUT" \
    etcd-warden.io/hibernation-phase=ScalingDown >/dev/null
# the webhook's caches hold the StatefulSet once the guard refuses its scale-down
ksim_wait 20 wh_denied "x" "$M" druid patch statefulset etcd-main --type merge \
    -p '{"spec":{"replicas":0}}' >/dev/null || wh_fail "the guard never refused etcd-druid's patch"
wh_denied "etcd-druid's patch to 0" \
    "admission webhook \"scaleguard.webhooks.etcd-warden.io\" denied the request: $M" druid \
    patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}'
wh_denied "a person's kubectl scale to 0" \
    "admission webhook \"stsscale.scaleguard.webhooks.etcd-warden.io\" denied the request: $M" \
    alice scale statefulset etcd-main --replicas=0
# the labels that decide whether a request is checked are read from the old object
DROP_MANAGED='[{"op":"remove","path":"/metadata/labels/app.kubernetes.io~1managed-by"},{"op":"replace","path":"/spec/replicas","value":0}]'
wh_denied "a person's JSON patch dropping managed-by and scaling to 0" "$M" alice \
    patch statefulset etcd-main --type json -p "$DROP_MANAGED"
wh_denied "a person's merge patch part-of: nope and scaling to 0" "$M" alice \
    patch statefulset etcd-main --type merge \
    -p '{"metadata":{"labels":{"app.kubernetes.io/part-of":"nope"}},"spec":{"replicas":0}}'
wh_denied "etcd-druid's JSON patch dropping managed-by and scaling to 0" "$M" druid \
    patch statefulset etcd-main --type json -p "$DROP_MANAGED"
wh_denied "a person removing managed-by" \
    "label app.kubernetes.io/managed-by of StatefulSet shoot/etcd-main cannot be changed from \"etcd-druid\" to (removed) by alice" \
    alice label statefulset etcd-main app.kubernetes.io/managed-by-
wh_denied "a person deleting the StatefulSet with its pods" \
    "admission webhook \"scaleguard.webhooks.etcd-warden.io\" denied the request: deleting StatefulSet shoot/etcd-main needs a full snapshot of Etcd etcd-main" \
    alice delete statefulset etcd-main --wait=false
[ "$(kc -n shoot get statefulset etcd-main -o jsonpath='{.spec.replicas} {.metadata.labels.app\.kubernetes\.io/managed-by} {.metadata.labels.app\.kubernetes\.io/part-of}')" = "3 etcd-druid etcd-main" ] ||
    wh_fail "the StatefulSet changed: $(kc -n shoot get statefulset etcd-main -o jsonpath='{.spec.replicas} {.metadata.labels}')"
echo "ok: the StatefulSet kept 3 replicas and its labels"
# component protection alone would refuse these two: here they are etcd-druid's webhook's
wh_allowed "a person's label UPDATE (component protection is etcd-druid's)" alice \
    label statefulset etcd-main example.com/team=storage
wh_denied "a person's scale to 1" \
    "admission webhook \"stsscale.scaleguard.webhooks.etcd-warden.io\" denied the request: scaling StatefulSet shoot/etcd-main from 3 to 1 replicas" \
    alice scale statefulset etcd-main --replicas=1

# a task counts when created after the second of the cut
past_cut() { test "$(date -u +%s)" -gt "$(date -u -d "$CUT" +%s)"; }
ksim_wait 10 past_cut || wh_fail "the clock never passed $CUT"
kc -n shoot apply -f - >/dev/null <<EOT
apiVersion: druid.gardener.cloud/v1alpha1
kind: EtcdOpsTask
metadata: {name: snap-main}
spec: {etcdName: etcd-main, config: {onDemandSnapshot: {type: full}}}
EOT
kc_druid -n shoot patch etcdopstask snap-main --subresource=status --type merge \
    -p '{"status":{"state":"Succeeded"}}' >/dev/null
# checked by warden-controller against the StatefulSet as it is now (its uid and generation)
wh_as warden annotate etcd etcd-main --overwrite "etcd-warden.io/final-snapshot-checked=$(kc -n shoot \
    get statefulset etcd-main -o jsonpath='{.metadata.uid}/{.metadata.generation}')" >/dev/null
ksim_wait 10 wh_denied "x" "only warden-controller scales to 0 on a final snapshot" alice \
    scale statefulset etcd-main --replicas=0 >/dev/null 2>&1 ||
    wh_fail "a person's scale to 0 on the snapshot was not refused as such"
echo "ok: with this hibernation's snapshot a person still does not scale to 0"
wh_allowed "with this hibernation's checked snapshot warden-controller patches to 0" warden \
    patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}'
echo "ok: with this hibernation's checked snapshot warden-controller scales to 0"
wh_stop
echo PASS
