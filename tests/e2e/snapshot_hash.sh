#!/usr/bin/env bash
# Verification, on by default: a real etcd snapshot (etcd-server and etcdctl on loopback)
# ends with the SHA-256 of everything before it; warden-snapshot checks it before a full
# snapshot becomes the source of a copy, through gzip, zlib and LZW as etcd-backup-restore
# compresses them (LZW written as Go's compress/lzw writes it: tests/support/lzw_encode.py).
# On Local, S3 (s3rver) and ABS (Azurite): a good snapshot (none, gz, zlib, Z) is copied; one
# with a byte flipped and a truncated one are never copied (--skip-hash-check copies them),
# the earlier good copy of the same revisions is not collected, the run exits non-zero with
# one error line naming the object, and `list --verify-hash` marks it corrupt; plain `list`
# marks the copies carrying a recorded digest without reading anything. The verified digest
# is recorded on the copy, and a later run whose source is that copy does not read it again
# (S3: every GET of it refused by a proxy). `copy` refuses a corrupt full snapshot and writes
# nothing.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

command -v etcd >/dev/null && command -v etcdctl >/dev/null ||
    snap_fail "etcd and etcdctl are not installed (etcd-server, etcd-client)"

# ---- a real snapshot ----
cport=$(snap_free_port)
pport=$(snap_free_port)
ETCDCTL_API=3 && export ETCDCTL_API
etcd --name hash --data-dir "$SNAP_WORK/etcd" --listen-client-urls "http://127.0.0.1:$cport" \
    --advertise-client-urls "http://127.0.0.1:$cport" --listen-peer-urls "http://127.0.0.1:$pport" \
    --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
    --initial-cluster "hash=http://127.0.0.1:$pport" >"$SNAP_WORK/etcd.log" 2>&1 &
etcd_pid=$!
snap_on_exit "snap_kill $etcd_pid"
ep=(--endpoints "127.0.0.1:$cport" --command-timeout 5s)
deadline=$((SECONDS + 60))
until etcdctl "${ep[@]}" put /warden/ready yes >/dev/null 2>&1; do
    kill -0 "$etcd_pid" 2>/dev/null || { cat "$SNAP_WORK/etcd.log"; snap_fail "etcd exited"; }
    [ $SECONDS -lt $deadline ] || snap_fail "etcd did not answer within 60 s"
    sleep 0.2
done
for i in $(seq 1 200); do
    etcdctl "${ep[@]}" put "/registry/pods/ns/pod-$i" "value-$i-$(head -c 300 /dev/urandom | base64 -w0)" >/dev/null
done
db=$SNAP_WORK/db
timeout -s KILL 60 etcdctl "${ep[@]}" snapshot save "$db" >/dev/null 2>"$SNAP_WORK/save.log" || { cat "$SNAP_WORK/save.log"; snap_fail "etcdctl snapshot save"; }
snap_kill "$etcd_pid"
# What the check relies on, on etcd's own output: the last 32 bytes are the SHA-256 of the rest.
python3 - "$db" <<'PY' || snap_fail "etcd's snapshot does not end with the SHA-256 of its content"
import hashlib, sys
b = open(sys.argv[1], "rb").read()
sys.exit(0 if len(b) > 32 and hashlib.sha256(b[:-32]).digest() == b[-32:] else 1)
PY

want_sha=$(tail -c 32 "$db" | od -An -tx1 -v | tr -d ' \n')

# Variants: flipped (one byte in the database changed), truncated (the compressed stream cut).
python3 - "$db" "$SNAP_WORK" "$SNAP_SRC/tests/support" <<'PY'
import gzip, io, sys, zlib
sys.path.insert(0, sys.argv[3])
import lzw_encode
def lzw(b):
    f = io.BytesIO()
    w = lzw_encode.Writer(f)
    w.write(b)
    w.close()
    return f.getvalue()
