#!/usr/bin/env bash
# warden-snapshot check-prefixes on s3rver, Azurite and a Local directory: an empty
# container and one whose cluster prefixes are apart are clean (exit 0); overlapping
# prefixes are reported with what they do to the shorter prefix's restore (exit 1). On S3
# and ABS the sidecar lists a prefix as a plain string: p/etcd beside p/etcd-2 holding a
# newer full snapshot fails (NoSuchKey) on an unversioned S3 bucket, whose listing the
# sidecar rebuilds, and restores p/etcd-2's data on ABS, whose whole keys it parses (its
# garbage collection then deletes p/etcd-2's snapshots); q/etcd beside an older
# q/etcd-events is at risk;
# on Local it walks the prefix's directory, so both pairs are apart. Everywhere r/a around
# r/a/b's newer snapshot restores the wrong data. The same in --json. Once p/etcd-2 is
# deleted that pair is gone. A missing flag is a usage error (2), a missing bucket 3.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

keys=(p/etcd/v2/Full-00000000-00000010-1700000000.gz
      p/etcd/v2/Incr-00000011-00000020-1700000100.gz
      p/etcd-2/v2/Full-00000000-00000500-1700000500.gz
      q/etcd/v1/Backup-1700000000/Full-00000000-00000300-1700000000
      q/etcd-events/v2/Full-00000000-00000100-1700000000.gz
      r/a/v2/Full-00000000-00000010-1700000000.gz
      r/a/b/v2/Full-00000000-00000040-1700000000.gz
      r/a/b/v2/Full-00000000-00000050-1700000900.gz/0000000001
      s/x/v2/Full-00000000-00000010-1700000000.gz
      s/y/v2/Full-00000000-00000099-1700000000.gz
      s/y/v2/README.txt)
snap_fixture "$SNAP_WORK/obj" 2000 obj

