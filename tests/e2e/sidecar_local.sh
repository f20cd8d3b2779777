#!/usr/bin/env bash
# The real backup sidecar (etcd-backup-restore's etcdbrctl, $WARDEN_ETCDBRCTL) on a Local
# store with Debian's etcd: it keeps the snapshots of container "bkt" and prefix "/ld/x" in
# the directory $HOME/bkt/ld/x (path.Join(home, container, prefix)); warden-snapshot
# delete-snapshots --storage-provider Local --store-container bkt --store-prefix /ld/x
# (container resolved against $HOME the same way) deletes every one of them, and leaves the
# neighbour directory ld/x2, which the sidecar's directory walk never lists.
# Skipped (77) without $WARDEN_ETCDBRCTL or etcd.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
snap_need_sidecar

export HOME=$SNAP_WORK/home
mkdir -p "$HOME/bkt/ld/x2/v2"
echo other >"$HOME/bkt/ld/x2/v2/Full-00000000-00000001-1700000000"
snap_etcd_start e
snap_etcdctl "$SNAP_ETCD_URL" put /registry/e/1 one >/dev/null
mkdir -p "$SNAP_WORK/br"
(cd "$SNAP_WORK/br" &&
    exec "$WARDEN_ETCDBRCTL" snapshot --storage-provider Local --store-container bkt \
        --store-prefix /ld/x --endpoints "$SNAP_ETCD_URL" --schedule '0 0 1 1 *' \
        --delta-snapshot-period 1s --garbage-collection-period 0 \
        --snapstore-temp-directory "$SNAP_WORK/br") >"$SNAP_WORK/br.log" 2>&1 &
br=$!
snap_on_exit "snap_kill $br"
files() { [ -d "$HOME/bkt/$1" ] || return 0; (cd "$HOME/bkt" && find "$1" -type f | sort); }
deadline=$((SECONDS + 60))
until files ld/x | snap_has -E '^ld/x/v2/Full-'; do
    [ $SECONDS -lt $deadline ] || { tail -20 "$SNAP_WORK/br.log"; snap_fail "no full snapshot in $HOME/bkt/ld/x"; }
    sleep 0.2
done
snap_etcdctl "$SNAP_ETCD_URL" put /registry/e/2 two >/dev/null
deadline=$((SECONDS + 60))
until files ld/x | snap_has -E '^ld/x/v2/Incr-'; do
    [ $SECONDS -lt $deadline ] || { tail -20 "$SNAP_WORK/br.log"; snap_fail "no delta snapshot in $HOME/bkt/ld/x"; }
    sleep 0.2
done
snap_kill "$br"
n=$(files ld/x | wc -l)
echo "the sidecar of /ld/x wrote: $(files ld/x | tr '\n' ' ')"
snap_run delete-snapshots --storage-provider Local --store-container bkt --store-prefix /ld/x \
    >"$SNAP_WORK/out" 2>"$SNAP_WORK/err" || { cat "$SNAP_WORK/err"; snap_fail "delete-snapshots failed"; }
[ "$(tail -1 "$SNAP_WORK/out")" = "{\"prefix\":\"/ld/x\",\"objectPrefix\":\"ld/x\",\"deleted\":$n,\"locked\":0,\"failed\":0,\"remaining\":0,\"earliestDeletable\":null,\"dryRun\":false,\"foreign\":0,\"foreignKeys\":[]}" ] ||
    snap_fail "delete-snapshots said $(tail -1 "$SNAP_WORK/out")"
[ -z "$(files ld/x)" ] || snap_fail "left in ld/x: $(files ld/x)"
[ "$(files ld/x2)" = ld/x2/v2/Full-00000000-00000001-1700000000 ] || snap_fail "the neighbour directory was touched"
echo "sidecar_local: ok: $n snapshots of /ld/x deleted, ld/x2 untouched"
