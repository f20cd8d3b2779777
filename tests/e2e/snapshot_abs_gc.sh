#!/usr/bin/env bash
# Garbage collection on ABS: a deletion Azurite refuses as immutable
# (409 BlobImmutableDueToPolicy, injected by the fault proxy since Azurite has no
# WORM containers) is logged, the run succeeds, and the next run collects both
# earlier copies. Also a v1-layout snapshot is copied into a new Backup-<now>.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

snap_abs_start
p=$SNAP_PREFIX
snap_fixture "$SNAP_WORK/v1full" 200000 Full.gz
snap_abs put "$p/v1/Backup-1600000000/Full-00000000-00001000-1600000000.gz" "$SNAP_WORK/v1full"
flags=(--storage-provider ABS --store-container "$SNAP_BUCKET" --store-prefix "$p"
       --gc-from-timestamp 1600000500)
day() { echo $((1600000000 + $1 * SNAP_DAY)); }

WARDEN_SNAPSHOT_NOW=$(day 1) snap_run extend-snapshot-immutability "${flags[@]}" 2>/dev/null ||
    snap_fail "day 1 failed"
snap_abs get "$p/v1/Backup-$(day 1)/Full-00000000-00001000-$(day 1).gz" | cmp -s - "$SNAP_WORK/v1full" ||
    snap_fail "v1 copy not under a new Backup-<now> directory"

proxy_start "$SNAP_ABS_URL" --rule 'DELETE:*:409:BlobImmutableDueToPolicy:inf'
printf '%s' "${PROXY_URL#http://}" >"$AZURE_APPLICATION_CREDENTIALS/domain"
WARDEN_SNAPSHOT_NOW=$(day 2) snap_run extend-snapshot-immutability "${flags[@]}" 2>"$SNAP_WORK/d2.log" ||
    { cat "$SNAP_WORK/d2.log"; snap_fail "an immutable earlier copy failed the run"; }
grep -q 'still immutable' "$SNAP_WORK/d2.log" || snap_fail "the refusal was not logged"
grep -q '"level":"error"' "$SNAP_WORK/d2.log" && snap_fail "the refusal was logged as an error"
proxy_stop
printf '127.0.0.1:%s' "$SNAP_ABS_PORT" >"$AZURE_APPLICATION_CREDENTIALS/domain"
snap_abs ls "$p/" | snap_has "Backup-$(day 1)/" || snap_fail "the refused copy is gone"

WARDEN_SNAPSHOT_NOW=$(day 3) snap_run extend-snapshot-immutability "${flags[@]}" 2>"$SNAP_WORK/d3.log" ||
    { cat "$SNAP_WORK/d3.log"; snap_fail "day 3 failed"; }
snap_abs ls "$p/" | sort >"$SNAP_WORK/have"
printf '%s\n' "$p/v1/Backup-1600000000/Full-00000000-00001000-1600000000.gz" \
    "$p/v1/Backup-$(day 3)/Full-00000000-00001000-$(day 3).gz" | sort >"$SNAP_WORK/want"
diff "$SNAP_WORK/want" "$SNAP_WORK/have" || snap_fail "earlier copies not collected on day 3"
echo "snapshot_abs_gc: ok"
