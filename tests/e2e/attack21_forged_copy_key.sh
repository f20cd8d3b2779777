#!/usr/bin/env bash
# "With deletionPolicy: Delete, deleting the EtcdBackup deletes its copy first (a Job
# <backup>--delete-copy for exactly the object status.destination and status.destinationKey
# name ...); a Local destination's Job mounts the hostPath recorded in
# status.destination.hostPath" (docs/backups-and-restores.md). status.destinationKey comes from
# "the copy Job's report (the summary its Pod leaves)". The copy Job runs in the tenant's
# namespace, where the tenant (edit rights) creates Pods: a Pod carrying the Job's labels
# (job-name, controller-uid) and a controller reference to the Job, running her own image,
# whose container leaves a summary naming another key. The Job controller counts such a Pod
# as the Job's, so the Job completes.
#   BackupBucket local (Local, container bkt, hostPath /var/lib/lb, prefixScope Namespace)
#   selects alice and bob. bob's etcd-b wrote /var/lib/lb/bkt/bob/etcd-b/v2/Full-B. alice's
#   EtcdBackup b of etcd-a (Delete policy) copies into bkt/alice/copy (her part). Her Pod
#   reports the copy as written at "bob/etcd-b" (bob's directory: the delete-copy Job passes
#   the key as --store-prefix). alice deletes b.
# Oracle: the node's directory of bob (job_exec.py mounts hostPath volumes under
# $CRONJOB_EXEC_HOST_ROOT) before and after.
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

mkdir -p "$SRC/v2" "$BOB/v2" "$NODE/var/lib/lb/bkt/alice/copy"
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
  prefixScope: Namespace
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
  destination: {provider: Local, container: bkt, prefix: alice/copy, secretRef: {name: etcd-backup}}
EOF
) || ctl_fail "alice's EtcdBackup b refused: $out"
ctl_start --ops-task-executor=false
has_job() { druid_succeeds b >/dev/null 2>&1; kc -n alice get job b--copy >/dev/null 2>&1; }
ksim_wait 40 has_job || ctl_fail "no copy Job for b: $(jp alice etcdbackup/b '{.status}')"
echo "b: $(bphase b), destination $(jp alice etcdbackup/b '{.status.destination}')"

# alice's Pod, counted by the Job controller as the copy Job's
juid=$(jp alice job/b--copy '{.metadata.uid}')
kc -n alice create -f - >/dev/null <<JSON || ctl_fail "cannot create alice's Pod"
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b--copy-x7k2p",
  "labels":{"job-name":"b--copy","batch.kubernetes.io/job-name":"b--copy","controller-uid":"$juid",
            "batch.kubernetes.io/controller-uid":"$juid"},
  "ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"b--copy","uid":"$juid","controller":true}]},
 "spec":{"restartPolicy":"Never","containers":[{"name":"copy","image":"registry.local/alice/report:1",
   "terminationMessagePolicy":"FallbackToLogsOnError"}]}}
JSON
summary=$(jq -cn --arg n "$his" --arg d "bob/etcd-b" \
    '{snapshots: [{name: $n, kind: "Full", startRevision: 0, lastRevision: 900, size: 4185, md5: "2bdbe990962e82f929e124d4de31fae9", destination: $d}], total: 1, error: ""}')
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
kc -n alice patch pod b--copy-x7k2p --subresource=status --type merge -p "$(jq -cn --arg m "$summary" --arg t "$now" \
    '{status: {phase: "Succeeded", startTime: $t, containerStatuses: [{name: "copy", ready: false, restartCount: 0, image: "registry.local/alice/report:1", imageID: "", started: false, state: {terminated: {exitCode: 0, reason: "Completed", message: $m, startedAt: $t, finishedAt: $t}}}]}}')" >/dev/null ||
    ctl_fail "cannot set the status of alice's Pod"
kc -n alice patch job b--copy --subresource=status --type merge -p "$(jq -cn --arg t "$now" \
    '{status: {succeeded: 1, startTime: $t, completionTime: $t, conditions: [{type: "SuccessCriteriaMet", status: "True", lastTransitionTime: $t}, {type: "Complete", status: "True", lastTransitionTime: $t}]}}')" >/dev/null ||
    ctl_fail "cannot set the Job's status"
ended() { p=$(bphase b); [ "$p" = Completed ] || [ "$p" = Failed ]; }
ksim_wait 30 ended || ctl_fail "b did not end: $(jp alice etcdbackup/b '{.status}')"
key=$(jp alice etcdbackup/b '{.status.destinationKey}')
echo "b: $(bphase b), destinationKey '$key', error '$(jp alice etcdbackup/b '{.status.error}' | cut -c1-200)'"

# alice deletes b
export JOB_EXEC_RECORD=$SNAP_WORK/jobs.jsonl
ctl_jobs_serve alice 120
kc -n alice delete etcdbackup b --wait=false >/dev/null
ksim_wait 40 ksim_gone -n alice etcdbackup b || echo "b stays: $(jp alice etcdbackup/b '{.status.deletionError}' | cut -c1-200)"
echo "events of b: $(ctl_events alice b | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(files "$BOB")
echo "bob's directory: $left"
echo "the Jobs run: $(jq -c 'select(.end != null) | {job, command}' "$JOB_EXEC_RECORD" 2>/dev/null | cut -c1-600)"
echo "job_exec: $(tail -4 "$SNAP_WORK/job_exec.log" | cut -c1-300)"
ctl_jobs_stop
ctl_stop
if [ "$left" != "$bob_files" ]; then
    echo "HOLE: deleting alice's EtcdBackup b deleted $(comm -23 <(tr ' ' '\n' <<<"$bob_files") <(tr ' ' '\n' <<<"$left") | xargs) from bob's directory $BOB (bob's part of the partitioned Local bucket): its key came from the summary of a Pod alice made for the copy Job"
    exit 1
fi
echo "held: bob's snapshot stays (destinationKey '$key')"
echo "attack21_forged_copy_key: ok"
