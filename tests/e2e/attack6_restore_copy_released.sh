#!/usr/bin/env bash
# A restore's copy outlives every claim on its prefix and is handed to the next tenant there.
# Namespace shoot restores its etcd-main (a full snapshot under shoot--etcd-main: its cluster's
# data, Secrets included) into restored--shoot: EtcdRestore r Completes, its copy
# restored--shoot/v2/Full-... is in the store and the restored Etcd shoot/etcd-back carries the
# claim (its BackupEntry, spec.claimedAt its creation). shoot deletes etcd-back; the entry's
# grace period ends and its deletion Job deletes what etcd-back wrote in [claimedAt,
# etcdDeletedAt + 60 s]: the copy was written by etcd-warden before etcd-back existed, so it is
# kept ("A restore's copy is written before its Etcd exists and is therefore kept too") and the
# entry is deleted. Nothing claims restored--shoot any more, but it still holds shoot's data.
# Namespace other then creates an Etcd on restored--shoot: admitted; its sidecar's initializer
# restores the latest full snapshot of its prefix at first start: shoot's. A backup handed to
# another tenant. Wanted: what etcd-warden wrote on the deleted Etcd's behalf (the restore's
# copy) goes with its entry, or the prefix stays claimed while it holds what nobody may delete.
# Oracle: s3rver's listing and the Etcd kube-sim stores.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

creds() { # ns
    kc -n "$1" delete secret etcd-backup --ignore-not-found >/dev/null
    kc -n "$1" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}
rphase() { jp shoot etcdrestore/r '{.status.phase}'; }
listing() { snap_s3 ls "$1/" | sort | tr '\n' ' '; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
ctl_namespace shoot other
creds shoot
creds other
ctl_s3_bucket 1h
wh_register_backups
ctl_jobs_serve etcd-warden
ctl_jobs_serve shoot
ctl_start
snap=Full-00000000-00000100-1700000000.gz
snap_fixture "$SNAP_WORK/full" 4096 "$snap"
snap_s3 put "shoot--etcd-main/v2/$snap" "$SNAP_WORK/full"

kc apply -f - >/dev/null <<EOF || ctl_fail "the restore refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: shoot}
spec:
  source: {store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-back, store: {provider: S3, container: $SNAP_BUCKET, prefix: restored--shoot, secretRef: {name: etcd-backup}}}
EOF
completed() { [ "$(rphase)" = Completed ]; }
ksim_wait 90 completed || ctl_fail "r did not complete: $(kc -n shoot get etcdrestore r -o jsonpath='{.status}')"
grep -qF "restored--shoot/v2/$snap" <<<"$(listing restored--shoot)" ||
    ctl_fail "no copy in restored--shoot: $(listing restored--shoot)"
ksim_wait 30 ctl_has_entry shoot etcd-back || ctl_fail "no entry for the restored Etcd shoot/etcd-back"
e=$(ctl_entry_of shoot etcd-back)
ok "r Completed: restored--shoot holds shoot's snapshot ($(listing restored--shoot)); entry $e of shoot/etcd-back"

kc -n shoot delete etcd etcd-back >/dev/null
pending() { [ "$(kc get backupentry "$e" -o jsonpath='{.status.phase}')" = PendingDeletion ]; }
ksim_wait 30 pending || ctl_fail "$e not pending: $(kc get backupentry "$e" -o jsonpath='{.status}')"
ctl_s3_bucket 2s
ended() { ksim_gone backupentry "$e" || [ -n "$(kc get backupentry "$e" -o jsonpath='{.status.lastError}')" ]; }
ksim_wait 120 ended || ctl_fail "$e: the deletion did not end: $(kc get backupentry "$e" -o jsonpath='{.status}')"
left=$(listing restored--shoot)
ok "etcd-back deleted, its entry's deletion over ($(ksim_gone backupentry "$e" && echo gone || kc get backupentry "$e" -o jsonpath='{.status.phase}')); restored--shoot holds: ${left:-nothing}"

admitted() { out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" restored--shoot 2>&1); }
if ! ksim_wait 180 admitted; then
    ok "namespace other's Etcd on restored--shoot is refused: ${out:0:240}"
    ctl_stop
    echo "attack6_restore_copy_released: ok"
    exit 0
fi
stored=$(jp other etcd/etcd-x '{.spec.backup.store.prefix}')
left=$(listing restored--shoot)
if grep -qF "restored--shoot/v2/$snap" <<<"$left" && [ "$stored" = restored--shoot ]; then
    ctl_fail "HOLE: namespace other's Etcd etcd-x admitted on restored--shoot, which still holds shoot's full snapshot $snap, copied there by shoot's EtcdRestore r for the Etcd etcd-back: etcd-back's entry $e was deleted keeping the copy (written before etcd-back existed) and nothing claims the prefix; other's sidecar restores shoot's cluster at its first start (listing: $left)"
fi
ok "other's Etcd on restored--shoot admitted once nothing of shoot's is left there (listing: ${left:-empty})"
ctl_stop
echo "attack6_restore_copy_released: ok"
