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

bucket() { # grace
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: s3}
spec:
  provider: aws
  container: $SNAP_BUCKET
  secretRef: {namespace: etcd-warden, name: s3-bucket}
  deletionGracePeriod: "$1"
EOF
}
entry_of() { # ns name
    kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name} {.spec.etcd.namespace}/{.spec.etcd.name}{"\n"}{end}' |
        awk -v e="$1/$2" '$2 == e { print $1 }'
}
has_entry() { [ -n "$(entry_of "$1" "$2")" ]; }
phase() { kc get backupentry "$1" -o jsonpath='{.status.phase}'; }
phase_is() { [ "$(phase "$1")" = "$2" ]; }
gone() { ! kc get "$@" >/dev/null 2>&1; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc -n etcd-warden create secret generic s3-bucket \
    --from-literal=accessKeyID=S3RVER --from-literal=secretAccessKey=S3RVER \
    --from-literal=region=us-east-1 --from-literal=s3ForcePathStyle=true \
    --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
ctl_namespace evil # its Secret etcd-backup: an access key id and nothing else
bucket 1h
ctl_jobs_serve etcd-warden
ctl_start
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
old=shoot--etcd-main/v2/Full-00000000-00000100-1700000000.gz
new=shoot--etcd-main/v2/Full-00000000-00000900-1700009000.gz
snap_s3 put "$old" "$SNAP_WORK/full"
ok "the cluster on another seed writes shoot--etcd-main ($old)"

sleep 1 # object times have seconds
ctl_store_etcd evil etcd-x S3 "$SNAP_BUCKET" shoot--etcd-main
if ! ksim_wait 20 has_entry evil etcd-x; then
    ok "evil's Etcd etcd-x, which has written nothing, gets no entry: nothing can be deleted on its behalf"
    ctl_stop
    echo "attack6_claim_without_writes: ok"
    exit 0
fi
e=$(entry_of evil etcd-x)
ok "evil's Etcd etcd-x admitted on shoot--etcd-main; entry $e (claimedAt $(kc get backupentry "$e" -o jsonpath='{.spec.claimedAt}'))"
sleep 1
snap_s3 put "$new" "$SNAP_WORK/full"
ok "the cluster on another seed writes its newest full snapshot $new while evil's Etcd exists"
sleep 1
kc -n evil delete etcd etcd-x >/dev/null
ksim_wait 20 phase_is "$e" PendingDeletion || ctl_fail "$e not pending: $(phase "$e")"
bucket 2s
ended() { gone backupentry "$e" || [ -n "$(kc get backupentry "$e" -o jsonpath='{.status.lastError}')" ]; }
ksim_wait 90 ended || ctl_fail "$e: the deletion did not end: $(kc get backupentry "$e" -o jsonpath='{.status}')"
left=$(snap_s3 ls shoot--etcd-main/ | tr '\n' ' ')
ok "evil's Etcd deleted, its entry's deletion over ($(gone backupentry "$e" && echo gone || phase "$e")); left: ${left:-nothing}"
if ! grep -qF "$new" <<<"$left"; then
    ctl_fail "HOLE: the deletion Job of entry $e (namespace evil's Etcd etcd-x, which never wrote anything: no Pods, a Secret that opens nothing) deleted $new, the newest full snapshot of the cluster that writes shoot--etcd-main from another seed (left: ${left:-nothing})"
fi
grep -qF "$old" <<<"$left" || ctl_fail "HOLE: $old, written before evil's claim, deleted too (left: ${left:-nothing})"
ok "nothing evil's Etcd did not write was deleted (left: $left)"
ctl_stop
echo "attack6_claim_without_writes: ok"
