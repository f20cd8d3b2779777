# Helpers for the chart tests and the demo: build charttool (the renderer and
# checker in tests/chart/charttool, Go with Debian's sprig and sigs.k8s.io/yaml),
# render the chart, find the binaries. Source after kubesim.sh (uses
# ksim_fail) or alone:
#
#   . "$(dirname "$0")/../lib/chart.sh"
#   chart_tool                      # sets CHARTTOOL (built once per build dir)
#   chart_render OUT [-f V]... [--set K=V]...   # helm template etcd-warden -n etcd-warden
#   chart_binaries                  # --binary arguments of every built binary
#   chart_processes                 # --process arguments of every implemented process
#   chart_get FILE KIND NAME PATH   # a value of a rendered object, as JSON
#
# Variables: CHART_DIR (the chart), CHART_NS (etcd-warden), CHART_WORK (where
# charttool is built: $WARDEN_BINARY_DIR/chart, else build/chart); Go's build cache is
# build/gocache, shared by the build directories.

_chart_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CHART_DIR=$_chart_root/charts/etcd-warden
CHART_NS=${CHART_NS:-etcd-warden}
CHART_WORK=${CHART_WORK:-${WARDEN_BINARY_DIR:-$_chart_root/build}/chart}

_chart_fail() {
    if declare -F ksim_fail >/dev/null; then ksim_fail "$@"; fi
    echo "FAIL: $*" >&2
    exit 1
}

# Build charttool when a source is newer than the binary. Debian's Go packages
# live in GOPATH layout under /usr/share/gocode, so this is a GOPATH-mode build
# (no module download, no network).
chart_tool() {
    local src=$_chart_root/tests/chart/charttool f stale=0
    CHARTTOOL=$CHART_WORK/charttool
    mkdir -p "$CHART_WORK"
    [ -x "$CHARTTOOL" ] || stale=1
    for f in "$src"/*.go; do [ "$f" -nt "$CHARTTOOL" ] && stale=1; done
    if [ $stale = 1 ]; then
        command -v go >/dev/null || _chart_fail "go is missing (tests/run-all.sh installs golang-go)"
        (cd "$src" && GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= \
            GOCACHE="$_chart_root/build/gocache" go build -o "$CHARTTOOL.tmp.$$" .) ||
            _chart_fail "charttool does not build"
        # Tests running at once may each build it: every build renames its own file.
        mv -f "$CHARTTOOL.tmp.$$" "$CHARTTOOL"
    fi
    export CHARTTOOL
}

# The renderer's own tests (Helm semantics): go test in GOPATH mode.
chart_tool_test() {
    (cd "$_chart_root/tests/chart/charttool" && GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= \
        GOCACHE="$_chart_root/build/gocache" go test . >"$CHART_WORK/gotest.log" 2>&1) ||
        { cat "$CHART_WORK/gotest.log"; _chart_fail "charttool's tests"; }
}

# Render the chart as release etcd-warden in CHART_NS into OUT.
#   chart_render OUT [charttool render flags]
chart_render() {
    local out=$1
    shift
    "$CHARTTOOL" render "$CHART_DIR" --name etcd-warden --namespace "$CHART_NS" "$@" >"$out"
}

chart_get() {
    "$CHARTTOOL" get "$@"
}

_chart_find() {
    local var=$1 rel=$2 c
    if [ -n "${!var:-}" ] && [ -x "${!var}" ]; then echo "${!var}"; return 0; fi
    for c in "${WARDEN_BINARY_DIR:-/nonexistent}/$rel" "$_chart_root"/build/debug/"$rel" \
             "$_chart_root"/build/*/"$rel"; do
        [ -x "$c" ] && { echo "$c"; return 0; }
    done
    return 1
}

# Paths of the three binaries (empty when not built).
chart_bin_webhook() { _chart_find WARDEN_WEBHOOK webhook/warden-webhook; }
chart_bin_controller() { _chart_find WARDEN_CONTROLLER controller/warden-controller; }
chart_bin_snapshot() { _chart_find WARDEN_SNAPSHOT controller/snapshot/warden-snapshot; }

# Is warden-controller built?
chart_controller_ready() {
    chart_bin_controller >/dev/null
}

# The --binary arguments of charttool check: container name = binary.
chart_binaries() {
    local b
    b=$(chart_bin_webhook) && echo "--binary webhook=$b"
    b=$(chart_bin_controller) && echo "--binary controller=$b"
    b=$(chart_bin_snapshot) && echo "--binary warden-snapshot=$b"
    return 0
}

# warden-controller's source folders, comma-separated: controller (main.c) and
# its core and capability folders (controller/snapshot is another program).
chart_controller_dirs() {
    local d out=controller
    for d in "$_chart_root"/controller/*/; do
        d=${d%/}
        d=controller/${d##*/}
        [ "$d" = controller/snapshot ] || out+=",$d"
    done
    echo "$out"
}

# The --process arguments of charttool rbac/audit: NAME=NS/SA:DIRS.
chart_processes() {
    echo "--process webhook=$CHART_NS/warden-webhook:webhook,common"
    if chart_controller_ready; then
        echo "--process controller=$CHART_NS/warden-controller:$(chart_controller_dirs),common"
    fi
}

# Write a token file for kube-sim with a token per process service account (and
# etcd-druid's), and a kubeconfig per process in DIR: DIR/tokens.csv,
# DIR/<name>.kubeconfig (needs KUBECONFIG of kube-sim for the server and CA).
#   chart_identities DIR          (before kubesim_start --token-file DIR/tokens.csv)
#   chart_kubeconfigs DIR         (after it)
chart_identities() {
    local dir=$1
    mkdir -p "$dir"
    cat >"$dir/tokens.csv" <<CSV
token-warden-webhook,system:serviceaccount:$CHART_NS:warden-webhook,uid-webhook,
token-warden-controller,system:serviceaccount:$CHART_NS:warden-controller,uid-controller,
token-etcd-druid,system:serviceaccount:etcd-druid:etcd-druid,uid-druid,
CSV
}

chart_kubeconfigs() {
    local dir=$1 p
    for p in warden-webhook warden-controller etcd-druid; do
        sed "s/^\( *token: \).*/\1token-$p/" "$KUBECONFIG" >"$dir/$p.kubeconfig"
    done
}

# Start warden-webhook with the args of the rendered Deployment, as its service
# account, followed by local overrides (a later flag wins): HTTPS on 127.0.0.1:PORT,
# probes on 127.0.0.1:HEALTH, no metrics listener, then FLAGS. Sets CHART_WH_PID;
# output to LOG.
#   chart_start_webhook RENDERED DIR PORT HEALTH LOG [FLAGS...]
chart_start_webhook() {
    local rendered=$1 dir=$2 port=$3 health=$4 log=$5 bin
    shift 5
    local -a args
    bin=$(chart_bin_webhook) || _chart_fail "warden-webhook is not built"
    mapfile -t args < <("$CHARTTOOL" args "$rendered" warden-webhook)
    [ ${#args[@]} -gt 0 ] || _chart_fail "no args in the rendered warden-webhook Deployment"
    "$bin" "${args[@]}" --kubeconfig "$dir/warden-webhook.kubeconfig" \
        --webhook-server-port "$port" --webhook-server-bind-address 127.0.0.1 \
        --metrics-bind-address 0 --health-probe-bind-address "127.0.0.1:$health" "$@" >>"$log" 2>&1 &
    CHART_WH_PID=$!
}
