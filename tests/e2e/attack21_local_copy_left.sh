#!/usr/bin/env bash
# "With deletionPolicy: Delete, deleting the EtcdBackup deletes its copy first (a Job
# <backup>--delete-copy for exactly the object status.destination and status.destinationKey
# name ...)" (docs/backups-and-restores.md), then the backup goes and its destination is no
# longer claimed. A Local destination: BackupBucket local (Local, container bkt, hostPath
# /var/lib/lb; prefixScope Bucket, the default) selects alice and bob. alice's EtcdBackup b of
# etcd-a copies her full snapshot (her cluster's data, Secrets included) into bkt/alice-copy;
# alice deletes it (an event says the copy was deleted). Wanted: the copy is gone from the
# node, or the directory stays claimed for alice. Then bob creates an Etcd on bkt/alice-copy:
# admitted, its sidecar's first start restores the newest full snapshot there.
# Oracle: the node's directory (job_exec.py mounts hostPath volumes under
# $CRONJOB_EXEC_HOST_ROOT) and kubectl's answer to bob.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
SRC=$NODE/var/lib/lb/bkt/alice/etcd-a
BOB=$NODE/var/lib/lb/bkt/bob/etcd-b
bphase() { jp alice "etcdbackup/$1" '{.status.phase}'; }
druid_succeeds() { # etcd-druid's executor
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

mkdir -p "$SRC/v2" "$BOB/v2" "$NODE/var/lib/lb/bkt/alice-copy"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
for ns in alice bob; do
    kc create namespace $ns >/dev/null
    kc label namespace $ns etcd-warden.io/backups=local >/dev/null
done
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket local"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: local}
spec:
  provider: Local
  container: bkt
  secretRef: {namespace: etcd-warden, name: local-bucket}
  deletionGracePeriod: 1h
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: local}}
EOF
local_host_path alice etcd-backup /var/lib/lb
local_host_path bob etcd-backup /var/lib/lb
wh_register_backups
out=$(local_etcd alice etcd-a bkt alice/etcd-a etcd-backup 2>&1) || ctl_fail "alice/etcd-a refused: $out"
out=$(local_etcd bob etcd-b bkt bob/etcd-b etcd-backup 2>&1) || ctl_fail "bob/etcd-b refused: $out"
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
hers=Full-00000000-00000100-$(($(date +%s) - 60)).gz
his=Full-00000000-00000900-$(($(date +%s) - 30)).gz
cp "$SNAP_WORK/full" "$SRC/v2/$hers" # etcd-a's sidecar
cp "$SNAP_WORK/full" "$BOB/v2/$his"  # etcd-b's sidecar
bob_files=$(files "$BOB")
wh_caught_up

out=$(kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b, namespace: alice}
spec:
  etcdName: etcd-a
  deletionPolicy: Delete
  destination: {provider: Local, container: bkt, prefix: alice-copy, secretRef: {name: etcd-backup}}
EOF
) || ctl_fail "alice's EtcdBackup b refused: $out"
ctl_start --ops-task-executor=false
has_job() { druid_succeeds b >/dev/null 2>&1; kc -n alice get job b--copy >/dev/null 2>&1; }
ksim_wait 40 has_job || ctl_fail "no copy Job for b: $(jp alice etcdbackup/b '{.status}')"
echo "b: $(bphase b), destination $(jp alice etcdbackup/b '{.status.destination}')"

ctl_jobs_serve alice 120
ended() { p=$(bphase b); [ "$p" = Completed ] || [ "$p" = Failed ]; }
ksim_wait 30 ended || ctl_fail "b did not end: $(jp alice etcdbackup/b '{.status}')"
key=$(jp alice etcdbackup/b '{.status.destinationKey}')
echo "b: $(bphase b), destinationKey '$key', error '$(jp alice etcdbackup/b '{.status.error}' | cut -c1-200)'"

COPY=$NODE/var/lib/lb/bkt/alice-copy
copy_files=$(files "$COPY")
[ -n "$copy_files" ] || ctl_fail "b copied nothing into $COPY"
echo "alice-copy: $copy_files"
kc -n alice delete etcdbackup b --wait=false >/dev/null
ksim_wait 40 ksim_gone -n alice etcdbackup b || ctl_fail "b stays: $(jp alice etcdbackup/b '{.status.deletionError}' | cut -c1-200)"
echo "events of b: $(ctl_events alice b | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(files "$COPY")
echo "alice-copy after b went: $left"
admitted=""
bob_try() { bob_out=$(local_etcd bob etcd-x bkt alice-copy etcd-backup --dry-run=server 2>&1); }
bob_out=""
[ -z "$left" ] || { bob_try; echo "bob's Etcd on bkt/alice-copy at once: ${bob_out:0:250}"; }
# a copy's record in the claim Lease counts for 120 s (docs/backup-entries.md)
if [ -n "$left" ] && ksim_wait 45 bob_try; then admitted=1; fi
[ -z "$left" ] || bob_try || true # its answer, for the message
ctl_jobs_stop
ctl_stop
if [ -n "$admitted" ]; then
    echo "HOLE: alice's deleted EtcdBackup b left its copy $(echo $left) in $COPY (event CopyDeleted), unclaimed: bob's Etcd on bkt/alice-copy is admitted ($bob_out) and its sidecar restores alice's data"
    exit 1
fi
[ -z "$left" ] && { echo "held: b's copy deleted with it"; echo "attack21_local_copy_left: ok"; exit 0; }
echo "held: the copy stays, claimed for alice: ${bob_out:0:200}"
echo "attack21_local_copy_left: ok"
