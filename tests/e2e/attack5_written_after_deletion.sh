#!/usr/bin/env bash
# A deletion Job deletes only what the deleted Etcd wrote: delete-snapshots keeps the objects
# outside [spec.claimedAt, status.deletionStartedAt] (docs/backup-entries.md, "Nothing deleted
# without provenance"). The window ends when the deletion starts, a grace period (7 days by
# default) after the Etcd was deleted, not when the Etcd was deleted. Etcd shoot/etcd-main
# backs up to shoot--etcd-main (its entry made, its full snapshot written while it lives). It
# is deleted here because its cluster moved to another seed (Gardener's control plane
# migration: same bucket, same prefix, the cluster's own credentials). There its sidecar keeps
# writing shoot--etcd-main: a newer full snapshot, after the Etcd here is gone (kube-sim runs
# no Pods: no member of it is left to write anything). Nothing in this cluster claims the
# prefix but the PendingDeletion entry. When the grace period ends, the deletion Job (the
# operator's credentials) deletes that newer snapshot too: the live cluster's latest backup,
# which the deleted Etcd never wrote. Wanted: an object written after the Etcd (and its
# members: 60 s for their last uploads) were gone is not the Etcd's and is kept, as one written
# before its claim is.
# Oracle: s3rver's listing.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups


snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
ctl_namespace shoot
ctl_s3_bucket 1h
ctl_jobs_serve etcd-warden
ctl_start
ctl_store_etcd shoot etcd-main S3 "$SNAP_BUCKET" shoot--etcd-main
ctl_members shoot etcd-main
ksim_wait 20 ctl_has_entry shoot etcd-main || ctl_fail "no entry for shoot/etcd-main"
ctl_members_seen shoot etcd-main
e=$(ctl_entry_of shoot etcd-main)
sleep 1 # its sidecar writes after the claim began (object times have seconds)
old=shoot--etcd-main/v2/Full-00000000-00000100-1700000000.gz
new=shoot--etcd-main/v2/Full-00000000-00000900-1700009000.gz
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
snap_s3 put "$old" "$SNAP_WORK/full"
ok "entry $e claims shoot--etcd-main; etcd-main's full snapshot written"

kc -n shoot delete etcd etcd-main >/dev/null
ksim_wait 20 ctl_entry_phase_is "$e" PendingDeletion || ctl_fail "$e not pending: $(ctl_entry_phase "$e")"
deleted_at=$(kc get backupentry "$e" -o jsonpath='{.spec.etcdDeletedAt}')
sleep 65 # the cluster runs on another seed now (past the members' last uploads: 60 s)
snap_s3 put "$new" "$SNAP_WORK/full"
ok "the Etcd deleted at $deleted_at; the migrated cluster's newer full snapshot written after it"

ctl_s3_bucket 2s
ended() { ksim_gone backupentry "$e" || [ -n "$(kc get backupentry "$e" -o jsonpath='{.status.lastError}')" ]; }
ksim_wait 60 ended || ctl_fail "$e: the deletion did not end: $(kc get backupentry "$e" -o jsonpath='{.status}')"
left=$(snap_s3 ls shoot--etcd-main/ | tr '\n' ' ')
ok "deletion over (entry $(ksim_gone backupentry "$e" && echo gone || ctl_entry_phase "$e")); left: ${left:-nothing}"
if ! grep -qF "$new" <<<"$left"; then
    ctl_fail "HOLE: the deletion Job of entry $e (Etcd shoot/etcd-main, deleted at $deleted_at) deleted $new, written after the Etcd was gone by the cluster that moved to another seed: the live cluster's newest backup, which the deleted Etcd never wrote (left: ${left:-nothing})"
fi
grep -qF "$old" <<<"$left" &&
    ctl_fail "the deletion did not delete the Etcd's own snapshot either (nothing shown): $(kc get backupentry "$e" -o jsonpath='{.status}' 2>&1)"
ok "the object written after the Etcd was gone is kept, the Etcd's own deleted"
ctl_stop
echo "attack5_written_after_deletion: ok"
