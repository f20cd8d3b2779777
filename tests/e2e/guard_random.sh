#!/usr/bin/env bash
# The scale-down guard under seeded random sequences: kube-sim with warden-webhook registered
# as the chart registers it, warden-controller (hibernating, executing the snapshot tasks),
# the druid actor (etcd-druid's spec reconcile and pre-sync snapshot) and a backup-double per
# Etcd. tests/support/guard_random.py draws, from each seed alone, operations of every kind -
# patches (JSON, merge, strategic, server-side apply) and `kubectl scale` of the StatefulSets
# and the Etcds, Gardener's spec.replicas with gardener.cloud/operation, the hibernate,
# break-glass, protection, restoring, managed-by and part-of toggles, DELETEs, sidecar
# failures and stalls, controller kills and restarts, clients writing (through the client
# Service, and on established connections the cut does not stop), state annotations forged
# or removed by a non-controller, etcd-druid waking an Etcd while warden-controller is down,
# signal swaps - as a person, etcd-druid and warden-controller, in a namespace of its own,
# and checks after every one, from watches of what kube-sim holds and what the backup-doubles
# recorded: (a) no StatefulSet of an Etcd with a backup store went to 0 replicas (or was
# deleted with its pods) while a write acknowledged before it was missing from the store
# (each write's revision against each snapshot's last revision, never etcd-warden's
# annotations), break glass aside (and its Warning event); (b) no component's managed-by or
# part-of label was changed by a non-reconciler; (c) nothing a non-reconciler may not delete
# was deleted. Safety properties only: they hold at every instant, whatever the controller is
# doing; every wait is bounded.
#
#   GUARD_SEED=N        replay one seed
#   GUARD_SEEDS="1 2"   these seeds (default: a fixed list, so the run always tries the same:
#                       1 to 5; 1 to 20 with WARDEN_LONG_TESTS=1)
#   GUARD_OPS=N         operations per seed (default 205: 1025 in all; 60 per seed in a
#                       sanitizer build; 500 with WARDEN_LONG_TESTS=1)
#   GUARD_SHRINK_SECONDS  time to shorten a failing sequence (default 90)
#   GUARD_MIN_JUDGED=N  fail a seed that judged fewer scale-downs to 0 of an Etcd with a backup
#                       store (default: one per 100 operations, at least 1): a run that judges
#                       nothing proves nothing. About one draw in twenty is a whole sleep/wake
#                       cycle (tests/support/guard_random.py, gen_cycle), so that there are some.
# On a violation: the seed, the sequence up to it and a shortened one that still fails. At the
# end: "judged N scale-downs to 0, M with writes since the last snapshot".
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
ctl_takeover_timings # a successor takes over from a SIGKILLed or lost leader
command -v jq >/dev/null || ksim_fail "jq is not installed"

long=${WARDEN_LONG_TESTS:-0}
SEEDS=${GUARD_SEEDS:-$([ "$long" = 1 ] && seq -s ' ' 1 20 || echo 1 2 3 4 5)}
[ -z "${GUARD_SEED:-}" ] || SEEDS=$GUARD_SEED
sanitized=0
if [ -n "${ASAN_OPTIONS:-}${WARDEN_SANITIZED:-}" ] || grep -qa __asan_init "$(_wh_binary)" 2>/dev/null; then
    sanitized=1
fi
OPS=${GUARD_OPS:-$([ "$long" = 1 ] && echo 500 || { [ "$sanitized" = 1 ] && echo 60 || echo 205; })}
DRUID_ACTOR_PERIOD=${DRUID_ACTOR_PERIOD:-0.5}
MIN_JUDGED=${GUARD_MIN_JUDGED:-$((OPS / 100 > 0 ? OPS / 100 : 1))}

ctl_stage
CTL_FLAGS=(--leader-elect=false --ops-task-call-timeout 3s --snapshot-retries 2)
ctl_start "${CTL_FLAGS[@]}"
echo "seeds: $SEEDS; $OPS operations each (sanitizer build: $sanitized)"

declare -A doubles=()
# The doubles and the druid actor run on in the background: their output goes to a log of
# their own, never to the reply file the driver reads (a write of theirs there, a "cat" of a
# stopping actor say, would become the answer to a later request).
setup() { # NS: two Etcds with their components, a double each, the druid actor
    local ns=$1 e urls="" log=$CTL_DIR/background-$1.log
    for e in etcd-a etcd-b; do
        druid_etcd "$ns" "$e"
        druid_double_for "$ns" "$e" >>"$log" 2>&1
        doubles[$ns/$e]=$DRUID_DOUBLE_PID
        urls="$urls $DRUID_DOUBLE_URL"
    done
    DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-$ns.log druid_actor_start "$ns" >>"$log" 2>&1
    echo "ok$urls"
}
teardown() {
    local ns=$1 e
    druid_actor_stop
    for e in etcd-a etcd-b; do
        druid_double_stop "${doubles[$ns/$e]}" || true
        unset "doubles[$ns/$e]"
    done
    echo ok
}
recreate() { # NS ETCD: etcd-druid creates what is missing of the Etcd's components
    local uid
    uid=$(kc -n "$1" get etcd "$2" -o jsonpath='{.metadata.uid}')
    druid_components "$1" "$2" "$uid" 3 | kc_druid -n "$1" create -f - >/dev/null 2>&1 || true
    echo ok
}
controller() { # kill9|stop, then start again; down: stop; up: start
    case $1 in
    kill9) ctl_kill9 ;;
    stop | down) ctl_stop ;;
    esac
    [ "$1" = down ] || ctl_start "${CTL_FLAGS[@]}"
    echo ok
}

start=$SECONDS
coproc DRIVER { python3 "$(dirname "$0")/../support/guard_random.py" --seeds "$SEEDS" --ops "$OPS" \
    --shrink-seconds "${GUARD_SHRINK_SECONDS:-90}" --min-judged "$MIN_JUDGED"; }
result=""
while IFS= read -r -u "${DRIVER[0]}" line; do
    set -- $line
    case $1 in
    setup | teardown | recreate) "$1" "$2" ${3:+"$3"} >"$CTL_DIR/reply" 2>&1 ;;
    ctl) controller "$2" >"$CTL_DIR/reply" 2>&1 ;;
    done) result=$2; break ;;
    *) ctl_fail "the driver asked for: $line" ;;
    esac
    tail -1 "$CTL_DIR/reply" >&"${DRIVER[1]}"
done
wait "$DRIVER_PID" || true
[ "$result" = pass ] || ctl_fail "guard_random: a violation, too few scale-downs judged (above), or the driver stopped"
ctl_stop
echo "ok: $((SECONDS - start))s"
echo PASS