db, out = open(sys.argv[1], "rb").read(), sys.argv[2]
flipped = bytearray(db); flipped[len(db) // 2] ^= 0x01
open(out + "/good", "wb").write(db)
open(out + "/good.gz", "wb").write(gzip.compress(db))
open(out + "/good.zlib", "wb").write(zlib.compress(db))
open(out + "/flipped.gz", "wb").write(gzip.compress(bytes(flipped)))
open(out + "/flipped", "wb").write(bytes(flipped))
gz = gzip.compress(db)
open(out + "/truncated.gz", "wb").write(gz[: len(gz) - 200])
open(out + "/truncated", "wb").write(db[: len(db) - 4096])
open(out + "/good.Z", "wb").write(lzw(db))
open(out + "/flipped.Z", "wb").write(lzw(bytes(flipped)))
open(out + "/truncated.Z", "wb").write(lzw(db)[:-200])
PY

p=shoot--dev--main/etcd-main
T0=1700000000
DAY=86400
# One provider: put, exists and rm functions, then its flags. Every variant under its own
# revisions.
check_store() {
    local exists=$1
    shift
    local rev=100 v suffix key copy earlier now
    for v in good good.gz good.zlib good.Z flipped flipped.gz flipped.Z truncated truncated.gz \
        truncated.Z; do
        rev=$((rev + 1))
        suffix=${v#*.}; [ "$suffix" = "$v" ] && suffix= || suffix=.$suffix
        key=$p/v2/Full-00000000-$(printf %08d $rev)-$T0$suffix
        earlier=$p/v2/Full-00000000-$(printf %08d $rev)-$((T0 + DAY))$suffix
        now=$((T0 + 2 * DAY))
        copy=$p/v2/Full-00000000-$(printf %08d $rev)-$now$suffix
        "$put" "$key" "$SNAP_WORK/$v"
        # yesterday's copy, as warden-snapshot wrote it (marked), of the same revisions;
        # --skip-hash-check copies even a corrupt one
        WARDEN_SNAPSHOT_NOW=$((T0 + DAY)) snap_run extend-snapshot-immutability "$@" \
            --store-prefix "$p" --gc-from-timestamp $T0 --skip-hash-check 2>"$SNAP_WORK/seed.log" ||
            { cat "$SNAP_WORK/seed.log"; snap_fail "$v: seeding yesterday's copy"; }
        "$exists" "$earlier" || snap_fail "$v: yesterday's copy was not made"
        set +e
        WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability "$@" --store-prefix "$p" \
            --gc-from-timestamp $T0 2>"$SNAP_WORK/run.log"
        rc=$?
        set -e
        case $v in
        good*)
            [ $rc -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "$v: a good snapshot was refused"; }
            "$exists" "$copy" || snap_fail "$v: not copied"
            "$exists" "$earlier" && snap_fail "$v: yesterday's copy not collected"
            snap_has '"snapshot verified"' "$SNAP_WORK/run.log" || snap_fail "$v: no verification logged"
            ;;
        *)
            [ $rc -ne 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "$v: a corrupt snapshot was copied"; }
            "$exists" "$copy" && snap_fail "$v: the corrupt snapshot was copied"
            "$exists" "$earlier" || snap_fail "$v: yesterday's copy was collected in a failed run"
            [ "$(grep -c '"level":"error"' "$SNAP_WORK/run.log")" -eq 1 ] ||
                { cat "$SNAP_WORK/run.log"; snap_fail "$v: not one error line"; }
            grep '"level":"error"' "$SNAP_WORK/run.log" | snap_has -F "snapshot $key is corrupt" ||
                { cat "$SNAP_WORK/run.log"; snap_fail "$v: the error line does not name the object"; }
            ;;
        esac
    done
    snap_run list "$@" --store-prefix "$p" --verify-hash >"$SNAP_WORK/list" 2>"$SNAP_WORK/list.log" ||
        { cat "$SNAP_WORK/list.log"; snap_fail "list --verify-hash failed"; }
    for v in flipped truncated; do
        grep -E "^$p/v2/Full-00000000-[0-9]+-$T0 .* sha256=corrupt$" "$SNAP_WORK/list" | snap_has . ||
            { cat "$SNAP_WORK/list"; snap_fail "list does not mark $v"; }
    done
    [ "$(grep -c ' sha256=corrupt$' "$SNAP_WORK/list")" -eq 12 ] || { cat "$SNAP_WORK/list"; snap_fail "not 12 corrupt (6 sources, their copies)"; }
    [ "$(grep -c ' sha256=ok$' "$SNAP_WORK/list")" -eq 8 ] || { cat "$SNAP_WORK/list"; snap_fail "not 8 ok"; }
    # without --verify-hash nothing is read: today's 4 verified copies carry their digest
    snap_run list "$@" --store-prefix "$p" >"$SNAP_WORK/list" 2>"$SNAP_WORK/list.log" ||
        { cat "$SNAP_WORK/list.log"; snap_fail "list failed"; }
    [ "$(grep -c " sha256=recorded$" "$SNAP_WORK/list")" -eq 4 ] &&
        [ "$(grep -c " sha256=unchecked$" "$SNAP_WORK/list")" -eq 16 ] &&
        ! snap_has '"snapshot verified"' "$SNAP_WORK/list.log" ||
        { cat "$SNAP_WORK/list" "$SNAP_WORK/list.log"; snap_fail "list's marks without reading"; }
}

