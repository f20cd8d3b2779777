#!/usr/bin/env bash
# An UPDATE of an admitted EtcdRestore that moves its target into another store without
# touching spec.target.store is never judged: warden-webhook compares only spec.target.store's
# fields (same_destination), but when the target names no provider it takes the template's
# (spec.etcdTemplate.backup.store.provider). Namespace team (selected by the bucket,
# prefixScope Namespace) applies a restore whose template's store is Local, target
# {container: etcd-bucket, prefix: team2/c}: a Local directory, not the bucket, so admitted
# (the claim recorded in a Local store's Lease). It then patches the template's provider to
# S3: admitted without a check. warden-controller (not running until then: down, or behind on
# its queue) plans from the spec as it is: the copy Job writes S3 etcd-bucket team2/c, namespace
# team2's part of the operator's bucket, which the same target spelled with provider S3 is
# refused for at admission, and team2's own Etcd on team2/c is admitted while that copy is in
# flight. Wanted: the UPDATE judged (any change of what the target resolves to), or the
# controller refusing a target other than the admitted one. Oracle: the Job's arguments.
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

out=$(kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: c, namespace: team}
spec:
  source: {store: {provider: S3, container: team-bucket, prefix: team/src, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080, store: {provider: Local, container: elsewhere, prefix: x}}
  target: {etcdName: restored, store: {container: etcd-bucket, prefix: team2/c, secretRef: {name: etcd-backup}}}
EOF
) || ctl_fail "the restore with a Local template refused: $out"
ok "a restore whose target takes the template's provider, Local, is admitted"
if ! out=$(kc -n team patch etcdrestore c --type merge \
    -p '{"spec":{"etcdTemplate":{"backup":{"store":{"provider":"S3"}}}}}' 2>&1); then
    ok "the UPDATE moving the restore's target into the bucket is judged: ${out:0:200}"
    echo "attack4_restore_template_update: ok"
    exit 0
fi
ctl_start
job_args() { kc -n team get job c--restore -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
ended() { [ -n "$(job_args)" ] || kc -n team get etcdrestore c -o jsonpath='{.status.phase}' | grep -q Failed; }
ksim_wait 60 ended || true
args=$(job_args)
if grep -q -- '--to-store-container=etcd-bucket' <<<"$args" && grep -q -- '--to-store-prefix=team2/c"' <<<"$args" &&
    grep -q -E -- '--to-storage-provider=(S3|s3|aws)' <<<"$args"; then
    if out2=$(etcd team2 t2 team2/c S3 2>&1); then
        echo "FAIL: meanwhile team2's Etcd on its own prefix team2/c is admitted beside the copy in flight: $out2" >&2
    fi
    ctl_fail "HOLE: an UPDATE of the admitted EtcdRestore's spec.etcdTemplate provider (Local to S3) is admitted unchecked (the webhook compares spec.target.store only) and the copy Job writes S3 etcd-bucket team2/c, namespace team2's part of BackupBucket shared (prefixScope Namespace); Job args: $args"
fi
ok "the updated restore does not write into team2's part (phase $(kc -n team get etcdrestore c -o jsonpath='{.status.phase}'), Job args: ${args:-none})"
ctl_stop
echo "attack4_restore_template_update: ok"
