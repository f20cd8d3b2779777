#!/usr/bin/env bash
# A legitimate ConfigMap of no Etcd refused by warden-webhook's parse budget, on kube-sim with
# warden-webhook registered as the chart registers it (failurePolicy Fail). Issue 30, webhook
# limits: the body cap is kube-apiserver's own and the parse budget holds the webhook's memory;
# neither may refuse what the API server accepts and the guard has no business with.
# docs/protection.md: "Every ConfigMap CREATE and UPDATE of the cluster reaches warden-webhook
# for this; one whose name does not end in `-config`, or that is no Etcd's, is allowed after at
# most a cached Etcd lookup." A ConfigMap is at most 1 MiB; one of 40000 short keys (600 KB, in
# a namespace without any Etcd) is created, but any UPDATE of it (a label) carries it twice
# (object and oldObject): "the review is too large to decide: its parsed tree would take more
# than 4194304 bytes (the parse budget)", and the API server refuses the update. A real API
# server also sends metadata.managedFields, which names every data key once more, so there
# about half as many keys are enough. Every namespace's ConfigMaps are routed, not only etcd's.
#   B1. namespace apps (no Etcd): ConfigMap keys-40000 (40000 keys "kNNNNN": "v", 600 KB)
#       created, then labelled; and ConfigMap keys-60000 (900 KB) created.
#   B0. control: the same with 1000 keys, and with one 900 KB value: created and labelled.
# Oracle: what kube-sim stores: the label on the ConfigMap, the ConfigMap created.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
ctl_stage
kc create namespace apps >/dev/null || ctl_fail "cannot create namespace apps"
python3 - "$CTL_DIR" <<'PY' || ctl_fail "cannot write the ConfigMaps"
import json, sys
d = sys.argv[1]
def write(name, data):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "apps"}, "data": data}
    open(f"{d}/{name}.json", "w").write(json.dumps(cm))
for n in (1000, 40000, 60000):
    write(f"keys-{n}", {f"k{i:05d}": "v" for i in range(n)})
write("blob-900", {"dashboard.json": "x" * (900 * 1024)})
PY
labelled() { [ "$(kc -n apps get cm "$1" -o jsonpath='{.metadata.labels.x}' 2>/dev/null)" = y ]; }
stored() { [ -n "$(kc -n apps get cm "$1" -o jsonpath='{.metadata.name}' 2>/dev/null)" ]; }
holes=0
for cm in keys-1000 blob-900 keys-40000 keys-60000; do
    size=$(stat -c %s "$CTL_DIR/$cm.json")
    [ "$size" -lt 1048576 ] || ctl_fail "$cm is $size bytes: not a ConfigMap the API server takes"
    out=$(kc -n apps create -f "$CTL_DIR/$cm.json" 2>&1)
    if stored $cm; then
        out=$(kc -n apps label cm $cm x=y 2>&1)
        labelled $cm && { echo "ok: $cm ($size bytes) created and labelled"; continue; }
        what="labelling it"
    else what="creating it"; fi
    case $cm in
    keys-1000 | blob-900) ctl_fail "control: $what refused: $(head -c 300 <<<"$out")" ;;
    esac
    grep -F "parse budget" "$WH_LOG" | tail -1 | cut -c1-300
    echo "HOLE: ConfigMap apps/$cm ($size bytes, namespace without an Etcd, name not ending in -config) refused by warden-webhook when $what: $(head -c 250 <<<"$out")"
    holes=$((holes + 1))
done
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a ConfigMap of no Etcd, within kube-apiserver's limits, refused by the webhook's parse budget"; exit 1; }
echo "attack12_configmap_budget: ok"
