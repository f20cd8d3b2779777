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
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
stopped=""
cont() { [ -z "$stopped" ] || kill -CONT "$stopped" 2>/dev/null; stopped=""; }
ksim_on_exit cont

rel_stage "shoot other" 10s
ctl_start
rel_written
E=$REL_E

rel_release

rel_policy Ignore
wh_stop
kill -STOP "$CTL_PID" && stopped=$CTL_PID
out=$(rel_etcd_x "$P" 2>&1) || { cont; echo "held: other/etcd-x refused with the webhook down: $out"; ctl_stop; exit 0; }
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000007-1800000000.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-1800000' | sort)
kc -n other patch etcd etcd-x --type merge -p '{"spec":{"backup":{"store":{"prefix":"other--etcd-x"}}}}' >/dev/null ||
    { cont; ctl_fail "cannot move etcd-x"; }
cont
echo "other/etcd-x created on $P at $(kc -n other get etcd etcd-x -o jsonpath='{.metadata.creationTimestamp}'), wrote $(echo $x_keys), moved to other--etcd-x"
# shellcheck disable=SC2046
wh_start $(druid_webhook_flags) ${CTL_WEBHOOK_FLAGS:-} --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
rel_policy Fail
sleep 3
echo "entry $E: overlappedAt '$(rel_entry_field "$E" '{.spec.overlappedAt}')'"
ksim_wait 40 ksim_gone backupentry "$E" ||
    echo "entry $E stays: $(rel_entry_field "$E" '{.status.phase} {.status.message}' | cut -c1-300)"
echo "entry spec at the end: overlappedAt '$(rel_entry_field "$E" '{.spec.overlappedAt}')' etcdLastAliveAt '$(rel_entry_field "$E" '{.spec.etcdLastAliveAt}')'"
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
