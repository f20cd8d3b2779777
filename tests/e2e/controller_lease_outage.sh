#!/usr/bin/env bash
# warden-controller end to end: a lost Lease leaves no zombie leader. Two replicas; the
# leader's final-snapshot call is held at the sidecar (backup-double) when the Lease API
# fails (kube-sim answers 500 to every request on the election's Leases). The leader must
# stop: cancel the call, never take the Lease again, and exit non-zero soon after the renew
# deadline (3 s here; the wait allows 30 s, the held call would keep it for ever). Once the API is back the standby takes over and,
# when the sidecar answers, finishes the hibernation.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
ctl_takeover_timings # a successor takes over from a SIGKILLed or lost leader
holder() { jp etcd-warden lease/warden-controller-leader-election '{.spec.holderIdentity}'; }
identity() { grep -o '"identity":"[^"]*"' "$1" | head -1 | cut -d'"' -f4; }
faults() { curl -sfk -H "Authorization: Bearer $KSIM_TOKEN" -X POST "$KSIM_URL/kube-sim/faults" -d "$1" >/dev/null; }
held() { [ "$(curl -sf "$DRUID_DOUBLE_URL/admin/held")" -ge "$1" ]; }

ctl_stage
druid_etcd shoot etcd-main
druid_double_for shoot etcd-main
druid_double_admin hold
ctl_start
a=$CTL_PID a_log=$CTL_LOG
ksim_wait 10 ctl_is_leader "$a" || ctl_fail "the first replica did not become leader"
ctl_start
b=$CTL_PID b_log=$CTL_LOG
b_id=$(identity "$b_log")

kc -n shoot annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
ksim_wait 20 held 1 || ctl_fail "the final snapshot never reached the sidecar"
ok "the leader's final-snapshot call is held at the sidecar"

# The Lease API fails: the leader cannot renew.
start=$(date +%s%N)
faults '{"errorRate": 1, "match": "/namespaces/etcd-warden/leases"}' || ctl_fail "cannot inject the fault"
deadline=$((SECONDS + 30))
while [ $SECONDS -lt $deadline ]; do
    kill -0 "$a" 2>/dev/null || break
    sleep 0.05
done
took=$((($(date +%s%N) - start) / 1000000))
status=0
reap_child "$a" 1 none || status=$?
_ctl_forget "$a"
[ "$REAP_KILLED" = 0 ] || ctl_fail "the old leader was still running 30 s into the Lease outage"
echo "the old leader exited with status $status $took ms after the Lease API failed"
[ "$status" -ne 0 ] || ctl_fail "the old leader exited 0 after losing the Lease"
grep -q 'leader election lost' "$a_log" || ctl_fail "the old leader did not log the loss"
expect "the old leader acquired the Lease once" 1 "$(grep -c 'successfully acquired lease' "$a_log")"
ok "the old leader stopped, cancelled its call and exited"

faults '{"reset": true}' || ctl_fail "cannot clear the fault"
ksim_wait 15 ctl_is_leader "$b" || ctl_fail "the standby did not take over"
expect "the Lease is held by the standby" "$b_id" "$(holder)"
ksim_wait 20 held 2 || ctl_fail "the new leader did not call the sidecar"
druid_double_admin release
ctl_wait_phase shoot etcd-main Hibernated 40
expect "the task Succeeded" "Succeeded" "$(jp shoot etcdopstasks '{.items[*].status.state}')"
expect "scaled to 0" "0" "$(jp shoot sts/etcd-main '{.spec.replicas}')"
ok "the standby took over and finished the hibernation"
ctl_stop "$b"
echo "PASS"
