# warden-controller in end-to-end scripts, the demo and the benches: the whole stage
# (kube-sim with a loopback Service range, warden-webhook registered as the chart
# registers it, the CRDs) and the controller itself, run as its service account. Source
# this file (it sources druid.sh, webhook.sh and kubesim.sh):
#
#   . "$(dirname "$0")/../lib/controller.sh"
#   ctl_stage [kube-sim flags]      # kube-sim + CRDs + warden-webhook + configurations
#   druid_etcd shoot etcd-main      # an Etcd and its components (druid.sh)
#   druid_double_for shoot etcd-main
#   ctl_start [warden-controller flags]   # start one, wait for /readyz; sets CTL_PID
#   ctl_kill9 [PID]                 # SIGKILL (no cleanup; the Lease stays held)
#   ctl_stop [PID]                  # SIGTERM: must exit 0 with no sanitizer report
#   ctl_metrics [PID]               # its /metrics text
#   ctl_phase NS NAME               # the etcd-warden.io/hibernation-phase annotation
#   ctl_fail "message"              # FAIL, the tails of the controller and webhook logs, exit 1
#
# ctl_stage starts kube-sim with --statefulset-delay CTL_STS_DELAY (100ms), the token
# file of druid_tokens and --service-cluster-ip-range CTL_IP_RANGE (a random loopback
# /24 by default: backup-double listens on the client Services' clusterIPs). The
# controller runs with a kubeconfig for the token of
# system:serviceaccount:etcd-warden:warden-controller (a trusted reconciler of the
# webhook), --leader-election-namespace etcd-warden, the production leader-election
# timings (CTL_LEASE, CTL_RENEW, CTL_RETRY: 15s, 10s, 1s: a controller starved of CPU for a
# second on a loaded machine keeps its Lease, and a graceful stop releases it, so a restart
# takes over at once; a script whose controllers take over from a SIGKILLed leader or run a
# standby calls ctl_takeover_timings: 4s, 3s, 300ms), its probes on a free port and
# metrics on another. Each started controller's output
# goes to $CTL_DIR/controller-<n>.log (CTL_LOG is the last one); at exit every
# controller still running is stopped and any sanitizer report in any log fails the
# script.
#
# The warden-controller binary is $WARDEN_CONTROLLER (set by CTest), else found under
# $WARDEN_BINARY_DIR or the usual build directories.

# shellcheck source=druid.sh
. "$(dirname "${BASH_SOURCE[0]}")/druid.sh"

CTL_STS_DELAY=${CTL_STS_DELAY:-100ms}
CTL_LEASE=${CTL_LEASE:-15s}
CTL_RENEW=${CTL_RENEW:-10s}
CTL_RETRY=${CTL_RETRY:-1s}
CTL_READY_SECONDS=${CTL_READY_SECONDS:-30}
CTL_PID=""
_ctl_n=0
_ctl_pids=()
declare -A _ctl_health=() _ctl_metrics=() _ctl_logs=()

_ctl_binary() {
    local c
    if [ -n "${WARDEN_CONTROLLER:-}" ] && [ -x "$WARDEN_CONTROLLER" ]; then
        echo "$WARDEN_CONTROLLER"; return 0
    fi
    for c in "${WARDEN_BINARY_DIR:-/nonexistent}/controller/warden-controller" \
             "$_druid_root"/build/debug/controller/warden-controller \
             "$_druid_root"/build*/controller/warden-controller \
             "$_druid_root"/build/*/controller/warden-controller; do
        [ -x "$c" ] && { echo "$c"; return 0; }
    done
    echo "warden-controller binary not found (set WARDEN_CONTROLLER)" >&2
    return 1
}

# FAIL with the message and the last lines of the controller and webhook logs, exit 1.
ctl_fail() {
    local f
    echo "FAIL: $*" >&2
    for f in "${_ctl_logs[@]}"; do
        [ -f "$f" ] || continue
        echo "--- $(basename "$f") (last 30 lines)" >&2
        tail -30 "$f" >&2 || true
    done
    wh_fail "(see above)"
}

# Everything but the controller: kube-sim (extra flags passed on), the CRDs, warden-webhook
# trusting etcd-druid and warden-controller (and the flags of CTL_WEBHOOK_FLAGS), and both
# webhook configurations.
ctl_stage() {
    wh_init
    CTL_DIR=$WH_DIR
    CTL_IP_RANGE=${CTL_IP_RANGE:-$(druid_ip_range)}
    druid_tokens "$CTL_DIR/tokens.csv"
    wh_certs
    kubesim_start --token-file "$CTL_DIR/tokens.csv" --service-alias "$(wh_alias)" \
        --service-cluster-ip-range "$CTL_IP_RANGE" --statefulset-delay "$CTL_STS_DELAY" "$@" ||
        wh_fail "kube-sim did not start"
    druid_crds
    # shellcheck disable=SC2046
    wh_start $(druid_webhook_flags) ${CTL_WEBHOOK_FLAGS:-} --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
    druid_register_webhooks
    kc create namespace etcd-warden >/dev/null
    sed "s/^\( *token:\).*/\1 warden-token/" "$KUBECONFIG" >"$CTL_DIR/controller.kubeconfig"
    ksim_on_exit _ctl_cleanup
    export CTL_DIR CTL_IP_RANGE
}

