#!/usr/bin/env bash
# A deletion Job deletes only what the deleted Etcd wrote: delete-snapshots keeps what is
# written after spec.etcdDeletedAt + 60 s (docs/backup-entries.md, "Nothing deleted without
# provenance"). spec.etcdDeletedAt is when warden-controller *saw* the Etcd gone, not when it
# went. Etcd shoot/etcd-main backs up to shoot--etcd-main (its entry made, its full snapshot
# written). warden-controller is then down for a while (an upgrade, a node drain: no leader).
# Meanwhile the Etcd is deleted here because its cluster moved to another seed (Gardener's
# control plane migration: same bucket, same prefix, the cluster's own credentials), and there
# its sidecar writes a newer full snapshot into shoot--etcd-main, more than 60 s after the Etcd
# here was gone (kube-sim runs no Pods: nothing of it is left to write). warden-controller
# comes back, sees the Etcd gone now and writes that time as spec.etcdDeletedAt: the window
# now covers the migrated cluster's snapshot, and when the grace period ends the deletion Job
# (the operator's credentials) deletes it: the live cluster's newest backup, which the deleted
# Etcd never wrote. Wanted: a window that ends no later than the Etcd was last known alive
# (+ 60 s), e.g. a time warden-controller records while it sees the Etcd, or the Etcd's own
# deletion time; what cannot be proven the Etcd's is kept.
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

ctl_stop
kc -n shoot delete etcd etcd-main >/dev/null
gone_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
sleep 65 # the cluster runs on another seed now (past the members' last uploads: 60 s)
snap_s3 put "$new" "$SNAP_WORK/full"
ok "warden-controller down; the Etcd deleted at $gone_at; the migrated cluster's newer full snapshot written 65 s later"
ctl_start
ksim_wait 30 ctl_entry_phase_is "$e" PendingDeletion || ctl_fail "$e not pending: $(ctl_entry_phase "$e")"
deleted_at=$(kc get backupentry "$e" -o jsonpath='{.spec.etcdDeletedAt}')
ok "warden-controller back: $e pending, spec.etcdDeletedAt $deleted_at (the Etcd went at $gone_at)"

ctl_s3_bucket 2s
ended() { ksim_gone backupentry "$e" || [ -n "$(kc get backupentry "$e" -o jsonpath='{.status.lastError}')" ]; }
ksim_wait 90 ended || ctl_fail "$e: the deletion did not end: $(kc get backupentry "$e" -o jsonpath='{.status}')"
left=$(snap_s3 ls shoot--etcd-main/ | tr '\n' ' ')
ok "deletion over (entry $(ksim_gone backupentry "$e" && echo gone || ctl_entry_phase "$e")); left: ${left:-nothing}"
if ! grep -qF "$new" <<<"$left"; then
    ctl_fail "HOLE: the deletion Job of entry $e (Etcd shoot/etcd-main, deleted at $gone_at while warden-controller was down; spec.etcdDeletedAt $deleted_at, when it came back) deleted $new, written 65 s after the Etcd was gone by the cluster that moved to another seed: the live cluster's newest backup, which the deleted Etcd never wrote (left: ${left:-nothing})"
fi
ok "the object written after the Etcd was gone is kept (left: $left)"
ctl_stop
echo "attack6_deleted_unseen: ok"
