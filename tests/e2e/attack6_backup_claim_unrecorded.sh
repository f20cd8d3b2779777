#!/usr/bin/env bash
# An EtcdBackup claims its destination once its copy is being written (status.destination,
# "recorded when the copy Job is created"). warden-controller creates the copy Job first and
# writes status.destination (with phase Uploading and status.jobName) after it, in a second
# request. When that status write fails (the API server answers 500 here, held by kube-sim's
# fault injection on etcdbackups/b/status; a 409 from any concurrent edit of the backup does
# the same) the Job exists and nothing claims its destination. Namespace shoot backs up its
# etcd-main (EtcdBackup b) to offsite--etcd-main: the snapshot task succeeds, the copy Job
# b--copy is made (held: kube-sim runs no Pods until the script serves the Jobs), the status
# write fails. Namespace other creates an Etcd on offsite--etcd-main: admitted. The next look
# at b finds that destination taken and fails it (no status.jobName: the Job is never
# deleted), and the copy Job then runs and writes shoot's full snapshot (its cluster's data,
# Secrets included) into other's prefix, whose sidecar restores it at its first start. A backup
# handed to another tenant. Wanted: the destination is claimed before the Job can write (the
# claim recorded first), or a copy Job whose backup does not claim its destination never runs.
# Oracle: kubectl's answers, s3rver's listing, the Etcd kube-sim stores.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

NS=shoot
faults() { ksim_wait 10 curl -sfk -H "Authorization: Bearer $KSIM_TOKEN" -X POST "$KSIM_URL/kube-sim/faults" -d "$1" >/dev/null; }
status() { jp "$NS" etcdbackup/b "{.status.$1}"; }
phase_is() { [ "$(status phase)" = "$1" ]; }
has_job() { kc -n "$NS" get job b--copy >/dev/null 2>&1; }
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

druid_double_admin hold
kc apply -f - >/dev/null <<EOF || ctl_fail "the EtcdBackup refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b, namespace: $NS}
spec:
  etcdName: etcd-main
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: offsite--etcd-main, secretRef: {name: etcd-backup}}
EOF
ksim_wait 30 phase_is Snapshotting || ctl_fail "b: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
# from here every write of b's status fails
faults '{"errorRate":1.0,"match":"etcdbackups/b/status"}'
druid_double_admin release
if ! ksim_wait 30 has_job; then
    faults '{"reset":true}'
    ok "no copy Job is made while b's claim cannot be recorded (phase $(status phase))"
    ctl_stop
    echo "attack6_backup_claim_unrecorded: ok"
    exit 0
fi
args=$(jp "$NS" job/b--copy '{.spec.template.spec.containers[0].args}')
grep -q -- '--to-store-prefix=offsite--etcd-main"' <<<"$args" || ctl_fail "the copy Job writes elsewhere: $args"
snap=$(tr ',' '\n' <<<"$args" | tr -d '"[]' | sed -n 's/^--snapshot=//p')
[ -n "$snap" ] || ctl_fail "no snapshot in the copy Job's arguments: $args"
snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
snap_s3 put "shoot--etcd-main/v2/$snap" "$SNAP_WORK/snap" # the sidecar's upload
ok "b's copy Job b--copy (held) writes offsite--etcd-main; b's status write fails: phase $(status phase), destination '$(status destination.prefix)'"

admitted() { out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" offsite--etcd-main 2>&1); }
if ! ksim_wait 20 admitted; then
    faults '{"reset":true}'
    ok "namespace other's Etcd on the destination of the copy Job is refused: ${out:0:240}"
    ctl_stop
    echo "attack6_backup_claim_unrecorded: ok"
    exit 0
fi
ok "namespace other's Etcd etcd-x admitted on offsite--etcd-main while the copy Job b--copy exists"
faults '{"reset":true}'
over() { phase_is Completed || phase_is Failed; }
ksim_wait 60 over || true
ok "b after the API server answers again: $(status phase) ($(status error | cut -c1-160)); Job b--copy $(has_job && echo still there || echo gone)"
# the copy Job, held so far, runs if it is still there
ctl_jobs_serve "$NS"
ran() { grep -q 'b--copy' "$SNAP_WORK/job_exec.log" 2>/dev/null || ! has_job; }
ksim_wait 60 ran || true
sleep 5 # a run that started ends (bounded: the listing below is the oracle)
left=$(listing offsite--etcd-main)
stored=$(jp other etcd/etcd-x '{.spec.backup.store.prefix}')
if grep -qF "offsite--etcd-main/v2/$snap" <<<"$left" && [ "$stored" = offsite--etcd-main ]; then
    ctl_fail "HOLE: namespace other's Etcd etcd-x was admitted on offsite--etcd-main while shoot's copy Job b--copy for it existed (b's status write, which records the claim, failed after the Job was made); the Job then wrote shoot's full snapshot $snap into other's prefix (listing: $left; b $(status phase): $(status error | cut -c1-160))"
fi
ok "nothing of shoot's in other's prefix (listing: ${left:-empty}; b $(status phase))"
ctl_stop
echo "attack6_backup_claim_unrecorded: ok"
