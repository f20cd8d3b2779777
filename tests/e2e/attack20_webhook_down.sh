#!/usr/bin/env bash
# warden-webhook down with the chart's default failurePolicy Fail (docs/troubleshooting.md:
# "protection that can be skipped by crashing the webhook protects nothing"). shoot/etcd-a is
# deleted and its entry is PendingDeletion (its snapshots within their grace period). With the
# webhook stopped, namespace other tries to take the prefix every way a tenant can: an Etcd
# CREATE on it (respelled), its own Etcd moved onto it (UPDATE), an EtcdBackup, an
# EtcdBackupSchedule and an EtcdRestore writing into it; etcd-druid's service account tries the
# Etcd too. Each must be refused (fail closed); the snapshots must stay (s3rver's listing).
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

P=shoot--etcd-a
holes=0
etcd_yaml() { # NS NAME PROVIDER PREFIX
    cat <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: $3, container: $SNAP_BUCKET, prefix: "$4", secretRef: {name: etcd-backup}}}
EOF
}
refused() { # WHAT, then the command (stdin: the object)
    local what=$1 out
    shift
    if out=$("$@" 2>&1); then
        echo "HOLE: admitted with warden-webhook down: $what"
        holes=$((holes + 1))
    elif grep -q 'failed calling webhook' <<<"$out"; then
        echo "held: refused with warden-webhook down: $what: $(echo "$out" | tail -1 | grep -o 'failed calling webhook "[^"]*"')"
    else ctl_fail "$what refused for another reason than the webhook: $out"; fi
}
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
wh_register_backups
ctl_s3_bucket_secret
ctl_namespace shoot other
ctl_s3_bucket 1h
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" $P
ctl_store_etcd other etcd-b aws "$SNAP_BUCKET" other--etcd-b
ctl_members shoot etcd-a
ctl_start
ksim_wait 20 ctl_has_entry shoot etcd-a || ctl_fail "no entry for etcd-a"
ctl_members_seen shoot etcd-a
E=$(ctl_entry_of shoot etcd-a)
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
a_keys=$(snap_s3 ls "$P/" | sort)
kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"

wh_stop
refused "Etcd other/etcd-x on \"$P\"" kc apply -f - < <(etcd_yaml other etcd-x aws "$P")
refused "Etcd other/etcd-x on \"./$P/\" (provider S3)" kc apply -f - < <(etcd_yaml other etcd-x S3 "./$P/")
refused "Etcd other/etcd-x on \"$P/x\"" kc apply -f - < <(etcd_yaml other etcd-x aws "$P/x")
refused "etcd-druid's Etcd other/etcd-x on \"$P\"" kc_druid apply -f - < <(etcd_yaml other etcd-x aws "$P")
refused "Etcd other/etcd-b moved onto \"$P\"" kc -n other patch etcd etcd-b --type merge -p "{\"spec\":{\"backup\":{\"store\":{\"prefix\":\"$P\"}}}}"
refused "EtcdBackup other/copy into \"$P\"" kc apply -f - <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: copy, namespace: other}
spec:
  etcdName: etcd-b
  destination: {provider: aws, container: $SNAP_BUCKET, prefix: "$P", secretRef: {name: etcd-backup}}
EOF
refused "EtcdBackupSchedule other/copies into \"$P\"" kc apply -f - <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackupSchedule
metadata: {name: copies, namespace: other}
spec:
  schedule: "0 * * * *"
  backupTemplate:
    etcdName: etcd-b
    destination: {provider: aws, container: $SNAP_BUCKET, prefix: "$P", secretRef: {name: etcd-backup}}
EOF
refused "EtcdRestore other/restore into \"$P\"" kc apply -f - <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: restore, namespace: other}
spec:
  source:
    store: {provider: aws, container: $SNAP_BUCKET, prefix: other--etcd-b, secretRef: {name: etcd-backup}}
    etcdName: etcd-b
  target:
    etcdName: etcd-x
    store: {container: $SNAP_BUCKET, prefix: "$P"}
EOF
sleep 3
if [ "$(snap_s3 ls "$P/" | sort)" != "$a_keys" ]; then
    echo "HOLE: etcd-a's snapshots changed while warden-webhook was down: $(snap_s3 ls "$P/" | tr '\n' ' ')"
    holes=$((holes + 1))
fi
echo "entry $E: $(ctl_entry_phase "$E"); under $P: $(snap_s3 ls "$P/" | tr '\n' ' ')"
ctl_stop
[ "$holes" = 0 ] || exit 1
echo "attack20_webhook_down: ok"
