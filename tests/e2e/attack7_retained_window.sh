#!/usr/bin/env bash
# A retained copy's entry deletes what another cluster wrote before the copy claimed its prefix.
# The docs promise "its window is the copy's write window, so its deletion Job deletes the copy
# and nothing else", but the window starts at the EtcdBackup's status.startTime (its
# status.copyStartedAt is the same time: when its snapshot task began), while the backup claims
# its destination only once its copy Job is recorded, after the snapshot. Namespace shoot
# applies EtcdBackup b of its etcd-main into copies--x, deletionPolicy Retain: Snapshotting
# (the sidecar's snapshot held: a large cluster takes minutes), nothing claimed. Meanwhile
# namespace other's Etcd etcd-o is admitted on copies--x (free), gets its entry and writes its
# full snapshot there; it is deleted, and the operator deletes its entry to keep its backups
# ("kubectl delete backupentry releases the prefix: the backups that are left stay"). b's
# snapshot is then answered, its copy written into copies--x (nothing claims it now), b
# Completed. shoot deletes b: its copy goes to an entry with the window [b's startTime, b's
# completionTime], which holds other's snapshot; past the grace period that entry's deletion Job
# (the operator's credentials) deletes other's snapshot, which b's copy never wrote.
# Wanted: a retained copy's window begins no earlier than its claim (status.destination
# recorded with its copy Job), or nothing written before the claim is taken for the copy's.
# Oracle: s3rver's listing.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
NS=shoot
P=copies--x

creds() { # ns
    kc -n "$1" delete secret etcd-backup --ignore-not-found >/dev/null
    kc -n "$1" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}
bstatus() { jp "$NS" etcdbackup/b "{.status.$1}"; }
job_args() { kc -n "$NS" get job b--copy -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
has_job() { [ -n "$(job_args)" ]; }
over() { p=$(bstatus phase); [ "$p" = Completed ] || [ "$p" = Failed ]; }
entry_where() { # jq filter on an entry
    kc get backupentries -o json | jq -r ".items[] | select($1) | .metadata.name"
}
listing() { snap_s3 ls "$P/" | sort | tr '\n' ' '; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
ctl_namespace other
creds "$NS"
creds other
druid_double_for "$NS" etcd-main
druid_double_admin hold
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
snapshotting() { [ "$(bstatus phase)" = Snapshotting ] && [ -n "$(bstatus startTime)" ]; }
ksim_wait 30 snapshotting || ctl_fail "b is not snapshotting: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
ok "b Snapshotting since $(bstatus startTime) (the sidecar's snapshot held); $P claimed by nobody"
sleep 1 # other's writes come after b's start (object times have seconds)

ctl_store_etcd other etcd-o S3 "$SNAP_BUCKET" "$P" || ctl_fail "other's Etcd on $P refused"
admitted_at=$SECONDS
has_o() { [ -n "$(entry_where '.spec.etcd.namespace == "other"')" ]; }
ksim_wait 20 has_o || ctl_fail "no entry for other/etcd-o"
eo=$(entry_where '.spec.etcd.namespace == "other"')
sleep 1
theirs=$P/v2/Full-00000000-00000500-1700005000.gz
snap_fixture "$SNAP_WORK/theirs" 4096 Full.gz
snap_s3 put "$theirs" "$SNAP_WORK/theirs"
kc -n other delete etcd etcd-o >/dev/null
kc delete backupentry "$eo" --timeout=30s >/dev/null || ctl_fail "entry $eo not deleted"
ok "other's etcd-o wrote $theirs, was deleted, and the operator released its entry $eo (its backups stay)"
sleep 1
# its admission record lapses from the claim Lease 30 s after admission (docs/backup-entries.md)
while [ $((SECONDS - admitted_at)) -lt 40 ]; do sleep 1; done

druid_double_admin release
ksim_wait 30 has_job || ctl_fail "no copy Job: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
snap=$(tr ',' '\n' <<<"$(job_args)" | tr -d '"[]' | sed -n 's/^--snapshot=//p')
snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
snap_s3 put "$(jp "$NS" etcd/etcd-main '{.spec.backup.store.prefix}')/v2/$snap" "$SNAP_WORK/snap"
ctl_jobs_serve "$NS"
ksim_wait 60 over || ctl_fail "b did not end: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
[ "$(bstatus phase)" = Completed ] || ctl_fail "b $(bstatus phase): $(bstatus error): the script's premise failed"
started=$(bstatus startTime)
ok "b Completed: started $started, copy started $(bstatus copyStartedAt), $P holds $(listing)"

kc -n "$NS" delete etcdbackup b --timeout=60s >/dev/null || ctl_fail "b not deleted"
eb=$(entry_where '.spec.etcd.namespace == "shoot" and .spec.prefix == "'"$P"'"')
[ -n "$eb" ] || ctl_fail "no entry holds b's retained copy"
ok "b deleted: entry $eb keeps its copy, window $(kc get backupentry "$eb" -o jsonpath='{.spec.claimedAt} .. {.spec.etcdDeletedAt}')"
ctl_s3_bucket 2s
ended() { ! kc get backupentry "$eb" >/dev/null 2>&1 || [ -n "$(kc get backupentry "$eb" -o jsonpath='{.status.lastError}')" ]; }
ksim_wait 90 ended || ctl_fail "$eb: the deletion did not end: $(kc get backupentry "$eb" -o jsonpath='{.status}')"
ok "entry $eb after its grace period: $(kc get backupentry "$eb" -o jsonpath='{.spec} {.status}' 2>/dev/null || echo gone); events: $(kc -n default get events -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' | grep -F "$eb" | tail -3 | tr '\n' ' ')"
left=$(listing)
if ! grep -qF "$theirs" <<<"$left"; then
    ctl_fail "HOLE: the deletion Job of entry $eb (shoot's retained copy of EtcdBackup b) deleted $theirs, which namespace other's etcd-o wrote before b's copy began and whose entry the operator released to keep it: the window began at b's startTime ($started, its snapshot task's start), before b claimed $P with its copy (left: ${left:-nothing})"
fi
ok "other's snapshot is kept (left: $left)"
ctl_stop
echo "attack7_retained_window: ok"
