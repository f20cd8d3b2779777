#!/usr/bin/env bash
# The README's playground as a test: tests/playground.sh on this build (under ctest it
# installs and builds nothing), in a session of its own, started in the background; once it
# prints its "export KUBECONFIG=" line (90 s at most), kubectl lists the two example Etcds
# through it; `tests/playground.sh down` stops it (60 s at most), and nothing of its session
# may outlive it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${WARDEN_BINARY_DIR:-}" ] || { echo "FAIL: WARDEN_BINARY_DIR is not set (run under ctest)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/playground-e2e.XXXXXX")
export PLAYGROUND_STATE=$work/state
out=$work/out
pid=""
fail() {
    echo "FAIL: $*" >&2
    echo "--- playground output" >&2
    cat "$out" >&2 || true
    exit 1
}
cleanup() {
    local p
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        sleep 2
    fi
    if [ -n "$pid" ]; then
        for p in $(ps -o pid= -s "$pid" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# made here, before the background job opens it: the first look below may come first
: >"$out"
setsid bash "$here/../playground.sh" >"$out" 2>&1 &
pid=$!
kubeconfig=""
for ((i = 0; i < 900; i++)); do
    kubeconfig=$(sed -n 's/^ *export KUBECONFIG=//p' "$out")
    [ -z "$kubeconfig" ] || break
    kill -0 "$pid" 2>/dev/null || fail "the playground exited before it was up"
    sleep 0.1
done
[ -n "$kubeconfig" ] || fail "no export KUBECONFIG= line within 90s"
grep -q 'tests/playground.sh down' "$out" || fail "it does not say how to stop it"

etcds=$(KUBECONFIG=$kubeconfig kubectl get etcd -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name} {end}') ||
    fail "kubectl get etcd -A failed"
[ "$etcds" = "shoot/etcd-events shoot/etcd-main " ] || fail "kubectl get etcd -A: \"$etcds\""
echo "ok: kubectl get etcd -A through the printed KUBECONFIG: $etcds"
kill -0 "$pid" 2>/dev/null || fail "the playground did not stay up"

bash "$here/../playground.sh" down || fail "tests/playground.sh down failed"
kill -0 "$pid" 2>/dev/null && fail "the playground still runs after down"
status=0
wait "$pid" || status=$?
[ "$status" = 0 ] || fail "the playground exited with $status"
sleep 0.5
left=$(ps -o pid=,stat=,args= -s "$pid" | awk '$2 !~ /^Z/' || true) # zombies are gone already
if [ -n "$left" ]; then
    echo "$left" >&2
    fail "the playground left processes behind"
fi
[ ! -e "$PLAYGROUND_STATE/pid" ] || fail "the pid file is left behind"
[ ! -e "$(dirname "$kubeconfig")" ] || fail "kube-sim's data directory is left behind"
echo "ok: stopped by tests/playground.sh down, nothing left behind"
bash "$here/../playground.sh" down | grep -q "no playground is running" ||
    fail "down with no playground running"
echo "PASS playground"
