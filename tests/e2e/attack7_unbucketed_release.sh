#!/usr/bin/env bash
# A deleted Etcd's backups in a store no BackupBucket owns are handed to the next namespace that
# claims the prefix. Etcd shoot/etcd-main backs up to shoot--etcd-main in a bucket that no
# BackupBucket owns (its sidecar's full snapshot is there: the cluster's data, Secrets
# included); namespace other's Etcd on that prefix is refused while it lives. shoot deletes
# etcd-main (by mistake, or the cluster moves): the Etcd gets no BackupEntry (a store no bucket
# owns), so its claim ends with it, and its snapshots stay in the store. Namespace other then
# applies an Etcd on shoot--etcd-main: admitted, and its sidecar's initializer restores the
# latest full snapshot of its prefix at first start: shoot's cluster. The same loss was closed
# for a retained EtcdBackup copy in such a store (it gets an entry without a bucket and "stays
# until the operator deletes it with kubectl delete backupentry", attack5_retained_copy), not
# for the Etcd's own backups. Wanted: what a deleted Etcd's sidecar wrote keeps its prefix
# claimed for its namespace (an entry without a bucket, released by the operator), or another
# namespace's claim of a prefix holding snapshots is refused.
# Oracle: s3rver's listing and the Etcd kube-sim stores.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
P=shoot--etcd-main

creds() { # ns
    kc -n "$1" delete secret etcd-backup --ignore-not-found >/dev/null
    kc -n "$1" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}
listing() { snap_s3 ls "$P/" | sort | tr '\n' ' '; }
gone() { ! kc -n shoot get etcd etcd-main >/dev/null 2>&1; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot other
creds shoot
creds other
wh_register_backups
ctl_start
ctl_store_etcd shoot etcd-main S3 "$SNAP_BUCKET" "$P"
sleep 1 # its sidecar writes after the Etcd began (object times have seconds)
snap=Full-00000000-00000100-1700000000.gz
snap_fixture "$SNAP_WORK/full" 4096 "$snap"
snap_s3 put "$P/v2/$snap" "$SNAP_WORK/full"
if out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" "$P" 2>&1); then
    ctl_fail "the reference case: other's Etcd admitted on the live etcd-main's prefix: $out"
fi
ok "reference: other's Etcd on $P is refused while shoot/etcd-main lives (its snapshot: $(listing))"

kc -n shoot delete etcd etcd-main >/dev/null
ksim_wait 30 gone || ctl_fail "etcd-main not deleted"
ok "shoot/etcd-main deleted; $P holds: $(listing)"

admitted() { out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" "$P" 2>&1); }
if ! ksim_wait 60 admitted; then
    ok "namespace other's Etcd on $P stays refused: ${out:0:240}"
    ctl_stop
    echo "attack7_unbucketed_release: ok"
    exit 0
fi
stored=$(jp other etcd/etcd-x '{.spec.backup.store.prefix}')
left=$(listing)
if grep -qF "$P/v2/$snap" <<<"$left" && [ "$stored" = "$P" ]; then
    ctl_fail "HOLE: namespace other's Etcd etcd-x admitted on $P, which still holds shoot's full snapshot $snap written by the deleted Etcd shoot/etcd-main (a store no BackupBucket owns: no entry kept the prefix claimed); other's sidecar restores shoot's cluster at its first start (listing: $left)"
fi
ok "other's Etcd on $P admitted once nothing of shoot's is left there (listing: ${left:-empty})"
ctl_stop
echo "attack7_unbucketed_release: ok"