# The verified digest is recorded on the copy; once the sidecar's snapshot is gone (its own
# retention) the copy is the source, and its recorded digest spares reading it again.
# $@: flags; the last run's log in $SNAP_WORK/again.log.
P2=shoot--dev--other/etcd-main
ORIG=$P2/v2/Full-00000000-00000200-$T0.gz
COPY1=$P2/v2/Full-00000000-00000200-$((T0 + DAY)).gz
COPY2=$P2/v2/Full-00000000-00000200-$((T0 + 2 * DAY)).gz
record_first() {
    "$put" "$ORIG" "$SNAP_WORK/good.gz"
    WARDEN_SNAPSHOT_NOW=$((T0 + DAY)) snap_run extend-snapshot-immutability "$@" --store-prefix "$P2" \
        --gc-from-timestamp $T0 2>"$SNAP_WORK/first.log" ||
        { cat "$SNAP_WORK/first.log"; snap_fail "the first verified copy failed"; }
    [ "$("$meta" "$COPY1")" = "$want_sha" ] || snap_fail "the copy does not carry the verified digest"
    [ -z "$("$meta" "$ORIG")" ] || snap_fail "the source was changed"
    "$rm" "$ORIG"
}
from_copy() {
    WARDEN_SNAPSHOT_NOW=$((T0 + 2 * DAY)) snap_run extend-snapshot-immutability "$@" --store-prefix "$P2" \
        --gc-from-timestamp $T0 --verify-hash 2>"$SNAP_WORK/again.log" ||
        { cat "$SNAP_WORK/again.log"; snap_fail "copying the verified copy failed"; }
    snap_has '"snapshot verified before, not read again"' "$SNAP_WORK/again.log" ||
        { cat "$SNAP_WORK/again.log"; snap_fail "the recorded digest was not used"; }
    [ "$("$meta" "$COPY2")" = "$want_sha" ] || snap_fail "the copy of the copy does not carry the digest"
}

# ---- Local ----
store=$SNAP_WORK/store
local_put() { mkdir -p "$(dirname "$store/$1")" && cp "$2" "$store/$1"; }
local_exists() { [ -e "$store/$1" ]; }
local_rm() { rm "$store/$1"; }
put=local_put meta=local_meta rm=local_rm
local_meta() {
    python3 -c 'import os, sys
try: print(os.getxattr(sys.argv[1], "user.etcd-warden-sha256").decode())
except OSError: pass' "$store/$1"
}
check_store local_exists --storage-provider Local --store-container "$store"
record_first --storage-provider Local --store-container "$store"
from_copy --storage-provider Local --store-container "$store"
echo "Local: good snapshots copied, corrupt and truncated ones refused and marked"

# copy: a corrupt full snapshot is refused before anything is written; good ones (Z too) go
copy_to() { # snapshot name, destination prefix, extra flags
    local name=$1 to=$2
    shift 2
    snap_run copy --from-storage-provider Local --from-store-container "$store" \
        --from-store-prefix "$p" --to-storage-provider Local --to-store-container "$SNAP_WORK/dst" \
        --to-store-prefix "$to" --snapshot "$name" "$@" >"$SNAP_WORK/copy.out" 2>"$SNAP_WORK/copy.log"
}
mkdir -p "$SNAP_WORK/dst"
copy_to "Full-00000000-00000104-$T0.Z" good ||
    { cat "$SNAP_WORK/copy.log"; snap_fail "copy refused a good LZW snapshot"; }
[ -e "$SNAP_WORK/dst/good/v2/Full-00000000-00000104-$T0.Z" ] || snap_fail "copy wrote no good.Z"
for name in "Full-00000000-00000106-$T0.gz" "Full-00000000-00000107-$T0.Z" \
    "Full-00000000-00000110-$T0.Z"; do
    if copy_to "$name" bad; then snap_fail "copy copied the corrupt $name"; fi
    grep '"level":"error"' "$SNAP_WORK/copy.log" | snap_has -F "snapshot $p/v2/$name is corrupt" ||
        { cat "$SNAP_WORK/copy.log"; snap_fail "copy's error does not name $name"; }
    [ -z "$(find "$SNAP_WORK/dst/bad" -type f 2>/dev/null)" ] || snap_fail "copy left $name behind"
