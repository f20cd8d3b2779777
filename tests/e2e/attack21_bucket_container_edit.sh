#!/usr/bin/env bash
# A BackupBucket's spec.container can be edited (the CRD does not make it immutable) while one
# of its entries is PendingDeletion. The entry records the store it claims (spec.store: the
# container its Etcd wrote); its deletion must delete only what its Etcd wrote there
# (docs/backup-entries.md: "delete-snapshots deletes exactly the objects the sidecar writes for
# that prefix, and of those only the ones written while the entry's Etcd claimed the prefix").
# shoot/etcd-a backs up to container B1, prefix P. Another cluster (another seed, no Etcd
# here) writes prefix P of container B2, within etcd-a's window. etcd-a is deleted; while its
# entry waits out the grace period the operator points the BackupBucket at B2 (the bucket
# renamed, a new container for new clusters). When the grace period ends, the deletion Job
# must not empty P in B2. Oracle: s3rver's listings of P in B1 and B2 before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

P=shoot--etcd-a
B1=$SNAP_BUCKET
B2=$SNAP_BUCKET-two
ls2() { SNAP_BUCKET=$B2 snap_s3 ls "$1" | sort; }
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
snap_s3_bucket "$B2"
ctl_stage
wh_register_backups
ctl_s3_bucket_secret
ctl_namespace shoot
ctl_s3_bucket 20s
ctl_store_etcd shoot etcd-a aws "$B1" $P
ctl_members shoot etcd-a
ctl_jobs_serve etcd-warden
ctl_start
ksim_wait 20 ctl_has_entry shoot etcd-a || ctl_fail "no entry for etcd-a"
ctl_members_seen shoot etcd-a
E=$(ctl_entry_of shoot etcd-a)
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
# another seed's cluster writes prefix P of container B2
SNAP_BUCKET=$B2 snap_s3 put "$P/v2/Full-00000000-00000900-1800000000.gz" "$SNAP_WORK/obj"
SNAP_BUCKET=$B2 snap_s3 put "$P/v2/Incr-00000901-00000950-1800000100.gz" "$SNAP_WORK/obj"
b2_keys=$(ls2 "$P/")
echo "entry $E: store $(kc get backupentry "$E" -o jsonpath='{.spec.store}'); in $B2 under $P: $(echo $b2_keys)"

kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
# the operator points the bucket at B2
kc patch backupbucket s3 --type merge -p "{\"spec\":{\"container\":\"$B2\"}}" >/dev/null ||
    { echo "held: the BackupBucket's container cannot be edited"; ctl_stop; exit 0; }
echo "BackupBucket s3 now: $(kc get backupbucket s3 -o jsonpath='{.spec.container} {.status.conditions[0].reason}')"
decided() { ksim_gone backupentry "$E" || [ -n "$(kc get backupentry "$E" -o jsonpath='{.status.conditions[*].message}{.status.lastError}')" ]; }
ksim_wait 30 decided; ksim_gone backupentry "$E" ||
    echo "entry $E stays: $(kc get backupentry "$E" -o jsonpath='{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -4 | tr '\n' '|' | cut -c1-500)"
left=$(ls2 "$P/")
echo "left in $B2 under $P: $(echo $left); in $B1: $(snap_s3 ls "$P/" | tr '\n' ' ')"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$b2_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-a's entry (store $B1, prefix $P) deleted $(echo $lost) of container $B2, which etcd-a never wrote (its BackupBucket's container edited while the entry was PendingDeletion)"
    exit 1
fi
echo "held: $B2's objects under $P stay"
echo "attack21_bucket_container_edit: ok"
