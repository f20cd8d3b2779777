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

pod_prefix() {
    kc -n "$1" get pod etcd-main-0 -o json 2>/dev/null | jq -r '.spec.containers[]
        | select(.name == "backup-restore") | .args | map(select(startswith("--store-prefix=")))[0]
        | ltrimstr("--store-prefix=")'
}
. "$(dirname "$0")/../lib/orphaned.sh"
orphaned_stage
out=$(WH_AS_NS=o1 wh_as alice delete statefulset etcd-main --cascade=orphan --wait=false 2>&1) ||
    ctl_fail "o1: alice cannot delete the orphaned StatefulSet with --cascade=orphan: $out"
ksim_wait 30 ksim_gone -n o1 statefulset etcd-main || ctl_fail "o1: the StatefulSet is not gone"
sleep 1
[ "$(pod_prefix o1)" = o1--etcd-main ] && [ "$(running o1)" = 3 ] ||
    ctl_fail "o1: the orphaned pods went (etcd-main-0 writes '$(pod_prefix o1)', $(running o1) Running)"
orphaned_jobs 'postponed|blocked'
left=$(snap_s3 ls "o1--etcd-main/" | tr '\n' ' ')
ctl_stop
if ! grep -qF "${FULL[o1]}" <<<"$left"; then
    echo "HOLE: O1: the deletion Job of entry ${ENTRY[o1]} deleted ${FULL[o1]}, the full snapshot of the members of o1/etcd-main, whose $(running o1) pods still run, their backup sidecars writing $(pod_prefix o1) (the Etcd and then its StatefulSet deleted with --cascade=orphan): a running cluster's backups deleted under it (left: ${left:-nothing})"
    echo "FAIL: 1 hole(s): an entry whose Etcd's member pods still run and write its prefix is deleted"
    exit 1
fi
echo "held: O1: left under o1--etcd-main/: $left; entry ${ENTRY[o1]}: $(kc get backupentry "${ENTRY[o1]}" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null)"
echo "attack15_etcd_orphaned_pods: ok"
