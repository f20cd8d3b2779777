#!/usr/bin/env bash
# A claim is cluster-wide whatever --watch-namespace says: warden-webhook and warden-controller
# both run with --watch-namespace shoot. An Etcd of namespace other (not watched) claims its
# prefix from both: a CREATE in shoot on an overlapping prefix is refused at admission, and
# the deletion of a shoot entry whose prefix overlaps other's live Etcd (made before the
# CREATE rule was registered) is blocked (PrefixConflict condition, no Job). The refusal
# names nothing of namespace other. Oracle: kubectl's answers and the API server's Jobs.
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
  backup: {port: 8080, store: {provider: S3, container: etcd-bucket, prefix: "$3", secretRef: {name: etcd-backup}}}
EOF
}

CTL_WEBHOOK_FLAGS="--backup-entries --watch-namespace shoot" ctl_stage
ctl_namespace shoot other
ctl_backup_secret etcd-warden creds
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec: {provider: aws, container: etcd-bucket, secretRef: {namespace: etcd-warden, name: creds}, deletionGracePeriod: 1h}
EOF
# made before the CREATE rule: shoot/etcd-q and other/etcd-q2 overlap ("q" lists "q-2/..."),
# written while warden-webhook's Etcd rules are not registered, then registered again
kc delete validatingwebhookconfiguration etcd-warden >/dev/null
etcd shoot etcd-q q >/dev/null || ctl_fail "shoot/etcd-q not created"
etcd other etcd-q2 q-2 >/dev/null || ctl_fail "other/etcd-q2 not created"
wh_register_etcd
ctl_start --watch-namespace shoot

etcd other etcd-o p >/dev/null || ctl_fail "other/etcd-o refused"
if out=$(etcd shoot etcd-s p/x 2>&1); then ctl_fail "an overlap with an unwatched namespace's Etcd admitted: $out"; fi
grep -q 'overlaps a prefix claimed from another namespace' <<<"$out" || ctl_fail "refusal: $out"
case "$out" in *other/*|*etcd-o*) ctl_fail "the refusal names namespace other's Etcd: $out" ;; esac
ok "a CREATE in the watched namespace overlapping an unwatched namespace's Etcd is refused"

ksim_wait 20 ctl_has_entry shoot etcd-q || ctl_fail "no entry for shoot/etcd-q"
e_q=$(ctl_entry_of shoot etcd-q)
kc -n shoot delete etcd etcd-q >/dev/null
kc patch backupbucket shared --type merge -p '{"spec":{"deletionGracePeriod":"1s"}}' >/dev/null
cond() { kc get backupentry "$e_q" -o jsonpath='{.status.conditions[?(@.type=="PrefixConflict")].message}'; }
blocked() { cond | grep -q 'overlaps the prefix "q-2" of Etcd other/etcd-q2'; }
ksim_wait 30 blocked || ctl_fail "deletion of $e_q not blocked: $(cond); $(kc get backupentry "$e_q" -o jsonpath='{.status}')"
expect "no deletion Job" "" "$(kc -n etcd-warden get jobs -o name)"
ok "an entry's deletion is blocked by a live Etcd of a namespace the controller does not watch"
ctl_stop
echo "webhook_prefix_scope: ok"
