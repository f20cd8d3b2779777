#!/usr/bin/env bash
# The real backup sidecar (etcd-backup-restore's etcdbrctl, $WARDEN_ETCDBRCTL) against
# s3rver, with Debian's etcd, as the oracle for what etcd-warden calls overlapping prefixes:
#
# 1. cluster A's sidecar writes a full and a delta snapshot under p/etcd; etcdbrctl restore
#    of p/etcd restores it;
# 2. cluster B, with more revisions, writes a newer full snapshot under p/etcd-2: the
#    sidecar's listing of p/etcd (a plain string) now returns it, and etcdbrctl restore of
#    p/etcd fails (NoSuchKey), while warden-snapshot check-prefixes reports the pair and
#    that restore as broken;
# 3. warden-snapshot delete-snapshots of p/etcd-2 empties it; check-prefixes is clean and
#    etcdbrctl restore of p/etcd restores A key for key (etcd started on the restored data
#    directory, compared with A's own `etcdctl get "" --prefix`);
# 4. the sidecar of the prefix /pl/x writes its snapshots at pl/x/... (its S3 client cleans
#    the request path); delete-snapshots --store-prefix /pl/x deletes all of them;
# 5. cluster C under r/a, cluster D with more revisions under r/a/b: etcdbrctl restore of
#    r/a succeeds and gives D's keys, as check-prefixes says ("restore wrong-data").
#
# Skipped (77) without $WARDEN_ETCDBRCTL or etcd.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
snap_need_sidecar

snap_s3_start

# restore PREFIX NAME: etcdbrctl restore into $SNAP_WORK/restore-NAME/data (status in RC,
# log in $SNAP_WORK/restore-NAME.log); RESTORE_PEER is the peer port it records.
restore() {
    local prefix=$1 name=$2 d=$SNAP_WORK/restore-$2
    RESTORE_PEER=$(snap_free_port)
    mkdir -p "$d"
    set +e
    (cd "$d" && timeout 120 "$WARDEN_ETCDBRCTL" restore --storage-provider S3 \
        --store-container "$SNAP_BUCKET" --store-prefix "$prefix" --data-dir "$d/data" \
        --name "$name" --initial-cluster "$name=http://127.0.0.1:$RESTORE_PEER" \
        --initial-advertise-peer-urls "http://127.0.0.1:$RESTORE_PEER" \
        --snapstore-temp-directory "$d") >"$SNAP_WORK/restore-$name.log" 2>&1
    RC=$?
    set -e
}

# same_data NAME WANT: etcd on the restored data directory of NAME holds exactly WANT's keys.
same_data() {
    local name=$1 want=$2
    snap_etcd_start "$name" "$SNAP_WORK/restore-$name/data" "$RESTORE_PEER"
    snap_etcd_dump "$SNAP_ETCD_URL" >"$SNAP_WORK/$name.dump"
    diff "$want" "$SNAP_WORK/$name.dump" >&2 || snap_fail "$name: the restored keys differ"
    snap_kill "$SNAP_ETCD_PID"
}


# 1. cluster A under p/etcd: a full snapshot, then a delta holding every later revision
snap_etcd_start a
a_url=$SNAP_ETCD_URL a_pid=$SNAP_ETCD_PID
for i in 1 2 3; do snap_etcdctl "$a_url" put "/registry/a/$i" "a-value-$i" >/dev/null; done
snap_brctl_snapshot a "$a_url" p/etcd
snap_wait_key p/etcd/ '^p/etcd/v2/Full-'
for i in 4 5; do snap_etcdctl "$a_url" put "/registry/a/$i" "a-value-$i" >/dev/null; done
snap_etcdctl "$a_url" del /registry/a/2 >/dev/null
a_rev=$(snap_etcd_rev "$a_url")
snap_wait_key p/etcd/ "^p/etcd/v2/Incr-[0-9]{8}-0*$a_rev-"
snap_kill "$SNAP_BR_PID"
snap_etcd_dump "$a_url" >"$SNAP_WORK/a.want"
[ "$(grep -c '^/registry/a/' "$SNAP_WORK/a.want")" -eq 4 ] || snap_fail "cluster A's keys: $(cat "$SNAP_WORK/a.want")"
snap_kill "$a_pid"
snap_s3 ls p/ | sort >"$SNAP_WORK/a.keys"
echo "cluster A (revision $a_rev) under p/etcd: $(tr '\n' ' ' <"$SNAP_WORK/a.keys")"
restore p/etcd r1
[ $RC -eq 0 ] || { tail -20 "$SNAP_WORK/restore-r1.log"; snap_fail "restore of p/etcd alone failed"; }
same_data r1 "$SNAP_WORK/a.want"
snap_check_prefixes 0
echo "ok: etcdbrctl restore of p/etcd alone restores A key for key; check-prefixes is clean"

