#!/usr/bin/env bash
# A copy Job writes into another namespace's part of a partitioned Local BackupBucket: the
# destination Secret's hostPath edited after admission. Issue 29: "EtcdBackup, EtcdBackupSchedule
# and EtcdRestore destinations are validated at admission (prefix rules, whole container,
# overlap)"; docs/backup-entries.md (Prefixes partitioned by namespace): a namespace may claim
# only its own part of a Local bucket with prefixScope: Namespace, "an EtcdBackup's or schedule's
# destination, a restore's target" included; webhook/plocal.h: "A hostPath edited after
# admission is not seen here; the destructive steps (deletion Jobs, copies) decide again when
# they run".
#   1. BackupBucket local (provider Local, container bkt, hostPath /var/lib/lb, prefixScope
#      Namespace) selecting namespaces alice and bob (a part each). alice's Etcd etcd-a (prefix
#      alice/etcd-a, her part) wrote a full snapshot to /var/lib/lb/bkt/alice/etcd-a.
#   2. alice's EtcdBackup b of etcd-a, destination Local container alice + prefix copy with
#      her Secret dest at /var/lib/lb/bkt (/var/lib/lb/bkt/alice/copy: her part, admitted), and
#      her EtcdRestore r from etcd-a's store, target Local alice + restored with her Secret tgt
#      at /var/lib/lb/bkt (her part, admitted). (A copy mounts its source's and destination's
#      containers side by side: one container name under two host paths is refused, so the
#      destination's container is alice.)
#   3. Before the controller runs (so the order is certain) alice edits dest's and tgt's
#      hostPath to /var/lib/lb/bkt/bob: the copy Jobs' directories become
#      /var/lib/lb/bkt/bob/alice/copy and .../restored, which the partition gives to bob.
#      Nobody claims them yet, so no overlap stops the copy.
# Control: alice's unedited EtcdBackup b0 (alice/copy0) and EtcdRestore r0 (alice/restored0)
# copy her snapshot into her part.
# Wanted: b and r fail (status.error and a Warning event say why) and no copy Job is made.
# Oracle: the node's directories (job_exec.py mounts hostPath volumes under
# $CRONJOB_EXEC_HOST_ROOT) and the hostPath volumes of the Jobs kube-sim stores. Fails (HOLE)
# while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
SRC=$NODE/var/lib/lb/bkt/alice/etcd-a
BOB=$NODE/var/lib/lb/bkt/bob
backup() { # name destination-secret prefix
    kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $1, namespace: alice}
spec:
  etcdName: etcd-a
  deletionPolicy: Retain
  destination: {provider: Local, container: alice, prefix: $3, secretRef: {name: $2}}
EOF
}
restore() { # name target-secret target-prefix
    kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $1, namespace: alice}
spec:
  source: {store: {provider: Local, container: bkt, prefix: alice/etcd-a, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-$1, store: {provider: Local, container: alice, prefix: $3, secretRef: {name: $2}}}
EOF
}
bphase() { jp alice "etcdbackup/$1" '{.status.phase}'; }
rphase() { jp alice "etcdrestore/$1" '{.status.phase}'; }
ended() { p=$($1 "$2"); [ "$p" = Completed ] || [ "$p" = Failed ]; }
druid_succeeds() { # etcd-druid's executor: ondemandsnapshot.go:156
    local t now
    t=$(jp alice "etcdbackup/$1" '{.status.opsTaskName}')
    [ -n "$t" ] || return 1
    [ "$(jp alice "etcdopstask/$t" '{.status.state}' 2>/dev/null)" != Succeeded ] || return 0
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    kc -n alice patch etcdopstask "$t" --subresource=status --type merge -p \
        "{\"status\":{\"state\":\"Succeeded\",\"startedAt\":\"$now\",\"lastTransitionTime\":\"$now\",\"lastOperation\":{\"type\":\"Execution\",\"state\":\"Completed\",\"description\":\"Snapshot created successfully\",\"lastTransitionTime\":\"$now\"}}}" \
        >/dev/null 2>&1
}
files() { if [ -d "$1" ]; then (cd "$1" && find . -type f | sort | xargs); fi; }
mounts() { # every hostPath a Job of alice mounts (the Jobs kube-sim holds now)
    kc -n alice get jobs -o jsonpath='{range .items[*]}{.spec.template.spec.volumes[*].hostPath.path} {end}'
}
seen=""
watch_mounts() { seen="$seen $(mounts)"; }

mkdir -p "$SRC/v2" "$BOB/alice" # a directory of bob's part on the node (the Jobs mount hostPath type Directory)
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
kc create namespace alice >/dev/null
kc create namespace bob >/dev/null
kc label namespace alice etcd-warden.io/backups=local >/dev/null
kc label namespace bob etcd-warden.io/backups=local >/dev/null
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket local"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: local}
spec:
  provider: Local
  container: bkt
  secretRef: {namespace: etcd-warden, name: local-bucket}
  deletionGracePeriod: 1h
  prefixScope: Namespace
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: local}}
EOF
[ "$(kc get backupbucket local -o jsonpath='{.spec.prefixScope}')" = Namespace ] ||
    ctl_fail "BackupBucket local is not stored with prefixScope Namespace"
