#!/usr/bin/env bash
# A CustomResourceDefinition is served as soon as it is created: kubectl uses the new kind
# with its short names, printer columns, status and scale subresources; deleting the CRD
# takes its objects and the resource away.
set -euo pipefail
. "$(dirname "$0")/../lib/kubesim.sh"
kubesim_start
src=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$KSIM_DIR/work
mkdir -p "$work"

expect() {
    case "$3" in *"$2"*) ;; *) ksim_fail "$1: expected '$2' in: $3" ;; esac
}

cat >"$work/crd.yaml" <<'Y'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd], categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.size, statusReplicasPath: .status.size}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Phase, type: string, jsonPath: .status.phase}
Y
cat >"$work/widget.yaml" <<'Y'
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1}
spec: {size: 2}
status: {phase: ignored}
Y

kc apply -f "$work/crd.yaml" >/dev/null
[ "$(kc get crd widgets.example.com -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" = True ] \
    || ksim_fail "the CRD is not Established"
expect "create a custom resource" "widget.example.com/w1 created" "$(kc apply -f "$work/widget.yaml")"
out=$(kc get wd)
expect "printer columns" "NAME   SIZE   PHASE" "$out"
expect "printer values" "w1     2" "$out"
expect "category all" "widget.example.com/w1" "$(kc get all)"
[ -z "$(kc get widget w1 -o jsonpath='{.status}')" ] || ksim_fail "create must drop status"

kc patch widget w1 --subresource=status --type=merge -p '{"status":{"phase":"Running","size":2}}' >/dev/null
expect "status subresource" "Running" "$(kc get widget w1)"
kc scale widget w1 --replicas=5 >/dev/null
[ "$(kc get widget w1 -o jsonpath='{.spec.size} {.metadata.generation}')" = "5 2" ] \
    || ksim_fail "scale subresource: $(kc get widget w1 -o jsonpath='{.spec.size} {.metadata.generation}')"
out=$(kc patch widget w1 -p '{"spec":{"size":1}}' 2>&1 || true)
expect "no strategic merge for custom resources" "the body of the request was in an unknown format" "$out"
kc patch widget w1 --type=merge -p '{"spec":{"size":1}}' >/dev/null

# the project's CRDs (etcd-druid's Etcd with status and scale, EtcdOpsTask, EtcdStatusBackup)
kc apply -f "$src/charts/etcd-warden/crds/" >/dev/null
cat >"$work/etcd.yaml" <<'Y'
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: main}
spec: {replicas: 3, labels: {app: etcd}, selector: {matchLabels: {app: etcd}}, etcd: {}, backup: {}}
Y
kc apply -f "$work/etcd.yaml" >/dev/null
kc patch etcd main --subresource=status --type=merge \
    -p '{"status":{"ready":true,"replicas":3,"conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
expect "Etcd columns" "main   true    True" "$(kc get etcd)"
kc scale etcd main --replicas=0 >/dev/null
[ "$(kc get etcd main -o jsonpath='{.spec.replicas}')" = 0 ] || ksim_fail "Etcd scale"

kc delete crd widgets.example.com >/dev/null
out=$(kc get widgets 2>&1 || true)
case "$out" in
    *"doesn't have a resource type"*|*"could not find the requested resource"*) ;;
    *) ksim_fail "widgets still served: $out" ;;
esac
echo "kubesim_crd: ok"