# Start a warden-controller (flags passed on; later flags win) and wait for /readyz.
# Sets CTL_PID, CTL_LOG, CTL_HEALTH_PORT, CTL_METRICS_PORT.
ctl_start() {
    local bin
    bin=$(_ctl_binary) || exit 1
    _ctl_n=$((_ctl_n + 1))
    CTL_LOG=$CTL_DIR/controller-$_ctl_n.log
    CTL_HEALTH_PORT=$(wh_free_port)
    CTL_METRICS_PORT=$(wh_free_port)
    "$bin" --kubeconfig "$CTL_DIR/controller.kubeconfig" \
        --leader-election-namespace etcd-warden \
        --leader-election-lease-duration "$CTL_LEASE" \
        --leader-election-renew-deadline "$CTL_RENEW" \
        --leader-election-retry-period "$CTL_RETRY" \
        --health-probe-bind-address "127.0.0.1:$CTL_HEALTH_PORT" \
        --metrics-bind-address "127.0.0.1:$CTL_METRICS_PORT" "$@" >>"$CTL_LOG" 2>&1 &
    CTL_PID=$!
    _ctl_pids+=("$CTL_PID")
    _ctl_health[$CTL_PID]=$CTL_HEALTH_PORT
    _ctl_metrics[$CTL_PID]=$CTL_METRICS_PORT
    _ctl_logs[$CTL_PID]=$CTL_LOG
    _ctl_await_ready "$CTL_PID" "$CTL_HEALTH_PORT"
    export CTL_PID CTL_LOG CTL_HEALTH_PORT CTL_METRICS_PORT
}

_ctl_await_ready() {
    local deadline=$((SECONDS + $(ksim_secs "$CTL_READY_SECONDS")))
    until curl -sf "http://127.0.0.1:$2/readyz" >/dev/null 2>&1; do
        kill -0 "$1" 2>/dev/null || { _ctl_forget "$1"; ctl_fail "warden-controller exited at start"; }
        [ $SECONDS -lt $deadline ] || ctl_fail "warden-controller not ready after $(ksim_secs "$CTL_READY_SECONDS")s"
        sleep 0.05
    done
}

_ctl_sanitizer_check() {
    local f bad=0
    for f in "${_ctl_logs[@]}"; do
        if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|UndefinedBehaviorSanitizer' "$f" 2>/dev/null; then
            echo "sanitizer report from warden-controller ($f):" >&2
            grep -vE '^\{' "$f" >&2
            bad=1
        fi
    done
    return $bad
}

_ctl_forget() {
    local p rest=()
    for p in "${_ctl_pids[@]}"; do [ "$p" = "$1" ] || rest+=("$p"); done
    _ctl_pids=("${rest[@]+"${rest[@]}"}")
}

# Short leader-election timings, for a script whose controllers take over from one another
# (a SIGKILLed leader, a standby): its successor waits out the Lease (4 s, not 15).
ctl_takeover_timings() {
    CTL_LEASE=4s CTL_RENEW=3s CTL_RETRY=300ms
}

# SIGKILL controller PID (default CTL_PID): no graceful shutdown, the Lease stays held.
ctl_kill9() {
    local pid=${1:-$CTL_PID}
    reap_child "$pid" 5 KILL || true
    _ctl_forget "$pid"
}

