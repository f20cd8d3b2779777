#!/usr/bin/env bash
# EtcdBackup end to end, driven with kubectl: warden-controller's EtcdOpsTask executor asks
# backup-double (the sidecar) for a full snapshot; the test holds the copy Job until it has
# put that snapshot's bytes in the Etcd's store (s3rver), as the sidecar would, then
# tests/support/job_exec.py runs the Jobs (the kubelet and Job controller: kube-sim runs no
# pods). The backup goes Pending -> Snapshotting -> Uploading -> Completed with the snapshot
# copied, byte for byte, to a Local destination (another provider: S3 -> Local), its
# status and events (a controller SIGKILLed while the copy runs: the next one finds the
# Job and goes on); kubectl delete removes the copy (finalizer, delete Job) and then the
# backup. A sidecar answering 500: the backup is Failed with the task's error, a Warning
# event, no finalizer, no Job. A destination the copy cannot open: Failed at once. A copy
# the destination keeps locked (S3 Object Lock's refusal, from a fault proxy): the backup
# stays with deletionError and a CopyLocked event, retried with backoff, and goes once the
# lock is over. A destination inside another Etcd's live prefix: Failed, nothing written.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ctl_takeover_timings # a successor takes over from a SIGKILLed or lost leader
# kubesim.sh's EXIT trap is the one left: it runs snapshot.sh's clean-ups (emulators, work dir).
ksim_on_exit snap_cleanups

LOCAL_ROOT=$SNAP_WORK/node/etc/gardener/local-backupbuckets
export CRONJOB_EXEC_HOST_ROOT=$SNAP_WORK/node
NS=shoot

backup() { # name provider [deletionPolicy [container [secret [prefix]]]]
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply EtcdBackup $1"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $1, namespace: $NS}
spec:
  etcdName: etcd-main
  deletionPolicy: ${3:-Delete}
  destination: {provider: $2, container: ${4:-offsite}, prefix: ${6:-copies/etcd-main}, secretRef: {name: ${5:-offsite}}}
EOF
}
status() { jp "$NS" "etcdbackup/$1" "{.status.$2}"; }
phase_is() { [ "$(status "$1" phase)" = "$2" ]; }
task_state_is() { [ "$(jp "$NS" "etcdopstask/$1" '{.status.state}' 2>/dev/null)" = "$2" ]; }
has_job() { kc -n "$NS" get job "$1" >/dev/null 2>&1; }
gone() { ! kc -n "$NS" get "$@" >/dev/null 2>&1; }
events() { ctl_events "$NS" "$1"; }

mkdir -p "$LOCAL_ROOT/offsite"
snap_s3_start
ctl_stage
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc -n "$NS" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
kc -n "$NS" create secret generic offsite \
    --from-literal=hostPath=/etc/gardener/local-backupbuckets >/dev/null
druid_double_for "$NS" etcd-main
ctl_start
kc get crd etcdbackups.etcd-warden.io >/dev/null || ctl_fail "no EtcdBackup CRD"

# A destination inside the live prefix of another Etcd, as its sidecar lists it (spelled
# with a leading and a doubled '/'): Failed at once naming that Etcd, no snapshot, nothing
# written; the copy would have become etcd-events' newest full snapshot.
ctl_store_etcd "$NS" etcd-events S3 "$SNAP_BUCKET" shoot--etcd-events
backup b0 aws Delete "$SNAP_BUCKET" etcd-backup /shoot--etcd-events//copies/
ksim_wait 30 phase_is b0 Failed || ctl_fail "b0: $(kc -n "$NS" get etcdbackup b0 -o jsonpath='{.status}')"
status b0 error | grep -qF 'overlaps the prefix "shoot--etcd-events" of Etcd shoot/etcd-events' ||
    ctl_fail "b0's error: $(status b0 error)"
gone etcdopstask b0 || ctl_fail "a snapshot task for a refused destination"
expect "nothing written into etcd-events' prefix" "" "$(snap_s3 ls shoot--etcd-events)"
kc -n "$NS" delete etcdbackup b0 >/dev/null
kc -n "$NS" delete etcd etcd-events >/dev/null
ok "a destination in another Etcd's live prefix: Failed, named, nothing written"

