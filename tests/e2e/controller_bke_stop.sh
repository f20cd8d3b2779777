#!/usr/bin/env bash
# A BackupEntry deleted while its deletion Job runs: the Job is stopped before the entry goes,
# and nothing more is deleted once the deletion of the entry is acknowledged ("delete the
# BackupEntry to release it, the backups stay"). tests/support/job_exec.py stands for the Job
# controller and the kubelet: the Pod exists while its container runs and goes only once the
# container has been stopped. A fault proxy holds the Job's first listing of the prefix, so the
# Job is running, and has deleted nothing yet, when the entry is deleted; the hold is released
# once `kubectl delete` has returned. Ground truth: the objects s3rver lists, before and after.
# Then an entry Deleting between two runs (no Job): deleted at once.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

bucket() { # name grace
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket $1"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: $1}
spec:
  provider: aws
  container: $SNAP_BUCKET
  secretRef: {namespace: etcd-warden, name: s3-bucket}
  deletionGracePeriod: "$2"
EOF
}
# endpoint: the bucket's Secret, and shoot's backup Secret holding the same (an Etcd gets an
# entry only when its Secret holds the bucket's credentials)
s3_secret() {
    local s
    for s in etcd-warden/s3-bucket shoot/etcd-backup; do
        kc -n "${s%/*}" create secret generic "${s#*/}" --dry-run=client -o yaml \
            --from-literal=accessKeyID=S3RVER --from-literal=secretAccessKey=S3RVER \
            --from-literal=region=us-east-1 --from-literal=s3ForcePathStyle=true \
            --from-literal=endpoint="$1" | kc apply -f - >/dev/null
    done
}
all_s3() { snap_s3 ls "" | sort; }
seed_s3() { for k in "$@"; do snap_s3 put "$k" "$SNAP_WORK/obj"; done; }

echo snapshot >"$SNAP_WORK/obj"
release=$SNAP_WORK/release-listing
snap_s3_start
proxy_start "$SNAP_S3_URL" --hold "GET:prefix=shoot--etcd-h:$release"
ctl_stage
ctl_namespace shoot
s3_secret "$PROXY_URL"
bucket s3 1h
ctl_store_etcd shoot etcd-h S3 "$SNAP_BUCKET" shoot--etcd-h
ctl_store_etcd shoot etcd-n S3 "$SNAP_BUCKET" shoot--etcd-n
ctl_members shoot etcd-h
ctl_members shoot etcd-n
ctl_jobs_serve etcd-warden
ctl_start
for e in etcd-h etcd-n; do
    ksim_wait 20 ctl_has_entry shoot $e || ctl_fail "no entry for $e"
    ctl_members_seen shoot $e
done
sleep 1 # object times have seconds: written after the members were seen
seed_s3 shoot--etcd-h/v2/Full-00000000-00000100-1700000000.gz \
    shoot--etcd-h/v2/Incr-00000101-00000200-1700000100.gz shoot--etcd-n/v2/Incr-1
e_h=$(ctl_entry_of shoot etcd-h)

kc -n shoot delete etcd etcd-h >/dev/null
ksim_wait 20 ctl_entry_phase_is "$e_h" PendingDeletion || ctl_fail "not pending: $(ctl_entry_phase "$e_h")"
bucket s3 2s
held() { grep -q "GET .*prefix=shoot--etcd-h.*: holding until $release" "$SNAP_WORK/proxy.log"; }
ksim_wait 60 held || ctl_fail "the deletion Job never listed the prefix: $(ctl_entry_phase "$e_h")"
expect "the entry while its Job runs" Deleting "$(ctl_entry_phase "$e_h")"
job=$(kc -n etcd-warden get jobs -o name)
job=${job#*/}
[ -n "$job" ] || ctl_fail "no deletion Job"
before=$(all_s3)
expect "nothing deleted before the Job's listing" "shoot--etcd-h/v2/Full-00000000-00000100-1700000000.gz
shoot--etcd-h/v2/Incr-00000101-00000200-1700000100.gz
shoot--etcd-n/v2/Incr-1" "$before"
kc delete backupentry "$e_h" --timeout=60s >/dev/null || ctl_fail "the entry was not deleted"
# acknowledged: the entry is gone; the held listing is answered now, and a Job still running
# would go on deleting
ksim_gone backupentry "$e_h" || ctl_fail "the entry is still there"
touch "$release"
pod_ended() { grep -Eq "Job etcd-warden/$job: pod \S+ (killed|exit)" "$SNAP_WORK/job_exec.log"; }
ksim_wait 60 pod_ended || ctl_fail "the Job's pod never ended: $(tail -5 "$SNAP_WORK/job_exec.log")"
expect "nothing deleted after the entry's deletion was acknowledged" "$before" "$(all_s3)"
expect "the deletion Job" "" "$(kc -n etcd-warden get jobs -o name)"
expect "its Pods" "" "$(kc -n etcd-warden get pods -o name)"
grep -q "Job etcd-warden/$job: pod \S* killed" "$SNAP_WORK/job_exec.log" ||
    ctl_fail "the Job's container was not stopped: $(tail -5 "$SNAP_WORK/job_exec.log")"
stopping() { ctl_events default "$e_h" | grep -q "^Normal DeletionStopping: BackupEntry deleted: its deletion Job etcd-warden/$job is stopped"; }
ksim_wait 10 stopping ||
    ctl_fail "no DeletionStopping event: $(ctl_events default "$e_h")"
ok "a running deletion Job is stopped before its deleted entry goes; nothing deleted after"

# Deleting between two runs (the store unreachable: a failed run, the next after a backoff).
# Port 9 (discard): nothing listens there; a port free now may be another test's s3rver later.
s3_secret "http://127.0.0.1:9"
e_n=$(ctl_entry_of shoot etcd-n)
kc -n shoot delete etcd etcd-n >/dev/null
failed() { [ "$(kc get backupentry "$e_n" -o jsonpath='{.status.deletionFailures}')" -ge 1 ] 2>/dev/null; }
ksim_wait 60 failed || ctl_fail "etcd-n: $(kc get backupentry "$e_n" -o jsonpath='{.status}')"
kc delete backupentry "$e_n" --timeout=60s >/dev/null || ctl_fail "$e_n was not deleted"
no_jobs() { [ -z "$(kc -n etcd-warden get jobs -o name)" ]; }
ksim_wait 20 no_jobs || ctl_fail "a Job left: $(kc -n etcd-warden get jobs -o name)"
expect "etcd-n's backups stay" "shoot--etcd-n/v2/Incr-1" "$(all_s3 | grep etcd-n)"
ok "an entry deleted between runs goes, its backups stay"
ctl_stop
echo "controller_bke_stop: ok"
