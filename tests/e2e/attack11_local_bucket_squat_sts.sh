#!/usr/bin/env bash
# A tenant of a Local BackupBucket partitioned by namespace moves its Etcd onto the bucket's own
# directory with its Secret's hostPath, and etcd-druid makes the move real: it builds the
# StatefulSet's volume local-backup, a hostPath "<hostPath>/<container>" (etcd-druid
# internal/component/statefulset/builder.go, getBackupVolume), from the Secret as it reads it,
# and the sidecar then writes and garbage-collects "<hostPath>/<container>/<prefix>": every
# tenant's snapshots below the bucket's directory. docs/backup-entries.md (Local stores, Prefixes
# partitioned by namespace): "the bucket's directory itself (or a parent of it) are nobody's".
#   BackupBucket local (Local, container bkt, hostPath /var/lib/lb, prefixScope Namespace)
#   selecting namespaces shoot and other. warden-controller not running (admission only).
#   1. shoot: Etcd etcd-a at bkt/shoot/etcd-a (Secret etcd-backup at /var/lib/lb), its
#      StatefulSet (as etcd-druid) mounting /var/lib/lb/bkt.
#   2. other: Etcd etcd-sq, Local, container lib, prefix lb/bkt, Secret sq at /var/lib/evil,
#      its StatefulSet (as etcd-druid) mounting /var/lib/evil/lib. other edits sq's hostPath to
#      /var; etcd-druid's next reconcile updates the StatefulSet's local-backup to /var/lib
#      (directory /var/lib/lb/bkt, the bucket's own).
# Oracle: the StatefulSet the API server stores (its local-backup path) after etcd-druid's
# update. Controls: both StatefulSets created where their Secrets first placed them; etcd-druid's
# update of etcd-sq keeping its directory admitted; shoot's Etcd, EtcdRestore and EtcdBackup in
# its own part still admitted while other's Etcd claims the bucket's directory.
# Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

. "$(dirname "$0")/../lib/localsquat.sh"
# StatefulSet NAME of NS as etcd-druid builds it, its volume local-backup at hostPath PATH and a
# replica count REPLICAS, created or replaced as etcd-druid (kubectl VERB: create or replace)
# (its backup sidecar's store args, STORAGE_CONTAINER and mount as etcd-druid renders them from
# the Etcd's spec.backup.store)
sts() { # verb ns name path replicas
    local c p
    c=$(kc -n "$2" get etcd "$3" -o jsonpath='{.spec.backup.store.container}')
    p=$(kc -n "$2" get etcd "$3" -o jsonpath='{.spec.backup.store.prefix}')
    kc_druid -n "$2" "$1" -f - <<EOF2
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: $3
  labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $3}
spec:
  replicas: $5
  serviceName: $3-peer
  selector: {matchLabels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $3}}
  template:
    metadata: {labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $3}}
    spec:
      containers:
      - {name: etcd, image: etcd-wrapper, volumeMounts: [{name: $3, mountPath: /var/etcd/data}]}
      - name: backup-restore
        image: etcdbrctl
        args: [server, --server-port=8080, --storage-provider=Local, "--store-prefix=$p"]
        env: [{name: STORAGE_CONTAINER, value: "$c"}]
        volumeMounts: [{name: $3, mountPath: /var/etcd/data}, {name: etcd-config-file, mountPath: /var/etcd/config/}, {name: local-backup, mountPath: "/home/nonroot/$c"}]
      volumes:
      - {name: etcd-config-file, configMap: {name: $3-config, defaultMode: 420, items: [{key: etcd.conf.yaml, path: etcd.conf.yaml}]}}
      - {name: local-backup, hostPath: {path: $4, type: DirectoryOrCreate}}
  volumeClaimTemplates:
  - metadata: {name: $3}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
EOF2
}
# sts, again while the API server answers Conflict (kube-sim writes the StatefulSet's status as its
# replicas come up), at most 10 times: prints the last answer, fails as the last try did
sts_put() {
    local out i
    for i in 1 2 3 4 5 6 7 8 9 10; do
        out=$(sts "$@" 2>&1) && { echo "$out"; return 0; }
        case $out in *"(Conflict)"*) sleep 0.2 ;; *) break ;; esac
    done
    echo "$out"
    return 1
}
mounted() { kc -n "$1" get sts "$2" -o jsonpath='{.spec.template.spec.volumes[?(@.name=="local-backup")].hostPath.path}'; }
# an Etcd (a dry run) over etcd-sq's directory refused: etcd-sq is in the webhook's caches
sq_known() { ! etcd other etcd-sq2 lib lb/bkt sq --dry-run=server >/dev/null 2>&1; }

localsquat_stage "--backup-entries --etcd-backups $(localsquat_guard)"
ksim_wait 30 part_known || ctl_fail "the webhook's caches never held BackupBucket local"

out=$(etcd shoot etcd-a bkt shoot/etcd-a etcd-backup 2>&1) || ctl_fail "shoot/etcd-a refused: $out"
out=$(etcd other etcd-sq lib lb/bkt sq 2>&1) || ctl_fail "other/etcd-sq at /var/lib/evil/lib/lb/bkt refused: $out"
ksim_wait 30 sq_known || ctl_fail "etcd-sq never in the webhook's caches"
ksim_wait 30 backup copy-c || ctl_fail "etcd-a never in the webhook's caches (a copy of it refused)"
out=$(sts create shoot etcd-a /var/lib/lb/bkt 1 2>&1) || ctl_fail "control: etcd-druid's StatefulSet of shoot/etcd-a refused: $out"
out=$(sts create other etcd-sq /var/lib/evil/lib 1 2>&1) || ctl_fail "control: etcd-druid's StatefulSet of other/etcd-sq refused: $out"
ok "control: etcd-druid's StatefulSets created where the Secrets place them"

local_host_path other sq /var # etcd-sq's directory: /var/lib/lb/bkt, the bucket's
out=$(sts_put replace other etcd-sq /var/lib 1) && refused=0 || refused=1
now=$(mounted other etcd-sq)
if [ "$refused" = 0 ] || [ "$now" != /var/lib/evil/lib ]; then
    echo "HOLE: etcd-druid's update of StatefulSet other/etcd-sq to local-backup /var/lib (directory /var/lib/lb/bkt, the partitioned bucket's own) was admitted: it mounts \"$now\" ($out)"
    echo "FAIL: one tenant's Secret edit makes its sidecar read and garbage-collect every tenant's Local backups"
    grep '"StatefulSet"' "$WH_LOG" | tail -3 >&2 || true
    exit 1
fi
case $out in
*"is not namespace other's"*) ok "etcd-druid's update onto the bucket's directory refused: ${out:0:300}" ;;
*) ctl_fail "refused, but not for the partition: $out" ;;
esac
out=$(sts_put replace other etcd-sq /var/lib/evil/lib 2) || ctl_fail "control: etcd-druid's update keeping etcd-sq's directory refused: $out"
[ "$(kc -n other get sts etcd-sq -o jsonpath='{.spec.replicas}')" = 2 ] || ctl_fail "control: the update was not stored"
ok "control: etcd-druid's update keeping etcd-sq's directory admitted"
for l in "etcd shoot etcd-b bkt shoot/etcd-b etcd-backup" "restore restored-b" "backup copy-b"; do
    out=$($l 2>&1) || ctl_fail "control: shoot's request in its own part ($l) refused while other's Etcd claims the bucket's directory: $out"
done
ok "control: shoot's Etcd, EtcdRestore and EtcdBackup in its own part admitted"
echo "attack11_local_bucket_squat_sts: ok"
