#!/usr/bin/env bash
# deletionPolicy Delete: "deleting the EtcdBackup deletes its copy first"; the copy's claim
# (status.destination) ends with the backup. Namespace shoot backs up its etcd-main (EtcdBackup
# b, Delete) to offsite--etcd-main; the copy Job b--copy is made and warden-controller is then
# down for a while (an upgrade). The Job runs and writes shoot's full snapshot into
# offsite--etcd-main. shoot deletes b, and its copy Job as the docs say to stop a copy ("to stop
# now, delete the Job ...: the backup then fails and goes"). warden-controller comes back: the
# Job is gone before its result was read, b is Failed (no status.destinationKey), and a Failed
# backup's deletion deletes nothing, so b goes and the copy stays in offsite--etcd-main, claimed
# by nothing. Namespace other then creates an Etcd on offsite--etcd-main: admitted; its
# sidecar restores shoot's snapshot at its first start. A backup handed to another tenant.
# Wanted: a backup whose copy Job was made deletes what may have been written there (the
# destination listed for the snapshot it copied), or the destination stays claimed.
# Oracle: s3rver's listing and the Etcd kube-sim stores.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

NS=shoot
status() { jp "$NS" etcdbackup/b "{.status.$1}"; }
phase_is() { [ "$(status phase)" = "$1" ]; }
has_job() { kc -n "$NS" get job b--copy >/dev/null 2>&1; }
gone() { ! kc -n "$NS" get "$@" >/dev/null 2>&1; }
listing() { snap_s3 ls "$1/" | sort | tr '\n' ' '; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc -n "$NS" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
ctl_namespace other
druid_double_for "$NS" etcd-main
wh_register_backups
ctl_start

kc apply -f - >/dev/null <<EOF || ctl_fail "the EtcdBackup refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b, namespace: $NS}
spec:
  etcdName: etcd-main
  deletionPolicy: Delete
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: offsite--etcd-main, secretRef: {name: etcd-backup}}
EOF
ksim_wait 30 phase_is Uploading || ctl_fail "b: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
args=$(jp "$NS" job/b--copy '{.spec.template.spec.containers[0].args}')
snap=$(tr ',' '\n' <<<"$args" | tr -d '"[]' | sed -n 's/^--snapshot=//p')
[ -n "$snap" ] || ctl_fail "no snapshot in the copy Job's arguments: $args"
snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
snap_s3 put "shoot--etcd-main/v2/$snap" "$SNAP_WORK/snap" # the sidecar's upload
ok "b Uploading, destination $(status destination.prefix), copy Job b--copy made"

ctl_stop
ctl_jobs_serve "$NS"
copied() { grep -qF "offsite--etcd-main/v2/$snap" <<<"$(listing offsite--etcd-main)"; }
ksim_wait 60 copied || ctl_fail "the copy Job did not write: $(tail -3 "$SNAP_WORK/job_exec.log")"
done_() { [ -n "$(jp "$NS" job/b--copy '{.status.succeeded}{.status.failed}' 2>/dev/null)" ]; }
ksim_wait 30 done_ || true
ctl_jobs_stop
ok "warden-controller down; the copy Job wrote offsite--etcd-main/v2/$snap"
kc -n "$NS" delete etcdbackup b --wait=false >/dev/null
kc -n "$NS" delete job b--copy >/dev/null 2>&1 || true
ok "shoot deletes b (deletionPolicy Delete) and its copy Job"
ctl_start
ctl_jobs_serve "$NS" # a Job deleting the copy runs; b--copy is gone and does not run again
ksim_wait 60 gone etcdbackup b || ok "b stays: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status.phase} {.status.deletionError}' | cut -c1-200)"
left=$(listing offsite--etcd-main)
ok "b gone; offsite--etcd-main holds: ${left:-nothing}"

admitted() { out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" offsite--etcd-main 2>&1); }
if ! ksim_wait 60 admitted; then
    ok "namespace other's Etcd on offsite--etcd-main is refused: ${out:0:240}"
    ctl_stop
    echo "attack6_backup_copy_orphaned: ok"
    exit 0
fi
left=$(listing offsite--etcd-main)
stored=$(jp other etcd/etcd-x '{.spec.backup.store.prefix}')
if grep -qF "offsite--etcd-main/v2/$snap" <<<"$left" && [ "$stored" = offsite--etcd-main ]; then
    ctl_fail "HOLE: EtcdBackup shoot/b (deletionPolicy Delete) is gone and its copy offsite--etcd-main/v2/$snap stays, claimed by nothing (its copy Job went before its result was read: Failed, no destinationKey, nothing deleted); namespace other's Etcd etcd-x was admitted on offsite--etcd-main and its sidecar restores shoot's snapshot (listing: $left)"
fi
ok "other's Etcd admitted on offsite--etcd-main, nothing of shoot's there (listing: ${left:-empty})"
ctl_stop
echo "attack6_backup_copy_orphaned: ok"
