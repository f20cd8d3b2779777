#!/usr/bin/env bash
# warden-snapshot delete-snapshots of a prefix with a leading '/', where the backup
# sidecar writes it: on S3 its client cleans the request path, so the snapshots of
# "/pl/x" are the objects "pl/x/..."; on Local it joins container and prefix, so "/ld/x"
# is the directory "<container>/ld/x". From v0.37 the S3 client (aws-sdk-go-v2) keeps
# the '/': the same prefix is the objects "/pl/x/...". Every one of them, in both
# spellings, is deleted (the summary names the object prefixes), the prefix is emptied,
# the objects of another prefix stay. warden-snapshot copy reads such a source prefix in
# both spellings and refuses such a destination.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

echo snapshot >"$SNAP_WORK/obj"
names=(v2/Full-00000000-00000100-1700000000.gz
       v2/Incr-00000101-00000200-1700000100.gz
       v1/Backup-1600000000/Full-00000000-00000050-1600000000)

summary() { tail -1 "$SNAP_WORK/out"; }
check() { # store-name, object prefix, store prefix, then the store flags; PUT and LS set,
    # OBJ2 the second spelling's object prefix (S3) or unset, SEED2 set: objects there too
    local name=$1 obj=$2 prefix=$3 n want=3 two=""
    shift 3
    for n in "${names[@]}"; do "$PUT" "$obj/$n" "$SNAP_WORK/obj"; done
    [ -z "${OBJ2:-}" ] || two=",\"objectPrefix2\":\"$OBJ2\""
    if [ -n "${SEED2:-}" ]; then
        for n in "${names[@]}"; do "$PUT" "$OBJ2/$n" "$SNAP_WORK/obj"; done
        [ "$("$LS" "$OBJ2/" | wc -l)" -eq 3 ] || snap_fail "$name: seeding $OBJ2"
        want=6
    fi
    "$PUT" "pl/other/${names[0]}" "$SNAP_WORK/obj"
    [ "$("$LS" "$obj/" | wc -l)" -eq 3 ] || snap_fail "$name: seeding"
    snap_run delete-snapshots "$@" --store-prefix "$prefix" >"$SNAP_WORK/out" 2>"$SNAP_WORK/err" ||
        { cat "$SNAP_WORK/err"; snap_fail "$name: delete failed"; }
    [ "$(summary)" = "{\"prefix\":\"$prefix\",\"objectPrefix\":\"$obj\"$two,\"deleted\":$want,\"locked\":0,\"failed\":0,\"remaining\":0,\"earliestDeletable\":null,\"dryRun\":false,\"foreign\":0,\"foreignKeys\":[]}" ] ||
        snap_fail "$name: delete said $(summary)"
    [ -z "$("$LS" "$obj/")" ] || snap_fail "$name: left under $obj: $("$LS" "$obj/")"
    [ -z "${SEED2:-}" ] || [ -z "$("$LS" "$OBJ2/")" ] || snap_fail "$name: left under $OBJ2: $("$LS" "$OBJ2/")"
    [ "$("$LS" pl/other/)" = "pl/other/${names[0]}" ] || snap_fail "$name: another prefix was touched"
    echo "ok: $name: $prefix deleted at $obj/${SEED2:+ and $OBJ2/}"
}

store=$SNAP_WORK/store
mkdir -p "$store"
local_put() { mkdir -p "$(dirname "$store/$1")" && cp "$2" "$store/$1"; }
local_ls() { [ -d "$store/$1" ] || return 0; (cd "$store" && find "${1%/}" -type f | sort); }
PUT=local_put LS=local_ls check Local ld/x /ld/x --storage-provider Local --store-container "$store"

snap_s3_start
s3_put() { snap_s3 put "$1" "$2"; }
s3_ls() { snap_s3 ls "$1" | sort; }
OBJ2=/pl/x PUT=s3_put LS=s3_ls check S3 pl/x /pl/x --storage-provider S3 --store-container "$SNAP_BUCKET"
OBJ2=/pl/y PUT=s3_put LS=s3_ls check S3-dotted pl/y //pl/./y/ --storage-provider aws --store-container "$SNAP_BUCKET"
# s3rver cleans "//pl" itself; Ceph's RADOS Gateway keeps a key's leading '/', as AWS does
. "$(dirname "$0")/../lib/ceph-rgw.sh"
rgw_start
rgw_aws_credentials
rgw_s3 -X PUT "$RGW_URL/rooted" -o /dev/null
rgw_put() { rgw_s3 -T "$2" "$RGW_URL/rooted/$1" -o /dev/null; }
rgw_ls() { rgw_s3 "$RGW_URL/rooted?list-type=2&prefix=${1//\//%2F}" | grep -o '<Key>[^<]*</Key>' | sed 's/<[^>]*>//g' | sort || true; }
rgw_put "pl/other/${names[0]}" "$SNAP_WORK/obj"
SEED2=1 OBJ2=/pl/z PUT=rgw_put LS=rgw_ls check S3-v2 pl/z /pl/z --storage-provider s3 \
    --store-container rooted --store-endpoint-override "$RGW_URL"
# warden-snapshot copy from "/pl/c" reads both spellings (a cluster whose sidecar was
# upgraded past v0.37 wrote both); into an S3 prefix with a leading '/' it refuses to copy,
# as only one sidecar version would find the copies there
full=Full-00000000-00000100-1700000000.gz incr=Incr-00000101-00000200-1700000100.gz
rgw_put "pl/c/v2/$full" "$SNAP_WORK/obj"
rgw_put "/pl/c/v2/$incr" "$SNAP_WORK/obj"
copy_to() { # destination prefix
    snap_run copy --from-storage-provider aws --from-store-container rooted --from-store-prefix /pl/c \
        --from-store-endpoint-override "$RGW_URL" --to-storage-provider S3 --to-store-container rooted \
        --to-store-prefix "$1" --to-store-endpoint-override "$RGW_URL" --skip-hash-check \
        >"$SNAP_WORK/copy.out" 2>"$SNAP_WORK/copy.err"
}
copy_to pl/dst || { cat "$SNAP_WORK/copy.err"; snap_fail "copy from /pl/c failed"; }
expect_keys=$(printf 'pl/dst/v2/%s\npl/dst/v2/%s' "$full" "$incr")
[ "$(rgw_ls pl/dst/)" = "$expect_keys" ] || snap_fail "copied: $(rgw_ls pl/dst/)"
echo "ok: copy from /pl/c took the full of pl/c/ and the delta of /pl/c/"
rc=0
copy_to /pl/dst2 || rc=$?
[ $rc -eq 2 ] && grep -q 'v0.28.4 reads it as "pl/dst2", v0.37.0 and later as "/pl/dst2"' "$SNAP_WORK/copy.err" ||
    { cat "$SNAP_WORK/copy.err"; snap_fail "copy into /pl/dst2: exit $rc"; }
[ -z "$(rgw_ls pl/dst2)$(rgw_ls /pl/dst2)" ] || snap_fail "something copied into /pl/dst2"
echo "ok: copy into /pl/dst2 refused, nothing written"
echo "snapshot_delete_rooted: ok"
