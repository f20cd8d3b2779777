#!/usr/bin/env bash
# warden-snapshot reads names, prefixes and the Local container as
# etcd-backup-restore does (Local provider): a full snapshot with a
# compression suffix it does not know (.zst) at the highest revision is the
# one copied, and the copy keeps the suffix; a --store-prefix with a trailing
# slash or doubled slashes names the same snapshots; a relative
# --store-container is resolved against $HOME ($HOME/<container>/<prefix>),
# as etcd-druid's CronJob passes it.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

home=$SNAP_WORK/home
store=$home/default.bkp
p=shoot--dev--main/etcd-main
mkdir -p "$store/$p/v2"
snap_fixture "$store/$p/v2/Full-00000000-00000100-1700000000.gz" 4096
snap_fixture "$store/$p/v2/Full-00000000-00000200-1700001000.zst.final" 5000 # stored as it is: .zst is not verified
snap_fixture "$store/$p/v2/Incr-00000101-00000200-1700000500.gz" 300
src=$store/$p/v2/Full-00000000-00000200-1700001000.zst.final

# list: the .zst full is a snapshot (compression=zst), not a foreign object.
HOME=$home snap_run list --storage-provider Local --store-container default.bkp \
    --store-prefix "$p" >"$SNAP_WORK/list.out" || snap_fail "list with a relative container failed"
[ "$(wc -l <"$SNAP_WORK/list.out")" -eq 3 ] || { cat "$SNAP_WORK/list.out"; snap_fail "not 3 snapshots"; }
grep -q "^$p/v2/Full-00000000-00000200-1700001000.zst.final kind=Full .* compression=zst final=true " \
    "$SNAP_WORK/list.out" || { cat "$SNAP_WORK/list.out"; snap_fail ".zst full not listed as upstream parses it"; }

# extend with a trailing slash and doubled slashes in the prefix, relative container.
day=1700086400
for pre in "$p/" "shoot--dev--main//etcd-main/"; do
    HOME=$home WARDEN_SNAPSHOT_NOW=$day snap_run extend-snapshot-immutability \
        --storage-provider Local --store-container default.bkp --store-prefix "$pre" \
        --gc-from-timestamp 1700002000 2>"$SNAP_WORK/ext.log" ||
        { cat "$SNAP_WORK/ext.log"; snap_fail "extend with prefix '$pre' failed"; }
    copy=$store/$p/v2/Full-00000000-00000200-$day.zst.final
    cmp -s "$copy" "$src" || { cat "$SNAP_WORK/ext.log"; snap_fail "the .zst full was not copied (prefix '$pre')"; }
    if find "$store" -path '*//*' | grep -q .; then snap_fail "a path with // was created"; fi
    day=$((day + 86400))
done
[ ! -e "$store/$p/v2/Full-00000000-00000200-1700086400.zst.final" ] ||
    snap_fail "the first day's copy was not collected under the cleaned prefix"
[ -e "$src" ] || snap_fail "the sidecar's .zst snapshot was collected"
echo "unknown compression suffix copied; prefix cleaned as upstream"

# A relative container without $HOME is refused with a clear line.
if env -u HOME "$WARDEN_SNAPSHOT" list --storage-provider Local --store-container default.bkp \
    --store-prefix "$p" 2>"$SNAP_WORK/nohome.log"; then
    snap_fail "a relative container without \$HOME was accepted"
fi
snap_has 'HOME' "$SNAP_WORK/nohome.log" || { cat "$SNAP_WORK/nohome.log"; snap_fail "unclear refusal without HOME"; }

# An absolute container is taken as it is, wherever $HOME points.
HOME=/nonexistent snap_run list --storage-provider Local --store-container "$store" \
    --store-prefix "$p" | snap_has "zst.final" || snap_fail "absolute container not used as is"
echo "snapshot_upstream_names: ok"
