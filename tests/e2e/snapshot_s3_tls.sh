#!/usr/bin/env bash
# warden-snapshot against s3rver over HTTPS: trustedCaCert (PEM in the credential
# Secret) verifies the emulator's certificate; without it the run fails with one
# clear TLS line; insecureSkipVerify=true skips verification; SSE-C fields send
# the customer-key headers (s3rver accepts and ignores them) and the MD5-less
# verification path still checks sizes.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

SNAP_S3_TLS_DIR=$SNAP_WORK/tls
mkdir -p "$SNAP_S3_TLS_DIR"
"$SNAP_SRC/certs/gen-certs.sh" -o "$SNAP_S3_TLS_DIR" -n test -s s3 >/dev/null
snap_s3_start
s3_put() { snap_s3 put "$1" "$2"; }
snap_history s3_put
flags=(--storage-provider S3 --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX")
creds=$AWS_APPLICATION_CREDENTIALS

if snap_run list "${flags[@]}" >/dev/null 2>"$SNAP_WORK/notrust.log"; then
    snap_fail "an unknown CA was trusted"
fi
[ "$(grep -c '"level":"error"' "$SNAP_WORK/notrust.log")" -eq 1 ] || snap_fail "not one error line"
grep '"level":"error"' "$SNAP_WORK/notrust.log" | snap_has -i 'certificate' ||
    { cat "$SNAP_WORK/notrust.log"; snap_fail "the error does not name the certificate"; }

cp "$SNAP_S3_TLS_DIR/ca.crt" "$creds/trustedCaCert"
snap_run list "${flags[@]}" | snap_has "^$SNAP_FINAL " || snap_fail "trustedCaCert not used"

rm "$creds/trustedCaCert"
printf 'true' >"$creds/insecureSkipVerify"
snap_run list "${flags[@]}" | snap_has "^$SNAP_FINAL " || snap_fail "insecureSkipVerify not honoured"

printf '0123456789abcdef0123456789abcdef' >"$creds/sseCustomerKey"
printf 'AES256' >"$creds/sseCustomerAlgorithm"
now=$((1700000000 + SNAP_DAY))
WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability "${flags[@]}" \
    --gc-from-timestamp "$SNAP_GC_FROM" --copy-mode stream -v 2>"$SNAP_WORK/sse.log" ||
    { cat "$SNAP_WORK/sse.log"; snap_fail "extend with SSE-C failed"; }
grep -q '"how":"read back"' "$SNAP_WORK/sse.log" || snap_fail "an SSE-C ETag was taken for an MD5 (no read-back)"
snap_s3 get "$SNAP_PREFIX/v2/Full-00000000-00002300-$now.gz.final" | cmp -s - "$SNAP_FINAL_FILE" ||
    snap_fail "copy over HTTPS differs"
echo "snapshot_s3_tls: ok"
