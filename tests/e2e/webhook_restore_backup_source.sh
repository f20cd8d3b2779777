#!/usr/bin/env bash
# An EtcdRestore from an EtcdBackup's copy (spec.source.backupName) is recorded at admission as
# a restore source in the claim Lease of the copy's store, as one from a store
# (spec.source.store) is: until the API server stores the restore (another validating webhook
# may hold the request), only that record tells a deletion of the copy's prefix (a BackupEntry
# of a retained copy, a copy handed on) that it is about to be read. A backup whose copy is not
# written yet records nothing (nothing there to read). No warden-controller runs: the test
# writes the backup's status as the controller does once its copy Job was made.
# Oracle: the claim Lease's records as kube-sim stores them. Before: nothing was recorded for a
# restore from backupName.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
NS=shoot
P=copies--shoot

# The EtcdRestoreSource records of restore $1 in every claim Lease: "prefix" a line each.
sources() {
    kc get leases -A -o json | jq -r --arg r "$1" '[.items[]
        | select(.metadata.name | startswith("etcd-warden-claims-"))
        | .metadata.annotations["etcd-warden.io/claims"] // "[]" | fromjson | .[]
        | select(.kind == "EtcdRestoreSource" and .name == $r and .namespace == "shoot")
        | .prefix] | .[]'
}
backup() { # name
    kc apply -f - >/dev/null <<EOF || ctl_fail "EtcdBackup $1 refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $1, namespace: $NS}
spec:
  etcdName: etcd-main
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $P, secretRef: {name: etcd-backup}}
EOF
}
restore() { # name backup target-prefix
    kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $1, namespace: $NS}
spec:
  source: {backupName: $2}
  target: {etcdName: $1, store: {provider: S3, container: $SNAP_BUCKET, prefix: $3, secretRef: {name: etcd-backup}}}
EOF
}

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc -n "$NS" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
wh_register_backups

# b: its copy written (status.destination as the controller records it, then Completed)
backup b
key="$P/v2/Full-00000000-00000100-1700000000.gz"
kc -n "$NS" patch etcdbackup b --subresource=status --type merge -p \
    "{\"status\":{\"phase\":\"Completed\",\"jobName\":\"b--copy\",\"destinationKey\":\"$key\",\"destination\":{\"provider\":\"S3\",\"container\":\"$SNAP_BUCKET\",\"prefix\":\"$P\"}}}" \
    >/dev/null
# unwritten: no copy Job made yet
backup u

out=$(restore r b target-one) || ctl_fail "EtcdRestore r refused: $out"
got=$(sources r)
[ "$got" = "$P" ] ||
    ctl_fail "EtcdRestore $NS/r from EtcdBackup b (its copy in $P) is not recorded as a restore source in the claim Lease: records of r: '${got:-none}'"
ok "EtcdRestore r from EtcdBackup b recorded as a source of $P"

out=$(restore r2 u target-two) || ctl_fail "EtcdRestore r2 refused: $out"
got=$(sources r2)
[ -z "$got" ] || ctl_fail "EtcdRestore r2 from the unwritten EtcdBackup u recorded a source: $got"
ok "EtcdRestore r2 from EtcdBackup u (no copy written) records no source"
echo "webhook_restore_backup_source: ok"
