#!/usr/bin/env bash
# A failed EtcdBackup's deletion deletes another backup's copy. With etcd-druid executing the
# EtcdOpsTasks (docs/backups-and-restores.md: "whichever executor runs tasks (warden-controller's
# --ops-task-executor or etcd-druid)"), the task's status does not name the snapshot (druid
# writes "Snapshot created successfully"), so the copy Job copies "the latest full snapshot"
# and status.snapshot.name stays empty. A backup whose copy Job was made and that has no
# status.destinationKey then deletes, when it is deleted, "the objects of the destination prefix
# written in the copy's write window, from status.copyStartedAt to the later of its
# completionTime and the copy Job's deadline (status.copyStartedAt + 2 hours)". That holds for
# a copy Job that failed and whose result was read just as for one never read; and "the copies
# of EtcdBackups of one Etcd may share a prefix" (a schedule's history writes one prefix every
# fire time). Namespace shoot, etcd-druid's executor (warden-controller --ops-task-executor=false;
# the script writes the task's status as etcd-druid does):
#   1. EtcdBackup b1 (deletionPolicy Delete) of etcd-main into copies--shoot: the task
#      Succeeded, the copy Job finds no full snapshot yet in the Etcd's store and fails: b1
#      Failed (nothing written).
#   2. The sidecar uploads a full snapshot; EtcdBackup b2 (Delete) of etcd-main into
#      copies--shoot, minutes later: Completed, its copy copies--shoot/v2/Full-... written.
#   3. shoot deletes the failed b1 (or a schedule prunes it: failedBackupsHistoryLimit).
# b1's delete Job deletes copies--shoot's objects written in [b1's copy start, + 2 h]: b2's copy.
# Wanted: a deletion deletes only what its own copy wrote (a copy whose result was read and
# that wrote nothing deletes nothing; and never another live EtcdBackup's destinationKey).
# Oracle: s3rver's listing against b2's status.destinationKey, b2 Completed and stored.
# Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
NS=shoot
P=copies--shoot

bstatus() { jp "$NS" "etcdbackup/$1" "{.status.$2}"; }
over() { p=$(bstatus "$1" phase); [ "$p" = Completed ] || [ "$p" = Failed ]; }
listing() { snap_s3 ls "$P/" | sort | tr '\n' ' '; }
task_of() { bstatus "$1" opsTaskName; }
# etcd-druid's executor: the task Succeeded, lastOperation as ondemandsnapshot.go:156 writes it
druid_succeeds() { # backup
    local t now
    t=$(task_of "$1")
    [ -n "$t" ] || return 1
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    kc -n "$NS" patch etcdopstask "$t" --subresource=status --type merge -p \
        "{\"status\":{\"state\":\"Succeeded\",\"startedAt\":\"$now\",\"lastTransitionTime\":\"$now\",\"lastOperation\":{\"type\":\"Execution\",\"state\":\"Completed\",\"description\":\"Snapshot created successfully\",\"lastTransitionTime\":\"$now\"}}}" \
        >/dev/null 2>&1
}
backup() { # name
    kc apply -f - >/dev/null <<EOF || ctl_fail "EtcdBackup $1 refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $1, namespace: $NS}
spec:
  etcdName: etcd-main
  deletionPolicy: Delete
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $P, secretRef: {name: etcd-backup}}
EOF
    ksim_wait 30 druid_succeeds "$1" ||
        ctl_fail "$1: no EtcdOpsTask to execute: $(kc -n "$NS" get etcdbackup "$1" -o jsonpath='{.status}')"
    ksim_wait 120 over "$1" || ctl_fail "$1 did not end: $(kc -n "$NS" get etcdbackup "$1" -o jsonpath='{.status}')"
}

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc -n "$NS" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
wh_register_backups
ctl_jobs_serve "$NS"
ctl_start --ops-task-executor=false
src=$(jp "$NS" etcd/etcd-main '{.spec.backup.store.prefix}')

backup b1
[ "$(bstatus b1 phase)" = Failed ] ||
    ctl_fail "b1 did not fail with no full snapshot in the Etcd's store: $(kc -n "$NS" get etcdbackup b1 -o jsonpath='{.status}')"
[ -n "$(bstatus b1 copyStartedAt)" ] || ctl_fail "b1 failed before its copy Job: $(kc -n "$NS" get etcdbackup b1 -o jsonpath='{.status}')"
ok "b1 Failed after its copy Job ran: $(bstatus b1 error) (listing of $P: $(listing))"

snap="Full-00000000-00000100-$(($(date +%s) - 5)).gz"
snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
snap_s3 put "$src/v2/$snap" "$SNAP_WORK/snap"
sleep 2 # b2's copy is written at least a second after b1's copy start
backup b2
[ "$(bstatus b2 phase)" = Completed ] || ctl_fail "b2: $(kc -n "$NS" get etcdbackup b2 -o jsonpath='{.status}')"
key=$(bstatus b2 destinationKey)
grep -qF "$key" <<<"$(listing)" || ctl_fail "b2's copy $key is not in the store: $(listing)"
ok "b2 Completed: its copy $key is in the store"

kc -n "$NS" delete etcdbackup b1 --wait=false >/dev/null
gone() { ! kc -n "$NS" get etcdbackup b1 >/dev/null 2>&1; }
ksim_wait 90 gone || ok "b1's deletion holds: $(kc -n "$NS" get etcdbackup b1 -o jsonpath='{.status}')"
left=$(listing)
if ! grep -qF "$key" <<<"$left" && [ "$(bstatus b2 phase)" = Completed ]; then
    ctl_fail "HOLE: deleting the failed EtcdBackup b1 (its copy wrote nothing) deleted $key, the copy of the Completed EtcdBackup b2 in the same prefix: b1's delete Job deleted every object of $P written within 2 h of b1's copy start (events: $(kc -n "$NS" get events --field-selector involvedObject.name=b1 -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' | tail -3 | tr '\n' ' '); left in $P: ${left:-nothing})"
fi
ok "b2's copy $key stays after b1's deletion (left: $left)"
ctl_stop
echo "attack8_failed_copy_window: ok"
