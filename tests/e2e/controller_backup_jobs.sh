#!/usr/bin/env bash
# The EtcdBackup's Jobs end to end, driven with kubectl; the test plays the Job controller
# (kube-sim runs no pods): it runs a Job with tests/support/job_exec.py, or marks it stopped
# at its deadline, as the Job controller does, or leaves it pending for ever.
#
# Backup x-delete's copy Job and backup x's delete Job: two names (x-delete--copy and
# x--delete-copy), so x's deletion neither adopts nor deletes x-delete's copy. A Job of the
# copy Job's name made by someone else: the backup fails naming it, and the Job stays. A copy
# Job that never starts: it has activeDeadlineSeconds, and once the deadline stops it the
# backup is Failed with DeadlineExceeded and a Warning event, the Job deleted.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
# kubesim.sh's EXIT trap is the one left: it runs snapshot.sh's clean-ups (emulators, work dir).
ksim_on_exit snap_cleanups

LOCAL_ROOT=$SNAP_WORK/node/etc/gardener/local-backupbuckets
export CRONJOB_EXEC_HOST_ROOT=$SNAP_WORK/node
NS=shoot

backup() { # name etcd [finalizer [prefix]]
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply EtcdBackup $1"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: "$1", namespace: $NS, finalizers: [${3:-}]}
spec:
  etcdName: $2
  destination: {provider: Local, container: offsite, prefix: ${4:-copies/etcd-main}, secretRef: {name: offsite}}
EOF
}
status() { jp "$NS" "etcdbackup/$1" "{.status.$2}"; }
phase_is() { [ "$(status "$1" phase)" = "$2" ]; }
has_job() { kc -n "$NS" get job "$1" >/dev/null 2>&1; }
gone() { ! kc -n "$NS" get "$@" >/dev/null 2>&1; }
uid() { jp "$NS" "$1" '{.metadata.uid}'; }
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

# x-delete: its copy Job, left pending (no Pod ever runs).
backup x-delete etcd-main
ksim_wait 30 has_job x-delete--copy ||
    ctl_fail "no copy Job: $(status x-delete phase) $(status x-delete error)"
expect "phase while the copy is pending" Uploading "$(status x-delete phase)"
expect "the copy Job's deadline" 7200 "$(jp "$NS" job/x-delete--copy '{.spec.activeDeadlineSeconds}')"
copy_uid=$(uid job/x-delete--copy)

# x: a Completed backup with a copy (written here: its Etcd does not exist, so it fails at
# once, and the test gives it the status of a finished one, with the destination and the
# hostPath its copy Job mounted, as warden-controller records them; in a prefix of its own: a
# Local copy is not deleted where another's copy overlaps it), then deleted.
backup x gone etcd-warden.io/backup-copy copies/x
ksim_wait 20 phase_is x Failed || ctl_fail "x: $(kc -n "$NS" get etcdbackup x -o jsonpath='{.status}')"
kc -n "$NS" patch etcdbackup x --subresource=status --type merge \
    -p '{"status":{"phase":"Completed","destinationKey":"copies/x/v2/Full-00000000-00000001-1700000000.gz","destination":{"provider":"Local","container":"offsite","prefix":"copies/x","hostPath":"/etc/gardener/local-backupbuckets"}}}' \
    >/dev/null
kc -n "$NS" delete etcdbackup x --wait=false >/dev/null
ksim_wait 30 has_job x--delete-copy || ctl_fail "no delete Job for x: $(status x deletionError)"
expect "x-delete's copy Job untouched" "$copy_uid" "$(uid job/x-delete--copy)"
expect "the delete Job's deadline" 3600 "$(jp "$NS" job/x--delete-copy '{.spec.activeDeadlineSeconds}')"
expect "the delete Job's owner" "$(uid etcdbackup/x)" \
    "$(jp "$NS" job/x--delete-copy '{.metadata.annotations.etcd-warden\.io/owner-uid}')"
python3 "$SNAP_SRC/tests/support/job_exec.py" run "$NS" x--delete-copy "$SNAP_WORK" \
    "$WARDEN_SNAPSHOT" 2>>"$SNAP_WORK/job_exec.log" || ctl_fail "job_exec: $(tail -3 "$SNAP_WORK/job_exec.log")"
ksim_wait 30 gone etcdbackup x || ctl_fail "x stays: $(status x deletionError)"
ksim_wait 20 gone job x--delete-copy || ctl_fail "x's delete Job stays"
expect "x-delete's copy Job still there, the same" "$copy_uid" "$(uid job/x-delete--copy)"
expect "x-delete still copying" Uploading "$(status x-delete phase)"
ok "backup x-delete's copy Job and backup x's delete Job: two Jobs, neither touches the other"

# A Job of y's copy Job name made by someone else.
kc -n "$NS" create job y--copy --image=busybox:1 -- true >/dev/null
foreign_uid=$(uid job/y--copy)
backup y etcd-main
ksim_wait 60 phase_is y Failed || ctl_fail "y: $(kc -n "$NS" get etcdbackup y -o jsonpath='{.status}')"
status y error | grep -q "Job shoot/y--copy exists and is not ours: it has no owner" ||
    ctl_fail "y's error: $(status y error)"
events y | grep -q '^Warning Failed: Job shoot/y--copy exists and is not ours' ||
    ctl_fail "no Warning Failed event: $(events y)"
expect "the foreign Job stays" "$foreign_uid" "$(uid job/y--copy)"
ok "a foreign Job of the copy Job's name: Failed naming it, the Job left alone"

# x-delete's copy never started: the Job controller stops it at its deadline.
kc -n "$NS" patch job x-delete--copy --subresource=status --type merge -p \
    '{"status":{"conditions":[{"type":"Failed","status":"True","reason":"DeadlineExceeded","message":"Job was active longer than specified deadline"}]}}' \
    >/dev/null
ksim_wait 30 phase_is x-delete Failed || ctl_fail "x-delete: $(status x-delete phase)"
expect "x-delete's error" \
    "copy Job x-delete--copy: DeadlineExceeded: Job was active longer than specified deadline" \
    "$(status x-delete error)"
events x-delete | grep -q '^Warning Failed: copy Job x-delete--copy: DeadlineExceeded' ||
    ctl_fail "no Warning Failed event: $(events x-delete)"
ksim_wait 20 gone job x-delete--copy || ctl_fail "the stopped copy Job stays"
ok "a copy Job that never started: Failed at its deadline with DeadlineExceeded"
expect "y's foreign Job still there after those passes" "$foreign_uid" "$(uid job/y--copy)"
ctl_stop
echo "controller_backup_jobs: ok"
