#!/usr/bin/env bash
# kubectl against kube-sim: create, apply, get (tables, -o jsonpath, -w), label, annotate,
# patch (strategic, merge, json), scale, wait, describe, delete with finalizers, namespaces.
set -euo pipefail
. "$(dirname "$0")/../lib/kubesim.sh"
kubesim_start --statefulset-delay 200ms
work=$KSIM_DIR/work
mkdir -p "$work"

expect() { # expect <description> <needle> <haystack>
    case "$3" in *"$2"*) ;; *) ksim_fail "$1: expected '$2' in: $3" ;; esac
}

cat >"$work/sts.yaml" <<'Y'
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.25"}
Y

# create / apply / get
expect "create" "statefulset.apps/web created" "$(kc create -f "$work/sts.yaml")"
out=$(kc create -f "$work/sts.yaml" 2>&1 || true)
expect "create twice" 'Error from server (AlreadyExists): error when creating' "$out"
expect "create twice" 'statefulsets.apps "web" already exists' "$out"
out=$(kc apply -f "$work/sts.yaml" 2>&1)
expect "apply over create" "statefulset.apps/web configured" "$out"
expect "apply unchanged" "statefulset.apps/web unchanged" "$(kc apply -f "$work/sts.yaml")"
out=$(kc get sts)
expect "table header" "NAME   READY   AGE" "$out"
ksim_wait 10 bash -c '[ "$(kubectl --kubeconfig "$KUBECONFIG" get sts web -o jsonpath="{.status.readyReplicas}")" = 2 ]' \
    || ksim_fail "StatefulSet status did not follow spec.replicas"
expect "ready column" "web    2/2" "$(kc get sts web)"

# label, annotate, patch in every flavour
kc label sts web tier=front >/dev/null
kc annotate sts web owner=team-a >/dev/null
expect "label selector" "web" "$(kc get sts -l 'tier in (front,back)' -o name)"
[ -z "$(kc get sts -l 'tier!=front' -o name)" ] || ksim_fail "!= selector matched"
kc patch sts web -p '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}}}' >/dev/null
[ "$(kc get sts web -o jsonpath='{.spec.template.spec.containers[*].name}')" = "nginx sidecar" ] \
    || ksim_fail "strategic merge patch did not merge containers by name"
kc patch sts web --type=merge -p '{"metadata":{"annotations":{"owner":null}}}' >/dev/null
[ -z "$(kc get sts web -o jsonpath='{.metadata.annotations.owner}')" ] || ksim_fail "merge patch null"
kc patch sts web --type=json -p '[{"op":"replace","path":"/spec/replicas","value":3}]' >/dev/null
[ "$(kc get sts web -o jsonpath='{.metadata.generation}')" = 3 ] || ksim_fail "generation"

# scale and wait
expect "scale" "statefulset.apps/web scaled" "$(kc scale sts web --replicas=1)"
kc wait --for=jsonpath='{.status.replicas}'=1 sts/web --timeout=10s >/dev/null
expect "describe" "Replicas:           1 desired" "$(kc describe sts web)"

# get -w: the initial state, then a change and the deletion as they happen
kc create configmap seen --from-literal=a=b >/dev/null
kc get cm -w --output-watch-events >"$work/watch.out" 2>&1 &
watcher=$!
ksim_on_exit "kill $watcher 2>/dev/null || true"
ksim_wait 10 grep -q 'ADDED *seen' "$work/watch.out" || ksim_fail "get -w: $(cat "$work/watch.out")"
kc label cm seen x=y >/dev/null
kc delete configmap seen >/dev/null
ksim_wait 10 grep -q 'DELETED *seen' "$work/watch.out" || ksim_fail "get -w: $(cat "$work/watch.out")"
grep -q 'MODIFIED *seen' "$work/watch.out" || ksim_fail "get -w missed MODIFIED: $(cat "$work/watch.out")"

# delete with a finalizer
kc create configmap held --from-literal=a=b >/dev/null
kc patch cm held --type=merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
kc delete cm held --wait=false >/dev/null
[ -n "$(kc get cm held -o jsonpath='{.metadata.deletionTimestamp}')" ] || ksim_fail "no deletionTimestamp"
kc patch cm held --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
out=$(kc get cm held 2>&1 || true)
expect "finalized object gone" 'Error from server (NotFound): configmaps "held" not found' "$out"

# namespaces: content goes with them; generators post protobuf
kc create namespace scratch >/dev/null
kc create secret generic s --from-literal=pw=x -n scratch >/dev/null
kc create serviceaccount robot -n scratch >/dev/null
[ "$(kc get secret s -n scratch -o jsonpath='{.data.pw}')" = "eA==" ] || ksim_fail "secret data"
expect "delete namespace" 'namespace "scratch" deleted' "$(kc delete namespace scratch --timeout=20s)"
out=$(kc get sa -n scratch 2>&1)
expect "namespace emptied" "No resources found in scratch namespace." "$out"

# server-side apply
cat >"$work/cm.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: ssa}
data: {a: "1"}
Y
expect "server-side apply" "configmap/ssa serverside-applied" "$(kc apply --server-side -f "$work/cm.yaml")"
[ "$(kc get cm ssa -o jsonpath='{.data.a}')" = 1 ] || ksim_fail "server-side apply content"

kc delete sts web >/dev/null
echo "kubesim_kubectl: ok"
