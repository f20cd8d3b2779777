#!/usr/bin/env bash
# warden-snapshot under faults on ABS, with a fault proxy in front of Azurite:
# persistent 503 ServerBusy on Put Block fails the run with one clear line and
# no blob; Azurite killed in the middle of a block upload fails the run, and
# after a restart the next run succeeds.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

# 5. ABS: persistent 503 on Put Block -> one clear line, no blob; then success
snap_abs_start
abs_put() { snap_abs put "$1" "$2"; }
SNAP_FINAL=$SNAP_PREFIX/v2/Full-00000000-00002300-1700002000.gz.final
SNAP_FINAL_FILE=$SNAP_WORK/final
snap_fixture "$SNAP_FINAL_FILE" $((3 * 1024 * 1024)) "$SNAP_FINAL"
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
reap_child "$SNAP_ABS_PID" 10 none || true
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
