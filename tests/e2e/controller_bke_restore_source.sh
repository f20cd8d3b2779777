#!/usr/bin/env bash
# A deleted Etcd's backups are what a restore brings back: while an EtcdRestore reads from a
# BackupEntry's prefix (spec.source.store, its copy in flight), the entry's deletion waits past
# the grace period (PrefixConflict naming the restore), and the backups stay; once the restore
# is gone the deletion runs. The restore is held in flight by its copy Job, which nothing runs
# (tests/support/job_exec.py runs only the deletion Jobs, in the bucket Secret's namespace, and
# once the restore is deleted and its copy stopped, the restore's own delete Job).
# The oracle is what s3rver holds and the Jobs job_exec.py ran. Before: the deletion ran at the
# end of the grace period and emptied the restore's source under its copy.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

cond() { kc get backupentry "$1" -o jsonpath='{.status.conditions[?(@.type=="PrefixConflict")].message}'; }
postponed() { cond "$1" | grep -q 'postponed: it overlaps the source prefix "shoot--etcd-main" of EtcdRestore shoot/back'; }
copy_job() { kc -n shoot get jobs -o name | grep -q -- '--restore'; }
all_s3() { snap_s3 ls "" | sort; }

echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
ctl_s3_bucket_secret
ctl_namespace shoot
# the restore's Secret: its delete Job (run once the restore is deleted) opens the target
kc -n shoot delete secret etcd-backup >/dev/null
kc -n shoot create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
ctl_s3_bucket 1h
export JOB_EXEC_RECORD=$SNAP_WORK/job-record.jsonl
ctl_jobs_serve etcd-warden
ctl_start

ctl_store_etcd shoot etcd-main S3 "$SNAP_BUCKET" shoot--etcd-main
ctl_members shoot etcd-main
ksim_wait 20 ctl_has_entry shoot etcd-main || ctl_fail "no entry for shoot/etcd-main"
ctl_members_seen shoot etcd-main
e=$(ctl_entry_of shoot etcd-main)
sleep 1.1 # object times have seconds: the sidecar writes after its Etcd's creation
for k in Full-00000000-00000100-1800000000.gz Incr-00000101-00000200-1800000100.gz; do
    snap_s3 put "shoot--etcd-main/v2/$k" "$SNAP_WORK/obj"
done
before=$(all_s3)
kc -n shoot delete etcd etcd-main >/dev/null
ksim_wait 20 ctl_entry_phase_is "$e" PendingDeletion || ctl_fail "$e: $(ctl_entry_phase "$e")"

# the restore of what the deleted cluster wrote: its copy Job is made and never runs
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: back, namespace: shoot}
spec:
  source: {store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}}
  target: {etcdName: etcd-back, store: {provider: S3, container: $SNAP_BUCKET, prefix: back--shoot--etcd-main, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080, store: {provider: S3, container: $SNAP_BUCKET, prefix: x, secretRef: {name: etcd-backup}}}
EOF
ksim_wait 30 copy_job ||
    ctl_fail "the restore's copy Job was not made: $(kc -n shoot get etcdrestore back -o jsonpath='{.status}')"
ok "the restore reads shoot--etcd-main (its copy Job exists, held)"

ctl_s3_bucket 2s # the grace period is over
ksim_wait 30 postponed "$e" || ctl_fail "$e: not postponed: $(ctl_entry_phase "$e"), $(cond "$e")"
sleep 3 # a deletion that would run, runs in this time (the grace period ended 2 s after the deletion)
expect "the entry waits" PendingDeletion "$(ctl_entry_phase "$e")"
expect "the restore's source, as the sidecar wrote it" "$before" "$(all_s3)"
[ ! -s "$JOB_EXEC_RECORD" ] || ctl_fail "a deletion Job ran: $(cat "$JOB_EXEC_RECORD")"
ok "while the restore reads it, the entry's deletion waits and the backups stay"

kc -n shoot delete etcdrestore back --wait=false >/dev/null
# deleted in flight: its copy Job is stopped (Failed), then a delete Job removes what the copy
# wrote into its target (nothing here), run from then on
stopped() { [ "$(kc -n shoot get etcdrestore back -o jsonpath='{.status.phase}' 2>/dev/null)" = Failed ] || ksim_gone etcdrestore back -n shoot; }
ksim_wait 60 stopped || ctl_fail "the restore's copy is not stopped"
ctl_jobs_serve shoot
ksim_wait 60 ksim_gone etcdrestore back -n shoot || ctl_fail "the restore stays: $(kc -n shoot get etcdrestore back -o jsonpath='{.status}')"
ksim_wait 90 ksim_gone backupentry "$e" ||
    ctl_fail "$e stays once the restore is gone: $(ctl_entry_phase "$e"), $(cond "$e")"
expect "the deleted cluster's backups, deleted" "" "$(all_s3)"
ok "once the restore is gone, the deletion runs"
ctl_stop
echo "controller_bke_restore_source: ok"
