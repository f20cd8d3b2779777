#!/usr/bin/env bash
# An EtcdRestore reads another namespace's live Local backups. Issue 29: restores need authority
# over their source, and no backup is handed to another tenant. An object store's source needs
# credentials that open it, and a BackupBucket's namespaceSelector or prefixScope Namespace
# refuses the rest (docs/backups-and-restores.md, "A restore's source is checked too"); a Local
# store's only "credential" is the hostPath in a Secret the tenant writes itself, and the check
# skips Local stores ("A store no BackupBucket owns, and Local stores, are not checked"), so any
# namespace may read any directory of the node's backups.
#   1. BackupBucket local (provider Local, container bkt, hostPath /var/lib/lb) whose
#      namespaceSelector selects namespace shoot only. Namespace shoot: Etcd etcd-a, Local,
#      container bkt, prefix shoot--a/etcd, hostPath /var/lib/lb; its sidecar wrote a full
#      snapshot to /var/lib/lb/bkt/shoot--a/etcd.
#   2. Namespace other (not selected) applies EtcdRestore r: source Local, container bkt,
#      prefix shoot--a/etcd, its own Secret src with hostPath /var/lib/lb; target Local,
#      container obkt, prefix other/restored, hostPath /var/lib/evil; Etcd etcd-x.
# r is admitted, its copy Job (in namespace other) reads etcd-a's snapshot and writes it into
# other's directory, and other's etcd-x comes up with shoot's cluster, its Secrets included.
# (The webhook's namespaceSelector check skips Local stores for every claim; for a write that
# is bounded by the one-directory-one-cluster rule, for a read nothing bounds it.)
# Wanted: a Local source is held to the same authority as an object store's (the bucket owning
# that directory, its selector and prefixScope), or refused when another namespace claims it.
# Oracle: the node's directories (job_exec.py mounts hostPath volumes under
# $CRONJOB_EXEC_HOST_ROOT): shoot's snapshot, byte for byte, under other's target.
# Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
DIR=$NODE/var/lib/lb/bkt/shoot--a/etcd
TGT=$NODE/var/lib/evil/obkt/other/restored
etcd() { # ns name container prefix
    kc apply -f - <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: Local, container: $3, prefix: "$4", secretRef: {name: etcd-backup}}}
EOF
}
rphase() { jp other etcdrestore/r '{.status.phase}'; }
over() { p=$(rphase); [ "$p" = Completed ] || [ "$p" = Failed ]; }
copied() { [ -d "$TGT" ] && (cd "$TGT" && find . -type f | sort | xargs); }

mkdir -p "$DIR/v2" "$NODE/var/lib/evil/obkt/other"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
kc label namespace shoot etcd-warden.io/backups=local >/dev/null
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket local"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: local}
spec:
  provider: Local
  container: bkt
  secretRef: {namespace: etcd-warden, name: local-bucket}
  deletionGracePeriod: 1h
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: local}}
EOF
local_host_path shoot etcd-backup /var/lib/lb
local_host_path other etcd-backup /var/lib/evil
local_host_path other src /var/lib/lb
wh_register_backups
ctl_jobs_serve other
ctl_start

out=$(etcd shoot etcd-a bkt shoot--a/etcd 2>&1) || ctl_fail "shoot/etcd-a refused: $out"
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
theirs=Full-00000000-00000100-$(($(date +%s) - 60)).gz
cp "$SNAP_WORK/full" "$DIR/v2/$theirs" # etcd-a's sidecar
wh_caught_up # the caches

out=$(kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: other}
spec:
  source: {store: {provider: Local, container: bkt, prefix: shoot--a/etcd, secretRef: {name: src}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-x, store: {provider: Local, container: obkt, prefix: other/restored, secretRef: {name: etcd-backup}}}
EOF
) || {
    ok "other's EtcdRestore from shoot's Local directory is refused at admission: ${out:0:240}"
    ctl_stop
    echo "attack8_local_restore_source: ok"
    exit 0
}
ok "other's EtcdRestore r from Local bkt/shoot--a/etcd (hostPath /var/lib/lb) admitted"
ksim_wait 120 over || ctl_fail "r did not end: $(kc -n other get etcdrestore r -o jsonpath='{.status}')"
got=$(copied)
if grep -qF "$theirs" <<<"$got" && cmp -s "$SNAP_WORK/full" "$TGT/v2/$theirs"; then
    ctl_fail "HOLE: namespace other (not selected by BackupBucket local) restored shoot's live etcd-a: EtcdRestore r ($(rphase), Etcd $(jp other etcdrestore/r '{.status.etcdName}')) copied $theirs from /var/lib/lb/bkt/shoot--a/etcd into other's /var/lib/evil/obkt/other/restored (there: $got)"
fi
ok "nothing of shoot's copied to other (r: $(rphase): $(jp other etcdrestore/r '{.status.error}'); target: ${got:-empty})"
ctl_stop
echo "attack8_local_restore_source: ok"
