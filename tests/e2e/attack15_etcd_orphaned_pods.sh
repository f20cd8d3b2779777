#!/usr/bin/env bash
# A deleted Etcd's entry deletes the backups of member pods that still run and write its prefix,
# their StatefulSet deleted too but orphaning them, on
# kube-sim with warden-webhook, warden-controller, s3rver and the deletion Jobs run (job_exec).
# Issue 29: "No entry is released and no prefix deleted while any live Etcd's claim ... overlaps
# it"; this round's item 4 ("the Etcd deleted while its StatefulSet lingers").
# docs/backup-entries.md (Deletion blocked): the controller does not start a deletion Job while
# "the entry's own Etcd (spec.etcd) still has members that may write the prefix: ... its backup
# sidecars write where the StatefulSet's pod template tells them ... while its StatefulSet (the
# one of the Etcd's name in its namespace, read from the API server) names in its template a
# store overlapping the entry's prefix".
#   O1. Etcd o1/etcd-main (bucket s3, members running and seen, the template's sidecar on prefix
#       o1--etcd-main, a full snapshot there). alice deletes the Etcd with --cascade=orphan (as
#       one does to re-create an Etcd whose immutable fields changed): the StatefulSet and its
#       pods stay, running, their sidecars writing o1--etcd-main. The bucket's grace period is
#       short (2s, for the test): the entry's Job runs. Then alice deletes the StatefulSet with
#       --cascade=orphan too (not guarded: "An orphaning DELETE ... leaves the pods running and is
#       not guarded"): its three pods run on, the template they run writing o1--etcd-main.
#   O0. control: o0/etcd-main deleted as usual (the garbage collector takes the StatefulSet and
#       the pods): its entry's Job deletes its snapshot.
# Oracle: s3rver's listing under the prefix the still-running pods' spec writes, and what kube-sim
# stores (the Running pods, their backup-restore args).
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

