#!/usr/bin/env bash
# warden-controller end to end (issue 7, test 4): kill -9 the controller at every phase of
# hibernation and wake-up, CTL_KILL_RUNS times (default 30; 200 with WARDEN_LONG_TESTS=1),
# restarting it each time. After
# every restart the flow converges; at every crash point and at the end no port of the
# client Service is lost (each is in spec.ports or remembered in the removed-ports
# annotation) and the StatefulSet was never scaled to 0 without a successful final
# snapshot in that cycle (a StatefulSet watch against the sidecar double's log). Small
# delays stretch the phases so that the kills land in them: the double answers after
# 200 ms, kube-sim delays calls on the client Service by 100 ms and StatefulSet status by
# 300 ms; some runs also make the first snapshot attempt fail.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
ctl_takeover_timings # a successor takes over from a SIGKILLed or lost leader

RUNS=${CTL_KILL_RUNS:-$([ "${WARDEN_LONG_TESTS:-0}" = 1 ] && echo 200 || echo 30)}
CTL_STS_DELAY=300ms
ETCD=/apis/druid.gardener.cloud/v1alpha1/namespaces/shoot/etcds/etcd-main
SVC=/api/v1/namespaces/shoot/services/etcd-main-client
STS=/apis/apps/v1/namespaces/shoot/statefulsets/etcd-main

phase() { ctl_get "$ETCD" | grep -o '"etcd-warden.io/hibernation-phase":"[^"]*"' | cut -d'"' -f4 || true; }
successes() { druid_double_requests | grep '"final":"true"' | grep -c '"code":200' || true; }
# Names of the client Service's ports plus those remembered in its annotation, sorted.
all_ports() {
    local svc
    svc=$(ctl_get "$SVC") || return 1
    tr -d '\\' <<<"$svc" | grep -o '"name":"[a-z]*"' | cut -d'"' -f4 | sort -u | tr '\n' ' '
}
replicas() { ctl_get "$STS" | grep -o '"replicas":[0-9]*' | head -1 | cut -d: -f2; }
spec_ports() { ctl_get "$SVC" | grep -o '"ports":\[[^]]*\]' | head -1; }
IMT=/apis/etcd-warden.io/v1alpha1/namespaces/shoot/extendfullsnapshotimmutabilitytasks/etcd-main-extend-immutability

ctl_stage
druid_etcd shoot etcd-main --bucket
druid_double_for shoot etcd-main
druid_double_admin 'delay?ms=200'
ports_before=$(spec_ports)
names_before=$(all_ports)
[ "$names_before" = "backuprestore client server " ] || ctl_fail "unexpected ports: $names_before"
curl -sfk -H "Authorization: Bearer $KSIM_TOKEN" -X POST "$KSIM_URL/kube-sim/faults" \
    -d '{"latencyMs":100,"match":"/services/etcd-main-client"}' >/dev/null ||
    ctl_fail "cannot configure kube-sim's faults"
kc -n shoot get sts etcd-main -w -o jsonpath='{.spec.replicas}{"\n"}' 2>&1 |
    while read -r r; do echo "$(date +%s%N) $r"; done >"$CTL_DIR/replicas" &
ksim_on_exit "kill $! 2>/dev/null || true"
: >"$CTL_DIR/starts"
ctl_start --leader-elect=false