local_host_path alice etcd-backup /var/lib/lb
for s in dest dest0 tgt tgt0; do local_host_path alice $s /var/lib/lb/bkt; done
wh_register_backups
ctl_jobs_serve alice

out=$(local_etcd alice etcd-a bkt alice/etcd-a etcd-backup 2>&1) || ctl_fail "alice/etcd-a refused: $out"
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
hers=Full-00000000-00000100-$(($(date +%s) - 60)).gz
cp "$SNAP_WORK/full" "$SRC/v2/$hers" # etcd-a's sidecar
wh_caught_up # the caches

# reference: the partition holds at admission (a destination in bob's part from the start)
local_host_path alice dest-bob /var/lib/lb/bkt/bob
if out=$(backup bref dest-bob copy); then
    ctl_fail "the reference case, alice's EtcdBackup into /var/lib/lb/bkt/bob/alice/copy (bob's part), admitted: $out"
fi
ok "reference: alice's EtcdBackup into bob's part refused at admission: ${out:0:200}"

out=$(backup b0 dest0 copy0) || ctl_fail "alice's EtcdBackup b0 refused: $out"
out=$(backup b dest copy) || ctl_fail "alice's EtcdBackup b (her part) refused: $out"
out=$(restore r0 tgt0 restored0) || ctl_fail "alice's EtcdRestore r0 refused: $out"
out=$(restore r tgt restored) || ctl_fail "alice's EtcdRestore r (her part) refused: $out"
ok "admitted: EtcdBackups b0, b and EtcdRestores r0, r, all in alice's part"
# moved into bob's part before any copy Job
local_host_path alice dest /var/lib/lb/bkt/bob
local_host_path alice tgt /var/lib/lb/bkt/bob
ctl_start --ops-task-executor=false

# one EtcdOpsTask of an Etcd at a time: b0's and b's are taken in turn, in either order
deadline=$((SECONDS + 150))
until { ended bphase b0 && ended bphase b && ended rphase r0 && ended rphase r; } ||
    [ $SECONDS -ge $deadline ]; do
    druid_succeeds b0 || true
    druid_succeeds b || true
    watch_mounts
    sleep 1
done
watch_mounts
ended bphase b0 || ctl_fail "b0 did not end: $(jp alice etcdbackup/b0 '{.status}')"
ended rphase r0 || ctl_fail "r0 did not end: $(jp alice etcdrestore/r0 '{.status}')"

expect "alice's unedited EtcdBackup b0" Completed "$(bphase b0)"
cmp -s "$SNAP_WORK/full" "$NODE/var/lib/lb/bkt/alice/copy0/v2/$hers" ||
    ctl_fail "b0 did not copy her snapshot: $(files "$NODE/var/lib/lb/bkt/alice/copy0")"
expect "alice's unedited EtcdRestore r0" Completed "$(rphase r0)"
cmp -s "$SNAP_WORK/full" "$NODE/var/lib/lb/bkt/alice/restored0/v2/$hers" ||
    ctl_fail "r0 did not copy her snapshot: $(files "$NODE/var/lib/lb/bkt/alice/restored0")"
ok "control: b0 and r0 copied $hers into alice's part"

holes=0
got=$(files "$BOB")
if [ -n "$got" ]; then
    echo "HOLE: alice's copies wrote into bob's part of BackupBucket local (/var/lib/lb/bkt/bob, prefixScope Namespace) after her Secrets' hostPath was edited: $got (b: $(bphase b), r: $(rphase r))"
    holes=$((holes + 1))
fi
if grep -q '/var/lib/lb/bkt/bob' <<<"$seen"; then
    echo "HOLE: a copy Job of alice mounted a hostPath in bob's part: $(tr ' ' '\n' <<<"$seen" | sort -u | xargs)"
    holes=$((holes + 1))
fi
for o in "etcdbackup b bphase" "etcdrestore r rphase"; do
    set -- $o
    ph=$($3 "$2")
    msg=$(jp alice "$1/$2" '{.status.error}')
    if [ "$ph" != Failed ] || ! grep -q 'not namespace alice' <<<"$msg"; then
        echo "HOLE: $1 $2 is $ph, not Failed for the partition: $msg"
        holes=$((holes + 1))
    elif ! ctl_events alice "$2" | grep -q '^Warning .*not namespace alice'; then
        echo "HOLE: $1 $2 Failed without a Warning event naming the partition: $(ctl_events alice "$2" | xargs)"
        holes=$((holes + 1))
    else
        ok "$1 $2 Failed: ${msg:0:300}"
    fi
done
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a copy Job wrote outside its namespace's part of a partitioned Local bucket"; exit 1; }
echo "attack16_local_copy_partition: ok"
