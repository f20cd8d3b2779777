#!/usr/bin/env bash
# warden-snapshot delete-snapshots on Local, s3rver and Azurite: a dry run deletes
# nothing and counts; the run deletes every object under the prefix as a path and
# nothing of the neighbour whose name starts alike (shoot--etcd-events next to
# shoot--etcd) nor of other prefixes; the last line is the JSON summary. On S3 and ABS
# the sidecar lists "shoot--etcd" as a plain string, which returns the neighbour's
# objects: they are reported as foreign, the prefix is not emptied (exit 1) until they
# are gone; Local's sidecar walks the directory, which holds no neighbour. A second run
# deletes nothing; a prefix that is the whole store is a usage error (exit 2).
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

echo snapshot >"$SNAP_WORK/obj"
keys=(shoot--etcd/v2/Full-00000000-00000100-1700000000.gz
      shoot--etcd/v2/Incr-00000101-00000200-1700000100.gz
      shoot--etcd/v2/nested/member-0.json
      shoot--etcd-events/v2/Full-00000000-00000100-1700000000.gz
      other/shoot--etcd/v2/Full-00000000-00000100-1700000000.gz)

summary() { tail -1 "$SNAP_WORK/out"; }
# delete-snapshots with the arguments; exit status in RC, summary in $SNAP_WORK/out
del() {
    set +e
    snap_run delete-snapshots "$@" >"$SNAP_WORK/out" 2>"$SNAP_WORK/err"
    RC=$?
    set -e
}
check() { # store-name, mixes (1: its sidecar lists the prefix as a plain string), store flags
    local name=$1 mixes=$2 fk='' ev=${keys[3]} rc want
    shift 2
    for k in "${keys[@]}"; do "$PUT" "$k" "$SNAP_WORK/obj"; done
    [ "$mixes" = 1 ] && fk="\"$ev\""
    del "$@" --store-prefix shoot--etcd --dry-run
    # exits as the delete would: 1 while the listing holds a neighbour's objects
    [ $RC -eq "$mixes" ] || { cat "$SNAP_WORK/err"; snap_fail "$name: dry run exited $RC"; }
    want="{\"prefix\":\"shoot--etcd\",\"objectPrefix\":\"shoot--etcd\",\"deleted\":0,\"locked\":0,\"failed\":0,\"remaining\":$((3 + mixes)),\"earliestDeletable\":null,\"dryRun\":true,\"foreign\":$mixes,\"foreignKeys\":[$fk]}"
    [ "$(summary)" = "$want" ] || snap_fail "$name: dry run said $(summary)"
    [ "$("$LS" shoot--etcd/ | wc -l)" -eq 3 ] || snap_fail "$name: the dry run deleted"
    del "$@" --store-prefix shoot--etcd/
    want="{\"prefix\":\"shoot--etcd/\",\"objectPrefix\":\"shoot--etcd\",\"deleted\":3,\"locked\":0,\"failed\":0,\"remaining\":$mixes,\"earliestDeletable\":null,\"dryRun\":false,\"foreign\":$mixes,\"foreignKeys\":[$fk]}"
    [ "$(summary)" = "$want" ] || { cat "$SNAP_WORK/err"; snap_fail "$name: delete said $(summary)"; }
    # not emptied while the sidecar's listing of the prefix returns the neighbour's objects
    [ $RC -eq "$mixes" ] || { cat "$SNAP_WORK/err"; snap_fail "$name: delete exited $RC"; }
    if [ "$mixes" = 1 ]; then
        grep '"level":"error"' "$SNAP_WORK/err" | snap_has "$ev" ||
            { cat "$SNAP_WORK/err"; snap_fail "$name: no error line naming the foreign object"; }
    fi
    [ -z "$("$LS" shoot--etcd/)" ] || snap_fail "$name: left under the prefix: $("$LS" shoot--etcd/)"
    [ "$("$LS" shoot--etcd-events/)" = "$ev" ] || snap_fail "$name: the neighbour was touched"
    [ "$("$LS" other/)" = "${keys[4]}" ] || snap_fail "$name: another prefix was touched"
    del "$@" --store-prefix shoot--etcd
    [ $RC -eq "$mixes" ] || snap_fail "$name: second run exited $RC"
    summary | snap_has "\"deleted\":0,.*\"remaining\":$mixes," || snap_fail "$name: second run said $(summary)"
    if [ "$mixes" = 1 ]; then # the neighbour gone, the listing is empty: emptied
        "$RM" "$ev"
        del "$@" --store-prefix shoot--etcd
        [ $RC -eq 0 ] || snap_fail "$name: run without the neighbour exited $RC"
        summary | snap_has '"deleted":0,.*"remaining":0,.*"foreign":0,"foreignKeys":\[\]' ||
            snap_fail "$name: run without the neighbour said $(summary)"
        "$PUT" "$ev" "$SNAP_WORK/obj"
    fi
    set +e
    snap_run delete-snapshots "$@" --store-prefix ./ >"$SNAP_WORK/out" 2>&1
    rc=$?
    set -e
    [ $rc -eq 2 ] || snap_fail "$name: the whole store: exit $rc"
    [ "$("$LS" shoot--etcd-events/)" = "$ev" ] || snap_fail "$name: the whole store was touched"
    echo "ok: $name"
}

store=$SNAP_WORK/store
mkdir -p "$store"
local_put() { mkdir -p "$(dirname "$store/$1")" && cp "$2" "$store/$1"; }
local_ls() { [ -d "$store/$1" ] || return 0; (cd "$store" && find "${1%/}" -type f | sort); }
PUT=local_put LS=local_ls check Local 0 --storage-provider Local --store-container "$store"

snap_s3_start
s3_put() { snap_s3 put "$1" "$2"; }
s3_ls() { snap_s3 ls "$1" | sort; }
s3_rm() { snap_s3 rm "$1"; }
RM=s3_rm PUT=s3_put LS=s3_ls check S3 1 --storage-provider S3 --store-container "$SNAP_BUCKET"

snap_abs_start
abs_put() { snap_abs put "$1" "$2"; }
abs_ls() { snap_abs ls "$1" | sort; }
abs_rm() { snap_abs rm "$1"; }
RM=abs_rm PUT=abs_put LS=abs_ls check ABS 1 --storage-provider ABS --store-container "$SNAP_BUCKET"
echo "snapshot_delete: ok"