hib_phases=(CuttingTraffic FinalSnapshot ScalingDown Hibernated)
rank() { # phase -> position in the cycle being run
    case "$1" in
    CuttingTraffic) echo 1 ;; FinalSnapshot | Failed) echo 2 ;; ScalingDown) echo 3 ;;
    Hibernated) echo 4 ;; WakingUp) echo 5 ;; *) echo 0 ;;
    esac
}
start=$SECONDS
kills=""
for ((run = 0; run < RUNS; run++)); do
    if ((run % 2 == 0)); then
        target=${hib_phases[(run / 2) % 4]}
        s0=$(successes)
        ((run != 2)) || druid_double_admin 'reply?code=500&count=1'
        date +%s%N >>"$CTL_DIR/starts"
        kc -n shoot annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
    else
        target=WakingUp
        kc -n shoot annotate etcd etcd-main etcd-warden.io/hibernate- >/dev/null
    fi
    # Kill as soon as the target phase (or a later one) is seen.
    deadline=$((SECONDS + 20))
    while :; do
        p=$(phase)
        if ((run % 2 == 0)); then
            [ "$(rank "$p")" -ge "$(rank "$target")" ] && [ "$(rank "$p")" -le 4 ] && break
        else
            [ "$p" = WakingUp ] || [ -z "$p" ] && break
        fi
        [ $SECONDS -lt $deadline ] || ctl_fail "run $run: phase $p, waiting for $target"
        sleep 0.01
    done
    ctl_kill9
    kills="$kills ${p:--}"
    names=$(all_ports)
    [ "$names" = "$names_before" ] || ctl_fail "run $run: killed at $p, ports lost: $names"
    if ((run % 2 == 0)) && [ "$(replicas)" = 0 ] && [ "$(successes)" -le "$s0" ]; then
        ctl_fail "run $run: scaled to 0 without a successful final snapshot"
    fi
    ctl_start --leader-elect=false
    if ((run % 2 == 0)); then
        ctl_wait_phase shoot etcd-main Hibernated 30
        [ "$(spec_ports | grep -o '"name":"[a-z]*"')" = '"name":"backuprestore"' ] ||
            ctl_fail "run $run: hibernated with ports $(spec_ports)"
        [ "$(replicas)" = 0 ] || ctl_fail "run $run: not scaled down"
        [ "$(successes)" -gt "$s0" ] || ctl_fail "run $run: hibernated without a final snapshot"
        ctl_get "$IMT" >/dev/null || ctl_fail "run $run: no immutability task"
    else
        ctl_wait_phase shoot etcd-main "" 30
        [ "$(spec_ports)" = "$ports_before" ] ||
            ctl_fail "run $run: ports not restored exactly: $(spec_ports), before: $ports_before"
        [ "$(replicas)" = 3 ] || ctl_fail "run $run: replicas not back"
        ! ctl_get "$ETCD" | grep -q suspend-etcd-spec-reconcile || ctl_fail "run $run: suspend annotation left"
    fi
done
ok "$RUNS kill -9 runs converged in $((SECONDS - start))s; killed at:$kills"
for p in CuttingTraffic FinalSnapshot ScalingDown Hibernated WakingUp; do
    grep -qw "$p" <<<"$kills" || ctl_fail "no kill landed in phase $p:$kills"
done
ok "kills landed in every phase"

# Every scale-down came after a successful final snapshot of its own cycle.
sleep 0.3
druid_double_requests | grep '"final":"true"' | grep '"code":200' |
    grep -o '"time":"[^"]*"' | cut -d'"' -f4 | while read -r t; do date -u -d "$t" +%s%N; done \
    >"$CTL_DIR/snapshots"
awk -v starts="$CTL_DIR/starts" -v snaps="$CTL_DIR/snapshots" '
    BEGIN { while ((getline l < starts) > 0) st[ns++] = l; while ((getline l < snaps) > 0) sn[nn++] = l }
    $2 == 0 && prev != 0 {
        h = 0; for (i = 0; i < ns; i++) if (st[i] <= $1) h = st[i]
        good = 0; for (i = 0; i < nn; i++) if (sn[i] >= h && sn[i] <= $1) good = 1
        if (!good) { print "scaled to 0 at " $1 " without a snapshot since " h; bad = 1 }
        downs++
    }
    { prev = $2 }
    END { if (downs < RUNS / 2) { print "only " downs " scale-downs seen"; bad = 1 } exit bad }' \
    RUNS="$RUNS" "$CTL_DIR/replicas" || ctl_fail "a scale-down without a successful final snapshot"
ok "every scale-down came after a successful final snapshot of its cycle"
expect_tasks=$(jp shoot etcdopstasks '{range .items[*]}{.status.state}{"\n"}{end}' | grep -vc '^Succeeded$\|^Failed$' || true)
[ "$expect_tasks" = 0 ] || ctl_fail "unfinished snapshot tasks left: $(kc -n shoot get etcdopstasks)"
ok "no unfinished snapshot task left"
ctl_stop
echo "PASS"