# SIGTERM controller PID (default CTL_PID); fails unless it exits 0 within 20 s.
ctl_stop() {
    local pid=${1:-$CTL_PID} status=0
    kill -0 "$pid" 2>/dev/null || ctl_fail "controller $pid is not running"
    reap_child "$pid" 20 || status=$?
    _ctl_forget "$pid"
    [ "$REAP_KILLED" = 0 ] || ctl_fail "controller $pid ignored SIGTERM"
    [ "$status" -eq 0 ] || ctl_fail "warden-controller exited with $status on SIGTERM"
    _ctl_sanitizer_check || ctl_fail "sanitizer report"
}

_ctl_cleanup() {
    local p
    for p in "${_ctl_pids[@]}"; do
        kill -TERM "$p" 2>/dev/null || true
    done
    for p in "${_ctl_pids[@]}"; do
        reap_child "$p" 10 none || true
    done
    _ctl_pids=()
    _ctl_sanitizer_check
}

# The /metrics text of controller PID (default CTL_PID).
ctl_metrics() {
    curl -sf "http://127.0.0.1:${_ctl_metrics[${1:-$CTL_PID}]}/metrics"
}

# The hibernation phase annotation of Etcd NAME in NS ("" when absent).
ctl_phase() {
    kc -n "$1" get etcd "$2" -o jsonpath='{.metadata.annotations.etcd-warden\.io/hibernation-phase}'
}

# Succeeds when controller PID (default CTL_PID) holds the leader Lease (metrics say so).
# grep reads the whole text: grep -q would stop at the line, and curl, still writing the
# rest, fail on the closed pipe (pipefail: "not leader" by chance).
ctl_is_leader() {
    ctl_metrics "${1:-}" 2>/dev/null | grep -E '^leader_election_master_status\{[^}]*\} 1$' >/dev/null
}

# GET an API path of kube-sim as the admin (curl: fast enough to poll); prints the body.
#   ctl_get /apis/druid.gardener.cloud/v1alpha1/namespaces/NS/etcds/NAME
ctl_get() {
    curl -sfk -H "Authorization: Bearer $KSIM_TOKEN" "$KSIM_URL$1"
}

# Record every value of Etcd NAME's phase annotation, one line per change, in FILE
# (kubectl get -w in the background, stopped at exit; returns once the current state is
# in FILE). "" lines: no phase.
#   ctl_watch_phases NS NAME FILE
ctl_watch_phases() {
    kc -n "$1" get etcd "$2" -w \
        -o jsonpath='{.metadata.annotations.etcd-warden\.io/hibernation-phase}{"\n"}' >"$3" 2>&1 &
    ksim_on_exit "kill $! 2>/dev/null || true"
    local deadline=$((SECONDS + $(ksim_secs 30)))
    while [ $SECONDS -lt $deadline ]; do # until the watch has shown the current state
        [ -s "$3" ] && return 0
        sleep 0.05
    done
    ctl_fail "kubectl get -w on $1/$2 showed nothing in $(ksim_secs 30) s"
}

# The phases recorded by ctl_watch_phases in FILE, repeats collapsed, "-" for no phase,
# space separated: "- CuttingTraffic FinalSnapshot ScalingDown Hibernated".
ctl_phases() {
    sed 's/^$/-/' "$1" | uniq | tr '\n' ' ' | sed 's/ $//'
}

# Wait (SECONDS, default 30, scaled by ksim_secs) until ctl_phases FILE is WANT: the watch of
# ctl_watch_phases prints the last change some time after the API server made it. Asserts
# nothing (the caller compares after, with expect).
#   ctl_await_phases FILE WANT [SECONDS]
ctl_await_phases() {
    local deadline=$((SECONDS + $(ksim_secs "${3:-30}")))
    while [ "$(ctl_phases "$1")" != "$2" ] && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
}

