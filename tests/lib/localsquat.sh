# shellcheck shell=bash
# The set-up of the e2e scripts in which one tenant of a Local BackupBucket partitioned by
# namespace squats the bucket's directory (tests/e2e/attack11_local_bucket_squat.sh, _kept.sh,
# _sts.sh). Source after snapshot.sh, controller.sh and localstore.sh:
#
#   NODE                     # the node's root ($SNAP_WORK/node, CRONJOB_EXEC_HOST_ROOT)
#   etcd NS NAME CONTAINER PREFIX SECRET [KUBECTL FLAG]
#                            # Etcd NAME of NS (1 replica) on a Local store (local_etcd)
#   restore NAME             # shoot's EtcdRestore NAME (dry run) from bkt/shoot/etcd-a into
#                            # bkt/shoot/NAME
#   backup NAME              # shoot's EtcdBackup NAME (dry run) of etcd-a to bkt/shoot/NAME
#   tries SUFFIX             # shoot's three requests in its own part (Etcd etcd-SUFFIX, restore
#                            # restored-SUFFIX, backup copy-SUFFIX); prints the refusals
#   part_known               # true once the webhook's caches hold the partitioned bucket
#   localsquat_guard         # prints --local-volume-guard when warden-webhook has that flag
#   localsquat_stage FLAGS   # warden-webhook with FLAGS (warden-controller not started);
#                            # namespaces shoot and other (label etcd-warden.io/backups=local),
#                            # Secrets shoot/etcd-backup at /var/lib/lb and other/sq at
#                            # /var/lib/evil, BackupBucket local (Local, container bkt, hostPath
#                            # /var/lib/lb, prefixScope Namespace), the backups webhooks registered

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

# the StatefulSets are routed to warden-webhook (ctl_stage registers etcd-druid's webhooks), so it
# runs as the chart runs it then; a warden-webhook from before that flag refuses it at start
localsquat_guard() {
    local help
    help=$("$(_wh_binary)" --help 2>&1 || true)
    case $help in *--local-volume-guard*) echo --local-volume-guard ;; esac
    return 0
}

localsquat_stage() {
    local ns
    mkdir -p "$NODE/var/lib/lb/bkt/shoot/etcd-a/v2" "$NODE/var/lib/evil/lib/lb/bkt"
    CTL_WEBHOOK_FLAGS="$1" ctl_stage
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
}
