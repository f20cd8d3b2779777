#!/usr/bin/env bash
# --mode extend-in-place on ABS version-level immutability, through the stand-in in front
# of Azurite (tests/support/abs_imm_standin.py: Azurite has no immutability): the policy of
# the snapshot a restore would take is extended on its current version (until-date read
# back through Get Blob Properties; no new blob), a Locked policy stays Locked, never
# shortened (a shorter --retention-days leaves it; the service refuses a shorter date and
# a delete or overwrite while the policy is in force); without --retention-days the run
# fails saying so; --lock-retention locks an Unlocked policy; --mode auto extends in place
# on a container with version-level immutability and copies on a plain one (reading the
# snapshot once). A corrupt snapshot is not extended: the run fails naming it, its policy
# unchanged; --skip-hash-check extends it.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

snap_abs_start
out=$SNAP_WORK/standin.out deadline=$((SECONDS + 60)) port=""
: >"$out"
python3 "$SNAP_SRC/tests/support/abs_imm_standin.py" --upstream "$SNAP_ABS_URL" \
    --account "$SNAP_ABS_ACCOUNT" --key "$SNAP_ABS_KEY" --versioned "$SNAP_BUCKET" \
    >"$out" 2>"$SNAP_WORK/standin.log" &
standin=$!
snap_on_exit "snap_kill $standin"
while [ $SECONDS -lt $deadline ]; do
    port=$(awk '$1 == "abs-imm-standin" && $2 == "ready" {print $3}' "$out")
    [ -n "$port" ] && break
    kill -0 "$standin" 2>/dev/null || break
    sleep 0.05
done
[ -n "$port" ] || snap_fail "the immutability stand-in did not start: $(cat "$SNAP_WORK/standin.log")"
STANDIN=http://127.0.0.1:$port
printf '127.0.0.1:%s' "$port" >"$AZURE_APPLICATION_CREDENTIALS/domain"
via() { # container op args...: abs_client.py through the stand-in
    local c=$1 op=$2; shift 2
    python3 "$SNAP_SRC/tests/support/abs_client.py" "$STANDIN" "$SNAP_ABS_ACCOUNT" \
        "$SNAP_ABS_KEY" "$op" "$c" "$@"
}
via plain mkcontainer

p=shoot--dev--main/etcd-main
key=$p/v2/Full-00000000-00002300-1700000000.gz.final
snap_fixture "$SNAP_WORK/final" 100000 "$key"
via "$SNAP_BUCKET" put "$key" "$SNAP_WORK/final"
# the container's default policy as the service gives it to a new version: Locked, one day
via "$SNAP_BUCKET" setpolicy "$key" $(($(date +%s) + 86400)) Locked
policy() { via "${2:-$SNAP_BUCKET}" policy "${1:-$key}"; }
run() { # flags...; status in RC
    set +e
    WARDEN_SNAPSHOT_NOW=1700086400 snap_run extend-snapshot-immutability --storage-provider ABS \
        --store-prefix "$p" --gc-from-timestamp 1700000001 "$@" 2>"$SNAP_WORK/run.log"
    RC=$?
    set -e
}
one_error() {
    [ "$(grep -c '"level":"error"' "$SNAP_WORK/run.log")" -eq 1 ] &&
        grep '"level":"error"' "$SNAP_WORK/run.log" | snap_has -F "$1" ||
        { cat "$SNAP_WORK/run.log"; snap_fail "not one error line saying '$1'"; }
}

before=$(policy)
run --store-container "$SNAP_BUCKET" --mode extend-in-place --retention-days 2
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "extend-in-place failed"; }
read -r got mode <<<"$(policy)"
want=$(($(date +%s) + 2 * 86400))
[ $((want - got)) -le 120 ] && [ $((got - want)) -le 120 ] ||
    snap_fail "until-date $got is not two days ahead (was $before)"
[ "$mode" = locked ] || snap_fail "the Locked policy became $mode"
after=$(date -u -d "@$got" +%Y-%m-%dT%H:%M:%SZ)
snap_has "\"retainUntil\":\"$after" "$SNAP_WORK/run.log" || { cat "$SNAP_WORK/run.log"; snap_fail "the success line does not give the new date"; }
[ "$(via "$SNAP_BUCKET" ls "$p/" | wc -l)" -eq 1 ] || snap_fail "extend-in-place wrote a blob"
snap_run list --storage-provider ABS --store-container "$SNAP_BUCKET" --store-prefix "$p" |
    snap_has -F "immutable-until=$after" || snap_fail "list does not show the new until-date"
