#!/usr/bin/env bash
# One bucket reached through two providers' APIs is one store to the sidecars: Google Cloud
# Storage serves every bucket over its S3-compatible XML API (storage.googleapis.com, HMAC
# keys), Alibaba OSS over its S3-compatible endpoint, Ceph's RADOS Gateway over both S3 and
# Swift. etcd-backup-restore's S3 client takes its endpoint from the Secret (v0.28.4 has no
# other), so the Etcd need not even name the service. An Etcd with provider aws on a GCS
# bucket's name and the prefix of a live GCS Etcd in it is admitted: both sidecars write into
# one prefix, and each restore takes the other's newest full snapshot (docs: "etcd-warden never
# decides that two Etcds are apart when their sidecars may share a bucket").
# HOLE, not fixed here: bstore compares stores by family; S3, GCS, OSS and Swift would have to
# be one store for one container name whenever the S3 endpoint is not known (common/bstore.c,
# the differential corpus in tests/test_bstore_diff.c and the docs with it).
set -euo pipefail
[ "${WARDEN_ATTACK29_HOLES:-}" = 1 ] || {
    echo "SKIP: an S3 Etcd on a GCS bucket through its XML API is another store to bstore (open hole)"
    exit 77
}
. "$(dirname "$0")/../lib/controller.sh"

etcd() { # ns name provider store-fields
    kc apply -f - <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: $3, container: etcd-bucket, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}$4}}
EOF
}

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot other
etcd shoot etcd-main gcp "" >/dev/null || ctl_fail "shoot/etcd-main (GCS) refused"
for spelling in "aws|" "aws|, endpointOverride: https://storage.googleapis.com" "alicloud|" "openstack|"; do
    p=${spelling%%|*} extra=${spelling#*|}
    if out=$(etcd other "etcd-$p" "$p" "$extra" 2>&1); then
        kc -n other delete etcd "etcd-$p" >/dev/null 2>&1 || true
        ctl_fail "provider $p$extra on the GCS Etcd's bucket and prefix admitted: $out"
    fi
done
ok "every S3-compatible provider on a GCS Etcd's bucket and prefix is refused"
echo "attack29_cross_family: ok"
