#!/usr/bin/env bash
# A live cluster's backups deleted by the BackupEntry of the prefix its sidecars still write, on
# kube-sim with warden-webhook, warden-controller, s3rver and the deletion Jobs run (job_exec).
# Issue 29: "A move is not a deletion. No entry is released and no prefix deleted while any
# live Etcd's claim ... overlaps it"; "one store as the sidecar sees it". docs/backup-entries.md:
# "An Etcd that moves to another prefix leaves its old entry pending and gets the new prefix's
# entry", and past the grace period the old entry's Job deletes what was written there. The
# move is read from the Etcd's spec.backup.store; the sidecars write where the StatefulSet's pod
# template tells them (etcd-druid builds container backup-restore with --store-prefix and the
# env STORAGE_CONTAINER), and etcd-druid rebuilds the template only when it reconciles the
# Etcd's spec (gardener.cloud/operation: reconcile, or auto-reconcile). Until then the members
# go on backing up into the old prefix, whose entry is pending deletion.
#   M1. Etcd m1/etcd-main (bucket etcd-bucket, grace 1h; members running, seen; the template's
#       sidecar on prefix m1--etcd-main, its full snapshot there). alice (namespace edit
#       rights) sets spec.backup.store.prefix to moved/m1-etcd-main; no reconcile follows, the
#       members keep writing m1--etcd-main. The operator's bucket has a short grace period
#       (2s here, for the test): the old entry's Job runs.
#   M0. control: m0/etcd-main, the same move, and etcd-druid reconciles it (the template's
#       sidecar on the new prefix): its old prefix's snapshot is deleted, as documented.
# After the fix: M1's old entry stays PendingDeletion with its deletion Job held ("the members
# of Etcd m1/etcd-main still write it") until etcd-druid reconciles the move into the template
# and the pods roll; then it goes with its prefix.
# Oracle: s3rver's listing (the full snapshot under the prefix the live members' template
# writes) and what kube-sim stores (the template, the Etcd live).
set -uo pipefail
. "$(dirname "$0")/../lib/storemove.sh"
storemove_stage # etcd-druid reconciles m0's move; m1's waits for a reconcile
for ns in m0 m1; do
    storemove_pending $ns
    echo "$ns: spec prefix moved/$ns-etcd-main; the template's sidecars write $(sidecar_prefix $ns); old entry ${OLD[$ns]} pending"
done
storemove_m0_first 'still write'
storemove_judge "$(sidecar_prefix m1)" m1--etcd-main \
    "spec says $(kc -n m1 get etcd etcd-main -o jsonpath='{.spec.backup.store.prefix}'), not reconciled"
if [ "$holes" = 0 ]; then
    # once etcd-druid reconciles m1's move and the pods roll, the held entry's Job runs
    storemove_back "after the reconcile" moved/m1-etcd-main
    echo "ok: M1: after etcd-druid reconciled the move, the old prefix's entry and snapshot deleted"
fi
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a live cluster's backups deleted after a move its members have not made"; exit 1; }
echo "attack14_move_unreconciled: ok"
