#!/usr/bin/env bash
# A playground in one command: the demo's stage (tests/lib/stage.sh: kube-sim,
# warden-webhook and warden-controller with the chart's flags, s3rver as the backup bucket)
# with two example Etcds, shoot/etcd-main and shoot/etcd-events, their components as
# etcd-druid creates them and a backup sidecar stand-in (backup-double) for each, whose
# snapshots are written to the bucket as the sidecar would (stage_snapshot_writer), a
# BackupBucket for the bucket, and the Jobs warden-controller makes run as the kubelet would
# (tests/support/job_exec.py). It prints both programs' metrics and health addresses, the
# KUBECONFIG to export and a few kubectl commands to try, then stays up until Ctrl-C
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
    stage_snapshot_writer "$DRUID_DOUBLE_URL" "shoot--$e"
done

echo "== the bucket's BackupBucket, and the Jobs run as the kubelet would"
# docs/backup-entries.md's BackupBucket, on the playground's bucket and Secret
kc -n "$CHART_NS" create secret generic etcd-bucket --from-file="$SNAP_WORK/aws" >/dev/null
kc label namespace shoot etcd-warden.io/backups=eu-west-1 >/dev/null
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: eu-west-1}
spec:
  provider: aws
  container: $SNAP_BUCKET
  secretRef: {namespace: $CHART_NS, name: etcd-bucket}
  deletionGracePeriod: 168h
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: eu-west-1}}
EOF
# kube-sim runs no pods: the copy, restore and deletion Jobs run here (tests/support/job_exec.py)
ctl_jobs_serve shoot 31536000
ctl_jobs_serve "$CHART_NS" 31536000

cat <<EOF

The playground is up: kube-sim at $KSIM_URL, s3rver (bucket $SNAP_BUCKET at $SNAP_S3_URL),
  warden-webhook     metrics http://127.0.0.1:$WH_METRICS_PORT/metrics   health http://127.0.0.1:$WH_HEALTH_PORT/readyz   logs $WH_LOG
  warden-controller  metrics http://127.0.0.1:$CTL_METRICS_PORT/metrics   health http://127.0.0.1:$CTL_HEALTH_PORT/readyz   logs $CTL_LOG
Jobs run as the kubelet would (log: $SNAP_WORK/job_exec.log); each Etcd's sidecar stand-in
writes the snapshots it takes to its prefix. In another terminal:

    export KUBECONFIG=$KUBECONFIG

    kubectl get etcd -A
    kubectl -n shoot get statefulsets,services,etcdstatusbackups
    kubectl -n shoot scale statefulset etcd-main --replicas=5     # refused: etcd-druid's objects
    kubectl -n shoot annotate etcd etcd-events etcd-warden.io/hibernate=true
    kubectl -n shoot get etcd etcd-events -w \\
        -o jsonpath='{.metadata.annotations.etcd-warden\.io/hibernation-phase}{"\n"}'
    kubectl -n shoot get etcdopstasks,extendfullsnapshotimmutabilitytasks,cronjobs
    AWS_APPLICATION_CREDENTIALS=$SNAP_WORK/aws $WARDEN_SNAPSHOT list \\
        --storage-provider S3 --store-container $SNAP_BUCKET --store-prefix shoot--etcd-events
    kubectl get backupbuckets,backupentries
    kubectl -n shoot apply -f - <<'END'      # docs/backups-and-restores.md, on this bucket
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: etcd-main-before-upgrade}
spec:
  etcdName: etcd-main
  destination: {provider: aws, container: $SNAP_BUCKET, prefix: offsite--etcd-main, secretRef: {name: etcd-backup}}
END
    kubectl -n shoot get etcdbackups

kubectl acts as the cluster admin; warden-webhook lets etcd-druid's service account through
(kubectl --token=druid-token ...). Ctrl-C here, or tests/playground.sh down, stops everything.
EOF

trap 'echo; echo "== stopping"; exit 0' INT TERM
sleep infinity &
ksim_on_exit "kill $! 2>/dev/null || true"
wait $!
