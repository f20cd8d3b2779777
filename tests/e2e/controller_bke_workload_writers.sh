#!/usr/bin/env bash
# A deleted Etcd's entry is not emptied while a backup sidecar in any workload of the cluster
# may write its prefix, whatever the sidecar's container is named and whether or not the
# workload has a pod now (docs/backup-entries.md, Deletion blocked). On kube-sim with
# warden-webhook, warden-controller, s3rver and the deletion Jobs run (job_exec); kube-sim
# runs no pods for the writers: only their templates say what they would write.
#   W1. a Deployment w/br at 0 replicas, its container named "br" (store flags) writes
#       a1--etcd-main;
#   W2. a suspended CronJob w/snap, container "snap", writes a2--etcd-main;
#   W3. a Job w/compact as etcd-druid's compaction Job (container compact-backup, etcdbrctl
#       compact), not finished, writes a3--etcd-main;
#   A0. control: a0/etcd-main deleted while only a finished Job (condition Complete) and a
#       Deployment writing another prefix name it: its snapshot is deleted with its entry;
#   L1. W1 deleted: a1's deletion goes on, its snapshot is deleted (the hold is W1's);
#   W4. a DaemonSet w/init whose init container "prep" carries store flags (not read: unknown,
#       holds every prefix) while a4/etcd-main is deleted; then W4 deleted and a ReplicaSet
#       w/shell whose container runs etcdbrctl in a shell line (unknown) made: a4 still held,
#       by it; W5 deleted: a4 emptied.
# Oracle: s3rver's listing under each prefix.
set -uo pipefail
export SNAP_BUCKET=etcd-bucket # druid_etcd's container
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ksim_on_exit snap_cleanups

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
ctl_s3_bucket 1h
ctl_jobs_serve etcd-warden 600

# container NAME PREFIX: a backup sidecar's container of that name writing PREFIX
container() {
    printf '{"name":"%s","image":"registry.local/etcdbrctl:v0.43.0","args":["server","--storage-provider=S3","--store-prefix=%s"],"env":[{"name":"STORAGE_CONTAINER","value":"etcd-bucket"}]}' "$1" "$2"
}
pod_template() { # LABEL CONTAINERS [RESTART]
    printf '{"metadata":{"labels":{"app":"%s"}},"spec":{"restartPolicy":"%s","containers":[%s]}}' "$1" "${3:-Always}" "$2"
}
create_w() { kc -n w create -f - >/dev/null || ctl_fail "cannot create $1"; }
deployment() { # NAME CONTAINER
    create_w "Deployment $1" <<JSON
{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"$1"},
 "spec":{"replicas":0,"selector":{"matchLabels":{"app":"$1"}},"template":$(pod_template "$1" "$2")}}
JSON
}
job() { # NAME CONTAINER
    create_w "Job $1" <<JSON
{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"$1"},
 "spec":{"backoffLimit":0,"template":$(pod_template "$1" "$2" Never)}}
JSON
}

NSS="a0 a1 a2 a3 a4"
declare -A FULL ENTRY
for ns in $NSS; do
    druid_etcd $ns etcd-main
    ctl_backup_secret $ns ||
        ctl_fail "cannot create the backup Secret in $ns"
done
kc create namespace w >/dev/null || ctl_fail "cannot create namespace w"
ctl_start
for ns in $NSS; do
    ksim_wait 30 ctl_has_entry $ns etcd-main || ctl_fail "no BackupEntry for $ns/etcd-main"
    ctl_members_seen $ns etcd-main
    ENTRY[$ns]=$(ctl_entry_of $ns etcd-main)
done
sleep 1 # the sidecar uploads after the members were seen (object times have seconds)
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
for ns in $NSS; do
    FULL[$ns]=$ns--etcd-main/v2/Full-00000000-00000100-$(date +%s).gz
    snap_s3 put "${FULL[$ns]}" "$SNAP_WORK/full" >/dev/null || ctl_fail "cannot upload ${FULL[$ns]}"
    snap_s3 ls "$ns--etcd-main/" | grep -qF "${FULL[$ns]}" || ctl_fail "$ns: ${FULL[$ns]} not listed"
done

deployment br "$(container br a1--etcd-main)"
create_w "CronJob snap" <<JSON
{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"snap"},
 "spec":{"schedule":"*/5 * * * *","suspend":true,
  "jobTemplate":{"spec":{"template":$(pod_template snap "$(container snap a2--etcd-main)" Never)}}}}
JSON
job compact "$(container compact-backup a3--etcd-main | jq -c '.args = ["compact", "--data-dir=/var/etcd/data/compaction.etcd", "--enable-snapshot-lease-renewal=true"] + .args[1:]')"
job done "$(container compact-backup a0--etcd-main)"
kc -n w patch job done --subresource=status --type merge \
    -p '{"status":{"succeeded":1,"conditions":[{"type":"Complete","status":"True"}]}}' >/dev/null ||
    ctl_fail "cannot finish Job w/done"
deployment elsewhere "$(container sidecar zz--etcd-main)"
[ "$(kc -n w get deployment br -o jsonpath='{.spec.replicas}')" = 0 ] &&
    [ "$(kc -n w get cronjob snap -o jsonpath='{.spec.suspend}')" = true ] &&
    [ -z "$(kc -n w get pods -o name)" ] || ctl_fail "the writers are not as set"

