#!/usr/bin/env bash
# spec.overlappedAt (docs/backup-entries.md, "Nothing deleted without provenance"): "Another
# live Etcd whose prefix overlaps the released entry's, created before T2 ... ends the window at
# its creation ... What both wrote while they overlapped stays, even after the other Etcd moves
# to another prefix or is deleted." Here the two overlap while shoot/etcd-a still lives, with
# warden-controller running and watching: namespace other's etcd-x, admitted while
# warden-webhook was down under failurePolicy Ignore, is created on etcd-a's prefix, writes its
# first full snapshot, stays there while the controller watches (the entries are flagged
# PrefixConflict), then moves away. Only then is etcd-a deleted. The entry's deletion must keep
# what etcd-x wrote. Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P

rel_stage "shoot other" 10s
ctl_start
rel_written
E=$REL_E

rel_policy Ignore
wh_stop
out=$(rel_etcd_x "$P" 2>&1) || { echo "held: other/etcd-x refused with the webhook down: $out"; ctl_stop; exit 0; }
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000007-1800000000.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-1800000' | sort)
sleep 4 # the controller watches etcd-x on the prefix, etcd-a alive
echo "entry $E while etcd-x is on \"$P\" (etcd-a alive): phase $(ctl_entry_phase "$E"), conditions '$(rel_entry_field "$E" '{.status.conditions[*].reason}')', overlappedAt '$(rel_entry_field "$E" '{.spec.overlappedAt}')'"
kc -n other patch etcd etcd-x --type merge -p '{"spec":{"backup":{"store":{"prefix":"other--etcd-x"}}}}' >/dev/null ||
    ctl_fail "cannot move etcd-x"
echo "other/etcd-x created on \"$P\" at $(kc -n other get etcd etcd-x -o jsonpath='{.metadata.creationTimestamp}'), wrote $(echo $x_keys), moved to other--etcd-x"
# shellcheck disable=SC2046
wh_start $(druid_webhook_flags) ${CTL_WEBHOOK_FLAGS:-} --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
rel_policy Fail
sleep 2
kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
echo "entry $E: PendingDeletion, etcdLastAliveAt $(rel_entry_field "$E" '{.spec.etcdLastAliveAt}'), overlappedAt '$(rel_entry_field "$E" '{.spec.overlappedAt}')'"
ksim_wait 40 ksim_gone backupentry "$E" ||
    echo "entry $E stays: $(rel_entry_field "$E" '{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(snap_s3 ls "$P/v2/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$x_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-a's entry deleted $(echo $lost), written by other/etcd-x on \"$P\" while both lived (etcd-x moved away before etcd-a's end)"
    exit 1
fi
echo "held: etcd-x's snapshot stays"
echo "attack22_overlap_while_alive: ok"
