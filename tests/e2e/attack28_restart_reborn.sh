#!/usr/bin/env bash
# docs/backup-entries.md, T2: "else spec.etcdSeenAt, the last time a controller saw the Etcd
# alive, which warden-controller writes when it makes the entry and refreshes every 10 minutes
# while the Etcd lives, and once more when a replica starts leading ... So an Etcd deleted while
# warden-controller was down (an upgrade, a node drain) does not stretch the window over what a
# cluster that moved to another seed writes into the prefix meanwhile"; at a reattachment the
# window is appended to spec.earlierWindows "for an Etcd of another uid whose going it did not
# see, ending when it was last known alive".
# Scenario: shoot/etcd-a writes (members seen). warden-controller is stopped (an upgrade);
# warden-webhook is down under failurePolicy Ignore (so no etcdDeleteAdmittedAt). etcd-a is
# deleted; the cluster on another seed writes into the prefix; shoot creates etcd-a again (a new
# uid) on the same prefix. The webhook and then the controller start again: at its start as
# leader it must not refresh the old uid's etcdSeenAt from the new Etcd of the same name, and
# the reattachment's earlier window must end at the old uid's last sighting. etcd-a is deleted
# for good; past the grace period the other seed's object must stay.
# Oracle: s3rver's listing of the prefix.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
ctl_start
rel_written
E=$REL_E
echo "entry $E: $(rel_entry_field "$E" '{.spec}' | cut -c1-600)"
sleep 2
ctl_stop
rel_policy Ignore
wh_stop
kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
sleep 2
snap_s3 put "$P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-18000' | sort)
echo "etcd-a deleted while the controller was down; the other seed wrote $(echo $x_keys)"
sleep 2
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" "$P"
echo "etcd-a created again (uid $(jp shoot etcd/etcd-a '{.metadata.uid}'))"
# shellcheck disable=SC2046
wh_start $(druid_webhook_flags) ${CTL_WEBHOOK_FLAGS:-} --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
rel_policy Fail
sleep 2
ctl_start
ctl_members shoot etcd-a
reattached() { ctl_entry_phase_is "$E" Active && [ "$(rel_entry_field "$E" '{.spec.etcd.uid}')" = "$(jp shoot etcd/etcd-a '{.metadata.uid}')" ]; }
ksim_wait 30 reattached || echo "etcd-a not reattached: $(ctl_entry_phase "$E"); events: $(ctl_events shoot etcd-a | tail -2 | tr '\n' '|')"
sleep 3
echo "entry $E after the restart: $(rel_entry_field "$E" '{.spec}' | cut -c1-900)"
rel_judge "$x_keys" "by the cluster on another seed after etcd-a was deleted while warden-controller was down (etcd-a created again before it started)"
echo "attack28_restart_reborn: ok"
