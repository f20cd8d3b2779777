#!/usr/bin/env bash
# An in-flight EtcdRestore's target refuses every overlapping claim but one: "the Etcd the
# restore creates (target.etcdName) is the one exception" (docs/backups-and-restores.md). That
# Etcd is of the restore's namespace. Namespace shoot's restore back (its target shoot--back,
# its Etcd etcd-back) is held in flight by a source EtcdBackup not applied yet. Namespace other
# then applies an Etcd that is also named etcd-back, on shoot--back: if the exception is
# matched by name, it is admitted onto the prefix shoot's copy is about to write (shoot's data,
# restored by other's sidecar at its first start), and the restore later fails at Creating,
# leaving its copy there. Wanted: refused, like an Etcd of any other name there.
# Oracle: kubectl's answers and what kube-sim stores.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

etcd() { # ns name prefix
    kc apply -f - <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: aws, container: etcd-bucket, prefix: "$3", secretRef: {name: etcd-backup}}}
EOF
}

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot other
wh_register_backups
ctl_start

kc apply -f - >/dev/null <<EOF || ctl_fail "the restore refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: back, namespace: shoot}
spec:
  source: {backupName: later}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-back, store: {provider: aws, container: etcd-bucket, prefix: shoot--back, secretRef: {name: etcd-backup}}}
EOF
if out=$(etcd other squat shoot--back 2>&1); then
    ctl_fail "the reference case: another namespace's Etcd of another name admitted on the in-flight target: $out"
fi
ok "reference: other/squat on shoot--back is refused"

if out=$(etcd other etcd-back shoot--back 2>&1); then
    ctl_fail "HOLE: namespace other's Etcd etcd-back (the name of the restore's target.etcdName) admitted on shoot--back, the target of shoot's EtcdRestore back in flight (stored prefix: $(jp other etcd/etcd-back '{.spec.backup.store.prefix}'))"
fi
ok "other/etcd-back on shoot--back is refused: ${out:0:200}"
ctl_stop
echo "attack5_restore_target_name: ok"
