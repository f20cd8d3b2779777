#!/usr/bin/env bash
# "Deleting a BackupEntry stops its deletion ... when kubectl delete returns nothing deletes
# objects of that prefix any more" (docs/backup-entries.md). The deletion Job runs "in the
# namespace of the bucket's secretRef". shoot/etcd-a is deleted, its grace period ends and its
# entry is Deleting: its Job is made in etcd-warden, its Pod not started yet (a node that is
# slow to pull the image). The operator moves the bucket's Secret to namespace ops (a copy
# there, spec.secretRef edited), then decides to keep etcd-a's backups and deletes the
# entry; kubectl returns. When the Pod of the Job made before the edit starts, it must delete
# nothing. Oracle: s3rver's listing of the prefix after kubectl delete returned.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

P=shoot--etcd-a
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
wh_register_backups
ctl_s3_bucket_secret
ctl_namespace shoot
ctl_s3_bucket 5s
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" $P
ctl_members shoot etcd-a
ctl_start
ksim_wait 20 ctl_has_entry shoot etcd-a || ctl_fail "no entry for etcd-a"
ctl_members_seen shoot etcd-a
E=$(ctl_entry_of shoot etcd-a)
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000101-00000200-1700000100.gz" "$SNAP_WORK/obj"
a_keys=$(snap_s3 ls "$P/" | sort)

kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
job() { kc -n etcd-warden get jobs -l app.kubernetes.io/managed-by=etcd-warden -o name | head -1; }
has_job() { [ -n "$(job)" ]; }
ksim_wait 40 has_job || ctl_fail "no deletion Job: entry $(ctl_entry_phase "$E") $(kc get backupentry "$E" -o jsonpath='{.status.message}')"
J=$(job)
echo "entry $E: $(ctl_entry_phase "$E"), its Job etcd-warden/${J#*/} made, its Pod not started"

# the operator moves the bucket's Secret to namespace ops
kc create namespace ops >/dev/null || ctl_fail "cannot create namespace ops"
kc -n etcd-warden get secret s3-bucket -o json |
    jq '{apiVersion, kind, type, data, metadata: {name: .metadata.name, namespace: "ops"}}' |
    kc create -f - >/dev/null || ctl_fail "cannot copy the Secret to ops"
kc patch backupbucket s3 --type merge -p '{"spec":{"secretRef":{"namespace":"ops","name":"s3-bucket"}}}' >/dev/null ||
    { echo "held: the BackupBucket's secretRef cannot be edited"; ctl_stop; exit 0; }
sleep 2
# ... and keeps etcd-a's backups after all
if ! kc delete backupentry "$E" --timeout=60s >/dev/null 2>&1; then
    echo "held: kubectl delete backupentry $E does not return while the Job in etcd-warden may run: $(ctl_events default "$E" | tail -2 | tr '\n' '|' | cut -c1-300)"
    ctl_stop; exit 0
fi
echo "kubectl delete backupentry returned; events: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-400)"
echo "Job ${J#*/} in etcd-warden: $(kc -n etcd-warden get "$J" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null || echo gone)"
after=$(snap_s3 ls "$P/" | sort)
expect "etcd-a's snapshots when kubectl delete returned" "$a_keys" "$after"
# the Pod of the Job made before the edit starts now
ctl_jobs_serve etcd-warden 60
ran() { ksim_gone -n etcd-warden "$J" || [ -n "$(kc -n etcd-warden get "$J" -o jsonpath='{.status.conditions[*].type}{.metadata.deletionTimestamp}')" ]; }
ksim_wait 20 ran || echo "Job ${J#*/} has not run"
sleep 1
left=$(snap_s3 ls "$P/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$a_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: after kubectl delete backupentry $E returned, its Job ${J#*/} (made in etcd-warden before the bucket's secretRef moved to ops) deleted $(echo $lost)"
    exit 1
fi
echo "held: etcd-a's snapshots stay"
echo "attack21_bucket_secret_move: ok"
