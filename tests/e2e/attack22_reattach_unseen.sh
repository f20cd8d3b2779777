#!/usr/bin/env bash
# T2 (docs/backup-entries.md, "Nothing deleted without provenance"): what was written after the
# Etcd was last known alive stays, "and so does any cluster that came onto the prefix after it,
# whether or not warden-controller saw it (... another namespace's, one a webhook with
# failurePolicy: Ignore did not judge, one that came and went while the controller was paused
# or down)". shoot/etcd-a is deleted; its entry is released. warden-controller is stopped (an
# upgrade). Namespace other's etcd-x, admitted while warden-webhook was down under failurePolicy
# Ignore, comes onto the prefix, writes, and goes. The controller starts again; within the
# grace period etcd-a is created again and reattaches, and later is deleted again. The entry's
# deletion must keep what etcd-x wrote while the entry was released.
# Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P

rel_stage "shoot other" 30s
ctl_start
rel_written
E=$REL_E

rel_release
ctl_stop
rel_policy Ignore
wh_stop
out=$(rel_etcd_x "$P" 2>&1) || { echo "held: other/etcd-x refused with the webhook down: $out"; exit 0; }
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000007-1800000000.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-1800000' | sort)
kc -n other delete etcd etcd-x >/dev/null || ctl_fail "cannot delete etcd-x"
echo "other/etcd-x came onto \"$P\", wrote $(echo $x_keys) and went while the controller was stopped"
# shellcheck disable=SC2046
wh_start $(druid_webhook_flags) ${CTL_WEBHOOK_FLAGS:-} --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
rel_policy Fail
ctl_start
sleep 3
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" $P
ctl_members shoot etcd-a
reattached() { ctl_entry_phase_is "$E" Active; }
ksim_wait 20 reattached || echo "etcd-a not reattached: $(ctl_entry_phase "$E"); events: $(ctl_events shoot etcd-a | tail -2 | tr '\n' '|')"
sleep 3
echo "entry $E after etcd-a reattached: phase $(ctl_entry_phase "$E"), overlappedAt '$(rel_entry_field "$E" '{.spec.overlappedAt}')'"
sleep 2
rel_judge "$x_keys" "by other/etcd-x while the entry was released and the controller was stopped (etcd-a reattached afterwards)"
echo "attack22_reattach_unseen: ok"
