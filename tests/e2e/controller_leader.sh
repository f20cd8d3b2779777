#!/usr/bin/env bash
# warden-controller end to end (issue 7, test 7): two replicas with leader election on a
# Lease (4 s lease here). Only the leader reconciles; kill -9 the leader in the middle of a
# hibernation (backup-double holds the final snapshot's answer until the kill, so the call
# is in flight) and the standby takes over within the lease duration and finishes the flow. A graceful stop releases the Lease, so a
# new replica leads at once.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
ctl_takeover_timings # a successor takes over from a SIGKILLed or lost leader
holder() { jp etcd-warden lease/warden-controller-leader-election '{.spec.holderIdentity}'; }
identity() { grep -o '"identity":"[^"]*"' "$1" | head -1 | cut -d'"' -f4; }
reconciles() { # pid: sum of controller_runtime_reconcile_total
    ctl_metrics "$1" | awk '/^controller_runtime_reconcile_total\{/ { s += $2 } END { print s + 0 }'
}

ctl_stage
druid_etcd shoot etcd-main
druid_double_for shoot etcd-main
druid_double_admin hold
held() { [ "$(curl -sf "$DRUID_DOUBLE_URL/admin/held")" -ge "$1" ]; }

ctl_start
a=$CTL_PID a_log=$CTL_LOG
ksim_wait 10 ctl_is_leader "$a" || ctl_fail "the first replica did not become leader"
ctl_start
b=$CTL_PID b_log=$CTL_LOG
a_id=$(identity "$a_log") b_id=$(identity "$b_log")
[ -n "$a_id" ] && [ "$a_id" != "$b_id" ] || ctl_fail "identities: '$a_id' '$b_id'"
expect "the Lease is held by the first replica" "$a_id" "$(holder)"
ctl_is_leader "$b" && ctl_fail "two leaders"
ok "the second replica is ready and standing by"

ctl_watch_phases shoot etcd-main "$CTL_DIR/phases"
kc -n shoot annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
ctl_wait_phase shoot etcd-main FinalSnapshot 20
ksim_wait 10 held 1 || ctl_fail "no snapshot request reached the sidecar"
expect "the standby reconciled nothing" 0 "$(reconciles "$b")"
[ "$(reconciles "$a")" -gt 0 ] || ctl_fail "the leader reconciled nothing"
grep -q 'hibernation phase' "$b_log" && ctl_fail "the standby acted: $(grep 'hibernation phase' "$b_log")"
ok "only the leader acts"

# kill -9 the leader while the final snapshot is in flight
killed_at=$(date +%s%N)
ctl_kill9 "$a"
# A standby that never took over fails here; how soon after the 4 s lease is the scheduler's.
ksim_wait 30 ctl_is_leader "$b" || ctl_fail "the standby did not take over within 30 s (lease 4 s)"
ok "the standby took over in $((($(date +%s%N) - killed_at) / 1000000)) ms"
expect "the Lease is held by the second replica" "$b_id" "$(holder)"
expect "still waiting for the final snapshot" FinalSnapshot "$(ctl_phase shoot etcd-main)"
druid_double_admin release
ctl_wait_phase shoot etcd-main Hibernated 40
ctl_await_phases "$CTL_DIR/phases" "- CuttingTraffic FinalSnapshot ScalingDown Hibernated"
expect "the flow finished by the new leader" "- CuttingTraffic FinalSnapshot ScalingDown Hibernated" \
    "$(ctl_phases "$CTL_DIR/phases")"
expect "scaled to 0" "0" "$(jp shoot sts/etcd-main '{.spec.replicas}')"
[ "$(druid_double_requests | grep '"final":"true"' | grep -c '"code":200')" -ge 1 ] ||
    ctl_fail "no successful final snapshot"
grep -q 'hibernated' "$b_log" || ctl_fail "the second replica did not log the end of the flow"
ok "a successful final snapshot before the scale-down, finished by the second replica"

# a graceful stop releases the Lease: a new replica leads without waiting for it to expire
ctl_stop "$b"
expect "the Lease released on SIGTERM" "" "$(holder)"
start=$(date +%s%N)
ctl_start
ksim_wait 10 ctl_is_leader "$CTL_PID" || ctl_fail "the new replica did not lead"
ok "a new replica leads $((($(date +%s%N) - start) / 1000000)) ms after its start"
kc -n shoot annotate etcd etcd-main etcd-warden.io/hibernate- >/dev/null
ctl_wait_phase shoot etcd-main "" 30
expect "woken up by the new leader" "3" "$(jp shoot sts/etcd-main '{.spec.replicas}')"
ctl_stop
echo "PASS"
