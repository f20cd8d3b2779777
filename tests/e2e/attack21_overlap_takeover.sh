#!/usr/bin/env bash
# spec.overlappedAt and the new leader (docs/backup-entries.md, "Nothing deleted without
# provenance"): an Etcd that came and went while no controller watched is not recorded, "so the
# 60 s count only as far as a controller that has reconciled since before
# spec.etcdLastAliveAt watched the Etcds ... Without it (warden-controller down or a new
# leader in that minute) T2 is spec.etcdLastAliveAt itself". Two replicas run: A leads, B
# stands by, both started before shoot/etcd-a is deleted. A releases the entry, then is killed
# (kill -9). Before B takes over, namespace other's etcd-x (admitted while warden-webhook was
# down under failurePolicy Ignore) is created on the released prefix, writes its first full
# snapshot and moves away. B leads and starts the deletion: it must not count the minute as
# watched. Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P

rel_stage "shoot other" 10s
ctl_takeover_timings
ctl_start
A=$CTL_PID
ctl_start
B=$CTL_PID
ksim_wait 10 ctl_is_leader "$A" || ctl_fail "replica A does not lead"
rel_written
E=$REL_E

rel_release

rel_policy Ignore
wh_stop
ctl_kill9 "$A"
out=$(rel_etcd_x "$P" 2>&1) || { echo "held: other/etcd-x refused with the webhook down: $out"; ctl_stop; exit 0; }
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000007-1800000000.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-1800000' | sort)
kc -n other patch etcd etcd-x --type merge -p '{"spec":{"backup":{"store":{"prefix":"other--etcd-x"}}}}' >/dev/null ||
    ctl_fail "cannot move etcd-x"
ctl_is_leader "$B" && echo "B already leads: the attack came too late"
echo "other/etcd-x created on \"$P\" at $(kc -n other get etcd etcd-x -o jsonpath='{.metadata.creationTimestamp}'), wrote $(echo $x_keys), moved to other--etcd-x"
# shellcheck disable=SC2046
wh_start $(druid_webhook_flags) ${CTL_WEBHOOK_FLAGS:-} --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
rel_policy Fail
ksim_wait 20 ctl_is_leader "$B" || ctl_fail "replica B never leads"
echo "B leads; entry $E: overlappedAt '$(rel_entry_field "$E" '{.spec.overlappedAt}')'"
ksim_wait 40 ksim_gone backupentry "$E" ||
    echo "entry $E stays: $(rel_entry_field "$E" '{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(snap_s3 ls "$P/v2/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop "$B"
lost=$(comm -23 <(echo "$x_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-a's entry deleted $(echo $lost), written by other/etcd-x while no replica led (A killed, B not yet leading), within 60 s of etcd-a's end: B counted the minute as watched"
    exit 1
fi
echo "held: etcd-x's snapshot stays"
echo "attack21_overlap_takeover: ok"
