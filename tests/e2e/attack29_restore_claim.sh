#!/usr/bin/env bash
# Copies claim before anything is written: an EtcdRestore's target is written (the copy Job)
# before its Etcd exists. Its target is held in flight here by a source EtcdBackup that does not
# exist yet (the controller waits a minute for one applied with the restore). Meanwhile:
#   - an Etcd of another name onto an overlapping prefix is refused at kubectl apply
#     ("of EtcdRestore shoot/back, whose copy is in flight"), as is an EtcdBackup's destination;
#   - a restore whose target store cannot be told (no provider anywhere) is refused;
#   - once the restore is deleted the claim ends: the Etcd is admitted (bounded wait).
# Before: the target counted only once its Etcd existed, so both were admitted.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

etcd() { # ns name prefix
    kc apply -f - <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: aws, container: etcd-bucket, prefix: "$3", secretRef: {name: etcd-backup}}}
EOF
}
restore() { # name target-store-fields
    kc apply -f - <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $1, namespace: shoot}
spec:
  source: {backupName: later, etcdName: gone}
  target: {etcdName: etcd-back, store: {container: etcd-bucket, prefix: shoot--back$2}}
EOF
}

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot other
wh_register_backups
ctl_start

if out=$(restore vague "" 2>&1); then
    ctl_fail "a restore whose target store cannot be told admitted: $out"
fi
grep -q 'no provider, and none to take' <<<"$out" || ctl_fail "refused for another reason: $out"
ok "a restore target whose store cannot be told is refused at admission"

out=$(restore back ", provider: aws, secretRef: {name: etcd-backup}" 2>&1) ||
    ctl_fail "the restore refused: $out"
if out=$(etcd shoot squat shoot--back/x 2>&1); then
    ctl_fail "an Etcd admitted onto the target of a restore in flight: $out"
fi
grep -q 'of EtcdRestore shoot/back, whose copy is in flight' <<<"$out" ||
    ctl_fail "refused for another reason: $out"
ok "an Etcd onto the in-flight restore's target is refused"
if out=$(etcd other squat shoot--b 2>&1); then
    ctl_fail "another namespace's Etcd admitted onto a prefix containing the target: $out"
fi
grep -q 'a prefix claimed from another namespace' <<<"$out" || ctl_fail "refused for another reason: $out"
ok "another namespace's Etcd too, without naming the restore"
if out=$(kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: grab, namespace: other}
spec:
  etcdName: nothing
  destination: {provider: aws, container: etcd-bucket, prefix: shoot--back-copy, secretRef: {name: etcd-backup}}
EOF
); then
    ctl_fail "an EtcdBackup destination admitted onto the in-flight restore's target: $out"
fi
grep -q 'a prefix claimed from another namespace' <<<"$out" || ctl_fail "EtcdBackup refused for another reason: $out"
ok "an EtcdBackup destination overlapping it is refused"

kc -n shoot delete etcdrestore back >/dev/null
ksim_wait 60 etcd shoot squat shoot--back/x >/dev/null ||
    ctl_fail "the restore's claim outlived it"
ok "once the restore is deleted its claim ends"
ctl_stop
echo "attack29_restore_claim: ok"
