#!/usr/bin/env bash
# An EtcdBackupSchedule, driven with kubectl, on the whole stack: kube-sim,
# an Etcd whose sidecar is backup-double and whose store is s3rver, a second s3rver bucket as
# the destination, warden-controller running the EtcdOpsTasks itself. A loop plays the
# sidecar's upload and the kubelet: before a copy Job runs, the snapshot it names is put in
# the Etcd's store (snap_fixture), then tests/support/job_exec.py runs the Job.
#
# warden-controller's schedules go by its test clock (controller/core/testclock.h, here
# stopped at a time read from a file), so a fire time is reached by moving that clock, not by
# waiting: the clock is stopped behind the real one at the start of the current minute before
# the schedule exists (its creation is then after the latest fire time), and each "minute"
# moves it to 2 s past its next boundary, and the schedule is reconciled then (an annotation
# changed). A backup appears only once a boundary is passed, named after that boundary; the
# clock stands still between, however slowly a step runs.
# A schedule "* * * * *" with history limits 1/1 over four backups of its own from before
# (two Completed, two Failed, really taken): the oldest of each pruned at once, the
# Completed one's copy deleted from the destination. Minute 1: a backup taken, copied and
# Completed; the older Completed one pruned with its copy. Minute 2, the controller down and
# the sidecar answering 500: caught up exactly once at the controller's start, Failed, the
# older Failed one pruned. Minute 3, suspended: no backup; resumed, the missed fire time is
# caught up once, Completed, and the previous Completed one pruned with its copy.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
# kubesim.sh's EXIT trap is the one left: it runs snapshot.sh's clean-ups (emulators, work dir).
ksim_on_exit 'for ((i = ${#_snap_cleanups[@]} - 1; i >= 0; i--)); do eval "${_snap_cleanups[i]}" || true; done'

NS=shoot
S=nightly
SEL="etcd-warden.io/backup-schedule=$S"
DEST=offsite
JOBS_LOG=$SNAP_WORK/jobs.log

# ---- the schedule's backups, their copies in the destination ----
backups() {
    kc -n "$NS" get etcdbackups -l "$SEL" -o jsonpath='{.items[*].metadata.name}' |
        tr ' ' '\n' | sort | xargs
}
backups_are() { [ "$(backups)" = "$1" ]; }
sstatus() { jp "$NS" "etcdbackupschedule/$S" "{.status.$1}"; }
bstatus() { jp "$NS" "etcdbackup/$1" "{.status.$2}"; }
phase_is() { [ "$(bstatus "$1" phase 2>/dev/null)" = "$2" ]; }
reason_is() { [ "$(sstatus 'conditions[?(@.type=="Ready")].reason')" = "$1" ]; }
copies() { SNAP_BUCKET=$DEST snap_s3 ls copies/etcd-main/ | sort | xargs; }
copies_are() { [ "$(copies)" = "$1" ]; }
tasks() { kc -n "$NS" get etcdopstasks -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | sort | xargs; }
tasks_are() { [ "$(tasks)" = "$1" ]; }
no_jobs() { [ -z "$(kc -n "$NS" get jobs -o name)" ]; }
# The copy keys the named backups record, sorted.
keys_of() {
    local b
    for b in "$@"; do bstatus "$b" destinationKey; echo; done | sort | xargs
}
# The backup of the schedule for the fire time of Unix time $1 (its minute).
name_at() { echo "$S-$(($1 / 60))"; }
why() { # a backup's status and the tail of the Jobs' log, for a failure message
    echo "$1: $(kc -n "$NS" get etcdbackup "$1" -o jsonpath='{.status}' 2>&1); jobs: $(tail -5 "$JOBS_LOG")"
}
# A backup of the schedule from before (labelled, scheduled at $2), taken for real.
old_backup() { # name scheduled-at
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply EtcdBackup $1"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata:
  name: $1
  namespace: $NS
  labels: {etcd-warden.io/backup-schedule: $S}
  annotations: {etcd-warden.io/scheduled-at: "$2"}
spec:
  etcdName: etcd-main
  destination: {provider: S3, container: $DEST, prefix: copies/etcd-main, secretRef: {name: offsite}}
EOF
}
ctl_clock_on
# The schedule reconciled now: a changed annotation queues it.
poke() {
    kc -n "$NS" annotate ebs "$S" "test.etcd-warden.io/poke=$(date +%s%N)" --overwrite >/dev/null
}
# The controller's clock stopped 2 s past its next minute boundary, the schedule reconciled
# (unless $1 is "down": the controller is not running); prints that boundary's Unix time.
past_next_minute() {
    local b=$((($(ctl_clock_s) / 60 + 1) * 60))
    ctl_clock_stop $((b + 2))
    [ "${1:-}" = down ] || poke
    echo "$b"
}

