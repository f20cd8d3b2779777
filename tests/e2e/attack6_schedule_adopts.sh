#!/usr/bin/env bash
# "Deleting a schedule leaves its EtcdBackups and their copies" (docs/backups-and-restores.md).
# A schedule prunes every EtcdBackup of its namespace labelled
# etcd-warden.io/backup-schedule=<its name>, whoever made it and whatever Etcd it backs up.
# Namespace shoot had a schedule offsite for etcd-main; it was deleted, and its three Completed
# backups (deletionPolicy Delete, their copies under offsite--etcd-main in the store) stay as the
# docs promise: the history of etcd-main off-site. Later shoot creates a new schedule, also
# named offsite, for another Etcd (etcd-events, another destination), history limit 1. Its
# first pass prunes etcd-main's backups (it keeps 1 of "its" 3) and deletes their copies from
# the store: backups of another Etcd, made by a schedule that no longer exists. Backups lost.
# (The three backups are written here as warden-controller writes a Completed one while it is
# stopped: labels, the scheduled-at annotation, the finalizer, status.destination and
# destinationKey, the copies put in s3rver.) Wanted: a schedule prunes only backups it made (its
# uid, as a CronJob its Jobs), or at the least never another Etcd's backups.
# Oracle: s3rver's listing of the copies.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

NS=shoot
creds() { # ns
    kc -n "$1" delete secret etcd-backup --ignore-not-found >/dev/null
    kc -n "$1" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}
old_backup() { # name minute
    local snap=Full-00000000-0000010$2-17000000$2.gz key
    key=offsite--etcd-main/v2/$snap
    snap_fixture "$SNAP_WORK/$snap" 2048 "$snap"
    snap_s3 put "$key" "$SNAP_WORK/$snap"
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply EtcdBackup $1"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata:
  name: $1
  namespace: $NS
  labels: {etcd-warden.io/backup-schedule: offsite}
  annotations: {etcd-warden.io/scheduled-at: "2026-11-2${2}T00:00:00Z"}
  finalizers: [etcd-warden.io/backup-copy]
spec:
  etcdName: etcd-main
  deletionPolicy: Delete
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: offsite--etcd-main, secretRef: {name: etcd-backup}}
EOF
    kc -n "$NS" patch etcdbackup "$1" --subresource=status --type merge -p "{\"status\":{
      \"phase\":\"Completed\",\"destination\":{\"provider\":\"S3\",\"container\":\"$SNAP_BUCKET\",\"prefix\":\"offsite--etcd-main\"},
      \"destinationKey\":\"$key\",\"snapshot\":{\"name\":\"$snap\"},
      \"startTime\":\"2026-11-2${2}T00:00:01Z\",\"completionTime\":\"2026-11-2${2}T00:00:09Z\"}}" >/dev/null ||
        ctl_fail "cannot write the status of $1"
}
copies() { snap_s3 ls offsite--etcd-main/ | sort | xargs; }
backups() { kc -n "$NS" get etcdbackups -o jsonpath='{.items[*].metadata.name}'; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace "$NS"
creds "$NS"
ctl_store_etcd "$NS" etcd-main S3 "$SNAP_BUCKET" shoot--etcd-main
ctl_store_etcd "$NS" etcd-events S3 "$SNAP_BUCKET" shoot--etcd-events
old_backup offsite-29000001 1
old_backup offsite-29000002 2
old_backup offsite-29000003 3
before=$(copies)
[ "$(wc -w <<<"$before")" = 3 ] || ctl_fail "the three copies are not in the store: $before"
ok "the deleted schedule offsite's backups of etcd-main stay: $(backups); copies: $before"
ctl_jobs_serve "$NS"
ctl_start
sleep 3 # the controller looks at the backups as they are (Completed: nothing to do)
expect "the copies with no schedule" "$before" "$(copies)"

kc apply -f - >/dev/null <<EOF || ctl_fail "the schedule refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackupSchedule
metadata: {name: offsite, namespace: $NS}
spec:
  schedule: "0 0 1 1 *"
  successfulBackupsHistoryLimit: 1
  backupTemplate:
    etcdName: etcd-events
    destination: {provider: S3, container: $SNAP_BUCKET, prefix: offsite--etcd-events, secretRef: {name: etcd-backup}}
EOF
ok "a new schedule offsite, for etcd-events (another destination), history limit 1"
pruned() { [ "$(copies)" != "$before" ] || [ "$(backups)" != "offsite-29000001 offsite-29000002 offsite-29000003" ]; }
ksim_wait 30 pruned || true
sleep 3 # deletions under way end (bounded: the listing is the oracle)
after=$(copies)
if [ "$after" != "$before" ]; then
    ctl_fail "HOLE: the new schedule shoot/offsite (for etcd-events) pruned the EtcdBackups of etcd-main that the deleted schedule of the same name had left, and their copies were deleted from the store (before: $before; after: ${after:-nothing}; backups left: $(backups))"
fi
ok "etcd-main's backups and copies untouched by the new schedule (backups: $(backups))"
ctl_stop
echo "attack6_schedule_adopts: ok"
