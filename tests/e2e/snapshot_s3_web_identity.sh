#!/usr/bin/env bash
# S3 web identity as etcd-backup-restore reads it (roleARN + token in the store Secret,
# or roleARN + tokenPath in a *.json file inside the credentials directory): warden-snapshot
# calls STS AssumeRoleWithWebIdentity (tests/support/sts_standin.py, which checks the call
# as the STS API reference specifies it) and sends the temporary keys' session token,
# signed, on every S3 request (the stand-in's S3 gate refuses anything else before s3rver).
# Keys issued inside the renewal window are renewed before the next request; a rotated
# token file is read at the next call; a refused role fails the run with one error line.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/sts.sh"

role=arn:aws:iam::123456789012:role/etcd-backup
snap_s3_start
full=$SNAP_WORK/full.gz
snap_fixture "$full" 4096 # an etcd snapshot stand-in: extend verifies it
snap_s3 put "$SNAP_PREFIX/v2/Full-00000000-00000100-1700000000.gz" "$full"
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_ROLE_ARN AWS_WEB_IDENTITY_TOKEN_FILE

# The store Secret as Gardener's workload identity writes it: no keys, a role and a token.
wi=$SNAP_WORK/wi
mkdir -p "$wi"
printf '%s' "$role" >"$wi/roleARN"
printf 'eyJhbGciOiJSUzI1NiJ9.first-token.sig\n' >"$wi/token"
printf 'us-east-1' >"$wi/region"
printf 'true' >"$wi/s3ForcePathStyle"

