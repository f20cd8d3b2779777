#!/usr/bin/env bash
# EtcdBackups without BackupEntries (the chart with backups.enabled and
# backupEntries.enabled=false renders no BackupEntry CRD): before a copy is written its
# destination is checked against every claim in the cluster, and the BackupEntries' list
# answering 404 means there are none, as the EtcdBackups' and EtcdRestores' do, not an error
# that fails every copy.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

LOCAL_ROOT=$SNAP_WORK/node/etc/gardener/local-backupbuckets
export CRONJOB_EXEC_HOST_ROOT=$SNAP_WORK/node
NS=shoot
status() { jp "$NS" "etcdbackup/$1" "{.status.$2}"; }
has_job() { kc -n "$NS" get job "$1" >/dev/null 2>&1; }
no_entry_crd() { ! kc get crd backupentries.etcd-warden.io >/dev/null 2>&1; }

mkdir -p "$LOCAL_ROOT/offsite"
snap_s3_start
ctl_stage
kc delete crd backupentries.etcd-warden.io >/dev/null || ctl_fail "cannot delete the BackupEntry CRD"
ksim_wait 20 no_entry_crd || ctl_fail "the BackupEntry CRD is still served"
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc -n "$NS" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
kc -n "$NS" create secret generic offsite \
    --from-literal=hostPath=/etc/gardener/local-backupbuckets >/dev/null
druid_double_for "$NS" etcd-main
ctl_start --backup-entries=false

kc apply -f - >/dev/null <<EOT || ctl_fail "cannot apply EtcdBackup x"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: x, namespace: $NS}
spec:
  etcdName: etcd-main
  destination: {provider: Local, container: offsite, prefix: copies/etcd-main, secretRef: {name: offsite}}
EOT
ksim_wait 60 has_job x--copy ||
    ctl_fail "no copy Job without the BackupEntry CRD: $(status x phase) $(status x error)"
ok "a copy's destination is checked and its Job made without the BackupEntry CRD"
echo "controller_backup_noentries: ok"