# The sidecar's upload and the kubelet: each Job of the controller runs once; a copy Job's
# snapshot (--snapshot=NAME, which backup-double named) is put in the Etcd's store first.
# Runs until the file $1 exists (600 s at most).
serve_jobs() {
    local seen=" " uid name snap deadline=$((SECONDS + 600))
    while [ ! -e "$1" ] && [ $SECONDS -lt $deadline ]; do
        while read -r uid name snap; do
            case $seen in *" $uid "*) continue ;; esac
            seen="$seen$uid "
            if [[ $name == *--copy && $snap != - ]]; then
                echo "sidecar: $snap"
                python3 "$SNAP_SRC/tests/support/snap_fixture.py" "$SNAP_WORK/$snap" 300000 "$snap" &&
                    snap_s3 put "shoot--etcd-main/v2/$snap" "$SNAP_WORK/$snap" ||
                    echo "sidecar: cannot upload $snap"
            fi
            python3 "$SNAP_SRC/tests/support/job_exec.py" run "$NS" "$name" "$SNAP_WORK" \
                "$WARDEN_SNAPSHOT" || echo "job_exec: $name: exit $?"
        done < <(kc -n "$NS" get jobs -l app.kubernetes.io/managed-by=etcd-warden -o json 2>/dev/null |
            python3 -c '
import json, sys
for j in json.load(sys.stdin).get("items", []):
    st = j.get("status") or {}
    if st.get("succeeded") or st.get("failed") or j["metadata"].get("deletionTimestamp"):
        continue
    args = j["spec"]["template"]["spec"]["containers"][0].get("args") or []
    snap = [a.split("=", 1)[1] for a in args if a.startswith("--snapshot=")]
    print(j["metadata"]["uid"], j["metadata"]["name"], snap[0] if snap else "-")' || true)
        sleep 0.1
    done
}

# ---- the stage ----
snap_s3_start
snap_s3_bucket "$DEST"
ctl_stage
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
for s in etcd-backup offsite; do
    kc -n "$NS" create secret generic "$s" --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
done
druid_double_for "$NS" etcd-main
ctl_start
stop=$SNAP_WORK/jobs.stop
serve_jobs "$stop" >>"$JOBS_LOG" 2>&1 &
jobs_pid=$!
ksim_on_exit "touch $stop; reap_child $jobs_pid 10 TERM || true"

# ---- history from before: two Completed backups, then two Failed (the sidecar answers 500) ----
old_backup old-ok-1 2026-01-01T00:00:00Z
ksim_wait 60 phase_is old-ok-1 Completed || ctl_fail "$(why old-ok-1)"
old_backup old-ok-2 2026-01-01T01:00:00Z
ksim_wait 60 phase_is old-ok-2 Completed || ctl_fail "$(why old-ok-2)"
druid_double_admin 'reply?code=500&count=0'
old_backup old-bad-1 2026-01-01T00:00:00Z
ksim_wait 30 phase_is old-bad-1 Failed || ctl_fail "$(why old-bad-1)"
old_backup old-bad-2 2026-01-01T01:00:00Z
ksim_wait 30 phase_is old-bad-2 Failed || ctl_fail "$(why old-bad-2)"
druid_double_admin 'reply?code=200'
ok1=$(keys_of old-ok-1) ok2=$(keys_of old-ok-2)
[ -n "$ok1" ] && [ -n "$ok2" ] && [ "$ok1" != "$ok2" ] || ctl_fail "destination keys: '$ok1' '$ok2'"
expect "both copies in the destination" "$(keys_of old-ok-1 old-ok-2)" "$(copies)"
ok "history: two backups Completed with their copies in bucket $DEST, two Failed"