# Wait (SECONDS, default 30, times WARDEN_WAIT_SCALE as ksim_wait) until Etcd NAME's phase is PHASE
# ("" : no phase annotation).
#   ctl_wait_phase NS NAME PHASE [SECONDS]
ctl_wait_phase() {
    local deadline=$((SECONDS + ${4:-30} * ${WARDEN_WAIT_SCALE:-3})) p=""
    while :; do
        p=$(ctl_get "/apis/druid.gardener.cloud/v1alpha1/namespaces/$1/etcds/$2" |
            grep -o '"etcd-warden.io/hibernation-phase":"[^"]*"' | cut -d'"' -f4) || true
        [ "$p" = "$3" ] && return 0
        [ $SECONDS -lt $deadline ] || ctl_fail "$1/$2: phase \"$p\" after ${4:-30}s, want \"$3\""
        sleep 0.05
    done
}

# The events about object NAME in NS: "TYPE REASON: NOTE" lines.
ctl_events() {
    kc -n "$1" get events.events.k8s.io -o \
        jsonpath='{range .items[*]}{.regarding.name}{"\t"}{.type} {.reason}: {.note}{"\n"}{end}' |
        awk -F'\t' -v n="$2" '$1 == n { print $2 }'
}

# Assertions of the controller's e2e scripts: ok WHAT; expect WHAT WANT GOT; jp NS RESOURCE PATH
# (a jsonpath read through kubectl).
command -v kubectl >/dev/null || ksim_fail "kubectl is not installed"
ok() { echo "ok: $*"; }
expect() {
    [ "$2" = "$3" ] || ctl_fail "$1: want \"$2\", got \"$3\""
    ok "$1"
}
jp() { kc -n "$1" get $2 -o jsonpath="$3"; }

# The immutability task's e2e scripts, all in namespace shoot.
# ctl_imt_condition TASK: "status/reason" of the Ready condition of the
# ExtendFullSnapshotImmutabilityTask TASK; ctl_imt_condition_is TASK WANT: whether it is WANT.
ctl_imt_condition() {
    jp shoot "extendfullsnapshotimmutabilitytask/$1" '{.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}'
}
ctl_imt_condition_is() { [ "$(ctl_imt_condition "$1")" = "$2" ]; }
# ctl_store_etcd NS NAME PROVIDER CONTAINER PREFIX: an Etcd of one replica whose backup store
# is that one, with the Secret etcd-backup (no components needed).
ctl_store_etcd() {
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply Etcd $1/$2"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: $3, container: $4, prefix: "$5", secretRef: {name: etcd-backup}}}
EOF
}
# ctl_members NS NAME [REPLICAS]: the StatefulSet NAME of Etcd NS/NAME (etcd-druid's selector
# labels, the etcd and backup-restore containers, a member claim template) and its member pods
# NAME-0.. as the StatefulSet controller makes them, Running with a pod IP as the kubelet
# reports it (kube-sim runs no pods): what warden-controller must see before a BackupEntry's
# deletion deletes anything its Etcd wrote (controller/entries/bkeseen.h).
ctl_members() {
    local ns=$1 n=$2 r=${3:-1} i
    kc -n "$ns" apply -f - >/dev/null <<EOF || ctl_fail "cannot apply StatefulSet $ns/$n"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: $n, labels: {app.kubernetes.io/part-of: $n}}
spec:
  replicas: $r
  serviceName: $n-peer
  selector: {matchLabels: {app.kubernetes.io/part-of: $n, app.kubernetes.io/component: etcd-statefulset}}
  template:
    metadata: {labels: {app.kubernetes.io/part-of: $n, app.kubernetes.io/component: etcd-statefulset}}
    spec:
      containers:
      - {name: etcd, image: "etcd-wrapper:v0.4.2", args: [start-etcd], volumeMounts: [{name: $n, mountPath: /var/etcd/data}]}
      - name: backup-restore
        image: "etcdbrctl:v0.34.0"
        args: [server]
        ports: [{name: server, containerPort: 8080}]
        volumeMounts: [{name: $n, mountPath: /var/etcd/data}, {name: etcd-config-file, mountPath: /var/etcd/config/}]
      volumes:
      - {name: etcd-config-file, configMap: {name: $n-config, items: [{key: etcd.conf.yaml, path: etcd.conf.yaml}]}}
  volumeClaimTemplates:
  - metadata: {name: $n}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
