#!/usr/bin/env bash
# With prefixScope: Namespace "whether a claim is refused tells [a namespace] nothing about
# other namespaces' prefixes": the partition is checked first, before any other claim is read
# (docs/backup-entries.md). A restore's source is checked at admission too: refused outside the
# namespace's part, and refused when a Deleting BackupEntry overlaps it ("which is being
# deleted"). Namespace evil (selected by BackupBucket shared) probes restore sources in team2's
# part with server-side dry runs (nothing stored): team2's secret prefix (Gardener's carry the
# shoot's uid) whose entry is Deleting (its Etcd deleted, the grace period over, the Job
# running), a live one of team2's Etcds, and prefixes nobody has. Wanted: the answers are the
# same for all of them but for the prefix quoted, so probing tells evil nothing. Oracle:
# kubectl's answers (messages compared with the probed prefix blanked).
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

SECRET=team2--7f3q
probe() { # source prefix: the dry run's answer, the prefix blanked
    local out
    out=$(kc apply --dry-run=server -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: probe, namespace: evil}
spec:
  source: {store: {provider: aws, container: etcd-bucket, prefix: "$1", secretRef: {name: etcd-backup}}}
  etcdTemplate: {replicas: 1, labels: {app: etcd-statefulset}, etcd: {clientPort: 2379, serverPort: 2380}, backup: {port: 8080}}
  target: {etcdName: probe, store: {provider: aws, container: etcd-bucket, prefix: evil/probe, secretRef: {name: etcd-backup}}}
EOF
    ) || true
    echo "${out//$1/<P>}"
}
bucket() { # grace
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket shared"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec:
  provider: aws
  container: etcd-bucket
  secretRef: {namespace: etcd-warden, name: creds}
  deletionGracePeriod: "$1"
  prefixScope: Namespace
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: shared}}
EOF
}

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace team2 evil
for n in team2 evil; do kc label namespace $n etcd-warden.io/backups=shared >/dev/null; done
ctl_backup_secret etcd-warden creds
bucket 1h
wh_register_backups
ctl_start
ctl_store_etcd team2 etcd-main S3 etcd-bucket "$SECRET/etcd-main"
ctl_store_etcd team2 etcd-events S3 etcd-bucket "$SECRET/etcd-events"
ksim_wait 20 ctl_has_entry team2 etcd-main || ctl_fail "no entry for team2/etcd-main"
e=$(ctl_entry_of team2 etcd-main)
kc -n team2 delete etcd etcd-main >/dev/null
bucket 2s
deleting() { [ "$(kc get backupentry "$e" -o jsonpath='{.status.phase}')" = Deleting ]; }
ksim_wait 30 deleting || ctl_fail "$e not Deleting: $(kc get backupentry "$e" -o jsonpath='{.status}')"
ok "team2's entry $e of $SECRET/etcd-main is Deleting (its Job left running); $SECRET/etcd-events is live"

ref=$(probe team2--0000/etcd-main)
grep -q 'denied' <<<"$ref" || ctl_fail "the reference probe (nothing there) was not refused: $ref"
ok "reference: a source in team2's part where nothing is: ${ref:0:200}"
leaks=()
for p in "$SECRET/etcd-main" "$SECRET/etcd-events" "team2/etcd-main"; do
    a=$(probe "$p")
    if [ "$a" != "$ref" ]; then
        leaks+=("$p: $a")
    fi
done
if [ ${#leaks[@]} -gt 0 ]; then
    ctl_fail "HOLE: namespace evil's dry-run restores from team2's part are answered differently from a prefix where nothing is (reference: $ref) | $(printf '%s | ' "${leaks[@]}")"
fi
ok "every probe of team2's part gets the same answer"
ctl_stop
echo "attack5_scope_source_probe: ok"