# ---- the schedule: the oldest Completed (and its copy) and the oldest Failed pruned ----
# The checks need no fire time passing: the controller's clock stopped at the start of the
# current minute (behind the real one), so the schedule is created after the latest fire time;
# once it exists, at the start of its creation's minute, 59 s before the next fire time.
ctl_clock_stop $(($(date +%s) / 60 * 60 + 1))
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply the EtcdBackupSchedule"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackupSchedule
metadata: {name: $S, namespace: $NS}
spec:
  schedule: "* * * * *"
  startingDeadlineSeconds: 300
  successfulBackupsHistoryLimit: 1
  failedBackupsHistoryLimit: 1
  backupTemplate:
    etcdName: etcd-main
    destination: {provider: S3, container: $DEST, prefix: copies/etcd-main, secretRef: {name: offsite}}
EOF
# A schedule prunes only the backups it made for its Etcd (its uid label, written when it creates
# them): the history from before is made its own here, as a tenant who wants it pruned does.
kc -n "$NS" label etcdbackup old-ok-1 old-ok-2 old-bad-1 old-bad-2 \
    "etcd-warden.io/backup-schedule-uid=$(jp "$NS" "etcdbackupschedule/$S" '{.metadata.uid}')" >/dev/null ||
    ctl_fail "cannot label the history with the schedule's uid"
ksim_wait 15 reason_is Scheduled || ctl_fail "no Ready/Scheduled condition: $(sstatus conditions)"
start=$(($(date -u -d "$(jp "$NS" "etcdbackupschedule/$S" '{.metadata.creationTimestamp}')" +%s) / 60 * 60))
ctl_clock_stop $((start + 1))
poke
next_is() { [ "$(sstatus nextScheduleTime)" = "$1" ]; }
ksim_wait 15 next_is "$(date -u -d "@$((start + 60))" +%Y-%m-%dT%H:%M:%SZ)" ||
    ctl_fail "nextScheduleTime by the controller's clock: $(sstatus nextScheduleTime)"
table=$(kc -n "$NS" get etcdbackupschedule "$S" -o wide)
head -1 <<<"$table" | grep -q 'SUCCESSFUL *NEXT SCHEDULE *READY *REASON *AGE' ||
    ctl_fail "kubectl get columns: $table"
grep -q "^$S .* True *Scheduled " <<<"$table" || ctl_fail "kubectl get row: $table"
next=$(sstatus nextScheduleTime)
created=$(jp "$NS" "etcdbackupschedule/$S" '{.metadata.creationTimestamp}')
grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:00Z$' <<<"$next" || ctl_fail "nextScheduleTime: '$next'"
[ "$(date -u -d "$next" +%s)" -gt "$(date -u -d "$created" +%s)" ] ||
    ctl_fail "nextScheduleTime $next is not after the schedule's creation $created"
grep -qE "^$S .* [0-9-]{10}T[0-9:]{8}Z +True +Scheduled " <<<"$table" ||
    ctl_fail "kubectl get row, NEXT SCHEDULE: $table"
ksim_wait 30 backups_are "old-bad-2 old-ok-2" ||
    ctl_fail "limits 1/1: want old-bad-2 old-ok-2, got $(backups); jobs: $(tail -5 "$JOBS_LOG")"
ksim_wait 10 copies_are "$ok2" || ctl_fail "the pruned backup's copy stays: $(copies)"
ctl_events "$NS" "$S" | grep -q '^Normal BackupDeleted: deleted EtcdBackup old-ok-1 ' ||
    ctl_fail "no BackupDeleted event: $(ctl_events "$NS" "$S")"
expect "no fire time passed yet" "" "$(sstatus lastScheduleTime)"
row=$(kc -n "$NS" get ebs "$S" --no-headers) || ctl_fail "short name ebs"
grep -qE "^$S +etcd-main +\* \* \* \* \* " <<<"$row" || ctl_fail "printer columns: $row"
ok "the oldest Completed backup pruned with its copy, the oldest Failed one pruned (limits 1/1)"