# ---- the Secret's directory form; the first keys expire within the renewal window ----
sts_start "$wi/token" --role-arn "$role" --lifetime 120 --lifetime 3600
printf '%s' "$GATE_URL" >"$wi/endpoint"
export AWS_APPLICATION_CREDENTIALS=$wi
unset AWS_APPLICATION_CREDENTIALS_JSON
s3=(--storage-provider S3 --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX")
snap_run list "${s3[@]}" >"$SNAP_WORK/list" 2>"$SNAP_WORK/list.log" ||
    { cat "$SNAP_WORK/list.log" "$STS_LOG"; snap_fail "list with web identity failed"; }
snap_has "Full-00000000-00000100-1700000000.gz kind=Full" "$SNAP_WORK/list" || snap_fail "not listed"
[ "$(sts_count 'e["api"]=="sts" and e["ok"]')" -eq 2 ] ||
    { cat "$STS_LOG"; snap_fail "want 2 STS calls: the first keys expire inside the window"; }
[ "$(sts_count 'e["api"]=="s3" and not e["ok"]')" -eq 0 ] || { cat "$STS_LOG"; snap_fail "the S3 gate refused a request"; }
[ "$(sts_count 'e["api"]=="s3"')" -ge 2 ] || { cat "$STS_LOG"; snap_fail "fewer than 2 S3 requests"; }
python3 - "$STS_LOG" <<'EOF' || { cat "$STS_LOG"; snap_fail "S3 requests did not carry the newest session token"; }
import json, sys
toks, s3 = [], []
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["api"] == "sts":
        toks.append(e["sessionToken"])
    else:
        s3.append((e["sessionToken"], len(toks)))
# every S3 request carries the token of the latest STS answer before it
assert all(tok == toks[n - 1] for tok, n in s3), s3
EOF
echo "directory form: STS called unsigned, keys renewed inside the window, session token signed on every request"

# ---- a rotated token is read at the next call; extend works through the gate ----
printf 'eyJhbGciOiJSUzI1NiJ9.rotated-token.sig\n' >"$wi/token"
WARDEN_SNAPSHOT_NOW=1700086400 snap_run extend-snapshot-immutability "${s3[@]}" \
    --gc-from-timestamp 1700000000 2>"$SNAP_WORK/x.log" ||
    { cat "$SNAP_WORK/x.log" "$STS_LOG"; snap_fail "extend with web identity failed"; }
snap_s3 get "$SNAP_PREFIX/v2/Full-00000000-00000100-1700086400.gz" | cmp -s - "$full" ||
    snap_fail "no copy made with web identity"
[ "$(sts_count 'e["api"]=="s3" and not e["ok"]')" -eq 0 ] || { cat "$STS_LOG"; snap_fail "the S3 gate refused a request"; }
sts_stop
echo "rotated token: read at the next call; extend copied through temporary credentials"

# ---- a *.json file inside the directory wins over its per-key files ----
# laid out as a mounted Secret volume is: each key a symbolic link through ..data into a
# timestamped directory; tokenPath names the Secret's own token key in that mount (a token
# outside the mounted credentials is refused)
wj=$SNAP_WORK/wj
wjd=$wj/..2026_11_28_20_00_00.000000001
mkdir -p "$wjd"
ln -s "${wjd##*/}" "$wj/..data"
printf 'AKIDONOTUSE' >"$wjd/accessKeyID" # per-key files: ignored once a JSON file is there
printf 'x' >"$wjd/secretAccessKey"
printf 'eu-west-1' >"$wjd/region"
printf 'eyJhbGciOiJSUzI1NiJ9.mounted-token.sig\n' >"$wjd/token"
sts_start "$wj/token" --role-arn "$role"
cat >"$wjd/credentials.json" <<EOF
{"roleARN":"$role","tokenPath":"$wj/token","region":"us-east-1","endpoint":"$GATE_URL",
 "s3ForcePathStyle":true,"requestChecksumCalculation":"WHEN_REQUIRED",
 "responseChecksumValidation":"when_supported"}
EOF
for k in accessKeyID secretAccessKey region token credentials.json; do ln -s "..data/$k" "$wj/$k"; done
export AWS_APPLICATION_CREDENTIALS=$wj
snap_run list "${s3[@]}" >"$SNAP_WORK/list" 2>"$SNAP_WORK/list.log" ||
    { cat "$SNAP_WORK/list.log" "$STS_LOG"; snap_fail "list with the directory's JSON file failed"; }
snap_has "Full-00000000-00000100-1700086400.gz kind=Full" "$SNAP_WORK/list" || snap_fail "not listed (JSON)"
[ "$(sts_count 'e["api"]=="sts" and e["ok"]')" -eq 1 ] || { cat "$STS_LOG"; snap_fail "want 1 STS call"; }
[ "$(sts_count 'e["api"]=="s3" and not e["ok"]')" -eq 0 ] || { cat "$STS_LOG"; snap_fail "the S3 gate refused a request"; }

# an invalid checksum setting is refused up front, naming the key
sed -i 's/"WHEN_REQUIRED"/"ALWAYS"/' "$wjd/credentials.json"
if snap_run list "${s3[@]}" >/dev/null 2>"$SNAP_WORK/bad.log"; then snap_fail "requestChecksumCalculation ALWAYS accepted"; fi
snap_has 'requestChecksumCalculation' "$SNAP_WORK/bad.log" || { cat "$SNAP_WORK/bad.log"; snap_fail "the error does not name the key"; }
sed -i 's/"ALWAYS"/"WHEN_REQUIRED"/' "$wjd/credentials.json"

# a tokenPath outside the mounted credentials (another directory's token) is refused, naming
# the key, before STS is called
sed -i "s|\"tokenPath\":\"[^\"]*\"|\"tokenPath\":\"$wi/token\"|" "$wjd/credentials.json"
if snap_run list "${s3[@]}" >/dev/null 2>"$SNAP_WORK/bad.log"; then snap_fail "a tokenPath outside the credentials directory accepted"; fi
snap_has 'tokenPath' "$SNAP_WORK/bad.log" || { cat "$SNAP_WORK/bad.log"; snap_fail "the error does not name tokenPath"; }
[ "$(sts_count 'e["api"]=="sts"')" -eq 1 ] || { cat "$STS_LOG"; snap_fail "STS called with a token from outside the mount"; }
sed -i "s|\"tokenPath\":\"[^\"]*\"|\"tokenPath\":\"$wj/token\"|" "$wjd/credentials.json"
sts_stop
echo "JSON file in the directory: read instead of the per-key files; bad checksum setting and a token outside the mount refused"

# ---- a role STS refuses fails the run with one error line naming the refusal ----
sts_start "$wj/token" --role-arn arn:aws:iam::123456789012:role/another-role
sed -i "s|\"endpoint\":\"[^\"]*\"|\"endpoint\":\"$GATE_URL\"|" "$wjd/credentials.json"
run_day 2
[ "$RC" -ne 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "a refused role passed"; }
one_error_line "AccessDenied"
[ "$(sts_count 'e["api"]=="s3"')" -eq 0 ] || snap_fail "S3 was called without credentials"
echo "refused role: the run fails with STS's AccessDenied, S3 is never called"
echo "snapshot_s3_web_identity: ok"
