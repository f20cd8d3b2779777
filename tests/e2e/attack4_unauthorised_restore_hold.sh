#!/usr/bin/env bash
# An EtcdRestore's source holds back every deletion of a prefix it overlaps, whoever applies
# it: namespace evil, which BackupBucket shared's namespaceSelector does not select and which
# has no credentials for the bucket (its Secret holds nothing usable), applies a restore whose
# spec.source.store is shoot's prefix in the operator's bucket. It is admitted (a source is no
# claim: neither the selector nor the partition is read) and while its copy Job is pending
# (it fails only at its deadline, and evil applies the next one) shoot's deleted Etcd's
# backups are never deleted: "postponed: it overlaps the source prefix ... of EtcdRestore
# evil/r". A namespace the owner has not authorised decides over the operator's deletions.
# Wanted: a restore source in a bucket whose owner does not select the namespace (or outside
# the namespace's part under prefixScope Namespace) refused at admission, or not counted.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

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
  prefixScope: Namespace
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: shared}}
EOF
wh_register_backups
ctl_start
ctl_store_etcd shoot etcd-main S3 etcd-bucket shoot/etcd-main
entry() { kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name} {.spec.etcd.namespace}/{.spec.etcd.name}{"\n"}{end}' | awk '$2 == "shoot/etcd-main" { print $1 }'; }
has_entry() { [ -n "$(entry)" ]; }
ksim_wait 20 has_entry || ctl_fail "no entry for shoot/etcd-main"
e=$(entry)
ok "entry $e for shoot/etcd-main"

if ! out=$(kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: evil}
spec:
  source: {store: {provider: S3, container: etcd-bucket, prefix: shoot/etcd-main, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: grab, store: {provider: S3, container: evil-bucket, prefix: evil/grab, secretRef: {name: etcd-backup}}}
EOF
); then
    ok "evil's restore from the operator's bucket is refused: ${out:0:200}"
    ctl_stop
    echo "attack4_unauthorised_restore_hold: ok"
    exit 0
fi
copying() { kc -n evil get job r--restore >/dev/null 2>&1; }
ksim_wait 20 copying || ok "(evil's restore did not reach its copy: $(kc -n evil get etcdrestore r -o jsonpath='{.status}'))"
kc -n shoot delete etcd etcd-main >/dev/null
kc patch backupbucket shared --type merge -p '{"spec":{"deletionGracePeriod":"1s"}}' >/dev/null
cond() { kc get backupentry "$e" -o jsonpath='{.status.conditions[?(@.type=="PrefixConflict")].message}'; }
decided() { [ -n "$(cond)" ] || kc -n etcd-warden get jobs -o name | grep -q -- '--delete'; }
ksim_wait 30 decided || ctl_fail "the entry's deletion neither started nor blocked: $(kc get backupentry "$e" -o jsonpath='{.status}')"
if cond | grep -q 'EtcdRestore evil/r'; then
    ctl_fail "HOLE: namespace evil (not selected by BackupBucket shared, prefix outside its part) holds back the deletion of shoot's backups with one EtcdRestore whose source is shoot/etcd-main: $(cond)"
fi
ok "evil's restore does not decide the deletion: $(cond) $(kc -n etcd-warden get jobs -o name)"
ctl_stop
echo "attack4_unauthorised_restore_hold: ok"
