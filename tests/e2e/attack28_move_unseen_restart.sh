#!/usr/bin/env bash
# docs/backup-entries.md, T2: spec.etcdLastAliveAt is "... else, when the controller replica
# that releases the entry saw the Etcd alive itself and has watched it since, the time it saw it
# gone ...; else spec.etcdSeenAt, the last time a controller saw the Etcd alive, which
# warden-controller writes when it makes the entry and refreshes every 10 minutes while the Etcd
# lives, and once more when a replica starts leading"; "So an Etcd deleted while
# warden-controller was down (an upgrade, a node drain) does not stretch the window over what a
# cluster that moved to another seed writes into the prefix meanwhile". Known gaps name a move
# away *and back* unseen; a plain move away is not listed.
# Scenario: shoot/etcd-a writes into shoot--etcd-a (members seen). warden-controller is stopped
# (an upgrade) and warden-webhook is down under failurePolicy Ignore (no etcdStoreChangedAt).
# etcd-a moves to shoot--etcd-b (its sidecar then writes there); the shoot's cluster on
# another seed writes into shoot--etcd-a. The webhook and the controller start again: the new
# leader must not refresh the old prefix's etcdSeenAt from the moved Etcd (alive, elsewhere).
# Past the grace period the old prefix's deletion must keep the other seed's object.
# Oracle: s3rver's listing of shoot--etcd-a.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
ctl_start
rel_written
E=$REL_E
echo "entry $E: $(rel_entry_field "$E" '{.spec}' | cut -c1-500)"
sleep 2
ctl_stop
rel_policy Ignore
wh_stop
kc -n shoot patch etcd etcd-a --type merge -p '{"spec":{"backup":{"store":{"prefix":"shoot--etcd-b"}}}}' >/dev/null ||
    ctl_fail "cannot move etcd-a"
echo "etcd-a moved to shoot--etcd-b (generation $(jp shoot etcd/etcd-a '{.metadata.generation}')) while the controller was down"
sleep 2
snap_s3 put "$P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-18000' | sort)
echo "the other seed wrote $(echo $x_keys)"
sleep 2
# shellcheck disable=SC2046
wh_start $(druid_webhook_flags) ${CTL_WEBHOOK_FLAGS:-} --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
rel_policy Fail
ctl_start
ksim_wait 30 ctl_entry_phase_is "$E" PendingDeletion || echo "$E: $(ctl_entry_phase "$E")"
echo "entry $E after the restart: $(rel_entry_field "$E" '{.spec}' | cut -c1-900)"
ksim_wait 90 ctl_entry_settled "$E" ||
    echo "entry $E stays: $(rel_entry_field "$E" '{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-500)"
left=$(snap_s3 ls "$P/v2/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$x_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of $E (shoot/etcd-a's earlier prefix) deleted $(echo $lost), written into \"$P\" by the cluster on another seed after etcd-a moved away while warden-controller was down"
    exit 1
fi
echo "held: the other seed's snapshots stay"
echo "attack28_move_unseen_restart: ok"
