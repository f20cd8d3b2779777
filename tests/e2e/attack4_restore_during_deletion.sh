#!/usr/bin/env bash
# "A BackupEntry's deletion waits while an EtcdRestore reads from its prefix" holds only for a
# restore that exists when the deletion is decided. Etcd shoot/etcd-main is deleted (by
# mistake), its grace period ends, the entry goes Deleting and its deletion Job is created
# (kube-sim runs no Pods: the Job is left running). The owner now applies an EtcdRestore from
# that prefix: it is admitted and its copy Job starts at once, reading the prefix while the
# deletion Job empties it; the restore copies whatever the deletion has not reached yet (the
# latest full snapshot gone: an older one and its deltas, silently older data; or nothing).
# Wanted: a restore whose source is a Deleting entry's prefix is refused at admission or held
# (not copied) until the deletion is over or stopped (kubectl delete backupentry).
# Oracle: the API server's Jobs, both present at once.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot
ctl_backup_secret etcd-warden creds
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec: {provider: aws, container: etcd-bucket, secretRef: {namespace: etcd-warden, name: creds}, deletionGracePeriod: 1h}
EOF
wh_register_backups
ctl_start
ctl_store_etcd shoot etcd-main S3 etcd-bucket shoot--etcd-main
entry() { kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name} {.spec.etcd.namespace}/{.spec.etcd.name}{"\n"}{end}' | awk '$2 == "shoot/etcd-main" { print $1 }'; }
has_entry() { [ -n "$(entry)" ]; }
ksim_wait 20 has_entry || ctl_fail "no entry for shoot/etcd-main"
e=$(entry)
kc -n shoot delete etcd etcd-main >/dev/null
kc patch backupbucket shared --type merge -p '{"spec":{"deletionGracePeriod":"1s"}}' >/dev/null
deljob() { kc -n etcd-warden get jobs -o name | grep -- '--delete'; }
ksim_wait 30 deljob || ctl_fail "no deletion Job: $(kc get backupentry "$e" -o jsonpath='{.status}')"
expect "entry phase" Deleting "$(kc get backupentry "$e" -o jsonpath='{.status.phase}')"
ok "entry $e is Deleting, its Job $(deljob) running"

if ! out=$(kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: shoot}
spec:
  source: {store: {provider: S3, container: etcd-bucket, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-main-back, store: {provider: S3, container: etcd-bucket, prefix: restored--shoot--etcd-main, secretRef: {name: etcd-backup}}}
EOF
); then
    ok "the restore from a prefix being deleted is refused: ${out:0:200}"
    ctl_stop
    echo "attack4_restore_during_deletion: ok"
    exit 0
fi
copying() { kc -n shoot get job r--restore >/dev/null 2>&1; }
if ksim_wait 20 copying && [ -n "$(deljob)" ]; then
    ctl_fail "HOLE: EtcdRestore shoot/r's copy Job r--restore reads prefix shoot--etcd-main while the deletion Job $(deljob) of entry $e deletes it (restore: $(kc -n shoot get etcdrestore r -o jsonpath='{.status.phase}'), entry: $(kc get backupentry "$e" -o jsonpath='{.status.phase}'))"
fi
ok "the restore waits while the prefix is being deleted: $(kc -n shoot get etcdrestore r -o jsonpath='{.status}')"
ctl_stop
echo "attack4_restore_during_deletion: ok"
