#!/usr/bin/env bash
# warden-controller benchmark against kube-sim (with warden-webhook registered as in the
# tests). Not a test: it prints figures, each beside the issue's target and, where it is a
# time or a rate, beside a reference measured in the same run.
#
#   bench/controller_bench.sh [BUILD_DIR]     (default build/release, built if missing)
#
# Figures:
#   - RSS of an idle controller (empty cluster, caches synced);
#   - BENCH_ETCDS (1000) Etcds with 12 components each (ServiceAccount, Role, RoleBinding,
#     client and peer Services, ConfigMap, PDB, StatefulSet, 2 member Leases, 2 snapshot
#     Leases) loaded while it runs: time until it has reconciled them all (one
#     EtcdStatusBackup each), then its RSS;
#   - a restart: initial sync of the cached objects (log "started" -> "ready"), against
#     the time curl takes to LIST the same objects (reference), and the RSS after it;
#   - BENCH_CYCLES (5) hibernate/wake cycles of one Etcd among the loaded ones: time from
#     the hibernate annotation to the client Service without its client port, and from the
#     EtcdOpsTask's Succeeded to the StatefulSet's spec.replicas 0 (both read from kube-sim
#     watch events, time-stamped as they arrive), against one API write round trip
#     (curl PATCH, TLS handshake included; reference);
#   - owner-reference repairs per second: the references of BENCH_REPAIR_ETCDS (300) Etcds'
#     components stripped (as etcd-druid, 16 PATCHes in flight: the reference rate) while
#     the controller is stopped, then repaired after its start (its "owner reference
#     repaired" log lines).
#     BENCH_REPAIR_ETCDS=0 leaves this part out.
# BENCH_CTL_FLAGS: more flags for warden-controller (-v: its debug log, each reconcile).
# BENCH_LOG_DIR: where to keep the latency cycles' watch events, the controller's log and the
#     backup-double's requests.
# BENCH_UPLOAD_MS (0): the backup-double's upload time, from the snapshot's createdOn to its
#     answer (/admin/upload; a real sidecar uploads after stamping it); 0: it answers at once.
# BENCH_PERF_DIR: record perf profiles of the whole machine (perf record -a BENCH_PERF_ARGS,
#     default -g -F 499) during
#     the restart's initial sync (sync.data) and the owner-reference repairs (repair.data);
#     read one process with perf report -i FILE --comm warden-controll (or kube-sim).
# Takes about three minutes on the 2-core development machine.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build/release}
netcds=${BENCH_ETCDS:-1000}
cycles=${BENCH_CYCLES:-5}
nrepair=${BENCH_REPAIR_ETCDS:-300}

if [ ! -x "$build/controller/warden-controller" ] || [ ! -x "$build/tests/backup-double/backup-double" ]; then
    echo "== building $build (Release)"
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
    cmake --build "$build" -j2 --target kube-sim warden-webhook warden-controller backup-double >/dev/null
fi
export KUBE_SIM=${KUBE_SIM:-$build/tests/kube-sim/kube-sim}
export WARDEN_WEBHOOK=${WARDEN_WEBHOOK:-$build/webhook/warden-webhook}
export WARDEN_CONTROLLER=${WARDEN_CONTROLLER:-$build/controller/warden-controller}
export BACKUP_DOUBLE=${BACKUP_DOUBLE:-$build/tests/backup-double/backup-double}
# Production leader-election timings: the load must not cost the Lease.
CTL_LEASE=15s CTL_RENEW=10s CTL_RETRY=2s CTL_READY_SECONDS=120
# shellcheck source=../tests/lib/controller.sh
. "$src/tests/lib/controller.sh"
command -v kubectl >/dev/null || { echo "bench: kubectl is not installed"; exit 1; }