EOF
    kc -n "$ns" get statefulset "$n" -o json | jq -c --argjson r "$r" '
        . as $s | range(0; $r) as $i | {apiVersion: "v1", kind: "Pod",
          metadata: {name: "\($s.metadata.name)-\($i)", labels: $s.spec.template.metadata.labels,
            ownerReferences: [{apiVersion: "apps/v1", kind: "StatefulSet", name: $s.metadata.name,
              uid: $s.metadata.uid, controller: true, blockOwnerDeletion: true}]},
          spec: ($s.spec.template.spec + {volumes: (($s.spec.template.spec.volumes // []) + [$s.spec.volumeClaimTemplates[].metadata.name |
             {name: ., persistentVolumeClaim: {claimName: "\(.)-\($s.metadata.name)-\($i)"}}])})}' |
        kc -n "$ns" create -f - >/dev/null || ctl_fail "cannot create the member pods of $ns/$n"
    for ((i = 0; i < r; i++)); do
        kc -n "$ns" patch pod "$n-$i" --subresource=status --type merge \
            -p '{"status":{"phase":"Running","podIP":"10.96.0.10","podIPs":[{"ip":"10.96.0.10"}]}}' \
            >/dev/null || ctl_fail "cannot set the status of pod $ns/$n-$i"
    done
}
# ctl_members_seen NS NAME [SECONDS]: wait (default 60 s) until the BackupEntry of Etcd NS/NAME
# records that warden-controller saw one of its members running (spec.membersSeenAt).
_ctl_members_seen() {
    kc get backupentries -o jsonpath='{range .items[*]}{.spec.etcd.namespace}/{.spec.etcd.name} {.spec.membersSeenAt}{"\n"}{end}' |
        awk -v e="$1/$2" '$1 == e && $2 != "" { f = 1 } END { exit !f }'
}
ctl_members_seen() {
    ksim_wait "${3:-60}" _ctl_members_seen "$1" "$2" ||
        ctl_fail "no running member of Etcd $1/$2 recorded in its BackupEntry (spec.membersSeenAt)"
}
# ctl_namespace NS...: namespaces with the backup Secret (etcd-backup, ctl_backup_secret)
# ctl_store_etcd's Etcds name: an Etcd whose Secret does not exist gets no BackupEntry.
ctl_namespace() {
    local ns
    for ns in "$@"; do
        kc create namespace "$ns" >/dev/null || ctl_fail "cannot create namespace $ns"
        ctl_backup_secret "$ns" || ctl_fail "cannot create the backup Secret in $ns"
    done
}
# ctl_backup_secret NS [NAME]: Secret NAME (default etcd-backup) in NS with the credentials of
# ctl_s3_bucket_secret's (after snap_s3_start): an Etcd gets a BackupEntry in a bucket only when
# its backup Secret holds the bucket's credentials. Without an s3rver: an endpoint nobody serves.
ctl_backup_secret() {
    kc -n "$1" create secret generic "${2:-etcd-backup}" \
        --from-literal=accessKeyID=S3RVER --from-literal=secretAccessKey=S3RVER \
        --from-literal=region=us-east-1 --from-literal=s3ForcePathStyle=true \
        --from-literal=endpoint="${SNAP_S3_URL:-http://s3.invalid}" >/dev/null
}
# warden-controller's test clock (controller/core/testclock.h), for the schedules: ctl_clock_on
# (before ctl_start) runs it at the real time; ctl_clock_stop S stops it at Unix time S, where it
# stands until the next call, so no fire time passes while a slow machine runs a step;
# ctl_clock_s prints its time (s).
ctl_clock_on() {
    CTL_CLOCK=$SNAP_WORK/test-clock
    export WARDEN_TEST_CLOCK_OFFSET_FILE=$CTL_CLOCK
    echo 0 >"$CTL_CLOCK"
}
ctl_clock_stop() { echo "@$(($1 * 1000))" >"$CTL_CLOCK.new" && mv "$CTL_CLOCK.new" "$CTL_CLOCK"; }
ctl_clock_s() {
    local v
    v=$(cat "$CTL_CLOCK")
    case $v in
    @*) echo $((${v#@} / 1000)) ;;
    *) echo $((($(date +%s%3N) + v) / 1000)) ;;
    esac
}

# ctl_jobs_serve NS [SECONDS] (with tests/lib/snapshot.sh): tests/support/job_exec.py runs the
# Jobs warden-controller makes in NS, as the Job controller and the kubelet would (kube-sim runs
# no pods), with $WARDEN_SNAPSHOT, until ctl_jobs_stop or the test's end (SECONDS, default 600,
# at most); its log goes to $SNAP_WORK/job_exec.log.
ctl_jobs_serve() {
    _ctl_jobs_n=$((${_ctl_jobs_n:-0} + 1))
    CTL_JOBS_STOP=$SNAP_WORK/job_exec-$_ctl_jobs_n.stop
    python3 "$SNAP_SRC/tests/support/job_exec.py" serve "$1" app.kubernetes.io/managed-by=etcd-warden \
        "$SNAP_WORK" "$WARDEN_SNAPSHOT" "$CTL_JOBS_STOP" "${2:-600}" 2>>"$SNAP_WORK/job_exec.log" &
    CTL_JOBS_PID=$!
    ksim_on_exit "touch $CTL_JOBS_STOP; reap_child $CTL_JOBS_PID 10 TERM || true"
}
ctl_jobs_stop() {
    touch "$CTL_JOBS_STOP"
    reap_child "$CTL_JOBS_PID" 10 TERM || true
}
# ctl_store ETCD STORE: the JSON object STORE merged into the Etcd's spec.backup.store.
ctl_store() {
    kc -n shoot patch etcd "$1" --type merge -p "{\"spec\":{\"backup\":{\"store\":$2}}}" >/dev/null
}
# ctl_imt_tasks ETCD...: an ExtendFullSnapshotImmutabilityTask ETCD-extend-immutability of each
# ETCD, scheduled "0 0 * * *".
ctl_imt_tasks() {
    local e
    for e in "$@"; do
        kc -n shoot apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: ExtendFullSnapshotImmutabilityTask
metadata: {name: $e-extend-immutability}
spec: {etcdName: $e, config: {schedule: "0 0 * * *"}}
EOF
    done
}
# BackupEntries (with tests/lib/snapshot.sh's s3rver):
#   ctl_s3_bucket_secret        # Secret etcd-warden/s3-bucket opening $SNAP_S3_URL
#   ctl_s3_bucket GRACE         # BackupBucket s3 (aws, $SNAP_BUCKET, that Secret), grace GRACE
#   ctl_entry_of NS NAME        # the name of the BackupEntry of Etcd NS/NAME (empty: none)
#   ctl_has_entry NS NAME; ctl_entry_phase ENTRY; ctl_entry_phase_is ENTRY PHASE
ctl_s3_bucket_secret() { ctl_backup_secret etcd-warden s3-bucket; }
ctl_s3_bucket() {
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: s3}
spec:
  provider: aws
  container: $SNAP_BUCKET
  secretRef: {namespace: etcd-warden, name: s3-bucket}
  deletionGracePeriod: "$1"
EOF
}
ctl_entry_of() {
    kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name} {.spec.etcd.namespace}/{.spec.etcd.name}{"\n"}{end}' |
        awk -v e="$1/$2" '$2 == e { print $1 }'
}
ctl_has_entry() { [ -n "$(ctl_entry_of "$1" "$2")" ]; }
# ctl_entry_settled ENTRY: true once nothing more will happen to the entry's backups for a
# while: the entry gone; its deletion blocked by an overlapping owner (a condition naming it;
# "postponed" passes); a deletion Job's run over and failed (a retry runs the same Job); no
# BackupBucket owning its store (it never deletes); or its deletion not due for 10 minutes.
ctl_entry_settled() {
    local st at
    st=$(kc get backupentry "$1" -o jsonpath='{.status.deletionFailures}/{.status.message}/{.status.conditions[0].message}' 2>&1) ||
        { grep -q NotFound <<<"$st"; return; }
    [ "${st%%/*}" -ge 1 ] 2>/dev/null && return 0
    grep -qE '/deletion of prefix .* blocked: |no BackupBucket owns the store' <<<"$st" && return 0
    at=$(grep -oE 'deletable from [0-9TZ:-]+' <<<"$st" | cut -d' ' -f3)
    [ -n "$at" ] && [ "$(date -u -d "$at" +%s 2>/dev/null || echo 0)" -gt $(($(date +%s) + 600)) ]
}
ctl_entry_phase() { kc get backupentry "$1" -o jsonpath='{.status.phase}'; }
ctl_entry_phase_is() { [ "$(ctl_entry_phase "$1")" = "$2" ]; }
