# One bounded way to stop and reap a child process of a test script. Sourced by kubesim.sh
# and snapshot.sh (and so by every script that sources one of them):
#
#   reap_child PID [SECONDS] [SIGNAL]
#
# sends SIGNAL (default TERM; "none": send nothing, only wait), waits up to SECONDS (default
# 10, whole seconds) for PID to exit, then SIGKILLs it, and reaps it. The status is the
# child's exit status (137 after the SIGKILL, which also sets REAP_KILLED=1; else 0). It
# never blocks much longer than SECONDS: a child that ignores SIGTERM (seen with Azurite
# under ASan) cannot hang the script until ctest's timeout.
REAP_KILLED=0

reap_child() {
    local pid=$1 secs=${2:-10} sig=${3:-TERM} i status=0
    REAP_KILLED=0
    [ -n "$pid" ] || return 0
    [ "$sig" = none ] || kill -s "$sig" "$pid" 2>/dev/null || true
    for ((i = 0; i < secs * 20; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "process $pid still running ${secs}s after SIG$sig: SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
        REAP_KILLED=1
    fi
    wait "$pid" 2>/dev/null || status=$?
    return "$status"
}
