#!/usr/bin/env bash
# The README's demo command as a test: tests/demo.sh on this build (under ctest it installs
# and builds nothing), in a session of its own, so that a process it leaves behind is seen:
# the test fails when the demo fails or when anything of its session outlives it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${WARDEN_BINARY_DIR:-}" ] || { echo "FAIL: WARDEN_BINARY_DIR is not set (run under ctest)" >&2; exit 1; }
setsid bash "$here/../demo.sh" &
pid=$!
status=0
wait "$pid" || status=$?
sleep 0.5
left=$(ps -o pid=,stat=,args= -s "$pid" | awk '$2 !~ /^Z/' || true)   # zombies are gone already
if [ -n "$left" ]; then
    echo "FAIL: the demo left processes behind:" >&2
    echo "$left" >&2
    for p in $(awk '{print $1}' <<<"$left"); do kill -KILL "$p" 2>/dev/null || true; done
    exit 1
fi
[ "$status" = 0 ] || { echo "FAIL: the demo exited with $status" >&2; exit 1; }
echo "PASS demo (nothing left behind)"
