#!/usr/bin/env bash
# warden-snapshot on the Local provider: list against a seeded history, extend
# over simulated days (copy, content, collection, nothing else touched), a
# full disk (RLIMIT_FSIZE) fails with one clear line and no partial object,
# and the next run succeeds; unsupported providers are refused clearly.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

store=$SNAP_WORK/store
mkdir -p "$store"
local_put() { mkdir -p "$(dirname "$store/$1")" && cp "$2" "$store/$1"; }
local_get() { cat "$store/$1"; }
local_ls() { (cd "$store" && find "${1%/}" -type f 2>/dev/null | sed 's|^\./||'); }
STORE_GET=local_get STORE_LS=local_ls
flags=(--storage-provider Local --store-container "$store")

snap_history local_put
snap_check_list "${flags[@]}"
SNAP_EXTRA_FLAGS="--part-size 65536" snap_days "${flags[@]}"

# Memory stays bounded whatever the snapshot size: a 96 MiB snapshot streamed
# through the default 8 MiB buffer keeps the peak RSS under 32 MB (not measured
# under ASan, whose shadow memory dominates).
big=$SNAP_PREFIX/v2/Full-00000000-00009000-1700050000.gz
snap_fixture "$SNAP_WORK/big" $((96 * 1024 * 1024)) "$big"
local_put "$big" "$SNAP_WORK/big"
rm -f "$SNAP_WORK/big"
WARDEN_SNAPSHOT_NOW=1700060000 "$WARDEN_SNAPSHOT" extend-snapshot-immutability "${flags[@]}" \
    --store-prefix "$SNAP_PREFIX" --gc-from-timestamp 1700055000 --copy-mode stream 2>"$SNAP_WORK/big.log" ||
    { cat "$SNAP_WORK/big.log"; snap_fail "extend of a 96 MiB snapshot failed"; }
cmp -s "$store/$big" "$store/$SNAP_PREFIX/v2/Full-00000000-00009000-1700060000.gz" || snap_fail "big copy differs"
rss=$(sed -n 's/.*"peakRssKiB":"\([0-9]*\)".*/\1/p' "$SNAP_WORK/big.log")
[ -n "$rss" ] || snap_fail "no peak RSS in the log"
if ! ldd "$WARDEN_SNAPSHOT" | snap_has libasan; then
    [ "$rss" -le $((32 * 1024)) ] || snap_fail "peak RSS $rss KiB for a 96 MiB snapshot"
fi
echo "96 MiB snapshot streamed with a peak RSS of $rss KiB"
rm -f "$store/$big" "$store/$SNAP_PREFIX/v2/Full-00000000-00009000-1700060000.gz"

# Full disk: the file size limit stops the write; nothing partial under the prefix.
now=$((1700000000 + 10 * SNAP_DAY))
set +e
(ulimit -f 1024; WARDEN_SNAPSHOT_NOW=$now "$WARDEN_SNAPSHOT" extend-snapshot-immutability \
    "${flags[@]}" --store-prefix "$SNAP_PREFIX" --gc-from-timestamp "$SNAP_GC_FROM" \
    --part-size 65536) 2>"$SNAP_WORK/full.log"
rc=$?
set -e
[ $rc -ne 0 ] || snap_fail "extend succeeded on a full disk"
[ "$(grep -c '"level":"error"' "$SNAP_WORK/full.log")" -eq 1 ] || { cat "$SNAP_WORK/full.log"; snap_fail "not one error line"; }
grep '"level":"error"' "$SNAP_WORK/full.log" | snap_has 'File too large' || { cat "$SNAP_WORK/full.log"; snap_fail "error line does not say why"; }
[ ! -e "$store/$SNAP_PREFIX/v2/Full-00000000-00002300-$now.gz.final" ] || snap_fail "partial copy left"
[ -z "$(ls -A "$store/.warden-snapshot-tmp" 2>/dev/null)" ] || snap_fail "temporary file left"
WARDEN_SNAPSHOT_NOW=$now "$WARDEN_SNAPSHOT" extend-snapshot-immutability "${flags[@]}" \
    --store-prefix "$SNAP_PREFIX" --gc-from-timestamp "$SNAP_GC_FROM" 2>"$SNAP_WORK/next.log" ||
    { cat "$SNAP_WORK/next.log"; snap_fail "the run after the full disk failed"; }
