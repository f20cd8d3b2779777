# Helpers for end-to-end scripts that run against kube-sim. Source this file:
#
#   . "$(dirname "$0")/../lib/kubesim.sh"
#   kubesim_start [--token-file FILE] [--service-alias NAME.NS=HOST:PORT]... [kube-sim flags]
#   kc get pods                      # kubectl as the cluster admin
#   kc --token=TOKEN get pods        # kubectl as a token-file user
#   kc_as TOKEN delete pod x         # the same, shorter
#   ksim_wait 10 kc get sts web      # retry a command until it succeeds (deadline in seconds)
#   kc wait --timeout="$(ksim_secs 40)s" ...   # a deadline scaled as ksim_wait scales its own
#   ksim_on_exit "kill $pid"         # run something when the script exits
#   ksim_fail "message"              # print and exit 1
#
# kubesim_start runs kube-sim in a fresh temporary data directory, waits for
# its "kube-sim ready" line and exports:
#   KSIM_DIR     the data directory (ca.crt, admin.kubeconfig, kube-sim.log)
#   KSIM_URL     https://127.0.0.1:PORT
#   KSIM_PORT    the port
#   KSIM_PID     the process id
#   KUBECONFIG   $KSIM_DIR/admin.kubeconfig
#   KSIM_TOKEN   the admin bearer token (group system:masters)
# Watches that ask for bookmarks get one every KSIM_BOOKMARK_INTERVAL (200ms; a later
# --bookmark-interval flag wins): a cache's resourceVersion then follows the store's.
# On exit kube-sim gets SIGTERM, the directory is removed, and any sanitizer
# report in kube-sim's log is printed (so CTest fails the test).
#
# The kube-sim binary is $KUBE_SIM (set by CTest), else found under
# $WARDEN_BINARY_DIR or the usual build directories.

# shellcheck source=reap.sh
. "$(dirname "${BASH_SOURCE[0]}")/reap.sh"
# shellcheck source=ports.sh
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

_ksim_cleanups=()

ksim_on_exit() {
    _ksim_cleanups+=("$1")
}

_ksim_run_cleanups() {
    local status=$? i
    for ((i = ${#_ksim_cleanups[@]} - 1; i >= 0; i--)); do
        eval "${_ksim_cleanups[i]}" || { [ "$status" -ne 0 ] || status=1; }
    done
    _ksim_cleanups=()
    exit "$status"
}
trap _ksim_run_cleanups EXIT

ksim_fail() {
    echo "FAIL: $*" >&2
    exit 1
}

_ksim_binary() {
    local root c
    if [ -n "${KUBE_SIM:-}" ] && [ -x "$KUBE_SIM" ]; then
        echo "$KUBE_SIM"; return 0
    fi
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    for c in "${WARDEN_BINARY_DIR:-/nonexistent}/tests/kube-sim/kube-sim" \
             "$root"/build/debug/tests/kube-sim/kube-sim "$root"/build*/tests/kube-sim/kube-sim; do
        [ -x "$c" ] && { echo "$c"; return 0; }
    done
    echo "kube-sim binary not found (set KUBE_SIM)" >&2
    return 1
}

kubesim_start() {
    local bin line="" deadline
    bin=$(_ksim_binary) || return 1
    KSIM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kube-sim.XXXXXX")
    "$bin" --data-dir "$KSIM_DIR" --bookmark-interval "${KSIM_BOOKMARK_INTERVAL:-200ms}" "$@" \
        >"$KSIM_DIR/stdout" 2>"$KSIM_DIR/kube-sim.log" &
    KSIM_PID=$!
    ksim_on_exit kubesim_stop
    deadline=$((SECONDS + $(ksim_secs 30)))
    while [ $SECONDS -lt $deadline ]; do
        line=$(grep -m1 '^kube-sim ready ' "$KSIM_DIR/stdout" 2>/dev/null || true)
        [ -n "$line" ] && break
        kill -0 "$KSIM_PID" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$line" ]; then
        echo "kube-sim did not become ready; its log:" >&2
        cat "$KSIM_DIR/kube-sim.log" >&2
        return 1
    fi
    KSIM_URL=${line#kube-sim ready }
    KSIM_PORT=${KSIM_URL##*:}
    KUBECONFIG=$KSIM_DIR/admin.kubeconfig
    KSIM_TOKEN=$(sed -n 's/^ *token: //p' "$KUBECONFIG")
    export KSIM_DIR KSIM_URL KSIM_PORT KSIM_PID KUBECONFIG KSIM_TOKEN
}

kubesim_stop() {
    local bad=0
    [ -n "${KSIM_PID:-}" ] || return 0
    reap_child "$KSIM_PID" 10 || true
    if [ "$REAP_KILLED" = 1 ]; then
        echo "kube-sim did not stop on SIGTERM" >&2
        bad=1
    fi
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|UndefinedBehaviorSanitizer' \
        "$KSIM_DIR/kube-sim.log" 2>/dev/null; then
        echo "kube-sim sanitizer report:" >&2
        cat "$KSIM_DIR/kube-sim.log" >&2
        bad=1
    fi
    rm -rf "$KSIM_DIR"
    KSIM_PID=""
    return $bad
}

# kubectl against kube-sim, with a private discovery cache.
kc() {
    kubectl --kubeconfig "$KUBECONFIG" --cache-dir "$KSIM_DIR/kubectl-cache" "$@"
}

# kubectl runs thousands of times in a parallel test run, and those runs were most of its CPU:
# one thread of Go code and fewer garbage collections (a run is too short to gain from either)
# take about 40 % off each. Bash scripts started from here inherit the function; the Python
# helpers pass the same environment (tests/support/kenv.py).
kubectl() { GOMAXPROCS=1 GOGC=400 command kubectl "$@"; }
export -f kubectl

# kubectl as the user of a token-file token.
kc_as() {
    local token=$1
    shift
    kc --token="$token" "$@"
}

# The seconds of a deadline: SECONDS times WARDEN_WAIT_SCALE (default 3: the seconds a script
# names are what the step takes on an idle machine; a loaded one, or a sanitizer build, gets
# that room). For every bounded wait of a script and of these libraries.
ksim_secs() {
    echo $(($1 * ${WARDEN_WAIT_SCALE:-3}))
}

# Retry "$@" until it succeeds or the deadline passes (SECONDS, scaled by ksim_secs). The last
# output is shown on failure. The pause between tries grows from 0.1 s to 0.5 s, and to 1 s
# once the wait passed 10 s: a try is mostly a kubectl run (about 50 ms of CPU), and kubectl
# was the largest share of a parallel test run's CPU, more than the programs under test.
ksim_wait() {
    local start=$SECONDS deadline=$((SECONDS + $(ksim_secs "$1"))) out pause=0.1
    shift
    while :; do
        if out=$("$@" 2>&1); then
            return 0
        fi
        if [ $SECONDS -ge $deadline ]; then
            echo "timed out waiting for: $*" >&2
            echo "$out" >&2
            return 1
        fi
        sleep "$pause"
        case $pause in 0.1) pause=0.2 ;; 0.2) pause=0.3 ;; 0.3) pause=0.5 ;; esac
        [ $((SECONDS - start)) -lt 10 ] || pause=1
    done
}
# ksim_gone ARGS...: true when `kc get ARGS` finds nothing.
ksim_gone() { ! kc get "$@" >/dev/null 2>&1; }