die() { echo "bench: $*" >&2; exit 1; }
rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
now() { echo "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
target() { # figure, limit, unit: "meets" / "MISSES"
    awk -v f="$1" -v l="$2" -v u="$3" 'BEGIN { printf "(target <= %s %s: %s)", l, u, f <= l ? "meets" : "MISSES" }'
}
perf_pid=
perf_start() { # name: perf record -a into $BENCH_PERF_DIR/name.data until perf_stop
    [ -n "${BENCH_PERF_DIR:-}" ] || return 0
    mkdir -p "$BENCH_PERF_DIR"
    # shellcheck disable=SC2086
    perf record -a ${BENCH_PERF_ARGS:--g -F 499} -o "$BENCH_PERF_DIR/$1.data" >"$BENCH_PERF_DIR/$1.log" 2>&1 &
    perf_pid=$!
    sleep 1
}
perf_stop() {
    [ -n "$perf_pid" ] || return 0
    kill -INT "$perf_pid" 2>/dev/null || true
    wait "$perf_pid" || true
    perf_pid=
}
log_ms() { # file, msg: the ts of the first log line with that msg, in epoch seconds
    local ts
    ts=$(grep -m1 "\"msg\":\"$2\"" "$1" | grep -o '"ts":"[^"]*"' | cut -d'"' -f4)
    [ -n "$ts" ] || return 1
    date -u -d "$ts" +%s.%N
}

# ---- the stage: kube-sim, CRDs, webhook (registered after the bulk load), controller kubeconfig
wh_init
CTL_DIR=$WH_DIR
druid_tokens "$CTL_DIR/tokens.csv"
wh_certs
kubesim_start --token-file "$CTL_DIR/tokens.csv" --service-alias "$(wh_alias)" \
    --service-cluster-ip-range "$(druid_ip_range $((netcds > 4000 ? 18 : 20)))" --statefulset-delay 100ms \
    --max-objects $((netcds * 16 + 10000)) --watch-history $((netcds * 14 + 26000)) ||
    die "kube-sim did not start"
auth="Authorization: Bearer $KSIM_TOKEN"
druid_crds
kc create namespace etcd-warden >/dev/null
kc create namespace bench >/dev/null
sed "s/^\( *token:\).*/\1 warden-token/" "$KUBECONFIG" >"$CTL_DIR/controller.kubeconfig"
ksim_on_exit _ctl_cleanup
work=$CTL_DIR/bench
mkdir -p "$work"
echo "== warden-controller against kube-sim $KSIM_URL, $(nproc) cores, $netcds Etcds"

# ---- idle
# shellcheck disable=SC2086
ctl_start ${BENCH_CTL_FLAGS:-}
sleep 2
rss_idle=$(rss_mb "$CTL_PID")
echo "RSS idle                         $rss_idle MiB $(target "$rss_idle" 16 MiB)"

# ---- the load: Etcds, then their components, created with curl (16 in flight)
post_all() { # config file -> codes file; dies unless every answer is 201
    sed -i '$d' "$1" # the last "next"
    curl -s --no-progress-meter --parallel --parallel-max 16 --config "$1" >"$1.codes"
    [ "$(grep -vc '^201$' "$1.codes")" = 0 ] || die "creates failed: $(sort "$1.codes" | uniq -c | head)"
}
entry() { # path, json
    printf 'url = "%s%s"\nrequest = "POST"\nheader = "%s"\nheader = "Content-Type: application/json"\n' \
        "$KSIM_URL" "$1" "$auth"
    printf 'insecure\nwrite-out = "%%{http_code}\\n"\noutput = "/dev/null"\ndata = "%s"\nnext\n' \
        "${2//\"/\\\"}"
}
{
    for ((i = 1; i <= netcds; i++)); do
        n=$(printf 'etcd-%04d' "$i")
        entry /apis/druid.gardener.cloud/v1alpha1/namespaces/bench/etcds \
            "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\",\"metadata\":{\"name\":\"$n\"},\"spec\":{\"replicas\":2,\"labels\":{\"app\":\"etcd\"},\"etcd\":{},\"backup\":{\"port\":8080,\"fullSnapshotSchedule\":\"0 */24 * * *\",\"store\":{\"container\":\"bucket\",\"prefix\":\"bench--$n\",\"provider\":\"S3\"}}}}"
    done
} >"$work/etcds.cfg"
t0=$(now)
post_all "$work/etcds.cfg"
kc -n bench get etcds -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid}{"\n"}{end}' >"$work/uids"
{
    while read -r n uid; do
        lab="\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/part-of\":\"$n\"}"
        own="\"ownerReferences\":[{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\",\"name\":\"$n\",\"uid\":\"$uid\",\"controller\":true,\"blockOwnerDeletion\":true}]"
        sel="{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/part-of\":\"$n\"}"
        core=/api/v1/namespaces/bench
        entry $core/serviceaccounts "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"$n\",$lab,$own}}"
        entry /apis/rbac.authorization.k8s.io/v1/namespaces/bench/roles "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{\"name\":\"druid.gardener.cloud:etcd:$n\",$lab,$own},\"rules\":[]}"
        entry /apis/rbac.authorization.k8s.io/v1/namespaces/bench/rolebindings "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name\":\"druid.gardener.cloud:etcd:$n\",$lab,$own},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"druid.gardener.cloud:etcd:$n\"},\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"$n\",\"namespace\":\"bench\"}]}"
        entry $core/services "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"$n-client\",$lab,$own},\"spec\":{\"selector\":$sel,\"ports\":[{\"name\":\"client\",\"protocol\":\"TCP\",\"port\":2379,\"targetPort\":2379},{\"name\":\"server\",\"protocol\":\"TCP\",\"port\":2380,\"targetPort\":2380},{\"name\":\"backuprestore\",\"protocol\":\"TCP\",\"port\":8080,\"targetPort\":8080}]}}"
        entry $core/services "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"$n-peer\",$lab,$own},\"spec\":{\"clusterIP\":\"None\",\"selector\":$sel,\"ports\":[{\"name\":\"peer\",\"port\":2380}]}}"
        entry $core/configmaps "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$n-config\",$lab,$own},\"data\":{\"etcd.conf.yaml\":\"name: $n\\\\ndata-dir: /var/etcd/data/new.etcd\\\\n\"}}"
        entry /apis/policy/v1/namespaces/bench/poddisruptionbudgets "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"name\":\"$n\",$lab,$own},\"spec\":{\"minAvailable\":2,\"selector\":{\"matchLabels\":$sel}}}"
        entry /apis/apps/v1/namespaces/bench/statefulsets "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"$n\",$lab,$own},\"spec\":{\"replicas\":2,\"serviceName\":\"$n-peer\",\"selector\":{\"matchLabels\":$sel},\"template\":{\"metadata\":{\"labels\":$sel},\"spec\":{\"containers\":[{\"name\":\"etcd\",\"image\":\"etcd-wrapper\",\"volumeMounts\":[{\"name\":\"$n\",\"mountPath\":\"/var/etcd/data\"}]},{\"name\":\"backup-restore\",\"image\":\"etcdbrctl\",\"args\":[\"server\",\"--server-port=8080\"],\"volumeMounts\":[{\"name\":\"$n\",\"mountPath\":\"/var/etcd/data\"},{\"name\":\"etcd-config-file\",\"mountPath\":\"/var/etcd/config/\"}]}],\"volumes\":[{\"name\":\"etcd-config-file\",\"configMap\":{\"name\":\"$n-config\",\"items\":[{\"key\":\"etcd.conf.yaml\",\"path\":\"etcd.conf.yaml\"}]}}]}},\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"$n\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"16Gi\"}}}}]}}"
        for l in "$n-0" "$n-1" "$n-full-snap" "$n-delta-snap"; do
            entry /apis/coordination.k8s.io/v1/namespaces/bench/leases "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"$l\",$lab,$own}}"
        done
    done <"$work/uids"
} >"$work/components.cfg"
post_all "$work/components.cfg"
t1=$(now)
echo "loaded $netcds Etcds + $((netcds * 12)) components in $(secs "$t0" "$t1") s"
# shellcheck disable=SC2046
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
druid_register_webhooks
backups() { [ "$(kc -n bench get etcdstatusbackups -o name | wc -l)" -ge "$netcds" ]; }
settled() {
    backups && [ "$(ctl_metrics | awk '/^workqueue_depth\{/ { s += $2 } END { print s + 0 }')" = 0 ]
}
ksim_wait 300 settled || die "the controller did not settle: $(kc -n bench get etcdstatusbackups -o name | wc -l) status backups"
t2=$(now)
rss_loaded=$(rss_mb "$CTL_PID")
echo "first reconcile of all $netcds Etcds done $(secs "$t1" "$t2") s after the load"
echo "RSS loaded (running through the load) $rss_loaded MiB $(target "$rss_loaded" 64 MiB)"

