#!/usr/bin/env bash
# warden-snapshot under faults, with a fault proxy in front of s3rver:
# transient 500s and 503 SlowDown are retried and the run succeeds; persistent
# ones fail with one clear line and leave nothing under the prefix; the emulator
# killed in the middle of a multipart upload fails the run cleanly, and after a
# restart the next run succeeds; a deletion refused as immutable (403 naming the
# object lock) is logged, the run succeeds, and a later run collects the copy; a
# 403 on an unlocked object is a permission error and fails the run.
# (ABS: snapshot_faults_abs.sh)
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

snap_s3_start
s3_put() { snap_s3 put "$1" "$2"; }
SNAP_FINAL_SIZE=$((6 * 1024 * 1024)) snap_history s3_put
echo "$SNAP_S3_PID" >"$SNAP_WORK/s3.pid"

# 1. transient: two 503 SlowDown on PUT, two 500 on GET -> retried, success
proxy_start "$SNAP_S3_URL" --rule 'PUT:*:503:SlowDown:2' --rule 'GET:*:500:InternalError:2'
s3_via "$PROXY_URL"
run_day 1 --copy-mode stream --part-size 5242880
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "transient faults were not retried"; }
grep -q '"status":"503"' "$SNAP_WORK/run.log" || snap_fail "no 503 was seen"
grep -q '"status":"500"' "$SNAP_WORK/run.log" || snap_fail "no 500 was seen"
snap_s3 get "$SNAP_PREFIX/v2/Full-00000000-00002300-$((1700000000 + SNAP_DAY)).gz.final" |
    cmp -s - "$SNAP_FINAL_FILE" || snap_fail "copy after retries differs"
proxy_stop
echo "transient 500/503: retried, copy verified"

# 2. persistent 503 SlowDown on part uploads -> one clear line, nothing left
proxy_start "$SNAP_S3_URL" --rule 'PUT:partNumber=2:503:SlowDown:inf'
s3_via "$PROXY_URL"
run_day 2 --copy-mode stream --part-size 5242880
[ $RC -ne 0 ] || snap_fail "persistent 503 did not fail the run"
one_error_line "SlowDown"
no_copy_of_day 2
proxy_stop
echo "persistent 503: one error line, nothing left"

# 3. the emulator killed in the middle of a multipart upload
proxy_start "$SNAP_S3_URL" --kill "PUT:partNumber=2:1:$SNAP_WORK/s3.pid"
s3_via "$PROXY_URL"
run_day 3 --copy-mode stream --part-size 5242880
[ $RC -ne 0 ] || snap_fail "the run survived a dead emulator"
one_error_line "extend-snapshot-immutability failed"
proxy_stop
reap_child "$SNAP_S3_PID" 10 none || true
# on the same data, on a new port: the old one, free since the kill, may be any other test's now
unset SNAP_S3_PORT
snap_s3_start
echo "$SNAP_S3_PID" >"$SNAP_WORK/s3.pid"
no_copy_of_day 3
run_day 3 --copy-mode stream --part-size 5242880
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "the run after the restart failed"; }
snap_s3 get "$SNAP_PREFIX/v2/Full-00000000-00002300-$((1700000000 + 3 * SNAP_DAY)).gz.final" |
    cmp -s - "$SNAP_FINAL_FILE" || snap_fail "copy after the restart differs"
echo "emulator killed mid-upload: clean failure, next run succeeded"

# 4. deletion refused as immutable (AWS's Object Lock refusal: 403 AccessDenied naming the
#    object lock): logged, run succeeds, later run collects it
proxy_start "$SNAP_S3_URL" \
    --rule 'DELETE:*:403:AccessDenied:inf:Access Denied because object protected by object lock.'
s3_via "$PROXY_URL"
run_day 4
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "an immutable copy failed the run"; }
grep -q 'still immutable' "$SNAP_WORK/run.log" || snap_fail "the refusal was not logged"
grep -q '"stillImmutable":"[12]"' "$SNAP_WORK/run.log" || snap_fail "refusal not counted"
proxy_stop
s3_via "$SNAP_S3_URL"
run_day 5
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "day 5 failed"; }
have=$(snap_s3 ls "$SNAP_PREFIX/" | grep -c -- '00002300-17[0-9]*\.gz\.final$' || true)
[ "$have" -eq 2 ] || { snap_s3 ls "$SNAP_PREFIX/"; snap_fail "earlier copies not collected ($have left)"; }
echo "immutable deletion: logged, retried and collected on the next run"

# 5. a 403 that is a permission error (an IAM policy without s3:DeleteObjectVersion; the
#    object has no retention or legal hold) fails the run with one line saying so
proxy_start "$SNAP_S3_URL" --rule 'DELETE:*:403:AccessDenied:inf:Access Denied'
s3_via "$PROXY_URL"
run_day 6
[ $RC -ne 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "a permission error passed as immutability"; }
one_error_line "not locked"
if grep -q 'still immutable' "$SNAP_WORK/run.log"; then snap_fail "a permission error logged as immutable"; fi
proxy_stop
s3_via "$SNAP_S3_URL"
echo "permission error on delete: the run fails, not read as immutability"

echo "snapshot_faults_s3: ok"
