#!/usr/bin/env bash
# warden-controller end to end (issue 7, test 3): the final snapshot fails (backup-double
# answers 500): the StatefulSet is never scaled down, the phase becomes Failed with a
# Warning event after --snapshot-retries attempts, the retries go on, and once the sidecar
# answers again the flow finishes by itself (scale-down only after a successful snapshot).
# A dead sidecar (nothing answers) is told at once (condition and Warning events), and the
# break-glass annotation lets it hibernate without waiting out the task's timeouts.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
ns_of() { date -u -d "$1" +%s%N; }

ctl_stage
druid_etcd shoot etcd-main
druid_double_for shoot etcd-main
druid_double_admin 'reply?code=500&count=0'
ctl_start --snapshot-retries 2
ports_before=$(jp shoot svc/etcd-main-client '{.spec.ports}')

ctl_watch_phases shoot etcd-main "$CTL_DIR/phases"
# Every spec.replicas the StatefulSet takes, with the time it was seen.
kc -n shoot get sts etcd-main -w -o jsonpath='{.spec.replicas}{"\n"}' 2>&1 |
    while read -r r; do echo "$(date +%s%N) $r"; done >"$CTL_DIR/replicas" &
ksim_on_exit "kill $! 2>/dev/null || true"
ksim_wait 30 test -s "$CTL_DIR/replicas" || ctl_fail "kubectl get -w on sts/etcd-main showed nothing"

kc -n shoot annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
ctl_wait_phase shoot etcd-main Failed 40
ctl_await_phases "$CTL_DIR/phases" "- CuttingTraffic FinalSnapshot Failed"
expect "phases up to Failed" "- CuttingTraffic FinalSnapshot Failed" "$(ctl_phases "$CTL_DIR/phases")"
failed=$(druid_double_requests | grep '"final":"true"' | grep -c '"code":500')
[ "$failed" -ge 2 ] || ctl_fail "want 2 failed attempts before Failed, the sidecar saw $failed"
ok "$failed failed final snapshots before phase Failed"
nfailed=$(jp shoot etcdopstasks '{range .items[*]}{.status.state}{"\n"}{end}' | grep -c '^Failed$' || true)
[ "$nfailed" -ge 2 ] || ctl_fail "want 2 Failed tasks, got: $(kc -n shoot get etcdopstasks)"
ok "$nfailed tasks Failed"
ctl_events shoot etcd-main | grep -q '^Warning FinalSnapshotFailed' ||
    ctl_fail "no Warning FinalSnapshotFailed event: $(ctl_events shoot etcd-main)"
ok "Warning event FinalSnapshotFailed"
expect "still 3 replicas" "3" "$(jp shoot sts/etcd-main '{.spec.replicas}')"
expect "traffic cut meanwhile" "backuprestore" "$(jp shoot svc/etcd-main-client '{.spec.ports[*].name}')"

# Still failing: the retries go on, nothing is scaled.
sleep 3
expect "still Failed" "Failed" "$(ctl_phase shoot etcd-main)"

# The sidecar recovers: the flow goes on by itself.
druid_double_admin 'reply?code=200'
ctl_wait_phase shoot etcd-main Hibernated 50
ctl_await_phases "$CTL_DIR/phases" "- CuttingTraffic FinalSnapshot Failed ScalingDown Hibernated"
expect "phases after recovery" "- CuttingTraffic FinalSnapshot Failed ScalingDown Hibernated" \
    "$(ctl_phases "$CTL_DIR/phases")"
