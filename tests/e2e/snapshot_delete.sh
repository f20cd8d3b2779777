#!/usr/bin/env bash
# warden-snapshot delete-snapshots on Local, s3rver and Azurite: a dry run deletes
# nothing and counts; the run deletes every object under the prefix as a path and
# nothing of the neighbour whose name starts alike (shoot--etcd-events next to
# shoot--etcd) nor of other prefixes; the last line is the JSON summary; a second run
# finds nothing; a prefix that is the whole store is a usage error (exit 2).
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

echo snapshot >"$SNAP_WORK/obj"
keys=(shoot--etcd/v2/Full-00000000-00000100-1700000000.gz
      shoot--etcd/v2/Incr-00000101-00000200-1700000100.gz
      shoot--etcd/v2/nested/member-0.json
      shoot--etcd-events/v2/Full-00000000-00000100-1700000000.gz
      other/shoot--etcd/v2/Full-00000000-00000100-1700000000.gz)

summary() { tail -1 "$SNAP_WORK/out"; }
check() { # store-name, then warden-snapshot's store flags; PUT and LS set
    local name=$1 rc
    shift
    for k in "${keys[@]}"; do "$PUT" "$k" "$SNAP_WORK/obj"; done
    snap_run delete-snapshots "$@" --store-prefix shoot--etcd --dry-run >"$SNAP_WORK/out" ||
        snap_fail "$name: dry run failed"
    [ "$(summary)" = '{"prefix":"shoot--etcd","deleted":0,"locked":0,"failed":0,"remaining":3,"earliestDeletable":null,"dryRun":true}' ] ||
        snap_fail "$name: dry run said $(summary)"
    [ "$("$LS" shoot--etcd/ | wc -l)" -eq 3 ] || snap_fail "$name: the dry run deleted"
    snap_run delete-snapshots "$@" --store-prefix shoot--etcd/ >"$SNAP_WORK/out" 2>"$SNAP_WORK/err" ||
        { cat "$SNAP_WORK/err"; snap_fail "$name: delete failed"; }
    [ "$(summary)" = '{"prefix":"shoot--etcd/","deleted":3,"locked":0,"failed":0,"remaining":0,"earliestDeletable":null,"dryRun":false}' ] ||
        snap_fail "$name: delete said $(summary)"
    [ -z "$("$LS" shoot--etcd/)" ] || snap_fail "$name: left under the prefix: $("$LS" shoot--etcd/)"
    [ "$("$LS" shoot--etcd-events/)" = "${keys[3]}" ] || snap_fail "$name: the neighbour was touched"
    [ "$("$LS" other/)" = "${keys[4]}" ] || snap_fail "$name: another prefix was touched"
    snap_run delete-snapshots "$@" --store-prefix shoot--etcd >"$SNAP_WORK/out" ||
        snap_fail "$name: second run failed"
    summary | snap_has '"deleted":0,.*"remaining":0' || snap_fail "$name: second run said $(summary)"
    set +e
    snap_run delete-snapshots "$@" --store-prefix ./ >"$SNAP_WORK/out" 2>&1
    rc=$?
    set -e
    [ $rc -eq 2 ] || snap_fail "$name: the whole store: exit $rc"
    [ "$("$LS" shoot--etcd-events/)" = "${keys[3]}" ] || snap_fail "$name: the whole store was touched"
    echo "ok: $name"
}

store=$SNAP_WORK/store
mkdir -p "$store"
local_put() { mkdir -p "$(dirname "$store/$1")" && cp "$2" "$store/$1"; }
local_ls() { [ -d "$store/$1" ] || return 0; (cd "$store" && find "${1%/}" -type f | sort); }
PUT=local_put LS=local_ls check Local --storage-provider Local --store-container "$store"

snap_s3_start
s3_put() { snap_s3 put "$1" "$2"; }
s3_ls() { snap_s3 ls "$1" | sort; }
PUT=s3_put LS=s3_ls check S3 --storage-provider S3 --store-container "$SNAP_BUCKET"

snap_abs_start
abs_put() { snap_abs put "$1" "$2"; }
abs_ls() { snap_abs ls "$1" | sort; }
PUT=abs_put LS=abs_ls check ABS --storage-provider ABS --store-container "$SNAP_BUCKET"
echo "snapshot_delete: ok"