# ---- restart: initial sync of the cached objects
ctl_stop
lists=()
for p in apis/druid.gardener.cloud/v1alpha1/etcds apis/druid.gardener.cloud/v1alpha1/etcdopstasks \
    apis/etcd-warden.io/v1alpha1/extendfullsnapshotimmutabilitytasks apis/batch/v1/cronjobs \
    apis/etcd-warden.io/v1alpha1/etcdstatusbackups api/v1/serviceaccounts api/v1/services \
    api/v1/configmaps apis/rbac.authorization.k8s.io/v1/roles \
    apis/rbac.authorization.k8s.io/v1/rolebindings apis/apps/v1/statefulsets \
    apis/policy/v1/poddisruptionbudgets apis/coordination.k8s.io/v1/leases \
    api/v1/persistentvolumeclaims; do
    lists+=("$KSIM_URL/$p" -o /dev/null)
done
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
tck=$(getconf CLK_TCK)
cpu_s() { awk -v a="$1" -v b="$2" -v t="$tck" 'BEGIN { printf "%.2f", (b - a) / t }'; }
k0=$(cpu "$KSIM_PID")
t0=$(now)
curl -sfk -H "$auth" "${lists[@]}" || die "cannot LIST"
t1=$(now)
list_ref=$(secs "$t0" "$t1")
ksim_ref_cpu=$(cpu_s "$k0" "$(cpu "$KSIM_PID")")
perf_start sync
k0=$(cpu "$KSIM_PID")
# shellcheck disable=SC2086
ctl_start ${BENCH_CTL_FLAGS:-}
# CPU seconds until /readyz answered (the sync, a little of the first reconciles)
ctl_sync_cpu=$(cpu_s 0 "$(cpu "$CTL_PID")") ksim_sync_cpu=$(cpu_s "$k0" "$(cpu "$KSIM_PID")")
# /readyz answers once the caches synced; the log line follows (after malloc_trim)
ksim_wait 120 log_ms "$CTL_LOG" "warden-controller ready" || die "no \"warden-controller ready\" logged"
perf_stop
sync=$(secs "$(log_ms "$CTL_LOG" "warden-controller started")" "$(log_ms "$CTL_LOG" "warden-controller ready")")
cached=$(ctl_metrics | awk '/^warden_controller_cache_objects/ { s += $2 } END { print s + 0 }')
echo "reference: LIST of the same 14 kinds (one curl, one connection)  $list_ref s"
echo "initial sync of $cached cached objects  $sync s  $(ratio "$sync" "$list_ref") x reference $(target "$sync" 1 s)"
echo "CPU: reference LIST kube-sim $ksim_ref_cpu s; to ready controller $ctl_sync_cpu s, kube-sim $ksim_sync_cpu s"
ksim_wait 300 settled || die "the controller did not settle after its restart"
sleep 2
rss_sync=$(rss_mb "$CTL_PID")
echo "RSS loaded (restarted, synced, settled) $rss_sync MiB $(target "$rss_sync" 64 MiB)"
c0=$(cpu "$CTL_PID") k0=$(cpu "$KSIM_PID")
sleep 5
pct() { awk -v a="$1" -v b="$2" -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (b - a) / t / 5 * 100 }'; }
echo "CPU while idle with everything cached: controller $(pct "$c0" "$(cpu "$CTL_PID")") %, kube-sim $(pct "$k0" "$(cpu "$KSIM_PID")") % of a core"

