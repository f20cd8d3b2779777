#!/usr/bin/env bash
# As attack21_forged_copy_key, on S3: the copy Job runs in the tenant's namespace, where she
# makes a Pod carrying the Job's labels and a controller reference to it, whose summary names
# another key as the copy's status.destinationKey. alice's Secret holds credentials that open
# nothing in the operator's store (she has none there). BackupBucket s3 owns the container.
# bob's etcd-b wrote bob--etcd-b/v2/... there. alice's EtcdBackup b (Delete policy) of her
# etcd-a copies into alice--copy of that container; her Pod reports the copy as written at
# "bob--etcd-b"; alice deletes b. Wanted: the delete-copy Job deletes nothing of bob's (it
# deletes with alice's own credentials, or only below b's destination prefix).
# Oracle: s3rver's listing of bob--etcd-b before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

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

echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
ctl_s3_bucket 1h
kc create namespace alice >/dev/null
kc create namespace bob >/dev/null
# alice's Secret: credentials of her own, none for the operator's store
kc -n alice create secret generic etcd-backup --from-literal=accessKeyID=ALICE --from-literal=secretAccessKey=ALICE \
    --from-literal=region=us-east-1 --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
ctl_backup_secret bob
wh_register_backups
ctl_store_etcd alice etcd-a aws "$SNAP_BUCKET" alice--etcd-a
ctl_store_etcd bob etcd-b aws "$SNAP_BUCKET" bob--etcd-b
snap_s3 put "bob--etcd-b/v2/Full-00000000-00000900-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "bob--etcd-b/v2/Incr-00000901-00000950-1800000100.gz" "$SNAP_WORK/obj"
bob_files=$(snap_s3 ls bob--etcd-b/ | sort)
his=Full-00000000-00000900-1800000000.gz
wh_caught_up

out=$(kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b, namespace: alice}
spec:
  etcdName: etcd-a
  deletionPolicy: Delete
  destination: {provider: aws, container: $SNAP_BUCKET, prefix: alice--copy, secretRef: {name: etcd-backup}}
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
summary=$(jq -cn --arg n "$his" --arg d "bob--etcd-b" \
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
b_decided() { ksim_gone -n alice etcdbackup b || ctl_events alice b | grep -q DeletionFailed; }
ksim_wait 40 b_decided; ksim_gone -n alice etcdbackup b || echo "b stays: $(jp alice etcdbackup/b '{.status.deletionError}' | cut -c1-200)"
echo "events of b: $(ctl_events alice b | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(snap_s3 ls bob--etcd-b/ | sort)
echo "bob--etcd-b: $(echo $left)"
echo "the Jobs run: $(jq -c 'select(.end != null) | {job, command}' "$JOB_EXEC_RECORD" 2>/dev/null | cut -c1-600)"
echo "job_exec: $(tail -4 "$SNAP_WORK/job_exec.log" | cut -c1-300)"
ctl_jobs_stop
ctl_stop
if [ "$left" != "$bob_files" ]; then
    echo "HOLE: deleting alice's EtcdBackup b deleted $(comm -23 <(echo "$bob_files") <(echo "$left") | xargs) of bob's etcd-b from the operator's bucket, with credentials alice does not have: its key came from the summary of a Pod alice made for the copy Job"
    exit 1
fi
echo "held: bob's snapshot stays (destinationKey '$key')"
echo "attack21_forged_copy_key_s3: ok"
