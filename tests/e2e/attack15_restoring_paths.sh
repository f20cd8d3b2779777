#!/usr/bin/env bash
# The restoring label added to a live Etcd by a tenant on every path of an UPDATE, on kube-sim
# with warden-webhook (registered as ctl_stage registers it). This round's item 2.
# docs/toggles.md (etcd-warden.io/restoring): "Set when an Etcd is created ...; an UPDATE that
# adds it to a live Etcd is refused for anyone but warden-controller (it would stop the Etcd's
# live steps, hibernation and status backup among them, ...)".
#   R1. alice (namespace edit rights) on live Etcd r1/etcd-main: kubectl label; a server-side
#       apply (--force-conflicts) of a manifest carrying it; a patch of the status subresource
#       carrying it in metadata (kube-apiserver keeps only .status of a custom resource's
#       /status write); the same patch as cluster-admin.
#   R0. control: a CREATE carrying it (a re-created Etcd, as documented) is admitted.
# Oracle: the labels kube-sim stores on the live Etcd after each request.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
druid_etcd r1 etcd-main
wh_caught_up
uid=$(kc -n r1 get etcd etcd-main -o jsonpath='{.metadata.uid}')
labelled() { kc -n r1 get etcd etcd-main -o json | jq -e '.metadata.labels | has("etcd-warden.io/restoring")' >/dev/null; }
holes=0
try() { # tag, then the command
    local tag=$1 out
    shift
    out=$("$@" 2>&1)
    if labelled; then
        echo "HOLE: $tag: live Etcd r1/etcd-main (uid $uid) now carries etcd-warden.io/restoring: $(tr '\n' ' ' <<<"$out" | head -c 200)"
        holes=$((holes + 1))
        kc -n r1 label etcd etcd-main etcd-warden.io/restoring- >/dev/null 2>&1 || true
    else echo "held: $tag: $(tr '\n' ' ' <<<"$out" | head -c 200)"; fi
}
by_label() { WH_AS_NS=r1 wh_as alice label etcd etcd-main etcd-warden.io/restoring=; }
by_ssa() {
    printf '%s\n' "apiVersion: druid.gardener.cloud/v1alpha1" "kind: Etcd" \
        "metadata: {name: etcd-main, namespace: r1, labels: {etcd-warden.io/restoring: ''}}" |
        WH_AS_NS=r1 wh_as alice apply --server-side --force-conflicts --field-manager=alice -f -
}
by_merge() { WH_AS_NS=r1 wh_as alice patch etcd etcd-main --type merge -p '{"metadata":{"labels":{"etcd-warden.io/restoring":""}}}'; }
by_status() {
    WH_AS_NS=r1 wh_as alice patch etcd etcd-main --subresource=status --type merge \
        -p '{"metadata":{"labels":{"etcd-warden.io/restoring":""}},"status":{"ready":true}}'
}
by_status_admin() {
    kc -n r1 patch etcd etcd-main --subresource=status --type merge \
        -p '{"metadata":{"labels":{"etcd-warden.io/restoring":""}},"status":{"ready":true}}'
}
try "R1 kubectl label" by_label
try "R1 server-side apply" by_ssa
try "R1 merge patch" by_merge
try "R1 status subresource (alice)" by_status
try "R1 status subresource (cluster-admin)" by_status_admin
[ "$(kc -n r1 get etcd etcd-main -o jsonpath='{.metadata.uid}')" = "$uid" ] || ctl_fail "r1/etcd-main was re-created"

# control: a CREATE carrying the label (an Etcd re-created from a backup) is admitted
kc create namespace r0 >/dev/null
out=$(kc apply -f - 2>&1 <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-main, namespace: r0, labels: {etcd-warden.io/restoring: ""}}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080}
EOF
) || ctl_fail "control: R0: a CREATE carrying the restoring label refused: $out"
kc -n r0 get etcd etcd-main -o json | jq -e '.metadata.labels | has("etcd-warden.io/restoring")' >/dev/null ||
    ctl_fail "control: R0: the created Etcd lost the label"
echo "ok: control: R0: a CREATE carrying the restoring label admitted"
if [ "$holes" != 0 ]; then
    echo "FAIL: $holes hole(s): the restoring label added to a live Etcd by an UPDATE"
    exit 1
fi
echo "attack15_restoring_paths: ok"
