#!/usr/bin/env bash
# The unit tests (the Criterion test_* executables of a build) once more beside a CPU load
# of two busy processes, each test run UNDER_LOAD_REPEAT times (default 2) unless it fails
# first: a test that counts on the scheduler (a sleep that must not overrun, events that
# must fit in a window) fails here, on the developer's machine, rather than by chance in a
# newcomer's first run. The load is started and stopped by this script (nothing is left
# running, whatever ends it); each test gets UNDER_LOAD_TIMEOUT seconds (default 300).
#
#   tests/under-load.sh build/debug
#   UNDER_LOAD_REPEAT=5 UNDER_LOAD_BURNERS=4 tests/under-load.sh build/debug
set -euo pipefail
dir=${1:?usage: tests/under-load.sh BUILD_DIR}
[ -f "$dir/CTestTestfile.cmake" ] || { echo "under-load: $dir is not a build directory" >&2; exit 2; }
jobs=$(nproc 2>/dev/null || echo 2)
burners=()

stop_load() {
    local p
    for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${burners[@]}"; do wait "$p" 2>/dev/null || true; done
    burners=()
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT
trap 'stop_load; exit 143' TERM

for ((i = 0; i < ${UNDER_LOAD_BURNERS:-2}; i++)); do
    yes >/dev/null &
    burners+=($!)
done
echo "under-load: ${#burners[@]} busy processes (pids ${burners[*]}), unit tests of $dir" \
    "x${UNDER_LOAD_REPEAT:-2}"
start=$SECONDS
status=0
out=$(mktemp)
trap 'stop_load; rm -f "$out"' EXIT
(cd "$dir" && ctest --output-on-failure -j "$jobs" -R '^test_' \
    --repeat until-fail:"${UNDER_LOAD_REPEAT:-2}" --timeout "${UNDER_LOAD_TIMEOUT:-300}") |
    tee "$out" || status=$?
# Criterion's BoxFort can fail to start a worker on a loaded machine ("Could not spawn test
# instance", before any test code ran): such a test, and only such, runs once more.
if [ "$status" != 0 ]; then
    spawned=$(python3 - "$out" <<'EOF'
import re, sys
blocks, cur = {}, None
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\s*\d+/\d+ Test\s+#\d+: (\S+) \.+.*\*\*\*", line)
    if m:
        cur = m.group(1)
        blocks[cur] = ""
    elif re.match(r"\s*\d+/\d+ Test\s+#\d+: ", line) or re.match(r"\s*Start\s+\d+: ", line):
        cur = None
    elif cur:
        blocks[cur] += line
bad = [n for n, t in blocks.items() if "Could not spawn test instance" not in t]
print(" ".join(sorted(blocks)) if blocks and not bad else "")
EOF
    )
    if [ -n "$spawned" ]; then
        echo "under-load: Criterion could not start a worker of: $spawned; once more"
        status=0
        (cd "$dir" && ctest --output-on-failure -R "^($(tr ' ' '|' <<<"$spawned"))\$" \
            --timeout "${UNDER_LOAD_TIMEOUT:-300}") || status=$?
    fi
fi
stop_load
echo "under-load: $((SECONDS - start))s, exit $status"
exit "$status"
