#!/usr/bin/env bash
# warden-snapshot on GCS with Bucket Lock, against tests/support/gcs_standin.py (a
# GCS JSON API stand-in: no GCS emulator reaches the test machines). Credentials
# are a service-account key file ($GOOGLE_APPLICATION_CREDENTIALS) whose JWT the
# stand-in's token endpoint checks against the public key; the endpoint comes
# from the storageAPIEndpoint file beside it, as etcd-backup-restore reads it.
# list against a seeded history (an object excluded by its custom metadata),
# extend over simulated days in server mode (objects.rewrite, several calls per
# copy) and stream mode (a resumable upload in 1 MiB chunks), an earlier copy
# still under the retention period refused (403 retentionPolicyNotMet) and
# collected by a later run, both writes create-only against an object that
# appears meanwhile, delete-snapshots counting what the lock holds as locked, and a
# wrong key refused with one clear line.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

command -v openssl >/dev/null || snap_fail "openssl is required"
G=$SNAP_WORK/gcp
mkdir -p "$G"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$SNAP_WORK/sa.key" 2>/dev/null
openssl pkey -in "$SNAP_WORK/sa.key" -pubout -out "$SNAP_WORK/sa.pub"
EMAIL=warden@test-project.iam.gserviceaccount.com

python3 "$SNAP_SRC/tests/support/gcs_standin.py" --bucket "$SNAP_BUCKET" --pubkey "$SNAP_WORK/sa.pub" \
    --client-email "$EMAIL" --retention 43200 >"$SNAP_WORK/standin.out" 2>"$SNAP_WORK/standin.log" &
standin=$!
snap_on_exit "snap_kill $standin"
for _ in $(seq 600); do
    grep -q '^gcs-standin ready' "$SNAP_WORK/standin.out" 2>/dev/null && break
    kill -0 "$standin" 2>/dev/null || break
    sleep 0.05
done
grep -q '^gcs-standin ready' "$SNAP_WORK/standin.out" || { cat "$SNAP_WORK/standin.log"; snap_fail "stand-in did not start"; }
URL=http://127.0.0.1:$(awk '{print $3}' "$SNAP_WORK/standin.out")

sa_json() { # KEYFILE
    python3 - "$1" "$EMAIL" "$URL/token" <<'PY'
import json, sys
print(json.dumps({"type": "service_account", "project_id": "test-project",
                  "private_key_id": "1", "private_key": open(sys.argv[1]).read(),
                  "client_email": sys.argv[2], "token_uri": sys.argv[3]}))
PY
}
sa_json "$SNAP_WORK/sa.key" >"$G/serviceaccount.json"
printf '%s\n' "$URL" >"$G/storageAPIEndpoint"
export GOOGLE_APPLICATION_CREDENTIALS=$G/serviceaccount.json
unset GOOGLE_STORAGE_API_ENDPOINT

# Direct access through the stand-in's test controls (not warden-snapshot's code).
sc() { curl -sS --fail --max-time 30 "$@"; }
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
gcs_put() { sc -X PUT --data-binary @"$2" "$URL/_standin/o/$(enc "$1")" >/dev/null; }
gcs_get() { sc "$URL/_standin/o/$(enc "$1")"; }
gcs_ls() { sc "$URL/_standin/ls?prefix=$(enc "$1")"; }
gcs_tag() { sc -X POST "$URL/_standin/meta/$(enc "$1")?$2" >/dev/null; }
clock() { sc -X POST "$URL/_standin/clock?now=$1" >/dev/null; }
STORE_GET=gcs_get STORE_LS=gcs_ls STORE_TAG=gcs_tag
flags=(--storage-provider GCS --store-container "$SNAP_BUCKET")
day() { echo $((1700000000 + $1 * SNAP_DAY)); }
extend() { # DAY MODE LOG
    clock "$(day "$1")"
    WARDEN_SNAPSHOT_NOW=$(day "$1") snap_run extend-snapshot-immutability "${flags[@]}" \
        --store-prefix "$SNAP_PREFIX" --gc-from-timestamp "$SNAP_GC_FROM" --copy-mode "$2" \
        --part-size 1048576 2>"$3"
}