ok_line=$(druid_double_requests | grep '"final":"true"' | grep '"code":200' | head -1)
[ -n "$ok_line" ] || ctl_fail "no successful final snapshot at the sidecar"
ok_ns=$(ns_of "$(grep -o '"time":"[^"]*"' <<<"$ok_line" | cut -d'"' -f4)")
zero_ns=$(awk '$2 == 0 { print $1; exit }' "$CTL_DIR/replicas")
[ -n "$zero_ns" ] || ctl_fail "the StatefulSet was never seen at 0: $(cat "$CTL_DIR/replicas")"
[ "$zero_ns" -gt "$ok_ns" ] || ctl_fail "scaled to 0 at $zero_ns before the first successful snapshot at $ok_ns"
ok "scaled to 0 only after the first successful final snapshot"
awk '$2 != 3 && $2 != 0 { bad = 1 } END { exit bad }' "$CTL_DIR/replicas" ||
    ctl_fail "unexpected replicas: $(cat "$CTL_DIR/replicas")"
expect "scaled to 0" "0 0" "$(jp shoot sts/etcd-main '{.spec.replicas} {.status.replicas}')"
expect "one task Succeeded" "1" \
    "$(jp shoot etcdopstasks '{range .items[*]}{.status.state}{"\n"}{end}' | grep -c '^Succeeded$')"

# And it wakes up whole.
kc -n shoot annotate etcd etcd-main etcd-warden.io/hibernate- >/dev/null
ctl_wait_phase shoot etcd-main "" 30
expect "ports restored" "$ports_before" "$(jp shoot svc/etcd-main-client '{.spec.ports}')"
expect "replicas back" "3" "$(jp shoot sts/etcd-main '{.spec.replicas}')"
# ---- a dead sidecar (nothing answers on the client Service): the task stays InProgress, its
# calls fail until its timeout (15 min). The first failed call is told at once: a condition on
# the Etcd and Warning events with the sidecar's reason; and break glass is honoured from then on.
druid_etcd shoot etcd-dead
kc -n shoot annotate etcd etcd-dead etcd-warden.io/hibernate=true >/dev/null
cond() { jp shoot etcd/etcd-dead '{.metadata.annotations.etcd-warden\.io/hibernation-condition}'; }
has_cond() { [ -n "$(cond)" ]; }
ksim_wait 20 has_cond || ctl_fail "no hibernation-condition after a failed sidecar call: $(kc -n shoot get etcd etcd-dead -o yaml)"
c=$(cond)
expect "dead sidecar: condition type" "FinalSnapshotFailing True ERR_EXECUTE_HTTP_REQUEST" \
    "$(jq -r '"\(.type) \(.status) \(.reason)"' <<<"$c")"
grep -q "could not reach the backup sidecar" <<<"$c" || ctl_fail "no reason in the condition: $c"
grep -qF 'etcd-warden.io/allow-scale-down-without-snapshot=\"<RFC 3339 expiry, at most 24h ahead> <reason>\"' <<<"$c" ||
    ctl_fail "the condition does not say how to break glass: $c"
ok "dead sidecar: the condition names the sidecar's failure and the way out"
expect "dead sidecar: still FinalSnapshot" "FinalSnapshot" "$(ctl_phase shoot etcd-dead)"
expect "dead sidecar: the task is InProgress" "InProgress" \
    "$(jp shoot etcdopstask/etcd-dead-final-snapshot-1 '{.status.state}')"
ev_seen() { ctl_events shoot "$1" | grep -q "^Warning $2: "; }
ksim_wait 10 ev_seen etcd-dead FinalSnapshotFailing ||
    ctl_fail "no Warning FinalSnapshotFailing on the Etcd: $(ctl_events shoot etcd-dead)"
ksim_wait 10 ev_seen etcd-dead-final-snapshot-1 SnapshotCallFailed ||
    ctl_fail "no Warning SnapshotCallFailed on the task: $(ctl_events shoot etcd-dead-final-snapshot-1)"
ok "dead sidecar: Warning events on the Etcd and on the task"
expect "dead sidecar: still 3 replicas" "3" "$(jp shoot sts/etcd-dead '{.spec.replicas}')"
kc -n shoot annotate etcd etcd-dead \
    "etcd-warden.io/allow-scale-down-without-snapshot=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ) sidecar gone, backups known broken" >/dev/null
ctl_wait_phase shoot etcd-dead Hibernated 20
expect "dead sidecar: scaled to 0 with break glass" "0" "$(jp shoot sts/etcd-dead '{.spec.replicas}')"
expect "dead sidecar: the condition is gone" "" "$(cond)"
ctl_stop
echo "PASS"
