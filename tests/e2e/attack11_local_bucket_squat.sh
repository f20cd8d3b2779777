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
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
host_path() { # ns secret path
    kc -n "$1" create secret generic "$2" --from-literal=hostPath="$3" --dry-run=client -o yaml |
        kc apply -f - >/dev/null
}
etcd() { # ns name container prefix secret
    kc apply -f - <<EOF2
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: Local, container: $3, prefix: $4, secretRef: {name: $5}}}
EOF2
}
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

mkdir -p "$NODE/var/lib/lb/bkt/shoot/etcd-a/v2" "$NODE/var/lib/evil/lib/lb/bkt"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
for ns in shoot other; do
    kc create namespace "$ns" >/dev/null
    kc label namespace "$ns" etcd-warden.io/backups=local >/dev/null
done
host_path shoot etcd-backup /var/lib/lb
host_path other sq /var/lib/evil
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
sleep 1 # the caches

out=$(etcd shoot etcd-a bkt shoot/etcd-a etcd-backup 2>&1) || ctl_fail "shoot/etcd-a refused: $out"
out=$(etcd other etcd-sq lib lb/bkt sq 2>&1) || ctl_fail "other/etcd-sq at /var/lib/evil/lib/lb/bkt refused: $out"
ok "other's etcd-sq admitted at /var/lib/evil/lib/lb/bkt"
sleep 1 # the caches
refused=$(tries c)
[ -z "$refused" ] || ctl_fail "control: shoot refused in its own part before other's edit: $refused"
ok "control: shoot's Etcd, EtcdRestore and EtcdBackup in its own part admitted"

host_path other sq /var # etcd-sq's directory: /var/lib/lb/bkt, the bucket's
sleep 1 # the caches
refused=$(tries b)
holes=0
while IFS= read -r line; do
    [ -n "$line" ] || continue
    echo "HOLE: $line (namespace other's Etcd etcd-sq was moved onto the bucket's directory /var/lib/lb/bkt by an edit of its Secret sq)"
    holes=$((holes + 1))
done <<<"$refused"
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): one tenant's Secret edit blocks every tenant of a partitioned Local bucket"; exit 1; }
echo "attack11_local_bucket_squat: ok"
