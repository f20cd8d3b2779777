#!/usr/bin/env bash
# warden-snapshot verify against the real tool: a corpus of chains, good and broken, made by
# the real `etcdbrctl server` beside Debian's etcd (uncompressed, gzip, zlib, lzw; the keys
# and revision recorded once the last delta holds them) and then damaged in copies: a
# missing delta, the first delta missing (a revision gap), an overlapping delta, two deltas'
# contents swapped under their names (as many revisions each, keys of their own: both tools
# find it restorable, with the recorded data), a truncated full snapshot, a flipped byte in a full snapshot (plain and gzip) and
# in a delta, a wrong delta hash, a wrong full snapshot trailer, a sibling prefix's newer
# snapshot mixed into the listing, a sibling's older one, a nested prefix's newer full
# snapshot (restored without complaint: the wrong data), a v1 layout.
# The oracle: a chain is restorable exactly when `etcdbrctl restore` succeeds and etcd
# started on its result serves the recorded keys and values at the recorded revision.
# verify's exit status must say the same on every chain, and on the restorable ones its
# revision and key count must be what that etcd reports. Prints the corpus size and the
# agreement (18 chains). Skipped (77) without $WARDEN_ETCDBRCTL or etcd.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
snap_need_sidecar
DAMAGE="python3 $(dirname "$0")/../support/chain_damage.py"
snap_s3_start

# ---- sources: one chain per compression ----
# src/<c>: a full snapshot of 40 keys, then deltas of puts, overwrites, deletes and a
# multi-key transaction, about one per second; recorded in $SNAP_WORK/rec-<c>.{dump,rev}.
make_source() {
    local c=$1 flags=() url port n i
    case $c in
    none) flags=(--compress-snapshots=false) ;;
    *) flags=(--compression-policy "$c") ;;
    esac
    local peer
    peer=$(snap_free_port)
    snap_etcd_start "src-$c" "" "$peer"
    url=$SNAP_ETCD_URL
    local etcd_pid=$SNAP_ETCD_PID
    for i in $(seq 1 40); do snap_etcdctl "$url" put "/registry/full/$i" "v$i" >/dev/null; done
    port=$(snap_free_port)
    snap_brctl_server "src-$c" "$url" "$peer" "src/$c" "$port" --delta-snapshot-period 1s "${flags[@]}"
    for n in 1 2 3 4 5; do
        snap_etcdctl "$url" put "/registry/d$n/a" "a$n" >/dev/null
        snap_etcdctl "$url" put "/registry/full/$n" "over$n" >/dev/null
        snap_etcdctl "$url" del "/registry/full/$((n + 10))" >/dev/null
        snap_etcdctl "$url" txn <<TXN >/dev/null

put /registry/d$n/t1 x
put /registry/d$n/t2 y
del /registry/full/$((n + 20))


TXN
        local before deadline=$((SECONDS + 120))
        before=$(snap_s3 ls "src/$c/v2/" | grep -c Incr- || true)
        until [ "$(snap_s3 ls "src/$c/v2/" | grep -c Incr- || true)" -gt "$before" ]; do
            [ $SECONDS -lt $deadline ] || snap_fail "no new delta of src/$c"
            sleep 0.2
        done
    done
    local rev
    rev=$(snap_etcd_rev "$url")
    deadline=$((SECONDS + 30))
    until snap_s3 ls "src/$c/v2/" | snap_has -E "Incr-[0-9]+-$(printf %08d "$rev")-"; do
        [ $SECONDS -lt $deadline ] || snap_fail "no delta of src/$c up to revision $rev"
        sleep 0.2
    done
    snap_etcd_dump "$url" >"$SNAP_WORK/rec-$c.dump"
    echo "$rev" >"$SNAP_WORK/rec-$c.rev"
    snap_kill "$SNAP_BR_PID"
    snap_kill "$etcd_pid"
    mkdir -p "$SNAP_WORK/obj/$c"
    for k in $(snap_s3 ls "src/$c/v2/"); do snap_s3 get "$k" >"$SNAP_WORK/obj/$c/${k##*/}"; done
    echo "source $c: revision $rev, $(ls "$SNAP_WORK/obj/$c" | wc -l) objects"
}
for c in none gzip zlib lzw; do make_source "$c"; done

