#!/usr/bin/env bash
# A Retain EtcdBackup whose copy was written but whose result was never read leaves the copy
# unclaimed when it is deleted. The documented Delete path knows the state ("a backup whose
# copy Job was made and whose result was never read (the Job deleted first: Failed, no
# status.destinationKey) deletes what the copy may have written"); the Retain path hands a
# copy to a BackupEntry only when the backup is Completed with a destination key, and
# otherwise drops its finalizer. Namespace shoot takes EtcdBackup b of its etcd-main into
# copies--shoot, deletionPolicy Retain. warden-controller is down (an upgrade, a node drain)
# while the copy Job runs: the copy (a full snapshot of shoot's cluster, Secrets included) is
# written, and the finished Job is deleted (a Job clean-up) before the controller is back; it
# then finds the Job gone and fails b (no destination key). Its status.destination still keeps
# other namespaces out. shoot deletes b: no entry is made, the finalizer goes, and with it the
# claim; the copy stays. Namespace other then applies an Etcd on copies--shoot: admitted, and
# its sidecar restores shoot's cluster from the copy at its first start. Wanted: a Retain
# backup whose copy Job was made hands what it may have written to a BackupEntry (its window
# status.copyStartedAt to its end), as the Delete path deletes it.
# Oracle: s3rver's listing and the Etcd kube-sim stores.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
NS=shoot
P=copies--shoot

creds() { # ns
    kc -n "$1" delete secret etcd-backup --ignore-not-found >/dev/null
    kc -n "$1" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}
bstatus() { jp "$NS" etcdbackup/b "{.status.$1}"; }
job_args() { kc -n "$NS" get job b--copy -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
has_job() { [ -n "$(job_args)" ]; }
job_done() { [ -n "$(kc -n "$NS" get job b--copy -o jsonpath='{.status.completionTime}{.status.failed}' 2>/dev/null)" ]; }
over() { p=$(bstatus phase); [ "$p" = Completed ] || [ "$p" = Failed ]; }
listing() { snap_s3 ls "$P/" | sort | tr '\n' ' '; }
gone() { ! kc -n "$NS" get etcdbackup b >/dev/null 2>&1; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc create namespace other >/dev/null
creds "$NS"
creds other
druid_double_for "$NS" etcd-main
wh_register_backups
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
ctl_stop
ctl_jobs_serve "$NS"
ksim_wait 60 job_done || ctl_fail "the copy Job did not run"
ctl_jobs_stop
grep -qF "$P/v2/$snap" <<<"$(listing)" || ctl_fail "the copy Job wrote no copy: $(listing)"
kc -n "$NS" delete job b--copy --wait=true --timeout=30s >/dev/null
ok "warden-controller down: b's copy Job wrote $P/v2/$snap and is gone"

ctl_start
ksim_wait 60 over || ctl_fail "b did not end: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
ok "warden-controller back: b $(bstatus phase): $(bstatus error) (destination key: \"$(bstatus destinationKey)\")"
if out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" "$P" 2>&1); then
    ctl_fail "the reference case: other's Etcd admitted on b's copy while b exists: $out"
fi
ok "reference: other's Etcd on $P is refused while b exists"

kc -n "$NS" delete etcdbackup b --wait=false >/dev/null
if ! ksim_wait 60 gone; then
    ok "b's deletion holds (its copy kept claimed): $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
    ctl_stop
    echo "attack7_retain_unread_copy: ok"
    exit 0
fi
admitted() { out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" "$P" 2>&1); }
if ! ksim_wait 30 admitted; then
    ok "namespace other's Etcd on $P stays refused: ${out:0:240}"
    ctl_stop
    echo "attack7_retain_unread_copy: ok"
    exit 0
fi
left=$(listing)
if grep -qF "$P/v2/$snap" <<<"$left" && [ "$(jp other etcd/etcd-x '{.spec.backup.store.prefix}')" = "$P" ]; then
    ctl_fail "HOLE: namespace other's Etcd etcd-x admitted on $P, which holds shoot's copy $snap written by the Retain EtcdBackup b (Failed: its copy Job's result was never read): b's deletion made no BackupEntry and its claim went with it; other's sidecar restores shoot's cluster at its first start (entries: $(kc get backupentries -o name | tr '\n' ' '); listing: $left)"
fi
ok "other's Etcd on $P admitted once nothing of shoot's is left there (listing: ${left:-empty})"
ctl_stop
echo "attack7_retain_unread_copy: ok"
