#!/usr/bin/env bash
# warden-snapshot copy between Local, S3 (s3rver) and ABS (Azurite) in every direction:
# --until takes what etcd-backup-restore's restore would (the latest full created at or
# before the time, then its deltas up to it; chunks, excluded and foreign objects never),
# --snapshot exactly one, each to <prefix>/v2/<name> with the source's bytes; a v1 source
# lands in v2; every store's credentials from its own directory; create-only (a second
# run refuses and changes nothing); faults mid-copy (a part refused, the second object's
# upload refused, damaged bytes read from the source, SIGTERM) leave nothing under the
# destination prefix; a 40 MiB snapshot is copied within 32 MiB of peak RSS.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

snap_s3_start
snap_abs_start
LOCAL=$SNAP_WORK/local
mkdir -p "$LOCAL"
# Each side names its credentials directory; nothing in the environment.
S3_CREDS=$AWS_APPLICATION_CREDENTIALS
ABS_CREDS=$AZURE_APPLICATION_CREDENTIALS
unset AWS_APPLICATION_CREDENTIALS AZURE_APPLICATION_CREDENTIALS

put() { # store key file
    case $1 in
    Local) mkdir -p "$(dirname "$LOCAL/$2")" && cp "$3" "$LOCAL/$2" ;;
    S3) AWS_APPLICATION_CREDENTIALS=$S3_CREDS snap_s3 put "$2" "$3" ;;
    ABS) snap_abs put "$2" "$3" ;;
    esac
}
get() { # store key
    case $1 in
    Local) cat "$LOCAL/$2" ;;
    S3) snap_s3 get "$2" ;;
    ABS) snap_abs get "$2" ;;
    esac
}
ls_prefix() { # store prefix: every key below prefix/, sorted
    case $1 in
    Local) if [ -d "$LOCAL/$2" ]; then (cd "$LOCAL" && find "$2" -type f | sort); fi ;;
    S3) snap_s3 ls "$2/" | sort ;;
    ABS) snap_abs ls "$2/" | sort ;;
    esac
}
side() { # from|to store container: the flags of one side
    local c=$SNAP_BUCKET
    [ "$2" = Local ] && c=$LOCAL
    echo "--$1-storage-provider $2 --$1-store-container $c"
    case $2 in
    S3) echo "--$1-credentials-dir ${3:-$S3_CREDS}" ;;
    ABS) echo "--$1-credentials-dir ${3:-$ABS_CREDS}" ;;
    esac
}
copy() { # from to from-prefix to-prefix extra...; status in RC, output in $SNAP_WORK/copy.*
    local f=$1 t=$2 fp=$3 tp=$4
    shift 4
    set +e
    # shellcheck disable=SC2046
    snap_run copy $(side from "$f" "${FROM_CREDS:-}") --from-store-prefix "$fp" \
        $(side to "$t" "${TO_CREDS:-}") --to-store-prefix "$tp" "$@" \
        >"$SNAP_WORK/copy.out" 2>"$SNAP_WORK/copy.log"
    RC=$?
    set -e
}

# A history in every store: fulls and deltas in v2, an older v1 generation, a chunk,
# a newer full tagged excluded (S3, ABS), foreign names and a sibling prefix.
P=shoot--dev--main/etcd-main
mkdir -p "$SNAP_WORK/seed"
KEYS=(v1/Backup-1600000000/Full-00000000-00001000-1600000000
      v1/Backup-1600000000/Incr-00001001-00001500-1600000300
      v2/Full-00000000-00002000-1700000000.gz
      v2/Incr-00002001-00002100-1700000300.gz
      v2/Incr-00002101-00002200-1700000600.zlib
      v2/Full-00000000-00002200-1700001000.gz
      v2/Incr-00002201-00002300-1700001300.gz
      v2/Incr-00002301-00002400-1700001600.gz
      v2/Full-00000000-00003000-1700004000/0000000001
      v2/README.txt)
for k in "${KEYS[@]}"; do
    snap_fixture "$SNAP_WORK/seed/$(echo "$k" | tr / _)" $((2000 + RANDOM)) "$k"
