#!/usr/bin/env bash
# A hibernated Local Etcd's member claims freed while its final snapshot lies in another node
# directory than the one it names, on kube-sim with warden-webhook, warden-controller and
# backup-double. This round's item 4 (docs/toggles.md final-snapshot-store: "made only when the
# store the StatefulSet's pod template gives the backup sidecar (which took the snapshot) is the
# one spec.backup.store names ...; a hibernated Etcd's member claims may go only while it equals
# the stamp made afresh of the store the Etcd names"). A Local store's place is not in
# spec.backup.store alone: etcd-druid mounts the volume local-backup, a hostPath
# "<hostPath>/<container>" with hostPath from the Etcd's backup Secret, read whenever it builds
# the StatefulSet (docs/backup-entries.md, Local stores: "two Local stores are one store exactly
# when they are one directory"). The Secret is the tenant's: an edit of its hostPath without a
# reconcile leaves the sidecars writing the old directory, and a hibernation right after takes
# its final snapshot there. (Docs/hibernation.md lists only --storage-provider, --store-prefix
# and STORAGE_CONTAINER as what the stamp compares.)
#   L1. Local Etcd l1/etcd-main (container bkt, prefix l1/etcd-main, Secret etcd-backup hostPath
#       /var/lib/lb-old; the template's sidecar on Local bkt l1/etcd-main, local-backup at
#       /var/lib/lb-old/bkt; 3 members, writes acknowledged). alice (namespace edit rights)
#       sets the Secret's hostPath to /var/lib/lb-new (no reconcile follows) and hibernates it:
#       cut, final snapshot by the members' sidecars (into /var/lib/lb-old/bkt/l1/etcd-main),
#       scaled to 0. She disables protection and deletes the member claims.
#   L0. control: l0/etcd-main, the same without the edit: its claims go.
# Oracle: what kube-sim stores and backup-double records: the final snapshot (every
# acknowledged write) answered by sidecars whose template mounts /var/lib/lb-old/bkt, and the
# member claims deleted while the Etcd's Secret names /var/lib/lb-new (the wake's members start
# on new claims and restore from /var/lib/lb-new/bkt/l1/etcd-main once etcd-druid rebuilds the
# StatefulSet: nothing there).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
. "$(dirname "$0")/../lib/sleepstore.sh"

named_dir() { # the node directory the Etcd names: its Secret's hostPath / container / prefix
    local h
    h=$(kc -n "$1" get secret etcd-backup -o jsonpath='{.data.hostPath}' | base64 -d)
    echo "$h/$(kc -n "$1" get etcd etcd-main -o jsonpath='{.spec.backup.store.container}/{.spec.backup.store.prefix}')"
}
sidecar_dir() { # the node directory the template's sidecar writes: local-backup's path / --store-prefix
    kc -n "$1" get statefulset etcd-main -o json | jq -r '.spec.template.spec as $s
        | ($s.volumes[] | select(.name == "local-backup") | .hostPath.path) + "/"
          + ($s.containers[] | select(.name == "backup-restore") | .args
             | map(select(startswith("--store-prefix=")))[0] | ltrimstr("--store-prefix="))'
}

for ns in l0 l1; do
    kc create namespace $ns >/dev/null || ctl_fail "cannot create namespace $ns"
    kc -n $ns create secret generic etcd-backup --from-literal=hostPath=/var/lib/lb-old >/dev/null ||
        ctl_fail "$ns: cannot create the backup Secret"
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot create Etcd $ns/etcd-main"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-main, namespace: $ns, labels: {app: etcd-statefulset, role: main}}
spec:
  replicas: 3
  labels: {app: etcd-statefulset, role: main}
  etcd: {clientPort: 2379, serverPort: 2380, quota: 8Gi}
  backup: {port: 8080, fullSnapshotSchedule: "0 */24 * * *", store: {provider: Local, container: bkt, prefix: $ns/etcd-main, secretRef: {name: etcd-backup}}}
EOF
    uid=$(kc -n $ns get etcd etcd-main -o jsonpath='{.metadata.uid}')
    druid_components $ns etcd-main "$uid" 3 | kc_druid -n $ns create -f - >/dev/null ||
        ctl_fail "etcd-druid could not create the components of $ns/etcd-main"
    # druid_components renders etcd-druid's Local volume: local-backup, hostPath
    # <Secret hostPath>/<container>, mounted at the sidecar's /home/nonroot/<container>
    druid_pods $ns etcd-main 3
    druid_status $ns etcd-main 3
    sleep_claims $ns
    sleep_double $ns
    sd=$(sidecar_dir $ns) nd=$(named_dir $ns)
    [ "$sd" = "$nd" ] || ctl_fail "$ns: the template's sidecar writes '$sd', the Etcd names '$nd'"
done
ctl_start

# ---- L1: the Secret's hostPath edited without a reconcile, then the hibernation
kc -n l1 create secret generic etcd-backup --from-literal=hostPath=/var/lib/lb-new --dry-run=client -o yaml |
    WH_AS_NS=l1 wh_as alice apply -f - >/dev/null 2>&1 ||
    kc -n l1 create secret generic etcd-backup --from-literal=hostPath=/var/lib/lb-new --dry-run=client -o yaml | kc apply -f - >/dev/null ||
    ctl_fail "L1: cannot edit the backup Secret"
echo "L1: the Etcd now names $(named_dir l1); the template's sidecars write $(sidecar_dir l1)"
for ns in l0 l1; do
    kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate $ns"
done
for ns in l0 l1; do
    sleep_hibernated $ns sidecar_dir
    echo "$ns: hibernated; the final snapshot (revision $STORED_REV, every acknowledged write) written by sidecars into ${SNAP_AT[$ns]}; the Etcd names $(named_dir $ns); stamp: $(kc -n $ns get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/final-snapshot-store}')"
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done
[ -n "$(kc -n l0 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/final-snapshot-store}')" ] ||
    ctl_fail "control: L0: no final-snapshot-store stamped"
WH_AS_NS=l0 wh_await_admitted 15 "control: the claims of hibernated l0/etcd-main were not deleted" \
    wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2
sleep 2
holes=0
for ns in l0 l1; do
    sleep_free_claims $ns
    out=$CLAIMS_OUT n=$CLAIMS_GONE
    names=$(named_dir $ns)
    if [ $ns = l0 ]; then
        [ "$n" = 3 ] || ctl_fail "control: the claims of hibernated l0/etcd-main were not deleted: $out"
        echo "ok: control: L0: the claims of a hibernated Etcd go while its final snapshot is in the directory it names"
    elif [ "$n" -gt 0 ] && [ "$names" != "${SNAP_AT[$ns]}" ]; then
        echo "HOLE: L1: $n member claim(s) of hibernated l1/etcd-main deleted while it names the Local directory $names and its final snapshot (every acknowledged write) was written by its sidecars into ${SNAP_AT[$ns]}: once etcd-druid rebuilds the StatefulSet from the Secret, the wake's members start on new claims and restore from $names, where no snapshot is"
        holes=$((holes + 1))
    else echo "held: L1: $n claim(s) gone, Etcd names $names, snapshot in ${SNAP_AT[$ns]}: $(tr '\n' ' ' <<<"$out" | head -c 400); events: $(ctl_events l1 etcd-main | grep -i store | tr '\n' ' ' | head -c 300)"; fi
done
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a hibernated Local Etcd's claims freed away from the directory its sidecars wrote the final snapshot to"; exit 1; }
echo "attack15_sleep_local_hostpath: ok"
