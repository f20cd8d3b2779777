#!/usr/bin/env bash
# An EtcdBackupSchedule on the real clock, driven with kubectl: a schedule "* * * * *" with
# history limits 1/1; the controller restarted across a minute boundary catches the missed
# fire time up once; the script plays the EtcdBackup controller (status patched Completed)
# and sees the oldest Completed and Failed backups of the schedule pruned beyond the limits;
# suspended (kubectl patch), a fire time passes without a backup; resumed, the missed one is
# caught up once. About two minutes: two minute boundaries are waited for.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

S=nightly
SEL="etcd-warden.io/backup-schedule=$S"

backups() { kc -n shoot get etcdbackups -l "$SEL" -o jsonpath='{.items[*].metadata.name}'; }
backups_are() { [ "$(backups)" = "$1" ]; }
count_is() { [ "$(wc -w <<<"$(backups)")" -eq "$1" ]; }
status() { jp shoot "etcdbackupschedule/$S" "{.status.$1}"; }
reason_is() { [ "$(status 'conditions[?(@.type=="Ready")].reason')" = "$1" ]; }
set_phase() { # backup phase
    kc -n shoot patch etcdbackup "$1" --subresource=status --type=merge \
        -p "{\"status\":{\"phase\":\"$2\",\"completionTime\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}}" >/dev/null
}
old_backup() { # name, scheduled-at, phase: a backup of the schedule from before
    kc -n shoot apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata:
  name: $1
  labels: {etcd-warden.io/backup-schedule: $S}
  annotations: {etcd-warden.io/scheduled-at: "$2"}
spec: {etcdName: etcd-main}
EOF
    set_phase "$1" "$3"
}
# Wait (bounded by the clock: at most 62 s) until the next minute boundary is 2 s behind.
past_next_minute() {
    local target=$(( ($(date +%s) / 60 + 1) * 60 + 2 ))
    while [ "$(date +%s)" -lt "$target" ]; do sleep 0.2; done
}
# The name of the backup of the schedule's lastScheduleTime.
due_name() {
    local t
    t=$(status lastScheduleTime)
    [ -n "$t" ] || ctl_fail "no lastScheduleTime"
    echo "$S-$(( $(date -u -d "$t" +%s) / 60 ))"
}

ctl_stage
kc create namespace shoot >/dev/null 2>&1 || true
old_backup old-completed 2026-01-01T00:00:00Z Completed
old_backup old-failed-1 2026-01-01T00:00:00Z Failed
old_backup old-failed-2 2026-01-01T01:00:00Z Failed
ctl_start
# the first checks need the controller running with no fire time passing: 20 s at least
[ $(( $(date +%s) % 60 )) -lt 40 ] || past_next_minute
kc -n shoot apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackupSchedule
metadata: {name: $S}
spec:
  schedule: "* * * * *"
  successfulBackupsHistoryLimit: 1
  failedBackupsHistoryLimit: 1
  backupTemplate:
    etcdName: etcd-main
    destination: {provider: S3, container: offsite, prefix: shoot/etcd-main, secretRef: {name: offsite}}
EOF
ksim_wait 15 reason_is Scheduled || ctl_fail "no Ready/Scheduled condition: $(status conditions)"
ksim_wait 15 backups_are "old-completed old-failed-2" ||
    ctl_fail "failed limit 1: want old-completed old-failed-2, got $(backups)"
ok "the oldest Failed backup pruned at once (failedBackupsHistoryLimit 1)"
row=$(kc -n shoot get ebs "$S" --no-headers) || ctl_fail "short name ebs"
grep -qE "^$S +etcd-main +\* \* \* \* \* " <<<"$row" || ctl_fail "printer columns: $row"
ok "kubectl get ebs: $row"

# The controller is down while a fire time passes: caught up once at its start.
expect "no fire time passed yet" "" "$(status lastScheduleTime)"
ctl_stop
past_next_minute
ctl_start
ksim_wait 20 count_is 3 || ctl_fail "no backup caught up: $(backups)"
b1=$(due_name)
expect "the caught-up backup is the one of lastScheduleTime" "$b1 old-completed old-failed-2" "$(backups)"
expect "active" "$b1" "$(status 'active[*].name')"
expect "its label" "$S" "$(jp shoot "etcdbackup/$b1" '{.metadata.labels.etcd-warden\.io/backup-schedule}')"
expect "its template" "offsite" "$(jp shoot "etcdbackup/$b1" '{.spec.destination.container}')"
ctl_events shoot "$S" | grep -q '^Normal BackupCreated: ' || ctl_fail "no BackupCreated event"

# Play the backup controller: Completed, so the older Completed one goes.
set_phase "$b1" Completed
ksim_wait 20 backups_are "$b1 old-failed-2" ||
    ctl_fail "successful limit 1: want $b1 old-failed-2, got $(backups)"
ok "the older Completed backup pruned (successfulBackupsHistoryLimit 1)"
ksim_wait 10 test -n "$(status lastSuccessfulTime)" || ctl_fail "no lastSuccessfulTime"
ok "lastSuccessfulTime $(status lastSuccessfulTime)"

# Suspended: a fire time passes without a backup.
kc -n shoot patch ebs "$S" --type=merge -p '{"spec":{"suspend":true}}' >/dev/null
ksim_wait 15 reason_is Suspended || ctl_fail "not Suspended: $(status conditions)"
past_next_minute
expect "no backup while suspended" "$b1 old-failed-2" "$(backups)"
# Resumed: the fire time missed while suspended is caught up, once.
kc -n shoot patch ebs "$S" --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
ksim_wait 20 count_is 3 || ctl_fail "resumed: no backup: $(backups)"
b2=$(due_name)
expect "resumed: one backup, of the latest fire time" "$b1 $b2 old-failed-2" "$(backups)"
expect "active after resume" "$b2" "$(status 'active[*].name')"
ctl_stop
ok "controller_backup_schedule"
