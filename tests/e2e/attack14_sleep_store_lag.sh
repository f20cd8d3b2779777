#!/usr/bin/env bash
# A hibernated Etcd's member claims freed while its final snapshot lies in another store than
# the one it names, on kube-sim with warden-webhook, warden-controller and backup-double.
# Issue 30: no member PVC of an Etcd is deleted "while a write acknowledged before it is missing
# from the final snapshot". docs/toggles.md (State annotations): final-snapshot-store is "a
# stamp of the backup store the snapshot is in", and "a hibernated Etcd's member claims may go
# only while it equals the stamp made afresh of the store the Etcd names". The stamp is made
# of the Etcd's spec.backup.store; the snapshot is taken by the members' sidecars, which write
# where the StatefulSet's pod template tells them (etcd-druid builds container backup-restore
# with --storage-provider and --store-prefix and the env STORAGE_CONTAINER, docs/hibernation.md
# "How the sidecar is reached"). etcd-druid rebuilds the template only when it reconciles the
# Etcd's spec (gardener.cloud/operation: reconcile, or auto-reconcile): an edit of
# spec.backup.store without it (kubectl edit by the namespace's owner) leaves the sidecars
# writing the old store, and a hibernation right after takes its final snapshot there.
#   G1. Etcd g1/etcd-main (3 members, the template's sidecar on container etcd-bucket, prefix
#       g1--etcd-main). alice (namespace edit rights) points spec.backup.store.container at
#       etcd-bucket-2 (no reconcile follows) and hibernates it: cut, final snapshot by the
#       members' sidecars (into etcd-bucket), scaled to 0. She disables protection and deletes
#       the member claims.
#   G0. control: g0/etcd-main, the same without the edit: its claims go.
# After the fix: the stamp is made only of the store the template's sidecars write (rollout
# complete), and only when it is the one the Etcd names: G1 gets no stamp and a Warning
# FinalSnapshotStoreUnknown, and its claims are refused.
# Oracle: what kube-sim stores and backup-double records: the final snapshot (every
# acknowledged write) answered by sidecars whose template writes etcd-bucket/<prefix>, the
# member claims deleted while the Etcd names another container (the wake's members start on new
# claims and restore from the store the Etcd names once etcd-druid reconciles: nothing there).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
. "$(dirname "$0")/../lib/sleepstore.sh"

spec_store() { kc -n "$1" get etcd etcd-main -o jsonpath='{.spec.backup.store.container}/{.spec.backup.store.prefix}'; }
sidecar_store() { # the store the template's sidecar writes: STORAGE_CONTAINER/--store-prefix
    kc -n "$1" get statefulset etcd-main -o json | jq -r '.spec.template.spec.containers[]
        | select(.name == "backup-restore")
        | ((.env // [] | map(select(.name == "STORAGE_CONTAINER"))[0].value) + "/"
           + (.args | map(select(startswith("--store-prefix=")))[0] | ltrimstr("--store-prefix=")))'
}

for ns in g0 g1; do
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
    sleep_claims $ns
    sleep_double $ns
    [ "$(sidecar_store $ns)" = "$(spec_store $ns)" ] || ctl_fail "$ns: the template's sidecar store $(sidecar_store $ns) is not the Etcd's $(spec_store $ns)"
done
ctl_start

# ---- G1: the store edited without a reconcile, then the hibernation
out=$(WH_AS_NS=g1 wh_as alice patch etcd etcd-main --type merge -p '{"spec":{"backup":{"store":{"container":"etcd-bucket-2"}}}}' 2>&1) ||
    ctl_fail "G1: alice cannot edit the store of g1/etcd-main: $out"
echo "G1: alice set the store of g1/etcd-main to $(spec_store g1); the template's sidecars write $(sidecar_store g1)"
for ns in g0 g1; do
    kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate $ns"
done
for ns in g0 g1; do
    sleep_hibernated $ns sidecar_store
    echo "$ns: hibernated; the final snapshot (revision $STORED_REV, every acknowledged write) written by sidecars on ${SNAP_AT[$ns]}; the Etcd names $(spec_store $ns)"
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done
# the controller says why it stamped no store (and stamped g0's)
ev=$(ctl_events g1 etcd-main | grep 'FinalSnapshotStoreUnknown' || true)
stamp=$(kc -n g1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/final-snapshot-store}')
if [ -z "$stamp" ]; then
    [ -n "$ev" ] || ctl_fail "G1: no store stamped and no FinalSnapshotStoreUnknown event: $(ctl_events g1 etcd-main | tr '\n' ' ')"
    echo "ok: G1: no store stamped: $ev"
fi
[ -n "$(kc -n g0 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/final-snapshot-store}')" ] ||
    ctl_fail "control: G0: no final-snapshot-store stamped"
ctl_events g0 etcd-main | grep -q FinalSnapshotStoreUnknown && ctl_fail "control: G0: a FinalSnapshotStoreUnknown event"
WH_AS_NS=g0 wh_await_admitted 15 "control: the claims of hibernated g0/etcd-main were not deleted" \
    wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2
sleep 2
holes=0
for ns in g0 g1; do
    sleep_free_claims $ns
    out=$CLAIMS_OUT n=$CLAIMS_GONE
    names=$(spec_store $ns)
    if [ $ns = g0 ]; then
        [ "$n" = 3 ] || ctl_fail "control: the claims of hibernated g0/etcd-main were not deleted: $out"
        echo "ok: control: G0: the claims of a hibernated Etcd go while its final snapshot is in the store it names"
    elif [ "$n" -gt 0 ] && [ "$names" != "${SNAP_AT[$ns]}" ]; then
        echo "HOLE: G1: $n member claim(s) of hibernated g1/etcd-main deleted while it names store $names and its final snapshot (every acknowledged write) was written by its sidecars into ${SNAP_AT[$ns]}: once etcd-druid reconciles, the wake's members start on new claims and restore from $names, where no snapshot is"
        holes=$((holes + 1))
    else echo "held: G1: $n claim(s) gone, Etcd names $names, snapshot in ${SNAP_AT[$ns]}: $(tr '\n' ' ' <<<"$out" | head -c 400)"; fi
done
ctl_stop

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a hibernated Etcd's claims freed away from the store its sidecars wrote the final snapshot to"; exit 1; }
echo "attack14_sleep_store_lag: ok"