echo "extend-in-place: until-date $before -> $got locked, no blob written, list shows it"

run --store-container "$SNAP_BUCKET" --mode extend-in-place --retention-days 1
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "a shorter period failed the run"; }
[ "$(policy)" = "$got locked" ] || snap_fail "the policy was changed to $(policy)"
if via "$SNAP_BUCKET" setpolicy "$key" $(($(date +%s) + 3600)) Locked 2>"$SNAP_WORK/short.err"; then
    snap_fail "the service accepted a shorter Locked policy"
fi
snap_has 'HTTP 409.*BlobImmutableDueToPolicy' "$SNAP_WORK/short.err" || snap_fail "shorter date: $(cat "$SNAP_WORK/short.err")"
if via "$SNAP_BUCKET" rm "$key" 2>"$SNAP_WORK/rm.err" ||
    via "$SNAP_BUCKET" put "$key" "$SNAP_WORK/final" 2>>"$SNAP_WORK/rm.err"; then
    snap_fail "a blob under a policy in force was deleted or overwritten"
fi
[ "$(grep -c 'HTTP 409.*BlobImmutableDueToPolicy' "$SNAP_WORK/rm.err")" -eq 2 ] || snap_fail "refusals: $(cat "$SNAP_WORK/rm.err")"
echo "never shortened: a shorter period leaves it; the service refuses a shorter date, a delete, an overwrite"

run --store-container "$SNAP_BUCKET" --mode extend-in-place
[ $RC -ne 0 ] || snap_fail "extend-in-place without --retention-days succeeded"
one_error "give --retention-days"
echo "without --retention-days: refused, the default retention is not in the data plane"

run --store-container "$SNAP_BUCKET" --mode auto --retention-days 3
[ $RC -eq 0 ] && snap_has 'extended in place' "$SNAP_WORK/run.log" || { cat "$SNAP_WORK/run.log"; snap_fail "auto did not extend in place on a version-level container"; }
via plain put "$key" "$SNAP_WORK/final"
run --store-container plain --mode auto --retention-days 3
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "auto on a plain container failed"; }
[ "$(grep -c '"snapshot verified"' "$SNAP_WORK/run.log")" -eq 1 ] ||
    { cat "$SNAP_WORK/run.log"; snap_fail "auto did not verify the snapshot exactly once"; }
via plain get "$p/v2/Full-00000000-00002300-1700086400.gz.final" | cmp -s - "$SNAP_WORK/final" ||
    snap_fail "auto did not copy on a container without version-level immutability"
[ -z "$(policy "$key" plain)" ] || snap_fail "a policy was set on a plain container"
echo "auto: in place with version-level immutability, a copy without"

bad=$p/v2/Full-00000000-00002400-1700000500
snap_fixture "$SNAP_WORK/bad" 100000
printf 'X' | dd of="$SNAP_WORK/bad" bs=1 seek=5000 conv=notrunc status=none
via "$SNAP_BUCKET" put "$bad" "$SNAP_WORK/bad"
via "$SNAP_BUCKET" setpolicy "$bad" $(($(date +%s) + 86400)) Unlocked
bad_before=$(policy "$bad")
run --store-container "$SNAP_BUCKET" --mode extend-in-place --retention-days 4
[ $RC -ne 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "a corrupt snapshot was extended"; }
one_error "snapshot $bad is corrupt"
[ "$(policy "$bad")" = "$bad_before" ] || snap_fail "the corrupt snapshot's policy changed"
run --store-container "$SNAP_BUCKET" --mode extend-in-place --retention-days 4 --skip-hash-check
read -r bgot bmode <<<"$(policy "$bad")"
[ $RC -eq 0 ] && [ "$bgot" -gt "${bad_before% *}" ] && [ "$bmode" = unlocked ] ||
    { cat "$SNAP_WORK/run.log"; snap_fail "--skip-hash-check did not extend it (Unlocked kept)"; }
echo "a corrupt snapshot is not extended in place (--skip-hash-check extends it, Unlocked kept)"

run --store-container "$SNAP_BUCKET" --mode extend-in-place --retention-days 1 --skip-hash-check \
    --lock-retention
[ $RC -eq 0 ] && [ "$(policy "$bad")" = "$bgot locked" ] ||
    { cat "$SNAP_WORK/run.log"; snap_fail "--lock-retention did not lock the policy: $(policy "$bad")"; }
echo "--lock-retention: the Unlocked policy is Locked, its date kept"
echo "snapshot_abs_inplace: ok"
