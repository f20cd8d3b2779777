#!/usr/bin/env bash
# A playground in one command: the demo's stage (tests/lib/stage.sh: kube-sim,
# warden-webhook and warden-controller with the chart's flags, s3rver as the backup bucket)
# with two example Etcds, shoot/etcd-main and shoot/etcd-events, their components as
# etcd-druid creates them and a backup sidecar stand-in (backup-double) for each. It prints
# the KUBECONFIG to export and a few kubectl commands to try, then stays up until Ctrl-C
# (or `tests/playground.sh down` from another terminal) and stops everything it started.
# On a fresh Debian 12 machine (as root) it first installs what is missing and builds
# (build/demo), as tests/demo.sh does; with WARDEN_BINARY_DIR set it uses that build.
#
#   tests/playground.sh          bring it up (stays in the foreground)
#   tests/playground.sh down     stop the playground running on this machine
#
# PLAYGROUND_STATE (default build/playground) holds its pid file while it runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
state=${PLAYGROUND_STATE:-$root/build/playground}
pidfile=$state/pid

usage() {
    echo "usage: tests/playground.sh [up | down | --help]"
}

# The pid of the running playground, or nothing.
running() {
    local pid
    pid=$(cat "$pidfile" 2>/dev/null) || return 0
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
}

# SIGTERM the running playground and wait (60 s at most) until it has stopped everything.
down() {
    local pid deadline=$((SECONDS + 60))
    pid=$(running)
    if [ -z "$pid" ]; then
        echo "no playground is running"
        return 0
    fi
    kill -TERM "$pid"
    while kill -0 "$pid" 2>/dev/null; do
        if [ $SECONDS -ge $deadline ]; then
            echo "the playground (pid $pid) did not stop within 60s" >&2
            return 1
        fi
        sleep 0.2
    done
    echo "playground stopped"
}

case ${1:-up} in
up) ;;
down) down; exit ;;
-h | --help) usage; exit 0 ;;
*) echo "tests/playground.sh: unknown command \"$1\"" >&2; usage >&2; exit 2 ;;
esac
if [ -n "$(running)" ]; then
    echo "a playground is already running (pid $(running)): tests/playground.sh down" >&2
    exit 1
fi

# shellcheck source=lib/stage-build.sh
. tests/lib/stage-build.sh
stage_build
# shellcheck source=lib/stage.sh
. tests/lib/stage.sh

echo "== starting kube-sim, warden-webhook, warden-controller, s3rver"
stage_kubesim
stage_apply_chart
stage_programs
mkdir -p "$state"
echo $$ >"$pidfile"
ksim_on_exit "rm -f '$pidfile'"

echo "== two example Etcds, their components and backup sidecars"
for e in etcd-main etcd-events; do
    druid_etcd shoot "$e" --bucket --schedule "0 */6 * * *"
done
kc -n shoot create secret generic etcd-backup --from-file="$SNAP_WORK/aws" >/dev/null
for e in etcd-main etcd-events; do
    druid_double_for shoot "$e"
done

cat <<EOF

The playground is up: kube-sim at $KSIM_URL, warden-webhook (logs: $WH_LOG),
warden-controller (logs: $CTL_LOG), s3rver (bucket $SNAP_BUCKET at $SNAP_S3_URL).
In another terminal:

    export KUBECONFIG=$KUBECONFIG

    kubectl get etcd -A
    kubectl -n shoot get statefulsets,services,etcdstatusbackups
    kubectl -n shoot scale statefulset etcd-main --replicas=1     # refused: etcd-druid's objects
    kubectl -n shoot annotate etcd etcd-events etcd-warden.io/hibernate=true
    kubectl -n shoot get etcd etcd-events -w \\
        -o jsonpath='{.metadata.annotations.etcd-warden\.io/hibernation-phase}{"\n"}'
    kubectl -n shoot get etcdopstasks,extendfullsnapshotimmutabilitytasks,cronjobs
    AWS_APPLICATION_CREDENTIALS=$SNAP_WORK/aws $WARDEN_SNAPSHOT list \\
        --storage-provider S3 --store-container $SNAP_BUCKET --store-prefix shoot--etcd-events

kubectl acts as the cluster admin; warden-webhook lets etcd-druid's service account through
(kubectl --token=druid-token ...). Ctrl-C here, or tests/playground.sh down, stops everything.
EOF

trap 'echo; echo "== stopping"; exit 0' INT TERM
sleep infinity &
ksim_on_exit "kill $! 2>/dev/null || true"
wait $!
