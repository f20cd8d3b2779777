#!/usr/bin/env bash
# A hibernated Etcd's member claims freed after its prefix was respelled with a leading "/", on
# kube-sim with warden-webhook, warden-controller and backup-double. This round's item 4 (the
# final-snapshot store), issue 29 item 3 ("/p writes and lists /p/v2/...").
# docs/toggles.md (final-snapshot-store): "a hibernated Etcd's member claims may go only while it
# equals the stamp made afresh of the store the Etcd names"; docs/hibernation.md: the stamp
# compares stores "(one store and prefix as BackupEntries compare them)", and BackupEntries take
# the prefix "without a leading /" (docs/backup-entries.md). docs/warden-snapshot.md: "From
# etcd-backup-restore v0.37.0 (what etcd-druid v0.37 ships: v0.41.2, v0.43.0) the S3 client is
# aws-sdk-go-v2, which keeps the /: the same prefix is then the objects /pl/x/..." (and ABS and
# GCS keep it in every version). So for the sidecar etcd-druid ships, p and /p are two sets of
# keys: the final snapshot written under p/ is not what a sidecar of /p lists and restores.
#   G1. Etcd g1/etcd-main (S3, prefix g1--etcd-main, the template's sidecar on it; 3 members,
#       writes acknowledged) hibernated: final snapshot under g1--etcd-main/, stamp made, at 0.
#       alice (namespace edit rights) sets spec.backup.store.prefix to /g1--etcd-main (warden-
#       webhook counts it as the same claim: no move), disables protection and deletes the
#       member claims.
#   G2. the same with prefix g2--etcd-main-2 (another prefix): the claims are refused (the
#       stamp's rule at work).
#   G0. control: g0/etcd-main hibernated, no edit: its claims go.
# Oracle: what kube-sim stores and backup-double records: the final snapshot (every acknowledged
# write) answered by sidecars whose template writes the keys g1--etcd-main/..., and the member
# claims deleted while the Etcd names /g1--etcd-main (the wake's members start on new claims and
# the sidecar etcd-druid v0.37 ships restores from the keys /g1--etcd-main/...: nothing there).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage

stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
spec_store() { kc -n "$1" get etcd etcd-main -o jsonpath='{.spec.backup.store.container}/{.spec.backup.store.prefix}'; }
sidecar_store() { # the store the template's sidecar writes: STORAGE_CONTAINER/--store-prefix
    kc -n "$1" get statefulset etcd-main -o json | jq -r '.spec.template.spec.containers[]
        | select(.name == "backup-restore")
        | ((.env // [] | map(select(.name == "STORAGE_CONTAINER"))[0].value) + "/"
           + (.args | map(select(startswith("--store-prefix=")))[0] | ltrimstr("--store-prefix=")))'
}
gone() { # NS PVC: deleted or being deleted
    local ts
    ts=$(kc -n "$1" get pvc "$2" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}

declare -A URL SNAP_STORE
for ns in g0 g1 g2; do
    druid_etcd $ns etcd-main
    # the sidecar as etcd-druid builds it for spec.backup.store (provider, prefix, container)
    c=$(kc -n $ns get statefulset etcd-main -o json | jq -c --arg p "$ns--etcd-main" '.spec.template.spec.containers[1]
        | .args = ["server", "--server-port=8080", "--storage-provider=S3", "--store-prefix=\($p)"]
        | .env = [{name: "STORAGE_CONTAINER", value: "etcd-bucket"}]')
    kc_druid -n $ns patch statefulset etcd-main --type json \
        -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/1\",\"value\":$c}]" >/dev/null ||
        ctl_fail "$ns: etcd-druid cannot build its sidecar's store into the template"
    kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$ns: cannot roll the pods"
    ksim_wait 10 bash -c "[ -z \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $ns get pods -o name)\" ]" || ctl_fail "$ns: the pods did not go"
    druid_pods $ns etcd-main 3
    for i in 0 1 2; do
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
    done | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the member claims of $ns"
    druid_double_for $ns etcd-main
    URL[$ns]=$DRUID_DOUBLE_URL
    curl -sf -X POST "${URL[$ns]}/admin/write?n=5" >/dev/null || ctl_fail "$ns: the double takes no writes"
    [ "$(sidecar_store $ns)" = "$(spec_store $ns)" ] || ctl_fail "$ns: the template's sidecar store $(sidecar_store $ns) is not the Etcd's $(spec_store $ns)"
done
ctl_start

for ns in g0 g1 g2; do
    kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate $ns"
done
for ns in g0 g1 g2; do
    ctl_wait_phase $ns etcd-main Hibernated 60
    [ "$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] || ctl_fail "$ns: Hibernated, StatefulSet not at 0"
    [ -n "$(kc -n $ns get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/final-snapshot-store}')" ] ||
        ctl_fail "$ns: no final-snapshot-store stamped: $(ctl_events $ns etcd-main | tail -3 | tr '\n' ' ')"
    SNAP_STORE[$ns]=$(sidecar_store $ns)
    kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$ns: cannot delete the pods"
    w=$(last_write "${URL[$ns]}") s=$(stored_rev "${URL[$ns]}")
    [ "${s:-0}" -ge "${w:-1}" ] || ctl_fail "$ns: hibernated with write $w acknowledged and the store at ${s:-nothing}"
    echo "$ns: hibernated; the final snapshot (revision $s, every acknowledged write) written by sidecars on ${SNAP_STORE[$ns]}"
done
for p in "g1 /g1--etcd-main" "g2 g2--etcd-main-2"; do
    read -r ns prefix <<<"$p"
    out=$(WH_AS_NS=$ns wh_as alice patch etcd etcd-main --type merge -p "{\"spec\":{\"backup\":{\"store\":{\"prefix\":\"$prefix\"}}}}" 2>&1) ||
        ctl_fail "$ns: alice cannot set the prefix to $prefix: $out"
    echo "$ns: alice set the prefix to $prefix: the Etcd names $(spec_store $ns)"
done
for ns in g0 g1 g2; do
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done
wh_caught_up
WH_AS_NS=g0 wh_await_admitted 15 "control: the claims of hibernated g0/etcd-main were not deleted" \
    wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2
sleep 2
holes=0
for ns in g0 g1 g2; do
    out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
    n=0
    for i in 0 1 2; do gone $ns etcd-main-etcd-main-$i && n=$((n + 1)); done
    names=$(spec_store $ns)
    case $ns in
    g0) [ "$n" = 3 ] || ctl_fail "control: the claims of hibernated g0/etcd-main were not deleted: $out"
        echo "ok: control: G0: the claims of a hibernated Etcd go while its final snapshot is in the store it names" ;;
    g2) [ "$n" = 0 ] || ctl_fail "G2: $n claim(s) of g2/etcd-main deleted while it names another prefix: $out"
        echo "ok: G2: another prefix named: the claims are refused: $(tr '\n' ' ' <<<"$out" | head -c 200)" ;;
    g1) if [ "$n" -gt 0 ]; then
            echo "HOLE: G1: $n member claim(s) of hibernated g1/etcd-main deleted while it names $names and its final snapshot (every acknowledged write) was written by its sidecars under the keys ${SNAP_STORE[$ns]}/...: the sidecar etcd-druid v0.37 ships (aws-sdk-go-v2; ABS and GCS in every version) lists and restores the keys /g1--etcd-main/..., where no snapshot is: the wake starts on new claims with nothing to restore"
            holes=$((holes + 1))
        else echo "held: G1: the claims are refused: $(tr '\n' ' ' <<<"$out" | head -c 300)"; fi ;;
    esac
done
ctl_stop

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a hibernated Etcd's claims freed after a respelling that moves its keys for the sidecar etcd-druid ships"; exit 1; }
echo "attack15_sleep_prefix_slash: ok"
