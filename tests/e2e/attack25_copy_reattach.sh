#!/usr/bin/env bash
# docs/backups-and-restores.md, Retain: the retained copy's entry has "the copy's write window"
# and "the namespace's own Etcd of that name may be created on it (it reattaches, and restores
# its own data)"; docs/backup-entries.md, T2: what another cluster writes into a prefix while
# the entry's Etcd is gone "stays". shoot copies etcd-main (Retain EtcdBackup b) into copies--r
# with the bucket's Secret; b is deleted (the copy handed to an entry). Another seed's cluster
# writes into copies--r. shoot deletes etcd-main and creates it again on copies--r (reattaching
# to the copy's entry, as documented), then deletes it for good. Past the grace period the
# entry must keep what the other seed wrote between the copy's end and the re-creation.
# Oracle: s3rver's listing of copies--r.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
NS=shoot
D=copies--r

bstatus() { jp "$NS" "etcdbackup/$1" "{.status.$2}"; }
job_args() { kc -n "$NS" get job "$1--copy" -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
has_job() { [ -n "$(job_args "$1")" ]; }
over() { p=$(bstatus "$1" phase); [ "$p" = Completed ] || [ "$p" = Failed ]; }
entry_of() { kc get backupentries -o json | jq -r ".items[] | select(.spec.prefix == \"$1\") | .metadata.name"; }
listing() { snap_s3 ls "$1/" | sort; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
ctl_backup_secret "$NS" || ctl_fail "cannot create the backup Secret"
druid_double_for "$NS" etcd-main
ctl_s3_bucket 1h
wh_register_backups
ctl_jobs_serve etcd-warden
ctl_start

kc apply -f - >/dev/null <<EOF2 || ctl_fail "EtcdBackup b refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b, namespace: $NS}
spec:
  etcdName: etcd-main
  deletionPolicy: Retain
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $D, secretRef: {name: etcd-backup}}
EOF2
ksim_wait 60 has_job b || ctl_fail "no copy Job of b: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
snap=$(tr ',' '\n' <<<"$(job_args b)" | tr -d '"[]' | sed -n 's/^--snapshot=//p')
snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
snap_s3 put "$(jp "$NS" etcd/etcd-main '{.spec.backup.store.prefix}')/v2/$snap" "$SNAP_WORK/snap"
ctl_jobs_serve "$NS"
ksim_wait 60 over b || ctl_fail "b did not end"
[ "$(bstatus b phase)" = Completed ] || ctl_fail "b $(bstatus b phase): $(bstatus b error)"
ctl_jobs_stop
ok "b Completed: copyStartedAt $(bstatus b copyStartedAt) completionTime $(bstatus b completionTime) key $(bstatus b destinationKey)"
kc -n "$NS" delete etcdbackup b --timeout=60s >/dev/null || ctl_fail "b not deleted"
e=$(entry_of $D)
[ -n "$e" ] || ctl_fail "no entry keeps b's retained copy"
ok "entry $e: $(kc get backupentry "$e" -o jsonpath='{.status.phase} {.spec}' | cut -c1-500)"
sleep 2
theirs=$D/v2/Full-00000000-00000500-1800000000.gz
snap_fixture "$SNAP_WORK/theirs" 4096 Full.gz
snap_s3 put "$theirs" "$SNAP_WORK/theirs"
ok "the other seed wrote $theirs after b's copy was retained"
sleep 1

kc -n "$NS" delete etcd etcd-main --timeout=60s >/dev/null || ctl_fail "cannot delete etcd-main"
kc_druid -n "$NS" delete statefulset etcd-main --ignore-not-found >/dev/null 2>&1 || true
kc_druid -n "$NS" delete pod -l app.kubernetes.io/part-of=etcd-main --grace-period=0 >/dev/null 2>&1 || true
ok "etcd-main deleted; pods left: $(kc -n "$NS" get pods -o name | tr '\n' ' ')"
mk() { kc apply -f - >/dev/null 2>"$SNAP_WORK/mk.err" <<EOF2
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-main, namespace: $NS}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: aws, container: $SNAP_BUCKET, prefix: "$D", secretRef: {name: etcd-backup}}}
EOF2
}
# the copy's claim record counts for 120 s after b's copy began
if ! ksim_wait 60 mk; then
    echo "held: etcd-main cannot be created on $D: $(cat "$SNAP_WORK/mk.err")"; ctl_stop; exit 0
fi
ctl_members "$NS" etcd-main
reat() { [ "$(kc get backupentry "$e" -o jsonpath='{.status.phase}')" = Active ]; }
if ! ksim_wait 20 reat; then
    echo "held: etcd-main on $D not reattached to $e: $(kc get backupentry "$e" -o jsonpath='{.status.phase}'); $(ctl_events "$NS" etcd-main | tail -2 | tr '\n' '|')"
    ctl_stop; exit 0
fi
ok "etcd-main reattached to $e: $(kc get backupentry "$e" -o jsonpath='{.spec}' | cut -c1-600)"
sleep 3
kc -n "$NS" delete pod etcd-main-0 --grace-period=0 >/dev/null 2>&1 || true
kc -n "$NS" delete statefulset etcd-main >/dev/null 2>&1 || true
kc -n "$NS" delete etcd etcd-main >/dev/null || ctl_fail "cannot delete etcd-main again"
pend() { [ "$(kc get backupentry "$e" -o jsonpath='{.status.phase}')" = PendingDeletion ]; }
ksim_wait 20 pend || ctl_fail "$e not pending"
ok "entry $e pending: $(kc get backupentry "$e" -o jsonpath='{.spec}' | cut -c1-700)"
ctl_s3_bucket 2s
ksim_wait 90 ksim_gone backupentry "$e" || echo "entry $e stays: $(kc get backupentry "$e" -o jsonpath='{.status}' | cut -c1-300)"
echo "events of $e: $(ctl_events default "$e" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(listing $D)
echo "left under $D: $(echo $left)"
ctl_stop
if ! grep -qF "$theirs" <<<"$left"; then
    echo "HOLE: the entry of shoot's retained copy b, reattached by etcd-main created again on $D, deleted $theirs, written by another seed's cluster after the copy and before the re-creation (left: ${left:-nothing})"
    exit 1
fi
echo "held: $theirs stays"
echo "attack25_copy_reattach: ok"