# 2. cluster B under p/etcd-2, with more revisions: a newer full snapshot
snap_etcd_start b
b_url=$SNAP_ETCD_URL b_pid=$SNAP_ETCD_PID
for i in $(seq 1 $((a_rev + 5))); do snap_etcdctl "$b_url" put "/registry/b/$i" "b-value-$i" >/dev/null; done
b_rev=$(snap_etcd_rev "$b_url")
snap_brctl_snapshot b "$b_url" p/etcd-2
snap_wait_key p/etcd-2/ "^p/etcd-2/v2/Full-00000000-0*$b_rev-"
snap_kill "$SNAP_BR_PID"
snap_kill "$b_pid"
restore p/etcd r2
[ $RC -ne 0 ] || snap_fail "etcdbrctl restore of p/etcd succeeded beside p/etcd-2's newer full snapshot"
snap_has NoSuchKey "$SNAP_WORK/restore-r2.log" ||
    { tail -20 "$SNAP_WORK/restore-r2.log"; snap_fail "the failed restore does not say NoSuchKey"; }
# the key it rebuilt: path.Join("p/etcd", "-2/v2/<name>")
missing=$(grep -oE "p/etcd/-2/v2/Full-00000000-0*$b_rev-[0-9]+" "$SNAP_WORK/restore-r2.log" | head -1)
[ -n "$missing" ] || { tail -20 "$SNAP_WORK/restore-r2.log"; snap_fail "the failed restore does not name p/etcd/-2/v2/..."; }
echo "ok: etcdbrctl restore of p/etcd fails beside p/etcd-2 (revision $b_rev): NoSuchKey for $missing"
snap_check_prefixes 1
cat "$SNAP_WORK/check.out"
snap_has -x 'overlap: "p/etcd" and "p/etcd-2": restore fails' "$SNAP_WORK/check.out" ||
    snap_fail "check-prefixes does not report the pair as breaking p/etcd's restore"
snap_has -F "it takes the newer full snapshot p/etcd-2/v2/Full-00000000-$(printf '%08d' "$b_rev")-" "$SNAP_WORK/check.out" ||
    snap_fail "check-prefixes does not name p/etcd-2's full snapshot"

# 3. p/etcd-2 deleted: the sidecar's listing of p/etcd holds A's snapshots only again
snap_run delete-snapshots --storage-provider S3 --store-container "$SNAP_BUCKET" \
    --store-prefix p/etcd-2 >"$SNAP_WORK/del.out" 2>"$SNAP_WORK/del.err" ||
    { cat "$SNAP_WORK/del.err"; snap_fail "delete-snapshots of p/etcd-2 failed"; }
