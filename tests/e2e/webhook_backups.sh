#!/usr/bin/env bash
# EtcdBackup, EtcdBackupSchedule and EtcdRestore destinations checked at admission
# (POST /webhooks/backups, registered as the chart registers it), with kubectl against
# kube-sim and warden-webhook --backup-entries --etcd-backups: a tenant sees the refusal at
# `kubectl apply`. Refused: the whole container (".", "/"), a prefix leaving it ("../x"), an
# unknown provider (the message lists the known ones), a prefix overlapping a live Etcd's as
# the sidecar lists it (named to its own namespace only, "a prefix claimed from another
# namespace" to others), and a restore target inside another Etcd's prefix. Allowed: a prefix
# of its own. An EtcdBackup that never wrote (one for an Etcd that does not exist) claims
# nothing: an Etcd is then admitted inside its destination, and another EtcdBackup of another
# namespace too.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

backup() { # ns name etcd provider container prefix
    kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $2, namespace: $1}
spec:
  etcdName: $3
  destination: {provider: $4, container: $5, prefix: "$6", secretRef: {name: offsite}}
EOF
}
schedule() { # ns name prefix
    kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackupSchedule
metadata: {name: $2, namespace: $1}
spec:
  schedule: "0 * * * *"
  backupTemplate:
    etcdName: etcd-main
    destination: {provider: S3, container: etcd-bucket, prefix: "$3", secretRef: {name: offsite}}
EOF
}
restore() { # ns name target-prefix
    kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $2, namespace: $1}
spec:
  source: {store: {provider: S3, container: etcd-bucket, prefix: shoot--etcd-main, secretRef: {name: offsite}}, etcdName: etcd-main}
  target: {etcdName: etcd-restored, store: {provider: S3, container: etcd-bucket, prefix: "$3"}}
EOF
}
etcd() { # ns name prefix
    kc apply -f - 2>&1 <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: etcd-bucket, prefix: "$3", secretRef: {name: etcd-backup}}}
EOF
}
refused() { # what want command...
    local what=$1 want=$2 out
    shift 2
    if out=$("$@"); then ctl_fail "$what: admitted: $out"; fi
    grep -qF -- "$want" <<<"$out" || ctl_fail "$what: $out"
    ok "$what refused"
}
admitted() { # what command...
    local what=$1 out
    shift
    out=$("$@") || ctl_fail "$what: refused: $out"
    ok "$what admitted"
}

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
wh_register_backups
ctl_namespace shoot other
admitted "Etcd shoot/etcd-main" etcd shoot etcd-main shoot--etcd-main

for p in . / ./ //; do
    refused "EtcdBackup to the whole container \"$p\"" 'is the whole container' \
        backup shoot b1 etcd-main S3 etcd-bucket "$p"
done
refused "EtcdBackup to a prefix leaving its container" 'leaves its container' \
    backup shoot b1 etcd-main S3 etcd-bucket ../x
refused "EtcdBackup to an unknown provider" 'unknown provider "awss"' \
    backup shoot b1 etcd-main awss etcd-bucket copies
refused "EtcdBackup into a live Etcd's prefix, same namespace" \
    'overlaps the prefix "shoot--etcd-main" of Etcd shoot/etcd-main' \
    backup shoot b1 etcd-main aws etcd-bucket shoot--etcd-main/copies
out=$(backup other b1 etcd-x S3 etcd-bucket shoot--etcd-main-2) && ctl_fail "admitted: $out"
grep -q 'overlaps a prefix claimed from another namespace' <<<"$out" || ctl_fail "other: $out"
case "$out" in *shoot/*) ctl_fail "another namespace's Etcd named: $out" ;; esac
ok "EtcdBackup overlapping another namespace's Etcd refused, naming nothing of it"
refused "EtcdBackupSchedule to the whole container" 'is the whole container' schedule shoot s1 /
refused "EtcdBackupSchedule into a live Etcd's prefix" 'of Etcd shoot/etcd-main' \
    schedule shoot s1 shoot--etcd-main
refused "EtcdRestore target \".\"" 'is the whole container' restore shoot r1 .
refused "EtcdRestore target inside a live Etcd's prefix" 'of Etcd shoot/etcd-main' \
    restore shoot r1 shoot--etcd-main/restored
# a prefix with a segment ending in "v1": the sidecar could never restore from the copy, nor
# the restored Etcd's initializer from its target (as the Etcd webhook refuses such prefixes)
refused "EtcdBackup to a prefix with a v1 segment" 'a segment ends in "v1"' \
    backup shoot b1 etcd-main S3 etcd-bucket prod-v1/etcd
refused "EtcdBackupSchedule to a prefix with a v1 segment" 'a segment ends in "v1"' \
    schedule shoot s1 copies/etcd-v1
refused "EtcdRestore target with a v1 segment" 'a segment ends in "v1"' \
    restore shoot r1 restored-v1/etcd-main
admitted "EtcdBackup to a prefix of its own" backup shoot b1 etcd-main S3 etcd-bucket copies/etcd-main
admitted "EtcdBackupSchedule to a prefix of its own" schedule shoot s1 copies/etcd-main
admitted "EtcdRestore to a prefix of its own" restore shoot r1 shoot--etcd-restored

admitted "EtcdBackup to a prefix with v1 inside a segment" backup shoot b3 etcd-main S3 etcd-bucket copies/v10-main

# An EtcdBackup that never wrote claims nothing (here no controller runs it; for an Etcd
# that does not exist it would fail before any copy): an Etcd and another namespace's
# EtcdBackup are admitted inside its destination.
admitted "EtcdBackup of an Etcd that does not exist" backup other ghost nothing S3 etcd-bucket tenants
admitted "an Etcd inside an unwritten EtcdBackup's destination" etcd shoot etcd-t tenants/t
admitted "another namespace's EtcdBackup there too" backup shoot b2 etcd-main S3 etcd-bucket tenants/b2
echo "webhook_backups: ok"