cmp -s "$store/$SNAP_PREFIX/v2/Full-00000000-00002300-$now.gz.final" "$SNAP_FINAL_FILE" ||
    snap_fail "copy after the full disk differs"
echo "full disk: one clear error, nothing partial, next run succeeded"

# Never overwrite: a run whose target name exists fails and leaves it alone.
echo "not a snapshot" >"$SNAP_WORK/occupied"
later=$((now + SNAP_DAY))
local_put "$SNAP_PREFIX/v2/Full-00000000-00002300-$later.gz.final" "$SNAP_WORK/occupied"
if WARDEN_SNAPSHOT_NOW=$later "$WARDEN_SNAPSHOT" extend-snapshot-immutability "${flags[@]}" \
    --store-prefix "$SNAP_PREFIX" --gc-from-timestamp "$SNAP_GC_FROM" 2>"$SNAP_WORK/exists.log"; then
    snap_fail "extend overwrote an existing object"
fi
cmp -s "$store/$SNAP_PREFIX/v2/Full-00000000-00002300-$later.gz.final" "$SNAP_WORK/occupied" ||
    snap_fail "an existing object was overwritten"
grep '"level":"error"' "$SNAP_WORK/exists.log" | grep -Eq 'already exists|not older than now' ||
    { cat "$SNAP_WORK/exists.log"; snap_fail "no clear error for an existing target"; }

# Dry run changes nothing.
before=$(local_ls "shoot--dev--main/" | sort | md5sum)
WARDEN_SNAPSHOT_NOW=$((later + SNAP_DAY)) "$WARDEN_SNAPSHOT" extend-snapshot-immutability \
    "${flags[@]}" --store-prefix "$SNAP_PREFIX" --gc-from-timestamp "$SNAP_GC_FROM" --dry-run 2>/dev/null
[ "$before" = "$(local_ls "shoot--dev--main/" | sort | md5sum)" ] || snap_fail "dry run changed the store"

# The final snapshot taken in the same second as the task was created (its creation
# time equals --gc-from-timestamp) is the sidecar's snapshot, not a copy: two days of
# runs keep it and collect only the first day's copy.
same=$SNAP_WORK/same
mkdir -p "$same/p/v2"
t=1700100000
snap_fixture "$same/p/v2/Full-00000000-00000042-$t.gz.final" 512
for day in 1 2; do
    WARDEN_SNAPSHOT_NOW=$((t + day * SNAP_DAY)) "$WARDEN_SNAPSHOT" extend-snapshot-immutability \
        --storage-provider Local --store-container "$same" --store-prefix p \
        --gc-from-timestamp "$t" 2>"$SNAP_WORK/same.log" ||
        { cat "$SNAP_WORK/same.log"; snap_fail "extend (same second, day $day) failed"; }
done
[ -e "$same/p/v2/Full-00000000-00000042-$t.gz.final" ] ||
    snap_fail "the final snapshot of the task's creation second was collected"
[ ! -e "$same/p/v2/Full-00000000-00000042-$((t + SNAP_DAY)).gz.final" ] ||
    snap_fail "the first day's copy was not collected"
[ -e "$same/p/v2/Full-00000000-00000042-$((t + 2 * SNAP_DAY)).gz.final" ] ||
    snap_fail "the second day's copy is missing"
echo "same second: the sidecar's final snapshot kept, only the earlier copy collected"

# Providers not implemented yet, and usage errors.
for p in Swift openstack OSS alicloud; do
    rc=0
    "$WARDEN_SNAPSHOT" list --storage-provider $p --store-container x --store-prefix y 2>"$SNAP_WORK/p.log" ||
        rc=$?
    [ "$rc" = 2 ] || snap_fail "$p: exit $rc, want 2 (a usage error)"
    grep -q "storage provider $p is not supported yet" "$SNAP_WORK/p.log" || snap_fail "$p: unclear refusal"
done
set +e
"$WARDEN_SNAPSHOT" extend-snapshot-immutability "${flags[@]}" --store-prefix x 2>/dev/null
[ $? -eq 2 ] || snap_fail "missing --gc-from-timestamp is not a usage error"
set -e
echo "snapshot_local: ok"