for ns in a0 a1 a2 a3; do
    kc -n $ns delete etcd etcd-main --wait=false >/dev/null || ctl_fail "$ns: cannot delete the Etcd"
done
for ns in a0 a1 a2 a3; do
    ksim_wait 30 ctl_entry_phase_is "${ENTRY[$ns]}" PendingDeletion ||
        ctl_fail "$ns: ${ENTRY[$ns]} not pending: $(ctl_entry_phase "${ENTRY[$ns]}")"
done
ctl_s3_bucket 2s
ksim_wait 90 ksim_gone backupentry "${ENTRY[a0]}" ||
    ctl_fail "control A0: the entry ${ENTRY[a0]} was not deleted: $(kc get backupentry "${ENTRY[a0]}" -o jsonpath='{.status}')"
snap_s3 ls "a0--etcd-main/" | grep -qF "${FULL[a0]}" &&
    ctl_fail "control A0: the deleted Etcd's snapshot was not deleted"
echo "ok: control A0: a finished Job and a Deployment on another prefix hold nothing: a0's snapshot deleted"

message() { kc get backupentry "$1" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null; }
held_by() { message "$1" | grep -q "postponed: $2"; }
holes=0
check_held() { # NS WHO
    if ! snap_s3 ls "$1--etcd-main/" | grep -qF "${FULL[$1]}"; then
        echo "HOLE: ${1^^}: ${FULL[$1]} deleted while $2 may write it"
        holes=$((holes + 1))
    else
        echo "held: ${1^^}: ${FULL[$1]} kept; entry ${ENTRY[$1]}: $(message "${ENTRY[$1]}")"
    fi
}
declare -A WHO=([a1]="Deployment w/br" [a2]="CronJob w/snap" [a3]="Job w/compact")
for ns in a1 a2 a3; do
    ksim_wait 60 held_by "${ENTRY[$ns]}" "${WHO[$ns]} runs a backup sidecar" ||
        ctl_fail "$ns: the entry ${ENTRY[$ns]} not held by ${WHO[$ns]}: $(message "${ENTRY[$ns]}") $(kc get backupentry "${ENTRY[$ns]}" -o jsonpath='{.status.phase}' 2>&1)"
    check_held $ns "${WHO[$ns]}"
done

kc -n w delete deployment br >/dev/null || ctl_fail "cannot delete Deployment w/br"
ksim_wait 90 ksim_gone backupentry "${ENTRY[a1]}" ||
    ctl_fail "L1: with w/br gone the entry ${ENTRY[a1]} was not deleted: $(message "${ENTRY[a1]}")"
snap_s3 ls "a1--etcd-main/" | grep -qF "${FULL[a1]}" && ctl_fail "L1: a1's snapshot was not deleted with w/br gone"
echo "ok: L1: with Deployment w/br deleted a1's snapshot is deleted"

create_w "DaemonSet init" <<JSON
{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"init"},
 "spec":{"selector":{"matchLabels":{"app":"init"}},
  "template":{"metadata":{"labels":{"app":"init"}},
   "spec":{"initContainers":[$(container prep zz--etcd-main)],"containers":[{"name":"main","image":"busybox"}]}}}}
JSON
kc -n a4 delete etcd etcd-main --wait=false >/dev/null || ctl_fail "a4: cannot delete the Etcd"
ksim_wait 60 held_by "${ENTRY[a4]}" "DaemonSet w/init runs an init or ephemeral container prep" ||
    ctl_fail "a4: the entry ${ENTRY[a4]} not held by DaemonSet w/init: $(message "${ENTRY[a4]}")"
check_held a4 "DaemonSet w/init (an init container whose store is not read)"
create_w "ReplicaSet shell" <<JSON
{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"shell"},
 "spec":{"replicas":1,"selector":{"matchLabels":{"app":"shell"}},
  "template":$(pod_template shell '{"name":"main","image":"busybox","command":["sh"],"args":["/run.sh","etcdbrctl server --storage-provider=S3 --store-prefix=zz"]}')}}
JSON
kc -n w delete daemonset init >/dev/null || ctl_fail "cannot delete DaemonSet w/init"
ksim_wait 60 held_by "${ENTRY[a4]}" "ReplicaSet w/shell runs a backup sidecar (container main) that may write it" ||
    ctl_fail "a4: the entry ${ENTRY[a4]} not held by ReplicaSet w/shell: $(message "${ENTRY[a4]}")"
check_held a4 "ReplicaSet w/shell (its store in a shell line: unknown)"
kc -n w delete replicaset shell >/dev/null || ctl_fail "cannot delete ReplicaSet w/shell"
ksim_wait 90 ksim_gone backupentry "${ENTRY[a4]}" ||
    ctl_fail "with w/shell gone the entry ${ENTRY[a4]} was not deleted: $(message "${ENTRY[a4]}")"
snap_s3 ls "a4--etcd-main/" | grep -qF "${FULL[a4]}" && ctl_fail "a4's snapshot was not deleted with w/shell gone"
echo "ok: a4's snapshot is deleted once no workload may write it"
ctl_stop
if [ "$holes" -gt 0 ]; then
    echo "FAIL: $holes hole(s): an entry is deleted while a workload's backup sidecar may write its prefix"
    exit 1
fi
echo "controller_bke_workload_writers: ok"