# ---- latencies on one more Etcd among them
druid_etcd bench etcd-lat
druid_double_for bench etcd-lat
druid_double_admin "upload?ms=${BENCH_UPLOAD_MS:-0}" || die "the backup-double refused the upload time"
echo "backup-double's upload time: ${BENCH_UPLOAD_MS:-0} ms"
watch_to() { # api path with query, file: time-stamped watch events
    curl -sfkN -H "$auth" "$KSIM_URL$1&watch=1&timeoutSeconds=600" |
        while IFS= read -r l; do echo "$EPOCHREALTIME $l"; done >"$2" &
    ksim_on_exit "kill $! 2>/dev/null || true"
}
watch_to "/apis/druid.gardener.cloud/v1alpha1/namespaces/bench/etcds?fieldSelector=metadata.name%3Detcd-lat" "$work/w.etcd"
watch_to "/api/v1/namespaces/bench/services?fieldSelector=metadata.name%3Detcd-lat-client" "$work/w.svc"
watch_to "/apis/druid.gardener.cloud/v1alpha1/namespaces/bench/etcdopstasks?labelSelector=etcd-warden.io%2Ffinal-snapshot-of%3Detcd-lat" "$work/w.task"
watch_to "/apis/apps/v1/namespaces/bench/statefulsets?fieldSelector=metadata.name%3Detcd-lat" "$work/w.sts"
sleep 1
: >"$work/cycles"
for ((c = 0; c < cycles; c++)); do
    now >>"$work/cycles"
    # etcd is written to while awake, so each cycle's final snapshot is a new one (an etcd
    # left unchanged since the last final snapshot has the sidecar answer that old one)
    druid_double_admin write || die "the backup-double refused a write"
    kc -n bench annotate etcd etcd-lat etcd-warden.io/hibernate=true >/dev/null
    ctl_wait_phase bench etcd-lat Hibernated 60
    kc -n bench annotate etcd etcd-lat etcd-warden.io/hibernate- >/dev/null
    ctl_wait_phase bench etcd-lat "" 60
