#!/usr/bin/env bash
# "A BackupEntry's deletion waits while an EtcdRestore reads from its prefix" holds only for a
# restore whose source is spec.source.store: one whose source is spec.source.backupName reads
# the EtcdBackup's copy, and a copy gets an entry of its own when its EtcdBackup (Retain) is
# deleted. Namespace shoot takes EtcdBackup b of its etcd-main into copies--shoot (Retain,
# Completed: the copy is in the store), then applies EtcdRestore r from backupName b: admitted,
# its copy Job r--restore created (Copying; kube-sim runs no Pods and no Job runs in shoot from
# here: the copy is held in flight). shoot then deletes b: its copy is handed to a BackupEntry,
# PendingDeletion from the start. The bucket's grace period ends while r still reads, and the
# entry's deletion Job (the operator's credentials) deletes the copy under the running restore:
# the restore then copies nothing (or part of the chain) and the backup is gone. Wanted: r's
# source (a backup's copy) holds back the deletion of that prefix until r is Completed or
# Failed, as a store source does (or b's deletion waits for r).
# Oracle: s3rver's listing, and r's phase while the copy is gone.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
NS=shoot
P=copies--shoot

bstatus() { jp "$NS" etcdbackup/b "{.status.$1}"; }
job_args() { kc -n "$NS" get job b--copy -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
has_job() { [ -n "$(job_args)" ]; }
bphase_is() { [ "$(bstatus phase)" = "$1" ]; }
rphase() { jp "$NS" etcdrestore/r '{.status.phase}'; }
copy_entry() {
    kc get backupentries -o json |
        jq -r --arg p "$P" '.items[] | select(.spec.prefix == $p) | .metadata.name'
}
listing() { snap_s3 ls "$P/" | sort | tr '\n' ' '; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc -n "$NS" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
druid_double_for "$NS" etcd-main
ctl_s3_bucket 1h
wh_register_backups
ctl_jobs_serve etcd-warden
ctl_start

kc apply -f - >/dev/null <<EOF || ctl_fail "EtcdBackup b refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b, namespace: $NS}
spec:
  etcdName: etcd-main
  deletionPolicy: Retain
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $P, secretRef: {name: etcd-backup}}
EOF
ksim_wait 30 has_job || ctl_fail "no copy Job: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
snap=$(tr ',' '\n' <<<"$(job_args)" | tr -d '"[]' | sed -n 's/^--snapshot=//p')
snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
snap_s3 put "$(jp "$NS" etcd/etcd-main '{.spec.backup.store.prefix}')/v2/$snap" "$SNAP_WORK/snap"
ctl_jobs_serve "$NS"
ksim_wait 60 bphase_is Completed || ctl_fail "b: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
ctl_jobs_stop # from here no Job of shoot runs: r's copy stays in flight
grep -qF "$P/v2/$snap" <<<"$(listing)" || ctl_fail "no copy of b in $P: $(listing)"
ok "b Completed (Retain): its copy $P/v2/$snap is in the store"

kc apply -f - >/dev/null <<EOF || ctl_fail "the restore from b refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: $NS}
spec:
  source: {backupName: b}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-back, store: {provider: S3, container: $SNAP_BUCKET, prefix: restored--shoot, secretRef: {name: etcd-backup}}}
EOF
copying() { kc -n "$NS" get job r--restore >/dev/null 2>&1 && [ "$(rphase)" = Copying ]; }
ksim_wait 30 copying || ctl_fail "r is not copying: $(kc -n "$NS" get etcdrestore r -o jsonpath='{.status}')"
ok "EtcdRestore r from backupName b is Copying (its Job r--restore in flight)"

kc -n "$NS" delete etcdbackup b --wait=false >/dev/null
b_gone() { ! kc -n "$NS" get etcdbackup b >/dev/null 2>&1; }
if ! ksim_wait 30 b_gone; then
    ok "b's deletion waits while r reads its copy: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
    ctl_stop
    echo "attack7_restore_backup_source: ok"
    exit 0
fi
e=$(copy_entry)
[ -n "$e" ] || ctl_fail "b gone and no entry holds its retained copy in $P"
ok "b deleted; its retained copy held by entry $e ($(kc get backupentry "$e" -o jsonpath='{.status.phase}'))"

ctl_s3_bucket 2s
decided() {
    ! grep -qF "$P/v2/$snap" <<<"$(listing)" ||
        [ -n "$(kc get backupentry "$e" -o jsonpath='{.status.conditions[?(@.type=="PrefixConflict")].message}' 2>/dev/null)" ]
}
ksim_wait 90 decided || ctl_fail "entry $e: neither deleted nor blocked: $(kc get backupentry "$e" -o jsonpath='{.status}')"
left=$(listing)
phase=$(rphase)
if ! grep -qF "$P/v2/$snap" <<<"$left" && [ "$phase" != Completed ] && [ "$phase" != Failed ]; then
    ctl_fail "HOLE: the deletion Job of entry $e (b's retained copy) deleted $P/v2/$snap while EtcdRestore $NS/r (source backupName b, phase $phase, its copy Job r--restore in flight) reads it: the backup being restored is gone under the restore (left in $P: ${left:-nothing})"
fi
ok "the deletion of $P waits while r reads it: $(kc get backupentry "$e" -o jsonpath='{.status.conditions[?(@.type=="PrefixConflict")].message}')"
ctl_stop
echo "attack7_restore_backup_source: ok"
