#!/usr/bin/env bash
# docs/backups-and-restores.md, Retain: a retained copy's entry has "the copy's write window"
# and "past its bucket's deletionGracePeriod a deletion Job deletes what the copy wrote, and
# nothing else"; "An entry of the name that is already the namespace's and Etcd's (an earlier
# retained copy in the same prefix) is widened to cover this copy's window."
# Namespace shoot takes two Retain EtcdBackups of etcd-main (the bucket's credentials) into one
# prefix copies--s, a minute's schedule history: b1 completes; then another seed's cluster writes
# into copies--s; then b2 completes. Both are deleted; past the grace period the entry must
# delete b1's and b2's copies and keep the other seed's object written between the two copies.
# Oracle: s3rver's listing of copies--s.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
NS=shoot
D=copies--s

bstatus() { jp "$NS" "etcdbackup/$1" "{.status.$2}"; }
job_args() { kc -n "$NS" get job "$1--copy" -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
has_job() { [ -n "$(job_args "$1")" ]; }
over() { p=$(bstatus "$1" phase); [ "$p" = Completed ] || [ "$p" = Failed ]; }
entry_of() { kc get backupentries -o json | jq -r ".items[] | select(.spec.prefix == \"$1\") | .metadata.name"; }
listing() { snap_s3 ls "$1/" | sort; }

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

# backup NAME: Retain into $D with the bucket's credentials, its copy Job made, the source in place
backup() {
    kc apply -f - >/dev/null <<EOF2 || ctl_fail "EtcdBackup $1 refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $1, namespace: $NS}
spec:
  etcdName: etcd-main
  deletionPolicy: Retain
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $D, secretRef: {name: etcd-backup}}
EOF2
    ksim_wait 60 has_job "$1" || ctl_fail "no copy Job of $1: $(kc -n "$NS" get etcdbackup "$1" -o jsonpath='{.status}')"
    snap=$(tr ',' '\n' <<<"$(job_args "$1")" | tr -d '"[]' | sed -n 's/^--snapshot=//p')
    snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
    snap_s3 put "$(jp "$NS" etcd/etcd-main '{.spec.backup.store.prefix}')/v2/$snap" "$SNAP_WORK/snap"
    ctl_jobs_serve "$NS"
    ksim_wait 60 over "$1" || ctl_fail "$1 did not end: $(kc -n "$NS" get etcdbackup "$1" -o jsonpath='{.status}')"
    [ "$(bstatus "$1" phase)" = Completed ] || ctl_fail "$1 $(bstatus "$1" phase): $(bstatus "$1" error)"
    ctl_jobs_stop
    ok "$1 Completed: copyStartedAt $(bstatus "$1" copyStartedAt) completionTime $(bstatus "$1" completionTime) key $(bstatus "$1" destinationKey)"
}
backup b1
sleep 2
theirs=$D/v2/Full-00000000-00000500-1800000000.gz
snap_fixture "$SNAP_WORK/theirs" 4096 Full.gz
snap_s3 put "$theirs" "$SNAP_WORK/theirs"
ok "the other seed wrote $theirs after b1's copy"
sleep 2
backup b2
before=$(listing $D)
ok "$D holds $(echo $before)"

kc -n "$NS" delete etcdbackup b1 --timeout=60s >/dev/null || ctl_fail "b1 not deleted"
e=$(entry_of $D)
[ -n "$e" ] || ctl_fail "no entry keeps b1's retained copy"
ok "after b1: entry $e spec $(kc get backupentry "$e" -o jsonpath='{.spec}' | cut -c1-500)"
kc -n "$NS" delete etcdbackup b2 --timeout=60s >/dev/null || ctl_fail "b2 not deleted"
ok "after b2: entry $e spec $(kc get backupentry "$e" -o jsonpath='{.spec}' | cut -c1-500)"
ctl_s3_bucket 2s
ksim_wait 90 ctl_entry_settled "$e" || echo "entry $e not settled: $(kc get backupentry "$e" -o jsonpath='{.status}' | cut -c1-300)"
echo "events of $e: $(ctl_events default "$e" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(listing $D)
echo "left under $D: $(echo $left)"
ctl_stop
if ! grep -qF "$theirs" <<<"$left"; then
    echo "HOLE: the entry of shoot's retained copies b1 and b2 (one prefix $D) deleted $theirs, written by another seed's cluster between the two copies (left: ${left:-nothing})"
    exit 1
fi
echo "held: $theirs stays"
echo "attack25_retained_widened: ok"
