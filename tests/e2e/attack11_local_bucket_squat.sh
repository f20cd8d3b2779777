#!/usr/bin/env bash
# One tenant of a Local BackupBucket partitioned by namespace blocks every other tenant's Etcds,
# restores and backup copies in it, by editing the hostPath of its own Etcd's Secret after
# admission. docs/backup-entries.md (Prefixes partitioned by namespace): "No two namespaces'
# claims overlap ... A new claim is therefore only ever in the way of its own namespace's
# claims"; "A Local bucket is partitioned the same way, by directory ... with prefixScope:
# Namespace every directory below it belongs to the namespace named by the path below the
# bucket's directory ... the bucket's directory itself (or a parent of it) are nobody's".
# A Local claim is hostPath + "/" + container + "/" + prefix with hostPath in a Secret the
# namespace edits at any time, and warden-webhook reads every other claim's Secret fresh: an
# Etcd admitted outside the bucket is moved onto the bucket's directory itself by its Secret.
#   BackupBucket local (Local, container bkt, hostPath /var/lib/lb, prefixScope Namespace)
#   selecting namespaces shoot and other. warden-controller not running (admission only).
#   1. shoot: Etcd etcd-a at bkt/shoot/etcd-a (Secret etcd-backup at /var/lib/lb).
#   2. other: Etcd etcd-sq, Local, container lib, prefix lb/bkt, Secret sq at /var/lib/evil
#      (directory /var/lib/evil/lib/lb/bkt: no bucket's, no claim's): admitted. other edits sq's
#      hostPath to /var: etcd-sq's directory is now /var/lib/lb/bkt, the bucket's own.
#   Then, in shoot's own part:
#   L1. shoot's new Etcd etcd-b at bkt/shoot/etcd-b;
#   L2. shoot's EtcdRestore (dry run) from its bkt/shoot/etcd-a into bkt/shoot/restored;
#   L3. shoot's EtcdBackup (dry run) of etcd-a to bkt/shoot/copy.
# Control: before other's edit, the same three are admitted (L1 as etcd-c).
# Oracle: admission of shoot's requests in its own part. Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
etcd() { local_etcd "$1" "$2" "$3" "$4" "$5" ${6:+"$6"}; } # ns name container prefix secret [kubectl flag]
restore() { # name
    kc apply --dry-run=server -f - <<EOF2
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $1, namespace: shoot}
spec:
  source: {store: {provider: Local, container: bkt, prefix: shoot/etcd-a, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-$1, store: {provider: Local, container: bkt, prefix: shoot/$1, secretRef: {name: etcd-backup}}}
EOF2
}
backup() { # name
    kc apply --dry-run=server -f - <<EOF2
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $1, namespace: shoot}
spec:
  etcdName: etcd-a
  destination: {provider: Local, container: bkt, prefix: shoot/$1, secretRef: {name: etcd-backup}}
EOF2
}
tries() { # suffix: shoot's three requests in its own part; prints the refusals
    local out
    out=$(etcd shoot "etcd-$1" bkt "shoot/etcd-$1" etcd-backup 2>&1) || echo "L1: shoot's Etcd etcd-$1 at /var/lib/lb/bkt/shoot/etcd-$1 refused: ${out:0:400}"
    out=$(restore "restored-$1" 2>&1) || echo "L2: shoot's EtcdRestore from /var/lib/lb/bkt/shoot/etcd-a into /var/lib/lb/bkt/shoot/restored-$1 refused: ${out:0:400}"
    out=$(backup "copy-$1" 2>&1) || echo "L3: shoot's EtcdBackup of etcd-a to /var/lib/lb/bkt/shoot/copy-$1 refused: ${out:0:400}"
    return 0
}
# shoot's Etcd (a dry run) in other's part refused: the webhook's caches hold the partitioned bucket
part_known() { ! etcd shoot probe bkt other/probe etcd-backup --dry-run=server >/dev/null 2>&1; }

mkdir -p "$NODE/var/lib/lb/bkt/shoot/etcd-a/v2" "$NODE/var/lib/evil/lib/lb/bkt"
# the StatefulSets are routed to warden-webhook (ctl_stage registers etcd-druid's webhooks), so it
# runs as the chart runs it then; a warden-webhook from before that flag refuses it at start
help=$("$(_wh_binary)" --help 2>&1 || true)
guard=""
case $help in *--local-volume-guard*) guard=--local-volume-guard ;; esac
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups $guard" ctl_stage
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
for ns in shoot other; do
    kc create namespace "$ns" >/dev/null
    kc label namespace "$ns" etcd-warden.io/backups=local >/dev/null
done
local_host_path shoot etcd-backup /var/lib/lb
local_host_path other sq /var/lib/evil
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket local"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: local}
spec:
  provider: Local
  container: bkt
  secretRef: {namespace: etcd-warden, name: local-bucket}
  deletionGracePeriod: 1h
  prefixScope: Namespace
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: local}}
EOF
wh_register_backups
ksim_wait 30 part_known || ctl_fail "the webhook's caches never held BackupBucket local"

out=$(etcd shoot etcd-a bkt shoot/etcd-a etcd-backup 2>&1) || ctl_fail "shoot/etcd-a refused: $out"
out=$(etcd other etcd-sq lib lb/bkt sq 2>&1) || ctl_fail "other/etcd-sq at /var/lib/evil/lib/lb/bkt refused: $out"
ok "other's etcd-sq admitted at /var/lib/evil/lib/lb/bkt"
ksim_wait 30 backup copy-c || ctl_fail "etcd-a never in the webhook's caches (a copy of it refused)"
# etcd-sq in the webhook's caches: its Etcd (a dry run) again at its own directory is admitted
sq_known() { etcd other etcd-sq lib lb/bkt sq --dry-run=server >/dev/null 2>&1 &&
    ! etcd other etcd-sq2 lib lb/bkt sq --dry-run=server >/dev/null 2>&1; }
ksim_wait 30 sq_known || ctl_fail "etcd-sq never in the webhook's caches"
refused=$(tries c)
[ -z "$refused" ] || ctl_fail "control: shoot refused in its own part before other's edit: $refused"
ok "control: shoot's Etcd, EtcdRestore and EtcdBackup in its own part admitted"

local_host_path other sq /var # etcd-sq's directory: /var/lib/lb/bkt, the bucket's
# (the webhook reads every Local claim's Secret fresh: the edit counts at once)
refused=$(tries b)
holes=0
while IFS= read -r line; do
    [ -n "$line" ] || continue
    echo "HOLE: $line (namespace other's Etcd etcd-sq was moved onto the bucket's directory /var/lib/lb/bkt by an edit of its Secret sq)"
    holes=$((holes + 1))
done <<<"$refused"
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): one tenant's Secret edit blocks every tenant of a partitioned Local bucket"; exit 1; }
echo "attack11_local_bucket_squat: ok"
