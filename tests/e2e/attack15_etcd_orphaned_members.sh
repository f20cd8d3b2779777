#!/usr/bin/env bash
# A deleted Etcd's entry deletes the backups of members that still run and write its prefix, on
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
#       short (2s, for the test): the entry's Job runs.
#   O0. control: o0/etcd-main deleted as usual (the garbage collector takes the StatefulSet and
#       the pods): its entry's Job deletes its snapshot.
# Oracle: s3rver's listing under the prefix the still-running members' template writes, and what
# kube-sim stores (the StatefulSet and its Running pods).
set -uo pipefail
export SNAP_BUCKET=etcd-bucket # druid_etcd's container
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ksim_on_exit snap_cleanups

. "$(dirname "$0")/../lib/orphaned.sh"
orphaned_stage
orphaned_jobs 'still write'
left=$(snap_s3 ls "o1--etcd-main/" | tr '\n' ' ')
ctl_stop
if ! grep -qF "${FULL[o1]}" <<<"$left"; then
    echo "HOLE: O1: the deletion Job of entry ${ENTRY[o1]} deleted ${FULL[o1]}, the full snapshot of the members of o1/etcd-main, whose StatefulSet still runs $(running o1) pods whose template backs up into $(sidecar_prefix o1) (the Etcd deleted with --cascade=orphan): a running cluster's backups deleted under it (left: ${left:-nothing})"
    echo "FAIL: 1 hole(s): an entry whose Etcd's StatefulSet lingers with running members is deleted"
    exit 1
fi
echo "held: O1: left under o1--etcd-main/: $left; entry ${ENTRY[o1]}: $(kc get backupentry "${ENTRY[o1]}" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null)"
echo "attack15_etcd_orphaned_members: ok"