done
copy_to "Full-00000000-00000106-$T0.gz" skipped --skip-hash-check ||
    { cat "$SNAP_WORK/copy.log"; snap_fail "copy --skip-hash-check refused"; }
echo "Local: copy refuses corrupt full snapshots (gz, Z, truncated Z), copies good ones"

# Memory: a 64 MiB gzip'd snapshot verified then streamed stays within 32 MB peak RSS (not
# measured under ASan, whose shadow memory dominates).
python3 - "$SNAP_WORK/big.gz" <<'PY'
import gzip, hashlib, os, sys
body = os.urandom(64 << 20)
with gzip.open(sys.argv[1], "wb", compresslevel=1) as f:
    f.write(body)
    f.write(hashlib.sha256(body).digest())
PY
big=shoot--dev--big/etcd-main/v2/Full-00000000-00000300-$T0.gz
local_put "$big" "$SNAP_WORK/big.gz"
rm -f "$SNAP_WORK/big.gz"
WARDEN_SNAPSHOT_NOW=$((T0 + DAY)) snap_run extend-snapshot-immutability --storage-provider Local \
    --store-container "$store" --store-prefix shoot--dev--big/etcd-main --gc-from-timestamp $T0 \
    --copy-mode stream 2>"$SNAP_WORK/big.log" ||
    { cat "$SNAP_WORK/big.log"; snap_fail "verifying and copying a 64 MiB snapshot failed"; }
rss=$(sed -n 's/.*"peakRssKiB":"\([0-9]*\)".*/\1/p' "$SNAP_WORK/big.log")
[ -n "$rss" ] || snap_fail "no peak RSS in the log"
if ! ldd "$WARDEN_SNAPSHOT" | snap_has libasan; then
    [ "$rss" -le $((32 * 1024)) ] || snap_fail "peak RSS $rss KiB verifying a 64 MiB snapshot"
fi
echo "Local: a 64 MiB snapshot verified and streamed with a peak RSS of $rss KiB"
rm -rf "${store:?}/shoot--dev--big"

# ---- S3 (s3rver) ----
snap_s3_start
s3_put() { snap_s3 put "$1" "$2"; }
s3_exists() { snap_s3 get "$1" >/dev/null 2>&1; }
s3_rm() { snap_s3 rm "$1"; }
s3_meta() {
    curl -sSI --aws-sigv4 aws:amz:us-east-1:s3 -u S3RVER:S3RVER -H x-amz-content-sha256:UNSIGNED-PAYLOAD \
        "$SNAP_S3_URL/$SNAP_BUCKET/$1" | tr -d '\r' | sed -n 's/^x-amz-meta-etcd-warden-sha256: //Ip'
}
put=s3_put meta=s3_meta rm=s3_rm
check_store s3_exists --storage-provider S3 --store-container "$SNAP_BUCKET"
record_first --storage-provider S3 --store-container "$SNAP_BUCKET"
# Server-side, the verified copy is not read at all: every GET of it is refused.
proxy_start "$SNAP_S3_URL" --rule "GET:/$COPY1:500:InternalError:inf"
s3_via "$PROXY_URL"
from_copy --storage-provider S3 --store-container "$SNAP_BUCKET" --copy-mode server
# (the refusal bites: reading it, as list --verify-hash does, fails)
if snap_run list --storage-provider S3 --store-container "$SNAP_BUCKET" --store-prefix "$P2" \
    --verify-hash >/dev/null 2>"$SNAP_WORK/refused.log"; then
    snap_fail "the proxy did not refuse reading the copy"
fi
proxy_stop
s3_via "$SNAP_S3_URL"
echo "S3: good snapshots copied, corrupt and truncated ones refused and marked"

# ---- ABS (Azurite) ----
snap_abs_start
abs_put() { snap_abs put "$1" "$2"; }
abs_exists() { snap_abs get "$1" >/dev/null 2>&1; }
abs_rm() { snap_abs rm "$1"; }
abs_meta() { snap_abs meta "$1" etcdwardensha256; }
put=abs_put meta=abs_meta rm=abs_rm
check_store abs_exists --storage-provider ABS --store-container "$SNAP_BUCKET"
record_first --storage-provider ABS --store-container "$SNAP_BUCKET"
from_copy --storage-provider ABS --store-container "$SNAP_BUCKET" --copy-mode server
echo "ABS: good snapshots copied, corrupt and truncated ones refused and marked, digest recorded"
echo "snapshot_hash: ok"
