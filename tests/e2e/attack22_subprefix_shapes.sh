#!/usr/bin/env bash
# delete-snapshots (docs/warden-snapshot.md) "deletes the prefix itself and everything under
# <prefix>/, never ... the snapshots of a prefix below it (shoot--etcd/etcd-events/v2/Full-...:
# the sidecar reads a key's prefix up to its last v1/ or v2/ ...); they are foreign". A
# deletion Job runs exactly this. Other clusters' snapshots below P, in shapes the docs' rule
# must also call foreign: the prefix below is itself named v1 or v2 (an Etcd admitted before the
# v1 rule, or while warden-webhook was down), the v1 layout (Backup-<time>/ directories), a
# final snapshot (".final") and a compressed one. A run on P with a window that holds all of
# them must delete only P's own snapshot. Oracle: s3rver's listing before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

P=shoot--etcd
echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
own=$P/v2/Full-00000000-00000100-1700000000.gz
below=(
    "$P/v2/v2/Full-00000000-00000100-1700000000.gz"
    "$P/v1/v2/Full-00000000-00000100-1700000000.gz"
    "$P/v2/x/v2/Full-00000000-00000100-1700000000.gz"
    "$P/x-v1/v2/Full-00000000-00000100-1700000000.gz"
    "$P/x/v1/Backup-1700000000/Full-00000000-00000100-1700000000"
    "$P/x/v1/Backup-1700000000/Incr-00000101-00000200-1700000100"
    "$P/x/v2/Full-00000000-00000100-1700000000.final"
    "$P/x/v2/Full-00000000-00000100-1700000000.gz.final"
    "$P/x/v2/Full-00000000-00000100-1700000000.zlib"
    "$P/x/v2/Incr-00000101-00000200-1700000100.gz"
    "$P/v2/Full-00000000-00000100-1700000000.gz/v2/Full-00000000-00000200-1700000200.gz"
)
snap_s3 put "$own" "$SNAP_WORK/obj" || snap_fail "cannot put $own"
for k in "${below[@]}"; do snap_s3 put "$k" "$SNAP_WORK/obj" || snap_fail "cannot put $k"; done
before=$(snap_s3 ls "$P/" | sort)
echo "before: $(echo $before)"
since=$(date -u -d '-60 seconds' +%Y-%m-%dT%H:%M:%SZ)
until=$(date -u -d '+60 seconds' +%Y-%m-%dT%H:%M:%SZ)
snap_run delete-snapshots --storage-provider aws --store-container "$SNAP_BUCKET" --store-prefix "$P" \
    --written-since "$since" --written-before "$until" >"$SNAP_WORK/out" 2>"$SNAP_WORK/err"
echo "delete-snapshots exited $?: $(tail -1 "$SNAP_WORK/out" | cut -c1-600)"
left=$(snap_s3 ls "$P/" | sort)
echo "left: $(echo $left)"
lost=$(comm -23 <(printf '%s\n' "${below[@]}" | sort) <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: delete-snapshots of \"$P\" deleted $(echo $lost): snapshots of prefixes below it (foreign by the docs' rule)"
    exit 1
fi
echo "held: every snapshot of a prefix below \"$P\" stays"
echo "attack22_subprefix_shapes: ok"