# ---- minute 1: a backup taken, copied, Completed; the older Completed one pruned with its copy ----
t1=$(past_next_minute)
b1=$(name_at "$t1")
ksim_wait 20 eval 'backups | grep -qw "$b1"' || ctl_fail "no backup $b1 at $(date -u -d "@$t1"): $(backups)"
ksim_wait 60 phase_is "$b1" Completed || ctl_fail "$(why "$b1")"
ksim_wait 30 backups_are "$b1 old-bad-2" || ctl_fail "successful limit 1: want $b1 old-bad-2, got $(backups)"
ksim_wait 10 copies_are "$(keys_of "$b1")" || ctl_fail "copies: want $(keys_of "$b1"), got $(copies)"
expect "lastScheduleTime" "$(date -u -d "@$t1" +%Y-%m-%dT%H:%M:%SZ)" "$(sstatus lastScheduleTime)"
ksim_wait 10 test -n "$(sstatus lastSuccessfulTime)" || ctl_fail "no lastSuccessfulTime"
expect "its template" "$DEST" "$(jp "$NS" "etcdbackup/$b1" '{.spec.destination.container}')"
ctl_events "$NS" "$S" | grep -q "^Normal BackupCreated: created EtcdBackup $b1 " ||
    ctl_fail "no BackupCreated event: $(ctl_events "$NS" "$S")"
ok "minute 1: $b1 Completed, its copy the only one in $DEST; old-ok-2 pruned with its copy"

# ---- minute 2: the controller down, the sidecar failing: caught up once, Failed ----
ctl_stop
druid_double_admin 'reply?code=500&count=0'
t2=$(past_next_minute down)
b2=$(name_at "$t2")
ctl_start
ksim_wait 30 phase_is "$b2" Failed || ctl_fail "no Failed catch-up backup $b2: $(backups); $(why "$b2")"
bstatus "$b2" error | grep -q "EtcdOpsTask $NS/$b2 Failed" || ctl_fail "$b2 error: $(bstatus "$b2" error)"
ksim_wait 20 backups_are "$b1 $b2" || ctl_fail "failed limit 1: want $b1 $b2, got $(backups)"
expect "caught up once" 1 "$(ctl_events "$NS" "$S" | grep -c "^Normal BackupCreated: created EtcdBackup $b2 ")"
expect "lastScheduleTime" "$(date -u -d "@$t2" +%Y-%m-%dT%H:%M:%SZ)" "$(sstatus lastScheduleTime)"
expect "the Completed copy kept" "$(keys_of "$b1")" "$(copies)"
ok "minute 2: the controller restarted, $b2 caught up once, Failed; old-bad-2 pruned"

# ---- minute 3, suspended: no backup. Resumed: caught up once, Completed; $b1 pruned ----
kc -n "$NS" patch ebs "$S" --type=merge -p '{"spec":{"suspend":true}}' >/dev/null
ksim_wait 15 reason_is Suspended || ctl_fail "not Suspended: $(sstatus conditions)"
druid_double_admin 'reply?code=200'
t3=$(past_next_minute)
b3=$(name_at "$t3")
expect "no backup while suspended" "$b1 $b2" "$(backups)"
expect "lastScheduleTime while suspended" "$(date -u -d "@$t2" +%Y-%m-%dT%H:%M:%SZ)" "$(sstatus lastScheduleTime)"
kc -n "$NS" patch ebs "$S" --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
ksim_wait 60 phase_is "$b3" Completed || ctl_fail "resumed: $(backups); $(why "$b3")"
ksim_wait 30 backups_are "$b2 $b3" || ctl_fail "resumed: want $b2 $b3, got $(backups)"
ksim_wait 10 copies_are "$(keys_of "$b3")" || ctl_fail "copies: want $(keys_of "$b3"), got $(copies)"
expect "caught up once" 1 "$(ctl_events "$NS" "$S" | grep -c "^Normal BackupCreated: created EtcdBackup $b3 ")"
ok "minute 3: suspended, no backup; resumed, $b3 caught up once, Completed; $b1 pruned with its copy"
ksim_wait 20 tasks_are "$b2 $b3" || ctl_fail "EtcdOpsTasks: want $b2 $b3, got $(tasks)"
ksim_wait 20 no_jobs || ctl_fail "Jobs stay: $(kc -n "$NS" get jobs -o name)"
ok "the pruned backups' EtcdOpsTasks collected with them; no Job left"
ctl_stop
ok "controller_backup_schedule"