check() { # store-name, what p/etcd's and q/etcd's restores are, then the store flags; PUT and RM set
    local name=$1 p_is=$2 q_is=$3 rc k
    shift 3
    check_run() {
        set +e
        snap_run check-prefixes "$@" >"$SNAP_WORK/out" 2>"$SNAP_WORK/err"
        rc=$?
        set -e
    }
    check_run "$@"
    [ $rc -eq 0 ] || { cat "$SNAP_WORK/out" "$SNAP_WORK/err"; snap_fail "$name: empty container: exit $rc"; }
    snap_has -x "check-prefixes: .*: 0 objects, 0 cluster prefixes with snapshots, 0 overlapping pairs" "$SNAP_WORK/out" ||
        snap_fail "$name: empty container said $(cat "$SNAP_WORK/out")"
    for k in s/x/v2/Full-00000000-00000010-1700000000.gz s/y/v2/Full-00000000-00000099-1700000000.gz; do
        "$PUT" "$k" "$SNAP_WORK/obj"
    done
    check_run "$@"
    [ $rc -eq 0 ] || { cat "$SNAP_WORK/out"; snap_fail "$name: prefixes apart: exit $rc"; }
    for k in "${keys[@]}"; do "$PUT" "$k" "$SNAP_WORK/obj"; done
    check_run "$@"
    [ $rc -eq 1 ] || { cat "$SNAP_WORK/out" "$SNAP_WORK/err"; snap_fail "$name: pairs: exit $rc"; }
    cat "$SNAP_WORK/out"
    snap_has -x ".*: 11 objects, 8 cluster prefixes with snapshots, 3 overlapping pairs" "$SNAP_WORK/out" ||
        snap_fail "$name: counts"
    snap_has -x "overlap: \"p/etcd\" and \"p/etcd-2\": restore $p_is" "$SNAP_WORK/out" || snap_fail "$name: p pair"
    if [ "$p_is" = fails ]; then
        snap_has -F 'restore of "p/etcd" fails with NoSuchKey: it takes the newer full snapshot p/etcd-2/v2/Full-00000000-00000500-1700000500.gz' "$SNAP_WORK/out" ||
            snap_fail "$name: p pair's restore"
    elif [ "$p_is" = wrong-data ]; then # whole keys parsed: the sibling's data, its GC deletes the sibling's
        snap_has -F 'restore of "p/etcd" restores the data of "p/etcd-2": it takes the newer full snapshot p/etcd-2/v2/Full-00000000-00000500-1700000500.gz; its garbage collection deletes snapshots of "p/etcd-2" as its own' "$SNAP_WORK/out" ||
            snap_fail "$name: p pair's restore"
    fi
    snap_has -x "overlap: \"q/etcd\" and \"q/etcd-events\": restore $q_is" "$SNAP_WORK/out" || snap_fail "$name: q pair"
    snap_has -x 'overlap: "r/a" and "r/a/b": restore wrong-data' "$SNAP_WORK/out" || snap_fail "$name: r pair"
    if grep '"s/' "$SNAP_WORK/out"; then snap_fail "$name: s/x and s/y reported"; fi
    set +e
    snap_run check-prefixes "$@" --json >"$SNAP_WORK/json"
    rc=$?
    set -e
    [ $rc -eq 1 ] || snap_fail "$name: --json: exit $rc"
    python3 - "$SNAP_WORK/json" "$p_is" "$q_is" <<'PY' || snap_fail "$name: --json report"
import json, sys
r = json.load(open(sys.argv[1]))
got = sorted((o["shorter"], o["longer"], o["restore"], o["breaks"], o["newerFull"]) for o in r["overlaps"])
want = [("p/etcd", "p/etcd-2", sys.argv[2], "p/etcd" if sys.argv[2] != "apart" else None, True),
        ("q/etcd", "q/etcd-events", sys.argv[3], None, False),
        ("r/a", "r/a/b", "wrong-data", "r/a", True)]
assert got == want, got
p = {x["prefix"]: x for x in r["prefixes"]}
assert p["p/etcd"]["snapshots"] == 2 and p["r/a/b"]["snapshots"] == 2, p
assert p["r/a/b"]["latestFull"] == "r/a/b/v2/Full-00000000-00000040-1700000000.gz", p
PY
    "$RM" p/etcd-2/v2/Full-00000000-00000500-1700000500.gz
    check_run "$@"
    [ $rc -eq 1 ] || snap_fail "$name: after the deletion: exit $rc"
    if grep 'p/etcd-2' "$SNAP_WORK/out"; then snap_fail "$name: the deleted prefix is still reported"; fi
    snap_has ', 2 overlapping pairs$' "$SNAP_WORK/out" || snap_fail "$name: after the deletion: $(head -1 "$SNAP_WORK/out")"
    echo "ok: $name"
}

store=$SNAP_WORK/store
mkdir -p "$store"
local_put() { mkdir -p "$(dirname "$store/$1")" && cp "$2" "$store/$1"; }
local_rm() { rm "$store/$1"; }
PUT=local_put RM=local_rm check Local apart apart --storage-provider Local --store-container "$store"

snap_s3_start
s3_put() { snap_s3 put "$1" "$2"; }
s3_rm() { snap_s3 rm "$1"; }
PUT=s3_put RM=s3_rm check S3 fails at-risk --storage-provider S3 --store-container "$SNAP_BUCKET"

snap_abs_start
abs_put() { snap_abs put "$1" "$2"; }
abs_rm() { snap_abs rm "$1"; }
PUT=abs_put RM=abs_rm check ABS wrong-data at-risk --storage-provider ABS --store-container "$SNAP_BUCKET"

set +e
snap_run check-prefixes --storage-provider S3 >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || snap_fail "no container: exit $rc"
snap_run check-prefixes --storage-provider S3 --store-container no-such-bucket >/dev/null 2>"$SNAP_WORK/err"
rc=$?
set -e
[ $rc -eq 3 ] || { cat "$SNAP_WORK/err"; snap_fail "a missing bucket: exit $rc"; }
snap_has '"level":"error".*check-prefixes failed' "$SNAP_WORK/err" || snap_fail "no error line for the missing bucket"
echo "snapshot_check_prefixes: ok"
