# The stage of the demo (tests/demo.sh) and the playground (tests/playground.sh): kube-sim,
# the chart's rendered manifests, warden-webhook and warden-controller run locally with the
# flags of their rendered Deployments, each as its own service account (kube-sim runs no
# pods), and s3rver as the backup bucket. Source this file once the binaries are built
# (stage-build.sh); it sources snapshot.sh, controller.sh and chart.sh, and owns the EXIT
# trap: everything started is stopped at exit.
#
#   . tests/lib/stage-build.sh && stage_build
#   . tests/lib/stage.sh
#   stage_kubesim        # kube-sim with the identities; the chart rendered in STAGE_RENDERED
#   kc create namespace etcd-warden && kc apply -f "$STAGE_RENDERED"   # (or stage_apply_chart)
#   stage_programs       # warden-webhook, warden-controller and s3rver, each ready
#
# Variables: STAGE_IDS (tokens.csv and one kubeconfig per program), STAGE_RENDERED (the
# rendered chart), STAGE_WH_ARGS and STAGE_CTL_ARGS (arrays: the flags of the rendered
# Deployments), WH_PID, CTL_PID, SNAP_S3_URL, WH_METRICS_PORT (warden-webhook's /metrics;
# CTL_METRICS_PORT and CTL_HEALTH_PORT are warden-controller's) and the variables of the sourced libraries
# (KUBECONFIG, KSIM_URL, ...). The Etcds' store is the bucket SNAP_BUCKET (etcd-bucket),
# the one tests/lib/druid.sh gives its Etcds.

_stage_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

