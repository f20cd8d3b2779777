#!/usr/bin/env bash
# Stores as etcd-druid and its backup sidecar name them, with kubectl against kube-sim and
# warden-webhook (--backup-entries, the Etcd webhook on CREATE and UPDATE): a provider
# etcd-druid does not accept ("awss", "Aws") is refused at admission listing what is
# accepted (aws, S3, s3, ...), and so is a store without a container; etcd-druid's
# lower-case names (s3, ecs) and any endpointOverride are the same store as aws in the same
# container (the sidecar may take its endpoint from the Secret), so their prefixes are
# refused beside an aws Etcd's; an UPDATE respelling a live Etcd's provider (aws -> s3) or
# moving its endpoint is admitted, one into an unknown provider refused, one keeping an
# unknown store word for word admitted; an Etcd of an unknown provider admitted before the
# rule was registered is in the way of every new prefix of its container, not of another.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

etcd() { # ns name provider container prefix [endpointOverride]
    kc apply -f - <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: $3, container: "$4", prefix: "$5", ${6:+endpointOverride: "$6", }secretRef: {name: etcd-backup}}}
EOF
}
allowed() { # what, then etcd's arguments
    local what=$1 out
    shift
    out=$(etcd "$@" 2>&1) || ctl_fail "$what: refused: $out"
    ok "$what"
}
refused() { # what, the text the denial must hold, then etcd's arguments
    local what=$1 want=$2 out
    shift 2
    if out=$(etcd "$@" 2>&1); then ctl_fail "$what: allowed: $out"; fi
    case "$out" in
    *"denied the request: $want"*) ;;
    *) ctl_fail "$what: $out" ;;
    esac
    ok "$what"
}
cached() { ! etcd other probe S3 "$1" "$2" >/dev/null 2>&1; }

CTL_WEBHOOK_FLAGS=--backup-entries ctl_stage
for ns in shoot other legacy; do kc create namespace "$ns" >/dev/null; done
# admitted before the CREATE rule was registered (an earlier etcd-warden): written while
# warden-webhook's Etcd rules are not registered, then registered again
kc delete validatingwebhookconfiguration etcd-warden >/dev/null
etcd legacy etcd-old awss old-bucket legacy/etcd >/dev/null || ctl_fail "legacy/etcd-old not created"
wh_register_etcd
ctl_start

accepted='(accepted: aws, S3, s3, stackit, azure, ABS, abs, gcp, GCS, gcs, openstack, Swift, swift, alicloud, OSS, oss, dell, ECS, ecs, openshift, OCS, ocs, Local, local)'
refused "an unknown provider" "spec.backup.store.provider: unknown provider \"awss\" $accepted" \
    other etcd-x awss etcd-bucket other--etcd-x
refused "a provider in the wrong case" 'spec.backup.store.provider: unknown provider "Aws" (accepted: ' \
    other etcd-x Aws etcd-bucket other--etcd-x
# no container: the CRD's pattern (etcd-druid's) refuses it before any webhook
if out=$(etcd other etcd-x aws "" other--etcd-x 2>&1); then ctl_fail "no container: allowed: $out"; fi
grep -qF "spec.backup.store.container in body should match" <<<"$out" || ctl_fail "no container: $out"
ok "no container: refused by the CRD's pattern"
allowed "an aws Etcd" shoot etcd-main aws etcd-bucket shoot--etcd-main
ksim_wait 10 cached etcd-bucket shoot--etcd-main || ctl_fail "etcd-main not in the webhook's cache"
# namespace other is told of no owner in namespace shoot, only of the store
same='spec.backup.store.prefix "shoot--etcd-main" overlaps a prefix claimed from another namespace in the same store (Object|etcd-bucket|)'
refused "s3, etcd-druid's lower-case name" "$same" other etcd-x s3 etcd-bucket shoot--etcd-main
refused "ecs, the same S3 family" "$same" other etcd-x ecs etcd-bucket shoot--etcd-main http://ecs:9020
refused "another endpointOverride" "$same" other etcd-x S3 etcd-bucket shoot--etcd-main https://s3.eu-west-1.amazonaws.com
refused "the default endpoint spelled out" "$same" other etcd-x aws etcd-bucket shoot--etcd-main https://s3.amazonaws.com
kc -n other get etcd etcd-x >/dev/null 2>&1 && ctl_fail "etcd-x was created"
refused "another family, one container name" "$same" other etcd-x azure etcd-bucket shoot--etcd-main
refused "GCS, whose bucket S3 reaches through its XML API" "$same" other etcd-x gcp etcd-bucket shoot--etcd-main
allowed "respelled aws -> s3 (UPDATE)" shoot etcd-main s3 etcd-bucket shoot--etcd-main
allowed "the endpoint moved into endpointOverride (UPDATE)" shoot etcd-main S3 etcd-bucket \
    shoot--etcd-main http://minio.example:9000
refused "an UPDATE into an unknown provider" 'spec.backup.store.provider: unknown provider "awss"' \
    shoot etcd-main awss etcd-bucket shoot--etcd-main
# the legacy Etcd: its store is not understood, so its claim is the whole container
refused "a new prefix beside a store not understood" \
    'spec.backup.store.prefix "shoot--new" overlaps a prefix claimed from another namespace in the same store (Object|old-bucket|)' \
    shoot etcd-new aws old-bucket shoot--new
allowed "another container" shoot etcd-new aws new-bucket shoot--new
kc -n legacy label etcd etcd-old touched=1 >/dev/null || ctl_fail "an UPDATE keeping the unknown store refused"
ok "an UPDATE keeping an unknown store word for word"
echo "webhook_prefix_stores: ok"
