#!/usr/bin/env bash
# GCS with an external-account credentials file (workload identity federation) as the
# Google SDK takes GOOGLE_APPLICATION_CREDENTIALS of type external_account: the subject
# token read from credential_source.file (text, and json with subject_token_field_name),
# exchanged at token_url (Google STS, RFC 8693) for a federated token, and, with
# service_account_impersonation_url, that token for the service account's. Against
# tests/support/gcs_wif_standin.py (the GCS JSON API stand-in plus STS and IAM Credentials
# as Google documents them). A rotated subject token is read at the next exchange; a
# subject token STS refuses fails the run with one error line; a URL-sourced credential is
# refused naming the field.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

EMAIL=warden@test-project.iam.gserviceaccount.com
AUD=//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/shoot/providers/garden
G=$SNAP_WORK/gcp
mkdir -p "$G"
printf 'eyJhbGciOiJSUzI1NiJ9.ksa-token.sig\n' >"$SNAP_WORK/subject"

python3 "$SNAP_SRC/tests/support/gcs_wif_standin.py" --bucket "$SNAP_BUCKET" --client-email "$EMAIL" \
    --audience "$AUD" --subject-token-file "$SNAP_WORK/subject" \
    >"$SNAP_WORK/standin.out" 2>"$SNAP_WORK/standin.log" &
standin=$!
snap_on_exit "snap_kill $standin"
deadline=$((SECONDS + 30))
until grep -q '^gcs-standin ready' "$SNAP_WORK/standin.out" 2>/dev/null; do
    kill -0 "$standin" 2>/dev/null && [ $SECONDS -lt $deadline ] ||
        { cat "$SNAP_WORK/standin.log"; snap_fail "stand-in did not start"; }
    sleep 0.05
done
URL=http://127.0.0.1:$(awk '{print $3}' "$SNAP_WORK/standin.out")
printf '%s\n' "$URL" >"$G/storageAPIEndpoint"
export GOOGLE_APPLICATION_CREDENTIALS=$G/serviceaccount.json
unset GOOGLE_STORAGE_API_ENDPOINT

sc() { curl -sS --fail --max-time 30 "$@"; }
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
calls() { sc "$URL/_standin/calls" | grep -c "^$1\$" || true; }
ext_json() { # SOURCE (the credential_source object) [IMPERSONATION_URL]
    python3 - "$AUD" "$URL/v1/token" "$1" "${2:-}" <<'PY'
import json, sys
c = {"type": "external_account", "audience": sys.argv[1],
     "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
     "token_url": sys.argv[2], "credential_source": json.loads(sys.argv[3])}
if sys.argv[4]:
    c["service_account_impersonation_url"] = sys.argv[4]
print(json.dumps(c))
PY
}
text_source="{\"file\":\"$SNAP_WORK/subject\",\"format\":{\"type\":\"text\"}}"
full=$SNAP_WORK/full.gz
snap_fixture "$full" 4096 # an etcd snapshot stand-in: extend verifies it
sc -X PUT --data-binary @"$full" \
    "$URL/_standin/o/$(enc "$SNAP_PREFIX/v2/Full-00000000-00000100-1700000000.gz")" >/dev/null
flags=(--storage-provider GCS --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX")

# ---- federated token straight from STS (text subject token) ----
ext_json "$text_source" >"$G/serviceaccount.json"
snap_run list "${flags[@]}" >"$SNAP_WORK/list" 2>"$SNAP_WORK/list.log" ||
    { cat "$SNAP_WORK/list.log"; snap_fail "list with an external account failed"; }
snap_has "Full-00000000-00000100-1700000000.gz kind=Full" "$SNAP_WORK/list" || snap_fail "not listed"
[ "$(calls exchange)" -eq 1 ] || snap_fail "want 1 token exchange, got $(calls exchange)"
[ "$(calls impersonate)" -eq 0 ] || snap_fail "impersonation without its URL"
echo "external account: federated token from STS"

# ---- impersonation, a rotated subject token in a JSON file ----
printf '{"id_token":"eyJhbGciOiJSUzI1NiJ9.rotated.sig","other":1}' >"$SNAP_WORK/subject.json"
printf 'eyJhbGciOiJSUzI1NiJ9.rotated.sig\n' >"$SNAP_WORK/subject"
ext_json "{\"file\":\"$SNAP_WORK/subject.json\",\"format\":{\"type\":\"json\",\"subject_token_field_name\":\"id_token\"}}" \
    "$URL/v1/projects/-/serviceAccounts/$EMAIL:generateAccessToken" >"$G/serviceaccount.json"
day1=$((1700000000 + SNAP_DAY))
sc -X POST "$URL/_standin/clock?now=$day1" >/dev/null
WARDEN_SNAPSHOT_NOW=$day1 snap_run extend-snapshot-immutability "${flags[@]}" \
    --gc-from-timestamp 1700000000 2>"$SNAP_WORK/x.log" ||
    { cat "$SNAP_WORK/x.log"; snap_fail "extend with impersonation failed"; }
sc "$URL/_standin/o/$(enc "$SNAP_PREFIX/v2/Full-00000000-00000100-$day1.gz")" | cmp -s - "$full" ||
    snap_fail "no copy made through the impersonated service account"
[ "$(calls exchange)" -eq 2 ] && [ "$(calls impersonate)" -eq 1 ] ||
    snap_fail "want 2 exchanges and 1 impersonation: $(sc "$URL/_standin/calls" | tr '\n' ' ')"
echo "external account: impersonated service account; rotated subject token (json format)"

# ---- a subject token STS refuses: the run fails with one error line ----
printf 'eyJhbGciOiJSUzI1NiJ9.stale.sig\n' >"$SNAP_WORK/subject.stale"
ext_json "{\"file\":\"$SNAP_WORK/subject.stale\"}" >"$G/serviceaccount.json"
if WARDEN_SNAPSHOT_NOW=$day1 snap_run extend-snapshot-immutability "${flags[@]}" \
    --gc-from-timestamp 1700000000 2>"$SNAP_WORK/bad.log"; then
    snap_fail "a refused subject token passed"
fi
[ "$(grep -c '"level":"error"' "$SNAP_WORK/bad.log")" -eq 1 ] || { cat "$SNAP_WORK/bad.log"; snap_fail "want one error line"; }
grep '"level":"error"' "$SNAP_WORK/bad.log" | snap_has 'invalid_grant' ||
    { cat "$SNAP_WORK/bad.log"; snap_fail "the error does not name invalid_grant"; }

# ---- URL-sourced credentials are refused naming the field ----
ext_json '{"url":"http://169.254.169.254/token"}' >"$G/serviceaccount.json"
if snap_run list "${flags[@]}" >/dev/null 2>"$SNAP_WORK/url.log"; then snap_fail "a URL source was accepted"; fi
snap_has 'credential_source.url is not supported' "$SNAP_WORK/url.log" ||
    { cat "$SNAP_WORK/url.log"; snap_fail "unclear refusal of a URL source"; }
echo "external account: refused token and URL source fail clearly"
echo "snapshot_gcs_external_account: ok"
