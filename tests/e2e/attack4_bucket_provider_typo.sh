#!/usr/bin/env bash
# The operator who creates a BackupBucket owns its store, "every bucket of that container name,
# whatever the provider" (docs/backup-entries.md), and its namespaceSelector says who may claim
# there. warden-webhook reads the selector only of a bucket whose provider it understands: a
# bucket spelled provider "AWS" (etcd-druid accepts aws, S3, s3; the controller makes it Ready
# False/InvalidSpec) is skipped, so while it is, a namespace it does not select (evil, without
# a backup Secret) claims the whole container with one Etcd on prefix "". That Etcd outlives
# the typo's fix ("an Etcd admitted before the bucket's selector keeps working and still
# counts"): every authorised tenant's new Etcd in the container is refused from then on.
# Wanted: a bucket not understood still owns its container at admission (fail closed: its
# selector applies, or claims there are refused until it is valid).
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
  backup: {port: 8080, store: {provider: S3, container: etcd-bucket, prefix: "$3"${4:-}}}
EOF
}
bucket() { # provider
    kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec:
  provider: $1
  container: etcd-bucket
  secretRef: {namespace: etcd-warden, name: creds}
  deletionGracePeriod: 1h
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: shared}}
EOF
}

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot evil
kc label namespace shoot etcd-warden.io/backups=shared >/dev/null
kc -n evil delete secret etcd-backup >/dev/null
ctl_backup_secret etcd-warden creds
bucket AWS
ctl_start
invalid() { kc get backupbucket shared -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}' | grep -q InvalidSpec; }
ksim_wait 20 invalid || ctl_fail "bucket not InvalidSpec: $(kc get backupbucket shared -o jsonpath='{.status}')"
ok "the bucket spelled provider AWS is Ready False/InvalidSpec"

if out=$(etcd evil squat "" 2>&1); then
    bucket aws # the operator fixes the typo
    valid() { ! invalid; }
    ksim_wait 20 valid || true
    if out2=$(etcd shoot etcd-main shoot--etcd-main ", secretRef: {name: etcd-backup}" 2>&1); then
        ok "(the authorised tenant's Etcd admitted after the fix)"
    else
        echo "FAIL: after the typo's fix the authorised tenant's Etcd is refused: ${out2:0:300}" >&2
    fi
    ctl_fail "HOLE: namespace evil, not selected by BackupBucket shared, claimed the whole container etcd-bucket (prefix \"\") while the bucket's provider was misspelled: $out"
fi
ok "the unselected namespace's claim is refused while the bucket is not understood: ${out:0:240}"
ctl_stop
echo "attack4_bucket_provider_typo: ok"
