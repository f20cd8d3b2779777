#!/usr/bin/env bash
# Claims are cluster-wide whatever watchNamespace says (docs/backup-entries.md): an Etcd of a
# namespace the chart does not watch, created on the prefix of a live Etcd of the watched
# namespace, must be refused at admission, or both sidecars write into one prefix and the
# next restore of either takes the other's snapshots. The Etcd and backups webhooks are
# registered with the namespaceSelector the chart renders for watchNamespace=shoot
# (tests/lib/chart.sh); warden-webhook runs with --watch-namespace shoot, as the chart starts
# it. Oracle: kubectl's answers.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/chart.sh"

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

chart_tool
render=$(mktemp -d)/r.yaml
chart_render "$render" --set watchNamespace=shoot || ctl_fail "chart render failed"
sel() { # the namespaceSelector the chart renders for webhook $1
    "$CHARTTOOL" get "$render" ValidatingWebhookConfiguration etcd-warden webhooks |
        python3 -c 'import json,sys; print(json.dumps([w["namespaceSelector"] for w in json.load(sys.stdin) if w["name"] == sys.argv[1]][0]))' "$1"
}
etcd_sel=$(sel etcd.webhooks.etcd-warden.io)
backups_sel=$(sel backups.webhooks.etcd-warden.io)

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups --watch-namespace shoot" ctl_stage
ctl_namespace shoot other
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot register the webhooks"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: etcd-warden-chart}
webhooks:
$(wh_webhook etcd.webhooks.etcd-warden.io /webhooks/etcd)
  namespaceSelector: $etcd_sel
  rules:
  - {apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [etcds], scope: Namespaced}
$(wh_webhook backups.webhooks.etcd-warden.io /webhooks/backups)
  namespaceSelector: $backups_sel
  rules:
  - {apiGroups: [etcd-warden.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [etcdbackups, etcdbackupschedules, etcdrestores], scope: Namespaced}
EOF

etcd shoot etcd-main shoot--etcd-main >/dev/null || ctl_fail "shoot/etcd-main refused"
if out=$(etcd other etcd-main shoot--etcd-main 2>&1); then
    ctl_fail "an Etcd of namespace other on the prefix of shoot/etcd-main admitted: $out"
fi
grep -q 'overlaps a prefix claimed from another namespace' <<<"$out" || ctl_fail "refusal: $out"
ok "an unwatched namespace's Etcd on a watched Etcd's prefix is refused"

etcd other etcd-o other--etcd >/dev/null || ctl_fail "other/etcd-o refused"
if out=$(kc -n other patch etcd etcd-o --type merge \
    -p '{"spec":{"backup":{"store":{"prefix":"shoot--etcd-main-x"}}}}' 2>&1); then
    ctl_fail "an unwatched namespace's Etcd moved onto an overlapping prefix: $out"
fi
ok "an unwatched namespace's Etcd moved onto an overlapping prefix is refused"

if out=$(kc -n other apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b}
spec:
  etcdName: etcd-o
  destination: {provider: S3, container: etcd-bucket, prefix: ".", secretRef: {name: etcd-backup}}
EOF
); then
    ctl_fail "an EtcdBackup of an unwatched namespace into the whole container admitted: $out"
fi
ok "an unwatched namespace's EtcdBackup into the whole container is refused"
# the Etcd webhook now sees every namespace: an unwatched namespace's ordinary changes pass
kc -n other annotate etcd etcd-o a=b >/dev/null || ctl_fail "annotating other/etcd-o refused"
kc -n other patch etcd etcd-o --type merge -p '{"spec":{"replicas":3}}' >/dev/null ||
    ctl_fail "scaling other/etcd-o refused"
kc -n other delete etcd etcd-o >/dev/null || ctl_fail "deleting other/etcd-o refused"
ok "an unwatched namespace's Etcd UPDATEs and DELETE are admitted"
echo "attack29_watchns_claims: ok"
