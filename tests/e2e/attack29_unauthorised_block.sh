#!/usr/bin/env bash
# A namespace the bucket's owner has not authorised (BackupBucket spec.namespaceSelector does
# not select it), with no backup Secret at all, creates one Etcd on the whole container
# (prefix ""): it is admitted, and from then on every authorised tenant's new Etcd in that
# bucket is refused ("overlaps a prefix claimed from another namespace"), as are their copies,
# schedules and restores: one object by someone without authority blocks the shared bucket.
# Wanted: the unauthorised Etcd refused at admission (warden-webhook reads the BackupBuckets
# and the namespace's labels: webhook/bauth), so shoot/etcd-main is admitted; an EtcdBackup
# of namespace evil with a destination in that bucket is refused too.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

etcd() { # ns name prefix [store fields]
    kc apply -f - <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: ${PROVIDER:-S3}, container: etcd-bucket, prefix: "$3"${4:-}}}
EOF
}

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot evil
kc label namespace shoot etcd-warden.io/backups=shared >/dev/null
ctl_backup_secret etcd-warden creds
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec:
  provider: aws
  container: etcd-bucket
  secretRef: {namespace: etcd-warden, name: creds}
  deletionGracePeriod: 1h
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: shared}}
EOF
wh_register_backups
ctl_start

if out=$(etcd evil squat "" 2>&1); then
    ctl_fail "the unauthorised whole-container Etcd admitted: $out"
fi
grep -q 'namespace evil is not selected by spec.namespaceSelector of BackupBucket shared, which owns the store (Object|etcd-bucket|)' <<<"$out" ||
    ctl_fail "refused for another reason: $out"
ok "the unauthorised whole-container Etcd is refused"
if out=$(PROVIDER=gcp etcd evil squat2 "evil/" 2>&1); then
    ctl_fail "the unauthorised Etcd admitted under another provider's name: $out"
fi
ok "under another provider's name too (one container, one store)"
if out=$(etcd shoot etcd-main shoot--etcd-main ", secretRef: {name: etcd-backup}" 2>&1); then
    ok "an authorised tenant's Etcd is admitted beside the unauthorised one"
else
    ctl_fail "an authorised tenant's Etcd refused because of an unauthorised namespace's Etcd without credentials: $out"
fi
if out=$(kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: grab, namespace: evil}
spec:
  etcdName: nothing
  destination: {provider: aws, container: etcd-bucket, prefix: evil--copy, secretRef: {name: etcd-backup}}
EOF
); then
    ctl_fail "an unauthorised namespace's EtcdBackup destination admitted: $out"
fi
grep -q 'namespace evil is not selected' <<<"$out" || ctl_fail "EtcdBackup refused for another reason: $out"
ok "an unauthorised namespace's EtcdBackup destination in the bucket is refused"
ctl_stop
echo "attack29_unauthorised_block: ok"
