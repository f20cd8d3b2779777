#!/usr/bin/env bash
# A restore ending while hibernated, on kube-sim with warden-webhook, warden-controller and a
# backup-double: an Etcd slept on break glass (its sidecar broken: no final snapshot, writes
# only on the member claims), then its Etcd object was lost and re-created from a backup
# (Velero's stripping; its components, StatefulSet at 0 and claims kept), its restore ends (the
# status backup and components are there), and the Etcd, still hibernate=true with its
# StatefulSet at 0, goes straight to Hibernated. Then its member claims are deleted by a
# namespace editor (component protection disabled) and by etcd-druid.
# docs/protection.md: a member claim may go when its Etcd "is hibernated with a final snapshot
# of this sleep ... A sleep scaled down on break glass after the check failed has no stamps";
# docs/toggles.md: state annotations on a CREATE by anyone else are not kept.
# Oracle: kube-sim (a claim deleted or being deleted) and the double (a write acknowledged
# that no stored snapshot holds). Control: before the restore the claims cannot go.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
NS=h1
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
gone() { # PVC: deleted or being deleted
    local ts
    ts=$(kc -n $NS get pvc "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}
druid_etcd $NS etcd-main
for i in 0 1 2; do
    printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
        "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
done | kc -n $NS create -f - >/dev/null || ctl_fail "cannot create the member claims"
druid_double_for $NS etcd-main
U=$DRUID_DOUBLE_URL
curl -sf -X POST "$U/admin/write?n=5" >/dev/null || ctl_fail "the double takes no writes"
curl -sf -X POST "$U/admin/reply?code=500&count=0" >/dev/null
ctl_start
kc -n $NS annotate etcd etcd-main etcd-warden.io/hibernate=true \
    etcd-warden.io/allow-scale-down-without-snapshot="$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ) bucket lost" >/dev/null ||
    ctl_fail "cannot hibernate on break glass"
ctl_wait_phase $NS etcd-main Hibernated 90
[ "$(jp $NS sts/etcd-main '{.spec.replicas}')" = 0 ] || ctl_fail "Hibernated, StatefulSet not at 0"
kc -n $NS delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null
W=$(last_write "$U") S=$(stored_rev "$U")
[ "${S:-0}" -lt "$W" ] || ctl_fail "setup: the store holds every write ($S >= $W)"
echo "setup: slept on break glass; write $W acknowledged, the store holding ${S:-nothing}; the claims hold the rest"
kc -n $NS annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null
wh_caught_up
bad=0
out=$(WH_AS_NS=$NS wh_as alice delete pvc etcd-main-etcd-main-0 --wait=false 2>&1)
if gone etcd-main-etcd-main-0; then
    echo "FAIL: control: a claim of the Etcd slept on break glass was deleted before any restore: $out"
    bad=1
else echo "ok: control: before the restore the claims cannot go: ${out:0:200}"; fi
kc -n $NS annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection- >/dev/null

# ---- the Etcd object lost and re-created from its backup (Velero's resetMetadata/resetStatus)
kc -n $NS get etcd etcd-main -o json | jq 'del(.status, .metadata.uid, .metadata.resourceVersion,
    .metadata.creationTimestamp, .metadata.generation, .metadata.managedFields, .metadata.ownerReferences,
    .metadata.finalizers)' >"$CTL_DIR/etcd.json"
echo "backup of the Etcd carries: $(jq -c '.metadata.annotations | keys' "$CTL_DIR/etcd.json")"
out=$(kc -n $NS delete etcd etcd-main --cascade=orphan --wait=true --timeout=20s 2>&1) ||
    ctl_fail "the Etcd could not be deleted (orphaning its components): $out"
ksim_wait 20 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n $NS get etcd etcd-main >/dev/null 2>&1" || ctl_fail "the Etcd is still there"
kc get esb -n $NS etcd-main >/dev/null 2>&1 && echo "its EtcdStatusBackup is kept (orphaned)"
kc create -f "$CTL_DIR/etcd.json" >/dev/null 2>"$CTL_DIR/create.err" || ctl_fail "re-create: $(cat "$CTL_DIR/create.err")"
echo "re-created: labels $(jp $NS etcd/etcd-main '{.metadata.labels}'); state kept: $(kc -n $NS get etcd etcd-main -o json |
    jq -c '.metadata.annotations | with_entries(select(.key | test("traffic-cut-at|hibernation-phase|final-snapshot")))')"
ended() { ! kc -n $NS get etcd etcd-main -o json | jq -e '.metadata.labels | has("etcd-warden.io/restoring")' >/dev/null; }
if ! ksim_wait 30 ended; then
    echo "the restore did not end by itself ($(jp $NS etcd/etcd-main '{.metadata.annotations.etcd-warden\.io/restore-progress}' | head -c 200)); ended by hand"
    kc -n $NS label etcd etcd-main etcd-warden.io/restoring- >/dev/null || ctl_fail "cannot end the restore by hand"
fi
ctl_wait_phase $NS etcd-main Hibernated 60
echo "after the restore: phase Hibernated, $(kc -n $NS get etcd etcd-main -o json |
    jq -c '.metadata.annotations | with_entries(select(.key | test("traffic-cut-at|final-snapshot|allow-scale")))'); events: $(ctl_events $NS etcd-main | tail -3 | tr '\n' '|' | head -c 300)"
kc -n $NS annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null
wh_caught_up
holes=0
try() { # WHO PVC CMD...
    local who=$1 pvc=$2 out s
    shift 2
    out=$("$@" 2>&1 | tail -1)
    if gone "$pvc"; then
        s=$(stored_rev "$U")
        echo "HOLE: $who deleted member claim $NS/$pvc of the restored, hibernated Etcd with write $W acknowledged and the store holding ${s:-nothing}: ${out:0:160}"
        holes=$((holes + 1))
    else echo "held: $who cannot delete $pvc: ${out:0:220}"; fi
}
try alice etcd-main-etcd-main-0 kc_as alice-token -n $NS delete pvc etcd-main-etcd-main-0 --wait=false
try etcd-druid etcd-main-etcd-main-1 kc_druid -n $NS delete pvc etcd-main-etcd-main-1 --wait=false
try "the garbage collector" etcd-main-etcd-main-2 kc_as gc-token -n $NS delete pvc etcd-main-etcd-main-2 --wait=false
ctl_stop
[ "$bad" = 0 ] || ctl_fail "control failed"
if [ "$holes" != 0 ]; then
    echo "FAIL: $holes hole(s): member claims of a restored hibernated Etcd deleted with writes missing from the store"
    exit 1
fi
echo "attack18_restore_claims: ok"
