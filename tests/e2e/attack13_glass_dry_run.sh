#!/usr/bin/env bash
# Break glass and server-side dry runs, on kube-sim with warden-webhook (registered as ctl_stage
# registers it) and backup-double. Issue 30. docs/hibernation.md ("Break glass once"): "a dry
# run records nothing and is answered as the request would be".
#   Y1. break glass V, alice (protection disabled): kubectl scale --dry-run=server to 0, then
#       the real scale to 0 (must be admitted: the dry run used nothing); the operator scales
#       back to 3; a dry run of a scale to 0 again (must be refused: the value was used).
#   Y2. break glass V: alice orphan-deletes the StatefulSet, kubectl create --dry-run=server of
#       it at 0 replicas over its running members, then the real create (must be admitted).
# Oracle: what kube-sim stores (the StatefulSet's replicas) and what the dry runs answer.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
. "$(dirname "$0")/../lib/glass.sh"
replicas() { kc -n "$1" get statefulset etcd-main -o jsonpath='{.spec.replicas}' 2>/dev/null; }
expiry=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)
for ns in y1 y2; do
    druid_etcd $ns etcd-main
    kc -n $ns annotate etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$expiry bucket lost" >/dev/null ||
        ctl_fail "the operator cannot set break glass on $ns"
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done
wh_caught_up
holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }

out=$(WH_AS_NS=y1 wh_as alice scale statefulset etcd-main --replicas=0 --dry-run=server 2>&1) ||
    hole "Y1: the dry run of a scale to 0 on unused break glass is refused: $out"
[ "$(replicas y1)" = 3 ] || ctl_fail "Y1: a dry run changed the StatefulSet"
out=$(WH_AS_NS=y1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
if [ "$(replicas y1)" != 0 ]; then
    hole "Y1: after a dry run, the real scale to 0 on the break glass is refused (the dry run used it up): $(tr '\n' ' ' <<<"$out" | head -c 300)"
else
    echo "ok: Y1: the real scale to 0 admitted after its dry run"
    glass_up y1 Y1
    if out=$(WH_AS_NS=y1 wh_as alice scale statefulset etcd-main --replicas=0 --dry-run=server 2>&1); then
        hole "Y1: a dry run of a second scale to 0 on the used value is answered admitted (the real one is refused): $out"
    else
        grep -q "was used" <<<"$out" || ctl_fail "Y1: the second dry run refused for another reason: $out"
        echo "ok: Y1: a dry run on the used value is answered as the real request: refused"
    fi
fi

kc -n y2 get statefulset etcd-main -o json | jq '.spec.replicas = 0 | del(.status)
    | del(.metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp,
          .metadata.managedFields, .metadata.generation)' >"$CTL_DIR/y2-zero.json"
out=$(WH_AS_NS=y2 wh_as alice delete statefulset etcd-main --cascade=orphan --wait=false 2>&1) ||
    ctl_fail "Y2: alice's orphaning delete refused: $out"
ksim_wait 10 ksim_gone -n y2 statefulset etcd-main || ctl_fail "Y2: StatefulSet etcd-main not gone"
out=$(WH_AS_NS=y2 wh_as alice create -f "$CTL_DIR/y2-zero.json" --dry-run=server 2>&1) ||
    hole "Y2: the dry run of the re-creation at 0 on unused break glass is refused: $out"
ksim_gone -n y2 statefulset etcd-main || ctl_fail "Y2: a dry run created the StatefulSet"
out=$(WH_AS_NS=y2 wh_as alice create -f "$CTL_DIR/y2-zero.json" 2>&1)
if [ "$(replicas y2)" != 0 ]; then
    hole "Y2: after a dry run, the real re-creation at 0 on the break glass is refused: $(tr '\n' ' ' <<<"$out" | head -c 300)"
else
    echo "ok: Y2: the real re-creation at 0 admitted after its dry run"
fi
if [ "$holes" -gt 0 ]; then
    echo "FAIL: $holes hole(s): dry runs and break glass"
    exit 1
fi
echo "attack13_glass_dry_run: ok"
