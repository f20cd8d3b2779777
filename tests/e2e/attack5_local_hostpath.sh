#!/usr/bin/env bash
# A Local store is a directory of the node: etcd-druid mounts <hostPath>/<container>, hostPath
# from the Etcd's own backup Secret (internal/store/store.go, GetHostMountPathFromSecretRef;
# default /etc/gardener/local-backupbuckets), and the sidecar writes <mount>/<prefix>. warden
# keys a Local store as the container joined with the prefix (Local||<container>/<prefix>,
# docs/backup-entries.md) and leaves hostPath out, so one directory has many spellings. Etcd
# shoot/etcd-a: container bkt, prefix shoot--a/etcd, hostPath /var/lib/lb (as BackupBucket
# local's Secret says): /var/lib/lb/bkt/shoot--a/etcd, with an entry. Namespace other applies
# Etcd other/etcd-b: container shoot--a, prefix etcd, its Secret's hostPath /var/lib/lb/bkt:
# the same directory, admitted ("Local||shoot--a/etcd" overlaps nothing). Two clusters write
# one directory; and when etcd-a is deleted, its deletion Job (the operator's Secret) deletes
# what etcd-b wrote there while it is alive: the deletion is not blocked by etcd-b's prefix.
# Wanted: Local stores compared by the directory they resolve to (hostPath included), or
# every Local store taken as one store (the safe side), as object stores ignore endpoints.
# Oracle: kubectl's answers and the node's directory (job_exec.py mounts hostPath volumes
# under $CRONJOB_EXEC_HOST_ROOT).
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
DIR=$NODE/var/lib/lb/bkt/shoot--a/etcd
etcd() { # ns name container prefix [secret]
    kc apply -f - <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: Local, container: $3, prefix: "$4", secretRef: {name: ${5:-etcd-backup}}}}
EOF
}
bucket() { # grace
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket local"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: local}
spec:
  provider: Local
  container: bkt
  secretRef: {namespace: etcd-warden, name: local-bucket}
  deletionGracePeriod: "$1"
EOF
}
files() { [ -d "$DIR" ] || return 0; (cd "$DIR" && find . -type f | sort | xargs); }

mkdir -p "$DIR"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
kc -n shoot create secret generic etcd-backup --from-literal=hostPath=/var/lib/lb >/dev/null
kc -n other create secret generic etcd-backup --from-literal=hostPath=/var/lib/lb/bkt >/dev/null
kc -n other create secret generic same-host-path --from-literal=hostPath=/var/lib/lb >/dev/null
bucket 1h
ctl_jobs_serve etcd-warden
ctl_start

out=$(etcd shoot etcd-a bkt shoot--a/etcd 2>&1) || ctl_fail "shoot/etcd-a refused: $out"
ksim_wait 20 ctl_has_entry shoot etcd-a || ctl_fail "no entry for shoot/etcd-a"
e=$(ctl_entry_of shoot etcd-a)
# (the reference case names a Secret with etcd-a's hostPath: with other's own, /var/lib/lb/bkt,
# the same spelling is /var/lib/lb/bkt/bkt/shoot--a/etcd, another directory)
if out=$(etcd other etcd-a2 bkt shoot--a/etcd same-host-path 2>&1); then
    ctl_fail "the reference case, the same spelling and hostPath from namespace other, admitted: $out"
fi
ok "reference: other's Etcd spelled /var/lib/lb + bkt + shoot--a/etcd is refused"
if ! out=$(etcd other etcd-b shoot--a etcd 2>&1); then
    ok "other's Etcd on the same directory (container shoot--a, its hostPath /var/lib/lb/bkt) is refused: ${out:0:200}"
    ctl_stop
    echo "attack5_local_hostpath: ok"
    exit 0
fi
ok "other/etcd-b admitted: hostPath /var/lib/lb/bkt + shoot--a + etcd = /var/lib/lb/bkt/shoot--a/etcd, etcd-a's directory"

sleep 1 # the sidecars write after the claims began (file times have seconds)
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
mkdir -p "$DIR/v2"
cp "$SNAP_WORK/full" "$DIR/v2/Full-00000000-00000100-1700000000.gz" # etcd-a's sidecar
cp "$SNAP_WORK/full" "$DIR/v2/Full-00000000-00000500-1700005000.gz" # etcd-b's sidecar, alive
kc -n shoot delete etcd etcd-a >/dev/null
bucket 2s
ended() { ksim_gone backupentry "$e" || [ -n "$(kc get backupentry "$e" -o jsonpath='{.status.lastError}')" ] ||
    [ -n "$(kc get backupentry "$e" -o jsonpath='{.status.conditions[?(@.type=="PrefixConflict")].message}')" ]; }
ksim_wait 60 ended || ctl_fail "$e: the deletion neither ended nor was blocked: $(kc get backupentry "$e" -o jsonpath='{.status}')"
left=$(files)
if ! grep -q 'Full-00000000-00000500-1700005000.gz' <<<"$left"; then
    ctl_fail "HOLE: other/etcd-b (Local, container shoot--a, prefix etcd, hostPath /var/lib/lb/bkt) was admitted on the directory of shoot/etcd-a (container bkt, prefix shoot--a/etcd, hostPath /var/lib/lb), and etcd-a's deletion Job deleted etcd-b's live snapshot there (left: ${left:-nothing})"
fi
ctl_fail "HOLE: other/etcd-b admitted on the directory of shoot/etcd-a (two clusters write /var/lib/lb/bkt/shoot--a/etcd); the deletion kept etcd-b's snapshot (entry: $(kc get backupentry "$e" -o jsonpath='{.status.phase}' 2>&1), left: $left)"
