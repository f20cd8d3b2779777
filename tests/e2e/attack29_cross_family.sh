#!/usr/bin/env bash
# One bucket reached through two providers' APIs is one store to the sidecars: Google Cloud
# Storage serves every bucket over its S3-compatible XML API (storage.googleapis.com, HMAC
# keys), Alibaba OSS over its S3-compatible endpoint, Ceph's RADOS Gateway over both S3 and
# Swift. etcd-backup-restore's S3 client takes its endpoint from the Secret (v0.28.4 has no
# other), so the Etcd need not even name the service. An Etcd with provider aws on a GCS
# bucket's name and the prefix of a live GCS Etcd in it is admitted: both sidecars write into
# one prefix, and each restore takes the other's newest full snapshot (docs: "etcd-warden never
# decides that two Etcds are apart when their sidecars may share a bucket").
# bstore keys every object store by its container alone ("Object|<container>|"), so each of
# these is refused. Then the upgrade: a claim Lease written by the release before, under the
# family key "S3|<container>|", still blocks an overlapping claim of any family.
set -euo pipefail
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

# The release before recorded claims in a Lease named after "S3|<container>|"; a record of it
# still within its 120 s counts for an Etcd of any family on that container.
lease=$(kc get leases -A -o jsonpath='{range .items[*]}{.metadata.namespace} {.metadata.name}{"\n"}{end}' |
    awk '$2 ~ /^etcd-warden-claims-/ { print $1; exit }')
[ -n "$lease" ] || ctl_fail "no claim Lease after an admitted Etcd"
old="etcd-warden-claims-$(printf 'S3|legacy-bucket|' | sha256sum | cut -c1-16)"
kc -n "$lease" apply -f - >/dev/null <<EOF || ctl_fail "cannot write the earlier release's Lease"
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: $old
  annotations:
    etcd-warden.io/claims: '[{"namespace":"shoot","name":"etcd-old","prefix":"team","at":$(date +%s)}]'
spec: {holderIdentity: warden-webhook}
EOF
legacy() { # ns name provider prefix
    kc apply -f - 2>&1 <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: $3, container: legacy-bucket, prefix: $4, secretRef: {name: etcd-backup}}}
EOF
}
out=$(legacy other etcd-new gcp team/a) && ctl_fail "a claim of the earlier release's Lease ignored: $out"
grep -q 'claimed from another namespace in the same store (Object|legacy-bucket|)' <<<"$out" || ctl_fail "refused for another reason: $out"
out=$(legacy other etcd-free aws elsewhere) || ctl_fail "a prefix nothing claims refused: $out"
ok "a claim the earlier release recorded under its family key still blocks any family"
echo "attack29_cross_family: ok"