done
now >>"$work/cycles"
sleep 0.5
if [ -n "${BENCH_LOG_DIR:-}" ]; then # the cycles' watch events, controller log, double's requests
    mkdir -p "$BENCH_LOG_DIR" && cp "$CTL_LOG" "$work"/w.* "$BENCH_LOG_DIR"/
    curl -sfk "$DRUID_DOUBLE_URL/admin/requests" >"$BENCH_LOG_DIR/double-requests" || true
fi
# Per cycle: the first event after its start matching a pattern.
first_after() { # file, start, end, pattern
    awk -v a="$2" -v b="$3" -v p="$4" '$1 >= a && $1 < b && $0 ~ p { print $1; exit }' "$1"
}
: >"$work/lat"
mapfile -t starts <"$work/cycles"
for ((c = 0; c < cycles; c++)); do
    a=${starts[c]} b=${starts[c + 1]}
    t_ann=$(first_after "$work/w.etcd" "$a" "$b" '"etcd-warden.io/hibernate":"true"')
    t_cut=$(first_after "$work/w.svc" "$a" "$b" '"type":"MODIFIED".*"ports":[[][{]"name":"backuprestore"')
    # the task of this cycle: not the last cycle's, still Succeeded while it is being deleted
    t_ok=$(awk -v a="$a" -v b="$b" '$1 >= a && $1 < b && /"state":"Succeeded"/ &&
        !/"deletionTimestamp"/ && !/"type":"DELETED"/ { print $1; exit }' "$work/w.task")
    t_scale=$(first_after "$work/w.sts" "$a" "$b" '[{,]"replicas":0[,}]') # spec first: status lags
    [ -n "$t_ann" ] && [ -n "$t_cut" ] && [ -n "$t_ok" ] && [ -n "$t_scale" ] ||
        die "cycle $c: missing events ($t_ann/$t_cut/$t_ok/$t_scale)"
    echo "$(secs "$t_ann" "$t_cut") $(secs "$t_ok" "$t_scale")" >>"$work/lat"
done
kc -n bench create configmap bench-ref >/dev/null
ref_w=$(for i in 1 2 3 4 5; do
    s=$(now)
    curl -sfk -H "$auth" -H 'Content-Type: application/merge-patch+json' -X PATCH \
        -d "{\"metadata\":{\"annotations\":{\"bench\":\"$i\"}}}" \
        "$KSIM_URL/api/v1/namespaces/bench/configmaps/bench-ref" -o /dev/null || die "reference PATCH failed"
    echo "$(secs "$s" "$(now)")"
done | sort -n | sed -n 3p)
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mx() { sort -n | tail -1; }
cut_med=$(cut -d' ' -f1 "$work/lat" | med) cut_max=$(cut -d' ' -f1 "$work/lat" | mx)
scale_med=$(cut -d' ' -f2 "$work/lat" | med) scale_max=$(cut -d' ' -f2 "$work/lat" | mx)
ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
avg_rec() { # controller: mean reconcile time in ms from the histogram
    ctl_metrics | awk -v c="controller=\"$1\"" 'index($0, "controller_runtime_reconcile_time_seconds_sum{") == 1 && index($0, c) { s = $2 }
        index($0, "controller_runtime_reconcile_time_seconds_count{") == 1 && index($0, c) { n = $2 }
        END { if (n > 0) printf "%.1f ms over %d", s / n * 1000, n; else print "n/a" }'
}
echo "mean reconcile time: etcd $(avg_rec etcd), opstask $(avg_rec opstask)"
echo "reference: one API write round trip (curl PATCH, median of 5)  $(ms "$ref_w") ms"
echo "hibernate annotation -> ports cut        median $(ms "$cut_med") ms, max $(ms "$cut_max") ms over $cycles cycles  $(ratio "$cut_med" "$ref_w") x reference $(target "$(ms "$cut_med")" 50 ms)"
echo "task Succeeded -> scale request          median $(ms "$scale_med") ms, max $(ms "$scale_max") ms  $(ratio "$scale_med" "$ref_w") x reference $(target "$(ms "$scale_med")" 50 ms)"

# ---- owner-reference repairs per second
ctl_stop
if [ "$nrepair" = 0 ]; then
    echo "owner-reference repairs: left out (BENCH_REPAIR_ETCDS=0)"
    exit 0
fi
{
    head -n "$nrepair" "$work/uids" | while read -r n _; do
        for p in "api/v1/namespaces/bench/serviceaccounts/$n" \
            "apis/rbac.authorization.k8s.io/v1/namespaces/bench/roles/druid.gardener.cloud:etcd:$n" \
            "apis/rbac.authorization.k8s.io/v1/namespaces/bench/rolebindings/druid.gardener.cloud:etcd:$n" \
            "api/v1/namespaces/bench/services/$n-client" "api/v1/namespaces/bench/services/$n-peer" \
            "api/v1/namespaces/bench/configmaps/$n-config" \
            "apis/policy/v1/namespaces/bench/poddisruptionbudgets/$n" "apis/apps/v1/namespaces/bench/statefulsets/$n" \
            "apis/coordination.k8s.io/v1/namespaces/bench/leases/$n-0" "apis/coordination.k8s.io/v1/namespaces/bench/leases/$n-1" \
            "apis/coordination.k8s.io/v1/namespaces/bench/leases/$n-full-snap" "apis/coordination.k8s.io/v1/namespaces/bench/leases/$n-delta-snap"; do
            printf 'url = "%s/%s"\nrequest = "PATCH"\nheader = "Authorization: Bearer druid-token"\n' "$KSIM_URL" "$p"
            printf 'header = "Content-Type: application/merge-patch+json"\ninsecure\nwrite-out = "%%{http_code} %%{url}\\n"\n'
            printf 'output = "/dev/null"\ndata = "{\\"metadata\\":{\\"ownerReferences\\":null}}"\nnext\n'
        done
    done
} >"$work/strip.cfg"
sed -i '$d' "$work/strip.cfg" # the last "next"
nstrip=$((nrepair * 12))
t0=$(now)
curl -s --no-progress-meter --parallel --parallel-max 16 --config "$work/strip.cfg" >"$work/strip.codes"
t1=$(now)
if [ "$(grep -c '^200 ' "$work/strip.codes")" != "$nstrip" ]; then
    bad=$(grep -v '^200 ' "$work/strip.codes" | head -1 | cut -d' ' -f2)
    die "strips failed: $(cut -d' ' -f1 "$work/strip.codes" | sort | uniq -c); $bad answers: $(curl -sk -X PATCH \
        -H "Authorization: Bearer druid-token" -H "Content-Type: application/merge-patch+json" \
        -d '{"metadata":{"ownerReferences":null}}' "$bad")"
fi
strip_rate=$(awk -v n="$nstrip" -v s="$(secs "$t0" "$t1")" 'BEGIN { printf "%.0f", n / s }')
echo "reference: stripping $nstrip owner references (PATCH, 16 in flight)  $strip_rate /s"
perf_start repair
# shellcheck disable=SC2086
ctl_start ${BENCH_CTL_FLAGS:-}
repaired() { [ "$(grep -c '"msg":"owner reference repaired"' "$CTL_LOG")" -ge "$nstrip" ]; }
ksim_wait 300 repaired || die "only $(grep -c '"msg":"owner reference repaired"' "$CTL_LOG") of $nstrip repaired"
perf_stop
[ -z "${BENCH_LOG_DIR:-}" ] || cp "$CTL_LOG" "$BENCH_LOG_DIR/controller-repairs.log"
t_ready=$(log_ms "$CTL_LOG" "warden-controller ready")
t_last=$(date -u -d "$(grep '"msg":"owner reference repaired"' "$CTL_LOG" | tail -1 | grep -o '"ts":"[^"]*"' | cut -d'"' -f4)" +%s.%N)
rep_rate=$(awk -v n="$nstrip" -v s="$(secs "$t_ready" "$t_last")" 'BEGIN { printf "%.0f", n / s }')
echo "owner-reference repairs after a start    $rep_rate /s ($nstrip in $(secs "$t_ready" "$t_last") s from ready)  $(ratio "$rep_rate" "$strip_rate") x reference"
ctl_stop