# ---- the corpus: corpus/<case>, each with the source whose state a good restore gives ----
declare -A SRC
objs() { ls "$SNAP_WORK/obj/$1" | sort -t- -k3,3n -k4,4n; }
fulls() { objs "$1" | grep '^Full-'; }
deltas() { objs "$1" | grep '^Incr-'; }
put() { snap_s3 put "corpus/$1" "$2"; } # put CASE/KEY FILE
copy_chain() { # copy_chain CASE SOURCE [SKIP...]: SOURCE's objects under corpus/CASE/v2
    local case=$1 c=$2 f
    shift 2
    SRC[$case]=$c
    for f in $(objs "$c"); do
        printf '%s\n' "$@" | grep -qxF "$f" && continue
        put "$case/v2/$f" "$SNAP_WORK/obj/$c/$f"
    done
}
nth_delta() { deltas "$1" | sed -n "${2}p"; }
dmg() { $DAMAGE "$1" "$SNAP_WORK/obj/$2/$3" "$SNAP_WORK/damaged"; }
later() { local n=$1 t=${1##*-}; t=${t%%.*}; echo "${n%-*}-$((t + 1))${n##*-$t}"; }

i=0
for c in none gzip zlib lzw; do i=$((i + 1)); copy_chain "c0$i-good-$c" "$c"; done
d2=$(nth_delta none 2)
copy_chain c05-missing-delta none "$d2"
copy_chain c06-revision-gap gzip "$(nth_delta gzip 1)"
d3=$(nth_delta zlib 3)
copy_chain c07-overlap zlib
put "c07-overlap/v2/$(later "$d3")" "$SNAP_WORK/obj/zlib/$d3"
a=$(nth_delta lzw 2) b=$(nth_delta lzw 3)
copy_chain c08-swapped lzw "$a" "$b"
put "c08-swapped/v2/$a" "$SNAP_WORK/obj/lzw/$b"
put "c08-swapped/v2/$b" "$SNAP_WORK/obj/lzw/$a"
f=$(fulls none | tail -1)
copy_chain c09-truncated-full none "$f"; dmg truncate none "$f"; put "c09-truncated-full/v2/$f" "$SNAP_WORK/damaged"
copy_chain c10-flipped-full none "$f"; dmg flip none "$f"; put "c10-flipped-full/v2/$f" "$SNAP_WORK/damaged"
copy_chain c12-wrong-full-hash none "$f"; dmg rehash none "$f"; put "c12-wrong-full-hash/v2/$f" "$SNAP_WORK/damaged"
g=$(fulls gzip | tail -1)
copy_chain c11-flipped-gzip-full gzip "$g"; dmg flip gzip "$g"; put "c11-flipped-gzip-full/v2/$g" "$SNAP_WORK/damaged"
copy_chain c13-flipped-delta none "$d2"; dmg flip none "$d2"; put "c13-flipped-delta/v2/$d2" "$SNAP_WORK/damaged"
copy_chain c14-wrong-delta-hash none "$d2"; dmg rehash none "$d2"; put "c14-wrong-delta-hash/v2/$d2" "$SNAP_WORK/damaged"
# a sibling prefix (sib-2 next to sib): its full snapshot, newer than sib's, is selected by
# sib's restore, which fetches sib/-2/v2/...: NoSuchKey
copy_chain c15-sib gzip
hi=$(fulls zlib | tail -1)
put "c15-sib-2/v2/Full-00000000-00009999-${hi##*-}" "$SNAP_WORK/obj/zlib/$hi"
# an older sibling: never selected, the restore of c16-sibold is sound
copy_chain c16-sibold gzip
put "c16-sibold-2/v2/Full-00000000-00000001-1600000000.zlib" "$SNAP_WORK/obj/zlib/$hi"
# a nested prefix's newer full snapshot: the restore of nest takes nest/sub's data
copy_chain c17-nest gzip
put "c17-nest/sub/v2/Full-00000000-00009999-${hi##*-}" "$SNAP_WORK/obj/zlib/$hi"
# the v1 layout: <prefix>/v1/Backup-<ts>/<name>
SRC[c18-v1]=gzip
for o in $(objs gzip); do put "c18-v1/v1/Backup-1700000000/$o" "$SNAP_WORK/obj/gzip/$o"; done

# ---- the verdicts ----
oracle() { # oracle CASE: "restorable REV KEYS" or "broken WHY"
    local case=$1 d=$SNAP_WORK/restore-$1 peer rev keys
    peer=$(snap_free_port)
    mkdir -p "$d"
    if ! (cd "$d" && timeout 120 "$WARDEN_ETCDBRCTL" restore --storage-provider S3 \
        --store-container "$SNAP_BUCKET" --store-prefix "corpus/$case" --data-dir "$d/data" \
        --name restored --initial-cluster "restored=http://127.0.0.1:$peer" \
        --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
        --snapstore-temp-directory "$d") >"$d.log" 2>&1; then
        echo "broken restore-failed"
        return
    fi
    snap_etcd_start "r-$case" "$d/data" "$peer" >&2
    rev=$(snap_etcd_rev "$SNAP_ETCD_URL")
    keys=$(snap_etcdctl "$SNAP_ETCD_URL" get "" --prefix --keys-only -w json |
        python3 -c 'import json,sys; print(json.load(sys.stdin).get("count", 0))')
    snap_etcd_dump "$SNAP_ETCD_URL" >"$d.dump"
    snap_kill "$SNAP_ETCD_PID"
    if [ "$rev" != "$(cat "$SNAP_WORK/rec-${SRC[$case]}.rev")" ] ||
        ! cmp -s "$d.dump" "$SNAP_WORK/rec-${SRC[$case]}.dump"; then
        echo "broken wrong-data rev=$rev keys=$keys"
        return
    fi
    echo "restorable $rev $keys"
}
total=0 agree=0
for case in $(printf '%s\n' "${!SRC[@]}" | sort); do
    want=$(oracle "$case")
    set +e
    snap_run verify --storage-provider S3 --store-container "$SNAP_BUCKET" \
        --store-prefix "corpus/$case" --json >"$SNAP_WORK/v-$case.json" 2>"$SNAP_WORK/v-$case.err"
    st=$?
    set -e
    got=$(python3 - "$SNAP_WORK/v-$case.json" "$st" <<'PY'
import json, sys
st = int(sys.argv[2])
try:
    j = json.load(open(sys.argv[1]))
except Exception:
    print("error exit=%d" % st); sys.exit()
if st == 0 and j["restorable"]:
    print("restorable %d %d" % (j["revision"], j["keys"]))
elif st == 1 and not j["restorable"]:
    print("broken " + j["reason"].replace("\n", " "))
else:
    print("error exit=%d" % st)
PY
)
    total=$((total + 1))
    if { [ "${want%% *}" = restorable ] && [ "$want" = "$got" ]; } ||
        { [ "${want%% *}" = broken ] && [ "${got%% *}" = broken ]; }; then
        agree=$((agree + 1))
        echo "agree    $case: etcdbrctl: $want; verify: $got"
    else
        echo "DISAGREE $case: etcdbrctl: $want; verify: $got"
        cat "$SNAP_WORK/v-$case.err" "$SNAP_WORK/restore-$case.log" | grep -iE "error|fatal|fail" | tail -5 || true
    fi
done
echo "corpus: $total chains, verify agrees with etcdbrctl restore on $agree"
[ "$agree" -eq "$total" ] || snap_fail "verify disagrees with the real restore on $((total - agree)) chains"
