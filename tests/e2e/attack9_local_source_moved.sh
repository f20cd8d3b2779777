#!/usr/bin/env bash
# An EtcdRestore's Local source moved after admission. Issue 29: a restore reads only backups
# its namespace owns. warden-webhook checks a Local source when the restore is admitted (a
# BackupBucket of provider Local holding the directory and selecting the namespace, or a claim
# of the namespace), but the directory is hostPath/container/prefix with hostPath in a Secret
# the tenant edits at will, and the copy Job the controller makes later mounts what the Secret
# says then.
#   1. BackupBucket local (Local, container bkt, hostPath /var/lib/lb) selecting namespace shoot;
#      BackupBucket evil (Local, container bkt, hostPath /var/lib/evil) selecting namespace
#      other. shoot's Etcd etcd-a wrote a full snapshot to /var/lib/lb/bkt/shoot--a/etcd.
#   2. Namespace other applies EtcdRestore r: source Local bkt/shoot--a/etcd with its Secret src
#      at /var/lib/evil (its own bucket's: admitted), target Local obkt/other/restored
#      (hostPath /var/lib/evil). Before the controller runs (so the order is certain), other
#      edits src's hostPath to /var/lib/lb.
# Control: shoot's own EtcdRestore r0 from its directory copies its snapshot.
# Wanted: r fails (the namespace does not own the directory), nothing copied, the message
# naming no other namespace. Oracle: the node's directories (job_exec.py mounts hostPath
# volumes under $CRONJOB_EXEC_HOST_ROOT): shoot's snapshot under other's target.
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
OWN=$NODE/var/lib/lb/bkt/shoot--a/restored
bucket() { # name hostPath-secret namespace-label
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket $1"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: $1}
spec:
  provider: Local
  container: bkt
  secretRef: {namespace: etcd-warden, name: $2}
  deletionGracePeriod: 1h
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: $3}}
EOF
}
restore() { # ns name target-container target-prefix
    kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $2, namespace: $1}
spec:
  source: {store: {provider: Local, container: bkt, prefix: shoot--a/etcd, secretRef: {name: src}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-$2, store: {provider: Local, container: $3, prefix: $4, secretRef: {name: etcd-backup}}}
EOF
}
rphase() { jp "$1" "etcdrestore/$2" '{.status.phase}'; }
over() { p=$(rphase "$1" "$2"); [ "$p" = Completed ] || [ "$p" = Failed ]; }
files() { if [ -d "$1" ]; then (cd "$1" && find . -type f | sort | xargs); fi; }

mkdir -p "$DIR/v2" "$NODE/var/lib/evil/obkt" "$NODE/var/lib/evil/bkt"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
kc -n etcd-warden create secret generic evil-bucket --from-literal=hostPath=/var/lib/evil >/dev/null
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
kc label namespace shoot etcd-warden.io/backups=local >/dev/null
kc label namespace other etcd-warden.io/backups=evil >/dev/null
bucket local local-bucket local
bucket evil evil-bucket evil
local_host_path shoot etcd-backup /var/lib/lb
local_host_path shoot src /var/lib/lb
local_host_path other etcd-backup /var/lib/evil
local_host_path other src /var/lib/evil
wh_register_backups
ctl_jobs_serve shoot
ctl_jobs_serve other

kc apply -f - >/dev/null <<EOF || ctl_fail "shoot/etcd-a refused"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-a, namespace: shoot}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: Local, container: bkt, prefix: shoot--a/etcd, secretRef: {name: etcd-backup}}}
EOF
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
theirs=Full-00000000-00000100-$(($(date +%s) - 60)).gz
cp "$SNAP_WORK/full" "$DIR/v2/$theirs" # etcd-a's sidecar
wh_caught_up # the caches

out=$(restore shoot r0 bkt shoot--a/restored) || ctl_fail "shoot's own restore refused: $out"
out=$(restore other r obkt other/restored) ||
    ctl_fail "other's restore from its own bucket's /var/lib/evil/bkt/shoot--a/etcd refused: $out"
ok "other's EtcdRestore r admitted (source /var/lib/evil/bkt/shoot--a/etcd, its own bucket's)"
local_host_path other src /var/lib/lb # moved onto shoot's directory before any copy Job
ctl_start

ksim_wait 120 over shoot r0 || ctl_fail "r0 did not end: $(kc -n shoot get etcdrestore r0 -o jsonpath='{.status}')"
expect "shoot's own restore" Completed "$(rphase shoot r0)"
cmp -s "$SNAP_WORK/full" "$OWN/v2/$theirs" || ctl_fail "shoot's restore did not copy its snapshot: $(files "$OWN")"
ok "shoot's restore copied its own $theirs"

ksim_wait 120 over other r || ctl_fail "r did not end: $(kc -n other get etcdrestore r -o jsonpath='{.status}')"
got=$(files "$TGT")
if grep -qF "$theirs" <<<"$got" && cmp -s "$SNAP_WORK/full" "$TGT/v2/$theirs"; then
    ctl_fail "HOLE: namespace other's EtcdRestore r ($(rphase other r)), admitted from its own /var/lib/evil, copied shoot's $theirs from /var/lib/lb/bkt/shoot--a/etcd into /var/lib/evil/obkt/other/restored after its Secret src was moved (there: $got)"
fi
expect "other's restore" Failed "$(rphase other r)"
msg=$(jp other etcdrestore/r '{.status.error}')
grep -q "namespace other does not own the Local directory \"/var/lib/lb/bkt/shoot--a/etcd\"" <<<"$msg" ||
    ctl_fail "r's error: $msg"
! grep -qE "namespace shoot|shoot/|etcd-a" <<<"$msg" || ctl_fail "the error names the other namespace: $msg"
ok "other's restore refused, nothing copied (${got:-empty}): ${msg:0:200}"
ctl_stop
echo "attack9_local_source_moved: ok"
