#!/usr/bin/env bash
# An EtcdRestore's target store, when spec.target.store names no provider and there is no
# spec.etcdTemplate, is the live source Etcd's (docs/backups-and-restores.md: one rule for
# warden-webhook and warden-controller). The rule is applied twice, at admission and when the
# controller plans the copy, and the live source Etcd can change in between (the controller
# restarting, or busy: it is started only after the requests here). BackupBucket shared owns
# etcd-bucket with prefixScope Namespace. Namespace team has an Etcd src with provider Local
# and applies a restore from it with the target {container: etcd-bucket, prefix: team2/r}:
# the webhook resolves a Local target (a directory: no selector, no partition, the claim
# recorded in a Local store's Lease) and admits it. team then UPDATEs src to provider S3 in
# its own part (team/src, admitted). The controller plans the copy with the target
# resolved again: S3 etcd-bucket team2/r, namespace team2's part of the operator's bucket, which
# the same target spelled with provider S3 is refused for; and team2's own Etcd on team2/r is
# admitted beside that copy (two writers on one prefix: team2's next restore reads team's
# snapshots). Wanted: the target claimed at admission is the target the copy writes (the
# controller keeps what was admitted, or refuses a target that moved).
# Oracle: kubectl's answers and the copy Job's arguments as kube-sim stores them.
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
restore() { # name target-fields
    kc apply -f - <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $1, namespace: team}
spec:
  source:
    etcdName: src
    store: {provider: Local, container: etcd-bucket, prefix: team/src, secretRef: {name: etcd-backup}}
  target: {etcdName: $1-back, store: {container: etcd-bucket, prefix: team2/$1, secretRef: {name: etcd-backup}$2}}
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

out=$(etcd team src team/src Local 2>&1) || ctl_fail "team/src (Local) refused: $out"
if out=$(restore spelled ", provider: S3" 2>&1); then
    ctl_fail "the reference case, an S3 target in team2's part, admitted: $out"
fi
grep -q 'prefix "team2/spelled" is not namespace team'"'"'s' <<<"$out" || ctl_fail "reference refused for another reason: $out"
ok "reference: a restore target in team2's part, provider spelled, is refused"

if ! out=$(restore r "" 2>&1); then
    ok "a restore whose target is team2/r, its provider taken from a Local source Etcd, is refused: ${out:0:200}"
    echo "attack5_restore_source_moved: ok"
    exit 0
fi
ok "the restore r (target provider from the Local source Etcd) is admitted"
out=$(etcd team src team/src S3 2>&1) || ctl_fail "team moving src into its own part of the bucket refused: $out"
ok "team moved src to S3 etcd-bucket team/src (its own part)"

ctl_start
job_args() { kc -n team get job r--restore -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null || true; }
ended() { [ -n "$(job_args)" ] || kc -n team get etcdrestore r -o jsonpath='{.status.phase}' | grep -q Failed; }
ksim_wait 60 ended || true
args=$(job_args)
phase=$(kc -n team get etcdrestore r -o jsonpath='{.status.phase}')
if grep -q -- '--to-store-container=etcd-bucket' <<<"$args" && grep -q -- '--to-store-prefix=team2/r"' <<<"$args" &&
    grep -q -E -- '--to-storage-provider=(S3|s3|aws)' <<<"$args"; then
    extra=""
    if etcd team2 t2 team2/r S3 >/dev/null 2>&1; then
        extra="; and team2's own Etcd on team2/r is admitted beside the copy in flight"
    fi
    ctl_fail "HOLE: namespace team's EtcdRestore r admitted with a Local target (provider from the live source Etcd), the source Etcd then moved to S3; the controller's copy Job writes S3 etcd-bucket team2/r, namespace team2's part of BackupBucket shared (prefixScope Namespace)$extra; Job args: $args"
fi
ok "the admitted restore does not write into team2's part (phase $phase, Job args: ${args:-none})"
ctl_stop
echo "attack5_restore_source_moved: ok"