done
snap_fixture "$SNAP_WORK/seed/excluded" 6000 Full.gz
snap_fixture "$SNAP_WORK/seed/sibling" 6000 Full.gz
for s in Local S3 ABS; do
    for k in "${KEYS[@]}"; do put $s "$P/$k" "$SNAP_WORK/seed/$(echo "$k" | tr / _)"; done
    put $s "$P-2/v2/Full-00000000-00005000-1700005000.gz" "$SNAP_WORK/seed/sibling"
done
put S3 "$P/v2/Full-00000000-00002500-1700001400.gz" "$SNAP_WORK/seed/excluded"
AWS_APPLICATION_CREDENTIALS=$S3_CREDS snap_s3 tag "$P/v2/Full-00000000-00002500-1700001400.gz" \
    x-etcd-snapshot-exclude=true
put ABS "$P/v2/Full-00000000-00002500-1700001400.gz" "$SNAP_WORK/seed/excluded"
snap_abs tag "$P/v2/Full-00000000-00002500-1700001400.gz" x-etcd-snapshot-exclude=true

expect() { # destination store, prefix, then the source names expected (exactly these, same bytes)
    local t=$1 tp=$2 n want=()
    shift 2
    for n in "$@"; do want+=("$tp/v2/$(basename "$n")"); done
    diff <(printf '%s\n' "${want[@]}" | sort) <(ls_prefix "$t" "$tp") ||
        snap_fail "$t:$tp does not hold exactly $*"
    for n in "$@"; do
        get "$t" "$tp/v2/$(basename "$n")" | cmp -s - "$SNAP_WORK/seed/$(echo "$n" | tr / _)" ||
            snap_fail "$t:$tp/v2/$(basename "$n") differs from its source"
    done
}

# 1. --until in every direction: the full of 1700001000, the deltas up to 1700001300.
for f in Local S3 ABS; do
    for t in Local S3 ABS; do
        [ "$f" = "$t" ] && continue
        copy "$f" "$t" "$P" "restored/$f-$t" --until 2023-11-14T22:35:00Z
        [ $RC -eq 0 ] || { cat "$SNAP_WORK/copy.log"; snap_fail "copy $f -> $t failed"; }
        expect "$t" "restored/$f-$t" v2/Full-00000000-00002200-1700001000.gz \
            v2/Incr-00002201-00002300-1700001300.gz
        python3 - "$SNAP_WORK/copy.out" <<'EOF' || snap_fail "summary of $f -> $t"
import json, sys
o = json.loads(open(sys.argv[1]).read().splitlines()[-1])
names = [s["name"] for s in o["snapshots"]]
assert names == ["Full-00000000-00002200-1700001000.gz", "Incr-00002201-00002300-1700001300.gz"], names
assert o["snapshots"][0]["kind"] == "Full" and o["snapshots"][0]["lastRevision"] == 2200
assert all(len(s["md5"]) == 32 and s["size"] > 0 for s in o["snapshots"])
EOF
        echo "copy --until $f -> $t: the full and its deltas up to the time, same bytes"
    done
done

# 2. without a bound: the latest full not excluded and every delta after it; the chunk of a
#    newer full, README.txt and the sibling prefix never. (ABS honours the exclude tag; on
#    an unversioned S3 bucket etcd-backup-restore reads no tags, and neither does copy.)
copy ABS S3 "$P" latest
[ $RC -eq 0 ] || { cat "$SNAP_WORK/copy.log"; snap_fail "copy ABS -> S3 (latest) failed"; }
expect S3 latest v2/Full-00000000-00002200-1700001000.gz v2/Incr-00002201-00002300-1700001300.gz \
    v2/Incr-00002301-00002400-1700001600.gz
echo "copy (no bound): latest non-excluded full and all its deltas"

# 3. before the v2 fulls: the v1 generation, landing in v2; --snapshot picks one.
copy ABS Local "$P" old --until 1600000400
[ $RC -eq 0 ] || { cat "$SNAP_WORK/copy.log"; snap_fail "copy of the v1 generation failed"; }
expect Local old v1/Backup-1600000000/Full-00000000-00001000-1600000000 \
    v1/Backup-1600000000/Incr-00001001-00001500-1600000300
