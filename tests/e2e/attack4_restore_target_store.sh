#!/usr/bin/env bash
# An EtcdRestore's target store, when it names no provider, is resolved twice and differently:
# warden-webhook takes the provider of the live source Etcd (spec.source.etcdName) before
# spec.source.store, warden-controller takes spec.etcdTemplate's store, else the source
# store's. Namespace team (selected by the bucket, prefixScope Namespace) has a Local Etcd src
# and applies a restore with an etcdTemplate without a store, source.store an S3 bucket of its
# own and the target {container: etcd-bucket, prefix: team2/r}: the webhook checks a Local
# target (not a bucket: no selector, no partition, the claim recorded in a Local store's
# Lease) and admits it; the controller's copy Job then writes S3 etcd-bucket team2/r, namespace
# team2's part of the operator's bucket, which the same target spelled with provider S3 is
# refused for; and team2's own Etcd on team2/r is admitted while that copy is in flight (two
# writers on one prefix: team2's next restore reads team's snapshots).
# Wanted: the webhook judges the store the controller will write (or the controller refuses a
# target that differs from the admitted one). Oracle: the Job's arguments, kubectl's answers.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

etcd() { # ns name prefix provider
    kc apply -f - <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: $4, container: etcd-bucket, prefix: "$3", secretRef: {name: etcd-backup}}}
EOF
}

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace team team2
for n in team team2; do kc label namespace $n etcd-warden.io/backups=shared >/dev/null; done
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
  prefixScope: Namespace
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: shared}}
EOF
wh_register_backups
ctl_start

out=$(etcd team src team/src Local 2>&1) || ctl_fail "team/src (Local) refused: $out"
if out=$(kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: direct, namespace: team}
spec:
  source: {store: {provider: S3, container: team-bucket, prefix: team/src, secretRef: {name: etcd-backup}}}
  etcdTemplate: {replicas: 1, backup: {port: 8080}}
  target: {etcdName: direct, store: {provider: S3, container: etcd-bucket, prefix: team2/d, secretRef: {name: etcd-backup}}}
EOF
); then
    ctl_fail "the reference case, an S3 target in team2's part, admitted: $out"
fi
grep -q 'prefix "team2/d" is not namespace team'"'"'s' <<<"$out" || ctl_fail "reference refused for another reason: $out"
ok "a restore target in team2's part, provider spelled, is refused"

if ! out=$(kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: team}
spec:
  source:
    etcdName: src
    store: {provider: S3, container: team-bucket, prefix: team/src, secretRef: {name: etcd-backup}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: restored, store: {container: etcd-bucket, prefix: team2/r, secretRef: {name: etcd-backup}}}
EOF
); then
    ok "the restore with the provider left to default is refused: ${out:0:200}"
    ctl_stop
    echo "attack4_restore_target_store: ok"
    exit 0
fi
# admitted: what does the controller write? (kube-sim runs no Pods: the Job stays)
job_args() { kc -n team get job r--restore -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
ended() { [ -n "$(job_args)" ] || kc -n team get etcdrestore r -o jsonpath='{.status.phase}' | grep -q Failed; }
ksim_wait 60 ended || true
args=$(job_args)
phase=$(kc -n team get etcdrestore r -o jsonpath='{.status.phase}')
if grep -q -- '--to-store-container=etcd-bucket' <<<"$args" && grep -q -- '--to-store-prefix=team2/r"' <<<"$args" &&
    grep -q -E -- '--to-storage-provider=(S3|s3|aws)' <<<"$args"; then
    if out2=$(etcd team2 t2 team2/r S3 2>&1); then
        echo "FAIL: meanwhile team2's Etcd on its own prefix team2/r is admitted beside the copy in flight: $out2" >&2
    fi
    ctl_fail "HOLE: namespace team's EtcdRestore (target provider left to default) admitted as a Local target; the controller's copy Job writes S3 etcd-bucket team2/r, namespace team2's part of BackupBucket shared (prefixScope Namespace); Job args: $args"
fi
ok "the admitted restore does not write into team2's part (phase $phase, Job args: ${args:-none})"
ctl_stop
echo "attack4_restore_target_store: ok"
