#!/usr/bin/env bash
# warden-snapshot under faults on ABS, with a fault proxy in front of Azurite:
# persistent 503 ServerBusy on Put Block fails the run with one clear line and
# no blob; Azurite killed in the middle of a block upload fails the run, and
# after a restart the next run succeeds.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

proxy_start() { # upstream, then fault_proxy.py flags; sets PROXY_URL, PROXY_PID
    local up=$1; shift
    python3 "$SNAP_SRC/tests/support/fault_proxy.py" --upstream "$up" "$@" \
        >"$SNAP_WORK/proxy.out" 2>>"$SNAP_WORK/proxy.log" &
    PROXY_PID=$!
    snap_on_exit "snap_kill $PROXY_PID"
    local i
    for i in $(seq 100); do
        grep -q '^fault-proxy ready' "$SNAP_WORK/proxy.out" 2>/dev/null && break
        sleep 0.05
    done
    PROXY_URL=http://127.0.0.1:$(awk '{print $3}' "$SNAP_WORK/proxy.out")
}
proxy_stop() { snap_kill "$PROXY_PID"; }
s3_via() { printf '%s' "$1" >"$AWS_APPLICATION_CREDENTIALS/endpoint"; }

# extend on day $1 with extra flags; status in RC, log in $SNAP_WORK/run.log
run_day() {
    local now=$((1700000000 + $1 * SNAP_DAY)); shift
    set +e
    WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability --storage-provider S3 \
        --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX" \
        --gc-from-timestamp "$SNAP_GC_FROM" "$@" 2>"$SNAP_WORK/run.log"
    RC=$?
    set -e
}
one_error_line() {
    local n
    n=$(grep -c '"level":"error"' "$SNAP_WORK/run.log" || true)
    [ "$n" -eq 1 ] || { cat "$SNAP_WORK/run.log" >&2; snap_fail "$n error lines, want 1"; }
    grep '"level":"error"' "$SNAP_WORK/run.log" | snap_has "$1" ||
        { cat "$SNAP_WORK/run.log" >&2; snap_fail "error line does not say '$1'"; }
}
no_copy_of_day() {
    if snap_s3 ls "$SNAP_PREFIX/" | snap_has -- "-$((1700000000 + $1 * SNAP_DAY)).gz.final"; then
        snap_fail "a copy of day $1 was left under the prefix"
    fi
}

# 5. ABS: persistent 503 on Put Block -> one clear line, no blob; then success
snap_abs_start
abs_put() { snap_abs put "$1" "$2"; }
SNAP_FINAL=$SNAP_PREFIX/v2/Full-00000000-00002300-1700002000.gz.final
SNAP_FINAL_FILE=$SNAP_WORK/final
head -c $((3 * 1024 * 1024)) /dev/urandom >"$SNAP_FINAL_FILE"
abs_ls() { snap_abs ls "$1"; }
: >"$SNAP_WORK/seeded"
abs_put "$SNAP_FINAL" "$SNAP_FINAL_FILE"
proxy_start "$SNAP_ABS_URL" --rule 'PUT:comp=block:503:ServerBusy:inf'
printf '%s' "${PROXY_URL#http://}" >"$AZURE_APPLICATION_CREDENTIALS/domain"
set +e
WARDEN_SNAPSHOT_NOW=1800000000 snap_run extend-snapshot-immutability --storage-provider ABS \
    --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX" --gc-from-timestamp 1 \
    --copy-mode stream --part-size 1048576 2>"$SNAP_WORK/run.log"
RC=$?
set -e
[ $RC -ne 0 ] || snap_fail "ABS persistent 503 did not fail the run"
one_error_line "ServerBusy"
abs_ls "$SNAP_PREFIX/" | snap_has 1800000000 && snap_fail "ABS: a blob was left"
proxy_stop
printf '127.0.0.1:%s' "$SNAP_ABS_PORT" >"$AZURE_APPLICATION_CREDENTIALS/domain"
WARDEN_SNAPSHOT_NOW=1800000000 snap_run extend-snapshot-immutability --storage-provider ABS \
    --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX" --gc-from-timestamp 1 \
    --copy-mode stream --part-size 1048576 2>/dev/null || snap_fail "ABS run after faults failed"
snap_abs get "$SNAP_PREFIX/v2/Full-00000000-00002300-1800000000.gz.final" | cmp -s - "$SNAP_FINAL_FILE" ||
    snap_fail "ABS copy differs"
echo "ABS persistent 503: one error line, no blob; next run succeeded"

# Azurite killed in the middle of a block upload: clean failure, restart, success.
# Azurite keeps its metadata in memory and saves it every few seconds or when it
# stops: stop it cleanly first, so that the kill loses only the upload in flight.
snap_kill "$SNAP_ABS_PID" TERM
snap_abs_start
echo "$SNAP_ABS_PID" >"$SNAP_WORK/abs.pid"
proxy_start "$SNAP_ABS_URL" --kill "PUT:comp=block:2:$SNAP_WORK/abs.pid"
printf '%s' "${PROXY_URL#http://}" >"$AZURE_APPLICATION_CREDENTIALS/domain"
set +e
WARDEN_SNAPSHOT_NOW=1800086400 snap_run extend-snapshot-immutability --storage-provider ABS \
    --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX" --gc-from-timestamp 1 \
    --copy-mode stream --part-size 1048576 2>"$SNAP_WORK/run.log"
RC=$?
set -e
[ $RC -ne 0 ] || snap_fail "the run survived a dead Azurite"
one_error_line "extend-snapshot-immutability failed"
proxy_stop
wait "$SNAP_ABS_PID" 2>/dev/null || true
snap_abs_start
abs_ls "$SNAP_PREFIX/" | snap_has 1800086400 && snap_fail "ABS: a blob was left after the kill"
WARDEN_SNAPSHOT_NOW=1800086400 snap_run extend-snapshot-immutability --storage-provider ABS \
    --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX" --gc-from-timestamp 1 \
    --copy-mode stream --part-size 1048576 2>"$SNAP_WORK/after.log" || { cat "$SNAP_WORK/after.log"; snap_fail "ABS run after the restart failed"; }
snap_abs get "$SNAP_PREFIX/v2/Full-00000000-00002300-1800086400.gz.final" | cmp -s - "$SNAP_FINAL_FILE" ||
    snap_fail "ABS copy after the restart differs"
abs_ls "$SNAP_PREFIX/" | snap_has 1800000000 && snap_fail "ABS: the earlier copy was not collected"
echo "Azurite killed mid-upload: clean failure, next run succeeded"
echo "snapshot_faults_abs: ok"