copy Local S3 "$P" one --snapshot Incr-00002101-00002200-1700000600.zlib
[ $RC -eq 0 ] || { cat "$SNAP_WORK/copy.log"; snap_fail "copy --snapshot failed"; }
expect S3 one v2/Incr-00002101-00002200-1700000600.zlib
copy Local S3 "$P" none --snapshot Full-00000000-00002500-1700001400.gz
[ $RC -eq 1 ] || snap_fail "an absent snapshot did not fail the copy"
copy ABS Local "$P" none --snapshot Full-00000000-00002500-1700001400.gz
[ $RC -eq 1 ] || snap_fail "an excluded snapshot was copied"
[ -z "$(ls_prefix Local none)" ] || snap_fail "something was written for a refused copy"
copy S3 Local "$P" none --until 1500000000
[ $RC -eq 1 ] || snap_fail "a time before every full did not fail"
echo "v1 lands in v2; --snapshot copies one; absent, excluded and too early are refused"

# 3b. endpoint overrides win over the credentials' endpoint (S3) and domain (ABS) on each side.
cp -r "$S3_CREDS" "$SNAP_WORK/aws-wrong"
cp -r "$ABS_CREDS" "$SNAP_WORK/azure-wrong"
printf 'http://127.0.0.1:9' >"$SNAP_WORK/aws-wrong/endpoint"
printf '127.0.0.1:9' >"$SNAP_WORK/azure-wrong/domain"
FROM_CREDS=$SNAP_WORK/azure-wrong TO_CREDS=$SNAP_WORK/aws-wrong copy ABS S3 "$P" overridden \
    --snapshot Incr-00002001-00002100-1700000300.gz \
    --from-store-endpoint-override "$SNAP_ABS_URL/$SNAP_ABS_ACCOUNT" \
    --to-store-endpoint-override "$SNAP_S3_URL"
[ $RC -eq 0 ] || { cat "$SNAP_WORK/copy.log"; snap_fail "copy with endpoint overrides failed"; }
expect S3 overridden v2/Incr-00002001-00002100-1700000300.gz
echo "endpoint overrides on both sides"

# 4. create-only: the same copy again is refused before anything is written.
before=$(get Local "restored/S3-Local/v2/Full-00000000-00002200-1700001000.gz" | md5sum)
copy S3 Local "$P" "restored/S3-Local" --until 1700001300
[ $RC -eq 1 ] || snap_fail "an existing destination was overwritten"
snap_has 'already exists' "$SNAP_WORK/copy.log" || snap_fail "no 'already exists' message"
[ "$before" = "$(get Local "restored/S3-Local/v2/Full-00000000-00002200-1700001000.gz" | md5sum)" ] ||
    snap_fail "the existing copy changed"
echo "create-only: a second copy is refused, the first unchanged"

# 5. faults mid-copy leave nothing under the destination prefix.
cp -r "$S3_CREDS" "$SNAP_WORK/aws-proxy"
cp -r "$ABS_CREDS" "$SNAP_WORK/azure-proxy"
#   the second object's upload refused by S3 (the full was already written)
proxy_start "$SNAP_S3_URL" --rule 'PUT:Incr-00002201:500:InternalError:inf'
printf '%s' "$PROXY_URL" >"$SNAP_WORK/aws-proxy/endpoint"
TO_CREDS=$SNAP_WORK/aws-proxy copy Local S3 "$P" faulty --until 1700001300
[ $RC -eq 1 ] || snap_fail "a refused upload did not fail the copy"
[ -z "$(ls_prefix S3 faulty)" ] || { ls_prefix S3 faulty; snap_fail "S3: a partial copy was left"; }
snap_has 'partial copy deleted' "$SNAP_WORK/copy.log" || snap_fail "the full was not deleted"
proxy_stop
#   a block of a multi-block upload refused by Azurite
snap_fixture "$SNAP_WORK/seed/big" $((12 * 1024 * 1024)) Full.gz
put Local "big/v2/Full-00000000-00009000-1700009000.gz" "$SNAP_WORK/seed/big"
proxy_start "$SNAP_ABS_URL" --rule 'PUT:comp=block:503:ServerBusy:inf'
printf '%s' "${PROXY_URL#http://}" >"$SNAP_WORK/azure-proxy/domain"
TO_CREDS=$SNAP_WORK/azure-proxy copy Local ABS big faulty --part-size 5242880
[ $RC -eq 1 ] || snap_fail "a refused block did not fail the copy"
[ -z "$(ls_prefix ABS faulty)" ] || snap_fail "ABS: a partial blob was left"
proxy_stop
#   damaged bytes read from the source: the MD5 S3 reports for it does not match
proxy_start "$SNAP_S3_URL" --corrupt 'GET:Incr-00002201'
printf '%s' "$PROXY_URL" >"$SNAP_WORK/aws-proxy/endpoint"
FROM_CREDS=$SNAP_WORK/aws-proxy copy S3 Local "$P" damaged --until 1700001300
[ $RC -eq 1 ] || snap_fail "damaged source bytes were copied"
snap_has 'MD5' "$SNAP_WORK/copy.log" || snap_fail "no MD5 mismatch reported"
[ -z "$(ls_prefix Local damaged)" ] || snap_fail "Local: a damaged copy was left"
proxy_stop
echo "faults mid-copy (refused upload, refused block, damaged source): nothing left"