tail -1 "$SNAP_WORK/del.out" | snap_has '"remaining":0,.*"foreign":0' || snap_fail "delete-snapshots said $(tail -1 "$SNAP_WORK/del.out")"
[ -z "$(snap_s3 ls p/etcd-2)" ] || snap_fail "left under p/etcd-2: $(snap_s3 ls p/etcd-2)"
diff "$SNAP_WORK/a.keys" <(snap_s3 ls p/ | sort) >&2 || snap_fail "cluster A's snapshots changed"
snap_check_prefixes 0
restore p/etcd r3
[ $RC -eq 0 ] || { tail -20 "$SNAP_WORK/restore-r3.log"; snap_fail "restore of p/etcd failed after the deletion"; }
same_data r3 "$SNAP_WORK/a.want"
echo "ok: p/etcd-2 deleted, etcdbrctl restore of p/etcd restores A key for key again"

# 4. the sidecar of /pl/x writes pl/x/...; delete-snapshots /pl/x deletes them all
snap_etcd_start c
c_url=$SNAP_ETCD_URL
snap_etcdctl "$c_url" put /registry/c/1 c >/dev/null
snap_brctl_snapshot c "$c_url" /pl/x
snap_wait_key pl/ '^pl/x/v2/Full-'
snap_etcdctl "$c_url" put /registry/c/2 c >/dev/null
snap_wait_key pl/ '^pl/x/v2/Incr-'
snap_kill "$SNAP_BR_PID"
n=$(snap_s3 ls pl/ | wc -l)
[ -z "$(snap_s3 ls /pl)" ] || snap_fail "the sidecar wrote keys starting with /"
snap_run delete-snapshots --storage-provider S3 --store-container "$SNAP_BUCKET" \
    --store-prefix /pl/x >"$SNAP_WORK/del.out" 2>"$SNAP_WORK/del.err" ||
    { cat "$SNAP_WORK/del.err"; snap_fail "delete-snapshots of /pl/x failed"; }
tail -1 "$SNAP_WORK/del.out" | snap_has "\"objectPrefix\":\"pl/x\",\"objectPrefix2\":\"/pl/x\",\"deleted\":$n,.*\"remaining\":0," ||
    snap_fail "delete-snapshots of /pl/x said $(tail -1 "$SNAP_WORK/del.out"), the sidecar wrote $n"
[ -z "$(snap_s3 ls pl/)" ] || snap_fail "left under pl/: $(snap_s3 ls pl/)"
diff "$SNAP_WORK/a.keys" <(snap_s3 ls "" | sort) >&2 || snap_fail "objects of other prefixes changed"
echo "ok: the sidecar of /pl/x wrote $n snapshots at pl/x/, delete-snapshots --store-prefix /pl/x deleted them, 0 left"
# 5. r/a beside r/a/b: the rebuilt key path.Join("r/a", "/b/v2/<name>") exists
snap_brctl_snapshot c2 "$c_url" r/a
snap_wait_key r/a/ '^r/a/v2/Full-'
snap_kill "$SNAP_BR_PID"
snap_kill "$SNAP_ETCD_PID"
snap_etcd_start d
d_url=$SNAP_ETCD_URL
for i in $(seq 1 12); do snap_etcdctl "$d_url" put "/registry/d/$i" "d-value-$i" >/dev/null; done
d_rev=$(snap_etcd_rev "$d_url")
snap_brctl_snapshot d "$d_url" r/a/b
snap_wait_key r/a/b/ "^r/a/b/v2/Full-00000000-0*$d_rev-"
snap_kill "$SNAP_BR_PID"
snap_etcd_dump "$d_url" >"$SNAP_WORK/d.want"
snap_kill "$SNAP_ETCD_PID"
snap_check_prefixes 1
snap_has -x 'overlap: "r/a" and "r/a/b": restore wrong-data' "$SNAP_WORK/check.out" ||
    { cat "$SNAP_WORK/check.out"; snap_fail "check-prefixes does not report r/a's restore as taking r/a/b's data"; }
restore r/a r5
[ $RC -eq 0 ] || { tail -20 "$SNAP_WORK/restore-r5.log"; snap_fail "restore of r/a failed"; }
same_data r5 "$SNAP_WORK/d.want"
echo "ok: etcdbrctl restore of r/a beside r/a/b's newer full snapshot restores r/a/b's keys"
echo "sidecar_prefixes: ok"