# A backup: the task, then the copy Job, held until the snapshot is in the Etcd's store.
backup b1 Local
ksim_wait 30 task_state_is b1 Succeeded ||
    ctl_fail "task b1: $(kc -n "$NS" get etcdopstask b1 -o jsonpath='{.status}' 2>&1)"
desc=$(jp "$NS" etcdopstask/b1 '{.status.lastOperation.description}')
snap=$(sed -n 's/^full snapshot \(Full-[^ ]*\) taken.*/\1/p' <<<"$desc")
[ -n "$snap" ] || ctl_fail "no snapshot name in the task's description: $desc"
ksim_wait 30 has_job b1--copy || ctl_fail "no copy Job: $(status b1 phase) $(status b1 error)"
expect "phase while the copy is held" Uploading "$(status b1 phase)"
expect "the copy takes the task's snapshot" "--snapshot=$snap" \
    "$(jp "$NS" job/b1--copy '{.spec.template.spec.containers[0].args}' | tr ',' '\n' | tr -d '"[]' | grep -- '^--snapshot=')"
# The controller killed while the copy is held: the next one finds the Job and goes on.
ctl_kill9
ctl_start
snap_fixture "$SNAP_WORK/snap" 1500000 "$snap"
snap_s3 put "shoot--etcd-main/v2/$snap" "$SNAP_WORK/snap"

ctl_jobs_serve "$NS"
ksim_wait 60 phase_is b1 Completed ||
    ctl_fail "b1: $(kc -n "$NS" get etcdbackup b1 -o jsonpath='{.status}'); $(tail -5 "$SNAP_WORK/job_exec.log")"
key=copies/etcd-main/v2/$snap
expect "status.snapshot.name" "$snap" "$(status b1 snapshot.name)"
expect "status.destinationKey" "$key" "$(status b1 destinationKey)"
expect "status.snapshot.size" "$(stat -c %s "$SNAP_WORK/snap")" "$(status b1 snapshot.size)"
expect "status.snapshot.md5" "$(md5sum <"$SNAP_WORK/snap" | cut -d' ' -f1)" "$(status b1 snapshot.md5)"
cmp -s "$SNAP_WORK/snap" "$LOCAL_ROOT/offsite/$key" || ctl_fail "the copy differs from the snapshot"
ok "Completed: the snapshot copied byte for byte to the destination"
[ -n "$(status b1 startTime)" ] && [ -n "$(status b1 completionTime)" ] || ctl_fail "no start/completion time"
expect "the finalizer" etcd-warden.io/backup-copy "$(jp "$NS" etcdbackup/b1 '{.metadata.finalizers[0]}')"
for e in '^Normal SnapshotStarted: ' '^Normal SnapshotTaken: ' '^Normal UploadStarted: ' '^Normal Completed: '; do
    events b1 | grep -q "$e" || ctl_fail "no event $e: $(events b1)"
done
ok "events SnapshotStarted, SnapshotTaken, UploadStarted, Completed"
ksim_wait 20 gone job b1--copy || ctl_fail "the copy Job stays"
kc -n "$NS" get ebk b1 | grep -q Completed || ctl_fail "kubectl get ebk: $(kc -n "$NS" get ebk b1)"
ok "the Job deleted once its result is written; kubectl get ebk"

# Deleted: the copy goes first, then the backup; the Etcd's own store keeps its snapshot.
kc -n "$NS" delete etcdbackup b1 --timeout=60s >/dev/null || ctl_fail "delete b1: $(status b1 deletionError)"
[ ! -e "$LOCAL_ROOT/offsite/$key" ] || ctl_fail "the copy is still in the destination"
expect "the source snapshot untouched" "shoot--etcd-main/v2/$snap" "$(snap_s3 ls shoot--etcd-main/)"
events b1 | grep -q '^Normal CopyDeleted: ' || ctl_fail "no CopyDeleted event: $(events b1)"
ksim_wait 20 gone job b1--delete-copy || ctl_fail "the delete Job stays"
ok "kubectl delete: the copy deleted, then the backup"