#   SIGTERM (a Job deleted) while the second object's upload is held by the proxy: the run
#   stops before the next step and removes the full it had already written
proxy_start "$SNAP_S3_URL" --hold "PUT:Incr-00002201:$SNAP_WORK/release"
printf '%s' "$PROXY_URL" >"$SNAP_WORK/aws-proxy/endpoint"
# shellcheck disable=SC2046
"$WARDEN_SNAPSHOT" copy $(side from Local) --from-store-prefix "$P" \
    $(side to S3 "$SNAP_WORK/aws-proxy") --to-store-prefix termed --until 1700001300 \
    >"$SNAP_WORK/copy.out" 2>"$SNAP_WORK/copy.log" &
copy_pid=$!
snap_on_exit "snap_kill $copy_pid KILL"
for _ in $(seq 600); do
    snap_has -F 'holding' "$SNAP_WORK/proxy.log" && break
    sleep 0.1
done
snap_has -F 'holding' "$SNAP_WORK/proxy.log" || snap_fail "the upload never reached the proxy"
[ "$(ls_prefix S3 termed)" = "termed/v2/Full-00000000-00002200-1700001000.gz" ] ||
    snap_fail "the full was not written before the held upload"
kill -TERM "$copy_pid"
touch "$SNAP_WORK/release"
RC=0
reap_child "$copy_pid" 60 none || RC=$?
[ "$RC" -eq 1 ] || { cat "$SNAP_WORK/copy.log"; snap_fail "a terminated copy exited with $RC"; }
snap_has 'terminated by a signal' "$SNAP_WORK/copy.log" || snap_fail "no termination message"
[ -z "$(ls_prefix S3 termed)" ] || { ls_prefix S3 termed; snap_fail "a terminated copy left objects"; }
proxy_stop
echo "SIGTERM mid-copy: stopped, and everything written removed"

# 6. bounded memory: 40 MiB through the default 8 MiB part.
snap_fixture "$SNAP_WORK/seed/large" $((40 * 1024 * 1024)) Full.gz
put S3 "large/v2/Full-00000000-00009999-1700009999.gz" "$SNAP_WORK/seed/large"
copy S3 ABS large large
[ $RC -eq 0 ] || { cat "$SNAP_WORK/copy.log"; snap_fail "the large copy failed"; }
snap_abs get "large/v2/Full-00000000-00009999-1700009999.gz" | cmp -s - "$SNAP_WORK/seed/large" ||
    snap_fail "the large copy differs"
rss=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["peakRssKiB"])' "$SNAP_WORK/copy.out")
# (not measured under ASan, whose shadow memory and quarantine dominate)
if ! ldd "$WARDEN_SNAPSHOT" | snap_has libasan; then
    [ "$rss" -le 32768 ] || snap_fail "peak RSS $rss KiB > 32 MiB"
fi
echo "40 MiB S3 -> ABS: same bytes, peak RSS $rss KiB"
echo "PASS"
