#!/usr/bin/env bash
# kubectl against kube-sim's ReplicaSets and DaemonSets (api-resources, create, get tables and
# YAML, apply, status through /status, scale, get rs,ds, get all, delete) and its refusal of
# Pods whose volumes or volume mounts kube-apiserver refuses.
set -euo pipefail
. "$(dirname "$0")/../lib/kubesim.sh"
kubesim_start
work=$KSIM_DIR/work
mkdir -p "$work"

expect() { # expect <description> <needle> <haystack>
    case "$3" in *"$2"*) ;; *) ksim_fail "$1: expected '$2' in: $3" ;; esac
}

out=$(kc api-resources)
expect "api-resources" "daemonsets                        ds           apps/v1" "$out"
expect "api-resources" "replicasets                       rs           apps/v1" "$out"
expect "api-resources kind" "true         ReplicaSet" "$out"

cat >"$work/rs.yaml" <<'Y'
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: front
  labels: {app: front}
spec:
  replicas: 3
  selector: {matchLabels: {app: front}}
  template:
    metadata: {labels: {app: front}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.25"}
Y
cat >"$work/ds.yaml" <<'Y'
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {kubernetes.io/os: linux, disk: ssd}
      containers:
      - {name: agent, image: busybox}
Y

# create, get, get -o yaml
expect "create rs" "replicaset.apps/front created" "$(kc create -f "$work/rs.yaml")"
expect "create ds" "daemonset.apps/agent created" "$(kc create -f "$work/ds.yaml")"
out=$(kc create -f "$work/rs.yaml" 2>&1 || true)
expect "create twice" 'replicasets.apps "front" already exists' "$out"
out=$(kc get rs)
expect "rs table" "NAME    DESIRED   CURRENT   READY   AGE" "$out"
expect "rs row" "front   3         0         0" "$out"
out=$(kc get ds)
expect "ds table" \
    "NAME    DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR                     AGE" "$out"
expect "ds row" "agent   0         0         0       0            0           disk=ssd,kubernetes.io/os=linux" "$out"
out=$(kc get rs front -o yaml)
expect "rs yaml" "kind: ReplicaSet" "$out"
expect "rs status" "replicas: 0" "$out"
out=$(kc get ds agent -o yaml)
expect "ds strategy default" "type: RollingUpdate" "$out"
expect "ds status" "desiredNumberScheduled: 0" "$out"
[ "$(kc get ds agent -o jsonpath='{.spec.updateStrategy.rollingUpdate.maxUnavailable}')" = 1 ] \
    || ksim_fail "DaemonSet maxUnavailable default"

# both kinds at once, and in the category all
out=$(kc get rs,ds -o name)
expect "get rs,ds" "replicaset.apps/front" "$out"
expect "get rs,ds" "daemonset.apps/agent" "$out"
out=$(kc get all -o name)
expect "get all" "replicaset.apps/front" "$out"
expect "get all" "daemonset.apps/agent" "$out"

# apply, status through /status, scale
expect "apply rs" "replicaset.apps/front configured" "$(kc apply -f "$work/rs.yaml" 2>/dev/null)"
expect "apply unchanged" "replicaset.apps/front unchanged" "$(kc apply -f "$work/rs.yaml")"
sed -i 's/image: busybox/image: "busybox:1.36"/' "$work/ds.yaml"
expect "apply ds" "daemonset.apps/agent configured" "$(kc apply -f "$work/ds.yaml" 2>/dev/null)"
[ "$(kc get ds agent -o jsonpath='{.metadata.generation}')" = 2 ] || ksim_fail "ds generation"
kc patch ds agent --subresource=status --type=merge -p '{"status":{"desiredNumberScheduled":2,
    "currentNumberScheduled":2,"numberReady":1,"updatedNumberScheduled":2,"numberAvailable":1}}' \
    >/dev/null
expect "ds status columns" "agent   2         2         1       2            1" "$(kc get ds agent)"
kc patch rs front --subresource=status --type=merge -p '{"status":{"replicas":3,"readyReplicas":2}}' \
    >/dev/null
expect "rs status columns" "front   3         3         2" "$(kc get rs front)"
expect "scale rs" "replicaset.apps/front scaled" "$(kc scale rs front --replicas=1)"
[ "$(kc get rs front -o jsonpath='{.spec.replicas}')" = 1 ] || ksim_fail "scale rs"
out=$(kc scale ds agent --replicas=1 2>&1 || true)
expect "no ds scale" "Error from server (NotFound): the server could not find the requested resource" "$out"

# validation as kube-apiserver's: selector against template labels
sed 's/labels: {app: front}}/labels: {app: other}}/' "$work/rs.yaml" >"$work/rs-bad.yaml"
out=$(kc create -f "$work/rs-bad.yaml" 2>&1 || true)
expect "selector mismatch" 'The ReplicaSet "front" is invalid: spec.template.metadata.labels' "$out"

# a Pod's volumes: names unique, mounts naming a volume, one mountPath once per container
pod() { # pod <name> <volumes yaml> <mounts yaml>
    printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  volumes: %s\n  containers:\n  - name: c\n    image: busybox\n    volumeMounts: %s\n' \
        "$1" "$2" "$3"
}
pod p1 '[{name: data, emptyDir: {}}, {name: data, emptyDir: {}}]' '[{name: data, mountPath: /a}]' \
    >"$work/p1.yaml"
out=$(kc create -f "$work/p1.yaml" 2>&1 || true)
expect "duplicate volume" 'The Pod "p1" is invalid: spec.volumes[1].name: Duplicate value: "data"' "$out"
pod p2 '[{name: data, emptyDir: {}}]' '[{name: conf, mountPath: /a}]' >"$work/p2.yaml"
out=$(kc create -f "$work/p2.yaml" 2>&1 || true)
expect "mount of no volume" \
    'The Pod "p2" is invalid: spec.containers[0].volumeMounts[0].name: Not found: "conf"' "$out"
pod p3 '[{name: data, emptyDir: {}}, {name: conf, emptyDir: {}}]' \
    '[{name: data, mountPath: /a}, {name: conf, mountPath: /a}]' >"$work/p3.yaml"
out=$(kc create -f "$work/p3.yaml" 2>&1 || true)
expect "mountPath twice" \
    'The Pod "p3" is invalid: spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/a": must be unique' \
    "$out"
[ -z "$(kc get pods -o name)" ] || ksim_fail "an invalid Pod was stored: $(kc get pods -o name)"
pod p4 '[{name: data, emptyDir: {}}, {name: conf, emptyDir: {}}]' \
    '[{name: data, mountPath: /a}, {name: conf, mountPath: /b}]' >"$work/p4.yaml"
expect "valid pod" "pod/p4 created" "$(kc create -f "$work/p4.yaml")"

# delete
expect "delete" 'replicaset.apps "front" deleted' "$(kc delete rs front)"
expect "delete" 'daemonset.apps "agent" deleted' "$(kc delete -f "$work/ds.yaml")"
[ -z "$(kc get rs,ds -o name)" ] || ksim_fail "left after delete: $(kc get rs,ds -o name)"
echo "kubesim_apps: ok"