# A sidecar answering 500: Failed with the task's error, a Warning event; deleted at once.
druid_double_admin 'reply?code=500&count=0'
backup b2 Local
ksim_wait 30 phase_is b2 Failed || ctl_fail "b2: $(kc -n "$NS" get etcdbackup b2 -o jsonpath='{.status}')"
status b2 error | grep -q 'EtcdOpsTask shoot/b2 Failed' || ctl_fail "b2 error: $(status b2 error)"
events b2 | grep -q '^Warning Failed: EtcdOpsTask' || ctl_fail "no Warning Failed event: $(events b2)"
expect "no copy Job" "" "$(kc -n "$NS" get jobs -o name)"
expect "no finalizer" "" "$(jp "$NS" etcdbackup/b2 '{.metadata.finalizers}')"
kc -n "$NS" delete etcdbackup b2 --timeout=20s >/dev/null || ctl_fail "b2 not deleted"
ok "failing sidecar: Failed with the task's error"
druid_double_admin 'reply?code=200'

# A destination the copy cannot open: Failed before any task.
backup b3 gcp
ksim_wait 20 phase_is b3 Failed || ctl_fail "b3: $(kc -n "$NS" get etcdbackup b3 -o jsonpath='{.status}')"
status b3 error | grep -q 'not supported' || ctl_fail "b3 error: $(status b3 error)"
table=$(kc -n "$NS" get etcdbackup b3 -o wide)
head -1 <<<"$table" | grep -q ' ERROR ' || ctl_fail "no ERROR column in kubectl get -o wide: $table"
grep -q '^b3 .* Failed .*not supported' <<<"$table" || ctl_fail "kubectl get -o wide row: $table"
gone etcdopstask b3 || ctl_fail "a task for b3"
ok "unsupported destination: Failed at once"

# A locked copy. The Jobs are held again until the new snapshot is in the Etcd's store.
ctl_jobs_stop
proxy_start "$SNAP_S3_URL" \
    --rule 'DELETE:copies/etcd-main:403:AccessDenied:inf:Access Denied because object protected by object lock.'
s3_dest() { # endpoint
    kc -n "$NS" create secret generic offsite-s3 --dry-run=client -o yaml \
        --from-literal=accessKeyID=S3RVER --from-literal=secretAccessKey=S3RVER \
        --from-literal=region=us-east-1 --from-literal=s3ForcePathStyle=true \
        --from-literal=endpoint="$1" | kc apply -f - >/dev/null
}
s3_dest "$PROXY_URL"
backup b4 S3 Delete "$SNAP_BUCKET" offsite-s3
ksim_wait 30 task_state_is b4 Succeeded || ctl_fail "task b4 did not succeed"
snap4=$(jp "$NS" etcdopstask/b4 '{.status.lastOperation.description}' | sed -n 's/^full snapshot \(Full-[^ ]*\) taken.*/\1/p')
ksim_wait 30 has_job b4--copy || ctl_fail "no copy Job for b4: $(status b4 error)"
snap_s3 put "shoot--etcd-main/v2/$snap4" "$SNAP_WORK/snap"
ctl_jobs_serve "$NS"
ksim_wait 60 phase_is b4 Completed || ctl_fail "b4: $(kc -n "$NS" get etcdbackup b4 -o jsonpath='{.status}')"
expect "the S3 copy" "copies/etcd-main/v2/$snap4" "$(snap_s3 ls copies/etcd-main/)"
kc -n "$NS" delete etcdbackup b4 --wait=false >/dev/null
locked() { status b4 deletionError | grep -q 'locked in the store'; }
ksim_wait 60 locked || ctl_fail "b4 not locked: $(kc -n "$NS" get etcdbackup b4 -o jsonpath='{.status}')"
ksim_wait 10 eval 'events b4 | grep -q "^Normal CopyLocked: the copy copies/etcd-main/v2/$snap4 is locked"' ||
    ctl_fail "no CopyLocked event: $(events b4)"
expect "the locked copy stays" "copies/etcd-main/v2/$snap4" "$(snap_s3 ls copies/etcd-main/)"
relocked() { [ "$(status b4 deletionFailures)" -ge 2 ] 2>/dev/null; }
ksim_wait 60 relocked || ctl_fail "the deletion was not retried: $(status b4 deletionFailures)"
s3_dest "$SNAP_S3_URL" # the retention is over
proxy_stop
ksim_wait 90 gone etcdbackup b4 || ctl_fail "b4 stays: $(kc -n "$NS" get etcdbackup b4 -o jsonpath='{.status}')"
expect "the copy deleted after the lock" "" "$(snap_s3 ls copies/etcd-main/)"
ok "locked copy: the backup kept with deletionError, retried, gone once deletable"
ctl_stop
echo "controller_backup: ok"