clock 1700000000
snap_history gcs_put tags
snap_check_list "${flags[@]}"
grep -q "^$SNAP_FINAL .* immutable-until=2023-11-15T10:13:20Z" "$SNAP_WORK/list.out" ||
    { cat "$SNAP_WORK/list.out"; snap_fail "retentionExpirationTime not reported"; }

# Days 1-3 under a 12 h retention: each earlier copy has expired by the next day.
prev=""
d=0
for mode in server stream server; do
    d=$((d + 1))
    WARDEN_TERMINATION_LOG=$SNAP_WORK/term$d extend $d $mode "$SNAP_WORK/day$d.log" || { cat "$SNAP_WORK/day$d.log"; snap_fail "extend failed on day $d"; }
    # the termination summary names the copy and its retention: the stand-in's clock
    # (the day) plus the bucket's 12 h retention policy
    want=$(date -u -d "@$(($(day $d) + 43200))" +%Y-%m-%dT%H:%M:%SZ)
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(s.get("immutableUntil") != sys.argv[2] or not s["copy"].endswith("-" + sys.argv[3] + ".gz.final"))' \
        "$SNAP_WORK/term$d" "$want" "$(day $d)" || { cat "$SNAP_WORK/term$d"; snap_fail "day $d: the termination summary does not say immutableUntil $want"; }
    grep -q '"level":"error"' "$SNAP_WORK/day$d.log" && { cat "$SNAP_WORK/day$d.log"; snap_fail "error on day $d"; }
    snap_check_day "$(day $d)" "$prev"
    prev=$(day $d)
    echo "day $d ($mode): copy verified, earlier copy collected, nothing else touched"
done
sc "$URL/_standin/log" >"$SNAP_WORK/calls"
[ "$(grep -c '^POST .*/rewriteTo/.* 200$' "$SNAP_WORK/calls")" -ge 6 ] || snap_fail "a 3 MiB rewrite took fewer than 3 calls"
grep -q '^PUT /upload/storage/v1/.* 308$' "$SNAP_WORK/calls" || snap_fail "stream mode did not upload in chunks"

# A 2-day retention: on day 4 the copy of day 3 is still locked; the refusal is logged,
# the run succeeds, and day 6 collects both earlier copies.
sc -X POST "$URL/_standin/retention?seconds=$((2 * SNAP_DAY))" >/dev/null
extend 4 server "$SNAP_WORK/day4.log" || { cat "$SNAP_WORK/day4.log"; snap_fail "a locked earlier copy failed the run"; }
grep 'still immutable' "$SNAP_WORK/day4.log" | snap_has retentionPolicyNotMet || { cat "$SNAP_WORK/day4.log"; snap_fail "the Bucket Lock refusal was not logged"; }
grep -q '"level":"error"' "$SNAP_WORK/day4.log" && snap_fail "the refusal was logged as an error"
gcs_ls "$SNAP_PREFIX/" | snap_has -x "$SNAP_PREFIX/v2/Full-00000000-00002300-$(day 3).gz.final" || snap_fail "the locked copy is gone"
extend 6 stream "$SNAP_WORK/day6.log" || { cat "$SNAP_WORK/day6.log"; snap_fail "day 6 failed"; }
snap_check_day "$(day 6)" "$(day 4)"
gcs_ls "$SNAP_PREFIX/" | snap_has -- "-$(day 3).gz.final" && snap_fail "the copy of day 3 was not collected"

# Create-only: someone else writes the target between the check and the write.
for mode in server stream; do
    d=$((d + 7))
    taken=$SNAP_PREFIX/v2/Full-00000000-00002300-$(day $d).gz.final
    sc -X POST "$URL/_standin/appear?name=$(enc "$taken")" >/dev/null
    if extend $d $mode "$SNAP_WORK/taken.log"; then
        snap_fail "extend ($mode) wrote over an object created meanwhile"
    fi
    grep '"level":"error"' "$SNAP_WORK/taken.log" | snap_has 'conditionNotMet' ||
        { cat "$SNAP_WORK/taken.log"; snap_fail "no clear precondition error ($mode)"; }
    gcs_get "$taken" | snap_has -x "someone else's object" || snap_fail "the other object was changed ($mode)"
