#!/usr/bin/env bash
# Retained EtcdBackup copies on the whole stack, for the scripts that copy etcd-main of
# namespace $NS (default shoot) with deletionPolicy Retain into a prefix of the operator's
# store: kube-sim, warden-webhook (--backup-entries --etcd-backups), warden-controller, s3rver
# (its bucket owned by BackupBucket s3, grace 1h), the copy and deletion Jobs run by job_exec.
# Judged by s3rver's listing (ret_listing), never by etcd-warden's records alone.
#
#   ret_stage              everything, the controller started
#   ret_backup NAME PREFIX a Retain EtcdBackup of etcd-main into PREFIX with the bucket's
#                          credentials, its copy run (the source put in place first), Completed
#   ret_entry_of PREFIX    the BackupEntry of PREFIX in the bucket ("" when none)
# shellcheck disable=SC1091
. "$(dirname "${BASH_SOURCE[0]}")/snapshot.sh"
# shellcheck disable=SC1091
. "$(dirname "${BASH_SOURCE[0]}")/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
NS=${NS:-shoot}

ret_bstatus() { jp "$NS" "etcdbackup/$1" "{.status.$2}"; }
ret_job_args() { kc -n "$NS" get job "$1--copy" -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
ret_has_job() { [ -n "$(ret_job_args "$1")" ]; }
ret_over() {
    local p
    p=$(ret_bstatus "$1" phase)
    [ "$p" = Completed ] || [ "$p" = Failed ]
}
ret_entry_of() {
    kc get backupentries -o json |
        jq -r ".items[] | select(.spec.prefix == \"$1\" and .spec.store.container == \"$SNAP_BUCKET\") | .metadata.name"
}
ret_listing() { snap_s3 ls "$1/" | sort; }

ret_stage() {
    snap_s3_start
    CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
    ctl_s3_bucket_secret
    druid_etcd "$NS" etcd-main
    kc -n "$NS" patch etcd etcd-main --type merge \
        -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
    ctl_backup_secret "$NS" || ctl_fail "cannot create the backup Secret"
    druid_double_for "$NS" etcd-main
    ctl_s3_bucket 1h
    wh_register_backups
    ctl_jobs_serve etcd-warden
    ctl_start
}

ret_backup() {
    local snap
    kc apply -f - >/dev/null <<EOF || ctl_fail "EtcdBackup $1 refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $1, namespace: $NS}
spec:
  etcdName: etcd-main
  deletionPolicy: Retain
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $2, secretRef: {name: etcd-backup}}
EOF
    ksim_wait 60 ret_has_job "$1" || ctl_fail "no copy Job of $1: $(kc -n "$NS" get etcdbackup "$1" -o jsonpath='{.status}')"
    snap=$(tr ',' '\n' <<<"$(ret_job_args "$1")" | tr -d '"[]' | sed -n 's/^--snapshot=//p')
    snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
    snap_s3 put "$(jp "$NS" etcd/etcd-main '{.spec.backup.store.prefix}')/v2/$snap" "$SNAP_WORK/snap"
    ctl_jobs_serve "$NS"
    ksim_wait 60 ret_over "$1" || ctl_fail "$1 did not end: $(kc -n "$NS" get etcdbackup "$1" -o jsonpath='{.status}')"
    [ "$(ret_bstatus "$1" phase)" = Completed ] || ctl_fail "$1 $(ret_bstatus "$1" phase): $(ret_bstatus "$1" error)"
    ctl_jobs_stop
    ok "$1 Completed: copyStartedAt $(ret_bstatus "$1" copyStartedAt) completionTime $(ret_bstatus "$1" completionTime) key $(ret_bstatus "$1" destinationKey)"
}
