#!/usr/bin/env bash
# "An Etcd that moves to another prefix leaves its old entry pending": only when that entry was
# made. Etcd shoot/etcd-main is created on shoot--etcd-main in BackupBucket s3's store while
# warden-controller is down (an upgrade, a node drain); its sidecar writes its full snapshot
# there (the cluster's data, Secrets included). shoot then moves it to moved--shoot (an UPDATE
# of spec.backup.store.prefix: admitted; its claim record in the Lease is replaced by the new
# prefix). warden-controller comes back and makes the Etcd's entry for moved--shoot only:
# nothing claims shoot--etcd-main, which still holds shoot's snapshot. Namespace other then
# applies an Etcd on shoot--etcd-main: admitted, and its sidecar restores shoot's cluster at its
# first start. Wanted: a prefix an Etcd was admitted on stays claimed for it when it moves,
# whether or not warden-controller saw it there (e.g. the old prefix's entry made from the
# admission record, or the move refused until the entry exists).
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
entries() {
    kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name} {.spec.etcd.namespace}/{.spec.etcd.name} {.spec.prefix}{"\n"}{end}'
}
has_entry() { entries | grep -q " shoot/etcd-main moved--shoot$"; }
listing() { snap_s3 ls "$P/" | sort | tr '\n' ' '; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
ctl_namespace shoot other
creds shoot
creds other
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: s3}
spec:
  provider: aws
  container: $SNAP_BUCKET
  secretRef: {namespace: etcd-warden, name: s3-bucket}
  deletionGracePeriod: 1h
EOF
wh_register_backups

# warden-controller is not running yet
ctl_store_etcd shoot etcd-main S3 "$SNAP_BUCKET" "$P"
sleep 1 # its sidecar writes after the Etcd began (object times have seconds)
snap=Full-00000000-00000100-1700000000.gz
snap_fixture "$SNAP_WORK/full" 4096 "$snap"
snap_s3 put "$P/v2/$snap" "$SNAP_WORK/full"
if out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" "$P" 2>&1); then
    ctl_fail "the reference case: other's Etcd admitted on the live etcd-main's prefix: $out"
fi
ok "reference: other's Etcd on $P is refused while shoot/etcd-main backs up there ($(listing))"
kc -n shoot patch etcd etcd-main --type merge \
    -p '{"spec":{"backup":{"store":{"prefix":"moved--shoot"}}}}' >/dev/null || ctl_fail "the move refused"
ok "warden-controller down: shoot/etcd-main moved from $P to moved--shoot"

ctl_start
ksim_wait 30 has_entry || ctl_fail "no entry for shoot/etcd-main in moved--shoot: $(entries)"
ok "warden-controller back; entries: $(entries | tr '\n' ';')"

admitted() { out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" "$P" 2>&1); }
if ! ksim_wait 60 admitted; then
    ok "namespace other's Etcd on $P stays refused: ${out:0:240}"
    ctl_stop
    echo "attack7_moved_unseen: ok"
    exit 0
fi
left=$(listing)
if grep -qF "$P/v2/$snap" <<<"$left" && [ "$(jp other etcd/etcd-x '{.spec.backup.store.prefix}')" = "$P" ]; then
    ctl_fail "HOLE: namespace other's Etcd etcd-x admitted on $P, which holds the full snapshot $snap that shoot/etcd-main's sidecar wrote before it moved to moved--shoot while warden-controller was down: no entry keeps the old prefix (entries: $(entries | tr '\n' ';')); other's sidecar restores shoot's cluster at its first start (listing: $left)"
fi
ok "other's Etcd on $P admitted once nothing of shoot's is left there (listing: ${left:-empty})"
ctl_stop
echo "attack7_moved_unseen: ok"