template() { # NS PREFIX: etcd-druid builds its sidecar for that store into the template
    local c
    c=$(kc -n "$1" get statefulset etcd-main -o json | jq -c --arg p "$2" '.spec.template.spec.containers[1]
        | .args = ["server", "--server-port=8080", "--storage-provider=S3", "--store-prefix=\($p)"]
        | .env = [{name: "STORAGE_CONTAINER", value: "etcd-bucket"}]')
    kc_druid -n "$1" patch statefulset etcd-main --type json \
        -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/1\",\"value\":$c}]" >/dev/null ||
        ctl_fail "$1: etcd-druid cannot build its sidecar's store into the template"
}
sidecar_prefix() {
    kc -n "$1" get statefulset etcd-main -o json 2>/dev/null | jq -r '.spec.template.spec.containers[]
        | select(.name == "backup-restore") | .args | map(select(startswith("--store-prefix=")))[0]
        | ltrimstr("--store-prefix=")'
}
running() { kc -n "$1" get pods -o json | jq '[.items[] | select(.status.phase == "Running")] | length'; }
pod_prefix() {
    kc -n "$1" get pod etcd-main-0 -o json 2>/dev/null | jq -r '.spec.containers[]
        | select(.name == "backup-restore") | .args | map(select(startswith("--store-prefix=")))[0]
        | ltrimstr("--store-prefix=")'
}

declare -A FULL ENTRY
for ns in o0 o1; do
    druid_etcd $ns etcd-main
    kc -n $ns create secret generic etcd-backup --from-literal=accessKeyID=S3RVER >/dev/null ||
        ctl_fail "cannot create the backup Secret in $ns"
    template $ns $ns--etcd-main
    kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$ns: cannot roll the pods"
    ksim_wait 10 bash -c "[ -z \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $ns get pods -o name)\" ]" || ctl_fail "$ns: the pods did not go"
    druid_pods $ns etcd-main 3
done
ctl_start
for ns in o0 o1; do
    ksim_wait 30 ctl_has_entry $ns etcd-main || ctl_fail "no BackupEntry for $ns/etcd-main"
    ctl_members_seen $ns etcd-main
    ENTRY[$ns]=$(ctl_entry_of $ns etcd-main)
done
sleep 1 # the sidecar uploads after the members were seen (object times have seconds)
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
for ns in o0 o1; do
    FULL[$ns]=$ns--etcd-main/v2/Full-00000000-00000100-$(date +%s).gz
    snap_s3 put "${FULL[$ns]}" "$SNAP_WORK/full" >/dev/null || ctl_fail "cannot upload ${FULL[$ns]}"
    snap_s3 ls "$ns--etcd-main/" | grep -qF "${FULL[$ns]}" || ctl_fail "$ns: ${FULL[$ns]} not listed"
done
kc -n o0 delete etcd etcd-main --wait=false >/dev/null || ctl_fail "o0: cannot delete the Etcd"
out=$(WH_AS_NS=o1 wh_as alice delete etcd etcd-main --cascade=orphan --wait=false 2>&1) ||
    ctl_fail "o1: alice cannot delete the Etcd with --cascade=orphan: $out"
ksim_wait 30 ksim_gone -n o0 statefulset etcd-main || ctl_fail "o0: the garbage collector left the StatefulSet"
ksim_wait 30 ksim_gone -n o1 etcd etcd-main || ctl_fail "o1: the Etcd is not gone"
sleep 2
[ "$(sidecar_prefix o1)" = o1--etcd-main ] && [ "$(running o1)" = 3 ] ||
    ctl_fail "o1: the orphaned StatefulSet or its pods went (template writes '$(sidecar_prefix o1)', $(running o1) Running)"
out=$(WH_AS_NS=o1 wh_as alice delete statefulset etcd-main --cascade=orphan --wait=false 2>&1) ||
    ctl_fail "o1: alice cannot delete the orphaned StatefulSet with --cascade=orphan: $out"
ksim_wait 30 ksim_gone -n o1 statefulset etcd-main || ctl_fail "o1: the StatefulSet is not gone"
sleep 1
[ "$(pod_prefix o1)" = o1--etcd-main ] && [ "$(running o1)" = 3 ] ||
    ctl_fail "o1: the orphaned pods went (etcd-main-0 writes '$(pod_prefix o1)', $(running o1) Running)"
for ns in o0 o1; do
    ksim_wait 30 ctl_entry_phase_is "${ENTRY[$ns]}" PendingDeletion || ctl_fail "$ns: ${ENTRY[$ns]} not pending: $(ctl_entry_phase "${ENTRY[$ns]}")"
done
ctl_s3_bucket 2s
ksim_wait 90 ksim_gone backupentry "${ENTRY[o0]}" ||
    ctl_fail "o0: the entry ${ENTRY[o0]} was not deleted: $(kc get backupentry "${ENTRY[o0]}" -o jsonpath='{.status}')"
held() { kc get backupentry "$1" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null | grep -Eq 'postponed|blocked'; }
held_or_gone() { held "$1" || ksim_gone backupentry "$1"; }
ksim_wait 60 held_or_gone "${ENTRY[o1]}" ||
    ctl_fail "o1: the entry ${ENTRY[o1]} neither held nor deleted: $(kc get backupentry "${ENTRY[o1]}" -o jsonpath='{.status}')"
left0=$(snap_s3 ls "o0--etcd-main/" | tr '\n' ' ')
grep -qF "${FULL[o0]}" <<<"$left0" && ctl_fail "control: O0: the deleted Etcd's snapshot was not deleted (left: $left0)"
echo "ok: control: O0: an Etcd deleted with its StatefulSet: its snapshot deleted with its entry"
left=$(snap_s3 ls "o1--etcd-main/" | tr '\n' ' ')
ctl_stop
if ! grep -qF "${FULL[o1]}" <<<"$left"; then
    echo "HOLE: O1: the deletion Job of entry ${ENTRY[o1]} deleted ${FULL[o1]}, the full snapshot of the members of o1/etcd-main, whose $(running o1) pods still run, their backup sidecars writing $(pod_prefix o1) (the Etcd and then its StatefulSet deleted with --cascade=orphan): a running cluster's backups deleted under it (left: ${left:-nothing})"
    echo "FAIL: 1 hole(s): an entry whose Etcd's member pods still run and write its prefix is deleted"
    exit 1
fi
echo "held: O1: left under o1--etcd-main/: $left; entry ${ENTRY[o1]}: $(kc get backupentry "${ENTRY[o1]}" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null)"
echo "attack15_etcd_orphaned_pods: ok"
