# The STS stand-in (tests/support/sts_standin.py) for the S3 web identity tests. Source
# after snapshot.sh (it uses SNAP_WORK, SNAP_S3_URL, snap_on_exit, snap_fail):
#
#   sts_start TOKEN_FILE [sts_standin.py flags]   # sets STS_PID, GATE_URL and exports
#                                                 # AWS_ENDPOINT_URL_STS; log in $STS_LOG
#   sts_count 'PYTHON EXPRESSION OVER e'           # how many log entries match
#   sts_stop

STS_LOG=$SNAP_WORK/sts.log

sts_start() {
    local token=$1 out deadline=$((SECONDS + 60)) ports=""
    shift
    out=$(mktemp "$SNAP_WORK/sts.XXXXXX") # this start's own: never an earlier one's ready line
    : >"$STS_LOG"
    python3 "$SNAP_SRC/tests/support/sts_standin.py" --s3-upstream "$SNAP_S3_URL" \
        --token-file "$token" --log "$STS_LOG" "$@" >"$out" 2>>"$SNAP_WORK/sts.err" &
    STS_PID=$!
    snap_on_exit "snap_kill $STS_PID"
    while [ $SECONDS -lt $deadline ]; do
        ports=$(awk '$1 == "sts-standin" && $2 == "ready" {print $3, $4}' "$out" 2>/dev/null)
        [ -n "$ports" ] && break
        kill -0 "$STS_PID" 2>/dev/null || break
        sleep 0.05
    done
    [ -n "$ports" ] || snap_fail "the STS stand-in did not start: $(tail -5 "$SNAP_WORK/sts.err")"
    export AWS_ENDPOINT_URL_STS=http://127.0.0.1:${ports% *}/
    GATE_URL=http://127.0.0.1:${ports#* }
}

sts_stop() { snap_kill "$STS_PID"; }

sts_count() {
    python3 -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) for e in [json.loads(l)] if eval(sys.argv[2])))' \
        "$STS_LOG" "$1"
}