done
sc "$URL/_standin/log" | snap_has "^POST .*/rewriteTo/.*ifGenerationMatch=0.* 412$" || snap_fail "no create-only rewrite"
sc "$URL/_standin/log" | snap_has "^PUT /upload/.* 412$" || snap_fail "no create-only upload"

# delete-snapshots under the 2-day retention: what the lock holds is counted as locked
# (with the earliest retentionExpirationTime), the rest deleted; nothing failed. The sibling
# prefix etcd-main-2 is in the sidecar's listing of etcd-main (a plain string), and so is the
# prefix below it, etcd-main/other (the sidecar splits a key at its last "v2/"): never
# deleted, counted as foreign, so the prefix is not emptied (exit 1).
# The object that appeared on day 17 is the one still locked on day 18.
clock "$(day 18)"
set +e
snap_run delete-snapshots "${flags[@]}" --store-prefix "$SNAP_PREFIX" >"$SNAP_WORK/del.out" 2>"$SNAP_WORK/del.log"
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$SNAP_WORK/del.log"; snap_fail "delete-snapshots beside a sibling prefix exited $rc"; }
tail -1 "$SNAP_WORK/del.out" | python3 -c '
import json, sys
r = json.load(sys.stdin)
want = {"deleted": r["deleted"] > 0, "locked": r["locked"] == 1, "failed": r["failed"] == 0,
        "remaining": r["remaining"] == 3, "earliest": r["earliestDeletable"] == "2023-12-03T22:13:20Z",
        "foreign": r["foreignKeys"] == ["shoot--dev--main/etcd-main-2/v2/Full-00000000-00005000-1700005000.gz",
                                        "shoot--dev--main/etcd-main/other/v2/Full-00000000-00009999-1700009999.gz"]}
bad = [k for k, ok in want.items() if not ok]
sys.exit("delete-snapshots summary wrong (%s): %s" % (bad, r) if bad else 0)' || { cat "$SNAP_WORK/del.log"; snap_fail "delete-snapshots on GCS"; }
gcs_ls "$SNAP_PREFIX/" | snap_has -x "$SNAP_PREFIX/v2/Full-00000000-00002300-$(day 17).gz.final" ||
    snap_fail "the locked object was deleted"

# Verification (the default): the digest a snapshot ends with is recorded on its copy (custom
# metadata).
p2=shoot--dev--hash/etcd-main
snap_fixture "$SNAP_WORK/hashed" 5120
gcs_put "$p2/v2/Full-00000000-00000042-1700000000" "$SNAP_WORK/hashed"
want=$(head -c 5120 "$SNAP_WORK/hashed" | sha256sum | cut -d' ' -f1)
clock "$(day 20)"
WARDEN_SNAPSHOT_NOW=$(day 20) snap_run extend-snapshot-immutability "${flags[@]}" --store-prefix "$p2" \
    --gc-from-timestamp 1700000001 2>"$SNAP_WORK/hash.log" || { cat "$SNAP_WORK/hash.log"; snap_fail "verified extend failed"; }
sc "$URL/_standin/meta/$(enc "$p2/v2/Full-00000000-00000042-$(day 20)")" | snap_has "\"etcd-warden-sha256\": \"$want\"" ||
    snap_fail "the verified SHA-256 is not recorded on the copy"

# A key the service account does not have: the token endpoint refuses the assertion.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$SNAP_WORK/other.key" 2>/dev/null
sa_json "$SNAP_WORK/other.key" >"$G/serviceaccount.json"
if snap_run list "${flags[@]}" --store-prefix "$SNAP_PREFIX" 2>"$SNAP_WORK/auth.log"; then
    snap_fail "a wrong key was accepted"
fi
grep '"level":"error"' "$SNAP_WORK/auth.log" | snap_has 'invalid signature' || { cat "$SNAP_WORK/auth.log"; snap_fail "unclear auth error"; }
echo "snapshot_gcs: ok"
