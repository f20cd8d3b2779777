#!/usr/bin/env bash
# warden-snapshot delete-snapshots of a prefix with a leading '/', where the backup
# sidecar writes it: on S3 its client cleans the request path, so the snapshots of
# "/pl/x" are the objects "pl/x/..."; on Local it joins container and prefix, so "/ld/x"
# is the directory "<container>/ld/x". Every one of them is deleted (the summary names
# the object prefix), the prefix is emptied, the objects of another prefix stay.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

echo snapshot >"$SNAP_WORK/obj"
names=(v2/Full-00000000-00000100-1700000000.gz
       v2/Incr-00000101-00000200-1700000100.gz
       v1/Backup-1600000000/Full-00000000-00000050-1600000000)

summary() { tail -1 "$SNAP_WORK/out"; }
check() { # store-name, object prefix, store prefix, then the store flags; PUT and LS set
    local name=$1 obj=$2 prefix=$3 n
    shift 3
    for n in "${names[@]}"; do "$PUT" "$obj/$n" "$SNAP_WORK/obj"; done
    "$PUT" "pl/other/${names[0]}" "$SNAP_WORK/obj"
    [ "$("$LS" "$obj/" | wc -l)" -eq 3 ] || snap_fail "$name: seeding"
    snap_run delete-snapshots "$@" --store-prefix "$prefix" >"$SNAP_WORK/out" 2>"$SNAP_WORK/err" ||
        { cat "$SNAP_WORK/err"; snap_fail "$name: delete failed"; }
    [ "$(summary)" = "{\"prefix\":\"$prefix\",\"objectPrefix\":\"$obj\",\"deleted\":3,\"locked\":0,\"failed\":0,\"remaining\":0,\"earliestDeletable\":null,\"dryRun\":false,\"foreign\":0,\"foreignKeys\":[]}" ] ||
        snap_fail "$name: delete said $(summary)"
    [ -z "$("$LS" "$obj/")" ] || snap_fail "$name: left under $obj: $("$LS" "$obj/")"
    [ "$("$LS" pl/other/)" = "pl/other/${names[0]}" ] || snap_fail "$name: another prefix was touched"
    echo "ok: $name: $prefix deleted at $obj/"
}

store=$SNAP_WORK/store
mkdir -p "$store"
local_put() { mkdir -p "$(dirname "$store/$1")" && cp "$2" "$store/$1"; }
local_ls() { [ -d "$store/$1" ] || return 0; (cd "$store" && find "${1%/}" -type f | sort); }
PUT=local_put LS=local_ls check Local ld/x /ld/x --storage-provider Local --store-container "$store"

snap_s3_start
s3_put() { snap_s3 put "$1" "$2"; }
s3_ls() { snap_s3 ls "$1" | sort; }
PUT=s3_put LS=s3_ls check S3 pl/x /pl/x --storage-provider S3 --store-container "$SNAP_BUCKET"
PUT=s3_put LS=s3_ls check S3-dotted pl/y //pl/./y/ --storage-provider aws --store-container "$SNAP_BUCKET"
echo "snapshot_delete_rooted: ok"
