#!/usr/bin/env bash
# A claim needs evidence, and a deletion Job deletes only what the deleted Etcd wrote; the
# provenance window [spec.claimedAt, etcdDeletedAt + 60 s] is taken as that evidence, and a
# Secret that exists as the evidence that the Etcd could write. Neither shows that it wrote.
# The cluster of shoot--etcd-main runs on another seed (Gardener's control plane migration:
# same bucket, same prefix, its own credentials) and keeps writing there; nothing in this
# cluster claims the prefix (its Etcd and entry here are gone). Namespace evil (any namespace
# the bucket admits: no namespaceSelector, prefixScope Bucket, the defaults) creates a Secret
# with any content and an Etcd on shoot--etcd-main: admitted, and it gets a BackupEntry
# (claimedAt its creation). It never writes a byte (kube-sim runs no Pods; its Secret opens
# nothing). While it exists, the cluster on the other seed writes its newest full snapshot.
# evil deletes its Etcd; when the grace period ends the deletion Job (the operator's
# credentials) deletes that snapshot, written inside evil's window by someone else: the live
# cluster's newest backup. Wanted: an entry deletes only objects the Etcd can be shown to have
# written (or nothing without that evidence), not whatever lands in the prefix while it exists.
# Oracle: s3rver's listing.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups


snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
ctl_namespace evil # its Secret etcd-backup: an access key id and nothing else
ctl_s3_bucket 1h
ctl_jobs_serve etcd-warden
ctl_start
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
old=shoot--etcd-main/v2/Full-00000000-00000100-1700000000.gz
new=shoot--etcd-main/v2/Full-00000000-00000900-1700009000.gz
snap_s3 put "$old" "$SNAP_WORK/full"
ok "the cluster on another seed writes shoot--etcd-main ($old)"

sleep 1 # object times have seconds
ctl_store_etcd evil etcd-x S3 "$SNAP_BUCKET" shoot--etcd-main
if ! ksim_wait 20 ctl_has_entry evil etcd-x; then
    ok "evil's Etcd etcd-x, which has written nothing, gets no entry: nothing can be deleted on its behalf"
    ctl_stop
    echo "attack6_claim_without_writes: ok"
    exit 0
fi
e=$(ctl_entry_of evil etcd-x)
ok "evil's Etcd etcd-x admitted on shoot--etcd-main; entry $e (claimedAt $(kc get backupentry "$e" -o jsonpath='{.spec.claimedAt}'))"
sleep 1
snap_s3 put "$new" "$SNAP_WORK/full"
ok "the cluster on another seed writes its newest full snapshot $new while evil's Etcd exists"
sleep 1
kc -n evil delete etcd etcd-x >/dev/null
ksim_wait 20 ctl_entry_phase_is "$e" PendingDeletion || ctl_fail "$e not pending: $(ctl_entry_phase "$e")"
ctl_s3_bucket 2s
ended() { ksim_gone backupentry "$e" || [ -n "$(kc get backupentry "$e" -o jsonpath='{.status.lastError}')" ]; }
ksim_wait 90 ended || ctl_fail "$e: the deletion did not end: $(kc get backupentry "$e" -o jsonpath='{.status}')"
left=$(snap_s3 ls shoot--etcd-main/ | tr '\n' ' ')
ok "evil's Etcd deleted, its entry's deletion over ($(ksim_gone backupentry "$e" && echo gone || ctl_entry_phase "$e")); left: ${left:-nothing}"
if ! grep -qF "$new" <<<"$left"; then
    ctl_fail "HOLE: the deletion Job of entry $e (namespace evil's Etcd etcd-x, which never wrote anything: no Pods, a Secret that opens nothing) deleted $new, the newest full snapshot of the cluster that writes shoot--etcd-main from another seed (left: ${left:-nothing})"
fi
grep -qF "$old" <<<"$left" || ctl_fail "HOLE: $old, written before evil's claim, deleted too (left: ${left:-nothing})"
ok "nothing evil's Etcd did not write was deleted (left: $left)"
ctl_stop
echo "attack6_claim_without_writes: ok"
