#!/usr/bin/env bash
# The real backup sidecar (etcd-backup-restore's etcdbrctl, $WARDEN_ETCDBRCTL) on a Local
# store with Debian's etcd: it keeps the snapshots of container "bkt" and prefix "/ld/x" in
# the directory $HOME/bkt/ld/x (path.Join(home, container, prefix)); warden-snapshot
# delete-snapshots --storage-provider Local --store-container bkt --store-prefix /ld/x
# (container resolved against $HOME the same way) deletes every one of them, and leaves the
# neighbour directory ld/x2, which the sidecar's directory walk never lists.
# Then clusters E under p/etcd and F, with more revisions, under p/etcd-2: on Local the
# restore of p/etcd still restores E key for key (the walk of p/etcd never lists p/etcd-2),
# and check-prefixes reports the pair as "apart".
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
echo "ok: $n snapshots of /ld/x deleted, ld/x2 untouched"

# p/etcd beside p/etcd-2 on Local
e_url=$SNAP_ETCD_URL e_pid=$SNAP_ETCD_PID
snap_brctl_snapshot e "$e_url" p/etcd Local bkt
deadline=$((SECONDS + 60))
until files p/etcd | snap_has -E '^p/etcd/v2/Full-'; do
    [ $SECONDS -lt $deadline ] || { tail -5 "$SNAP_WORK/br-e.log"; snap_fail "no full snapshot of p/etcd"; }
    sleep 0.2
done
snap_kill "$SNAP_BR_PID"
snap_etcd_dump "$e_url" >"$SNAP_WORK/e.want"
snap_kill "$e_pid"
snap_etcd_start f
for i in $(seq 1 12); do snap_etcdctl "$SNAP_ETCD_URL" put "/registry/f/$i" f >/dev/null; done
f_rev=$(snap_etcd_rev "$SNAP_ETCD_URL")
snap_brctl_snapshot f "$SNAP_ETCD_URL" p/etcd-2 Local bkt
deadline=$((SECONDS + 60))
until files p/etcd-2 | snap_has -E "^p/etcd-2/v2/Full-00000000-0*$f_rev-"; do
    [ $SECONDS -lt $deadline ] || { tail -5 "$SNAP_WORK/br-f.log"; snap_fail "no full snapshot of p/etcd-2"; }
    sleep 0.2
done
snap_kill "$SNAP_BR_PID"
snap_kill "$SNAP_ETCD_PID"
peer=$(snap_free_port)
mkdir -p "$SNAP_WORK/r"
(cd "$SNAP_WORK/r" && timeout 120 "$WARDEN_ETCDBRCTL" restore --storage-provider Local \
    --store-container bkt --store-prefix p/etcd --data-dir "$SNAP_WORK/r/data" --name r \
    --initial-cluster "r=http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --snapstore-temp-directory "$SNAP_WORK/r") >"$SNAP_WORK/restore.log" 2>&1 ||
    { tail -20 "$SNAP_WORK/restore.log"; snap_fail "restore of p/etcd on Local failed beside p/etcd-2"; }
snap_etcd_start r "$SNAP_WORK/r/data" "$peer"
snap_etcd_dump "$SNAP_ETCD_URL" | diff "$SNAP_WORK/e.want" - >&2 || snap_fail "the restored keys differ from E's"
snap_check_prefixes 1 --storage-provider Local --store-container bkt
snap_has -x 'overlap: "p/etcd" and "p/etcd-2": restore apart' "$SNAP_WORK/check.out" ||
    { cat "$SNAP_WORK/check.out"; snap_fail "check-prefixes does not report the Local pair as apart"; }
echo "ok: on Local etcdbrctl restore of p/etcd beside p/etcd-2 restores E key for key; check-prefixes: apart"
echo "sidecar_local: ok"