SNAP_BUCKET=${SNAP_BUCKET:-etcd-bucket}
# shellcheck source=snapshot.sh
. "$_stage_root/tests/lib/snapshot.sh"
# shellcheck source=controller.sh
. "$_stage_root/tests/lib/controller.sh"
# shellcheck source=chart.sh
. "$_stage_root/tests/lib/chart.sh"
# kubesim.sh owns the EXIT trap; the emulator's cleanups run from it
_stage_snap_cleanup() {
    local i
    for ((i = ${#_snap_cleanups[@]} - 1; i >= 0; i--)); do eval "${_snap_cleanups[i]}" || true; done
    _snap_cleanups=()
}
trap _ksim_run_cleanups EXIT
ksim_on_exit _stage_snap_cleanup

# kube-sim with the identities of etcd-druid, warden-webhook and warden-controller, a
# loopback Service range (backup-double answers on the clusterIPs) and the webhook's Service
# alias; the chart rendered as 'helm template etcd-warden charts/etcd-warden -n etcd-warden
# --set crds.etcd=true --set crds.etcdOpsTask=true' would (no etcd-druid here: its CRDs come
# from the chart) into STAGE_RENDERED. Extra arguments go to kube-sim.
stage_kubesim() {
    wh_init
    CTL_DIR=$WH_DIR
    STAGE_IDS=$WH_DIR/ids
    mkdir -p "$STAGE_IDS"
    druid_tokens "$STAGE_IDS/tokens.csv"
    echo "webhook-token,system:serviceaccount:$CHART_NS:warden-webhook,u-webhook,\"system:serviceaccounts\"" \
        >>"$STAGE_IDS/tokens.csv"
    kubesim_start --token-file "$STAGE_IDS/tokens.csv" --service-alias "$(wh_alias)" \
        --service-cluster-ip-range "$(druid_ip_range)" --statefulset-delay 100ms "$@" ||
        ctl_fail "kube-sim did not start"
    # their pods' namespace, as the kubelet's service account mount would say: the claim Leases
    # (common/pclaim) are written there, by both, where the chart's Roles allow them
    sed -e "s/^\( *token:\).*/\1 webhook-token/" -e "s/^\( *namespace:\).*/\1 $CHART_NS/" \
        "$KUBECONFIG" >"$STAGE_IDS/warden-webhook.kubeconfig"
    sed -e "s/^\( *token:\).*/\1 warden-token/" -e "s/^\( *namespace:\).*/\1 $CHART_NS/" \
        "$KUBECONFIG" >"$STAGE_IDS/warden-controller.kubeconfig"
    chart_tool
    STAGE_RENDERED=$WH_DIR/etcd-warden.yaml
    chart_render "$STAGE_RENDERED" --set crds.etcd=true --set crds.etcdOpsTask=true
}

# The namespace etcd-warden and the rendered chart, applied without a word.
stage_apply_chart() {
    kc create namespace "$CHART_NS" >/dev/null || ctl_fail "cannot create namespace $CHART_NS"
    kc apply -f "$STAGE_RENDERED" >/dev/null || ctl_fail "the rendered chart was not accepted"
}

# Once the chart is applied: its CRDs served, warden-webhook ready with its caBundle
# patched in, warden-controller ready (both with their Deployment's flags; only the listen
# addresses and the kubeconfig are changed), s3rver serving SNAP_BUCKET.
stage_programs() {
    local a ctl_local=()
    ksim_wait 20 kc get etcds,etcdopstasks,etcdstatusbackups,extendfullsnapshotimmutabilitytasks -A ||
        ctl_fail "the CRDs are not served"
    WH_METRICS_PORT=$(wh_free_port)
    while [ "$WH_METRICS_PORT" = "$WH_PORT" ] || [ "$WH_METRICS_PORT" = "$WH_HEALTH_PORT" ]; do
        WH_METRICS_PORT=$(wh_free_port)
    done
    chart_start_webhook "$STAGE_RENDERED" "$STAGE_IDS" "$WH_PORT" "$WH_HEALTH_PORT" "$WH_LOG" \
        --metrics-bind-address "127.0.0.1:$WH_METRICS_PORT"
    WH_PID=$CHART_WH_PID
    WH_METRICS_ADDR=127.0.0.1:$WH_METRICS_PORT
    ksim_on_exit _wh_cleanup
    ksim_wait 30 curl -sf "http://127.0.0.1:$WH_HEALTH_PORT/readyz" ||
        ctl_fail "warden-webhook not ready"
    ksim_wait 20 sh -c "kubectl --kubeconfig '$KUBECONFIG' get validatingwebhookconfiguration etcd-warden -o jsonpath='{.webhooks[*].clientConfig.caBundle}' | grep -q ." ||
        ctl_fail "warden-webhook did not patch its caBundle"
    mapfile -t STAGE_WH_ARGS < <("$CHARTTOOL" args "$STAGE_RENDERED" warden-webhook)
    mapfile -t STAGE_CTL_ARGS < <("$CHARTTOOL" args "$STAGE_RENDERED" warden-controller)
    cp "$STAGE_IDS/warden-controller.kubeconfig" "$CTL_DIR/controller.kubeconfig"
    ksim_on_exit _ctl_cleanup
    for a in "${STAGE_CTL_ARGS[@]}"; do # ctl_start chooses the listen addresses itself
        case $a in --metrics-bind-address=* | --health-probe-bind-address=*) ;; *) ctl_local+=("$a") ;; esac
    done
    ctl_start "${ctl_local[@]}"
    snap_s3_start
}

# stage_snapshot_writer DOUBLE_URL PREFIX: what the real sidecar does with the snapshots it
# takes, for backup-double (which only answers): every snapshot its /snapshot/latest names is
# written, once, as a verifiable stand-in (tests/support/snap_fixture.py, 64 KiB) to
# PREFIX/v2/<name> in SNAP_BUCKET, looked for every 0.2 s, until the stage stops. The real
# sidecar answers a snapshot request after its upload, so a copy Job made on that answer finds
# the object: the double's upload gate holds each answer until the writer has put the object
# and says so (/admin/upload?gate=true, /admin/uploaded).
stage_snapshot_writer() {
    local url=$1 prefix=$2 stop=$SNAP_WORK/writer.stop
    curl -sfk -X POST "$url/admin/upload?gate=true" >/dev/null ||
        ksim_fail "backup-double at $url: cannot set its upload gate"
    (
        seen=" "
        while [ ! -e "$stop" ]; do
            names=$(curl -sfk "$url/snapshot/latest" 2>/dev/null |
                jq -r '[.fullSnapshot // empty] + (.deltaSnapshots // []) | .[].snapName' 2>/dev/null || true)
            for n in $names; do
                case $seen in *" $n "*) continue ;; esac
                f=$SNAP_WORK/writer.$BASHPID
                if python3 "$_stage_root/tests/support/snap_fixture.py" "$f" 65536 "$n" &&
                    snap_s3 put "$prefix/v2/$n" "$f" 2>/dev/null &&
                    curl -sfk -X POST "$url/admin/uploaded?name=$n" >/dev/null; then
                    seen="$seen$n "
                fi
                rm -f "$f"
            done
            sleep 0.2
        done
    ) &
    ksim_on_exit "touch '$stop'; reap_child $! 10 TERM || true"
}
