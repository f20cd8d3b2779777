#!/usr/bin/env bash
# An EtcdBackup claims its destination only once its copy is written (status.destination);
# with prefixScope: Namespace "a namespace claims only its own part of the store", and the
# claims not moved by the setting are the ones made before it: an Etcd, an entry, "an
# EtcdBackup's copies" (docs/backup-entries.md). An EtcdBackupSchedule is no claim: each fire
# time makes a new EtcdBackup, whose copy is a new claim. BackupBucket shared (both namespaces
# selected) starts with prefixScope Bucket; namespace team applies a schedule "* * * * *" of its
# etcd-main with destination team2/stolen (admitted: Bucket scope). The operator then sets
# prefixScope: Namespace, and team's own EtcdBackup into team2's part is refused (the
# reference). At the next fire time:
#   - a backup made into team2/stolen, its copy Job writing there, is the hole (a new claim in
#     another namespace's part after the setting, blocking team2 there);
#   - refused (warden-webhook refuses the controller's CREATE), the schedule must say so
#     (Ready False or a Warning event), as it does for a destination in use: a schedule whose
#     every fire time is refused while it reads Ready True "backups on schedule" has its
#     backups stop silently: the owner finds out on the day of the restore.
# Oracle: what kube-sim stores (the schedule's EtcdBackups, status and events, the copy Job).
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
NS=team
S=nightly
SEL="etcd-warden.io/backup-schedule=$S"

backups() { kc -n "$NS" get etcdbackups -l "$SEL" -o jsonpath='{.items[*].metadata.name}'; }
sstatus() { jp "$NS" "etcdbackupschedule/$S" "{.status.$1}"; }
bucket() { # prefixScope
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket shared"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec:
  provider: aws
  container: $SNAP_BUCKET
  secretRef: {namespace: etcd-warden, name: creds}
  deletionGracePeriod: 1h
  prefixScope: $1
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: shared}}
EOF
}
ebk() { # name prefix (a server-side dry run: nothing stored)
    kc apply --dry-run=server -f - <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $1, namespace: $NS}
spec:
  etcdName: etcd-main
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $2, secretRef: {name: etcd-backup}}
EOF
}
etcd2() { # prefix
    kc apply -f - <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-2, namespace: team2}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: $SNAP_BUCKET, prefix: "$1", secretRef: {name: etcd-backup}}}
EOF
}
# The controller's test clock (ctl_clock_*), stopped where the test puts it: a fire time is
# reached by moving it (as controller_backup_schedule does).
ctl_clock_on
poke() { kc -n "$NS" annotate ebs "$S" "test.etcd-warden.io/poke=$(date +%s%N)" --overwrite >/dev/null; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc create namespace team2 >/dev/null
for n in "$NS" team2; do
    kc -n "$n" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
    kc label namespace "$n" etcd-warden.io/backups=shared >/dev/null
done
ctl_backup_secret etcd-warden creds
bucket Bucket
druid_double_for "$NS" etcd-main
wh_register_backups
ctl_start

ctl_clock_stop $(($(date +%s) / 60 * 60 + 1))
kc apply -f - >/dev/null <<EOF || ctl_fail "the schedule refused under prefixScope Bucket"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackupSchedule
metadata: {name: $S, namespace: $NS}
spec:
  schedule: "* * * * *"
  startingDeadlineSeconds: 300
  backupTemplate:
    etcdName: etcd-main
    destination: {provider: S3, container: $SNAP_BUCKET, prefix: team2/stolen, secretRef: {name: etcd-backup}}
EOF
start=$(($(date -u -d "$(jp "$NS" "etcdbackupschedule/$S" '{.metadata.creationTimestamp}')" +%s) / 60 * 60))
ctl_clock_stop $((start + 1))
ok "team's schedule into team2/stolen admitted under prefixScope Bucket"

bucket Namespace
refused() { ! out=$(ebk probe team2/other 2>&1) && grep -q 'is not namespace team'"'"'s' <<<"$out"; }
ksim_wait 20 refused || ctl_fail "the reference case: team's EtcdBackup into team2's part not refused under prefixScope Namespace: $out"
expect "no backup of the schedule yet" "" "$(backups)"
ok "prefixScope Namespace: team's own EtcdBackup into team2/other is refused"

ctl_clock_stop $((start + 62))
poke
ready() { sstatus 'conditions[?(@.type=="Ready")].status'; }
# the fire time reached: a backup of the schedule made, or its CREATE answered by warden-webhook
fired() { [ -n "$(backups)" ] || grep -q '"name":"'"$S"'-[0-9]*".*"result":"denied"' "$WH_LOG"; }
ksim_wait 30 fired || ctl_fail "the fire time made no backup and no request: $(kc -n "$NS" get ebs "$S" -o jsonpath='{.status}')"
b=$(backups)
if [ -z "$b" ]; then
    ok "the fire time's EtcdBackup into team2's part is refused at admission (no backup, no claim)"
    said() { [ "$(ready)" = False ] || ctl_events "$NS" "$S" | grep -q '^Warning '; }
    if ! ksim_wait 20 said; then
        ctl_fail "HOLE (silent): every fire time of schedule $S is refused (its EtcdBackup's destination team2/stolen is namespace team2's part) and the schedule says nothing: status $(kc -n "$NS" get ebs "$S" -o jsonpath='{.status}'), events: $(ctl_events "$NS" "$S" | tr '\n' ';'); team's backups silently stop while Ready is True"
    fi
    ok "the schedule says why: $(sstatus 'conditions[?(@.type=="Ready")].reason') $(sstatus 'conditions[?(@.type=="Ready")].message' | cut -c1-200) $(ctl_events "$NS" "$S" | grep '^Warning ' | head -1 | cut -c1-200)"
    ctl_stop
    echo "attack5_schedule_scope: ok"
    exit 0
fi
bstatus() { jp "$NS" "etcdbackup/$b" "{.status.$1}"; }
decided() { kc -n "$NS" get job "$b--copy" >/dev/null 2>&1 || [ "$(bstatus phase)" = Failed ]; }
ksim_wait 30 decided || true
if [ "$(bstatus phase)" = Failed ]; then
    ok "the schedule's backup $b failed before writing: $(bstatus error | cut -c1-200)"
    ctl_stop
    echo "attack5_schedule_scope: ok"
    exit 0
fi
args=$(kc -n "$NS" get job "$b--copy" -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null || true)
blocked=""
if out=$(etcd2 team2/stolen 2>&1); then blocked="admitted"; else blocked="refused: ${out:0:160}"; fi
ctl_fail "HOLE: after prefixScope Namespace, team's schedule made EtcdBackup $b into team2/stolen (phase $(bstatus phase), status.destination $(bstatus destination)), its copy Job writing team2's part: ${args:-no Job yet}; team2's own Etcd on team2/stolen: $blocked"
