#!/usr/bin/env bash
# spec.overlappedAt (docs/backup-entries.md, "Nothing deleted without provenance"): another
# live Etcd that claims an overlapping prefix while an entry is released ends the entry's
# deletion window at its creation "when warden-controller sees it"; an Etcd "that came and went
# while no controller watched is not recorded"; T2 is then spec.etcdLastAliveAt, with no margin
# after it. Here the controller watches throughout (same process, its
# watch never broken), but is slow for two seconds (SIGSTOP, as a starved or paused process):
# in that time namespace other's etcd-x, admitted while warden-webhook was down under
# failurePolicy Ignore, is created on the released prefix, its sidecar writes its first full
# snapshot there, and it moves to another prefix. The controller then reads both events. If it
# only looks at the Etcd as it is now, etcd-x never overlapped; the minute counts as watched,
# and the entry's Job deletes etcd-x's snapshot, written within 60 s of etcd-a's end.
# Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

P=shoot--etcd-a
ignore() { # POLICY: the failurePolicy of the Etcd webhooks
    local k
    for k in validatingwebhookconfiguration mutatingwebhookconfiguration; do
        kc patch $k etcd-warden --type json -p "[{\"op\":\"replace\",\"path\":\"/webhooks/0/failurePolicy\",\"value\":\"$1\"}]" >/dev/null ||
            ctl_fail "cannot set failurePolicy $1 on $k etcd-warden"
    done
}
entry_field() { kc get backupentry "$1" -o jsonpath="$2" 2>/dev/null; }
stopped=""
cont() { [ -z "$stopped" ] || kill -CONT "$stopped" 2>/dev/null; stopped=""; }
ksim_on_exit cont

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
ctl_s3_bucket_secret
ctl_namespace shoot other
ctl_s3_bucket 10s
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" $P
ctl_members shoot etcd-a
ctl_jobs_serve etcd-warden
ctl_start
ksim_wait 20 ctl_has_entry shoot etcd-a || ctl_fail "no entry for etcd-a"
ctl_members_seen shoot etcd-a
E=$(ctl_entry_of shoot etcd-a)
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"

kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
echo "entry $E: PendingDeletion, etcdLastAliveAt $(entry_field "$E" '{.spec.etcdLastAliveAt}')"

ignore Ignore
wh_stop
kill -STOP "$CTL_PID" && stopped=$CTL_PID
out=$(kc apply -f - 2>&1 <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-x, namespace: other}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: aws, container: $SNAP_BUCKET, prefix: "$P", secretRef: {name: etcd-backup}}}
EOF
) || { cont; echo "held: other/etcd-x refused with the webhook down: $out"; ctl_stop; exit 0; }
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000007-1800000000.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-1800000' | sort)
kc -n other patch etcd etcd-x --type merge -p '{"spec":{"backup":{"store":{"prefix":"other--etcd-x"}}}}' >/dev/null ||
    { cont; ctl_fail "cannot move etcd-x"; }
cont
echo "other/etcd-x created on $P at $(kc -n other get etcd etcd-x -o jsonpath='{.metadata.creationTimestamp}'), wrote $(echo $x_keys), moved to other--etcd-x"
# shellcheck disable=SC2046
wh_start $(druid_webhook_flags) ${CTL_WEBHOOK_FLAGS:-} --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
ignore Fail
sleep 3
echo "entry $E: overlappedAt '$(entry_field "$E" '{.spec.overlappedAt}')'"
ksim_wait 40 ksim_gone backupentry "$E" ||
    echo "entry $E stays: $(entry_field "$E" '{.status.phase} {.status.message}' | cut -c1-300)"
echo "entry spec at the end: overlappedAt '$(entry_field "$E" '{.spec.overlappedAt}')' etcdLastAliveAt '$(entry_field "$E" '{.spec.etcdLastAliveAt}')'"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(snap_s3 ls "$P/v2/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$x_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-a's entry deleted $(echo $lost), written into $P by other/etcd-x (created on the prefix after etcd-a was gone, then moved) within 60 s of etcd-a's end; the controller watched throughout but never recorded spec.overlappedAt"
    exit 1
fi
echo "held: etcd-x's snapshot stays"
echo "attack21_overlap_unseen: ok"
