#!/usr/bin/env bash
# spec.overlappedAt (docs/backup-entries.md, "Nothing deleted without provenance") for an Etcd
# whose prefix is the released entry's spelled another way: "/shoot--etcd-a/" of provider S3,
# which the sidecar writes at "shoot--etcd-a/v2/..." as the entry's "shoot--etcd-a" of aws
# ("/pl/x is written at pl/x/... on S3"; aws and S3 one provider). shoot/etcd-a is deleted;
# namespace other's etcd-x, admitted while warden-webhook was down under failurePolicy Ignore,
# is created on the respelled prefix, writes its first full snapshot, stays there while the
# controller watches, then moves away. The entry's deletion must keep what etcd-x wrote.
# Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
XP=/shoot--etcd-a/

rel_stage "shoot other" 10s
ctl_start
rel_written
E=$REL_E

rel_release

rel_policy Ignore
wh_stop
out=$(kc apply -f - 2>&1 <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-x, namespace: other}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: $SNAP_BUCKET, prefix: "$XP", secretRef: {name: etcd-backup}}}
EOF
) || { echo "held: other/etcd-x refused with the webhook down: $out"; ctl_stop; exit 0; }
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000007-1800000000.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-1800000' | sort)
sleep 3 # the controller watches etcd-x on the prefix
echo "entry $E while etcd-x is on \"$XP\": phase $(ctl_entry_phase "$E"), overlappedAt '$(rel_entry_field "$E" '{.spec.overlappedAt}')'"
kc -n other patch etcd etcd-x --type merge -p '{"spec":{"backup":{"store":{"prefix":"other--etcd-x"}}}}' >/dev/null ||
    ctl_fail "cannot move etcd-x"
echo "other/etcd-x created on \"$XP\" at $(kc -n other get etcd etcd-x -o jsonpath='{.metadata.creationTimestamp}'), wrote $(echo $x_keys), moved to other--etcd-x"
# shellcheck disable=SC2046
wh_start $(druid_webhook_flags) ${CTL_WEBHOOK_FLAGS:-} --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
rel_policy Fail
ksim_wait 40 ksim_gone backupentry "$E" ||
    echo "entry $E stays: $(rel_entry_field "$E" '{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(snap_s3 ls "$P/v2/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$x_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-a's entry deleted $(echo $lost), written by other/etcd-x on \"$XP\" (the same prefix respelled) within 60 s of etcd-a's end"
    exit 1
fi
echo "held: etcd-x's snapshot stays"
echo "attack21_overlap_respelled: ok"
